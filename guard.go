package dynamo

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Guarded writes: a write that must happen only while conditions on other
// items hold — a lease still ours, say — goes in one TransactWriteItems
// with a ConditionCheck of each of those items. GuardedBy is the one way to
// ask for it, in every call that writes.

// GuardOption is the option GuardedBy returns: a WriteOption (Save, Delete,
// Update, and transaction members) and a TxOption (WriteTx, Transact).
type GuardOption struct {
	checks []TxOp
	what   string // Named
}

// GuardedBy makes a write happen only if checks — condition checks on other
// items, made by Table.TxCheck or a lease's Guard — hold when it is applied:
// the write and the checks go in one TransactWriteItems, all or nothing.
// Save, Delete, Update, Transact, WriteTx and transaction members take it. A
// failed check is a *TxError naming it, never retried. What each call does
// with the checks, their cost and what is refused are in the package
// documentation, section "Guarded writes".
//
// IAM: dynamodb:ConditionCheckItem on the checked items' tables, besides
// the write's own actions.
func GuardedBy(checks ...TxOp) GuardOption {
	return GuardOption{checks: slices.Clone(checks)}
}

// Named returns g with its checks called what in the refusals that count
// them (a transaction over DynamoDB's limit, say): a call that adds checks
// of its own — a lease's WriteTx adds its Guard — names what it added, so
// that the caller learns what took the room.
func (g GuardOption) Named(what string) GuardOption {
	g.what = what
	return g
}

func (g GuardOption) applyWrite(o *writeOptions) { o.guards = append(o.guards, g.checks...) }
func (g GuardOption) applyTx(o *txOptions) {
	o.guards = append(o.guards, g.checks...)
	if g.what != "" && len(g.checks) > 0 && !slices.Contains(o.guardNames, g.what) {
		o.guardNames = append(o.guardNames, g.what)
	}
}
func (g GuardOption) applyBatchWrite(o *batchWriteOptions) { g.applyWrite(&o.write) }

// buildGuards builds the condition checks of guards as transaction members,
// once per op; the guards of a check (GuardedBy given to TxCheck) count as
// given too.
func buildGuards(call string, guards []TxOp) ([]*txMember, error) {
	var out []*txMember
	seen := map[TxOp]bool{}
	items := map[txItem]int{}
	for i := 0; i < len(guards); i++ {
		g := guards[i]
		if g == nil {
			return nil, fmt.Errorf("%w: %s: GuardedBy check %d is nil", ErrInvalidInput, call, i)
		}
		if seen[g] {
			continue
		}
		seen[g] = true
		m, err := g.txWrite(nil)
		if err != nil {
			return nil, fmt.Errorf("dynamo: %s: GuardedBy check %d: %w", call, i, err)
		}
		if m.item.ConditionCheck == nil {
			return nil, fmt.Errorf("%w: %s: GuardedBy takes condition checks (Table.TxCheck, a lease's Guard), not a %s: to write several items at once use Mapper.WriteTx or Transact",
				ErrInvalidInput, call, m.kind)
		}
		if j, dup := items[txItemID(m)]; dup {
			return nil, fmt.Errorf("%w: %s: GuardedBy checks %d and %d are both on table %q key %s: a transaction takes one operation per item; pass one check",
				ErrInvalidInput, call, j, i, m.table, formatKey(m.key))
		}
		items[txItemID(m)] = i
		guards = append(guards, m.guards...)
		out = append(out, m)
	}
	return out, nil
}

// writeGuarded writes mem, a single-item write built as a transaction
// member, together with the checks of guards, in one TransactWriteItems
// sent by sendTx. When only mem's own condition failed, the error is its
// *ConditionError, as the single-item call returns; otherwise the
// transaction's error.
func (m *Mapper) writeGuarded(ctx context.Context, call string, mem *txMember, guards []TxOp) error {
	gs, err := buildGuards(call, guards)
	if err != nil {
		return err
	}
	members := append([]*txMember{mem}, gs...)
	if err := m.refuseStrongTx(call+" with GuardedBy", true, members); err != nil {
		return err
	}
	if err := checkGuardedItems(call, members); err != nil {
		return err
	}
	if err := checkTxLimits(call+" with GuardedBy", "write", members, len(gs), nil); err != nil {
		return err
	}
	in := &dynamodb.TransactWriteItemsInput{
		TransactItems:      make([]types.TransactWriteItem, len(members)),
		ClientRequestToken: aws.String(hex.EncodeToString(newToken())),
	}
	for i, x := range members {
		in.TransactItems[i] = x.item
	}
	pol, _ := m.retryPolicy(policyTx, RetryPolicy{}, false, "") // the mapper's was checked by NewMapper
	_, err = m.sendTx(ctx, txOptions{retry: pol}, call+" with GuardedBy", in, members)
	var te *TxError
	if errors.As(err, &te) && len(te.Failures) == 1 && te.Failures[0].Index == 0 {
		if ce, ok := te.Failures[0].Err.(*ConditionError); ok {
			return ce
		}
	}
	return err
}

// checkGuardedItems refuses a guarded write whose members (the write first,
// then its checks) touch one item twice, which DynamoDB refuses in a
// transaction.
func checkGuardedItems(call string, members []*txMember) error {
	seen := map[txItem]int{}
	for i, x := range members {
		if j, dup := seen[txItemID(x)]; dup {
			return fmt.Errorf("%w: %s: members %d and %d of its transaction are both on table %q key %s: put each GuardedBy check on an item of its own",
				ErrInvalidInput, call, j, i, x.table, formatKey(x.key))
		}
		seen[txItemID(x)] = i
	}
	return nil
}

// checkGuards refuses, before anything is sent, the GuardedBy checks of a
// call that reads before it writes (Update, Transact) which its write could
// never send — what writeGuarded and the commit would refuse only after
// the reads and the function: a check refusing its options, a nil check, a
// write given as a check, and (key not nil: the item the call writes, on
// table t) a check of the item written.
func checkGuards[T any](call string, t *Table[T], key map[string]types.AttributeValue, guards []TxOp) error {
	gs, err := buildGuards(call, guards)
	if err != nil {
		return err
	}
	if err := t.m.refuseStrong(call+" with GuardedBy", t.name, true); err != nil {
		return err
	}
	if err := t.m.refuseStrongTx(call+" with GuardedBy", true, gs); err != nil {
		return err
	}
	if key == nil {
		return nil
	}
	return checkGuardedItems(call, append([]*txMember{{table: t.name, key: key, plan: t.p}}, gs...))
}
