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
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/internal/telemetry"
)

// Lease is a held lease. Its loss closes Done and cancels Context at the
// same moment; Err says why. A Lease is safe for concurrent use.
type Lease struct {
	c        *Client
	key      string
	token    int64
	attempt  string    // the record's attempt id: this acquisition's incarnation
	acquired time.Time // on c.o.clock, before the acquiring write was sent

	ctx     context.Context // cancelled with the reason when the lease ends
	cancel  context.CancelCauseFunc
	endOnce sync.Once // the lease ends once (end), whichever goroutine ends it

	beatCtx  context.Context // the heartbeat's requests; cancelled by Release or the lease's end
	stopBeat context.CancelFunc
	beatDone chan struct{} // closed when the heartbeat goroutine has exited

	releaseMu sync.Mutex // serialises Release calls
	released  bool       // the released record was written; guarded by releaseMu

	mu       sync.Mutex
	rec      record      // the record as we last wrote it; guarded by mu
	deadline time.Time   // on c.o.clock: when the lease ends unless extended; guarded by mu
	watchdog clock.Timer // fires at deadline; guarded by mu
}

// newLease makes a Lease of the record rec this client wrote (sent at
// sentAt) and arms its watchdog; start starts its heartbeat.
func newLease(c *Client, rec record, sentAt time.Time) *Lease {
	l := newHeld(c, rec, sentAt, context.Background())
	l.mu.Lock()
	l.deadline = sentAt.Add(c.o.duration)
	l.arm()
	l.mu.Unlock()
	return l
}

// newGroupLease makes a Lease of the record rec a group worker wrote (sent
// at sentAt). It has no heartbeat or watchdog of its own: the worker's
// record keeps it, and it ends when parent — the worker's membership —
// ends, with parent's cause, if not before.
func newGroupLease(c *Client, rec record, sentAt time.Time, parent context.Context) *Lease {
	l := newHeld(c, rec, sentAt, parent)
	close(l.beatDone)
	return l
}

// newHeld makes a held Lease of rec, ending with parent, and counts it in
// ddbkit.lease.held: every Lease, a single one or a group's key, is counted
// in here, when it is made, and out by end, once.
func newHeld(c *Client, rec record, sentAt time.Time, parent context.Context) *Lease {
	ctx, cancel := context.WithCancelCause(parent)
	l := &Lease{
		c: c, key: rec.Key, token: rec.Token, attempt: rec.Attempt, acquired: sentAt, ctx: ctx, cancel: cancel,
		beatDone: make(chan struct{}), rec: rec,
	}
	l.beatCtx, l.stopBeat = context.WithCancel(ctx)
	c.noteHeld(1)
	return l
}

// arm (re)starts the watchdog that ends the lease at its deadline; l.mu is
// held.
func (l *Lease) arm() {
	if l.watchdog != nil {
		l.watchdog.Stop()
	}
	d := l.deadline.Sub(l.c.o.clock.Now())
	l.watchdog = l.c.o.clock.AfterFunc(d, func() {
		l.end(fmt.Errorf("%w: %q (token %d) was not extended within its %v: another owner may take it over", ErrLost, l.key, l.token, l.c.o.duration))
	})
}

// end ends the lease for reason (the first reason wins). The end is
// counted, and a loss recorded (span, metric, log), before Done is closed:
// whoever watches Done finds them there. Called from the watchdog, the
// heartbeat, Release and guarded writes at once, it ends the lease once.
// A group's key that ended with its worker's membership (its parent
// context) is counted out by the first end called after, and counted lost
// (ddbkit.lease.lost and a lease.Lost span, no log: the membership's loss
// is logged once) when the membership was lost, not left.
func (l *Lease) end(reason error) {
	l.endOnce.Do(func() {
		l.c.noteHeld(-1)        // counted in by newHeld
		if l.ctx.Err() != nil { // ended with its parent context
			if cause := context.Cause(l.ctx); errors.Is(cause, ErrLost) {
				l.noteLost(cause)
			}
			return
		}
		if !errors.Is(reason, ErrReleased) {
			l.noteLost(reason)
			l.c.log.Warn(context.Background(), "lease lost", telemetry.ID("key", l.key), slog.Int64("token", l.token), slog.String("reason", lostClass(reason)), telemetry.Err("err", reason))
		}
		l.cancel(reason)
	})
}

// Key returns the key the lease is on.
func (l *Lease) Key() string { return l.key }

// Token returns the lease's fencing token: strictly greater for every later
// holder of the key. Pass it to the systems the lease protects so they can
// refuse writes from older holders.
func (l *Lease) Token() int64 { return l.token }

// Done is closed when the lease is lost or released.
func (l *Lease) Done() <-chan struct{} { return l.ctx.Done() }

// Context returns a context cancelled when the lease is lost or released;
// context.Cause tells why (as Err does).
func (l *Lease) Context() context.Context { return l.ctx }

// Err returns nil while the lease is held, then why it ended: an error
// wrapping ErrLost or ErrReleased.
func (l *Lease) Err() error {
	if l.ctx.Err() == nil {
		return nil
	}
	return context.Cause(l.ctx)
}

// heartbeat extends the lease every heartbeat interval until it is
// released or lost. Each beat is timed from before the write that last
// extended the lease — the first from before the write that took it — as
// its deadline is, not from when that write's answer came: a slow answer
// must not leave the next beat after the deadline.
func (l *Lease) heartbeat() {
	defer close(l.beatDone)
	beats(l.beatCtx, l.c.o, l.nextBeat, l.extend, func(err error) {
		l.end(err)
		if errors.Is(err, errRecordDeleted) {
			// Say so in the token record, now that the lease has ended,
			// so that the next holder need not wait for us to give up.
			ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
			l.releaseToken(ctx)
			cancel()
		}
	}, func(err error) {
		// Tried again sooner; the watchdog ends the lease if this goes on.
		l.c.log.Warn(l.beatCtx, "heartbeat failed", telemetry.ID("key", l.key), slog.Int64("token", l.token), telemetry.Err("err", err))
	})
}

// beats is the loop of a heartbeat, a lease's or a group member's, until
// ctx ends: it waits next(), then calls extend; after an error wrapping
// ErrLost it calls lost and returns; after another error it calls failed
// and tries again a quarter heartbeat later.
func beats(ctx context.Context, o options, next func() time.Duration, extend func() error, lost, failed func(error)) {
	interval := next()
	for {
		t := o.clock.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		err := extend()
		switch {
		case err == nil:
			interval = next()
		case errors.Is(err, ErrLost):
			lost(err)
			return
		default:
			failed(err)
			interval = max(o.heartbeat/4, time.Millisecond)
		}
	}
}

// nextBeat is the wait until the next heartbeat: a heartbeat interval from
// before the write that set the deadline (the deadline less the lease
// duration), at once when that moment has passed.
func (l *Lease) nextBeat() time.Duration {
	o := l.c.o
	l.mu.Lock()
	at := l.deadline.Add(o.heartbeat - o.duration)
	l.mu.Unlock()
	return max(at.Sub(o.clock.Now()), 0)
}

// extend writes the record again (a new version), on condition that it is
// still ours, and moves the deadline to the moment before sending plus the
// lease duration.
func (l *Lease) extend() error {
	clk := l.c.o.clock
	l.mu.Lock()
	next := l.rec
	l.mu.Unlock()
	next.Expires = clk.Now().Add(l.c.o.ttl).Unix()
	sentAt := clk.Now()
	saved, err := l.c.table.Save(l.beatCtx, next, dynamo.If(ownedBy(l.c.o.owner, l.token, l.attempt)))
	if err != nil {
		if cur, ok := l.ownRecord(err); ok {
			// An earlier heartbeat of ours was applied although its call
			// failed: carry on from that version. The deadline stays, since
			// when that write happened is unknown.
			l.mu.Lock()
			l.rec = cur
			l.mu.Unlock()
			return fmt.Errorf("lease: heartbeat of %q found its own earlier write (version %d); extending again", l.key, cur.Version)
		}
		return l.lostReason(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx.Err() != nil {
		return nil // ended meanwhile; stays ended
	}
	l.rec = saved
	l.deadline = sentAt.Add(l.c.o.duration)
	l.arm()
	return nil
}

// errRecordDeleted is wrapped by the ErrLost of a lease whose record was
// found deleted.
var errRecordDeleted = errors.New("the record was deleted")

// ownRecord reports whether a failed conditional write failed only because
// the record holds a newer version written by this lease itself (a write
// whose call failed after DynamoDB applied it), and returns that record.
func (l *Lease) ownRecord(err error) (record, bool) {
	var ce *dynamo.ConditionError
	if !errors.As(err, &ce) {
		return record{}, false
	}
	cur, derr := l.c.table.Current(err)
	if derr != nil || !l.mine(cur) || cur.Released {
		return record{}, false
	}
	return cur, true
}

// mine reports whether r is this lease's incarnation of the record.
func (l *Lease) mine(r record) bool {
	return r.Owner == l.c.o.owner && r.Token == l.token && r.Attempt == l.attempt
}

// lostReason turns a failed conditional write into an ErrLost error that
// says who has the lease now; other errors are returned as they are.
func (l *Lease) lostReason(err error) error {
	var ce *dynamo.ConditionError
	if !errors.As(err, &ce) {
		return err
	}
	cur, derr := l.c.table.Current(err)
	switch {
	case errors.Is(derr, dynamo.ErrNotFound):
		return fmt.Errorf("%w: %q (token %d): %w", ErrLost, l.key, l.token, errRecordDeleted)
	case derr != nil:
		return fmt.Errorf("%w: %q (token %d): %w", ErrLost, l.key, l.token, err)
	case cur.Released:
		return fmt.Errorf("%w: %q (token %d): released by %s (token %d)", ErrLost, l.key, l.token, cur.Owner, cur.Token)
	default:
		return fmt.Errorf("%w: %q (token %d): taken over by %s with token %d", ErrLost, l.key, l.token, cur.Owner, cur.Token)
	}
}

// Release gives the lease up: Done is closed first, then the record is
// marked released (never deleted, so tokens keep growing) and the next
// waiter takes it at once; the key's token record is marked released too,
// so that if the record is deleted later, the next holder need not wait.
// Release is idempotent: it returns nil for a lease already released, or
// lost to another holder, or whose record was deleted. An error means the
// record could not be written; the lease has ended all the same, and others
// take it over after its duration × skew rate. When a write may have been
// applied without an answer, Release reads the record to tell; if it cannot,
// the error wraps dynamo.ErrUnknownOutcome (the record may or may not say
// released). ctx bounds the writes.
//
// IAM: dynamodb:UpdateItem (the record; heartbeats too), dynamodb:PutItem (the
// token record) and dynamodb:GetItem (to settle a lost answer) on the lease
// table.
func (l *Lease) Release(ctx context.Context) error {
	ctx, span := l.c.span(ctx, "lease.Release", l.key)
	err := l.release(ctx)
	endSpan(span, l, err)
	return err
}

func (l *Lease) release(ctx context.Context) error {
	l.stopBeat()
	<-l.beatDone
	l.mu.Lock()
	if l.watchdog != nil {
		l.watchdog.Stop()
	}
	next := l.rec
	l.mu.Unlock()
	l.end(fmt.Errorf("%w: %q (token %d)", ErrReleased, l.key, l.token))

	l.releaseMu.Lock()
	defer l.releaseMu.Unlock()
	if l.released {
		return nil
	}
	// Even a lease that ran out is marked released if the record is still
	// ours, so that waiters need not wait it out.
	var err error
	done := false // the record is released, or not ours
	for range 3 {
		next.Released = true
		next.Expires = l.c.o.clock.Now().Add(l.c.o.ttl).Unix()
		_, err = l.c.table.Save(ctx, next, dynamo.If(ownedBy(l.c.o.owner, l.token, l.attempt)))
		if err == nil {
			done = true
			break
		}
		cur, known := l.whose(ctx, err)
		if !known {
			break
		}
		if !l.mine(cur) || cur.Released {
			// Taken over, deleted, or our own release landed unanswered.
			done, err = true, nil
			break
		}
		next = cur // a heartbeat (or release) cut short was applied: release that version
	}
	if !done {
		if maybeApplied(err) {
			return fmt.Errorf("lease: release %q (token %d): %w (%w: the record may or may not be marked released)", l.key, l.token, err, dynamo.ErrUnknownOutcome)
		}
		return fmt.Errorf("lease: release %q (token %d): %w", l.key, l.token, err)
	}
	l.c.log.Debug(ctx, "released", telemetry.ID("key", l.key), slog.Int64("token", l.token))
	l.releaseToken(ctx)
	l.released = true
	l.c.forget(l)
	return nil
}

// whose tells, after a failed write of the record, what the record holds
// now: from the item a failed condition carries, or by reading it again
// when the write may have been applied. A missing record is the zero
// record. known is false when that cannot be told, or the write failed
// for good (then nothing was written).
func (l *Lease) whose(ctx context.Context, err error) (cur record, known bool) {
	var ce *dynamo.ConditionError
	if errors.As(err, &ce) {
		cur, derr := l.c.table.Current(err)
		if derr != nil && !errors.Is(derr, dynamo.ErrNotFound) {
			return record{}, false
		}
		return cur, true
	}
	if !maybeApplied(err) {
		return record{}, false
	}
	cur, rerr := l.c.table.Load(ctx, record{Key: l.key}, dynamo.ConsistentRead())
	if rerr != nil && !errors.Is(rerr, dynamo.ErrNotFound) {
		return record{}, false
	}
	return cur, true
}

// releaseToken marks the key's token record released, if it still names
// this acquisition. It is best effort: when it fails, a later holder that
// finds the record deleted waits this lease's duration × skew rate, as for
// a holder that died.
func (l *Lease) releaseToken(ctx context.Context) {
	l.mu.Lock()
	ms := l.rec.DurationMS
	l.mu.Unlock()
	t := tokenRecord{Key: tokenKey(l.key), Token: l.token, Owner: l.c.o.owner, Attempt: l.attempt, DurationMS: ms, Released: true}
	_, err := l.c.tokens.Save(ctx, t, dynamo.WithSaveBehavior(dynamo.SavePut), dynamo.If(expression.And(
		expression.Name("token").Equal(expression.Value(l.token)),
		expression.Name("attempt").Equal(expression.Value(l.attempt)))))
	if err != nil && !errors.Is(err, dynamo.ErrConditionFailed) {
		l.c.log.Warn(ctx, "marking the token record released failed", telemetry.ID("key", l.key), slog.Int64("token", l.token), telemetry.Err("err", err))
	}
}
