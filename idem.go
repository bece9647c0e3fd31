package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/schema"
)

// Idempotency keys: exactly once across a caller's own retries.
//
// An Update or Add given IdempotencyKey(k) records k in the item, in the
// same write as its change, in a list of the item's most recent keys (the
// window, attribute IdempotencyAttribute, newest last). A run that finds k
// in the window applies nothing and returns the item as stored. Every write
// that records a key is conditioned on the window it read (its exact
// value, or its absence), so two runs of one key — a retry after
// ErrUnknownOutcome while the first is still in flight, a restarted
// process — cannot both record it. See docs/idempotency.md.

const (
	// IdempotencyAttribute is the attribute holding an item's window of
	// idempotency keys: a list of strings, newest last. A type must not
	// model an attribute of this name to write with IdempotencyKey.
	IdempotencyAttribute = plan.WindowAttr
	// IdempotencyWindow is how many keys an item's window holds: a call
	// re-run after more than this many other keyed writes of the same
	// item no longer finds its key, and applies its change again.
	IdempotencyWindow = plan.WindowSize
	// MaxIdempotencyKeyLen is the longest key IdempotencyKey takes, in
	// bytes: a full window is at most about 8.5 KB of the item's 400 KB.
	MaxIdempotencyKeyLen = plan.MaxKeyLen
)

// IdempotencyKey makes an Update or Add apply its change once for key (1 to
// MaxIdempotencyKeyLen bytes of UTF-8: an event or request id), however often
// the call runs — after ErrUnknownOutcome, a crash, in another process. A run
// that finds key among the item's last IdempotencyWindow keys writes nothing
// and returns the item as stored. Cost: the write carries the window (up to
// 64 keys) and is conditioned on it, so concurrent keyed writes of one item
// conflict and retry. Only Update (without GuardedBy) and Add take it; what
// other writes do to the window is in docs/idempotency.md.
func IdempotencyKey(key string) WriteOption { return idemKeyOption{key: key} }

type idemKeyOption struct{ key string }

func (o idemKeyOption) applyWrite(w *writeOptions)           { w.idemKey, w.idemSet = o.key, true }
func (o idemKeyOption) applyBatchWrite(b *batchWriteOptions) { o.applyWrite(&b.write) }

// checkIdemKey refuses an idempotency key, or a type, that a keyed write of
// call cannot record (plan.CheckWindowKey).
func (t *table) checkIdemKey(call, key string) error {
	if why := plan.CheckWindowKey(t.p.S, t.p.TokenAttr, key); why != "" {
		return fmt.Errorf("%w: %s on table %q with IdempotencyKey: %s", ErrInvalidInput, call, t.name, why)
	}
	return nil
}

// windowOf returns the keys of the window stored in item (nil: none, or a
// missing item), refusing an attribute of that name that is no window.
func (t *table) windowOf(item map[string]types.AttributeValue) ([]string, error) {
	keys, ok := plan.WindowKeys(item)
	if !ok {
		return nil, fmt.Errorf("dynamo: table %q key %s: attribute %q holds %s, not the list of idempotency keys this library writes: remove the attribute (another writer stored it)",
			t.name, formatKey(t.pickKey(item)), IdempotencyAttribute, schema.FormatAV(item[IdempotencyAttribute], 40))
	}
	return keys, nil
}

// putWindow returns what a non-transaction put (SavePut) does to the
// stored window of idempotency keys: a put replaces the whole item, so it
// carries the window over, on condition that it is still the one stored.
// Where the put's other conditions already pin the window, it adds none,
// and the request is the one it was before keys existed:
//
//   - the type models IdempotencyAttribute itself (keyed calls refuse it):
//     nil, the put writes the field as any other;
//   - Update's put of an item read as missing (its basis condition wants no
//     item): nil;
//   - Update's put of an item read with a write token (its basis condition
//     is that token, and every keyed write writes a new one): the window
//     read is carried over, without a condition of its own;
//   - otherwise (a Save's put, an Update's put of an unversioned type) the
//     window read, or for a Save the one its last attempt's condition
//     failure found (window; none at first), on condition that it is
//     still the one stored (Table.windowMoved sends a Save's put again).
func (t *table) putWindow(bs *plan.Basis, window types.AttributeValue) *plan.WindowWrite {
	p := t.p
	if _, ok := p.S.ByName[IdempotencyAttribute]; ok {
		return nil
	}
	if bs == nil {
		return &plan.WindowWrite{Old: window, Next: window}
	}
	if bs.Item == nil {
		return nil
	}
	w := plan.StoredWindow(bs.Item)
	if _, ok := bs.Item[p.TokenAttr]; ok && p.S.Version >= 0 && p.TokenAttr != "" {
		if w == nil {
			return nil
		}
		return &plan.WindowWrite{Next: w, Pinned: true}
	}
	return &plan.WindowWrite{Old: w, Next: w}
}

// idemSeen is what a Table saw last of each item's window (Add's first
// guess), bounded: forgotten all at once when full.
type idemSeen struct {
	mu sync.Mutex
	m  map[keyID]types.AttributeValue
}

const idemSeenMax = 4096

func (s *idemSeen) get(k keyID) types.AttributeValue {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[k]
}

func (s *idemSeen) put(k keyID, w types.AttributeValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil || len(s.m) >= idemSeenMax {
		s.m = make(map[keyID]types.AttributeValue)
	}
	if w == nil {
		delete(s.m, k)
		return
	}
	s.m[k] = w
}

// updateOnce is Update with an idempotency key (wo.idemKey): a loop of its
// own, outside the key's queue (a keyed change is written alone, so that
// its key rides in no other caller's write), reading the item, returning
// it when the window holds the key, else writing fn's change with the key
// recorded, conditioned on the item read; on a conflict, again from the
// item the conflict carries.
func (t *Table[T]) updateOnce(ctx context.Context, key T, fn func(T) (T, error), wo *writeOptions) (T, error) {
	var zero T
	k, err := t.keyOfItem(&key, "Update")
	if err != nil {
		return zero, err
	}
	cur, err := t.startOnce(ctx, k, wo.idemKey)
	if err != nil {
		return zero, err
	}
	pol, _ := t.m.retryPolicy(policyUpdate, RetryPolicy{}, false, "") // the mapper's was checked by NewTable
	for attempt := 1; ; {
		keys, err := t.windowOf(cur)
		if err != nil {
			return zero, err
		}
		if slices.Contains(keys, wo.idemKey) {
			return t.decode(cur) // applied by an earlier run
		}
		if wo.mustExist && cur == nil {
			return zero, fmt.Errorf("%w: Update of table %q key %s with MustExist: the key holds no item", ErrNotFound, t.name, formatKey(k))
		}
		from := cur
		if from == nil {
			from = k
		}
		in, err := t.decode(from)
		if err != nil {
			return zero, err
		}
		held := t.p.S.VersionOf(t.structOf(&in))
		next, err := fn(in)
		if errors.Is(err, ErrNoChange) {
			return t.decode(from) // nothing written, nothing recorded
		}
		if err != nil {
			return zero, err
		}
		boxed, v, err := t.changeOf(k, next, held)
		if err != nil {
			return zero, err
		}
		sc := saveCall{wo: *wo, key: k, now: t.versionClock(), idem: plan.NewWindowWrite(plan.StoredWindow(cur), keys, wo.idemKey)}
		res, err := t.save(ctx, boxed, v, &sc, &plan.Basis{Item: cur})
		if err == nil {
			return res.saved, nil
		}
		// A replicated write conflict (MRSC) was refused for another
		// Region's write, not applied: the item is read again (it may hold
		// that write), as after a conflict. ce stays nil for it.
		var ce *ConditionError
		if !replicatedRetry(err) {
			var ok bool
			if ce, ok = asConditionError(err); !ok {
				return zero, err
			}
			if found, werr := t.windowOf(ce.Item); werr == nil && slices.Contains(found, wo.idemKey) {
				// Applied: a lost answer settled by the window, or another
				// run of the same key that got there first.
				return t.decodeWritten("update", ce.Item)
			}
			if ce.unknown {
				return zero, fmt.Errorf("dynamo: Update stopped at attempt %d; run it again with the same IdempotencyKey, which applies its change at most once: %w", attempt, err)
			}
			if ce.Err != ErrVersionConflict && t.p.SameState(cur, ce.Item) && plan.SameWindow(cur, ce.Item) {
				return zero, err // an If condition failed on the item fn saw
			}
		}
		if pol.exhausted(attempt) {
			return zero, fmt.Errorf("dynamo: Update gave up after %s: %w", plural(attempt, "attempt"), err)
		}
		if cur, err = t.retryFrom(ctx, k, pol, &attempt, ce); err != nil {
			return zero, err
		}
	}
}

// startOnce checks a keyed Update's idempotency key and ctx, and reads the
// item with key k that its first attempt starts from.
func (t *table) startOnce(ctx context.Context, k map[string]types.AttributeValue, idemKey string) (map[string]types.AttributeValue, error) {
	if err := t.checkIdemKey("Update", idemKey); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("dynamo: Update of table %q key %s: %w", t.name, formatKey(k), err)
	}
	cur, err := t.readRaw(ctx, k)
	if err != nil {
		return nil, fmt.Errorf("dynamo: Update of table %q key %s: read: %w", t.name, formatKey(k), err)
	}
	return cur, nil
}

// retryFrom waits before the next attempt of a keyed Update, counting
// the conflict, and returns the item that attempt starts from: the one
// the conflict ce carries, or for a replicated conflict (ce nil) the item
// read again.
func (t *table) retryFrom(ctx context.Context, k map[string]types.AttributeValue, pol RetryPolicy, attempt *int, ce *ConditionError) (map[string]types.AttributeValue, error) {
	t.noteConflict(ctx, *attempt, ce)
	*attempt++
	if err := pol.wait(ctx, *attempt-1); err != nil {
		return nil, fmt.Errorf("dynamo: Update of table %q key %s: %w", t.name, formatKey(k), err)
	}
	if ce != nil {
		return ce.Item, nil
	}
	cur, err := t.readRaw(ctx, k)
	if err != nil {
		return nil, fmt.Errorf("dynamo: Update of table %q key %s: read: %w", t.name, formatKey(k), err)
	}
	return cur, nil
}

// windowMoved reports whether the save r, a Save's SavePut (no basis, no
// guard), failed only because the stored window of idempotency keys is not
// the one it expected (window): then it is sent again carrying the
// window found (w), so that a put never drops the keys of the item it
// replaces. The version and If conditions are checked again by that
// attempt.
func (t *table) windowMoved(err error, r *saveRequest, window types.AttributeValue, bs *plan.Basis, guarded bool) (w types.AttributeValue, again bool) {
	if !r.put || bs != nil || guarded {
		return nil, false
	}
	if _, ok := t.p.S.ByName[IdempotencyAttribute]; ok {
		return nil, false // the type's own field (putWindow)
	}
	ce, ok := asConditionError(err)
	if !ok || ce.unknown || ce.Item == nil || ce.Err == ErrVersionConflict {
		return nil, false // a version conflict is the answer, whatever the window
	}
	w = plan.StoredWindow(ce.Item)
	if w == nil && window == nil || w != nil && window != nil && av.Equal(w, window) {
		return nil, false
	}
	return w, true
}

// addOnce is an Add's idempotency key (key) for the item with key k: the
// window it expects stored (old, holding keys), which it learns from the
// Table (idemSeen) or from its failed attempts.
type addOnce[T any] struct {
	t        *Table[T]
	k        map[string]types.AttributeValue
	id       keyID
	key      string
	old      types.AttributeValue
	keys     []string
	attempts int
	pol      RetryPolicy
}

// newAddOnce checks key and returns the addOnce of an Add of k, or done,
// the item as stored, when the window the Table saw last holds key and the
// stored one still does (a strongly consistent read tells).
func (t *Table[T]) newAddOnce(ctx context.Context, k map[string]types.AttributeValue, key string) (*addOnce[T], map[string]types.AttributeValue, error) {
	if err := t.checkIdemKey("Add", key); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("dynamo: Add to table %q key %s: %w", t.name, formatKey(k), err)
	}
	pol, _ := t.m.retryPolicy(policyUpdate, RetryPolicy{}, false, "") // the mapper's was checked by NewTable
	o := &addOnce[T]{t: t, k: k, id: keyIDOf(t.p, k), key: key, pol: pol}
	o.old = t.idemSeen.get(o.id)
	if o.old != nil {
		keys, err := t.windowOf(map[string]types.AttributeValue{IdempotencyAttribute: o.old})
		if err != nil {
			o.old = nil
		}
		o.keys = keys
	}
	if slices.Contains(o.keys, key) {
		cur, err := t.readRaw(ctx, k)
		if err != nil {
			return nil, nil, fmt.Errorf("dynamo: Add to table %q key %s: read: %w", t.name, formatKey(k), err)
		}
		keys, err := t.windowOf(cur)
		if err != nil {
			return nil, nil, err
		}
		if slices.Contains(keys, key) {
			return nil, cur, nil
		}
		o.old, o.keys = plan.StoredWindow(cur), keys
	}
	return o, nil, nil
}

// write is what the next attempt does to the window.
func (o *addOnce[T]) write() *plan.WindowWrite { return plan.NewWindowWrite(o.old, o.keys, o.key) }

// stored notes the window of the item as an attempt stored it.
func (o *addOnce[T]) stored(allNew map[string]types.AttributeValue) {
	o.t.idemSeen.put(o.id, plan.StoredWindow(allNew))
}

// failed looks at the failure err of an attempt: done is the item as
// stored when its window holds the key (applied: by this call, its answer
// lost, or by an earlier run); again says the window was not the one
// expected, and the Add is to be sent again for the one found (after the
// mapper's backoff, within its attempts); ferr ends the Add. All zero: err
// is the Add's own failure.
func (o *addOnce[T]) failed(ctx context.Context, err error) (again bool, done map[string]types.AttributeValue, ferr error) {
	t := o.t
	ce, ok := asConditionError(err)
	if !ok {
		return false, nil, nil
	}
	keys, werr := t.windowOf(ce.Item)
	if werr != nil {
		return false, nil, werr
	}
	if slices.Contains(keys, o.key) {
		o.stored(ce.Item)
		return false, ce.Item, nil
	}
	if ce.unknown {
		return false, nil, fmt.Errorf("dynamo: Add to table %q key %s: run it again with the same IdempotencyKey, which applies its change at most once: %w", t.name, formatKey(o.k), err)
	}
	w := plan.StoredWindow(ce.Item)
	if w == nil && o.old == nil || w != nil && o.old != nil && av.Equal(w, o.old) {
		return false, nil, nil
	}
	o.old, o.keys = w, keys
	o.stored(ce.Item)
	o.attempts++
	if o.pol.exhausted(o.attempts) {
		return false, nil, fmt.Errorf("dynamo: Add gave up after %s, each finding another window of idempotency keys (other keyed writes of the item in between): %w", plural(o.attempts, "attempt"), err)
	}
	if err := o.pol.wait(ctx, o.attempts); err != nil {
		return false, nil, fmt.Errorf("dynamo: Add to table %q key %s: %w", t.name, formatKey(o.k), err)
	}
	return true, nil, nil
}
