package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

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
	Version    int64  `dynamo:"version,version"`
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
	Key      string
	Owner    string // the holder, or the last holder when Released
	Token    int64
	Released bool
	Duration time.Duration // the holder's lease duration
	Data     []byte
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
	for {
		if err := c.checkOpen(); err != nil {
			return nil, err
		}
		cur, err := c.table.Load(ctx, record{Key: key}, dynamo.ConsistentRead())
		readAt := clk.Now()
		switch {
		case errors.Is(err, dynamo.ErrNotFound):
			l, err := c.take(ctx, key, nil)
			if l != nil || !errors.Is(err, dynamo.ErrVersionConflict) {
				return l, err
			}
			continue // someone created it first: read it again
		case err != nil:
			return nil, fmt.Errorf("lease: acquire %q: %w", key, err)
		case cur.Released:
			l, err := c.take(ctx, key, &cur)
			if l != nil || !errors.Is(err, dynamo.ErrVersionConflict) {
				return l, err
			}
			continue
		}
		if !wait {
			return nil, fmt.Errorf("%w: %q by %s (token %d)", ErrHeld, key, cur.Owner, cur.Token)
		}
		if seen == nil || seen.Version != cur.Version {
			seen, seenAt = &cur, readAt
		} else if patience := c.patience(cur); clk.Now().Sub(seenAt) >= patience {
			c.log.Info("taking over a silent lease", "key", key, "holder", cur.Owner, "token", cur.Token, "silent_for", clk.Now().Sub(seenAt))
			l, err := c.take(ctx, key, &cur)
			if l != nil || !errors.Is(err, dynamo.ErrVersionConflict) {
				return l, err
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
// version of cur (on the record's absence when cur is nil).
func (c *Client) take(ctx context.Context, key string, cur *record) (*Lease, error) {
	clk := c.o.clock
	next := record{
		Key:        key,
		Owner:      c.o.owner,
		DurationMS: c.o.duration.Milliseconds(),
		Data:       c.o.data,
		Expires:    clk.Now().Add(c.o.ttl).Unix(),
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
		if errors.Is(err, dynamo.ErrVersionConflict) {
			return nil, err
		}
		return nil, fmt.Errorf("lease: acquire %q: %w", key, err)
	}
	l := newLease(c, saved, sentAt)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		_ = l.Release(context.WithoutCancel(ctx))
		return nil, ErrClosed
	}
	c.leases[l] = struct{}{}
	c.mu.Unlock()
	c.log.Info("acquired", "key", key, "token", saved.Token)
	go l.heartbeat()
	return l, nil
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
