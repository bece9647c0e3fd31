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

// commit sends the run. It returns the items the next run starts from when
// fn must run again (and whether to back off first), else nil and the
// result of Transact.
func (tx *Tx) commit(ctx context.Context) (map[txItem]txnCached, bool, error) {
	writes := 0
	for _, e := range tx.order {
		if e.written {
			writes++
		}
	}
	if writes == 0 {
		return tx.validateReads()
	}
	in, members, entries, err := tx.build()
	if err != nil {
		return nil, false, err
	}
	unknown, err := tx.send(ctx, in, members)
	if err == nil || unknown {
		return nil, false, err
	}
	var te *TxError
	if !errors.As(err, &te) || len(te.Failures) == 0 {
		return nil, false, fmt.Errorf("dynamo: Transact, run %d: %w", tx.run, err)
	}
	return tx.classify(te, entries)
}

// build makes the run's TransactWriteItems: one member per item touched —
// its buffered write, or for an item only read the check that it is still
// as read — with a fresh client request token. entries are the members'
// items, in order.
func (tx *Tx) build() (*dynamodb.TransactWriteItemsInput, []*txMember, []*txnEntry, error) {
	members := make([]*txMember, 0, len(tx.order))
	entries := make([]*txnEntry, 0, len(tx.order))
	for _, e := range tx.order {
		mem := e.mem
		if !e.written {
			if !e.read {
				continue // touched by a failed read only
			}
			var err error
			if mem, err = e.checkMember(); err != nil {
				return nil, nil, nil, err
			}
		}
		members = append(members, mem)
		entries = append(entries, e)
	}
	// The GuardedBy checks follow the items' members.
	gs, err := buildGuards("Transact", append(slices.Clone(tx.o.guards), tx.guards...))
	if err != nil {
		return nil, nil, nil, err
	}
	for _, mem := range gs {
		if _, dup := tx.entries[txItemID(mem)]; dup {
			return nil, nil, nil, fmt.Errorf("%w: Transact: a GuardedBy check is on table %q key %s, which the function read or wrote: a transaction takes one operation per item; check another item",
				ErrInvalidInput, mem.table, formatKey(mem.key))
		}
		members = append(members, mem)
	}
	if err := checkTxLimits("Transact", "items read or written", members, len(gs), tx.o.guardNames); err != nil {
		return nil, nil, nil, err
	}
	in := &dynamodb.TransactWriteItemsInput{
		TransactItems:      make([]types.TransactWriteItem, len(members)),
		ClientRequestToken: aws.String(hex.EncodeToString(newToken())),
	}
	for i, mem := range members {
		in.TransactItems[i] = mem.item
	}
	return in, members, entries, nil
}

// send sends in, the run's commit, with Mapper.sendTx.
func (tx *Tx) send(ctx context.Context, in *dynamodb.TransactWriteItemsInput, members []*txMember) (unknown bool, err error) {
	return tx.m.sendTx(ctx, tx.o, fmt.Sprintf("Transact, run %d", tx.run), in, members)
}

// sendTx sends in, one transaction of its own (Transact's run commits, the
// guarded writes of Save, Update and Delete). One request and one token:
// the SDK's resends of it (and retryTx's after a TransactionConflict) are
// the same transaction, which DynamoDB applies at most once. When the
// outcome is still unknown, the same request is sent again under the same
// token (within DynamoDB's 10 minutes): an applied transaction then answers
// success, one that was not is decided now. It returns nil on success;
// unknown and an error wrapping ErrUnknownOutcome, naming call, when no
// resend settled the outcome; else the transaction's error (a *TxError when
// DynamoDB cancelled it).
func (m *Mapper) sendTx(ctx context.Context, o txOptions, call string, in *dynamodb.TransactWriteItemsInput, members []*txMember) (unknown bool, err error) {
	o.tel.noteTables(members)
	for round := 0; ; round++ {
		att := new(attempts)
		err = retryTx(ctx, o, call, members, txHint, func() error {
			_, err := m.client.TransactWriteItems(ctx, in, att.option(false))
			return err
		})
		if err == nil {
			return false, nil
		}
		var te *TxError
		if errors.As(err, &te) {
			err = txOutcome(err, att) // marks te unknown when it may have been applied
			unknown = errors.Is(err, ErrUnknownOutcome)
		} else {
			unknown = att.maybeApplied() || att.unrecorded()
		}
		if !unknown {
			return false, err
		}
		if round >= maxResends || o.retry.wait(ctx, round+1) != nil {
			return true, fmt.Errorf("dynamo: %s: %w: the transaction may have been applied, and %d resends under its token did not settle it; it is not run again: read the items to find out: %w",
				call, ErrUnknownOutcome, round, err)
		}
	}
}

// classify decides what a cancelled commit te means: the function runs
// again — from the items as the cancellation found them: those whose check
// failed as carried (ALL_OLD), those whose check held as read, those busy
// with another transaction read again — when only its reads went stale
// (the stored item is not the one read: sameState) or other transactions
// were in flight; otherwise te is Transact's error.
func (tx *Tx) classify(te *TxError, entries []*txnEntry) (map[txItem]txnCached, bool, error) {
	refreshed := map[int]map[string]types.AttributeValue{}
	dropped := map[int]bool{}
	for _, f := range te.Failures {
		if f.Index >= len(entries) {
			return nil, false, te // a GuardedBy check failed: running fn again would not change it
		}
		e := entries[f.Index]
		switch f.Code {
		case TxCodeConditionFailed:
			ce, ok := f.Err.(*ConditionError)
			if !ok || !e.read || e.plan.SameState(e.raw, ce.Item) {
				// A blind write whose held version is stale, or an If
				// condition that failed on the item the function read:
				// running the function again would not change that.
				return nil, false, te
			}
			refreshed[f.Index] = ce.Item
		case TxCodeConflict:
			dropped[f.Index] = true
		default:
			return nil, false, te
		}
	}
	next := make(map[txItem]txnCached, len(entries))
	for i, e := range entries {
		switch {
		case dropped[i]:
		case hasKey(refreshed, i):
			next[e.id] = txnCached{item: refreshed[i], snap: tx.newSnap()}
		case e.read:
			next[e.id] = txnCached{item: e.raw, snap: e.snap}
		}
	}
	return next, true, te
}

func hasKey[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}

// validateReads ends a read-only run: nothing to write. Reads from one
// snapshot stand; otherwise they are read again together, and a run that
// saw anything else runs again from that snapshot.
func (tx *Tx) validateReads() (map[txItem]txnCached, bool, error) {
	var reads []*txnEntry
	for _, e := range tx.order {
		if e.read {
			reads = append(reads, e)
		}
	}
	consistent := true
	for _, e := range reads {
		if e.snap != reads[0].snap {
			consistent = false
			break
		}
	}
	if consistent {
		return nil, false, nil
	}
	in := &dynamodb.TransactGetItemsInput{TransactItems: make([]types.TransactGetItem, len(reads))}
	ms := make([]*txGetMember, len(reads))
	for i, e := range reads {
		ms[i] = &txGetMember{txMember: txMember{kind: "TxGet", table: e.table, key: e.key, plan: e.plan, decode: e.decode},
			get: types.Get{TableName: aws.String(e.table), Key: e.key}}
		in.TransactItems[i].Get = &ms[i].get
	}
	cur, err := tx.getTogether(in, ms)
	if err != nil {
		return nil, false, fmt.Errorf("dynamo: Transact, run %d: reading the %d items the read-only run read from several snapshots again, to check them: %w", tx.run, len(reads), err)
	}
	same := true
	for i, e := range reads {
		if !e.plan.SameState(e.raw, cur[i]) {
			same = false
			break
		}
	}
	if same {
		return nil, false, nil
	}
	snap := tx.newSnap()
	next := make(map[txItem]txnCached, len(reads))
	for i, e := range reads {
		next[e.id] = txnCached{item: cur[i], snap: snap}
	}
	return next, false, fmt.Errorf("dynamo: Transact, run %d: a read-only run saw items from several snapshots that differ from one read together: %w", tx.run, ErrVersionConflict)
}
