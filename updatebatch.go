package dynamo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/gate"
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/schema"
)

// change is one function's result in a batch: the value it returned, boxed,
// with the version it was computed from.
type change struct {
	who   int // index in the batch
	boxed any
	v     reflect.Value
	// item is the change encoded when its function returned (nil: the
	// batch ran in the caller's goroutine): fn's value may be its caller's
	// again by the time of the write.
	item map[string]types.AttributeValue
}

// runBatch runs the functions of ws (ws[0] is the caller's own) and writes
// their changes, retrying on conflict, and fills res: the gate's Run.
func (t *Table[T]) runBatch(e *hotKey[T], ws []*waiter[T], res []gate.Outcome[T]) {
	k := ws[0].Key
	pol, _ := t.m.retryPolicy(policyUpdate, RetryPolicy{}, false, "") // the mapper's was checked by NewTable
	ctx := ws[0].Ctx
	if len(ws) > 1 {
		var stop func()
		ctx, stop = gate.BatchContext(ws)
		defer stop()
	}
	fail := func(idx []int, err error) {
		for _, i := range idx {
			res[i] = gate.Outcome[T]{Err: err}
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
	// conflict) during this batch, rather than remembered. val, when not
	// nil, is the struct decoding bs.item gives (hotKey.LastVal), for the
	// first function.
	bs, bsSize, val := e.TakeLast()
	verified := false
	var one [1]change  // the room of a lone change
	var whoRoom [1]int // and of its writer (writeBatch)
	for attempt := 1; ; {
		if bs == nil {
			bsSize, verified, val = 0, true, nil
		}
		var err error
		if bs, err = t.batchBasis(ctx, k, bs); err != nil {
			fail(live, err)
			return
		}
		now := t.writeClock() // the time of this attempt's write, for all its changes
		held, changes, again, err := t.computeBatch(ctx, k, ws, live, bs, &val, &verified, res, now, one[:0])
		if err != nil {
			fail(live, err)
			return
		}
		if again != nil {
			bs, bsSize, val = again, 0, nil // the remembered item was stale: start over from the stored one
			continue
		}
		if len(changes) == 0 {
			e.Remember(bs.Item, bsSize, val, bs.Own) // val: nil once handed to a function
			return
		}
		who, err := t.writeBatch(ctx, e, k, ws, live, bs, held, changes, now, res, whoRoom[:0])
		if err == nil {
			return
		}
		ce, final := t.batchFailure(err, attempt, bs, pol)
		if final != nil {
			fail(who, final)
			return
		}
		// The item is not what the functions saw: another version, another
		// incarnation (deleted and created again), or other attributes.
		// The changes are computed again on it, and so are the outcomes of
		// the functions that failed on an item an earlier change of this
		// write had left, which was never stored; those that failed before
		// the first change saw the stored item and stand. After a
		// replicated write conflict (ce nil) nothing tells the item
		// another Region is writing: it is read again.
		t.noteConflict(ctx, attempt, ce)
		bs, bsSize, verified, live, val = conflictBasis(ce), 0, true, gate.Rerun(live, who[0], res), nil
		attempt++
		if err := pol.wait(ctx, attempt-1); err != nil {
			for _, i := range who {
				res[i] = gate.Outcome[T]{Err: fmt.Errorf("dynamo: Update of table %q key %s: %w", t.name, formatKey(k), ctxErr(ws[i].Ctx, err))}
			}
			return
		}
	}
}

// batchBasis returns the stored item a batch's functions start from: bs,
// or when nil the item read now; an item of another entity is refused.
func (t *table) batchBasis(ctx context.Context, k map[string]types.AttributeValue, bs *plan.Basis) (*plan.Basis, error) {
	if bs == nil {
		raw, err := t.readRaw(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("dynamo: Update of table %q key %s: read: %w", t.name, formatKey(k), err)
		}
		bs = &plan.Basis{Item: raw}
	}
	if other, ok := t.p.S.OtherEntity(bs.Item); ok {
		return nil, fmt.Errorf("%w: Update of table %q key %s: the key holds an item of entity %s, not %q; an Update never writes over another entity's item",
			ErrConditionFailed, t.name, formatKey(k), other, t.p.S.EntityName)
	}
	return bs, nil
}

// writeBatch sends the write of a batch's changes to the item with key k,
// computed from bs at version held, and returns who: the callers whose fate it decides (those
// who changed the item, then those who ride on their changes; who[0] is the
// first change; appended to room, empty). When it succeeds each gets its
// outcome and e remembers the item as stored.
func (t *Table[T]) writeBatch(ctx context.Context, e *hotKey[T], k map[string]types.AttributeValue, ws []*waiter[T], live []int, bs *plan.Basis, held int64,
	changes []change, now time.Time, res []gate.Outcome[T], room []int) ([]int, error) {
	who := room
	for _, c := range changes {
		who = append(who, c.who)
	}
	for _, i := range live {
		if res[i].Rides {
			who = append(who, i) // after the first change: who[0] stays first
		}
	}
	last := changes[len(changes)-1]
	boxed, v := last.boxed, last.v // a copy, or fn's pointer: only read
	sc := saveCall{wo: *ws[0].Wo}
	if last.item != nil {
		// Its caller may have left Update and be changing the slices and
		// maps of the value its function returned: write a copy of the
		// change as encoded then. The caller gets its own value back (its
		// fields the item does not store included), as a lone caller does.
		cp, err := t.decode(last.item)
		if err != nil {
			return who, err
		}
		sc.own, sc.ownBoxed = v, boxed
		boxed, v, _ = t.box(cp, "Update")
	}
	if s := t.p.S; s.Version >= 0 && s.VersionOf(v) != held {
		// Several changes: the last was computed from a later version
		// than the write's (held, advanced by one step per change).
		boxed, v, _ = t.box(t.withVersion(v, held), "Update")
	}
	sc.step, sc.now, sc.key = int64(len(changes)), now, k
	t.noteCombined(ctx, len(changes))
	var start time.Time
	timed := t.gate.TimeWrite(len(ws))
	if timed {
		start = t.gate.Timing().Now()
	}
	sr, err := t.save(ctx, boxed, v, &sc, bs)
	if timed {
		t.gate.NoteRTT(t.gate.Timing().Now().Sub(start))
	}
	if err == nil {
		saved := sr.saved
		for j, c := range changes[:len(changes)-1] {
			after, _ := t.p.Advance(held, int64(j)+1, now.UnixMilli()) // fits: the write did
			res[c.who] = gate.Outcome[T]{Saved: t.sharedCopy(c.v, after, saved)}
		}
		// The last change's copy is the write's own (as stamped, or as
		// stored for the save behaviours that return it).
		res[last.who] = gate.Outcome[T]{Saved: saved}
		e.Remember(sr.stored, sr.size, nil, sr.own)
		if b := sc.wo.behavior; len(changes) == 1 && last.item == nil && (b == SaveUpdate || b == SavePut) {
			// A lone change, written from fn's value: stored is its
			// encoding, with the version saved holds.
			e.LastVal = t.readBack(&saved, &e.LastRoom)
		}
	}
	return who, err
}

// batchFailure classifies the failed write (err, at attempt) of a batch
// computed from bs: final is the error that ends the batch for its callers
// (not a condition failure, an unknown outcome, an If condition failed on
// the item the functions saw, attempts exhausted); nil when the changes are
// to be computed again on ce.Item, the item the conflict found, or (ce nil:
// a replicated write conflict, not applied) on the item read again.
func (t *table) batchFailure(err error, attempt int, bs *plan.Basis, pol RetryPolicy) (ce *ConditionError, final error) {
	if replicatedRetry(err) {
		if pol.exhausted(attempt) {
			return nil, fmt.Errorf("dynamo: Update gave up after %s: %w", plural(attempt, "attempt"), err)
		}
		return nil, nil
	}
	ce, ok := asConditionError(err)
	switch {
	case !ok:
		return nil, err
	case ce.unknown:
		return nil, fmt.Errorf("dynamo: Update stopped at attempt %d without calling the function again, which could apply its change twice: %w", attempt, err)
	case ce.Err != ErrVersionConflict && t.p.SameState(bs.Item, ce.Item) && plan.SameWindow(bs.Item, ce.Item):
		return nil, err // an If condition failed on the item fn saw (a put's condition on the window is no If)
	case pol.exhausted(attempt):
		return nil, fmt.Errorf("dynamo: Update gave up after %s: %w", plural(attempt, "attempt"), err)
	}
	return ce, nil
}

// conflictBasis is the basis a batch's next attempt starts from: the item
// the conflict ce found, or none (the item read again) after a replicated
// write conflict.
func conflictBasis(ce *ConditionError) *plan.Basis {
	if ce == nil {
		return nil
	}
	return &plan.Basis{Item: ce.Item}
}

// replicatedRetry reports whether err is a replicated write conflict
// (MRSC) that Update may meet by reading the item again and calling its
// function again: DynamoDB refused the write, and no earlier attempt of it
// may have been applied.
func replicatedRetry(err error) bool {
	return errors.Is(err, ErrReplicatedConflict) && !errors.Is(err, ErrUnknownOutcome)
}

// versionClock returns the time a write takes its first version from when
// the type's versions start from the clock (versionstart=clock), else the
// zero time.
func (t *table) versionClock() time.Time {
	if t.p.VerClock {
		return t.m.opts.clock.Now()
	}
	return time.Time{}
}

// writeClock returns the clock reading of an Update's write when the type
// needs one — timestamps, or versions started from the clock —, else the
// zero time. Read once per attempt: every change a shared write carries is
// stamped with it, as the write itself is.
func (t *table) writeClock() time.Time {
	if t.p.VerClock || t.p.S.HasStamps() {
		return t.m.opts.clock.Now()
	}
	return time.Time{}
}

// sharedCopy returns the copy an earlier change of a shared write returns to
// its caller: v (stamped with the write's time: preparer.run) at version
// ver, holding the creation time of last, the write's own copy — the one
// stored. last is taken by value, so that the write's copy does not move
// to the heap for the batches of one change.
func (t *Table[T]) sharedCopy(v reflect.Value, ver int64, last T) T {
	out := t.withVersion(v, ver)
	s := t.p.S
	if s.Created < 0 {
		return out
	}
	f := &s.Fields[s.Created]
	lv := reflect.ValueOf(last)
	if t.ptr {
		lv = lv.Elem()
	}
	src, ok := schema.FieldValue(lv, f)
	dst, ok2 := schema.FieldValue(t.structOf(&out), f)
	if !ok || !ok2 {
		return out
	}
	if src.Kind() == reflect.Pointer && !src.IsNil() {
		// A pointer of its own: no copy shares one with another.
		p := reflect.New(src.Type().Elem())
		p.Elem().Set(src.Elem())
		src = p
	}
	dst.Set(src)
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
// *val, when not nil, is the struct decoding bs.item gives (hotKey.LastVal):
// the first function called is given it instead, and *val is set to nil.
//
// now is the time of the write (writeClock): the changes' timestamps and
// the first version of a type whose versions start from the clock. room is
// where the changes are appended (empty).
func (t *Table[T]) computeBatch(ctx context.Context, k map[string]types.AttributeValue, ws []*waiter[T], live []int, bs *plan.Basis, val **T, verified *bool,
	res []gate.Outcome[T], now time.Time, room []change) (held int64, changes []change, again *plan.Basis, err error) {
	changes = room
	from := bs.Item
	if from == nil {
		from = k
	}
	s := t.p.S
	// The write carries a token like the one save makes (nil: none): each
	// change is sized with it, as a write of it alone would be.
	var sizeToken []byte
	if s.Version >= 0 && t.p.TokenAttr != "" && len(live) > 1 {
		sizeToken = newToken()
	}
	for pos, i := range live {
		w := ws[i]
		if res[i].Gone {
			continue
		}
		cur, err := t.inputOf(from, val, len(changes) == 0)
		if err != nil {
			return 0, nil, nil, err
		}
		if len(changes) == 0 {
			held = s.VersionOf(t.structOf(&cur))
		}
		if w.Wo.mustExist && bs.Item == nil && len(changes) == 0 {
			// Absent as read (or as a conflict found it): never remembered.
			res[i] = gate.Outcome[T]{Err: fmt.Errorf("%w: Update of table %q key %s with MustExist: the key holds no item", ErrNotFound, t.name, formatKey(k))}
			continue
		}
		n := int64(len(changes))
		fromVer := held // the version this change was computed from
		if n > 0 {
			fromVer, _ = t.p.Advance(held, n, now.UnixMilli()) // fits: checked for the previous change
		}
		// The change is checked on its own, as a write of it alone would
		// be, so that a bad one fails only its caller, and encoded for the
		// next function, when others share the batch; and whenever the
		// batch runs outside the caller's goroutine, so that the write
		// never reads the value fn returned after its caller may have
		// left Update (writeBatch writes from item).
		encode := len(live) > 1 || !w.Inline
		prep := preparer[T]{t: t, k: k, w: w, fromVer: fromVer, sizeToken: sizeToken, encode: encode, now: now, created: t.createdIn(from)}
		c := t.ask(w, cur, len(changes) > 0, &prep)
		switch {
		case c.Cut:
			// Slow: the changes before it are written without it; it and
			// the calls after it go to the next batch.
			for _, j := range live[pos:] {
				res[j] = gate.Outcome[T]{Requeue: true}
			}
			return held, changes, nil, nil
		case c.Gone:
			res[i] = gate.Outcome[T]{Err: c.Err, Gone: true}
			continue
		case c.Withdrawn:
			res[i] = gate.Outcome[T]{Err: fmt.Errorf("dynamo: Update of table %q key %s: %w", t.name, formatKey(k), w.Ctx.Err())}
			continue
		case c.Err != nil || c.Panicked:
			if res[i], again, err = t.noChange(ctx, k, bs, verified, from, c, len(changes) > 0); again != nil || err != nil {
				return 0, nil, again, err
			}
			continue
		}
		pr := c.Prep // c.Prepped: fn returned no error
		if pr.Err != nil {
			res[i] = gate.Outcome[T]{Err: pr.Err}
			continue
		}
		if pr.Item != nil {
			from = pr.Item
		}
		changes = append(changes, change{who: i, boxed: pr.Boxed, v: pr.V, item: pr.Item})
	}
	return held, changes, nil, nil
}

// inputOf returns the value a function of a batch is given: the item from
// decoded, or, for the batch's first function (first: from is bs.item),
// the decoding kept from the last write in *val, handed over once
// (nothing else refers to it) and cleared.
func (t *Table[T]) inputOf(from map[string]types.AttributeValue, val **T, first bool) (T, error) {
	if first && *val != nil {
		// The key's room (readBack): its value is cur's now, so it keeps
		// none.
		var zero T
		cur := **val
		**val = zero
		*val = nil
		return cur, nil
	}
	return t.decode(from)
}

// preparer is what ask runs on the value fn returns (run), computed from
// version fromVer: the change checked, and, with encode, stamped with the
// write's time now, checked on its own and encoded (checkAlone) as a write
// of it alone would be, so that a bad one fails only its caller and the
// next function reads it as the write stores it. A value, not a closure: a
// batch run in its caller's goroutine calls run in place, with nothing to
// allocate.
type preparer[T any] struct {
	t         *Table[T]
	k         map[string]types.AttributeValue
	w         *waiter[T]
	fromVer   int64
	sizeToken []byte
	encode    bool
	now       time.Time
	// created is the creation time the item the change was computed from
	// holds (nil: none, or the type has no created field).
	created types.AttributeValue
}

func (pr *preparer[T]) run(next T) gate.Prepared {
	t := pr.t
	boxed, nv, err := t.changeOf(pr.k, next, pr.fromVer)
	if err != nil || !pr.encode {
		return gate.Prepared{Boxed: boxed, V: nv, Err: err}
	}
	if t.p.S.HasStamps() {
		// Stamped as the write stamps it (a copy, taken here).
		boxed, nv = t.stamp(boxed, nv, pr.now)
	} else if t.ptr && boxed == any(next) {
		// fn's own pointer: the batch reads a copy of the struct,
		// taken here, before its caller may leave Update.
		boxed, nv, _ = t.box(t.withVersion(nv, pr.fromVer), "Update")
	}
	item, err := t.checkAlone(pr.k, boxed, pr.fromVer, pr.sizeToken, pr.w.Wo.behavior == SavePut, pr.now.UnixMilli())
	if err == nil {
		err = pr.keepCreated(item)
	}
	return gate.Prepared{Boxed: boxed, V: nv, Item: item, Err: err}
}

// createdIn returns the creation time item holds, nil when none (or the
// type has no created field).
func (t *table) createdIn(item map[string]types.AttributeValue) types.AttributeValue {
	if s := t.p.S; s.Created >= 0 {
		return item[s.Fields[s.Created].Name]
	}
	return nil
}

// keepCreated gives item, a change of an item holding the creation time
// pr.created, that time, as the write stores it (an UpdateItem keeps the
// stored one: if_not_exists); a SavePut carrying another fails its caller
// alone, as the put alone would.
func (pr *preparer[T]) keepCreated(item map[string]types.AttributeValue) error {
	if pr.created == nil {
		return nil
	}
	t := pr.t
	name := t.p.S.Fields[t.p.S.Created].Name
	if pr.w.Wo.behavior != SavePut {
		item[name] = pr.created
		return nil
	}
	if why := t.p.CreatedMismatch(map[string]types.AttributeValue{name: pr.created}, item[name]); why != "" {
		return fmt.Errorf("%w: Update of table %q key %s: %s", ErrConditionFailed, t.name, formatKey(pr.k), why)
	}
	return nil
}

// noChange returns the outcome of a caller whose function returned an
// error (ErrNoChange among them) or panicked, computed from the item from
// (bs as read, or as the changes before it leave it: rides). Such an answer
// is final only for the item as stored: the first one of a batch has the
// item read again (verified), and when it is no longer bs the batch is
// computed again from it (again).
func (t *Table[T]) noChange(ctx context.Context, k map[string]types.AttributeValue, bs *plan.Basis, verified *bool,
	from map[string]types.AttributeValue, c gate.Computed[T], rides bool) (gate.Outcome[T], *plan.Basis, error) {
	if !*verified {
		fresh, err := t.readRaw(ctx, k)
		if err != nil {
			return gate.Outcome[T]{}, nil, fmt.Errorf("dynamo: Update of table %q key %s: read: %w", t.name, formatKey(k), err)
		}
		*verified = true
		if !t.p.SameState(bs.Item, fresh) {
			return gate.Outcome[T]{}, &plan.Basis{Item: fresh}, nil
		}
	}
	if errors.Is(c.Err, ErrNoChange) {
		// The item as given (fn may have changed its copy): stored, or as
		// the changes before it in this write leave it, with whom it then
		// shares the write's fate (rides).
		given, err := t.decode(from)
		if err != nil {
			return gate.Outcome[T]{}, nil, err
		}
		return gate.Outcome[T]{Saved: given, Rides: rides}, nil, nil
	}
	return gate.Outcome[T]{Err: c.Err, Panicked: c.Panicked, PV: c.PV}, nil, nil
}

// changeOf returns next, a value the Update function returned for the item
// with key k, as it is written: boxed, its key checked to be k, carrying the
// version fromVer it was computed from (a copy: fn's value is never
// modified) and the type's entity. An error fails only its caller.
func (t *Table[T]) changeOf(k map[string]types.AttributeValue, next T, fromVer int64) (any, reflect.Value, error) {
	boxed, nv, err := t.box(next, "Update")
	if err != nil {
		return nil, nv, fmt.Errorf("%w (returned by the Update function)", err)
	}
	if !t.sameKey(k, nv) {
		nk, err := t.keyOf(nv)
		if err != nil {
			return nil, nv, err
		}
		if !maps.EqualFunc(k, nk, av.Equal) { // numbers by value, as item identity (keyID)
			return nil, nv, fmt.Errorf("%w: the Update function changed the key of table %q from %s to %s: keep the key; use Save and Delete to move an item",
				ErrInvalidInput, t.name, formatKey(k), formatKey(nk))
		}
	}
	if s := t.p.S; s.Version >= 0 && s.VersionOf(nv) != fromVer {
		boxed, nv, _ = t.box(t.withVersion(nv, fromVer), "Update")
	}
	boxed, nv = t.withEntity(boxed, nv) // the copy as stored
	return boxed, nv, nil
}

// checkAlone checks one change of a combined write (boxed, computed from
// version fromVer) as a write of it alone would be checked — it encodes,
// its keys are ones DynamoDB takes, its version has room for a step, it fits in 400 KB with a write token of
// sizeToken's size — and returns its item at its new version, which the
// next function of the write is given.
func (t *table) checkAlone(k map[string]types.AttributeValue, boxed any, fromVer int64, sizeToken []byte, put bool, nowMs int64) (map[string]types.AttributeValue, error) {
	s := t.p.S
	item, err := t.encode(boxed)
	if err == nil {
		err = t.checkItemKeys(item) // its index keys: the table's are k
	}
	if err != nil {
		return nil, fmt.Errorf("%w (returned by the Update function)", err)
	}
	var next int64
	if s.Version >= 0 {
		var ok bool
		if next, ok = t.p.NextVersion(fromVer, nowMs); !ok {
			return nil, fmt.Errorf("%w: table %q key %s: version %d leaves no room for this change (step %d) in field %s (%s): %s",
				ErrInvalidInput, t.name, formatKey(k), fromVer, t.p.VerStep, s.Fields[s.Version].GoName, s.Fields[s.Version].Type, s.Widen())
		}
	}
	if size := t.writtenSize(item, next, sizeToken, put); size > maxItemSize {
		return nil, fmt.Errorf("%w: table %q key %s: item is about %d bytes, over DynamoDB's 400 KB limit: store large values elsewhere (e.g. S3) and keep a reference",
			ErrInvalidInput, t.name, formatKey(k), size)
	}
	if s.Version >= 0 {
		item[s.Fields[s.Version].Name] = plan.NumberAV(next)
	}
	return item, nil
}
