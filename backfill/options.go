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
)

// Option configures New.
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
	mapperOpts   []dynamo.Option
	clock        clock.Clock
	poll         time.Duration
	maxFailures  int
	clean        string // Clean: the id of the migration whose mark is removed
}

// Fleet makes the migration's segments the keys of a lease group of
// leases, so that every process that runs the migration with the same id
// takes a share of them, and keeps each segment's checkpoint (its cursor)
// in the table checkpoints, written only while the segment's lease is held.
// checkpoints needs a string hash key "key": the lease table itself does
// (its records are under "\x00backfill:<id>\x00<segment>", a prefix the
// lease package leaves alone). Required, except for a DryRun.
func Fleet(leases *lease.Client, checkpoints string) Option {
	return func(o *options) { o.leases, o.checkpoints = leases, checkpoints }
}

// Segments sets the number of scan segments (default DefaultSegments, 8;
// 1 to 1,000,000). Every process running the migration must pass the same
// number: it is part of the checkpoints' meaning. Segments bound the
// parallelism: each segment is worked on by one goroutine at a time, in one
// process of the fleet.
func Segments(n int) Option { return func(o *options) { o.segments = n } }

// PageSize sets how many items a scan request reads (DynamoDB's Limit;
// default DefaultPageSize, 100). A checkpoint is written after every page,
// so it is also how much work a crash can make a segment's next holder look
// at again (items already changed are then skipped, not changed again).
func PageSize(n int) Option { return func(o *options) { o.pageSize = n } }

// Capacity limits the capacity this process consumes to read and write
// units per second, as DynamoDB reports them (ReturnConsumedCapacity); a
// request waits until the units already consumed fit in the budget. Zero
// (the default) is no limit. Split a fleet's budget among its processes.
// Requests that DynamoDB throttles are sent again after a backoff whatever
// the budget.
func Capacity(read, write float64) Option {
	return func(o *options) { o.readRate, o.writeRate = read, write }
}

// DryRun makes Run scan and call the function on every item not yet
// changed, counting what would change (Progress.Changed) and writing
// nothing: no item, no checkpoint, no lease. All segments run in this
// process, from the start.
func DryRun() Option { return func(o *options) { o.dryRun = true } }

// SkipFailures makes Run record an item whose function or write fails
// (Progress.Failures) and go on, instead of stopping with the error (the
// default). Failed items are not marked: run the migration again under
// another id, or fix and rerun, to retry them.
func SkipFailures() Option { return func(o *options) { o.skipFailures = true } }

// Mark sets the attribute that records which migration changed an item
// last (default DefaultMark, "backfill"). It holds the migration's id,
// written in the same UpdateItem as the change; items holding the id are
// skipped. T must not model the attribute. Remove it afterwards with
// Clean, or leave it: it costs a few bytes per item.
func Mark(attr string) Option { return func(o *options) { o.mark = attr } }

// MapperOptions are passed to the dynamo.NewMapper that the migration
// builds for its writes: give the options the service's own mapper uses
// (encoders, write token attribute, retry policy) so that items are written
// the same way.
func MapperOptions(opts ...dynamo.Option) Option {
	return func(o *options) { o.mapperOpts = append(o.mapperOpts, opts...) }
}

// WithClock sets the clock of the capacity budget, backoffs, the
// completion poll and the estimate of time left (default the system clock).
func WithClock(c clock.Clock) Option { return func(o *options) { o.clock = c } }

// PollInterval sets how often Run reads every segment's checkpoint to learn
// whether the whole migration is done (default DefaultPollInterval, 1 s).
func PollInterval(d time.Duration) Option { return func(o *options) { o.poll = d } }
