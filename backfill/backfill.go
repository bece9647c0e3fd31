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
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/codec"
	"github.com/ddbkit/dynamo/lease"
)

// ErrNotDone is the error of a clean migration's Run while the migration it
// cleans is not done: see NewCleanMigration.
var ErrNotDone = errors.New("backfill: the migration is not done")

// Migration applies a function to every item of a table. Make one with
// NewMigration (or NewQueryMigration) and call Run in every process that
// shares it.
type Migration[T any] struct {
	id     string
	fn     func(T) (T, error)
	o      options
	meter  *meter
	table  *dynamo.Table[T]
	cps    *dynamo.Table[checkpoint]
	shapes *dynamo.Table[shape] // in the checkpoint table
	group  *lease.Group
	notYet expression.ConditionBuilder
	total  int64 // the table's item count when Run started (approximate)
	// version is the index path of T's version field (nil: none): a
	// scanned item holding a version can be written back under it without
	// reading it again.
	version   []int
	versioned bool
	// keys are the index paths of T's key fields (hash and range): the
	// fast path writes a function's result only under the key scanned.
	keys [][]int
	// keyNames are the attribute names of keys.
	keyNames []string
	// query is the key condition of a query migration (nil: a scan).
	query *expression.KeyConditionBuilder
	// indexSort are the sort key attributes of the Index a query migration
	// reads (several for a multi-attribute key; none without an Index),
	// which the function must leave as they are (readIndexSortKey, at
	// Run's start).
	indexSort []string
	// reread makes every item go through Table.Update, which reads it
	// again from the table: items of an index may lack attributes.
	reread bool
	// saveOpts and updateOpts are the options of the writes of item, made
	// once: the mapper compiles an If option's condition once.
	saveOpts, updateOpts []dynamo.WriteOption

	running                                     atomic.Bool // a Run is under way
	changed, unchanged, skipped, reruns, failed atomic.Int64
	segsDone                                    atomic.Int64

	mu       sync.Mutex
	failures []Failure[T]
	fatal    error
	started  time.Time
	fleet    fleetView
	segs     []segState    // per segment: what this process knows of it
	stopping chan struct{} // closed when Run's ctx is done: segments checkpoint and return
	working  int           // segments working in this process
	idle     chan struct{} // closed when working drops to zero (nil: nobody waits)
	wake     chan struct{} // a segment finished here: look at once
	writers  *writers      // the segments' goroutines, writing each other's pages
}

// segState is what this process knows of a segment.
type segState struct {
	done    bool  // final: a done segment stays done
	held    bool  // this process works on it now
	scanned int64 // items scanned, as of its last checkpoint read or page done here
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
	// Segments is the migration's number of segments, for Clean to find
	// them all (0 in checkpoints written before it was recorded).
	Segments int `dynamo:"segments,omitempty"`
	// Failed are the items recorded as failed (SkipFailures), retried by
	// the next Run.
	Failed failedKeys `dynamo:"failed,omitempty"`
}

// Failure is an item whose change failed.
type Failure[T any] struct {
	Item T     // as scanned: its key fields name it
	Err  error // the function's error, or the write's
}

// Progress is what a Migration has done in this process so far.
type Progress[T any] struct {
	Scanned   int64        // items the scans read
	Changed   int64        // items written with the change (with DryRun: that would be)
	Unchanged int64        // items whose function returned dynamo.ErrNoChange: nothing written
	Skipped   int64        // items deleted since they were scanned (Clean: no longer marked)
	Reruns    int64        // calls of the function again, on the stored item, after a version conflict
	Failed    int64        // items recorded as failed (SkipFailures)
	Failures  []Failure[T] // the first DefaultMaxFailures failures
	Throttled int64        // requests DynamoDB throttled that Run sent again

	// ReadUnits and WriteUnits are the capacity consumed, as DynamoDB
	// reported it; without a write Capacity, WriteUnits is estimated from
	// one write in 16 (see "Throttled" in the package doc).
	ReadUnits, WriteUnits float64

	Segments     int   // in the migration
	SegmentsDone int64 // finished, by the whole fleet as of the last poll (this process's, with DryRun)

	Elapsed time.Duration
	// Remaining estimates the time left, from the fleet's rate of items
	// scanned since Run started and the table's item count (which
	// DynamoDB updates about every six hours); once the items done reach
	// that count, from the segments finished; -1 when unknown (a table
	// counted empty, nothing done yet).
	Remaining time.Duration
}

// NewMigration returns the migration id of the table (T's items, read
// and written through m, as m writes them: its encoders, write token
// attribute, retry policy and telemetry) applying fn to every item. fn is
// called as Table.Update calls its function: on the stored item, again
// after a version conflict, and returning dynamo.ErrNoChange when the item
// needs nothing. The id names the migration: its lease group and its
// checkpoints; a process that runs the same id again resumes it, and a new
// id changes every item again. WithFleet is required unless WithDryRun is
// given. It sends no request.
func NewMigration[T any](m *dynamo.Mapper, table, id string, fn func(T) (T, error), opts ...Option) (*Migration[T], error) {
	if m == nil {
		return nil, errNilMapper("NewMigration")
	}
	return newMigration("NewMigration", m, m.Client(), table, id, nil, fn, opts)
}

// NewQueryMigration returns the migration id of the items a Query of the
// table selects (T's items, read and written through m), applying fn to
// each: key names one partition and, optionally, a condition on its sort
// key, as for dynamo.Table.Query; with WithIndex, it is a query of that
// secondary index. It works as NewMigration's migrations do — live writes
// win, each item changed once, resumable, shared, within WithCapacity —
// with one segment: the query is read in order, page by page, by one
// goroutine of one process of the fleet at a time, and its checkpoint is
// the query's cursor. WithSegments other than 1 is refused. Options and
// errors are NewMigration's.
//
// IAM: dynamodb:Query (on the index too, with WithIndex), GetItem and
// UpdateItem on the table; on the lease and checkpoint tables what
// NewMigration needs.
func NewQueryMigration[T any](m *dynamo.Mapper, table, id string, key expression.KeyConditionBuilder, fn func(T) (T, error), opts ...Option) (*Migration[T], error) {
	if m == nil {
		return nil, errNilMapper("NewQueryMigration")
	}
	return newQueryMigration("NewQueryMigration", m, m.Client(), table, id, key, fn, opts)
}

// NewCleanMigration returns the migration that removes the mark an
// earlier release of this package wrote for the migration id (this release
// writes none) from every item holding it (and from no other), once the
// migration is done and nothing needs to resume it. It is a migration of
// its own, named "clean:" + id (its lease group and checkpoints), which
// writes each marked item back unchanged but for the mark, through
// Table.Update as NewMigration does (the version moves on). Options are
// NewMigration's; WithFleet is required unless WithDryRun, and WithMark
// must be the migration's.
//
// Its Run refuses to start, with an error wrapping ErrNotDone, unless the
// checkpoint of every segment of the migration says done: a migration not
// done (a Run of it live in some process, or stopped to be resumed) reads
// again the items it changed since a segment's last checkpoint, and would
// change again those whose marks it had removed.
func NewCleanMigration[T any](m *dynamo.Mapper, table, id string, opts ...Option) (*Migration[T], error) {
	if m == nil {
		return nil, errNilMapper("NewCleanMigration")
	}
	return newMigration("NewCleanMigration", m, m.Client(), table, "clean:"+id, nil, unchanged[T], cleaning(id, opts))
}

// errNilMapper is the error of a constructor given no mapper.
func errNilMapper(op string) error {
	return fmt.Errorf("backfill: %s: nil mapper: pass the dynamo.Mapper of the table's items (dynamo.NewMapper(client))", op)
}

// unchanged is a Clean migration's function: the mark goes (meter), the
// item stays.
func unchanged[T any](item T) (T, error) { return item, nil }

// cleaning returns a Clean migration's options: opts, and the id whose
// mark it removes.
func cleaning(id string, opts []Option) []Option {
	return append(opts[:len(opts):len(opts)], func(o *options) { o.clean = id })
}

// newQueryMigration checks a query migration's key condition and makes it.
func newQueryMigration[T any](op string, mapper *dynamo.Mapper, c dynamo.Client, table, id string, key expression.KeyConditionBuilder, fn func(T) (T, error), opts []Option) (*Migration[T], error) {
	if _, err := expression.NewBuilder().WithKeyCondition(key).Build(); err != nil {
		return nil, fmt.Errorf("backfill: %s: key condition: %w: give expression.Key(hashAttr).Equal(value), optionally ANDed with a sort key condition", op, err)
	}
	return newMigration(op, mapper, c, table, id, &key, fn, opts)
}

// newMigration makes every migration (query nil: a scan); op names the
// caller in errors. Its writes go through mapper's options over a meter
// of c (mapper.Client()), or, from the deprecated constructors (mapper
// nil), through dynamo.NewMapper's with MapperOptions.
func newMigration[T any](op string, mapper *dynamo.Mapper, c dynamo.Client, table, id string, query *expression.KeyConditionBuilder, fn func(T) (T, error), opts []Option) (*Migration[T], error) {
	o, err := migrationOptions(op, mapper, c, id, query != nil, fn != nil, opts)
	if err != nil {
		return nil, err
	}
	if modelsAttr(reflect.TypeFor[T](), o.mark) {
		return nil, fmt.Errorf("backfill: %s: WithMark attribute %q is a field of %v: T must not model the mark; give WithMark another attribute name", op, o.mark, reflect.TypeFor[T]())
	}
	m := &Migration[T]{id: id, fn: fn, o: o, query: query, reread: o.index != "",
		segs: make([]segState, o.segments), wake: make(chan struct{}, 1), writers: newWriters()}
	m.meter = &meter{Client: c, id: id, markAV: &types.AttributeValueMemberS{Value: id}, clk: o.clock, maxBackoff: 5 * time.Second,
		reads: newBudget(o.clock, o.readRate), writes: newBudget(o.clock, o.writeRate)}
	var writes *dynamo.Mapper
	if mapper != nil {
		writes = mapper.WithClient(m.meter)
	} else {
		writes = dynamo.NewMapper(m.meter, o.mapperOpts...)
	}
	if m.table, err = dynamo.NewTable[T](writes, table); err != nil {
		return nil, fmt.Errorf("backfill: %s: %w", op, err)
	}
	m.version = versionField(reflect.TypeFor[T]())
	m.versioned = m.version != nil
	m.keys = keyFields(reflect.TypeFor[T]())
	m.keyNames = keyFieldNames(reflect.TypeFor[T](), m.keys)
	name := expression.Name(o.mark)
	m.notYet = expression.Or(expression.AttributeNotExists(name), name.NotEqual(expression.Value(id)))
	if o.clean != "" {
		m.meter.markAttr, m.meter.id, m.meter.unmark = o.mark, o.clean, true
		m.meter.markAV = &types.AttributeValueMemberS{Value: o.clean}
		m.notYet = name.Equal(expression.Value(o.clean))
	}
	ifNotYet := dynamo.If(m.notYet)
	m.saveOpts = []dynamo.WriteOption{ifNotYet}
	m.updateOpts = []dynamo.WriteOption{dynamo.MustExist(), ifNotYet}
	if o.dryRun {
		return m, nil
	}
	if m.cps, err = dynamo.NewTable[checkpoint](dynamo.NewMapper(c), o.checkpoints); err != nil {
		return nil, fmt.Errorf("backfill: %s: %w", op, err)
	}
	if m.shapes, err = dynamo.NewTable[shape](m.cps.Mapper(), o.checkpoints); err != nil {
		return nil, fmt.Errorf("backfill: %s: %w", op, err)
	}
	keys := make([]string, o.segments)
	for i := range keys {
		keys[i] = m.segmentKey(i)
	}
	if m.group, err = o.leases.Group("backfill:"+id, keys); err != nil {
		return nil, fmt.Errorf("backfill: %s: %w", op, err)
	}
	return m, nil
}

// migrationOptions applies opts over the defaults and refuses what a
// migration cannot run with, naming the fix.
func migrationOptions(op string, mapper *dynamo.Mapper, c dynamo.Client, id string, query, fn bool, opts []Option) (options, error) {
	o := options{segments: DefaultSegments, pageSize: DefaultPageSize, mark: DefaultMark, poll: DefaultPollInterval,
		maxFailures: DefaultMaxFailures, cpEvery: DefaultCheckpointInterval}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.clock == nil {
		o.clock = clock.Real()
	}
	if query {
		if o.segmentsSet && o.segments != 1 {
			return o, fmt.Errorf("backfill: %s: %d segments: a query migration has one segment: leave WithSegments out", op, o.segments)
		}
		o.segments = 1
	}
	switch {
	case mapper != nil && o.mapperSet:
		return o, fmt.Errorf("backfill: %s: MapperOptions with a mapper: build the mapper with those options (dynamo.NewMapper(client, opts...)) and leave MapperOptions out", op)
	case c == nil && mapper != nil:
		return o, fmt.Errorf("backfill: %s: the mapper has no client: make it with dynamo.NewMapper(client)", op)
	case c == nil:
		return o, fmt.Errorf("backfill: %s: nil client: pass the DynamoDB client of the table", op)
	case !fn:
		return o, fmt.Errorf("backfill: %s: nil function: pass the change to apply to every item", op)
	case id == "" || strings.ContainsRune(id, 0):
		return o, fmt.Errorf("backfill: %s: id %q: name the migration with a non-empty id without NUL bytes", op, id)
	case o.segments < 1 || o.segments > 1_000_000:
		return o, fmt.Errorf("backfill: %s: %d segments: give 1 to 1000000", op, o.segments)
	case o.pageSize < 1:
		return o, fmt.Errorf("backfill: %s: page size %d: give at least 1", op, o.pageSize)
	case !(o.readRate >= 0) || !(o.writeRate >= 0): // NaN too
		return o, fmt.Errorf("backfill: %s: capacity %g read, %g write: give units per second, 0 for no limit", op, o.readRate, o.writeRate)
	case o.mark == "":
		return o, fmt.Errorf("backfill: %s: empty WithMark attribute: name the attribute that records the migration", op)
	case o.poll <= 0:
		return o, fmt.Errorf("backfill: %s: poll interval %v: give a positive duration", op, o.poll)
	case o.cpEvery < 0:
		return o, fmt.Errorf("backfill: %s: checkpoint interval %v: give a duration of zero (every page) or more", op, o.cpEvery)
	case o.index != "" && !query:
		return o, fmt.Errorf("backfill: %s: WithIndex(%q) is for query migrations: use NewQueryMigration, or leave WithIndex out to scan the table", op, o.index)
	case !o.dryRun && (o.leases == nil || o.checkpoints == ""):
		return o, fmt.Errorf("backfill: %s: no WithFleet: pass WithFleet(leaseClient, checkpointTable) so the migration can checkpoint and be shared (or WithDryRun)", op)
	}
	return o, nil
}

// segmentKey is the lease group's key of segment i.
func (m *Migration[T]) segmentKey(i int) string { return "backfill:" + m.id + "/" + strconv.Itoa(i) }

// checkpointKey is the checkpoint record's key of segment i.
func (m *Migration[T]) checkpointKey(i int) string { return checkpointKey(m.id, i) }

// checkpointKey is the checkpoint record's key of segment i of the
// migration id.
func checkpointKey(id string, i int) string {
	return "\x00backfill:" + id + "\x00" + strconv.Itoa(i)
}

// cleanable refuses a Clean's Run (ErrNotDone) unless the migration it
// cleans is done: the checkpoint of each of its segments says done. The
// number of segments is the one its checkpoints record (segment 0's);
// checkpoints written before they recorded it are taken to have Clean's
// Segments, and a checkpoint beyond them refuses the Clean. A migration not
// done — a Run under way, or stopped and to be resumed — reads again, after
// a stop or a handover, the items it changed since a segment's last
// checkpoint; were their marks removed meanwhile, it would change them
// twice (and the marks it writes after Clean went by would stay).
func (m *Migration[T]) cleanable(ctx context.Context) error {
	id := m.o.clean
	notDone := func(seg int, why string) error {
		return fmt.Errorf("%w: Clean of %q: segment %d %s: run the migration to its end first", ErrNotDone, id, seg, why)
	}
	first, err := m.cps.Load(ctx, checkpoint{Key: checkpointKey(id, 0)}, dynamo.ConsistentRead())
	switch {
	case errors.Is(err, dynamo.ErrNotFound):
		return notDone(0, "has no checkpoint in this checkpoint table")
	case err != nil:
		return fmt.Errorf("backfill: Clean of migration %q: reading its checkpoints: %w", id, err)
	}
	n, legacy := first.Segments, first.Segments == 0
	if legacy {
		n = m.o.segments
	}
	keys := make([]checkpoint, n, n+1)
	for i := range keys {
		keys[i] = checkpoint{Key: checkpointKey(id, i)}
	}
	if legacy {
		keys = append(keys, checkpoint{Key: checkpointKey(id, n)})
	}
	cps, found, err := m.cps.BatchLoadIndexed(ctx, keys, dynamo.ConsistentRead())
	if err != nil {
		return fmt.Errorf("backfill: Clean of migration %q: reading its checkpoints: %w", id, err)
	}
	if legacy && found[n] {
		return fmt.Errorf("%w: Clean of %q with %d segments: segment %d has a checkpoint too: give Clean the migration's WithSegments", ErrNotDone, id, n, n)
	}
	for i := range n {
		switch {
		case !found[i]:
			return notDone(i, "has no checkpoint (not started)")
		case !cps[i].Done:
			return notDone(i, "is not finished")
		}
	}
	return nil
}

// Run works on the migration until it is done, by this process and the
// others sharing it, and returns nil then. For each segment it is given, it
// scans from the segment's checkpoint, applies the function to each item and
// commits each page with the checkpoint in one transaction, guarded by the
// segment's lease. A segment lost to another process (a crash, a handover)
// is continued there from its last checkpoint.
//
// One Run at a time per Migration. ctx bounds the whole run: when it is done,
// each segment writes its checkpoint (for at most 10 s) and Run returns ctx's
// error; run again to resume. Without WithSkipFailures the first failed item
// stops Run with its error. See docs/backfill.md, Running a migration.
//
// IAM: dynamodb:Scan (NewQueryMigration: Query), GetItem, UpdateItem and
// DescribeTable on the table; lease.Group.Run's on the lease table; on the
// checkpoint table BatchGetItem, GetItem, UpdateItem and ConditionCheckItem.
func (m *Migration[T]) Run(ctx context.Context) error {
	if !m.running.CompareAndSwap(false, true) {
		return fmt.Errorf("backfill: migration %q: Run is running already on this Migration: call Run once at a time (each process of the fleet runs its own)", m.id)
	}
	defer m.running.Store(false)
	stopping := make(chan struct{})
	m.mu.Lock()
	m.started = m.o.clock.Now()
	m.stopping = stopping
	m.mu.Unlock()
	// The table's item count (for Progress's estimate) is read while the
	// work starts, not before it.
	var described sync.WaitGroup
	defer described.Wait()
	if m.query == nil {
		described.Add(1)
		go func() {
			defer described.Done()
			if d, err := m.meter.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(m.table.Name())}); err == nil && d.Table != nil && d.Table.ItemCount != nil {
				m.mu.Lock()
				m.total = *d.Table.ItemCount
				m.mu.Unlock()
			}
		}()
	}
	if m.o.index != "" && m.query != nil {
		if err := m.readIndexSortKey(ctx); err != nil {
			return err
		}
	}
	if m.o.dryRun {
		return m.runLocal(ctx)
	}
	if m.o.clean != "" {
		if err := m.cleanable(ctx); err != nil {
			return err
		}
	} else if err := m.checkShape(ctx); err != nil {
		return err
	}
	// The group runs under a ctx of its own, cancelled once the segments
	// of this process have written their last checkpoint after ctx ended
	// (their leases end with it), or once the migration is done.
	gctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	finished := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if m.awaitDone(gctx) {
			close(finished)
			cancel()
		}
	}()
	go func() {
		defer wg.Done()
		select {
		case <-ctx.Done():
			close(stopping)
			m.awaitIdle(gctx)
			cancel()
		case <-gctx.Done():
		}
	}()
	err := m.group.Run(gctx, func(ctx context.Context, l *lease.Lease) error {
		return m.segment(ctx, gctx, l, cancel)
	})
	cancel()
	wg.Wait()
	return m.outcome(ctx, finished, err)
}

// outcome is what Run returns once the group stopped with err: nil when
// the migration is done (finished closed, or found done), the first fatal
// error, else why it stopped.
func (m *Migration[T]) outcome(ctx context.Context, finished <-chan struct{}, err error) error {
	if f := m.fatalErr(); f != nil {
		return f
	}
	select {
	case <-finished:
		return nil // done; a session lost meanwhile changes nothing
	default:
	}
	if err != nil {
		// The group's session can end (its heartbeat not extended in time:
		// a paused or starved process) after the others finished the
		// migration; a done migration is done whatever this process lost.
		lctx, lcancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
		done, lerr := m.look(lctx)
		lcancel()
		if lerr == nil && done {
			return nil
		}
		return err
	}
	return fmt.Errorf("backfill: migration %q stopped before its end (run again to resume): %w", m.id, context.Cause(ctx))
}

// stopTimeout bounds how long Run waits, once its ctx is done, for the
// segments of this process to finish their item and write their
// checkpoint.
const stopTimeout = 10 * time.Second

// awaitIdle returns once no segment works in this process, after
// stopTimeout, or when ctx ends.
func (m *Migration[T]) awaitIdle(ctx context.Context) {
	m.mu.Lock()
	if m.working == 0 {
		m.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	m.idle = idle
	m.mu.Unlock()
	t := m.o.clock.NewTimer(stopTimeout)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C():
	case <-ctx.Done():
	}
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
			if err := m.scanSegment(ctx, ctx, seg, cp, nil, nil); err != nil {
				m.setFatal(err)
				cancel()
				return
			}
			m.segsDone.Add(1)
			m.writers.help(nil, ctx.Done())
		}()
	}
	wg.Wait()
	if f := m.fatalErr(); f != nil {
		return f
	}
	return ctx.Err()
}

// awaitDone learns, by look, whether every segment is done: each poll
// interval, and at once when a segment of this process is done. It
// reports true once all are, false when ctx ends first.
func (m *Migration[T]) awaitDone(ctx context.Context) bool {
	for {
		if done, err := m.look(ctx); err == nil && done {
			return true
		}
		t := m.o.clock.NewTimer(m.o.poll)
		select {
		case <-t.C():
		case <-m.wake:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
}

// look reads the checkpoints of the segments neither known done nor worked
// on by this process (in BatchGetItem requests of up to 100), updates what
// this process knows of every segment, and reports whether all are done.
// A done segment stays done; the state of a segment this process works on
// is its own.
func (m *Migration[T]) look(ctx context.Context) (bool, error) {
	m.mu.Lock()
	var keys []checkpoint
	var segs []int
	for seg, st := range m.segs {
		if !st.done && !st.held {
			keys = append(keys, checkpoint{Key: m.checkpointKey(seg)})
			segs = append(segs, seg)
		}
	}
	m.mu.Unlock()
	var cps []checkpoint
	var found []bool
	if len(keys) > 0 {
		var err error
		if cps, found, err = m.cps.BatchLoadIndexed(ctx, keys, dynamo.ConsistentRead()); err != nil {
			return false, err
		}
	}
	now := m.o.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, seg := range segs {
		st := &m.segs[seg]
		if !found[i] || st.held || st.done {
			continue // taken up here meanwhile: its state is ours
		}
		st.scanned = max(st.scanned, cps[i].Scanned)
		st.done = cps[i].Done && !m.toRetry(cps[i])
	}
	v := fleetView{at: now}
	for _, st := range m.segs {
		v.scanned += st.scanned
		if st.done {
			v.done++
		}
	}
	if m.fleet.firstAt.IsZero() {
		v.first, v.firstAt = v.scanned, v.at
	} else {
		v.first, v.firstAt = m.fleet.first, m.fleet.firstAt
	}
	m.fleet = v
	return v.done == int64(m.o.segments), nil
}

// segment works on the segment of lease l until it is done, ctx (the
// lease's) ends or Run stops; stop ends the whole run (a failure that stops
// it). The item in hand when the lease ends is finished under wctx (the
// group's, which outlives every lease): see scanSegment.
func (m *Migration[T]) segment(ctx, wctx context.Context, l *lease.Lease, stop context.CancelFunc) error {
	seg, err := strconv.Atoi(l.Key()[strings.LastIndexByte(l.Key(), '/')+1:])
	if err != nil || seg < 0 || seg >= m.o.segments {
		return fmt.Errorf("backfill: lease key %q names no segment", l.Key())
	}
	m.mu.Lock()
	stopping := m.stopping
	m.working++
	m.segs[seg].held = true
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.segs[seg].held = false
		if m.working--; m.working == 0 && m.idle != nil {
			close(m.idle)
			m.idle = nil
		}
		m.mu.Unlock()
	}()
	select {
	case <-stopping:
		return nil // Run is stopping: leave the segment as it is
	default:
	}
	cp, early, err := m.openSegment(ctx, seg)
	if early != nil {
		defer early.stop()
	}
	if err != nil {
		return m.segmentError(ctx, l, seg, err, stop)
	}
	if m.o.clean == "" {
		if early != nil {
			early.stop() // (a transactional segment reads pages of its own length)
		}
		switch err := m.txSegment(ctx, wctx, l, seg, cp); {
		case errors.Is(err, errStopping), errors.Is(err, errHandedOver):
			return nil
		case err != nil:
			return m.segmentError(ctx, l, seg, err, stop)
		}
		if !cp.Done {
			m.segsDone.Add(1)
		}
	} else if !cp.Done {
		err = m.scanSegment(ctx, wctx, seg, cp, early, func(cp checkpoint) (checkpoint, error) {
			cp.Token, cp.Segments = l.Token(), m.o.segments
			return lease.Save(ctx, l, m.cps, cp)
		})
		switch {
		case errors.Is(err, errStopping):
			return nil
		case err != nil:
			return m.segmentError(ctx, l, seg, err, stop)
		}
		m.segsDone.Add(1)
	}
	m.mu.Lock()
	m.segs[seg].done = true
	m.segs[seg].scanned = max(m.segs[seg].scanned, cp.Scanned)
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
	// Its goroutine writes the pages of the segments still at work here.
	m.writers.help(stopping, ctx.Done())
	return nil
}

// openSegment reads seg's checkpoint and, for a segment this process knows
// of no progress of, its first page meanwhile (early, which the caller
// stops; nil when the checkpoint says the segment is under way or done).
func (m *Migration[T]) openSegment(ctx context.Context, seg int) (cp checkpoint, early *pageReader[T], err error) {
	// While the checkpoint is read, the segment's first page is read too
	// when this process knows of no progress of the segment (a fresh
	// migration): it is used only if the checkpoint, read under the lease,
	// says the segment starts from the beginning, and dropped otherwise
	// (one page read for nothing).
	m.mu.Lock()
	fresh := m.segs[seg].scanned == 0 && !m.segs[seg].done
	m.mu.Unlock()
	if fresh {
		early = m.startReading(ctx, seg, "")
	}
	cp, err = m.cps.Load(ctx, checkpoint{Key: m.checkpointKey(seg)}, dynamo.ConsistentRead())
	switch {
	case errors.Is(err, dynamo.ErrNotFound):
		cp = checkpoint{Key: m.checkpointKey(seg)}
	case err != nil:
		return cp, early, err
	}
	if cp.Segments != 0 && cp.Segments != m.o.segments {
		return cp, early, fmt.Errorf("%w: its checkpoints are of %d segments: give Segments(%d)", ErrShapeChanged, cp.Segments, cp.Segments)
	}
	if early != nil && (cp.Cursor != "" || cp.Done) {
		early.stop()
		early = nil
	}
	return cp, early, nil
}

// errStopping is scanSegment's error when Run's ctx ended: the segment
// wrote its checkpoint and stopped.
var errStopping = errors.New("backfill: stopping")

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

// page is one page of a segment's scan (or of the query), or the error
// reading it.
type page[T any] struct {
	items []T
	// undecoded are the page's items that did not decode into T (the
	// others are in items).
	undecoded []*dynamo.ItemDecodeError
	// read holds items as stored, read[i] that of items[i] (nil: not
	// kept), for the writes of their changes alone (saveScanned).
	read []map[string]types.AttributeValue
	next dynamo.Cursor
	err  error
}

// read reads the page of segment seg after cursor.
func (m *Migration[T]) read(ctx context.Context, seg int, cursor string, limit int) page[T] {
	opts := []dynamo.QueryOption{dynamo.StartAfter(dynamo.Cursor(cursor)), dynamo.PageSize(limit)}
	if m.o.index == "" && m.o.clean != "" {
		// An index may not project the mark (DynamoDB then refuses the
		// filter): its items changed already are skipped after Update
		// reads them again.
		opts = append(opts, dynamo.Filter(m.notYet))
	}
	if m.o.consistent && !m.o.dryRun {
		opts = append(opts, dynamo.ConsistentRead())
	}
	var p page[T]
	// The items as stored are kept for a versioned T written back under
	// the version scanned (saveScanned); the mapper decodes the items of
	// the page's requests in order, all of them.
	var kept *readItems
	if (m.versioned || m.o.clean == "") && !m.reread && !m.o.dryRun {
		kept = &readItems{}
		ctx = withReadItems(ctx, kept)
	}
	if m.query != nil {
		if m.o.index != "" {
			opts = append(opts, dynamo.Index(m.o.index))
		}
		p.items, p.next, p.err = m.table.QueryPage(ctx, *m.query, opts...)
	} else {
		opts = append(opts, dynamo.Segment(seg, m.o.segments))
		p.items, p.next, p.err = m.table.ScanPage(ctx, opts...)
	}
	if pe := (*dynamo.PageDecodeError)(nil); errors.As(p.err, &pe) {
		// The page's other items are there: the failed ones are
		// failures of their own (undecodable).
		p.undecoded, p.err = pe.Failed, nil
	}
	// A page with undecodable items has fewer items than were read: its
	// items are then written whole.
	if kept != nil && p.err == nil && len(kept.items) == len(p.items) {
		p.read = kept.items
	} else if kept != nil && p.err == nil && len(kept.items) == len(p.items)+len(p.undecoded) {
		// Those of the items that decoded, in order.
		read := make([]map[string]types.AttributeValue, 0, len(p.items))
		for _, raw := range kept.items {
			if !slices.ContainsFunc(p.undecoded, func(f *dynamo.ItemDecodeError) bool { return sameKeyAttrs(raw, f.Key, m.keyNames) }) {
				read = append(read, raw)
			}
		}
		if len(read) == len(p.items) {
			p.read = read
		}
	}
	return p
}

// sameKeyAttrs reports whether a and b hold the same values of the key
// attributes names.
func sameKeyAttrs(a, b map[string]types.AttributeValue, names []string) bool {
	for _, n := range names {
		if a[n] == nil || b[n] == nil || !av.Equal(a[n], b[n]) {
			return false
		}
	}
	return true
}

// toRetry reports whether cp records failed items from before this Run
// started: its segment is not done until they are tried again.
func (m *Migration[T]) toRetry(cp checkpoint) bool {
	started := m.started.UnixMilli() // m.mu is held
	return slices.ContainsFunc(cp.Failed, func(f failedKey) bool { return f.At < started })
}

// scanSegment scans segment seg from cp, changing its items, one page read
// ahead of the items being changed: by r when not nil (reading from cp's
// cursor already), else by a reader of its own. With save (nil: none) it saves the
// checkpoint after the first page that ends CheckpointInterval or more
// after the last save, at the segment's end, and, while ctx lasts, when it
// stops early: an item failing, or Run stopping (errStopping).
//
// Items are written under wctx, not ctx: when ctx ends (the segment's lease
// lost or handed over) the item in hand is finished, so that its write is
// counted once it lands — a write cut short would land uncounted, and the
// segment's next holder, scanning past the mark, would not count it either
// — and the segment stops before the next item. Finishing it after the
// lease is safe: the write's own conditions (the mark, the version) keep
// it from applying twice or over a live write.
func (m *Migration[T]) scanSegment(ctx, wctx context.Context, seg int, cp checkpoint, r *pageReader[T], save func(checkpoint) (checkpoint, error)) (err error) {
	m.mu.Lock()
	stopping := m.stopping
	m.mu.Unlock()
	m.writers.begin()
	defer m.writers.end()
	if r == nil {
		r = m.startReading(ctx, seg, cp.Cursor)
	}
	defer r.stop()
	pages := r.pages
	lastSave := m.o.clock.Now()
	unsaved := false // cp moved on since it was last saved
	flush := func() error {
		if save == nil || !unsaved {
			return nil
		}
		var err error
		if cp, err = save(cp); err != nil {
			return err
		}
		unsaved, lastSave = false, m.o.clock.Now()
		return nil
	}
	defer func() {
		var f *failed
		if errors.Is(err, errStopping) || errors.As(err, &f) {
			if ferr := flush(); ferr != nil && ctx.Err() == nil {
				err = errors.Join(err, fmt.Errorf("backfill: checkpoint on stopping: %w", ferr))
			}
		}
	}()
	for !cp.Done {
		var p page[T]
		select {
		case p = <-pages:
		case <-stopping:
			return errStopping
		case <-ctx.Done():
			return ctx.Err()
		}
		if p.err != nil {
			return p.err
		}
		if err := m.writePage(ctx, wctx, p, stopping); err != nil {
			return err
		}
		cp.Cursor, cp.Done = string(p.next), p.next == ""
		cp.Scanned += int64(len(p.items) + len(p.undecoded))
		unsaved = true
		if err := m.scanned(seg, cp, lastSave, flush); err != nil {
			return err
		}
	}
	return nil
}

// writePage records p's undecodable items and writes the changes of its
// items under wctx, with the help of this process's other writers (see
// writers), taking no item once the migration is stopping (errStopping:
// the page is done again by the segment's next holder) or ctx ends; it
// returns once no item of the page is in flight.
func (m *Migration[T]) writePage(ctx, wctx context.Context, p page[T], stopping <-chan struct{}) error {
	for _, f := range p.undecoded {
		if err := m.undecodable(f); err != nil {
			return err
		}
	}
	return m.writers.write(&pageWork{n: len(p.items),
		write: func(i int) error {
			var read map[string]types.AttributeValue
			if p.read != nil {
				read = p.read[i]
			}
			return m.item(wctx, p.items[i], read)
		},
		stopped: func() error {
			select {
			case <-stopping:
				return errStopping
			case <-ctx.Done():
				return ctx.Err()
			default:
				return nil
			}
		}})
}

// pageReader is a goroutine reading a segment's pages ahead (readAhead).
type pageReader[T any] struct {
	pages  chan page[T]
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startReading starts reading segment seg's pages from cursor on, under
// ctx, one page ahead of the reader of r.pages.
func (m *Migration[T]) startReading(ctx context.Context, seg int, cursor string) *pageReader[T] {
	return m.startReadingN(ctx, seg, cursor, m.o.pageSize)
}

// startReadingN is startReading of pages of limit items.
func (m *Migration[T]) startReadingN(ctx context.Context, seg int, cursor string, limit int) *pageReader[T] {
	r := &pageReader[T]{pages: make(chan page[T])}
	ctx, r.cancel = context.WithCancel(ctx)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		m.readAhead(ctx, seg, cursor, limit, r.pages)
	}()
	return r
}

// stop stops the reading and returns once its goroutine has returned; it
// may be called again.
func (r *pageReader[T]) stop() {
	r.cancel()
	r.wg.Wait()
}

// readAhead reads segment seg's pages from cursor on into pages, one
// ahead of the page being written, until a page fails or is the last, or
// ctx ends.
func (m *Migration[T]) readAhead(ctx context.Context, seg int, cursor string, limit int, pages chan<- page[T]) {
	for {
		p := m.read(ctx, seg, cursor, limit)
		select {
		case pages <- p:
		case <-ctx.Done():
			return
		}
		if p.err != nil || p.next == "" {
			return
		}
		cursor = string(p.next)
	}
}

// unknownRetries bounds how often an item's write whose outcome is unknown
// is tried again (the mark makes that safe).
const unknownRetries = 5

// item applies the function to one scanned item, read as stored (nil: not
// known). It returns a *failed for a failure that stops the run, or ctx's
// error.
func (m *Migration[T]) item(ctx context.Context, it T, read map[string]types.AttributeValue) error {
	if m.o.dryRun {
		return m.dryItem(it)
	}
	maybe := false // an earlier attempt may have written the change
	calls := 0     // of the function for this item
	if ver := versionOf(it, m.version); m.versioned && !m.reread && ver != 0 {
		// (An item without a version goes through Update, whose MustExist
		// keeps it deleted if it was deleted since: a Save of version zero
		// would create it again.)
		if done, err := m.saveScanned(ctx, it, read, ver, &maybe, &calls); done {
			return err
		}
	}
	return m.updateItem(ctx, it, maybe, calls)
}

// dryItem calls the function on it and counts what it would change.
func (m *Migration[T]) dryItem(it T) error {
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

// saveScanned writes the change of it under the version scanned (ver), and
// reports done unless the item is to be read again (Update) — after a
// conflict: an item read stale (the scan is eventually consistent by
// default) conflicts too — or the write's outcome is unknown (*maybe).
// *calls counts the calls of the function. read, when not nil, is it as
// stored: the write then sends only what the function changed
// (dynamo.ChangedFrom), sound under the version condition (a version names
// one state of the item).
func (m *Migration[T]) saveScanned(ctx context.Context, it T, read map[string]types.AttributeValue, ver int64, maybe *bool, calls *int) (done bool, err error) {
	*calls++
	// The key scanned, taken before fn: with a pointer T, fn may change
	// the item it was given in place.
	scannedKey, known := keyValues(it, m.keys)
	out, err := m.fn(shallowCopy(it))
	switch {
	case errors.Is(err, dynamo.ErrNoChange):
		m.unchanged.Add(1)
		return true, nil
	case err != nil:
		return true, m.fail(it, err)
	case !known || !sameKey(scannedKey, out, m.keys):
		// The function moved the item: a Save would write over the item
		// of the other key. Update refuses it with its error.
		*calls = 0
		err = dynamo.ErrVersionConflict
	default:
		// The version fn returns is ignored, as Update ignores it.
		setVersion(&out, m.version, ver)
		_, err = m.table.Save(ctx, out, m.scannedOpts(read)...)
	}
	switch {
	case err == nil:
		m.changed.Add(1)
		return true, nil
	case errors.Is(err, dynamo.ErrUnknownOutcome):
		*maybe = true
	case errors.Is(err, dynamo.ErrConditionFailed):
		m.skipped.Add(1) // marked since scanned
		return true, nil
	case errors.Is(err, dynamo.ErrVersionConflict):
		// A live write since the scan (or a deletion): Update.
	case ctx.Err() != nil:
		return true, ctx.Err()
	default:
		return true, m.fail(it, err)
	}
	return false, nil
}

// scannedOpts returns the options of saveScanned's write of an item the
// scan returned as read (nil: not kept, the item is written whole).
//
// The mark's condition (notYet) is left out where the write is pinned to
// the very state the scan returned, for it holds there already: read holds
// a write token and the mapper stores tokens, so ChangedFrom
// conditions the write on the version and the token read, and every write
// of a mapper that stores tokens moves both — the migration's own, which
// writes the mark, draws a fresh random token — so that no other state of
// the item holds that pair (an item deleted and created again holds other
// tokens; writers that move neither are the gap "Live writes win" names).
// That state passed the scan's filter, which is notYet itself: saveScanned
// runs only for items of pages read with it (an index's are read again
// through Update, which keeps the condition). So wherever the write's own
// condition holds, notYet does. This holds for an eventually consistent
// scan (the filter is evaluated on the state returned), for two processes
// writing one item (a segment taken over, a lease lost mid-item: the first
// write moves version and token, the other conflicts and goes through
// updateItem, whose write keeps the condition), for a lost answer (the
// SDK's resend conflicts on the version moved, and the mapper knows its
// token there; an outcome left unknown is tried again through updateItem,
// with the condition) and for Clean (notYet is then "holds the mark", the
// filter the same). Where the write is not so
// pinned — tokens off, an item read without a token (written by another
// client), or no item as read — the version alone does not name one state
// (versions start again after a re-creation, and a writer storing no token
// may carry the mark), and the condition is sent.
func (m *Migration[T]) scannedOpts(read map[string]types.AttributeValue) []dynamo.WriteOption {
	if read == nil {
		return m.saveOpts
	}
	if tok := m.table.Mapper().WriteTokenAttribute(); tok != "" && read[tok] != nil {
		return []dynamo.WriteOption{dynamo.ChangedFrom(read)}
	}
	return append(m.saveOpts[:len(m.saveOpts):len(m.saveOpts)], dynamo.ChangedFrom(read))
}

// updateItem changes it through Table.Update, which reads it again; maybe:
// an earlier write of the change may have landed; calls: the function was
// called that many times already.
func (m *Migration[T]) updateItem(ctx context.Context, it T, maybe bool, calls int) error {
	for try := 0; ; try++ {
		var last error
		_, err := m.table.Update(ctx, it, func(cur T) (T, error) {
			if calls++; calls > 1 {
				m.reruns.Add(1)
			}
			out, err := m.fn(cur)
			last = err
			return out, err
		}, m.updateOpts...)
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

// undecodable records an item of a page that did not decode into T as a
// failure, as fail does: its key fields in Failure.Item, its error (which
// names the key) in Failure.Err.
func (m *Migration[T]) undecodable(f *dynamo.ItemDecodeError) error {
	var it T
	_ = f.DecodeKey(&it) // a key that does not decode either leaves it zero; the error names it
	return m.fail(it, f)
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
		ReadUnits:  m.meter.readUse.units(),
		WriteUnits: m.meter.writeUse.units(),
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
	// The estimate uses the fleet's rate (from others' checkpoints and this
	// process's pages, as of the last look) when it has seen more items than
	// this process has done (others work too), else this process's own.
	done := p.Changed + p.Unchanged + p.Skipped + p.Failed
	switch fleet := f.scanned - f.first; {
	case f.done == int64(m.o.segments):
		p.Remaining = 0
	case fleet > done && m.total > f.scanned:
		p.Remaining = time.Duration(float64(f.at.Sub(f.firstAt)) * float64(m.total-f.scanned) / float64(fleet))
	case done > 0 && m.total > max(done, f.scanned):
		p.Remaining = time.Duration(float64(p.Elapsed) * float64(m.total-max(done, f.scanned)) / float64(done))
	case f.done > 0 && m.total > 0:
		// The items done reached the count (which lags the table) while
		// segments are still finishing: from the segments finished.
		p.Remaining = time.Duration(float64(p.Elapsed) * float64(int64(m.o.segments)-f.done) / float64(f.done))
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

// keyFields returns the index paths of the fields of the struct type t (or
// *t) tagged as its hash or range key, read as versionField reads the
// version.
func keyFields(t reflect.Type) [][]int {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var keys [][]int
	for _, f := range codec.LayoutOf(t).Fields {
		key := false
		codec.ReadTags(f.Tag, func(_, tag string) {
			opts := strings.Split(tag, ",")[1:]
			key = key || slices.Contains(opts, "hash") || slices.Contains(opts, "range")
		})
		if key {
			keys = append(keys, f.Index)
		}
	}
	return keys
}

// shallowCopy returns it, or for a pointer a pointer to a copy of what it
// points to, so that a function changing its item in place leaves the
// scanned one (its key) as it was.
func shallowCopy[T any](it T) T {
	v := reflect.ValueOf(it)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return it
	}
	c := reflect.New(v.Type().Elem())
	c.Elem().Set(v.Elem())
	return c.Interface().(T)
}

// keyValues returns the values of item's key fields at paths, and false
// when it cannot tell them (a nil pointer on the way, an unexported field):
// the caller then goes through Update, which compares the encoded keys.
func keyValues(item any, paths [][]int) ([]any, bool) {
	vals := make([]any, len(paths))
	for i, path := range paths {
		v := fieldAt(item, path)
		if !v.IsValid() || !v.CanInterface() {
			return nil, false
		}
		vals[i] = v.Interface()
	}
	return vals, true
}

// sameKey reports whether item holds the key values key (of keyValues).
func sameKey(key []any, item any, paths [][]int) bool {
	vals, ok := keyValues(item, paths)
	return ok && reflect.DeepEqual(key, vals)
}

// setVersion sets the version field at path of *item to v, when it can
// (a nil pointer on the way leaves it: the write then conflicts and goes
// through Update).
func setVersion(item any, path []int, v int64) {
	f := fieldAt(item, path)
	for f.IsValid() && f.Kind() == reflect.Pointer && !f.IsNil() {
		f = f.Elem()
	}
	switch {
	case !f.IsValid() || !f.CanSet():
	case f.CanInt():
		f.SetInt(v)
	case f.CanUint():
		f.SetUint(uint64(v))
	}
}

// fieldAt returns the field of item at path, or the zero Value when a nil
// pointer is on the way.
func fieldAt(item any, path []int) reflect.Value {
	v := reflect.ValueOf(item)
	for _, i := range path {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}
			}
			v = v.Elem()
		}
		v = v.Field(i)
	}
	return v
}

// modelsAttr reports whether the struct type t (or *t) models the
// attribute name, in the codec's one field list (codec.LayoutOf).
func modelsAttr(t reflect.Type, name string) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return false
	}
	return slices.ContainsFunc(codec.LayoutOf(t).Fields, func(f codec.Field) bool { return f.Name == name })
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
