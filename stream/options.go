package stream

import (
	"fmt"
	"time"

	"github.com/ddbkit/dynamo/clock"
)

// Position is where a processor starts reading a shard it has no checkpoint
// for: TrimHorizon (the oldest record kept) or Latest (records written from
// now on).
type Position int

const (
	TrimHorizon Position = iota // the default
	Latest
)

// Option configures New.
type Option func(*options)

type options struct {
	start      Position
	batch      int
	slots      int
	idleMin    time.Duration
	idleMax    time.Duration
	refresh    time.Duration
	onTrimmed  func(*TrimmedError) error
	clock      clock.Clock
	backoffMax time.Duration
	errs       []error
}

func defaults() options {
	return options{batch: 100, slots: 16, idleMin: 250 * time.Millisecond, idleMax: 5 * time.Second,
		refresh: 30 * time.Second, clock: clock.Real(), backoffMax: 5 * time.Second}
}

// WithStart sets where a shard without a checkpoint is first read. A child
// of a shard this processor read is always read from its start.
func WithStart(p Position) Option {
	return func(o *options) {
		if p != TrimHorizon && p != Latest {
			o.errs = append(o.errs, fmt.Errorf("WithStart(%d): use stream.TrimHorizon or stream.Latest", p))
		}
		o.start = p
	}
}

// WithBatchSize sets the most records a batch holds: 1 to 1000 (GetRecords'
// limit), default 100.
func WithBatchSize(n int) Option {
	return func(o *options) {
		if n < 1 || n > 1000 {
			o.errs = append(o.errs, fmt.Errorf("WithBatchSize(%d): use 1 to 1000 (GetRecords' limit)", n))
		}
		o.batch = n
	}
}

// WithSlots sets the number of keys of the processor's lease group (default
// 16, 1 to 1024): every shard belongs to one slot, and a worker holds about
// slots/workers of them. Every worker of a processor must use the same
// number.
func WithSlots(n int) Option {
	return func(o *options) {
		if n < 1 || n > 1024 {
			o.errs = append(o.errs, fmt.Errorf("WithSlots(%d): use 1 to 1024", n))
		}
		o.slots = n
	}
}

// WithIdleWait sets how long a shard that returned no records waits before
// it is read again: min at first, doubling up to max (default 250 ms, 5 s).
func WithIdleWait(min, max time.Duration) Option {
	return func(o *options) {
		if min <= 0 || max < min {
			o.errs = append(o.errs, fmt.Errorf("WithIdleWait(%v, %v): use 0 < min <= max", min, max))
		}
		o.idleMin, o.idleMax = min, max
	}
}

// WithShardRefresh sets how often each slot's holder lists the stream's
// shards to find new ones (default 30 s); a shard read to its end lists
// them at once.
func WithShardRefresh(d time.Duration) Option {
	return func(o *options) {
		if d <= 0 {
			o.errs = append(o.errs, fmt.Errorf("WithShardRefresh(%v): use a positive duration", d))
		}
		o.refresh = d
	}
}

// WithOnTrimmed is called with the records of a shard found trimmed before
// they were read; when it returns nil the loss is accepted and the shard is
// read on from its oldest record kept. Without it (or when it returns an
// error), Run stops with that error.
func WithOnTrimmed(f func(*TrimmedError) error) Option {
	return func(o *options) { o.onTrimmed = f }
}

// WithClock sets the clock that times idle waits, retries and shard
// refreshes (default the real one).
func WithClock(c clock.Clock) Option {
	return func(o *options) {
		if c == nil {
			o.errs = append(o.errs, fmt.Errorf("WithClock(nil): pass a clock"))
		}
		o.clock = c
	}
}
