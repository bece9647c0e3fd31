package commitlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/ddbkit/dynamo"
)

// ErrTimeout is returned by a Committer that got its record but found its
// timeout (WithTimeout) already passed before it could start the store
// operation: another writer may have reclaimed the record by then, so it
// did not write. Nothing was written; try again (a longer timeout helps if
// this is frequent).
var ErrTimeout = errors.New("commitlog: timeout passed before the operation could start")

// Committer makes PutIfNotExists, PutIfMatch and CopyIfNotExists on a Store
// conditional by synchronizing writers through a DynamoDB table, with the
// DynamoCommit protocol described in the package documentation. It is safe
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
	log   *slog.Logger
}

// NewCommitter returns a Committer for the objects of s, synchronized
// through the DynamoDB table called table (hash key "path" (S), range key
// "etag" (S), TTL on "ttl"; Committer.CreateTable creates it). It sends no
// request. Bad options and a nil mapper or store are errors.
func NewCommitter(m *dynamo.Mapper, table string, s Store, opts ...Option) (*Committer, error) {
	if m == nil || s == nil {
		return nil, fmt.Errorf("commitlog: NewCommitter needs a mapper and a store (got mapper %v, store %v)", m != nil, s != nil)
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	t, err := dynamo.NewTable[commitRecord](m, table)
	if err != nil {
		return nil, err
	}
	return &Committer{table: t, store: s, o: o, log: o.logger.With("table", table, "owner", o.owner)}, nil
}

// CreateTable creates the Committer's table (on-demand, hash key "path",
// range key "etag", TTL on "ttl") and waits until it is active. ctx bounds
// the whole call. An existing table is an error wrapping
// dynamo.ErrTableExists.
//
// IAM: dynamodb:CreateTable, dynamodb:DescribeTable,
// dynamodb:UpdateTimeToLive.
func (c *Committer) CreateTable(ctx context.Context) error {
	return c.table.CreateTable(ctx)
}

// Store returns the store the Committer writes to.
func (c *Committer) Store() Store { return c.store }

// PutIfNotExists writes data to path unless an object exists there. It
// returns an error wrapping ErrExists, without writing, when one does — found
// by the HEAD it sends first, by the HEAD it repeats while another writer
// holds the record, or by the HEAD it sends after reclaiming a record. Of
// several concurrent calls on the same absent path (through Committers on
// the same table), exactly one writes.
//
// ctx bounds the whole call, waiting included; the store write itself is
// also bounded by the timeout (WithTimeout). A call whose ctx ends while
// waiting has written nothing; a call whose ctx ends during the store write
// may or may not have written. A store write that fails is sent again only
// while a HEAD shows it has not landed. A write that landed although its
// answer was lost is a success, even when another writer has replaced the
// object since (the ObjectInfo returned is then what our write made).
//
// IAM: dynamodb:PutItem; s3:GetObject (HEAD), s3:PutObject (or the
// equivalent of another store).
func (c *Committer) PutIfNotExists(ctx context.Context, path string, data []byte) (ObjectInfo, error) {
	if err := checkKey("put if not exists", "path", path); err != nil {
		return ObjectInfo{}, err
	}
	return c.commit(ctx, operation{
		name: "put if not exists", path: path, etag: notExists,
		do: func(ctx context.Context) (ObjectInfo, error) { return c.store.Put(ctx, path, data) },
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
// IAM: dynamodb:PutItem; s3:GetObject (HEAD), s3:PutObject.
func (c *Committer) PutIfMatch(ctx context.Context, path string, data []byte, etag string) (ObjectInfo, error) {
	if err := checkKey("put if match", "path", path); err != nil {
		return ObjectInfo{}, err
	}
	if etag == "" || etag == notExists {
		return ObjectInfo{}, fmt.Errorf("commitlog: put if match %q: ETag %q: pass the ETag from Head, Get or Put (use PutIfNotExists to create)", path, etag)
	}
	return c.commit(ctx, operation{
		name: "put if match", path: path, etag: etag,
		do: func(ctx context.Context) (ObjectInfo, error) { return c.store.Put(ctx, path, data) },
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
// IAM: dynamodb:PutItem; s3:GetObject (HEAD and the copy's read),
// s3:PutObject.
func (c *Committer) CopyIfNotExists(ctx context.Context, src, dst string) (ObjectInfo, error) {
	if err := checkKey("copy if not exists", "src", src); err != nil {
		return ObjectInfo{}, err
	}
	if err := checkKey("copy if not exists", "dst", dst); err != nil {
		return ObjectInfo{}, err
	}
	if src == dst {
		return ObjectInfo{}, fmt.Errorf("commitlog: copy if not exists %q to itself: name another destination", src)
	}
	return c.commit(ctx, operation{
		name: "copy if not exists", path: dst, etag: notExists, src: src,
		do: func(ctx context.Context) (ObjectInfo, error) { return c.store.Copy(ctx, src, dst) },
		expect: func(ctx context.Context) (ObjectInfo, error) {
			info, err := c.store.Head(ctx, src)
			info.Path = dst
			return info, err
		},
	})
}

// operation is one conditional store operation.
type operation struct {
	name string // for messages
	path string // the object written
	etag string // the precondition: the ETag held, or notExists
	src  string // the copy source, for messages
	do   func(ctx context.Context) (ObjectInfo, error)
	// expect returns what the object is once do has written it (its ETag
	// as S3 makes them for single-part uploads).
	expect func(ctx context.Context) (ObjectInfo, error)
}

func (op *operation) String() string {
	if op.src != "" {
		return fmt.Sprintf("%s %q to %q", op.name, op.src, op.path)
	}
	return fmt.Sprintf("%s %q", op.name, op.path)
}

// check sends HEAD for op's path and returns an error wrapping ErrExists or
// ErrPreconditionFailed when op's precondition does not hold, or the HEAD's
// own error.
func (c *Committer) check(ctx context.Context, op *operation) error {
	info, err := c.store.Head(ctx, op.path)
	switch {
	case op.etag == notExists && err == nil:
		return fmt.Errorf("%w: %s: ETag %s (read it and decide again)", ErrExists, op, info.ETag)
	case op.etag == notExists && errors.Is(err, ErrNotExist):
		return nil
	case err == nil && info.ETag != op.etag:
		return fmt.Errorf("%w: %s: held ETag %s, current %s (read the object again and retry with its ETag)", ErrPreconditionFailed, op, op.etag, info.ETag)
	case err == nil:
		return nil
	case errors.Is(err, ErrNotExist):
		return fmt.Errorf("%w: %s: held ETag %s, but the object does not exist (%w)", ErrPreconditionFailed, op, op.etag, err)
	}
	return fmt.Errorf("commitlog: %s: HEAD: %w", op, err)
}

// commit runs the protocol for op: HEAD and fail fast; create the record,
// or wait for its holder and reclaim it; perform op within the timeout; mark
// the record done.
func (c *Committer) commit(ctx context.Context, op operation) (ObjectInfo, error) {
	clk := c.o.clock
	if err := c.check(ctx, &op); err != nil {
		return ObjectInfo{}, err
	}
	var held int64       // the generation to reclaim; 0: create the record
	seenGen := int64(-1) // the generation of the holder's record being waited on
	var seenAt time.Time // when seenGen was first seen, on clk, after the response
	checked := true      // the last HEAD is no older than the last write attempt
	for {
		rec := commitRecord{
			Path:       op.path,
			ETag:       op.etag,
			Generation: held,
			TimeoutMS:  c.o.timeout.Milliseconds(),
			TTL:        time.Now().Add(c.o.ttl).Unix(), // wall time: DynamoDB compares it with its own
			Owner:      c.o.owner,
		}
		sentAt := clk.Now()
		saved, err := c.table.Save(ctx, rec, dynamo.WithSaveBehavior(dynamo.SavePut))
		if err == nil {
			return c.hold(ctx, &op, saved, sentAt, held != 0 || !checked)
		}
		if !errors.Is(err, dynamo.ErrVersionConflict) {
			return ObjectInfo{}, fmt.Errorf("commitlog: %s: writing the record: %w", &op, err)
		}
		cur, cerr := c.table.Current(err)
		switch {
		case errors.Is(cerr, dynamo.ErrNotFound):
			held = 0 // gone (TTL) since we saw it: create it again
			continue
		case cerr != nil:
			return ObjectInfo{}, fmt.Errorf("commitlog: %s: decoding the record: %w", &op, cerr)
		case cur.Done:
			// Its holder finished: take it at once, and HEAD again once
			// held, since the finished operation may have changed the object.
			held = cur.Generation
			continue
		}
		now := clk.Now()
		if cur.Generation != seenGen {
			seenGen, seenAt = cur.Generation, now
		}
		patience := c.patience(cur)
		c.log.Debug("waiting for a record", "path", op.path, "etag", op.etag, "holder", cur.Owner,
			"generation", cur.Generation, "patience", patience-now.Sub(seenAt))
		for {
			left := patience - clk.Now().Sub(seenAt)
			if left <= 0 {
				break
			}
			t := clk.NewTimer(min(c.o.poll, left))
			select {
			case <-ctx.Done():
				t.Stop()
				return ObjectInfo{}, fmt.Errorf("commitlog: %s: waiting for the record held by %s (generation %d): %w",
					&op, cur.Owner, cur.Generation, context.Cause(ctx))
			case <-t.C():
			}
			if patience-clk.Now().Sub(seenAt) <= 0 {
				break // reclaim now; the HEAD after reclaiming checks the object
			}
			if err := c.check(ctx, &op); err != nil {
				return ObjectInfo{}, err
			}
		}
		c.log.Info("reclaiming a record", "path", op.path, "etag", op.etag, "holder", cur.Owner,
			"generation", cur.Generation, "waited", clk.Now().Sub(seenAt))
		held = cur.Generation
		checked = false
	}
}

// patience is how long a waiter watches a record that is not done before
// reclaiming it: the holder's timeout × the skew rate.
func (c *Committer) patience(r commitRecord) time.Duration {
	d := time.Duration(r.TimeoutMS) * time.Millisecond
	if d <= 0 {
		d = c.o.timeout
	}
	return time.Duration(float64(d) * c.o.skew)
}

// hold performs op while holding rec, the record written at sentAt (on the
// clock), and marks it done. recheck asks for a HEAD first: after a reclaim,
// another holder may have changed the object.
func (c *Committer) hold(ctx context.Context, op *operation, rec commitRecord, sentAt time.Time, recheck bool) (ObjectInfo, error) {
	clk := c.o.clock
	deadline := sentAt.Add(c.o.timeout)
	if recheck {
		if err := c.check(ctx, op); err != nil {
			c.release(ctx, op, rec) // we wrote nothing
			return ObjectInfo{}, err
		}
	}
	left := deadline.Sub(clk.Now())
	if left <= 0 {
		c.log.Warn("timeout passed before the operation could start", "path", op.path, "etag", op.etag,
			"generation", rec.Generation, "timeout", c.o.timeout)
		c.release(ctx, op, rec)
		return ObjectInfo{}, fmt.Errorf("%w: %s: %v passed since the record was written (timeout %v)", ErrTimeout, op, clk.Now().Sub(sentAt), c.o.timeout)
	}
	// The operation may only run until the deadline: after it, waiters may
	// reclaim the record. The context stops it on this process's real
	// clock; a request already sent may still land later (see the package
	// documentation).
	opCtx, cancel := context.WithTimeout(ctx, left)
	info, err := c.write(opCtx, op)
	cancel()
	if err != nil {
		if errors.Is(err, ErrNotExist) || errors.Is(err, errLandedReplaced) {
			// A definite answer: nothing was written (a missing copy
			// source), or the write landed and was replaced since. Others
			// need not wait.
			c.release(ctx, op, rec)
			return ObjectInfo{}, fmt.Errorf("commitlog: %s: %w", op, err)
		}
		// The write may or may not have landed: leave the record, so that
		// others wait out the timeout × skew rate, then HEAD and see.
		return ObjectInfo{}, fmt.Errorf("commitlog: %s (the record stays until it times out): %w", op, err)
	}
	c.release(ctx, op, rec)
	return info, nil
}

// Re-sending a store write that failed.
const (
	writeAttempts   = 5
	writeBackoffMin = 10 * time.Millisecond
	writeBackoffMax = time.Second
)

// errLandedReplaced marks the error of a write that landed although its
// answer was lost, that another writer has replaced since, and whose own
// result is unknown (the HEAD of a copy's source failed).
var errLandedReplaced = errors.New("the write landed (its answer was lost), and another writer has replaced the object since")

// write performs op's store write, and sends it again after a failure only
// while a HEAD shows the object as the precondition says: not written yet.
// The store's client must not re-send it on its own (withSingleAttempt):
// once the write has landed, writers holding the object's new ETag go
// ahead, and a duplicate of ours arriving later would overwrite their
// write. A HEAD showing the object changed means ours landed: nobody else
// writes the object while we hold the record of its precondition. Up to
// writeAttempts attempts, while ctx is not done.
func (c *Committer) write(ctx context.Context, op *operation) (ObjectInfo, error) {
	backoff := writeBackoffMin
	for attempt := 1; ; attempt++ {
		info, err := op.do(withSingleAttempt(ctx))
		if err == nil || errors.Is(err, ErrNotExist) || attempt == writeAttempts || ctx.Err() != nil {
			return info, err
		}
		cur, herr := c.store.Head(ctx, op.path)
		switch {
		case op.etag == notExists && errors.Is(herr, ErrNotExist),
			op.etag != notExists && herr == nil && cur.ETag == op.etag:
			// Not written: send it again after a pause.
		case herr == nil:
			// Changed: ours landed, its answer lost. Nobody else writes the
			// object while we hold the record of its precondition.
			want, eerr := op.expect(ctx)
			if eerr == nil && want.ETag == cur.ETag {
				return cur, nil
			}
			if eerr == nil {
				// Another writer, holding our write's ETag, has replaced it
				// since: ours happened first, so the call succeeded.
				c.log.LogAttrs(ctx, slog.LevelInfo, "write landed although its answer was lost, and was replaced since",
					slog.String("op", op.String()), slog.String("etag", want.ETag), slog.String("now", cur.ETag))
				return want, nil
			}
			return ObjectInfo{}, fmt.Errorf("%w (ETag now %s; its own ETag unknown: %w): %w", errLandedReplaced, cur.ETag, eerr, err)
		default:
			// The HEAD failed, or the object is gone (an unconditional
			// delete): the outcome stays unknown.
			return ObjectInfo{}, err
		}
		t := time.NewTimer(rand.N(backoff) + 1)
		select {
		case <-ctx.Done():
			t.Stop()
			return ObjectInfo{}, err
		case <-t.C:
		}
		backoff = min(2*backoff, writeBackoffMax)
	}
}

// singleAttemptKey marks a context whose store writes the caller re-sends
// itself: the S3 store turns the SDK's retries off for them.
type singleAttemptKey struct{}

func withSingleAttempt(ctx context.Context) context.Context {
	return context.WithValue(ctx, singleAttemptKey{}, true)
}

func isSingleAttempt(ctx context.Context) bool {
	v, _ := ctx.Value(singleAttemptKey{}).(bool)
	return v
}

// release marks rec done, on condition that it is still the generation we
// wrote, so that the next writer of the path takes it at once. A failure
// is logged, not returned: the operation itself is finished, and the record
// only makes others wait out its timeout.
func (c *Committer) release(ctx context.Context, op *operation, rec commitRecord) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.o.timeout)
	defer cancel()
	rec.Done = true
	rec.TTL = time.Now().Add(c.o.ttl).Unix()
	_, err := c.table.Save(ctx, rec, dynamo.WithSaveBehavior(dynamo.SavePut))
	if err != nil {
		c.log.Warn("could not mark the record done; others wait out its timeout", "path", op.path, "etag", op.etag,
			"generation", rec.Generation, "err", err)
	}
}
