package lease

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/internal/ident"
)

// Defaults.
const (
	DefaultLeaseDuration = 20 * time.Second
	DefaultClockSkewRate = 1.25
	DefaultTTL           = 7 * 24 * time.Hour

	// MaxLeaseDuration is the longest lease duration New accepts. With the
	// largest skew rate (MaxClockSkewRate) a waiter's wait stays far inside
	// time.Duration's range.
	MaxLeaseDuration = 24 * time.Hour
	// MaxClockSkewRate is the largest skew rate New accepts.
	MaxClockSkewRate = 100
	// MaxWait bounds a waiter's wait on a silent holder, lease duration ×
	// skew rate: New refuses options whose product exceeds it.
	MaxWait = 7 * 24 * time.Hour
)

// Option configures a Client.
type Option func(*options)

type options struct {
	duration  time.Duration
	heartbeat time.Duration // 0: duration / 4
	poll      time.Duration // 0: min(1 s, duration / 10)
	skew      float64
	owner     string // "": host name + random suffix
	clock     clock.Clock
	logger    *slog.Logger
	data      []byte
	ttl       time.Duration
}

// WithLeaseDuration sets how long a lease lasts without a heartbeat
// (default DefaultLeaseDuration, 20 s; from 1 ms to MaxLeaseDuration, and
// times the skew rate at most MaxWait). It is stored with each record in
// whole milliseconds, rounded up, so waiters use the holder's duration (never
// a shorter one), not their own.
func WithLeaseDuration(d time.Duration) Option { return func(o *options) { o.duration = d } }

// WithHeartbeatInterval sets how often a holder extends its leases (default
// a quarter of the lease duration). It must be shorter than the duration.
func WithHeartbeatInterval(d time.Duration) Option { return func(o *options) { o.heartbeat = d } }

// WithPollInterval sets how often a waiting Acquire reads the record
// (default a tenth of the lease duration, at most 1 s).
func WithPollInterval(d time.Duration) Option { return func(o *options) { o.poll = d } }

// WithClockSkewRate sets how much faster the fastest clock may tick than the
// slowest (default DefaultClockSkewRate, 1.25; from 1 to MaxClockSkewRate,
// and times the lease duration at most MaxWait). A waiter takes a
// silent lease over after duration × rate on its own clock.
func WithClockSkewRate(r float64) Option { return func(o *options) { o.skew = r } }

// WithOwner names this client in the records it writes (default the host
// name and a random suffix). Names must be unique among live clients.
func WithOwner(name string) Option { return func(o *options) { o.owner = name } }

// WithClock sets the clock that measures durations (default clock.Real()).
// Tests pass a *clock.Fake.
func WithClock(c clock.Clock) Option { return func(o *options) { o.clock = c } }

// WithLogger sets where the client logs acquisitions, takeovers, losses and
// failed heartbeats (default: the logger of the Mapper, dynamo.WithLogger;
// nowhere when it has none). Keys and owners are logged only with the
// mapper's dynamo.WithTelemetryKeys; keys taken and released at Debug.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithData stores data with every lease the client acquires (default none);
// Client.Holder returns it, e.g. a leader's address.
func WithData(data []byte) Option {
	return func(o *options) { o.data = append([]byte(nil), data...) }
}

// WithTTL sets how long after its last write a record may be removed by
// DynamoDB's TTL (default DefaultTTL, 7 days). It must exceed the lease
// duration × skew rate by far; TTL only cleans up: a holder moves its
// record's expiry on at every heartbeat (a group worker, that of a key it
// holds once per half TTL).
func WithTTL(d time.Duration) Option { return func(o *options) { o.ttl = d } }

func buildOptions(opts []Option) (options, error) {
	o := options{duration: DefaultLeaseDuration, skew: DefaultClockSkewRate, ttl: DefaultTTL}
	for _, fn := range opts {
		fn(&o)
	}
	if o.duration < time.Millisecond || o.duration > MaxLeaseDuration {
		return o, fmt.Errorf("lease: WithLeaseDuration(%v): use a positive duration from 1ms to %v (lease.MaxLeaseDuration)", o.duration, MaxLeaseDuration)
	}
	if o.heartbeat == 0 {
		o.heartbeat = o.duration / 4
	}
	if o.heartbeat <= 0 || o.heartbeat >= o.duration {
		return o, fmt.Errorf("lease: WithHeartbeatInterval(%v): use a positive interval shorter than the lease duration %v", o.heartbeat, o.duration)
	}
	if o.poll == 0 {
		o.poll = min(time.Second, o.duration/10)
	}
	if o.poll <= 0 {
		return o, fmt.Errorf("lease: WithPollInterval(%v): use a positive duration", o.poll)
	}
	if !(o.skew >= 1) || o.skew > MaxClockSkewRate {
		return o, fmt.Errorf("lease: WithClockSkewRate(%v): use a rate from 1 to %d, e.g. 1.25", o.skew, MaxClockSkewRate)
	}
	// Compared in float64, so that the product cannot wrap around.
	if float64(o.duration)*o.skew > float64(MaxWait) {
		return o, fmt.Errorf("lease: WithLeaseDuration(%v) × WithClockSkewRate(%v) waits %.0fh on a silent holder, over lease.MaxWait (%v): shorten the lease or lower the rate",
			o.duration, o.skew, float64(o.duration)*o.skew/float64(time.Hour), MaxWait)
	}
	if float64(o.ttl) < 10*o.skew*float64(o.duration) || o.ttl < time.Hour {
		return o, fmt.Errorf("lease: WithTTL(%v): use at least an hour and ten lease durations × skew rate", o.ttl)
	}
	if o.clock == nil {
		o.clock = clock.Real()
	}
	if o.owner == "" {
		o.owner = ident.Owner("lease")
	}
	return o, nil
}
