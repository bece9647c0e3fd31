package dynamo

import (
	"context"
	"fmt"
	"maps"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Update is the read-modify-write loop: it reads the item with key's key
// (strongly consistent), calls fn with it, and saves what fn returns under
// the version it read. When the save is a version conflict it calls fn again
// with the item the conflict carries — no extra read — after a jittered
// exponential backoff, at most MaxAttempts times in all, as the mapper's
// RetryPolicy says (WithRetry given to NewMapper; by default 100 attempts,
// waits from 2 ms up to 100 ms). It returns the saved copy.
//
// A missing item reaches fn as a T holding only key's key fields, with
// version zero, so Update also creates. fn must not change the key; the
// version fn returns is ignored (Update writes the one it read). fn may be
// called several times and should have no side effects; when it returns an
// error, Update stops and returns that error. Update also stops when ctx is
// done; ctx bounds the whole loop, backoff and waiting included. An If
// condition that fails (ErrConditionFailed) is returned at once, not retried,
// and so is a conflict whose write may have been applied (ErrUnknownOutcome,
// see Save: a response was lost and someone wrote the item before the SDK's
// retry), since calling fn again could apply its change twice; the caller
// decides, e.g. by looking for its change in the stored item
// (Table.Current(err)).
//
// Calls to Update for one key through one Table take turns: instead of
// failing each other's version checks they wait (honouring ctx), and each
// starts from the item the previous one stored, without reading it. Writers
// elsewhere — other processes, other Tables, Save — are caught by the version
// check as usual.
//
// IAM: dynamodb:GetItem and dynamodb:UpdateItem (dynamodb:PutItem with
// SavePut).
func (t *Table[T]) Update(ctx context.Context, key T, fn func(current T) (T, error), opts ...WriteOption) (T, error) {
	var zero T
	wo := applyWriteOptions(opts)
	if fn == nil {
		return zero, fmt.Errorf("%w: Update on table %q with a nil function", ErrInvalidInput, t.name)
	}
	_, kv, err := t.box(key, "Update")
	if err != nil {
		return zero, err
	}
	k, err := t.keyOf(kv)
	if err != nil {
		return zero, err
	}
	gk := t.p.keyID(k)
	e, err := t.gate.enter(ctx, gk)
	if err != nil {
		return zero, fmt.Errorf("dynamo: Update of table %q key %s: %w", t.name, formatKey(k), err)
	}
	defer t.gate.leave(gk, e)
	pol, _ := t.m.retryPolicy(policyUpdate, RetryPolicy{}, false, "") // the mapper's was checked by NewTable
	saved, stored, err := t.update(ctx, k, e.last, fn, &wo, pol)
	e.last = stored // nil after an error: the next caller reads
	return saved, err
}

// update is Update's loop, run while holding the key's turn. last is the
// item as the previous holder stored it, nil if unknown.
func (t *Table[T]) update(ctx context.Context, k map[string]types.AttributeValue, last map[string]types.AttributeValue,
	fn func(T) (T, error), wo *writeOptions, pol RetryPolicy) (T, map[string]types.AttributeValue, error) {
	var zero T
	// base is the stored item each call of fn starts from; every write is
	// pinned to it (basisCond), so that it cannot land on another
	// incarnation of the item, nor — for a type without a version — on
	// attributes someone else changed.
	base := &basis{item: last}
	if last == nil {
		raw, err := t.readRaw(ctx, k)
		if err != nil {
			return zero, nil, fmt.Errorf("dynamo: Update of table %q key %s: read: %w", t.name, formatKey(k), err)
		}
		base.item = raw
	}
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return zero, nil, fmt.Errorf("dynamo: Update of table %q key %s: %w", t.name, formatKey(k), err)
		}
		from := base.item
		if from == nil {
			from = k
		}
		cur, err := t.decode(from)
		if err != nil {
			return zero, nil, err
		}
		_, cv, _ := t.box(cur, "Update")
		held := t.p.s.versionOf(cv)
		next, err := fn(cur)
		if err != nil {
			return zero, nil, err
		}
		boxed, nv, err := t.box(next, "Update")
		if err != nil {
			return zero, nil, fmt.Errorf("%w (returned by the Update function)", err)
		}
		nk, err := t.keyOf(nv)
		if err != nil {
			return zero, nil, err
		}
		if !maps.EqualFunc(k, nk, attrEqual) {
			return zero, nil, fmt.Errorf("%w: the Update function changed the key of table %q from %s to %s: keep the key; use Save and Delete to move an item",
				ErrInvalidInput, t.name, formatKey(k), formatKey(nk))
		}
		if t.p.s.version >= 0 && t.p.s.versionOf(nv) != held {
			// Write what was read: copy, never modify fn's value.
			c := t.withVersion(nv, held)
			boxed, nv, _ = t.box(c, "Update")
		}
		saved, stored, err := t.save(ctx, boxed, nv, wo, base)
		if err == nil {
			return saved, stored, nil
		}
		ce, ok := asConditionError(err)
		if !ok {
			return zero, nil, err
		}
		if ce.unknown {
			return zero, nil, fmt.Errorf("dynamo: Update stopped at attempt %d without calling the function again, which could apply its change twice: %w", attempt, err)
		}
		if ce.Err != ErrVersionConflict && t.p.basisHolds(base, ce.Item) {
			return zero, nil, err // an If condition failed on the item fn saw
		}
		// The item is not what fn saw: another version, another incarnation
		// (deleted and created again), or other attributes.
		if pol.exhausted(attempt) {
			return zero, nil, fmt.Errorf("dynamo: Update gave up after %d attempts: %w", attempt, err)
		}
		base = &basis{item: ce.Item}
		if err := pol.wait(ctx, attempt); err != nil {
			return zero, nil, fmt.Errorf("dynamo: Update of table %q key %s: %w", t.name, formatKey(k), err)
		}
	}
}
