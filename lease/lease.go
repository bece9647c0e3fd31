package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/ddbkit/dynamo"
)

// Errors. Match them with errors.Is; the errors returned say more.
var (
	// ErrHeld is returned by TryAcquire when a holder has the lease.
	ErrHeld = errors.New("lease: held by another owner")
	// ErrLost means a lease is no longer held: taken over, or not extended
	// in time to be sure it is still ours. Lease.Err wraps it.
	ErrLost = errors.New("lease: lost")
	// ErrReleased is Lease.Err after Release.
	ErrReleased = errors.New("lease: released")
	// ErrClosed is returned by a Client after Close.
	ErrClosed = errors.New("lease: client closed")
)

// record is one lease, an item of the lease table.
type record struct {
	Key        string `dynamo:"key,hash"`
	Owner      string `dynamo:"owner"`
	Token      int64  `dynamo:"token"`
	Released   bool   `dynamo:"released"`
	DurationMS int64  `dynamo:"duration_ms"`
	Data       []byte `dynamo:"data,omitempty"`
	Expires    int64  `dynamo:"expires,ttl"` // epoch seconds; for TTL clean-up only
	// Attempt is random per acquisition: it lets a client whose write got
	// no clear answer recognise the record as its own.
	Attempt string `dynamo:"attempt,omitempty"`
	Version int64  `dynamo:"version,version"`
}

// Client acquires leases in one table. It is safe for concurrent use.
type Client struct {
	table *dynamo.Table[record]
	o     options
	log   *slog.Logger

	mu     sync.Mutex
	leases map[*Lease]struct{} // held leases; guarded by mu
	closed bool                // guarded by mu
}

// New returns a client for the lease table called table. It sends no
// request; CreateTable creates the table.
func New(m *dynamo.Mapper, table string, opts ...Option) (*Client, error) {
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	t, err := dynamo.NewTable[record](m, table)
	if err != nil {
		return nil, err
	}
	return &Client{table: t, o: o, log: o.logger.With("table", table, "owner", o.owner), leases: map[*Lease]struct{}{}}, nil
}

// Owner returns the name this client writes into the records it holds.
func (c *Client) Owner() string { return c.o.owner }

// CreateTable creates the lease table (on-demand, TTL on "expires") and
// waits until it is active. ctx bounds the whole call.
func (c *Client) CreateTable(ctx context.Context) error {
	return c.table.CreateTable(ctx)
}

// Info describes the current state of a key's record.
type Info struct {
	Key      string        // the lease's key
	Owner    string        // the holder, or the last holder when Released
	Token    int64         // the holder's fencing token
	Released bool          // the last holder released the lease
	Duration time.Duration // the holder's lease duration
	Data     []byte        // what the holder set with WithData
}

// Holder reads the record of key (strongly consistent). Whether a holder
// that has not released is still alive cannot be told from one read; an
// error wrapping dynamo.ErrNotFound means the key was never leased. ctx
// bounds the read.
func (c *Client) Holder(ctx context.Context, key string) (Info, error) {
	if err := checkKey(key); err != nil {
		return Info{}, err
	}
	r, err := c.table.Load(ctx, record{Key: key}, dynamo.ConsistentRead())
	if err != nil {
		return Info{}, err
	}
	return r.info(), nil
}

func (r record) info() Info {
	return Info{Key: r.Key, Owner: r.Owner, Token: r.Token, Released: r.Released,
		Duration: time.Duration(r.DurationMS) * time.Millisecond, Data: r.Data}
}

func checkKey(key string) error {
	if key == "" {
		return fmt.Errorf("lease: empty key: name the resource the lease guards")
	}
	return nil
}

// Acquire waits until it holds the lease on key, or ctx is done. A released
// or never-used key is taken at once; a key whose holder stopped
// heartbeating is taken over once its record has not changed for the
// holder's lease duration × the clock-skew rate on this client's clock. ctx
// bounds the waiting, not the lease.
//
// Failures that may pass — throttling, 5xx answers, connections that failed,
// once the SDK's own retries are spent — are waited through: Acquire reads
// the record again a poll interval later. A write of the record whose
// answer was lost is recognised by a random attempt id in the record, so a
// lease that was taken is not left without a holder. Other errors (no
// table, access denied, ...) are returned.
func (c *Client) Acquire(ctx context.Context, key string) (*Lease, error) {
	return c.acquire(ctx, key, true)
}

// TryAcquire takes the lease on key if nobody holds it: when the record is
// missing or released. Otherwise it returns an error wrapping ErrHeld at
// once, naming the holder — even if that holder has died, which only waiting
// can tell (use Acquire with a deadline for that). ctx bounds the requests.
func (c *Client) TryAcquire(ctx context.Context, key string) (*Lease, error) {
	return c.acquire(ctx, key, false)
}

func (c *Client) acquire(ctx context.Context, key string, wait bool) (*Lease, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	clk := c.o.clock
	var seen *record     // the holder's record as last read
	var seenAt time.Time // when seen's version was first read, on clk
	var pending *attempt // our last write, if its outcome is unknown
	for {
		if err := c.checkOpen(); err != nil {
			return nil, err
		}
		cur, err := c.table.Load(ctx, record{Key: key}, dynamo.ConsistentRead())
		readAt := clk.Now()
		if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
			if !wait || !transient(err) {
				return nil, fmt.Errorf("lease: acquire %q: %w", key, err)
			}
			// Acquire waits through failures that may pass (throttling,
			// 5xx, no answer): the SDK has already retried them.
			c.log.Warn("reading the lease record failed; reading it again", "key", key, "err", err)
			if err := c.pause(ctx, key, c.o.poll); err != nil {
				return nil, err
			}
			continue
		}
		if p := pending; p != nil && err == nil {
			pending = nil
			// Our write landed although we could not tell: the record is
			// ours if nobody has written it since, and young enough that
			// its deadline, counted from before the write, is ahead.
			if cur.Attempt == p.id && cur.Owner == c.o.owner && !cur.Released && clk.Now().Sub(p.sentAt) < c.o.duration/2 {
				c.log.Info("our write of the record landed although its answer was lost", "key", key, "token", cur.Token)
				return c.start(ctx, cur, p.sentAt)
			}
		}
		var from *record
		switch {
		case errors.Is(err, dynamo.ErrNotFound):
		case cur.Released:
			from = &cur
		case !wait:
			return nil, fmt.Errorf("%w: %q by %s (token %d)", ErrHeld, key, cur.Owner, cur.Token)
		case seen == nil || seen.Version != cur.Version:
			seen, seenAt = &cur, readAt
		case clk.Now().Sub(seenAt) >= c.patience(cur):
			c.log.Info("taking over a silent lease", "key", key, "holder", cur.Owner, "token", cur.Token, "silent_for", clk.Now().Sub(seenAt))
			from = &cur
		}
		if from != nil || errors.Is(err, dynamo.ErrNotFound) {
			l, p, err := c.take(ctx, key, from)
			switch {
			case l != nil:
				return l, nil
			case p != nil && errors.Is(err, dynamo.ErrVersionConflict):
				// ErrUnknownOutcome: read the record to see whose it is.
				pending = p
			case p != nil && wait:
				// No clear answer: the record tells, once it can be read.
				pending = p
				c.log.Warn("writing the lease record failed; reading it again", "key", key, "err", err)
				if err := c.pause(ctx, key, c.o.poll); err != nil {
					return nil, err
				}
			case errors.Is(err, dynamo.ErrVersionConflict):
				// Someone else wrote it first: read it again.
			default:
				return nil, err
			}
			seen = nil
			continue
		}
		wait := c.o.poll
		if seen != nil {
			// Wake up at the takeover moment if it comes before the next poll.
			wait = min(wait, max(c.patience(*seen)-clk.Now().Sub(seenAt), 0))
		}
		t := clk.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("lease: acquire %q (held by %s, token %d): %w", key, cur.Owner, cur.Token, context.Cause(ctx))
		case <-t.C():
		}
	}
}

// pause waits d on the client's clock, or until ctx is done.
func (c *Client) pause(ctx context.Context, key string, d time.Duration) error {
	t := c.o.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("lease: acquire %q: %w", key, context.Cause(ctx))
	case <-t.C():
		return nil
	}
}

// attempt is a write of a lease record whose outcome is unknown.
type attempt struct {
	id     string    // the record's Attempt
	sentAt time.Time // on the client's clock, before the write was sent
}

// transient reports whether a failed request may succeed if sent again
// later: throttling, a 5xx, a connection that failed — as the SDK's retryer
// classifies them. ctx ending is not transient.
func transient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary
}

// patience is how long a waiter watches an unchanged record before taking
// it over: the holder's duration × the skew rate.
func (c *Client) patience(r record) time.Duration {
	d := time.Duration(r.DurationMS) * time.Millisecond
	if d <= 0 {
		d = c.o.duration
	}
	return time.Duration(float64(d) * c.o.skew)
}

func (c *Client) checkOpen() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	return nil
}

// take writes a record naming this client as holder, conditioned on the
// version of cur (on the record's absence when cur is nil). When the
// outcome of the write is unknown — ErrUnknownOutcome, or a failure that
// may pass (transient) — it also returns the attempt, by which acquire
// can recognise the record as its own.
func (c *Client) take(ctx context.Context, key string, cur *record) (*Lease, *attempt, error) {
	clk := c.o.clock
	next := record{
		Key:        key,
		Owner:      c.o.owner,
		DurationMS: c.o.duration.Milliseconds(),
		Data:       c.o.data,
		Expires:    clk.Now().Add(c.o.ttl).Unix(),
		Attempt:    randomHex(8),
	}
	if cur == nil {
		// The first token of a record is the time in milliseconds: above
		// any token of a record of this key deleted (by TTL) days ago.
		next.Token = max(1, clk.Now().UnixMilli())
	} else {
		next.Token = cur.Token + 1
		next.Version = cur.Version
	}
	sentAt := clk.Now()
	saved, err := c.table.Save(ctx, next, dynamo.WithSaveBehavior(dynamo.SavePut))
	if err != nil {
		var p *attempt
		if errors.Is(err, dynamo.ErrUnknownOutcome) || transient(err) {
			p = &attempt{id: next.Attempt, sentAt: sentAt}
		}
		if errors.Is(err, dynamo.ErrVersionConflict) {
			return nil, p, err
		}
		return nil, p, fmt.Errorf("lease: acquire %q: %w", key, err)
	}
	l, err := c.start(ctx, saved, sentAt)
	return l, nil, err
}

// start makes a Lease of the record rec this client wrote, sent at sentAt,
// and starts its heartbeat.
func (c *Client) start(ctx context.Context, rec record, sentAt time.Time) (*Lease, error) {
	l := newLease(c, rec, sentAt)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		_ = l.Release(context.WithoutCancel(ctx))
		return nil, ErrClosed
	}
	c.leases[l] = struct{}{}
	c.mu.Unlock()
	c.log.Info("acquired", "key", rec.Key, "token", rec.Token)
	go l.heartbeat()
	return l, nil
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails
	return hex.EncodeToString(b)
}

// Close releases every lease the client holds and refuses new ones. ctx
// bounds the releases; a lease that cannot be released in time still stops
// heartbeating, so others take it over after its duration × skew rate.
func (c *Client) Close(ctx context.Context) error {
	c.mu.Lock()
	c.closed = true
	held := make([]*Lease, 0, len(c.leases))
	for l := range c.leases {
		held = append(held, l)
	}
	c.mu.Unlock()
	var errs []error
	for _, l := range held {
		if err := l.Release(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c *Client) forget(l *Lease) {
	c.mu.Lock()
	delete(c.leases, l)
	c.mu.Unlock()
}

// ownedBy is the condition that the record is still ours: the owner and
// token we wrote, not released. Versions are not part of it, since every
// heartbeat changes the version.
func ownedBy(owner string, token int64) expression.ConditionBuilder {
	return expression.And(
		expression.Name("owner").Equal(expression.Value(owner)),
		expression.Name("token").Equal(expression.Value(token)),
		expression.Name("released").Equal(expression.Value(false)),
	)
}
