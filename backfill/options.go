package backfill

import (
	"time"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/lease"
)

// Defaults.
const (
	DefaultSegments     = 8
	DefaultPageSize     = 100
	DefaultMark         = "backfill"
	DefaultPollInterval = time.Second
	DefaultMaxFailures  = 100
	// DefaultCheckpointInterval is how long a segment works between two
	// checkpoints at most (see WithCheckpointInterval).
	DefaultCheckpointInterval = time.Second
)

// Option configures NewMigration, NewQueryMigration and NewCleanMigration
// (and their deprecated forms New, NewQuery and Clean).
type Option func(*options)

type options struct {
	leases       *lease.Client
	checkpoints  string
	segments     int
	pageSize     int
	readRate     float64
	writeRate    float64
	dryRun       bool
	skipFailures bool
	mark         string
	mapperOpts   []dynamo.Option // MapperOptions (deprecated New, NewQuery and Clean only)
	mapperSet    bool
	clock        clock.Clock
	poll         time.Duration
	maxFailures  int
	clean        string // Clean: the id of the migration whose mark is removed
	cpEvery      time.Duration
	consistent   bool
	index        string
	segmentsSet  bool
}

// WithFleet makes the migration's segments the keys of a lease group of
// leases, so that every process that runs the migration with the same id
// takes a share of them, and keeps each segment's checkpoint (its cursor)
// in the table checkpoints, written only while the segment's lease is held.
// checkpoints needs a string hash key "key": the lease table itself does
// (its records are under "\x00backfill:<id>\x00<segment>", a prefix the
// lease package leaves alone). Required, except with WithDryRun.
func WithFleet(leases *lease.Client, checkpoints string) Option {
	return func(o *options) { o.leases, o.checkpoints = leases, checkpoints }
}

// WithSegments sets the number of scan segments (default DefaultSegments, 8;
// 1 to 1,000,000). Every process running the migration must pass the same
// number: it is part of the checkpoints' meaning. Segments bound the
// parallelism: each segment is worked on by one goroutine at a time, in one
// process of the fleet, and a process has at most one write in flight per
// segment it holds (a segment's goroutine writes items of the process's
// other segments once its own has none left to take).
func WithSegments(n int) Option { return func(o *options) { o.segments, o.segmentsSet = n, true } }

// WithPageSize sets how many items a scan (or query) request reads
// (DynamoDB's Limit; default DefaultPageSize, 100). Checkpoints fall
// between pages: see WithCheckpointInterval for the work a crash can make a
// segment's next holder look at again.
func WithPageSize(n int) Option { return func(o *options) { o.pageSize = n } }

// WithCapacity limits the capacity this process consumes to read and write
// units per second, as DynamoDB reports them (ReturnConsumedCapacity); a
// request waits until the units already consumed fit in the budget. Zero
// (the default) is no limit. Split a fleet's budget among its processes.
// Requests that DynamoDB throttles are sent again after a backoff whatever
// the budget.
func WithCapacity(read, write float64) Option {
	return func(o *options) { o.readRate, o.writeRate = read, write }
}

// WithDryRun makes Run scan and call the function on every item, counting what
// would change (Progress.Changed) and writing nothing: no item, no
// checkpoint, no lease. All segments run in this process, from the start;
// the migration's checkpoints are not read, so after it finished only a
// function that returns dynamo.ErrNoChange for items in the new form counts
// nothing.
func WithDryRun() Option { return func(o *options) { o.dryRun = true } }

// WithSkipFailures makes Run record an item whose function or write fails
// (Progress.Failures, and the segment's checkpoint: at most 100 per
// segment) and go on, instead of stopping with the error (the default).
// The next Run of the migration tries the recorded items again first, even
// once the migration finished: fix the function or the items and rerun.
func WithSkipFailures() Option { return func(o *options) { o.skipFailures = true } }

// WithMark sets the attribute in which an earlier release of this package
// recorded the migration that changed an item last (default DefaultMark,
// "backfill"), for Clean to remove. Migrations of this release write no
// mark (each page commits with its checkpoint) and ignore the option.
func WithMark(attr string) Option { return func(o *options) { o.mark = attr } }

// WithClock sets the clock of the capacity budget, backoffs, the
// completion poll and the estimate of time left (default the system clock).
func WithClock(c clock.Clock) Option { return func(o *options) { o.clock = c } }

// WithPollInterval sets how often Run reads the checkpoints of the segments
// other processes work on, to learn whether the whole migration is done
// (default DefaultPollInterval, 1 s). Segments this process works on, and
// segments known done, are not read.
func WithPollInterval(d time.Duration) Option { return func(o *options) { o.poll = d } }

// WithCheckpointInterval sets how long a segment works between two checkpoints
// at most (default DefaultCheckpointInterval, 1 s; 0 writes one after every
// page). A checkpoint is written after the first page that ends d or more
// after the last one, when the segment is done, and when Run stops (ctx
// done, or an item failing) while the segment's lease is still held. A
// process that dies loses at most the pages it finished since its last
// checkpoint, and the one it was working on, only where they changed
// nothing (a page with changes commits its checkpoint with them): the
// segment's next holder scans them again, at their share of the read units.
func WithCheckpointInterval(d time.Duration) Option { return func(o *options) { o.cpEvery = d } }

// WithStronglyConsistent makes the scan (or query) read strongly consistent,
// at twice the read units. The default, eventually consistent, is safe:
// each write is conditioned on the item as read, so an item read stale
// only conflicts, and is read again, strongly consistent, before it
// changes (as after a live write). What an eventually consistent
// read may miss is an item written within about a second before its page
// is read, by a writer that wrote it in the old form: ask for this when
// writers of the old form may still be running as the migration starts.
func WithStronglyConsistent() Option { return func(o *options) { o.consistent = true } }

// WithIndex makes a query migration (NewQueryMigration) query the secondary index name
// instead of the table. Each item found is read again from the table
// (strongly consistent) before it changes, as an index may project only
// some attributes; a function that changes the index's sort key is refused
// (the item would move along the query). A scan migration (NewMigration)
// refuses it.
func WithIndex(name string) Option { return func(o *options) { o.index = name } }
