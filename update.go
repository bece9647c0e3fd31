package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/gate"
	"github.com/ddbkit/dynamo/internal/refusal"
)

// Update is the read-modify-write loop: it reads the item with key's key
// (strongly consistent), calls fn with it and saves what fn returns under the
// version read, setting only what fn changed. On a version conflict it calls
// fn again with the item the conflict carries, after the RetryPolicy's
// backoff. It returns the saved copy. A missing item reaches fn as key with
// version zero, so Update creates (with MustExist: ErrNotFound). fn returning
// ErrNoChange writes nothing; fn may run several times and must not change the
// key. ErrConditionFailed (an If) and ErrUnknownOutcome end the loop. Calls
// for one key through one Table are combined into one write; with GuardedBy
// each write is a transaction with the checks. Rules: docs/calls.md#update.
//
// IAM: dynamodb:GetItem and dynamodb:UpdateItem (PutItem with SavePut); with
// GuardedBy, dynamodb:ConditionCheckItem on the checked items' tables.
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
		if err := given.refuse(refusal.Update, t.name); err != nil {
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
		k = t.gate.KeyMap(gk)
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
	w := &waiter[T]{Ctx: ctx, Fn: fn, Wo: wo, Key: k, Share: wo.share()}
	e, lead := t.gate.Join(gk, k, w)
	defer t.gate.Leave(gk, e)
	var res gate.Outcome[T]
	if lead {
		res = t.gate.Lead(e, w)
	} else {
		res = t.gate.Await(e, w)
	}
	switch {
	case res.Panicked:
		panic(res.PV)
	case res.Unknown:
		return zero, fmt.Errorf("dynamo: Update of table %q key %s: %w: ctx ended while its change was being written with others' (%w)",
			t.name, formatKey(k), ErrUnknownOutcome, res.Err)
	case res.Ended:
		return zero, fmt.Errorf("dynamo: Update of table %q key %s: %w", t.name, formatKey(k), res.Err)
	}
	return res.Saved, res.Err
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
