package backfill

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/internal/codec"
	"github.com/ddbkit/dynamo/lease"
)

// Migration applies a function to every item of a table. Make one with
// New and call Run in every process that shares it.
type Migration[T any] struct {
	id     string
	fn     func(T) (T, error)
	o      options
	meter  *meter
	table  *dynamo.Table[T]
	cps    *dynamo.Table[checkpoint]
	group  *lease.Group
	notYet expression.ConditionBuilder
	total  int64 // the table's item count when Run started (approximate)
	// version is the index path of T's version field (nil: none): a
	// scanned item holding a version can be written back under it without
	// reading it again.
	version   []int
	versioned bool

	changed, unchanged, skipped, reruns, failed atomic.Int64
	segsDone                                    atomic.Int64

	mu       sync.Mutex
	failures []Failure[T]
	fatal    error
	started  time.Time
	fleet    fleetView
}

// fleetView is what the completion poll last read of all checkpoints.
type fleetView struct {
	done, scanned int64
	first         int64 // scanned at the first poll
	at, firstAt   time.Time
}

// checkpoint is a segment's progress, in the checkpoint table.
type checkpoint struct {
	Key     string `dynamo:"key,hash"`
	Version int64  `dynamo:"version,version"`
	Cursor  string `dynamo:"cursor,omitempty"`
	Done    bool   `dynamo:"done"`
	Scanned int64  `dynamo:"scanned"`
	Token   int64  `dynamo:"token"` // fencing token of the lease that wrote it
}

// Failure is an item whose change failed.
type Failure[T any] struct {
	Item T     // as scanned: its key fields name it
	Err  error // the function's error, or the write's
}

// Progress is what a Migration has done in this process so far.
type Progress[T any] struct {
	Scanned   int64        // items the scans read, before the filter of items already changed
	Changed   int64        // items written with the change (with DryRun: that would be)
	Unchanged int64        // items whose function returned dynamo.ErrNoChange: nothing written
	Skipped   int64        // items already holding the mark (or deleted since they were scanned)
	Reruns    int64        // calls of the function again, on the stored item, after a version conflict
	Failed    int64        // items recorded as failed (SkipFailures)
	Failures  []Failure[T] // the first DefaultMaxFailures failures
	Throttled int64        // requests DynamoDB throttled that Run sent again

	ReadUnits, WriteUnits float64 // capacity consumed

	Segments     int   // in the migration
	SegmentsDone int64 // finished, by the whole fleet as of the last poll (this process's, with DryRun)

	Elapsed time.Duration
	// Remaining estimates the time left, from the fleet's rate of items
	// scanned since Run started and the table's item count (which
	// DynamoDB updates about every six hours); -1 when unknown.
	Remaining time.Duration
}

// New returns the migration id of the table (T's items, read and written
// through c) applying fn to every item. fn is called as Table.Update calls
// its function: on the stored item, again after a version conflict, and
// returning dynamo.ErrNoChange when the item needs nothing. The id names the
// migration everywhere: its mark on changed items, its lease group, its
// checkpoints; a process that runs the same id again resumes it. Fleet is
// required unless DryRun is given.
func New[T any](c dynamo.Client, table, id string, fn func(T) (T, error), opts ...Option) (*Migration[T], error) {
	o := options{segments: DefaultSegments, pageSize: DefaultPageSize, mark: DefaultMark, poll: DefaultPollInterval, maxFailures: DefaultMaxFailures}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.clock == nil {
		o.clock = clock.Real()
	}
	switch {
	case c == nil:
		return nil, errors.New("backfill: New: nil client: pass the DynamoDB client of the table")
	case fn == nil:
		return nil, errors.New("backfill: New: nil function: pass the change to apply to every item")
	case id == "" || strings.ContainsRune(id, 0):
		return nil, fmt.Errorf("backfill: New: id %q: name the migration with a non-empty id without NUL bytes", id)
	case o.segments < 1 || o.segments > 1_000_000:
		return nil, fmt.Errorf("backfill: New: %d segments: give 1 to 1000000", o.segments)
	case o.pageSize < 1:
		return nil, fmt.Errorf("backfill: New: page size %d: give at least 1", o.pageSize)
	case o.readRate < 0 || o.writeRate < 0:
		return nil, fmt.Errorf("backfill: New: negative capacity (%g read, %g write): give units per second, 0 for no limit", o.readRate, o.writeRate)
	case o.mark == "":
		return nil, errors.New("backfill: New: empty Mark attribute: name the attribute that records the migration")
	case o.poll <= 0:
		return nil, fmt.Errorf("backfill: New: poll interval %v: give a positive duration", o.poll)
	case !o.dryRun && (o.leases == nil || o.checkpoints == ""):
		return nil, errors.New("backfill: New: no Fleet: pass Fleet(leaseClient, checkpointTable) so the migration can checkpoint and be shared (or DryRun)")
	}
	m := &Migration[T]{id: id, fn: fn, o: o}
	m.meter = &meter{Client: c, markAttr: o.mark, id: id, clk: o.clock, maxBackoff: 5 * time.Second,
		reads: newBudget(o.clock, o.readRate), writes: newBudget(o.clock, o.writeRate)}
	var err error
	if m.table, err = dynamo.NewTable[T](dynamo.NewMapper(m.meter, o.mapperOpts...), table); err != nil {
		return nil, fmt.Errorf("backfill: New: %w", err)
	}
	m.version = versionField(reflect.TypeFor[T]())
	m.versioned = m.version != nil
	name := expression.Name(o.mark)
	m.notYet = expression.Or(expression.AttributeNotExists(name), name.NotEqual(expression.Value(id)))
	if o.clean != "" {
		m.meter.id, m.meter.unmark = o.clean, true
		m.notYet = name.Equal(expression.Value(o.clean))
	}
	if o.dryRun {
		return m, nil
	}
	if m.cps, err = dynamo.NewTable[checkpoint](dynamo.NewMapper(c), o.checkpoints); err != nil {
		return nil, fmt.Errorf("backfill: New: %w", err)
	}
	keys := make([]string, o.segments)
	for i := range keys {
		keys[i] = m.segmentKey(i)
	}
	if m.group, err = o.leases.Group("backfill:"+id, keys); err != nil {
		return nil, fmt.Errorf("backfill: New: %w", err)
	}
	return m, nil
}

// Clean returns the migration that removes the mark of the migration id
// from every item holding it (and from no other), once the migration is
// done and nothing needs to resume it. It is a migration of its own, named
// "clean:" + id (its lease group and checkpoints), which writes each marked
// item back unchanged but for the mark, through Table.Update as New does
// (the version moves on). Options are New's; Fleet is required unless
// DryRun, and Mark must be the migration's.
func Clean[T any](c dynamo.Client, table, id string, opts ...Option) (*Migration[T], error) {
	opts = append(opts[:len(opts):len(opts)], func(o *options) { o.clean = id })
	return New(c, table, "clean:"+id, func(item T) (T, error) { return item, nil }, opts...)
}

// segmentKey is the lease group's key of segment i.
func (m *Migration[T]) segmentKey(i int) string { return "backfill:" + m.id + "/" + strconv.Itoa(i) }

// checkpointKey is the checkpoint record's key of segment i.
func (m *Migration[T]) checkpointKey(i int) string {
	return "\x00backfill:" + m.id + "\x00" + strconv.Itoa(i)
}

// Run works on the migration until it is done, by this process and the
// others sharing it, and returns nil then. It joins the lease group of the
// migration and, for each segment it is given, scans the segment from its
// checkpoint, applies the function to each item not yet holding the mark
// (version-checked: a conflict re-runs it on the stored item through
// Table.Update, so live writes win), and writes the segment's
// checkpoint after each page, guarded by the segment's lease. A segment
// lost to another process (a crash, a handover) is continued there from
// its last checkpoint.
//
// ctx bounds the whole run: when it is done first, Run leaves the group and
// returns ctx's error; run again to resume. Without SkipFailures, the first
// failed item stops Run with its error (the item's key in it); the items
// changed until then stay changed, and a later Run skips them. Other errors
// of the work (no table, access denied, a request that failed after the
// SDK's retries) stop Run too; errors of the lease group are lease.Group.Run's.
//
// IAM: dynamodb:Scan, GetItem, UpdateItem and DescribeTable on the table;
// on the lease and checkpoint tables what lease.Group.Run and lease.Save
// need.
func (m *Migration[T]) Run(ctx context.Context) error {
	m.mu.Lock()
	m.started = m.o.clock.Now()
	m.mu.Unlock()
	if d, err := m.meter.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(m.table.Name())}); err == nil && d.Table != nil && d.Table.ItemCount != nil {
		m.total = *d.Table.ItemCount
	}
	if m.o.dryRun {
		return m.runLocal(ctx)
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	finished := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if m.awaitDone(rctx) {
			close(finished)
			cancel()
		}
	}()
	err := m.group.Run(rctx, func(ctx context.Context, l *lease.Lease) error {
		return m.segment(ctx, l, cancel)
	})
	cancel()
	wg.Wait()
	if f := m.fatalErr(); f != nil {
		return f
	}
	select {
	case <-finished:
		return err
	default:
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("backfill: migration %q stopped before its end (run again to resume): %w", m.id, context.Cause(ctx))
}

// runLocal runs every segment in this process, from the start, with no
// checkpoint (DryRun).
func (m *Migration[T]) runLocal(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for seg := range m.o.segments {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cp := checkpoint{Key: m.checkpointKey(seg)}
			if err := m.scanSegment(ctx, seg, cp, nil); err != nil {
				m.setFatal(err)
				cancel()
				return
			}
			m.segsDone.Add(1)
		}()
	}
	wg.Wait()
	if f := m.fatalErr(); f != nil {
		return f
	}
	return ctx.Err()
}

// awaitDone reads every checkpoint each poll interval and reports true once
// all segments are done, false when ctx ends first.
func (m *Migration[T]) awaitDone(ctx context.Context) bool {
	for {
		if done, err := m.look(ctx); err == nil && done {
			return true
		}
		t := m.o.clock.NewTimer(m.o.poll)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
}

// look reads all checkpoints and reports whether every segment is done.
func (m *Migration[T]) look(ctx context.Context) (bool, error) {
	var v fleetView
	for seg := range m.o.segments {
		cp, err := m.cps.Load(ctx, checkpoint{Key: m.checkpointKey(seg)}, dynamo.ConsistentRead())
		switch {
		case errors.Is(err, dynamo.ErrNotFound):
			continue
		case err != nil:
			return false, err
		}
		v.scanned += cp.Scanned
		if cp.Done {
			v.done++
		}
	}
	v.at = m.o.clock.Now()
	m.mu.Lock()
	if m.fleet.firstAt.IsZero() {
		v.first, v.firstAt = v.scanned, v.at
	} else {
		v.first, v.firstAt = m.fleet.first, m.fleet.firstAt
	}
	m.fleet = v
	m.mu.Unlock()
	return v.done == int64(m.o.segments), nil
}

// segment works on the segment of lease l until it is done or ctx ends;
// stop ends the whole run (a failure that stops it).
func (m *Migration[T]) segment(ctx context.Context, l *lease.Lease, stop context.CancelFunc) error {
	seg, err := strconv.Atoi(l.Key()[strings.LastIndexByte(l.Key(), '/')+1:])
	if err != nil {
		return fmt.Errorf("backfill: lease key %q names no segment", l.Key())
	}
	cp, err := m.cps.Load(ctx, checkpoint{Key: m.checkpointKey(seg)}, dynamo.ConsistentRead())
	switch {
	case errors.Is(err, dynamo.ErrNotFound):
		cp = checkpoint{Key: m.checkpointKey(seg)}
	case err != nil:
		return m.segmentError(ctx, l, seg, err, stop)
	}
	if cp.Done {
		return nil
	}
	err = m.scanSegment(ctx, seg, cp, func(cp checkpoint) (checkpoint, error) {
		cp.Token = l.Token()
		return lease.Save(ctx, l, m.cps, cp)
	})
	if err != nil {
		return m.segmentError(ctx, l, seg, err, stop)
	}
	m.segsDone.Add(1)
	return nil
}

// segmentError decides what an error of segment seg's work means. When the
// segment's lease has ended (handed over, lost, the run leaving) the key is
// simply given back: its next holder continues from the checkpoint. Any
// other error — a failed item without SkipFailures, a scan or checkpoint
// that failed after the SDK's retries, a missing table, access denied —
// stops the whole run with it (run again to resume).
func (m *Migration[T]) segmentError(ctx context.Context, l *lease.Lease, seg int, err error, stop context.CancelFunc) error {
	if ctx.Err() != nil || l.Err() != nil {
		return err
	}
	var f *failed
	if errors.As(err, &f) {
		err = f.err
	} else {
		err = fmt.Errorf("backfill: migration %q, segment %d: %w", m.id, seg, err)
	}
	m.setFatal(err)
	stop()
	return err
}

// failed is an item failure that stops the run.
type failed struct{ err error }

func (f *failed) Error() string { return f.err.Error() }

// scanSegment scans segment seg from cp, changing its items, and saves the
// checkpoint after every page with save (nil: none).
func (m *Migration[T]) scanSegment(ctx context.Context, seg int, cp checkpoint, save func(checkpoint) (checkpoint, error)) error {
	for !cp.Done {
		opts := []dynamo.QueryOption{dynamo.Segment(seg, m.o.segments), dynamo.StartAfter(dynamo.Cursor(cp.Cursor)),
			dynamo.PageSize(m.o.pageSize), dynamo.Filter(m.notYet)}
		if m.versioned && !m.o.dryRun {
			opts = append(opts, dynamo.ConsistentRead())
		}
		items, next, err := m.table.ScanPage(ctx, opts...)
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := m.item(ctx, it); err != nil {
				return err
			}
		}
		cp.Cursor, cp.Done = string(next), next == ""
		cp.Scanned += int64(len(items))
		if save != nil {
			if cp, err = save(cp); err != nil {
				return err
			}
		}
	}
	return nil
}

// unknownRetries bounds how often an item's write whose outcome is unknown
// is tried again (the mark makes that safe).
const unknownRetries = 5

// item applies the function to one scanned item. It returns a *failed for
// a failure that stops the run, or ctx's error.
func (m *Migration[T]) item(ctx context.Context, it T) error {
	if m.o.dryRun {
		_, err := m.fn(it)
		switch {
		case err == nil:
			m.changed.Add(1)
		case errors.Is(err, dynamo.ErrNoChange):
			m.unchanged.Add(1)
		default:
			return m.fail(it, err)
		}
		return nil
	}
	maybe := false // an earlier attempt may have written the change
	calls := 0     // of the function for this item
	if m.versioned && versionOf(it, m.version) != 0 {
		// The scan was strongly consistent: write the change under the
		// version scanned, and read again (Update) only after a conflict.
		// (An item without a version goes through Update, whose MustExist
		// keeps it deleted if it was deleted since: a Save of version zero
		// would create it again.)
		calls++
		out, err := m.fn(it)
		switch {
		case errors.Is(err, dynamo.ErrNoChange):
			m.unchanged.Add(1)
			return nil
		case err != nil:
			return m.fail(it, err)
		}
		_, err = m.table.Save(ctx, out, dynamo.If(m.notYet))
		switch {
		case err == nil:
			m.changed.Add(1)
			return nil
		case errors.Is(err, dynamo.ErrUnknownOutcome):
			maybe = true
		case errors.Is(err, dynamo.ErrConditionFailed):
			m.skipped.Add(1) // marked since scanned
			return nil
		case errors.Is(err, dynamo.ErrVersionConflict):
			// A live write since the scan (or a deletion): Update below.
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			return m.fail(it, err)
		}
	}
	for try := 0; ; try++ {
		var last error
		_, err := m.table.Update(ctx, it, func(cur T) (T, error) {
			if calls++; calls > 1 {
				m.reruns.Add(1)
			}
			out, err := m.fn(cur)
			last = err
			return out, err
		}, dynamo.MustExist(), dynamo.If(m.notYet))
		switch {
		case err == nil && errors.Is(last, dynamo.ErrNoChange):
			m.unchanged.Add(1)
		case err == nil:
			m.changed.Add(1)
		case errors.Is(err, dynamo.ErrConditionFailed) && maybe:
			m.changed.Add(1) // our earlier write landed
		case errors.Is(err, dynamo.ErrConditionFailed), errors.Is(err, dynamo.ErrNotFound):
			m.skipped.Add(1) // marked since scanned, or deleted
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, dynamo.ErrUnknownOutcome) && try < unknownRetries:
			maybe = true
			continue
		default:
			return m.fail(it, err)
		}
		return nil
	}
}

// fail records a failed item and returns nil (SkipFailures) or a *failed.
func (m *Migration[T]) fail(it T, err error) error {
	err = fmt.Errorf("backfill: migration %q: item %+v: %w", m.id, it, err)
	if !m.o.skipFailures {
		return &failed{err}
	}
	m.failed.Add(1)
	m.mu.Lock()
	if len(m.failures) < m.o.maxFailures {
		m.failures = append(m.failures, Failure[T]{Item: it, Err: err})
	}
	m.mu.Unlock()
	return nil
}

func (m *Migration[T]) setFatal(err error) {
	m.mu.Lock()
	if m.fatal == nil {
		m.fatal = err
	}
	m.mu.Unlock()
}

func (m *Migration[T]) fatalErr() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fatal
}

// Progress returns what this process has done so far; it may be called at
// any time, from any goroutine.
func (m *Migration[T]) Progress() Progress[T] {
	p := Progress[T]{
		Scanned:    m.meter.scanned.Load(),
		Changed:    m.changed.Load(),
		Unchanged:  m.unchanged.Load(),
		Skipped:    m.skipped.Load() + m.meter.filtered.Load(),
		Reruns:     m.reruns.Load(),
		Failed:     m.failed.Load(),
		Throttled:  m.meter.throttled.Load(),
		ReadUnits:  float64(m.meter.readMilli.Load()) / 1000,
		WriteUnits: float64(m.meter.writeMilli.Load()) / 1000,
		Segments:   m.o.segments,
		Remaining:  -1,
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p.Failures = append([]Failure[T](nil), m.failures...)
	if !m.started.IsZero() {
		p.Elapsed = m.o.clock.Now().Sub(m.started)
	}
	if m.o.dryRun {
		p.SegmentsDone = m.segsDone.Load()
		if p.Scanned > 0 && m.total > p.Scanned {
			p.Remaining = time.Duration(float64(p.Elapsed) * float64(m.total-p.Scanned) / float64(p.Scanned))
		}
		return p
	}
	f := m.fleet
	p.SegmentsDone = f.done
	// The estimate uses the fleet's rate (from checkpoints, written per
	// page) when it has seen more items than this process has done (others
	// work too), else this process's own.
	done := p.Changed + p.Unchanged + p.Skipped + p.Failed
	switch fleet := f.scanned - f.first; {
	case f.done == int64(m.o.segments):
		p.Remaining = 0
	case fleet > done && m.total > f.scanned:
		p.Remaining = time.Duration(float64(f.at.Sub(f.firstAt)) * float64(m.total-f.scanned) / float64(fleet))
	case done > 0 && m.total > max(done, f.scanned):
		p.Remaining = time.Duration(float64(p.Elapsed) * float64(m.total-max(done, f.scanned)) / float64(done))
	}
	return p
}

// versionField returns the index path of the field of the struct type t
// (or *t) tagged as the version attribute, or nil. The fields are the
// codec's one list (codec.LayoutOf: embedded structs flattened, shadowed
// and skipped fields left out, as NewTable reads them), the options those
// of both tags (codec.ReadTags).
func versionField(t reflect.Type) []int {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	for _, f := range codec.LayoutOf(t).Fields {
		version := false
		codec.ReadTags(f.Tag, func(_, tag string) {
			version = version || slices.Contains(strings.Split(tag, ",")[1:], "version")
		})
		if version {
			return f.Index
		}
	}
	return nil
}

// versionOf returns the version item holds in the field at path (zero for
// a nil pointer on the way).
func versionOf(item any, path []int) int64 {
	v := reflect.ValueOf(item)
	for _, i := range path {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return 0
			}
			v = v.Elem()
		}
		v = v.Field(i)
	}
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return 0
		}
		v = v.Elem()
	}
	switch {
	case v.CanInt():
		return v.Int()
	case v.CanUint():
		return int64(v.Uint())
	}
	return 0
}
