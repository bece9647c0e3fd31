package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/smithy-go"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/internal/ident"
	"github.com/ddbkit/dynamo/internal/telemetry"
)

// ErrHeld is returned by TryAcquire when a holder has the lease. Match
// this and the other sentinels with errors.Is; the errors returned say
// more.
var ErrHeld = errors.New("lease: held by another owner")

// ErrLost means a lease is no longer held: taken over, or not extended in
// time to be sure it is still ours. Lease.Err wraps it.
var ErrLost = errors.New("lease: lost")

// ErrReleased is Lease.Err after Release.
var ErrReleased = errors.New("lease: released")

// ErrClosed is returned by a Client after Close.
var ErrClosed = errors.New("lease: client closed")

// record is one lease, an item of the lease table.
type record struct {
	Key        string `dynamo:"key,hash"`
	Owner      string `dynamo:"owner"`
	Token      int64  `dynamo:"token"`
	Released   bool   `dynamo:"released"`
	DurationMS int64  `dynamo:"duration_ms"`
	Data       []byte `dynamo:"data,omitempty"`
	Expires    int64  `dynamo:"expires,ttl"` // epoch seconds; for TTL clean-up only
	// Attempt is random per acquisition and kept by the holder's later
	// writes: it lets a client whose write got no clear answer recognise
	// the record as its own, and with Version it identifies the record's
	// incarnation — a record deleted and created again starts again at
	// version 1, but never with the same attempt id.
	Attempt string `dynamo:"attempt,omitempty"`
	// Group and Worker are set on a key held by a Group's worker: the
	// group's name and the worker's incarnation (its worker record's
	// attempt id). Such a record has no heartbeat of its own: the worker's
	// record carries the liveness of all its keys.
	Group   string `dynamo:"group,omitempty"`
	Worker  string `dynamo:"worker,omitempty"`
	Version int64  `dynamo:"version,version"`
}

// tokenRecord is a key's token record: an item of the lease table under
// tokenKey(key), written with every acquisition of the key, never deleted by
// this package and without a TTL attribute. Its Token is the highest token
// issued for the key, so that a record deleted (by a user, by TTL) does not
// take the memory of its tokens with it; the rest tells whether the last
// holder released, for a record found missing.
type tokenRecord struct {
	Key        string `dynamo:"key,hash"`
	Token      int64  `dynamo:"token"`       // the highest token issued for the key
	Owner      string `dynamo:"owner"`       // who it was issued to
	Attempt    string `dynamo:"attempt"`     // the acquisition that issued it
	DurationMS int64  `dynamo:"duration_ms"` // that holder's lease duration
	Released   bool   `dynamo:"released"`    // that holder released the lease
}

// tokenPrefix starts the keys of token records. Lease keys may not start
// with a NUL byte, so the two never meet.
const tokenPrefix = "\x00token:"

// maxKeyBytes is the longest lease key: DynamoDB's 2048 bytes for a
// partition key, less the token record's prefix.
const maxKeyBytes = 2048 - len(tokenPrefix)

// tokenKey is the key of key's token record.
func tokenKey(key string) string { return tokenPrefix + key }

// Client acquires leases in one table. It is safe for concurrent use.
type Client struct {
	table  *dynamo.Table[record]
	tokens *dynamo.Table[tokenRecord] // the same table
	o      options
	log    *telemetry.Log // every line goes through it: identifiers only with WithTelemetryKeys
	tel    *telemetry.T   // the mapper's

	mu     sync.Mutex
	leases map[*Lease]struct{} // held leases; guarded by mu
	closed bool                // guarded by mu
	groups map[string]bool     // names of the groups a Run of which runs; guarded by mu
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
	tok, err := dynamo.NewTable[tokenRecord](m, table)
	if err != nil {
		return nil, err
	}
	tel := telemetry.OfMapper(m)
	log := tel.PackageLog(o.logger, errorClass).With(slog.String("table", table), telemetry.ID("owner", o.owner))
	return &Client{table: t, tokens: tok, o: o, log: log, tel: tel, leases: map[*Lease]struct{}{}}, nil
}

// Owner returns the name this client writes into the records it holds.
func (c *Client) Owner() string { return c.o.owner }

// CreateTable creates the lease table (on-demand, TTL on "expires") and
// waits until it is active. ctx bounds the whole call. An existing table is
// an error wrapping dynamo.ErrTableExists; pass dynamo.IfNotExists() to call
// it on every start. opts are those of dynamo.Table.CreateTable.
func (c *Client) CreateTable(ctx context.Context, opts ...dynamo.CreateTableOption) error {
	return c.table.CreateTable(ctx, opts...)
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
// error wrapping dynamo.ErrNotFound means the key has no record: never
// leased, or its record was deleted. ctx bounds the read.
//
// IAM: dynamodb:GetItem on the lease table.
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
		Duration: msDuration(r.DurationMS), Data: r.Data}
}

func checkKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("lease: empty key: name the resource the lease guards")
	case !utf8.ValidString(key):
		return fmt.Errorf("lease: key %q is not valid UTF-8: DynamoDB would store another key", key)
	case strings.HasPrefix(key, "\x00"):
		return fmt.Errorf("lease: key %q starts with a NUL byte, which the package reserves for its token records: use another key", key)
	case len(key) > maxKeyBytes:
		return fmt.Errorf("lease: key of %d bytes: use at most %d (DynamoDB's 2048 less the token record's prefix)", len(key), maxKeyBytes)
	}
	return nil
}

// Acquire waits until it holds the lease on key, or ctx is done. A released
// or never-used key is taken at once; a key whose holder stopped
// heartbeating is taken over once its record has not changed for the
// holder's lease duration × the clock-skew rate on this client's clock, and
// so is a key whose record was deleted while it may have been held. ctx
// bounds the waiting, not the lease. Taking a key is one TransactWriteItems
// of two items (the record and its token record); a wait reads the record
// every poll interval.
//
// Failures that may pass (throttling, 5xx answers, failed connections) are
// waited through. An error wrapping dynamo.ErrUnknownOutcome means the
// record may name this client, with no heartbeat behind it. See
// docs/leases.md, Acquiring.
//
// IAM: dynamodb:GetItem, dynamodb:UpdateItem and dynamodb:PutItem on the lease table.
func (c *Client) Acquire(ctx context.Context, key string) (*Lease, error) {
	ctx, span := c.span(ctx, "lease.Acquire", key)
	l, err := c.acquire(ctx, key, true)
	endSpan(span, l, err)
	return l, err
}

// TryAcquire takes the lease on key if nobody holds it: when the record is
// released, or missing and not deleted while held. Otherwise it returns an
// error wrapping ErrHeld at once, naming the holder — even if that holder
// has died, which only waiting can tell (use Acquire with a deadline for
// that). When its write got no clear answer, TryAcquire reads the record
// again at once: if the write landed it returns the lease; if that cannot be
// told, the error wraps dynamo.ErrUnknownOutcome (see Acquire for what that
// means). ctx bounds the requests.
//
// IAM: dynamodb:GetItem, dynamodb:UpdateItem and dynamodb:PutItem on the lease
// table (the record and the key's token record, written in one transaction;
// a settling read and, when the context ends after a landed write, a
// release).
func (c *Client) TryAcquire(ctx context.Context, key string) (*Lease, error) {
	ctx, span := c.span(ctx, "lease.TryAcquire", key)
	l, err := c.acquire(ctx, key, false)
	endSpan(span, l, err)
	return l, err
}

// view is what acquire reads of a key: its record, and when the record is
// missing, the key's token record.
type view struct {
	rec *record      // nil: no record
	tok *tokenRecord // read only when rec is nil; nil: none either
}

// incarnation identifies the state a waiter watches. It changes with every
// write of the record (its version), with every acquisition (the attempt id
// the taker writes) and so with every re-creation of a deleted record, even
// when its version starts again at 1. For a missing record it is the token
// record's last acquisition.
func (v view) incarnation() string {
	switch {
	case v.rec != nil:
		return "record " + v.rec.Attempt + " v" + strconv.FormatInt(v.rec.Version, 10)
	case v.tok != nil:
		return "deleted " + v.tok.Attempt + " token " + strconv.FormatInt(v.tok.Token, 10)
	}
	return ""
}

// holder returns the holder the view shows (for messages) and its lease
// duration in milliseconds.
func (v view) holder() (owner string, token, durationMS int64) {
	switch {
	case v.rec != nil:
		return v.rec.Owner, v.rec.Token, v.rec.DurationMS
	case v.tok != nil:
		return v.tok.Owner, v.tok.Token, v.tok.DurationMS
	}
	return "nobody", 0, 0
}

func (v view) heldError(key string) error {
	owner, token, _ := v.holder()
	if v.rec != nil {
		return fmt.Errorf("%w: %q by %s (token %d)", ErrHeld, key, owner, token)
	}
	return fmt.Errorf("%w: %q: its record was deleted while %s held it (token %d): Acquire waits out that holder",
		ErrHeld, key, owner, token)
}

// read reads the record of key, and the token record when the record is
// missing (both strongly consistent).
func (c *Client) read(ctx context.Context, key string) (view, error) {
	r, err := c.table.Load(ctx, record{Key: key}, dynamo.ConsistentRead())
	if err == nil {
		return view{rec: &r}, nil
	}
	if !errors.Is(err, dynamo.ErrNotFound) {
		return view{}, err
	}
	t, err := c.tokens.Load(ctx, tokenRecord{Key: tokenKey(key)}, dynamo.ConsistentRead())
	switch {
	case err == nil:
		return view{tok: &t}, nil
	case errors.Is(err, dynamo.ErrNotFound):
		return view{}, nil
	}
	return view{}, err
}

// readAll reads the records of keys as read does, for many keys at once:
// the records and the token records in batches of dynamo.MaxBatchGetKeys,
// up to readsAtOnce batches at once and the two kinds at once (a token
// record read when its key's record is there is left unused).
func (c *Client) readAll(ctx context.Context, keys []string) ([]view, error) {
	out := make([]view, len(keys))
	errs := make([]error, 2*len(chunks(len(keys), dynamo.MaxBatchGetKeys)))
	inBatches(len(keys), dynamo.MaxBatchGetKeys, readsAtOnce, func(lo, hi int) {
		n := hi - lo
		recKeys := make([]record, n)
		tokKeys := make([]tokenRecord, n)
		for i, k := range keys[lo:hi] {
			recKeys[i], tokKeys[i] = record{Key: k}, tokenRecord{Key: tokenKey(k)}
		}
		var recs []record
		var toks []tokenRecord
		var recFound, tokFound []bool
		e := 2 * (lo / dynamo.MaxBatchGetKeys)
		inParallel(2, func(j int) {
			if j == 0 {
				recs, recFound, errs[e] = c.table.BatchLoadIndexed(ctx, recKeys, dynamo.ConsistentRead())
			} else {
				toks, tokFound, errs[e+1] = c.tokens.BatchLoadIndexed(ctx, tokKeys, dynamo.ConsistentRead())
			}
		})
		if errs[e] != nil || errs[e+1] != nil {
			return
		}
		for i := range n {
			switch {
			case recFound[i]:
				out[lo+i] = view{rec: &recs[i]}
			case tokFound[i]:
				out[lo+i] = view{tok: &toks[i]}
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// readsAtOnce bounds the batches of reads readAll sends at once.
const readsAtOnce = 8

func (c *Client) acquire(ctx context.Context, key string, wait bool) (*Lease, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	a := &acquiring{key: key, wait: wait}
	for {
		if err := c.checkOpen(); err != nil {
			return nil, c.unsettled(ctx, key, a.pending, err)
		}
		v, err := c.read(ctx, key)
		readAt := c.o.clock.Now()
		if err != nil {
			if !wait || !transient(err) {
				return nil, c.unsettled(ctx, key, a.pending, fmt.Errorf("lease: acquire %q: %w", key, err))
			}
			// Acquire waits through failures that may pass (throttling,
			// 5xx, no answer): the SDK has already retried them.
			c.log.Warn(ctx, "reading the lease record failed; reading it again", telemetry.ID("key", key), telemetry.Err("err", err))
			if err := c.pause(ctx, key, c.o.poll); err != nil {
				return nil, c.unsettled(ctx, key, a.pending, err)
			}
			continue
		}
		if l, err := c.landed(ctx, a, v); l != nil || err != nil {
			return l, err
		}
		take, err := c.shouldTake(a, v, readAt)
		if err != nil {
			return nil, err
		}
		if take {
			if l, done, err := c.takeOver(ctx, a, v); done {
				return l, err
			}
			continue
		}
		if err := c.awaitTakeover(ctx, a, v); err != nil {
			return nil, err
		}
	}
}

// acquiring is the state one acquire call keeps between its reads of the
// record.
type acquiring struct {
	key     string
	wait    bool      // Acquire (wait for the lease), not TryAcquire
	seen    string    // the incarnation being waited on
	seenAt  time.Time // when seen was first read, on the clock
	pending *attempt  // our last write, if its outcome is unknown
	mine    string    // the attempt id of a write of ours that landed but never became a lease
	floor   int64     // the least token to issue, after a token record was found ahead
	takes   int       // writes sent to take the lease
}

// landed settles a's pending write, whose outcome was unknown, against v,
// the record read since: the lease, when the write landed and its
// deadline is still ahead; else (nil, nil), with the write remembered as
// ours (a.mine) so that a record it left is taken over at once.
func (c *Client) landed(ctx context.Context, a *acquiring, v view) (*Lease, error) {
	p := a.pending
	if p == nil {
		return nil, nil
	}
	a.pending = nil
	if r := v.rec; r != nil && r.Attempt == p.id && r.Owner == c.o.owner && !r.Released {
		// Our write landed although we could not tell: the record is
		// ours, young enough that its deadline, counted from before
		// the write, is ahead — else nobody holds it (we never ran
		// it), and it is taken over at once below.
		if c.o.clock.Now().Sub(p.sentAt) < c.o.duration/2 {
			c.log.Info(ctx, "our write of the record landed although its answer was lost", telemetry.ID("key", a.key), slog.Int64("token", r.Token))
			return c.start(ctx, *r, p.sentAt)
		}
	}
	a.mine = p.id
	return nil, nil
}

// shouldTake says whether the record v, read at readAt, is to be taken
// over now: it is free, or its holder has been silent long enough. The
// error ends acquire: the key is a group's, or it is held and a does not
// wait.
func (c *Client) shouldTake(a *acquiring, v view, readAt time.Time) (bool, error) {
	clk := c.o.clock
	switch {
	case v.rec == nil && (v.tok == nil || v.tok.Released || v.tok.Attempt == a.mine):
		// Never used, released before its record was deleted, or last
		// taken by a write of ours that never became a lease.
		return true, nil
	case v.rec != nil && (v.rec.Released || v.rec.Attempt == a.mine):
		return true, nil
	case v.rec != nil && v.rec.Group != "":
		// Its liveness is in the worker's record, which Acquire does not
		// watch: waiting on the key record would take a live worker's
		// key over.
		return false, fmt.Errorf("%w: %q by %s, a worker of group %q (token %d): a group's keys are taken through Client.Group, not Acquire",
			ErrHeld, a.key, v.rec.Owner, v.rec.Group, v.rec.Token)
	case !a.wait:
		return false, v.heldError(a.key)
	case v.incarnation() != a.seen:
		a.seen, a.seenAt = v.incarnation(), readAt
	case clk.Now().Sub(a.seenAt) >= c.patience(v):
		owner, token, _ := v.holder()
		c.log.Info(context.Background(), "taking over a silent lease", telemetry.ID("key", a.key), telemetry.ID("holder", owner), slog.Int64("token", token), slog.Duration("silent_for", clk.Now().Sub(a.seenAt)), slog.Bool("record_deleted", v.rec == nil))
		return true, nil
	}
	return false, nil
}

// takeOver writes the record to take the lease from v. When done, acquire
// returns (l, err); otherwise it reads the record again.
func (c *Client) takeOver(ctx context.Context, a *acquiring, v view) (l *Lease, done bool, err error) {
	a.takes++
	l, p, least, err := c.take(ctx, a.key, v, a.floor)
	a.floor = max(a.floor, least)
	a.seen = ""
	switch {
	case l != nil:
		return l, true, nil
	case p != nil:
		// No clear answer: the record tells, once it can be read.
		a.pending = p
		if !a.wait {
			if a.takes >= 3 {
				return nil, true, c.unsettled(ctx, a.key, a.pending, err)
			}
			return nil, false, nil // read it again at once
		}
		c.log.Warn(ctx, "writing the lease record failed; reading it again", telemetry.ID("key", a.key), telemetry.Err("err", err))
		if err := c.pause(ctx, a.key, c.o.poll); err != nil {
			return nil, true, c.unsettled(ctx, a.key, a.pending, err)
		}
	case errors.Is(err, errRace):
		// Someone else wrote it first: read it again.
	default:
		return nil, true, err
	}
	return nil, false, nil
}

// awaitTakeover waits for the next read of the record held as v: a poll
// interval, or less if the holder's silence allows a takeover sooner. The
// error is ctx's, naming the holder.
func (c *Client) awaitTakeover(ctx context.Context, a *acquiring, v view) error {
	clk := c.o.clock
	wait := min(c.o.poll, max(c.patience(v)-clk.Now().Sub(a.seenAt), 0)) // wake up at the takeover moment if it comes first
	t := clk.NewTimer(wait)
	select {
	case <-ctx.Done():
		t.Stop()
		owner, token, _ := v.holder()
		return fmt.Errorf("lease: acquire %q (held by %s, token %d): %w", a.key, owner, token, context.Cause(ctx))
	case <-t.C():
	}
	return nil
}

// settleTimeout bounds the read (and release) by which acquire settles a
// write of unknown outcome after its ctx ended.
const settleTimeout = 5 * time.Second

// unsettled returns err, the reason acquire stops, after making sure no
// write of ours (p, when not nil) is left as a lease nobody runs: it reads
// the record — beyond ctx, for settleTimeout — and marks it released if p
// landed. When that cannot be done, the error also wraps
// dynamo.ErrUnknownOutcome.
func (c *Client) unsettled(ctx context.Context, key string, p *attempt, err error) error {
	if p == nil {
		return err
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	v, rerr := c.read(sctx, key)
	if rerr == nil {
		r := v.rec
		if r == nil || r.Attempt != p.id || r.Released {
			return err // our write never landed, or is gone: nothing is held
		}
		next := *r
		next.Released = true
		if _, rerr = c.table.Save(sctx, next, dynamo.If(ownedBy(r.Owner, r.Token, r.Attempt))); rerr == nil {
			c.log.Info(sctx, "released a record our unanswered write had taken", telemetry.ID("key", key), slog.Int64("token", r.Token))
			return err
		}
	}
	return fmt.Errorf("%w (%w: this client may hold %q, with no heartbeat: %v)",
		err, dynamo.ErrUnknownOutcome, key, rerr)
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

// maybeApplied reports whether a failed write may have been applied all the
// same: anything but a refusal before sending (ErrInvalidInput) or a
// client error DynamoDB answered that no retry changes (validation, access
// denied, no table). Throttling and ctx ending count as maybe: an earlier
// attempt's answer may have been lost.
func maybeApplied(err error) bool {
	if errors.Is(err, dynamo.ErrUnknownOutcome) {
		return true
	}
	if errors.Is(err, dynamo.ErrInvalidInput) {
		return false
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorFault() == smithy.FaultClient && !transient(err) {
		return false
	}
	return true
}

// patience is how long a waiter watches an unchanged record (or a missing
// one, deleted while held) before taking it over: the holder's duration ×
// the skew rate, never negative; a duration too large to wait out saturates.
func (c *Client) patience(v view) time.Duration {
	_, _, ms := v.holder()
	return c.patienceFor(ms)
}

// patienceFor is the wait on a silent holder whose lease duration is ms
// milliseconds (0: unknown, this client's own): that duration × the skew
// rate, saturating.
func (c *Client) patienceFor(ms int64) time.Duration {
	d := c.o.duration
	if ms > 0 {
		d = msDuration(ms)
	}
	p := float64(d) * c.o.skew
	if p >= float64(math.MaxInt64) {
		return math.MaxInt64
	}
	return time.Duration(p)
}

// msDuration converts milliseconds to a Duration, saturating.
func msDuration(ms int64) time.Duration {
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// durationMS is d in whole milliseconds, rounded up: a stored duration is
// never shorter than the holder's.
func durationMS(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

func (c *Client) checkOpen() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	return nil
}

// errRace is take's error when a condition failed: someone else wrote the
// record or the token record first. Nothing was written.
var errRace = errors.New("lease: the record changed before the write")

// take writes a record naming this client as holder, and the key's token
// record, in one transaction (see write), and starts the lease.
func (c *Client) take(ctx context.Context, key string, v view, floor int64) (l *Lease, p *attempt, least int64, err error) {
	rec, sentAt, p, least, err := c.write(ctx, key, v, floor, nil)
	if err != nil {
		return nil, p, least, err
	}
	l, err = c.start(ctx, rec, sentAt)
	return l, nil, 0, err
}

// claim is what a group worker's take adds to write: the group and the
// worker incarnation the record names, and a transaction member — a check
// of the worker's own record — that must hold as well.
type claim struct {
	group, worker string
	check         dynamo.TxOp
}

// errClaimRefused is write's error when a claim's check failed: the worker
// record is no longer the claimant's live incarnation. Nothing was written.
var errClaimRefused = errors.New("lease: the worker's record is no longer live")

// write writes a record naming this client as holder, and the key's token
// record, in one transaction, and returns the record written and when it
// was sent. The record is written on condition that it is still the
// incarnation v shows (its version and attempt id), or still missing; the
// token record on condition that its token is below the new one (for a
// missing record: that it is still the one v shows), so that every token
// issued for the key is above every earlier one, whatever happened to the
// record. A claim (nil for a single lease) names the group and adds its
// check to the transaction.
//
// When a condition failed, nothing was written: the error is errRace (or
// errClaimRefused), and least is the least token worth trying next when the
// token record was ahead. When the outcome of the write is unknown (see
// maybeApplied), write also returns the attempt, by which the caller can
// recognise the record as its own.
func (c *Client) write(ctx context.Context, key string, v view, floor int64, cl *claim) (rec record, sentAt time.Time, p *attempt, least int64, err error) {
	t := c.takeOps(key, v, floor, cl)
	ops := []dynamo.TxOp{t.rec, t.tok}
	if cl != nil {
		ops = append(ops, cl.check)
	}
	sentAt = c.o.clock.Now()
	err = c.table.Mapper().WriteTx(ctx, ops)
	if err == nil {
		return t.rec.Saved(), sentAt, nil, 0, nil
	}
	var te *dynamo.TxError
	if errors.As(err, &te) {
		raced, l := c.raced(te, 0)
		least = l
		if cl != nil {
			if cf := te.Failure(2); cf != nil && cf.Code == dynamo.TxCodeConditionFailed {
				return record{}, sentAt, nil, least, errClaimRefused
			}
		}
		if raced {
			return record{}, sentAt, nil, least, errRace
		}
	}
	err = fmt.Errorf("lease: acquire %q: %w", key, err)
	if maybeApplied(err) {
		return record{}, sentAt, &attempt{id: t.next.Attempt, sentAt: sentAt}, 0, err
	}
	return record{}, sentAt, nil, 0, err
}

// raced reads, from a cancelled transaction te, whether the take whose
// record and token record are members i and i+1 failed a condition, and
// least, the least token worth trying next when the token record was
// ahead (0: not known).
func (c *Client) raced(te *dynamo.TxError, i int) (raced bool, least int64) {
	rf, tf := te.Failure(i), te.Failure(i+1)
	if tf != nil && tf.Code == dynamo.TxCodeConditionFailed {
		if t, derr := c.tokens.Current(tf.Err); derr == nil {
			least = t.Token + 1
		}
	}
	raced = (rf != nil && rf.Code == dynamo.TxCodeConditionFailed) || (tf != nil && tf.Code == dynamo.TxCodeConditionFailed)
	return raced, least
}

// takeOp is the two members of a transaction that take a key (see write):
// the record next, and the token record.
type takeOp struct {
	next record
	rec  *dynamo.TxSave[record]
	tok  dynamo.TxOp
}

// takeOps builds the members that take key, whose records read v, with a
// token of at least floor (see write).
func (c *Client) takeOps(key string, v view, floor int64, cl *claim) takeOp {
	clk := c.o.clock
	next := record{
		Key:        key,
		Owner:      c.o.owner,
		DurationMS: durationMS(c.o.duration),
		Data:       c.o.data,
		Expires:    clk.Now().Add(c.o.ttl).Unix(),
		Attempt:    ident.RandomHex(8),
	}
	if cl != nil {
		next.Group, next.Worker = cl.group, cl.worker
	}
	recOpts := []dynamo.WriteOption{dynamo.WithSaveBehavior(dynamo.SavePut)}
	tokenIs := expression.Name("token")
	var tokCond expression.ConditionBuilder
	if cur := v.rec; cur != nil {
		next.Token = max(cur.Token+1, floor)
		next.Version = cur.Version // the mapper's version check
		recOpts = append(recOpts, dynamo.If(attemptIs(cur.Attempt)))
		tokCond = expression.Or(expression.AttributeNotExists(tokenIs), tokenIs.LessThan(expression.Value(next.Token)))
	} else {
		// The time in milliseconds is only a floor for tables whose token
		// records are gone: the token record is what keeps tokens growing.
		next.Token = max(1, clk.Now().UnixMilli(), floor)
		if t := v.tok; t != nil {
			next.Token = max(next.Token, t.Token+1)
			tokCond = tokenIs.Equal(expression.Value(t.Token))
		} else {
			tokCond = expression.AttributeNotExists(tokenIs)
		}
	}
	tok := tokenRecord{Key: tokenKey(key), Token: next.Token, Owner: next.Owner, Attempt: next.Attempt, DurationMS: next.DurationMS}
	return takeOp{
		next: next,
		rec:  c.table.TxSave(next, recOpts...),
		tok:  c.tokens.TxSave(tok, dynamo.WithSaveBehavior(dynamo.SavePut), dynamo.If(tokCond)),
	}
}

// start makes a Lease of the record rec this client wrote, sent at sentAt,
// and starts its heartbeat. When Close ran meanwhile, it releases the
// record instead (within settleTimeout, beyond ctx) and returns ErrClosed.
func (c *Client) start(ctx context.Context, rec record, sentAt time.Time) (*Lease, error) {
	l := newLease(c, rec, sentAt)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		close(l.beatDone) // no heartbeat: Release need not wait for one
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
		defer cancel()
		if err := l.Release(rctx); err != nil {
			return nil, fmt.Errorf("%w (releasing the lease on %q taken meanwhile failed: %w; others take it over after its duration × skew rate)", ErrClosed, rec.Key, err)
		}
		return nil, ErrClosed
	}
	c.leases[l] = struct{}{}
	c.mu.Unlock()
	c.log.Debug(ctx, "acquired", telemetry.ID("key", rec.Key), slog.Int64("token", rec.Token))
	go l.heartbeat()
	return l, nil
}

// Close releases every lease the client holds and refuses new ones. ctx
// bounds the releases; a lease that cannot be released in time still stops
// heartbeating, so others take it over after its duration × skew rate.
//
// IAM: as Lease.Release, for each lease held.
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

// ownedBy is the condition that the record is still ours: the owner,
// token and attempt id we wrote, not released. Versions are not part of it,
// since every heartbeat changes the version; the attempt id makes it false
// for any other incarnation of the record.
func ownedBy(owner string, token int64, attempt string) expression.ConditionBuilder {
	return expression.And(
		expression.Name("owner").Equal(expression.Value(owner)),
		expression.Name("token").Equal(expression.Value(token)),
		expression.Name("released").Equal(expression.Value(false)),
		attemptIs(attempt),
	)
}

// attemptIs is the condition that the record carries attempt id a (none,
// for records written before attempt ids).
func attemptIs(a string) expression.ConditionBuilder {
	if a == "" {
		return expression.AttributeNotExists(expression.Name("attempt"))
	}
	return expression.Name("attempt").Equal(expression.Value(a))
}
