package dynamo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
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
// Calls to Update for one key through one Table do not fail each other's
// version checks: they queue, and while one write is in flight the calls
// arriving behind it are combined into the next write. Their functions are
// called one after another, each in its caller's goroutine and on the item
// as the previous one left it, and the result is written once, advancing the
// version by one per change: the outcome is exactly that of running the calls
// one after another (each change applied once; each caller gets the copy
// after its own change, with its own version, so every copy but the last is
// already stale). A hot key thus takes one write per round trip, whatever
// the number of goroutines. A function's error or panic reaches only its
// caller; calls with If conditions or other save behaviours than SaveUpdate
// and SavePut are written alone. A caller whose ctx ends while its change is
// in a write gets an error satisfying errors.Is(err, ErrUnknownOutcome).
//
// Update starts from the item this Table stored last, when it remembers it
// (a bounded cache of recently written items), so that an Update of a key
// this Table wrote last needs one round trip; when someone else wrote it
// since, the write's condition fails and the conflict carries the current
// item. A function that returns an error on such a remembered item is
// called again on the stored item if that differs, so the error it returns
// is one it returned on the current item. Writers elsewhere — other
// processes, other Tables, Save — are caught by the version check as usual.
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
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("dynamo: Update of table %q key %s: %w", t.name, formatKey(k), err)
	}
	gk := t.p.keyID(k)
	w := &waiter[T]{ctx: ctx, fn: fn, wo: wo, msgs: make(chan waiterMsg[T], 2), replies: make(chan computed[T], 1)}
	e, lead := t.gate.join(gk, w)
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

// await waits in the queue of key k until a batch runs w's function, then
// for its outcome; or it runs a batch itself when handed the lead.
func (t *Table[T]) await(e *hotKey[T], k map[string]types.AttributeValue, w *waiter[T]) outcome[T] {
	done := w.ctx.Done()
	changed := false // w's change is in a write that may be sent
	for {
		select {
		case m := <-w.msgs:
			switch m.kind {
			case msgLead:
				return t.lead(e, k, w)
			case msgResult:
				return m.res
			case msgCompute:
				if w.ctx.Err() != nil {
					w.replies <- computed[T]{withdrawn: true}
					continue // the batch sends the result
				}
				changed = w.computeAndReply(m.cur)
			}
		case <-done:
			if t.gate.leaveQueue(e, w, changed) {
				return outcome[T]{err: fmt.Errorf("dynamo: Update of table %q key %s: %w", t.name, formatKey(k), w.ctx.Err())}
			}
			if changed {
				return outcome[T]{err: fmt.Errorf("dynamo: Update of table %q key %s: %w: ctx ended while its change was being written with others' (%w)",
					t.name, formatKey(k), ErrUnknownOutcome, w.ctx.Err())}
			}
			// Taken into a batch that has not asked for the change yet: it
			// will (and we withdraw), or send the result.
			done = nil
		}
	}
}

// computeAndReply calls w's function with cur in the caller's goroutine and
// sends what it returned to the running batch. A panic is recovered and
// reported to the batch (which leaves the change out), which may call fn
// again (when cur turns out not to be the stored item) or sends it back as
// the call's outcome, to be raised again in the caller. runtime.Goexit
// (t.FailNow in a test) cannot be held back: it is reported as the caller
// gone, never to be asked again. It reports whether fn made a change.
func (w *waiter[T]) computeAndReply(cur T) (changed bool) {
	normal := false
	defer func() {
		if normal {
			return
		}
		p := recover()
		if p == nil {
			w.replies <- computed[T]{err: errGoexit, gone: true}
			return
		}
		w.replies <- computed[T]{panicked: true, pv: p}
	}()
	next, err := w.fn(cur)
	normal = true
	w.replies <- computed[T]{next: next, err: err}
	return err == nil
}

// errGoexit is the outcome of a function that called runtime.Goexit.
var errGoexit = errors.New("dynamo: the Update function called runtime.Goexit")

// callOwn calls the running batch's own function, holding back a panic until
// the batch is done.
func callOwn[T any](fn func(T) (T, error), cur T) (c computed[T]) {
	defer func() {
		if p := recover(); p != nil {
			c = computed[T]{panicked: true, pv: p}
		}
	}()
	next, err := fn(cur)
	return computed[T]{next: next, err: err}
}

// ask has w's function called with in: the batch's own (self) here, the
// others' in their goroutines.
func (t *Table[T]) ask(w *waiter[T], in T, self bool) computed[T] {
	if w.ctx.Err() != nil {
		return computed[T]{withdrawn: true}
	}
	if self {
		return callOwn(w.fn, in)
	}
	w.msgs <- waiterMsg[T]{kind: msgCompute, cur: in}
	select {
	case c := <-w.replies:
		return c
	case <-w.ctx.Done():
		return computed[T]{withdrawn: true}
	}
}

// lead runs the batch of self (and the calls queued behind it that can
// share its write), sends the others their outcomes, hands the key to the
// next queued call, and returns self's outcome.
func (t *Table[T]) lead(e *hotKey[T], k map[string]types.AttributeValue, self *waiter[T]) outcome[T] {
	ws := t.gate.batchFor(e, self, !t.p.s.hasStamps())
	res := make([]outcome[T], len(ws))
	finished := false
	defer func() {
		if !finished {
			// self's function called runtime.Goexit, which reaches only
			// self: nothing was written, and the others still waiting go
			// back to the head of the queue, to run as if self had not
			// been there. Those whose ctx ended, or who left by
			// runtime.Goexit themselves, get their outcome now.
			e.last = nil
			var back []*waiter[T]
			for i, w := range ws[1:] {
				if res[i+1].gone {
					continue
				}
				if err := w.ctx.Err(); err != nil {
					w.msgs <- waiterMsg[T]{kind: msgResult, res: outcome[T]{err: fmt.Errorf("dynamo: Update of table %q key %s: %w", t.name, formatKey(k), err)}}
					continue
				}
				back = append(back, w)
			}
			t.gate.requeue(e, back)
		} else {
			for i, w := range ws[1:] {
				w.msgs <- waiterMsg[T]{kind: msgResult, res: res[i+1]}
			}
		}
		t.gate.handOff(e)
	}()
	t.runBatch(e, k, ws, res)
	finished = true
	return res[0]
}

// change is one function's result in a batch: the value it returned, boxed,
// with the version it was computed from.
type change struct {
	who   int // index in the batch
	boxed any
	v     reflect.Value
}

// runBatch runs the functions of ws (ws[0] is the caller's own) and writes
// their changes, retrying on conflict, and fills res.
func (t *Table[T]) runBatch(e *hotKey[T], k map[string]types.AttributeValue, ws []*waiter[T], res []outcome[T]) {
	pol, _ := t.m.retryPolicy(policyUpdate, RetryPolicy{}, false, "") // the mapper's was checked by NewTable
	ctx := ws[0].ctx
	if len(ws) > 1 {
		var stop func()
		ctx, stop = batchContext(ws)
		defer stop()
	}
	fail := func(idx []int, err error) {
		for _, i := range idx {
			res[i] = outcome[T]{err: err}
		}
	}
	live := make([]int, len(ws))
	for i := range live {
		live[i] = i
	}
	// bs is the stored item the functions start from, and every write is
	// pinned to (basisCond), so that it cannot land on another incarnation
	// of the item, nor — for a type without a version — on attributes
	// someone else changed. verified: it was read (or came with a
	// conflict) during this batch, rather than remembered.
	var bs *basis
	if e.last != nil {
		bs = &basis{item: e.last}
	}
	e.last = nil // until a write of this batch succeeds
	verified := false
	for attempt := 1; ; {
		if bs == nil {
			raw, err := t.readRaw(ctx, k)
			if err != nil {
				fail(live, fmt.Errorf("dynamo: Update of table %q key %s: read: %w", t.name, formatKey(k), err))
				return
			}
			bs, verified = &basis{item: raw}, true
		}
		if other, ok := t.p.s.otherEntity(bs.item); ok {
			fail(live, fmt.Errorf("%w: Update of table %q key %s: the key holds an item of entity %s, not %q; an Update never writes over another entity's item",
				ErrConditionFailed, t.name, formatKey(k), other, t.p.s.entityName))
			return
		}
		// now is the time of this attempt's write: its first version when
		// the type's versions start from the clock.
		var now time.Time
		if t.p.verClock {
			now = t.m.opts.clock.Now()
		}
		held, changes, again, err := t.computeBatch(ctx, k, ws, live, bs, &verified, res, now.UnixMilli())
		if err != nil {
			fail(live, err)
			return
		}
		if again != nil {
			bs = again // the remembered item was stale: start over from the stored one
			continue
		}
		if len(changes) == 0 {
			e.last = bs.item
			return
		}
		who := make([]int, len(changes))
		for j, c := range changes {
			who[j] = c.who
		}
		last := changes[len(changes)-1]
		boxed, v, _ := t.box(t.withVersion(last.v, held), "Update")
		wo := ws[0].wo
		wo.step, wo.now = int64(len(changes)), now
		saved, stored, err := t.save(ctx, boxed, v, &wo, bs)
		if err == nil {
			for j, c := range changes[:len(changes)-1] {
				after, _ := t.p.advance(held, int64(j)+1, now.UnixMilli()) // fits: the write did
				res[c.who] = outcome[T]{saved: t.withVersion(c.v, after)}
			}
			// The last change's copy is the write's own (as stamped, or as
			// stored for the save behaviours that return it).
			res[last.who] = outcome[T]{saved: saved}
			e.last = stored
			return
		}
		ce, ok := asConditionError(err)
		switch {
		case !ok:
			fail(who, err)
			return
		case ce.unknown:
			fail(who, fmt.Errorf("dynamo: Update stopped at attempt %d without calling the function again, which could apply its change twice: %w", attempt, err))
			return
		case ce.Err != ErrVersionConflict && t.p.sameState(bs.item, ce.Item):
			fail(who, err) // an If condition failed on the item fn saw
			return
		case pol.exhausted(attempt):
			fail(who, fmt.Errorf("dynamo: Update gave up after %d attempts: %w", attempt, err))
			return
		}
		// The item is not what the functions saw: another version, another
		// incarnation (deleted and created again), or other attributes.
		// The changes are computed again on it, and so are the outcomes of
		// the functions that failed on an item an earlier change of this
		// write had left, which was never stored; those that failed before
		// the first change saw the stored item and stand.
		bs, verified, live = &basis{item: ce.Item}, true, rerun(live, who[0], res)
		attempt++
		if err := pol.wait(ctx, attempt-1); err != nil {
			for _, i := range who {
				res[i] = outcome[T]{err: fmt.Errorf("dynamo: Update of table %q key %s: %w", t.name, formatKey(k), ctxErr(ws[i].ctx, err))}
			}
			return
		}
	}
}

// rerun returns the members of live from first on whose callers are still
// in Update.
func rerun[T any](live []int, first int, res []outcome[T]) []int {
	var out []int
	for _, i := range live {
		if i >= first && !res[i].gone {
			out = append(out, i)
		}
	}
	return out
}

// ctxErr returns the error of ctx when it is done, else err.
func ctxErr(ctx context.Context, err error) error {
	if e := ctx.Err(); e != nil {
		return e
	}
	return err
}

// computeBatch calls the functions of the batch members live, in order,
// starting from the stored item bs: each gets the item as the previous
// change left it. It returns the version the first function saw and the
// changes made; members whose function failed, panicked or whose ctx ended
// get their outcome in res. When a function fails on a remembered item
// (!*verified), the stored item is read: when it differs, computeBatch
// returns it (again) and the batch starts over from it. err is a failure of
// that read or of decoding the stored item, for all.
//
// nowMs is the time of the write in Unix milliseconds: the first version of
// a type whose versions start from the clock.
func (t *Table[T]) computeBatch(ctx context.Context, k map[string]types.AttributeValue, ws []*waiter[T], live []int, bs *basis, verified *bool,
	res []outcome[T], nowMs int64) (held int64, changes []change, again *basis, err error) {
	from := bs.item
	if from == nil {
		from = k
	}
	s := t.p.s
	for _, i := range live {
		w := ws[i]
		if res[i].gone {
			continue
		}
		cur, err := t.decode(from)
		if err != nil {
			return 0, nil, nil, err
		}
		if len(changes) == 0 {
			_, cv, _ := t.box(cur, "Update")
			held = s.versionOf(cv)
		}
		c := t.ask(w, cur, i == 0)
		switch {
		case c.gone:
			res[i] = outcome[T]{err: c.err, gone: true}
			continue
		case c.withdrawn:
			res[i] = outcome[T]{err: fmt.Errorf("dynamo: Update of table %q key %s: %w", t.name, formatKey(k), w.ctx.Err())}
			continue
		case c.err != nil || c.panicked:
			if !*verified {
				fresh, err := t.readRaw(ctx, k)
				if err != nil {
					return 0, nil, nil, fmt.Errorf("dynamo: Update of table %q key %s: read: %w", t.name, formatKey(k), err)
				}
				*verified = true
				if !t.p.sameState(bs.item, fresh) {
					return 0, nil, &basis{item: fresh}, nil
				}
			}
			res[i] = outcome[T]{err: c.err, panicked: c.panicked, pv: c.pv}
			continue
		}
		boxed, nv, err := t.box(c.next, "Update")
		if err != nil {
			res[i] = outcome[T]{err: fmt.Errorf("%w (returned by the Update function)", err)}
			continue
		}
		nk, err := t.keyOf(nv)
		if err != nil {
			res[i] = outcome[T]{err: err}
			continue
		}
		if !maps.EqualFunc(k, nk, av.Equal) { // numbers by value, as item identity (keyID)
			res[i] = outcome[T]{err: fmt.Errorf("%w: the Update function changed the key of table %q from %s to %s: keep the key; use Save and Delete to move an item",
				ErrInvalidInput, t.name, formatKey(k), formatKey(nk))}
			continue
		}
		n := int64(len(changes))
		fromVer := held // the version this change was computed from
		if n > 0 {
			fromVer, _ = t.p.advance(held, n, nowMs) // fits: checked for the previous change
		}
		if s.version >= 0 && s.versionOf(nv) != fromVer {
			// The version this change was computed from; copy, never
			// modify fn's value.
			boxed, nv, _ = t.box(t.withVersion(nv, fromVer), "Update")
		}
		if len(live) > 1 {
			// Check the change on its own, as a write of it alone would,
			// so that a bad one fails only its caller; and encode it for
			// the next function.
			item, err := t.encode(boxed)
			if err != nil {
				res[i] = outcome[T]{err: fmt.Errorf("%w (returned by the Update function)", err)}
				continue
			}
			var next int64
			if s.version >= 0 {
				var ok bool
				if next, ok = t.p.nextVersion(fromVer, nowMs); !ok {
					res[i] = outcome[T]{err: fmt.Errorf("%w: table %q key %s: version %d leaves no room for this change (step %d) in field %s (%s): %s",
						ErrInvalidInput, t.name, formatKey(k), fromVer, t.p.verStep, s.fields[s.version].goName, s.fields[s.version].typ, s.widen())}
					continue
				}
			}
			if size := t.writtenSize(item, next, nil, w.wo.behavior == SavePut); size > maxItemSize {
				res[i] = outcome[T]{err: fmt.Errorf("%w: table %q key %s: item is about %d bytes, over DynamoDB's 400 KB limit: store large values elsewhere (e.g. S3) and keep a reference",
					ErrInvalidInput, t.name, formatKey(k), size)}
				continue
			}
			if s.version >= 0 {
				item[s.fields[s.version].name] = numberAV(next)
			}
			from = item
		}
		boxed, nv = t.withEntity(boxed, nv) // the copy as stored
		changes = append(changes, change{who: i, boxed: boxed, v: nv})
	}
	return held, changes, nil, nil
}

// batchContext returns the context of a batch's requests: done when the
// contexts of all its callers are, so that one caller's deadline does not
// decide for the others whose changes the write carries.
func batchContext[T any](ws []*waiter[T]) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ws[0].ctx))
	var left atomic.Int64
	left.Store(int64(len(ws)))
	stops := make([]func() bool, len(ws))
	for i, w := range ws {
		stops[i] = context.AfterFunc(w.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}
