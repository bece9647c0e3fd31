package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"go.opentelemetry.io/otel/trace"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/internal/telemetry"
)

// A group worker releases the keys it lets go (handed over, or all of them
// when it leaves) in batches: up to releasesPerTx keys in one
// TransactWriteItems, each key's record and token record conditioned as a
// single Release's are, and up to releasesAtOnce such transactions at once.
// A transaction cancelled by some keys is sent again without them, once
// each is settled from the record its failure carries; one whose answer was
// lost is settled by reading the records back.
const (
	releasesPerTx  = dynamo.MaxTxItems / 2
	releasesAtOnce = 2
	releaseTries   = 4
)

// releasing is one key's part in a batched release.
type releasing struct {
	l       *Lease
	span    trace.Span
	next    record // the record to mark released: ours as last written or read
	withTok bool   // the token record is marked released in the same transaction
	wrote   bool   // settled by a transaction of this batch (the token record with it)
	done    bool   // settled: the record is released, or not ours
	err     error
}

// release releases l, batched with the other keys this worker lets go
// meanwhile: the first callers send the batches (releasesAtOnce of them at
// once, each up to releasesPerTx keys) while later ones queue, and every
// caller returns with its own key's outcome, as Lease.Release's.
func (m *member) release(l *Lease) error {
	done := make(chan error, 1)
	m.relMu.Lock()
	m.relQueue = append(m.relQueue, releaseReq{l: l, done: done})
	lead := m.relSenders < releasesAtOnce
	if lead {
		m.relSenders++
	}
	m.relMu.Unlock()
	if lead {
		m.sendReleases()
	}
	return <-done
}

// releaseReq is a key queued for release, with where its outcome goes.
type releaseReq struct {
	l    *Lease
	done chan<- error
}

// sendReleases sends the queued releases, a batch at a time, until the
// queue is empty.
func (m *member) sendReleases() {
	for {
		m.relMu.Lock()
		n := min(len(m.relQueue), releasesPerTx)
		if n == 0 {
			m.relSenders--
			m.relMu.Unlock()
			return
		}
		batch := m.relQueue[:n:n]
		m.relQueue = m.relQueue[n:]
		m.relMu.Unlock()
		ls := make([]*Lease, n)
		for i, r := range batch {
			ls[i] = r.l
		}
		ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
		errs := m.g.c.releaseMany(ctx, ls)
		cancel()
		for i, r := range batch {
			r.done <- errs[i]
		}
	}
}

// releaseMany releases ls (distinct keys, at most releasesPerTx) as
// Lease.Release releases one, in transactions of their records and token
// records, and returns each lease's error: errs[i] is ls[i]'s.
func (c *Client) releaseMany(ctx context.Context, ls []*Lease) []error {
	rs := make([]*releasing, 0, len(ls))
	for _, l := range ls {
		r := &releasing{l: l, withTok: true}
		_, r.span = c.span(ctx, "lease.Release", l.key)
		l.stopBeat()
		<-l.beatDone
		l.mu.Lock()
		if l.watchdog != nil {
			l.watchdog.Stop()
		}
		r.next = l.rec
		l.mu.Unlock()
		l.end(fmt.Errorf("%w: %q (token %d)", ErrReleased, l.key, l.token))
		l.releaseMu.Lock()
		if l.released {
			r.done = true
		}
		rs = append(rs, r)
	}
	defer func() {
		for _, r := range rs {
			r.l.releaseMu.Unlock()
		}
	}()
	c.sendReleaseTx(ctx, rs)
	errs := make([]error, len(rs))
	for i, r := range rs {
		l := r.l
		switch {
		case !r.done && r.err == nil:
			r.err = fmt.Errorf("lease: release %q (token %d): the record kept changing", l.key, l.token)
		case r.done && !l.released:
			c.log.Debug(ctx, "released", telemetry.ID("key", l.key), slog.Int64("token", l.token))
			if !r.wrote {
				l.releaseToken(ctx) // as a single Release does, best effort
			}
			l.released = true
			c.forget(l)
		}
		if !r.done {
			errs[i] = r.err
		}
		endSpan(r.span, l, errs[i])
	}
	return errs
}

// sendReleaseTx sends the transactions that release the keys of rs not
// yet done, settling each key it can: again while a transaction settles a
// key (DynamoDB Local names only the first failed member), and up to
// releaseTries times without.
func (c *Client) sendReleaseTx(ctx context.Context, rs []*releasing) {
	for try, stuck := 0, 0; stuck < releaseTries && try < len(rs)+releaseTries; try++ {
		before := settled(rs)
		if try > 0 && ctx.Err() != nil {
			return
		}
		var live []*releasing
		var ops []dynamo.TxOp
		var recAt []int // per live key: its record's member
		for _, r := range rs {
			if r.done || r.err != nil {
				continue
			}
			live, recAt = append(live, r), append(recAt, len(ops))
			ops = append(ops, c.releaseOps(r)...)
		}
		if len(live) == 0 {
			return
		}
		err := c.table.Mapper().WriteTx(ctx, ops)
		if err == nil {
			for _, r := range live {
				r.done, r.wrote = true, true
			}
			return
		}
		var te *dynamo.TxError
		switch {
		case errors.As(err, &te) && !errors.Is(err, dynamo.ErrUnknownOutcome):
			for j, r := range live {
				c.settleCancelled(te, recAt[j], r)
			}
			if settled(rs) == before {
				stuck++
			}
		case maybeApplied(err):
			c.settleUnknown(ctx, live, err)
			stuck++ // read back: at most releaseTries such
		default:
			for _, r := range live {
				r.err = fmt.Errorf("lease: release %q (token %d) (with %d other keys): %w", r.l.key, r.l.token, len(live)-1, err)
			}
			return
		}
	}
}

// settled counts the keys of rs done, failed, or whose transaction
// members changed (a record moved on, a token record dropped).
func settled(rs []*releasing) (n int) {
	for _, r := range rs {
		if r.done || r.err != nil {
			n++
		}
		if !r.withTok {
			n++
		}
		n += int(r.next.Version)
	}
	return n
}

// releaseOps returns the members that release r's key: its record marked
// released on condition that it is still ours, and, with withTok, its token
// record marked released on condition that it still names this acquisition.
func (c *Client) releaseOps(r *releasing) []dynamo.TxOp {
	l := r.l
	next := r.next
	next.Released = true
	next.Expires = c.o.clock.Now().Add(c.o.ttl).Unix()
	ops := []dynamo.TxOp{c.table.TxSave(next, dynamo.WithSaveBehavior(dynamo.SavePut), dynamo.If(ownedBy(c.o.owner, l.token, l.attempt)))}
	if r.withTok {
		t := tokenRecord{Key: tokenKey(l.key), Token: l.token, Owner: c.o.owner, Attempt: l.attempt, DurationMS: next.DurationMS, Released: true}
		ops = append(ops, c.tokens.TxSave(t, dynamo.WithSaveBehavior(dynamo.SavePut), dynamo.If(expression.And(
			expression.Name("token").Equal(expression.Value(l.token)),
			expression.Name("attempt").Equal(expression.Value(l.attempt))))))
	}
	return ops
}

// settleCancelled settles r, whose record is member i of the cancelled
// transaction te (its token record, if sent, i+1), as a single Release
// settles a failed write: a record no longer ours, or released, is done; a
// record of ours that moved on (its expiry) is released at that version;
// a token record that no longer names this acquisition is left alone.
func (c *Client) settleCancelled(te *dynamo.TxError, i int, r *releasing) {
	if rf := te.Failure(i); rf != nil && rf.Code == dynamo.TxCodeConditionFailed {
		cur, derr := c.table.Current(rf.Err)
		switch {
		case errors.Is(derr, dynamo.ErrNotFound):
			r.done = true // deleted
		case derr != nil:
			r.err = fmt.Errorf("lease: release %q (token %d): %w", r.l.key, r.l.token, rf.Err)
		case !r.l.mine(cur) || cur.Released:
			r.done = true // taken over, or our own release landed unanswered
		default:
			r.next = cur
		}
		return
	}
	if r.withTok {
		if tf := te.Failure(i + 1); tf != nil && tf.Code == dynamo.TxCodeConditionFailed {
			r.withTok = false // as a single Release's, best effort
		}
	}
}

// settleUnknown settles the keys of live, whose transaction got no clear
// answer (err), by reading their records back: as a single Release does.
// Keys it cannot read get an error wrapping dynamo.ErrUnknownOutcome.
func (c *Client) settleUnknown(ctx context.Context, live []*releasing, err error) {
	keys := make([]string, len(live))
	for j, r := range live {
		keys[j] = r.l.key
	}
	views, rerr := c.readAll(ctx, keys)
	for j, r := range live {
		switch {
		case rerr != nil:
			r.err = fmt.Errorf("lease: release %q (token %d): %w (%w: the record may or may not be marked released)", r.l.key, r.l.token, err, dynamo.ErrUnknownOutcome)
		case views[j].rec == nil || !r.l.mine(*views[j].rec) || views[j].rec.Released:
			r.done = true // deleted, taken over, or our release landed (its token record with it)
			r.wrote = views[j].rec != nil && r.l.mine(*views[j].rec)
		default:
			r.next = *views[j].rec // not applied: again
		}
	}
}
