package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Update is the read-modify-write loop: it reads the item with key's key
// (strongly consistent), calls fn with it, and saves what fn returns under
// the version it read. When the save is a version conflict it calls fn again
// with the item the conflict carries — no extra read — after a jittered
// exponential backoff, at most MaxAttempts times in all, as the mapper's
// RetryPolicy says (WithRetry given to NewMapper; RetryPolicy lists the
// defaults). It returns the saved copy.
//
// A missing item reaches fn as a T holding only key's key fields, with
// version zero, so Update also creates; with MustExist, Update fails instead
// with an error satisfying errors.Is(err, ErrNotFound), without calling fn.
// When fn returns ErrNoChange, nothing is written and Update returns the
// item as fn was given it. fn must not change the key; the version fn
// returns is ignored. fn may be called several times and should have no
// side effects; when it returns an error, Update stops and returns that
// error. ctx bounds the whole loop, backoff and waiting included. An If
// condition that fails (ErrConditionFailed) is returned at once, not
// retried, and so is a conflict whose write may have been applied
// (ErrUnknownOutcome), since calling fn again could apply its change twice.
//
// The write sets only the attributes fn changed and removes only those it
// emptied, when the Table encodes the type itself (see docs/mapper.md,
// "Update: one key, many callers"): its condition pins the stored item to
// the one fn was given, so what fn left as it was is stored already.
//
// Calls for one key through one Table queue and are combined into one
// write, with the outcome of running them one after another; see
// docs/mapper.md, "Update: one key, many callers", for the rules. With
// GuardedBy, each write goes in one transaction with the checks given (a
// lease's Guard, say), and a failed check ends the loop with its *TxError;
// checks it could never send (see GuardedBy) are refused with
// ErrInvalidInput before the read, as options it does not take are.
//
// IAM: dynamodb:GetItem and dynamodb:UpdateItem (dynamodb:PutItem with
// SavePut); with GuardedBy, dynamodb:ConditionCheckItem on the checked
// items' tables.
func (t *Table[T]) Update(ctx context.Context, key T, fn func(current T) (T, error), opts ...WriteOption) (_ T, err error) {
	ctx, c := t.m.begin(ctx, "Update", t.name)
	defer c.endp(&err) // also when fn panics
	return t.update(ctx, key, fn, opts)
}

func (t *Table[T]) update(ctx context.Context, key T, fn func(current T) (T, error), opts []WriteOption) (T, error) {
	var zero T
	wo := &noWriteOptions // the defaults; the call's options are on the heap, as the waiter refers to them
	if len(opts) > 0 {
		given := applyWriteOptions(opts)
		if err := given.refuse(callUpdate, t.name); err != nil {
			return zero, err
		}
		wo = &given
	}
	if fn == nil {
		return zero, fmt.Errorf("%w: Update on table %q with a nil function", ErrInvalidInput, t.name)
	}
	if wo.idemSet {
		return t.updateOnce(ctx, key, fn, wo)
	}
	// The key map: the one an earlier Update of the key made, kept with
	// the key's state (hotKey.keyMap), when the key's fields tell its
	// identity without it (fastKeyID); else made now.
	var k map[string]types.AttributeValue
	gk, fast := t.fastKeyID(&key)
	if fast {
		k = t.gate.keyMap(gk)
	}
	if k == nil {
		var err error
		if k, err = t.keyOfItem(&key, "Update"); err != nil {
			return zero, err
		}
		gk = keyIDOf(t.p, k)
	}
	if len(wo.guards) > 0 {
		if err := checkGuards("Update", t, k, wo.guards); err != nil {
			return zero, err
		}
	}
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("dynamo: Update of table %q key %s: %w", t.name, formatKey(k), err)
	}
	w := &waiter[T]{ctx: ctx, fn: fn, wo: wo}
	e, lead := t.gate.join(gk, k, w)
	defer t.gate.leave(gk, e)
	var res outcome[T]
	if lead {
		res = t.lead(e, k, w)
	} else {
		res = t.await(e, k, w)
	}
	if res.panicked {
		panic(res.pv)
	}
	return res.saved, res.err
}

// ErrNoChange, returned by an Update function (with any item), says that
// there is nothing to change: Update writes nothing, leaves the version as
// it is, and returns the item as the function was given it, with a nil
// error. When the item given was one the Table remembered (it wrote the
// key last) rather than one it read, Update first reads the key, and calls
// the function again on the stored item when that differs, so that the
// item returned is the stored one. A missing item stays missing (the item
// returned holds only the key, version zero).
var ErrNoChange = errors.New("dynamo: no change (returned by an Update function)")
