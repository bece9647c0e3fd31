package lease

import (
	"context"
	"errors"
	"fmt"

	"github.com/ddbkit/dynamo"
)

// Guard returns a transaction member that holds only while this lease is
// still ours: a ConditionCheck that the lease record names our owner and
// token and the attempt id of this acquisition, and is not released. Put it into a dynamo.Mapper.WriteTx with the
// writes the lease protects — a holder paused or cut off past its lease then
// cannot write, because a takeover changes the record's token. WriteTx,
// Save and Delete do this for you.
//
// The check is the same for a key a Group's worker holds: a handover marks
// the record released before the next worker can take it, and a takeover
// writes a new token and attempt id. A worker paused past its lease keeps
// passing its guard only until its key is taken over (as a silent single
// holder does): its writes are then refused with ErrLost.
//
// IAM: dynamodb:ConditionCheckItem on the lease table, inside the transaction.
func (l *Lease) Guard() dynamo.TxOp {
	return l.c.table.TxCheck(record{Key: l.key},
		dynamo.WithSaveBehavior(dynamo.SaveClobber), // no version check: heartbeats change it
		dynamo.If(ownedBy(l.c.o.owner, l.token, l.attempt)))
}

// WriteTx runs ops in one transaction together with the lease's Guard, on
// the lease table's mapper. When the lease has ended locally nothing is sent;
// when the guard fails (someone else holds the lease now) the error wraps
// ErrLost; other failures are the *dynamo.TxError of Mapper.WriteTx. The ops
// may be in any tables reached through the same DynamoDB client. ctx bounds
// the transaction. An error wrapping dynamo.ErrUnknownOutcome means the
// transaction may have been applied (see Mapper.WriteTx): look before
// writing again.
//
// IAM: dynamodb:ConditionCheckItem on the lease table, and on each member's
// table the action of Mapper.WriteTx for it.
func (l *Lease) WriteTx(ctx context.Context, ops []dynamo.TxOp, opts ...dynamo.TxOption) error {
	if err := l.Err(); err != nil {
		return fmt.Errorf("lease: guarded write refused: %w", err)
	}
	all := make([]dynamo.TxOp, 0, len(ops)+1)
	all = append(all, ops...)
	all = append(all, l.Guard())
	err := l.c.table.Mapper().WriteTx(ctx, all, opts...)
	var te *dynamo.TxError
	if errors.As(err, &te) {
		if f := te.Failure(len(ops)); f != nil && f.Code == dynamo.TxCodeConditionFailed {
			lost := l.lostReason(f.Err)
			l.end(lost)
			return fmt.Errorf("lease: guarded write refused: %w (%w)", lost, err)
		}
	}
	return err
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
