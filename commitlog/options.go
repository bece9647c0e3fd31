package commitlog

import (
	"log/slog"
	"time"

	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/internal/ident"
)

// Defaults of the options.
const (
	// DefaultTimeout is how long a Committer holds a record to perform one
	// store operation (WithTimeout).
	DefaultTimeout = 20 * time.Second
	// DefaultClockSkewRate is how much faster the fastest clock may tick
	// than the slowest (WithClockSkewRate).
	DefaultClockSkewRate = 3.0
	// DefaultMaxClockSkewRate is DefaultClockSkewRate under its earlier
	// name; prefer DefaultClockSkewRate.
	DefaultMaxClockSkewRate = DefaultClockSkewRate
	// MaxTimeout is the longest timeout accepted (WithTimeout): a waiter
	// waits timeout × skew rate, which must stay far from overflowing.
	MaxTimeout = 24 * time.Hour
	// DefaultTTL is how long a Committer's record is kept before DynamoDB's
	// TTL may remove it (WithTTL).
	DefaultTTL = time.Hour
	// DefaultPollInterval is how often a waiting Committer sends HEAD to the
	// store (WithPollInterval).
	DefaultPollInterval = 100 * time.Millisecond
)

// Option configures a Committer or a Log. Every option applies to a
// Committer; WithTTL and WithPollInterval do not apply to a Log (its claims
// are the log and never expire, and it never waits for another writer), and
// OpenLog refuses them with an error wrapping ErrInvalidInput rather than
// ignore them.
type Option func(*options)

type options struct {
	timeout time.Duration
	skew    float64
	ttl     time.Duration
	poll    time.Duration
	clock   clock.Clock
	logger  *slog.Logger
	owner   string
	ttlSet  bool // WithTTL was given
	pollSet bool // WithPollInterval was given
}

// WithTimeout sets how long a Committer may take, from just before it writes
// its record, to perform the store operation (default DefaultTimeout, 20 s).
// The timeout is stored in the record, so waiters use the holder's timeout,
// not their own. A holder that finds its timeout passed before it starts the
// operation gives up with ErrTimeout. For a Log it bounds each copy of an
// entry to its final name, and is the age after which another writer
// treats an incomplete claim as abandoned and finishes it. It must be from
// 1 ms to MaxTimeout (24 h), and the TTL at least ten timeouts × the skew
// rate. It is stored in records in whole milliseconds, rounded up.
//
// The timeout is also the bound the protocol assumes on a store write in
// flight: a write the Committer gave up on must land, if ever, before any
// waiter reclaims the record (see "Assumptions" in the package
// documentation). Pick it far above the time a write takes.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithClockSkewRate sets the clock skew rate tolerated: how much faster the
// fastest clock among the writers may tick than the slowest (default
// DefaultClockSkewRate, 3; from 1 to 100). A waiter reclaims a record that
// has not been marked done after the holder's timeout × this rate, measured
// on its own clock from after it saw the record. A Log treats another
// writer's incomplete claim as abandoned (and finishes it) once it is older
// than the timeout × this rate by its own clock. Same name and meaning as
// lease.WithClockSkewRate.
func WithClockSkewRate(r float64) Option { return func(o *options) { o.skew = r } }

// WithTTL sets how long after it was written a Committer's record may be
// removed by DynamoDB's TTL (default DefaultTTL, 1 h). It must be at least
// ten timeouts × skew rate; TTL only cleans up, nothing depends on it. Log
// claims never expire — they are the log — so OpenLog refuses this option.
func WithTTL(d time.Duration) Option { return func(o *options) { o.ttl, o.ttlSet = d, true } }

// WithPollInterval sets how often a Committer that waits for another
// writer's record sends HEAD to the store to fail fast when the object
// changed (default DefaultPollInterval, 100 ms). It must be positive. A Log
// never waits for another writer, so OpenLog refuses this option.
func WithPollInterval(d time.Duration) Option {
	return func(o *options) { o.poll, o.pollSet = d, true }
}

// WithClock sets the clock that measures timeouts and waiting (default
// clock.Real(), whose durations use the monotonic clock). Tests pass a
// *clock.Fake.
func WithClock(c clock.Clock) Option { return func(o *options) { o.clock = c } }

// WithLogger sets where reclaimed records, abandoned operations and failed
// clean-ups are logged (default: the logger of the Mapper, dynamo.WithLogger;
// nowhere when it has none). Paths and owners are logged only with the
// mapper's dynamo.WithTelemetryKeys.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithOwner names this Committer or Log in the records it writes (default
// the host name and a random suffix). It is for people reading the table;
// the protocol does not depend on it.
func WithOwner(name string) Option { return func(o *options) { o.owner = name } }

func buildOptions(opts []Option) (options, error) {
	o := options{timeout: DefaultTimeout, skew: DefaultClockSkewRate, ttl: DefaultTTL, poll: DefaultPollInterval}
	for _, fn := range opts {
		if fn != nil {
			fn(&o)
		}
	}
	if o.timeout < time.Millisecond || o.timeout > MaxTimeout {
		return o, invalid("commitlog: WithTimeout(%v): use a duration from 1 ms to %v, e.g. 20s", o.timeout, MaxTimeout)
	}
	if !(o.skew >= 1) || o.skew > 100 {
		return o, invalid("commitlog: WithClockSkewRate(%v): use a rate from 1 to 100, e.g. 3", o.skew)
	}
	if o.poll <= 0 {
		return o, invalid("commitlog: WithPollInterval(%v): use a positive duration, e.g. 100ms", o.poll)
	}
	// timeout ≤ 24 h and skew ≤ 100: ten times their product is far below
	// the largest Duration (292 years), so the conversion cannot wrap.
	if minTTL := time.Duration(10 * o.skew * float64(o.timeout)); o.ttl < minTTL {
		return o, invalid("commitlog: WithTTL(%v): use at least ten timeouts × skew rate (%v), e.g. WithTTL(%v)", o.ttl, minTTL, minTTL.Round(time.Minute)+time.Minute)
	}
	if o.clock == nil {
		o.clock = clock.Real()
	}
	if o.owner == "" {
		o.owner = defaultOwner()
	}
	return o, nil
}

// defaultOwner is the host name and a random suffix.
func defaultOwner() string { return ident.Owner("commitlog") }
