package lease

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
)

// Guard returns a transaction member that holds only while this lease is
// still ours: a ConditionCheck that the lease record names our owner and
// token and the attempt id of this acquisition, and is not released. A
// holder paused or cut off past its lease then cannot write, because a
// takeover changes the record's token. Update, Lease.Transact, WriteTx,
// Save and Delete add it for you and turn its failure into ErrLost; pass
// it yourself with dynamo.GuardedBy to any write of the mapper, or put it
// among the ops of a dynamo.Mapper.WriteTx — then its failure is a
// *dynamo.TxError naming it, and the lease does not end until its next
// heartbeat finds it lost. The check is the same for a key a Group's
// worker holds. See docs/leases.md, Guarded writes.
//
// IAM: dynamodb:ConditionCheckItem on the lease table, inside the transaction.
func (l *Lease) Guard() dynamo.TxOp {
	return l.c.table.TxCheck(record{Key: l.key},
		dynamo.WithSaveBehavior(dynamo.SaveClobber), // no version check: heartbeats change it
		dynamo.If(ownedBy(l.c.o.owner, l.token, l.attempt)))
}

// guarded checks, before a guarded write is sent, that l has not ended:
// when it has, nothing is sent and the error wraps l.Err().
func (l *Lease) guarded() error {
	if err := l.Err(); err != nil {
		return fmt.Errorf("lease: guarded write refused, nothing sent: %w", err)
	}
	return nil
}

// refused returns err, the error of a write guarded by l, with l's part in
// it made plain: when l's Guard failed in it (someone else holds the lease
// now, or the record is gone), the lease ends here at once and the error
// wraps ErrLost with the reason, and the transaction's error.
func (l *Lease) refused(err error) error {
	var te *dynamo.TxError
	if !errors.As(err, &te) {
		return err
	}
	for i := range te.Failures {
		f := &te.Failures[i]
		if f.Code == dynamo.TxCodeConditionFailed && l.isGuard(f) {
			lost := l.lostReason(f.Err)
			l.end(lost)
			return fmt.Errorf("lease: guarded write refused, nothing written: %w (%w)", lost, err)
		}
	}
	return err
}

// isGuard reports whether f is the failure of a Guard of l: a check of l's
// record.
func (l *Lease) isGuard(f *dynamo.TxFailure) bool {
	if f.Kind != "TxCheck" || f.Table != l.c.table.Name() {
		return false
	}
	k, ok := f.Key["key"].(*types.AttributeValueMemberS)
	return ok && k.Value == l.key
}

// WriteTx runs ops in one transaction together with the lease's Guard, on
// the lease table's mapper; the guard is one of DynamoDB's 100 members, so
// at most 99 ops fit. When the lease has ended locally nothing is sent;
// when the guard fails (someone else holds the lease now) the lease ends and
// the error wraps ErrLost; other failures are the *dynamo.TxError of
// Mapper.WriteTx. The ops may be in any tables reached through the same
// DynamoDB client. ctx bounds the transaction. An error wrapping
// dynamo.ErrUnknownOutcome means the transaction may have been applied (see
// Mapper.WriteTx): look before writing again.
//
// IAM: dynamodb:ConditionCheckItem on the lease table, and on each member's
// table the action of Mapper.WriteTx for it.
func (l *Lease) WriteTx(ctx context.Context, ops []dynamo.TxOp, opts ...dynamo.TxOption) error {
	if err := l.guarded(); err != nil {
		return err
	}
	if len(ops) == 0 { // the guard alone: a check that l is still held
		return l.refused(l.c.table.Mapper().WriteTx(ctx, []dynamo.TxOp{l.Guard()}, opts...))
	}
	opts = append(slices.Clip(opts), l.guardOption())
	return l.refused(l.c.table.Mapper().WriteTx(ctx, ops, opts...))
}

// guardOption is l's Guard as the GuardedBy option Lease.WriteTx and
// Lease.Transact add, named for the refusals that count it: the guard is
// one of DynamoDB's 100 members of a transaction.
func (l *Lease) guardOption() dynamo.GuardOption {
	return dynamo.GuardedBy(l.Guard()).Named("the lease's guard")
}

// Transact is Mapper.Transact (on the lease table's mapper) guarded by l:
// every run's commit carries l's Guard, so fn's writes land only while l is
// held — a fenced read-modify-write of several items in one call (the guard
// is one of DynamoDB's 100 members: a run touches at most 99 items). A run
// whose items changed runs again as usual; when the guard fails, nothing is
// written, fn is not run again, the lease ends and the error wraps ErrLost.
// When l has ended locally, nothing is sent (fn is not run). A run that
// writes nothing commits nothing and checks nothing. ctx bounds the call, as
// for Mapper.Transact; fn may pass l.Context() on to what it calls.
//
// IAM: that of Mapper.Transact, and dynamodb:ConditionCheckItem on the
// lease table.
func (l *Lease) Transact(ctx context.Context, fn func(tx *dynamo.Tx) error, opts ...dynamo.TxOption) error {
	if err := l.guarded(); err != nil {
		return err
	}
	opts = append(slices.Clip(opts), l.guardOption())
	return l.refused(l.c.table.Mapper().Transact(ctx, fn, opts...))
}

// Update is t.Update guarded by l: the read-modify-write loop of
// Table.Update, each write sent in one transaction with l's Guard, and
// retried on conflicts as Table.Update retries. It returns the saved copy.
// When the guard fails, nothing is written, fn is not called again, the
// lease ends and the error wraps ErrLost. When l has ended locally,
// nothing is sent (fn is not called). When fn returns dynamo.ErrNoChange
// nothing is written, so nothing is checked either. Save behaviours other than SaveUpdate
// and SavePut are refused (see dynamo.GuardedBy). ctx bounds the loop.
//
// IAM: dynamodb:GetItem and dynamodb:UpdateItem (PutItem with SavePut) on
// t's table, dynamodb:ConditionCheckItem on the lease table.
func Update[T any](ctx context.Context, l *Lease, t *dynamo.Table[T], key T, fn func(current T) (T, error), opts ...dynamo.WriteOption) (T, error) {
	if err := l.guarded(); err != nil {
		var zero T
		return zero, err
	}
	opts = append(slices.Clip(opts), dynamo.GuardedBy(l.Guard()))
	saved, err := t.Update(ctx, key, fn, opts...)
	return saved, l.refused(err)
}

// Save saves item through t (as Table.Save with SaveUpdate or SavePut
// would) only if l is still held, in one transaction with l's Guard, and
// returns the saved copy. See Lease.WriteTx for the errors.
func Save[T any](ctx context.Context, l *Lease, t *dynamo.Table[T], item T, opts ...dynamo.WriteOption) (T, error) {
	op := t.TxSave(item, opts...)
	if err := l.WriteTx(ctx, []dynamo.TxOp{op}); err != nil {
		var zero T
		return zero, err
	}
	return op.Saved(), nil
}

// Delete deletes item through t (version-checked as Table.Delete) only if l
// is still held, in one transaction with l's Guard. See Lease.WriteTx.
func Delete[T any](ctx context.Context, l *Lease, t *dynamo.Table[T], item T, opts ...dynamo.WriteOption) error {
	return l.WriteTx(ctx, []dynamo.TxOp{t.TxDelete(item, opts...)})
}
