package commitlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/internal/ident"
	"github.com/ddbkit/dynamo/internal/telemetry"
)

// ErrTimeout is returned by a Committer that got its record but found its
// timeout (WithTimeout) already passed before it could start the store
// operation: another writer may have reclaimed the record by then, so it
// did not write. Nothing was written; try again (a longer timeout helps if
// this is frequent).
var ErrTimeout = errors.New("commitlog: timeout passed before the operation could start")

// Committer makes PutIfNotExists, PutIfMatch and CopyIfNotExists on a Store
// conditional by synchronizing writers through a DynamoDB table, with the
// DynamoCommit protocol described in docs/commitlog.md. It is safe
// for concurrent use.
//
// Every writer of the paths a Committer writes must go through a Committer
// configured with the same table: unconditional writes (Store.Put, Copy,
// Delete) and writers using other tables or native conditional writes on
// the same paths race with it.
type Committer struct {
	table *dynamo.Table[commitRecord]
	store Store
	o     options
	log   *telemetry.Log // every line goes through it: paths and owners only with WithTelemetryKeys
	tel   *telemetry.T   // the mapper's
}

// NewCommitter returns a Committer for the objects of s, synchronized
// through the DynamoDB table called table (hash key "path" (S), range key
// "etag" (S), TTL on "ttl"; Committer.CreateTable creates it). It sends no
// request. Bad options and a nil mapper or store are errors.
func NewCommitter(m *dynamo.Mapper, table string, s Store, opts ...Option) (*Committer, error) {
	if m == nil || s == nil {
		return nil, invalid("commitlog: NewCommitter needs a mapper and a store (got mapper %v, store %v)", m != nil, s != nil)
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	tel := telemetry.OfMapper(m)
	t, err := dynamo.NewTable[commitRecord](m, table)
	if err != nil {
		return nil, err
	}
	return &Committer{table: t, store: s, o: o, log: newLog(o, tel, slog.String("table", table)), tel: tel}, nil
}

// CreateTable creates the Committer's table (on-demand, hash key "path",
// range key "etag", TTL on "ttl") and waits until it is active. ctx bounds
// the whole call. An existing table is an error wrapping
// dynamo.ErrTableExists; pass dynamo.IfNotExists() to call it on every
// start. opts are those of dynamo.Table.CreateTable.
//
// IAM: dynamodb:CreateTable, dynamodb:DescribeTable,
// dynamodb:UpdateTimeToLive.
func (c *Committer) CreateTable(ctx context.Context, opts ...dynamo.CreateTableOption) error {
	return c.table.CreateTable(ctx, opts...)
}

// Store returns the store the Committer writes to.
func (c *Committer) Store() Store { return c.store }

// PutIfNotExists writes data to path unless an object exists there. It
// returns an error wrapping ErrExists, without writing, when one does. Of
// several concurrent calls on the same absent path (through Committers on
// the same table), exactly one writes. It costs 4 round trips (HEAD, record
// write, store write, done mark) and waits, HEADing every poll interval,
// while another writer holds the path's record.
//
// ctx bounds the whole call, waiting included; the store write, also bounded
// by WithTimeout, is sent once, never again. An error wrapping
// ErrUnknownOutcome means the object may be written, now or later; every
// other error means nothing was written. Bad input is refused, before any
// request, with ErrInvalidInput. See docs/commitlog.md, Errors of the
// Committer's writes.
//
// IAM: dynamodb:PutItem, dynamodb:GetItem; s3:GetObject (HEAD), s3:PutObject.
func (c *Committer) PutIfNotExists(ctx context.Context, path string, data []byte) (ObjectInfo, error) {
	if err := checkKey("put if not exists", "path", path); err != nil {
		return ObjectInfo{}, err
	}
	return c.commit(ctx, operation{
		name: "put if not exists", path: path, etag: notExists,
		do: func(ctx context.Context, id string) (ObjectInfo, error) { return c.put(ctx, path, data, id) },
		expect: func(context.Context) (ObjectInfo, error) {
			return ObjectInfo{Path: path, ETag: md5ETag(data), Size: int64(len(data))}, nil
		},
	})
}

// PutIfMatch replaces the object at path with data if its ETag is etag (as
// returned by Head, Get or a previous write; compared as strings, quotes
// included). It returns an error wrapping ErrPreconditionFailed, without
// writing, when the object has another ETag or does not exist — found by the
// HEAD it sends first, by the HEAD it repeats while another writer holds the
// record, or by the HEAD it sends after reclaiming a record. Of several
// concurrent calls holding the same ETag (through Committers on the same
// table), at most one writes.
//
// ctx bounds the whole call as for PutIfNotExists.
//
// IAM: dynamodb:PutItem, dynamodb:GetItem; s3:GetObject (HEAD), s3:PutObject.
func (c *Committer) PutIfMatch(ctx context.Context, path string, data []byte, etag string) (ObjectInfo, error) {
	if err := checkKey("put if match", "path", path); err != nil {
		return ObjectInfo{}, err
	}
	if etag == "" || etag == notExists {
		return ObjectInfo{}, invalid("commitlog: put if match %q: ETag %q: pass the ETag from Head, Get or Put (use PutIfNotExists to create)", path, etag)
	}
	return c.commit(ctx, operation{
		name: "put if match", path: path, etag: etag,
		do: func(ctx context.Context, id string) (ObjectInfo, error) { return c.put(ctx, path, data, id) },
		expect: func(context.Context) (ObjectInfo, error) {
			return ObjectInfo{Path: path, ETag: md5ETag(data), Size: int64(len(data))}, nil
		},
	})
}

// CopyIfNotExists copies the object at src to dst unless an object exists
// at dst. It returns an error wrapping ErrExists, without copying, when one
// does (found as PutIfNotExists finds it), and an error wrapping ErrNotExist
// when src does not exist. The record is keyed by dst (with ETag "*"), so
// it excludes PutIfNotExists on dst too.
//
// ctx bounds the whole call as for PutIfNotExists.
//
// IAM: dynamodb:PutItem, dynamodb:GetItem; s3:GetObject (HEAD and the copy's read),
// s3:PutObject.
func (c *Committer) CopyIfNotExists(ctx context.Context, src, dst string) (ObjectInfo, error) {
	if err := checkKey("copy if not exists", "src", src); err != nil {
		return ObjectInfo{}, err
	}
	if err := checkKey("copy if not exists", "dst", dst); err != nil {
		return ObjectInfo{}, err
	}
	if src == dst {
		return ObjectInfo{}, invalid("commitlog: copy if not exists %q to itself: name another destination", src)
	}
	return c.commit(ctx, operation{
		name: "copy if not exists", path: dst, etag: notExists, src: src,
		do: func(ctx context.Context, id string) (ObjectInfo, error) {
			if ws, ok := c.store.(WriteIDStore); ok {
				return ws.CopyWithID(ctx, src, dst, id)
			}
			return c.store.Copy(ctx, src, dst)
		},
		expect: func(ctx context.Context) (ObjectInfo, error) {
			info, err := c.store.Head(ctx, src)
			info.Path = dst
			return info, err
		},
	})
}

// put writes data to path, tagged with id where the store keeps write ids.
func (c *Committer) put(ctx context.Context, path string, data []byte, id string) (ObjectInfo, error) {
	if ws, ok := c.store.(WriteIDStore); ok {
		return ws.PutWithID(ctx, path, data, id)
	}
	return c.store.Put(ctx, path, data)
}

// operation is one conditional store operation.
type operation struct {
	name string // for messages
	path string // the object written
	etag string // the precondition: the ETag held, or notExists
	src  string // the copy source, for messages
	// do performs the write, tagged with the write id id where the store
	// keeps them.
	do func(ctx context.Context, id string) (ObjectInfo, error)
	// expect returns what the object is once do has written it (its ETag
	// as S3 makes them for single-part uploads).
	expect func(ctx context.Context) (ObjectInfo, error)
}

// logAttrs are the attributes of a log line about op, more after them: the
// operation, its paths (identifiers: only with WithTelemetryKeys) and the
// ETag it holds.
func (op *operation) logAttrs(more ...slog.Attr) []slog.Attr {
	attrs := []slog.Attr{slog.String("op", op.name), telemetry.ID("path", op.path)}
	if op.src != "" {
		attrs = append(attrs, telemetry.ID("src", op.src))
	}
	if op.etag != "" {
		attrs = append(attrs, slog.String("etag", op.etag))
	}
	return append(attrs, more...)
}

func (op *operation) String() string {
	if op.src != "" {
		return fmt.Sprintf("%s %q to %q", op.name, op.src, op.path)
	}
	return fmt.Sprintf("%s %q", op.name, op.path)
}

// check sends HEAD for op's path and returns an error wrapping ErrExists or
// ErrPreconditionFailed when op's precondition does not hold, or the HEAD's
// own error. It returns the object as the HEAD found it (zero when absent):
// the state a write of op replaces.
func (c *Committer) check(ctx context.Context, op *operation) (ObjectInfo, error) {
	info, err := c.store.Head(ctx, op.path)
	switch {
	case op.etag == notExists && err == nil:
		return info, fmt.Errorf("%w: %s: ETag %s (read it and decide again)", ErrExists, op, info.ETag)
	case op.etag == notExists && errors.Is(err, ErrNotExist):
		return ObjectInfo{}, nil
	case err == nil && info.ETag != op.etag:
		return info, fmt.Errorf("%w: %s: held ETag %s, current %s (read the object again and retry with its ETag)", ErrPreconditionFailed, op, op.etag, info.ETag)
	case err == nil:
		return info, nil
	case errors.Is(err, ErrNotExist):
		return ObjectInfo{}, fmt.Errorf("%w: %s: held ETag %s, but the object does not exist (%w)", ErrPreconditionFailed, op, op.etag, err)
	}
	return ObjectInfo{}, fmt.Errorf("commitlog: %s: HEAD: %w", op, err)
}

// timeoutMS is the timeout stored in records, in whole milliseconds rounded
// up: a waiter never waits less than the holder's timeout.
func (c *Committer) timeoutMS() int64 {
	return int64((c.o.timeout + time.Millisecond - 1) / time.Millisecond)
}

// sameIncarnation is the condition of a write on a record of incarnation
// inc: the record's incarnation is inc (a record written before
// incarnations existed has none).
func sameIncarnation(inc string) expression.ConditionBuilder {
	if inc == "" {
		return expression.AttributeNotExists(expression.Name("incarnation"))
	}
	return expression.Name("incarnation").Equal(expression.Value(inc))
}

// commit runs the protocol for op: HEAD and fail fast; create the record,
// or wait for its holder and reclaim it; perform op within the timeout; mark
// the record done.
//
// A record is known by its incarnation and generation together: the
// generation starts again at 1 when a record is deleted (TTL, by hand) and
// created again, so the wait restarts whenever either changes, and a reclaim
// holds both.
func (c *Committer) commitOp(ctx context.Context, op operation) (ObjectInfo, error) {
	clk := c.o.clock
	headAt := clk.Now() // the HEAD shows the object as it was at some time from now on
	pre, err := c.check(ctx, &op)
	if err != nil {
		return ObjectInfo{}, err
	}
	var held *commitRecord // the record to reclaim; nil: create one
	var seen *commitRecord // the record being waited on
	var seenAt time.Time   // when seen was first seen, on clk, after the response
	// checked: pre is still the object as it is, unless a holder of the
	// record has finished since the HEAD. It stops being so once a record
	// write meets another writer's record, or when the record write is sent
	// a timeout or more after the HEAD: a finished record may then have
	// been deleted (TTL) in between, and its holder's write is not in pre.
	checked := true
	for {
		rec, opts := c.recordFor(&op, held)
		sentAt := clk.Now()
		if sentAt.Sub(headAt) >= c.o.timeout {
			checked = false
		}
		saved, err := c.table.Save(ctx, rec, opts...)
		if err == nil {
			return c.hold(ctx, &op, saved, sentAt, held != nil || !checked, pre)
		}
		cur, found, err := c.settleRecord(ctx, &op, rec, err)
		switch {
		case err != nil:
			return ObjectInfo{}, err
		case found && cur.Holder == rec.Holder:
			// Our write was applied, its answer lost: we hold the record.
			return c.hold(ctx, &op, cur, sentAt, held != nil || !checked, pre)
		}
		// Another writer's record, or none any more: its holder may have
		// written the object since our HEAD.
		checked = false
		switch {
		case !found:
			held = nil // gone (TTL, by hand) since we saw it: create it again
			continue
		case cur.Done:
			// Its holder finished: take it at once, and HEAD again once
			// held, since the finished operation may have changed the object.
			held = &cur
			continue
		}
		now := clk.Now()
		if seen == nil || cur.Incarnation != seen.Incarnation || cur.Generation != seen.Generation {
			// Another holder, or the record was deleted and created again:
			// its holder gets its whole timeout from now.
			seen, seenAt = &cur, now
		}
		if err := c.awaitReclaim(ctx, &op, cur, seenAt, now); err != nil {
			return ObjectInfo{}, err
		}
		held = &cur
	}
}

// recordFor returns the record to write for op and the options to write it
// with: a record of a new incarnation when held is nil (create); else one
// of held's generation and incarnation, written on condition that the
// stored record is still of that incarnation (reclaim).
func (c *Committer) recordFor(op *operation, held *commitRecord) (commitRecord, []dynamo.WriteOption) {
	rec := commitRecord{
		Path:      op.path,
		ETag:      op.etag,
		TimeoutMS: c.timeoutMS(),
		TTL:       time.Now().Add(c.o.ttl).Unix(), // wall time: DynamoDB compares it with its own
		Owner:     c.o.owner,
		Holder:    ident.RandomHex(8),
	}
	opts := []dynamo.WriteOption{dynamo.WithSaveBehavior(dynamo.SavePut)}
	if held != nil {
		rec.Generation = held.Generation
		rec.Incarnation = held.Incarnation
		if rec.Incarnation == "" {
			rec.Incarnation = ident.RandomHex(8) // a record of an earlier version of this package
		}
		opts = append(opts, dynamo.If(sameIncarnation(held.Incarnation)))
	} else {
		rec.Incarnation = ident.RandomHex(8)
	}
	return rec, opts
}

// awaitReclaim waits until cur, another writer's record first seen at
// seenAt, may be reclaimed (its holder's patience has passed), checking the
// object at every poll so that a conflicting write fails fast; now is when
// cur was read. The error is the check's, or ctx's.
func (c *Committer) awaitReclaim(ctx context.Context, op *operation, cur commitRecord, seenAt, now time.Time) error {
	clk := c.o.clock
	patience := c.patience(cur)
	c.log.Debug(ctx, "waiting for a record", op.logAttrs(telemetry.ID("holder", cur.Owner),
		slog.Int64("generation", cur.Generation), telemetry.ID("incarnation", cur.Incarnation), slog.Duration("patience", patience-now.Sub(seenAt)))...)
	for {
		left := patience - clk.Now().Sub(seenAt)
		if left <= 0 {
			break
		}
		t := clk.NewTimer(min(c.o.poll, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("commitlog: %s: waiting for the record held by %s (generation %d): %w",
				op, cur.Owner, cur.Generation, context.Cause(ctx))
		case <-t.C():
		}
		if patience-clk.Now().Sub(seenAt) <= 0 {
			break // reclaim now; the HEAD after reclaiming checks the object
		}
		if _, err := c.check(ctx, op); err != nil {
			return err
		}
	}
	c.log.Warn(ctx, "reclaiming a record another writer left", op.logAttrs(telemetry.ID("holder", cur.Owner),
		slog.Int64("generation", cur.Generation), telemetry.ID("incarnation", cur.Incarnation), slog.Duration("waited", clk.Now().Sub(seenAt)))...)
	noteReclaimed(ctx, c.tel, c.table.Name(), cur.Generation)
	return nil
}

// settleRecord tells, after the record write rec failed with err, what the
// record is now: cur (found) or none. A conflict carries the record
// (ALL_OLD). A write that may have been applied (dynamo.ErrUnknownOutcome) is
// settled by reading the record: it is ours if it carries our holder id.
// Any other failure is returned as an error — nothing was written to the
// store — after marking the record done if the read finds it ours.
func (c *Committer) settleRecord(ctx context.Context, op *operation, rec commitRecord, err error) (cur commitRecord, found bool, _ error) {
	if errors.Is(err, dynamo.ErrVersionConflict) || errors.Is(err, dynamo.ErrConditionFailed) {
		cur, cerr := c.table.Current(err)
		if errors.Is(cerr, dynamo.ErrNotFound) {
			return commitRecord{}, false, nil
		}
		if cerr != nil {
			return commitRecord{}, false, fmt.Errorf("commitlog: %s: decoding the record (nothing was written to the store): %w", op, cerr)
		}
		return cur, true, nil
	}
	unknown := errors.Is(err, dynamo.ErrUnknownOutcome)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.o.timeout)
	defer cancel()
	cur, lerr := c.table.Load(rctx, commitRecord{Path: rec.Path, ETag: rec.ETag}, dynamo.ConsistentRead())
	switch {
	case lerr == nil && unknown && ctx.Err() == nil:
		return cur, true, nil
	case errors.Is(lerr, dynamo.ErrNotFound) && unknown && ctx.Err() == nil:
		return commitRecord{}, false, nil
	case lerr == nil && cur.Holder == rec.Holder:
		c.release(ctx, op, cur) // ours, but we stop here: let others in
	}
	return commitRecord{}, false, fmt.Errorf("commitlog: %s: writing the record (nothing was written to the store): %w", op, err)
}

// maxPatience bounds a waiter's patience, whatever the timeout a record
// carries.
const maxPatience = time.Duration(math.MaxInt64)

// patience is how long a waiter watches a record that is not done before
// reclaiming it: the holder's timeout × the skew rate. It never wraps
// around: a record carrying an absurd timeout is waited on (nearly) forever.
func (c *Committer) patience(r commitRecord) time.Duration {
	d := float64(c.o.timeout)
	if r.TimeoutMS > 0 {
		d = float64(r.TimeoutMS) * float64(time.Millisecond)
	}
	p := d * c.o.skew
	if p >= float64(maxPatience) {
		return maxPatience
	}
	return time.Duration(p)
}

// hold performs op while holding rec, the record written at sentAt (on the
// clock), and marks it done. recheck asks for a HEAD first: after a reclaim,
// another holder may have changed the object. pre is the object as the last
// HEAD found it.
func (c *Committer) hold(ctx context.Context, op *operation, rec commitRecord, sentAt time.Time, recheck bool, pre ObjectInfo) (ObjectInfo, error) {
	clk := c.o.clock
	deadline := sentAt.Add(c.o.timeout)
	if recheck {
		var err error
		if pre, err = c.check(ctx, op); err != nil {
			c.release(ctx, op, rec) // we wrote nothing
			return ObjectInfo{}, err
		}
	}
	left := deadline.Sub(clk.Now())
	if left <= 0 {
		c.log.Warn(ctx, "timeout passed before the operation could start", op.logAttrs(
			slog.Int64("generation", rec.Generation), slog.Duration("timeout", c.o.timeout))...)
		c.release(ctx, op, rec)
		return ObjectInfo{}, fmt.Errorf("%w: %s: %v passed since the record was written (timeout %v)", ErrTimeout, op, clk.Now().Sub(sentAt), c.o.timeout)
	}
	if err := ctx.Err(); err != nil {
		c.release(ctx, op, rec)
		return ObjectInfo{}, fmt.Errorf("commitlog: %s (nothing written): %w", op, context.Cause(ctx))
	}
	// The operation may only run until the deadline: after it, waiters may
	// reclaim the record. The context stops it on this process's real
	// clock; a request already sent may still land later (see the package
	// documentation).
	opCtx, cancel := context.WithTimeout(ctx, left)
	info, err := c.write(opCtx, ctx, op, pre, deadline)
	cancel()
	if err == nil && clk.Now().After(deadline) {
		// The write landed, but only after the deadline on our clock (the
		// context above runs on the real clock): a waiter may have
		// reclaimed the record and written meanwhile, before or after us.
		// Which write the object holds is unknown; leave the record.
		c.log.Warn(ctx, "store write returned after the timeout", op.logAttrs(
			slog.Int64("generation", rec.Generation), slog.Duration("timeout", c.o.timeout), slog.Duration("took", clk.Now().Sub(sentAt)))...)
		return ObjectInfo{}, &unknownOutcome{
			msg:   fmt.Sprintf("commitlog: %s: outcome unknown: the store write took %v, over the timeout (%v)", op, clk.Now().Sub(sentAt), c.o.timeout),
			cause: errWriteLate,
		}
	}
	switch {
	case err == nil:
		c.release(ctx, op, rec)
		return info, nil
	case errors.Is(err, ErrUnknownOutcome):
		// The write may have landed, or may still land: leave the record,
		// so that others wait out the timeout × skew rate, then HEAD and see.
		return ObjectInfo{}, err
	}
	// A definite answer: nothing was written (a missing copy source, a
	// refusal), or the write landed and was replaced since. Others need not
	// wait.
	c.release(ctx, op, rec)
	return ObjectInfo{}, err
}

// unknownOutcome is the error of a store write whose outcome could not be
// settled. It wraps ErrUnknownOutcome without repeating its text.
type unknownOutcome struct {
	msg   string
	cause error
}

func (e *unknownOutcome) Error() string   { return e.msg + ": " + e.cause.Error() }
func (e *unknownOutcome) Unwrap() []error { return []error{ErrUnknownOutcome, e.cause} }

// errWriteLate is the cause of the error of a store write that returned
// after the holder's deadline.
var errWriteLate = errors.New("a waiter may have written since")

// errLandedReplaced marks the error of a write that landed although its
// answer was lost, that another writer has replaced since, and whose own
// result is unknown (the HEAD of a copy's source failed).
var errLandedReplaced = errors.New("the write landed (its answer was lost), and another writer has replaced the object since")

// write performs op's store write, once, tagged with a fresh write id where
// the store keeps them (WriteIDStore). It is never sent again: a write that
// failed may have landed, or may still land, and once it has, writers
// holding the object's new ETag go ahead; a second copy of it could then
// overwrite their writes (and a content that went A→B→A looks unwritten to
// a HEAD). The store's client must not send it again either: S3Store's
// retries only requests that surely were not applied (see
// withSingleAttempt).
//
// A failure is settled with a HEAD (on settleCtx; pre is the object the
// write replaces, deadline the holder's):
//   - the object carries our write id: it landed; a success;
//   - the store proved the write was not applied (a refusal), or the copy
//     source is missing: that error, nothing written;
//   - the object is no longer the one we replace (another write id, or
//     another ETag where the store keeps no ids), seen before the deadline:
//     ours landed and was replaced since by a writer that saw it (nobody
//     else writes the object while we hold the record of its precondition,
//     and nobody can have reclaimed it before the deadline); a success;
//   - otherwise — unchanged (not landed yet, or it may still land), absent
//     after a create (landed and deleted, or not landed), the HEAD failed
//     or answered after the deadline: an error wrapping ErrUnknownOutcome.
func (c *Committer) write(ctx, settleCtx context.Context, op *operation, pre ObjectInfo, deadline time.Time) (ObjectInfo, error) {
	id := newWriteID()
	info, err := op.do(withSingleAttempt(ctx), id)
	if err == nil {
		return info, nil
	}
	if errors.Is(err, ErrNotExist) || isNotApplied(err) {
		return ObjectInfo{}, fmt.Errorf("commitlog: %s (nothing written): %w", op, err)
	}
	unknown := func(why string, herr error) error {
		if herr != nil {
			why += ": " + herr.Error()
		}
		return &unknownOutcome{msg: fmt.Sprintf("commitlog: %s: outcome unknown (%s): not resent; its record stays until it times out", op, why), cause: err}
	}
	hctx, cancel := context.WithTimeout(settleCtx, c.o.timeout)
	cur, herr := c.store.Head(hctx, op.path)
	cancel()
	answered := c.o.clock.Now()
	if herr == nil && cur.WriteID == id {
		return cur, nil // ours landed, its answer lost
	}
	if herr != nil && !errors.Is(herr, ErrNotExist) {
		return ObjectInfo{}, unknown("the settling HEAD failed", herr)
	}
	absent := herr != nil
	var changed bool
	switch {
	case absent:
		// A create that may have landed and been deleted; a replace whose
		// object was deleted: either way, nothing proves it.
	case op.etag == notExists:
		changed = true
	case pre.WriteID != "" || cur.WriteID != "":
		// Write ids tell writes apart where ETags cannot (A→B→A). An id
		// appearing or vanishing is a write too: the stores of this package
		// give every write an id; objects written by other means have none.
		changed = cur.WriteID != pre.WriteID
	default:
		changed = cur.ETag != pre.ETag
	}
	if !changed {
		return ObjectInfo{}, unknown("object unchanged", nil)
	}
	if answered.After(deadline) {
		return ObjectInfo{}, unknown("object changed, seen past the timeout", nil)
	}
	// Changed: ours landed, its answer lost, and was replaced since.
	want, eerr := op.expect(settleCtx)
	if eerr != nil {
		return ObjectInfo{}, fmt.Errorf("commitlog: %s: %w (ETag now %s; its own ETag unknown: %w): %w", op, errLandedReplaced, cur.ETag, eerr, err)
	}
	if want.ETag == cur.ETag && (cur.WriteID == "" || pre.WriteID == "") {
		return cur, nil
	}
	c.log.Info(settleCtx, "write landed although its answer was lost, and was replaced since",
		op.logAttrs(slog.String("landed", want.ETag), slog.String("now", cur.ETag))...)
	want.WriteID = id
	return want, nil
}

// singleAttemptKey marks a context whose store writes must be single
// attempts: the S3 store then retries only requests that surely were not
// applied, even when it is reached through a wrapper Store.
type singleAttemptKey struct{}

func withSingleAttempt(ctx context.Context) context.Context {
	return context.WithValue(ctx, singleAttemptKey{}, true)
}

func isSingleAttempt(ctx context.Context) bool {
	v, _ := ctx.Value(singleAttemptKey{}).(bool)
	return v
}

// release marks rec done, on condition that it is still the generation and
// incarnation we wrote, so that the next writer of the path takes it at
// once. A failure is logged, not returned: the operation itself is
// finished, and the record only makes others wait out its timeout.
func (c *Committer) release(ctx context.Context, op *operation, rec commitRecord) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.o.timeout)
	defer cancel()
	inc := rec.Incarnation
	rec.Done = true
	rec.TTL = time.Now().Add(c.o.ttl).Unix()
	_, err := c.table.Save(ctx, rec, dynamo.WithSaveBehavior(dynamo.SavePut), dynamo.If(sameIncarnation(inc)))
	if err != nil {
		c.log.Warn(ctx, "could not mark the record done; others wait out its timeout", op.logAttrs(
			slog.Int64("generation", rec.Generation), telemetry.Err("err", err))...)
	}
}
