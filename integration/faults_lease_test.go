package integration

// The lease part of the fault suite (see faults_test.go): clients acquire one
// key, write their fencing token into a resource with a guarded write, and
// release, each over its own faulty DynamoDB transport; checkLeaseFaults
// then checks the record of what happened against the resource.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/leaktest"
	"github.com/ddbkit/dynamo/lease"
)

// fencedResource is what the lease protects in TestFaultsLease: every
// accepted guarded write appends its token to Tokens, and the resource
// refuses a token not above the last one.
type fencedResource struct {
	ID      string  `dynamo:"id,hash"`
	Token   int64   `dynamo:"token"`
	Writes  int     `dynamo:"writes"`
	Tokens  []int64 `dynamo:"tokens,omitempty"`
	Version int64   `dynamo:"v,version"`
}

// leaseWrite is one attempt at a guarded write.
type leaseWrite struct {
	start, end time.Time
	err        error // nil: acknowledged
}

// leaseHolding is one successful acquisition and what its holder did.
type leaseHolding struct {
	owner    string
	token    int64
	called   time.Time // Acquire was called
	from     time.Time // Acquire returned: the holding starts
	to       time.Time // the holding ends (before Release)
	lost     bool      // the lease had ended (ErrLost) by to: excluded from the overlap check
	frozen   bool      // a holder whose clock stood still and wrote after a newer token was in the record
	writes   []leaseWrite
	found    bool // a failed write was found applied when re-reading the resource before retrying
	released error
}

// acked reports whether a guarded write of h was acknowledged.
func (h *leaseHolding) acked() (leaseWrite, bool) {
	for _, w := range h.writes {
		if w.err == nil {
			return w, true
		}
	}
	return leaseWrite{}, false
}

// checkLeaseFaults checks the record of TestFaultsLease against the final
// resource and returns every anomaly found:
//
//   - tokens of successful acquisitions are unique, and increase in
//     acquisition order: an acquisition that returned before another was
//     called has the smaller token;
//   - no two holders whose leases were live (not lost, not frozen) had
//     overlapping holding intervals;
//   - the resource's accepted tokens strictly increase, its Token is the
//     last of them and Writes counts them;
//   - every accepted token belongs to a holder that tried to write; every
//     acknowledged write (and every failed one found applied) is there
//     exactly once;
//   - no write was accepted from a holder after a newer token had been
//     acquired: an accepted write's holder started writing before every
//     holder of a newer token had its Acquire return (an acknowledged write:
//     that very attempt), and a frozen holder's write is never accepted.
func checkLeaseFaults(hs []leaseHolding, final fencedResource) []string {
	var bad []string
	report := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	byToken := map[int64]*leaseHolding{}
	for i := range hs {
		h := &hs[i]
		if o, dup := byToken[h.token]; dup {
			report("token %d acquired twice: by %s and by %s", h.token, o.owner, h.owner)
			continue
		}
		byToken[h.token] = h
	}
	for i := range hs {
		for j := range hs {
			a, b := &hs[i], &hs[j]
			if i != j && a.from.Before(b.called) && a.token >= b.token {
				report("token went backwards: %s acquired %d before %s called Acquire and got %d", a.owner, a.token, b.owner, b.token)
			}
		}
	}
	var live []*leaseHolding
	for i := range hs {
		if !hs[i].lost && !hs[i].frozen {
			live = append(live, &hs[i])
		}
	}
	for i := range live {
		for j := i + 1; j < len(live); j++ {
			a, b := live[i], live[j]
			if a.from.Before(b.to) && b.from.Before(a.to) {
				report("live holders %s (token %d, %v–%v) and %s (token %d, %v–%v) overlap",
					a.owner, a.token, a.from.Format("15:04:05.000"), a.to.Format("15:04:05.000"),
					b.owner, b.token, b.from.Format("15:04:05.000"), b.to.Format("15:04:05.000"))
			}
		}
	}
	for i := 1; i < len(final.Tokens); i++ {
		if final.Tokens[i] <= final.Tokens[i-1] {
			report("resource accepted token %d after %d", final.Tokens[i], final.Tokens[i-1])
		}
	}
	last := int64(0)
	if n := len(final.Tokens); n > 0 {
		last = final.Tokens[n-1]
	}
	if final.Token != last || final.Writes != len(final.Tokens) {
		report("resource says token %d and %d writes, but its list holds %d tokens ending with %d", final.Token, final.Writes, len(final.Tokens), last)
	}
	accepted := map[int64]int{}
	for _, tok := range final.Tokens {
		accepted[tok]++
	}
	// newerFrom[token]: when the first holder of a newer token had its
	// Acquire return.
	sorted := slices.Clone(hs)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].token < sorted[j].token })
	newerFrom := map[int64]time.Time{}
	var earliest time.Time
	for i := len(sorted) - 1; i >= 0; i-- {
		newerFrom[sorted[i].token] = earliest
		if earliest.IsZero() || sorted[i].from.Before(earliest) {
			earliest = sorted[i].from
		}
	}
	for tok, n := range accepted {
		h := byToken[tok]
		switch {
		case h == nil || len(h.writes) == 0:
			report("resource accepted token %d, which no holder tried to write", tok)
			continue
		case n > 1:
			report("resource accepted token %d %d times", tok, n)
		case h.frozen:
			report("frozen holder %s wrote token %d after a newer token was in the lease record", h.owner, tok)
		}
		if nf := newerFrom[tok]; !nf.IsZero() && !h.writes[0].start.Before(nf) {
			report("holder %s's write of token %d was accepted, but it started after a newer token was acquired", h.owner, tok)
		}
	}
	for i := range hs {
		h := &hs[i]
		w, ok := h.acked()
		switch {
		case ok && accepted[h.token] == 0:
			report("acknowledged write of token %d by %s is not in the resource", h.token, h.owner)
		case ok && !newerFrom[h.token].IsZero() && !w.start.Before(newerFrom[h.token]):
			report("write of token %d by %s acknowledged, but it started after a newer token was acquired", h.token, h.owner)
		case h.found && accepted[h.token] == 0:
			report("write of token %d by %s was found applied, but is not in the resource", h.token, h.owner)
		}
	}
	return bad
}

// TestFaultsLease: five clients, each over its own faulty DynamoDB transport,
// while the lease record is deleted at random moments,
// acquire one key (1 s leases, so that takeovers happen), write their token
// into a resource with a guarded write (lease.Save, refused by the resource
// unless the token is above the last one written), hold the lease for a
// while, and release it. A sixth, frozen client (its clock stands still, so
// it never heartbeats and never notices its loss) acquires, waits until the
// record names a newer token, and tries its guarded write, which must be
// refused. Failed calls are recorded and retried or skipped; then
// checkLeaseFaults checks the invariants against the resource read through a
// clean client.
func TestFaultsLease(t *testing.T) {
	leaktest.Check(t, "ddbkit/dynamo/lease.")
	const clients, d = 5, time.Second
	rounds := scaled(10)
	clean := dynamotest.Client(t)
	table := dynamotest.KeyTable(t, clean, "faults-leases", "key", types.ScalarAttributeTypeS, "", "")
	resName := dynamotest.KeyTable(t, clean, "faults-fenced", "id", types.ScalarAttributeTypeS, "", "")
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	var transports []*dynamotest.Faults
	// newClient returns a lease client and the resource's table, both over
	// a new faulty transport, whose SDK retries wait up to maxBackoff.
	newClient := func(salt uint64, maxBackoff time.Duration, opts ...lease.Option) (*lease.Client, *dynamo.Table[fencedResource]) {
		f := dynamotest.NewFaults(faultConfig(t, salt, scaled(120)), nil)
		transports = append(transports, f)
		m := dynamo.NewMapper(f.Client(t, shortRetries(maxBackoff)))
		lc, err := lease.New(m, table, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer ccancel()
			_ = lc.Close(cctx) // through faults: an error leaves a record that times out
		})
		res, err := dynamo.NewTable[fencedResource](m, resName)
		if err != nil {
			t.Fatal(err)
		}
		return lc, res
	}

	lin := &linRecorder{} // the history for the lease model (linear_test.go)
	var mu sync.Mutex
	var record []leaseHolding
	var acquires, acquireErrs int // Acquire calls of the five clients, and how many failed
	keep := func(h leaseHolding) {
		mu.Lock()
		defer mu.Unlock()
		record = append(record, h)
	}

	// guardedWrite writes l's token into the resource, unless a re-read
	// finds it there already (an earlier attempt applied although it
	// failed): then found is true and nothing is sent.
	guardedWrite := func(ctx context.Context, client int, owner string, res *dynamo.Table[fencedResource], l *lease.Lease) (found bool, err error) {
		read := lin.begin(client, leaseInput{Key: "job", Kind: lkReadRes})
		cur, err := res.Load(ctx, fencedResource{ID: "r"}, dynamo.ConsistentRead())
		if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
			return false, err
		}
		read.ok(tokensValue(cur.Tokens))
		if slices.Contains(cur.Tokens, l.Token()) {
			return true, nil
		}
		from := tokensValue(cur.Tokens)
		cur.ID, cur.Token = "r", l.Token()
		cur.Writes++
		cur.Tokens = append(slices.Clone(cur.Tokens), l.Token())
		write := lin.begin(client, leaseInput{Key: "job", Kind: lkWrite, Owner: owner, Token: l.Token(), From: from, To: tokensValue(cur.Tokens)})
		_, err = lease.Save(ctx, l, res, cur, dynamo.If(expression.Or(
			expression.AttributeNotExists(expression.Name("token")),
			expression.Name("token").LessThan(expression.Value(l.Token())))))
		if err == nil {
			write.ok(nil)
		} else {
			write.failed(err, mapperNotApplied)
		}
		return false, err
	}
	// writeUntilKnown tries the guarded write up to tries times, until it is
	// acknowledged, found applied, or refused because the lease is lost.
	writeUntilKnown := func(ctx context.Context, client int, res *dynamo.Table[fencedResource], l *lease.Lease, h *leaseHolding, tries int, frozen bool) {
		for range tries {
			if !frozen && l.Err() != nil {
				return
			}
			start := time.Now()
			wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
			found, err := guardedWrite(wctx, client, h.owner, res, l)
			wcancel()
			if found {
				h.found = true
				return
			}
			h.writes = append(h.writes, leaseWrite{start: start, end: time.Now(), err: err})
			if err == nil || errors.Is(err, lease.ErrLost) {
				return
			}
		}
	}

	// The frozen client takes the unused key first; the others take it over
	// once its record has been silent for d × 1.25.
	frozenClock := clock.NewFake(time.Now())
	fc, fres := newClient(99, 30*time.Millisecond, lease.WithOwner("frozen"), lease.WithLeaseDuration(d), lease.WithClock(frozenClock))
	frozenAcquire := func(stop <-chan struct{}) *lease.Lease {
		for {
			// Acquire would wait on the frozen clock; TryAcquire does not.
			call := lin.begin(clients, leaseInput{Key: "job", Kind: lkAcquire, Owner: "frozen"})
			l, err := fc.TryAcquire(ctx, "job")
			switch {
			case err == nil:
				call.ok(l.Token())
				return l
			case errors.Is(err, lease.ErrHeld) && !errors.Is(err, dynamo.ErrUnknownOutcome):
				// Not taken: no effect, left out of the history.
			default:
				call.unknown(err)
			}
			select {
			case <-stop:
				return nil
			case <-ctx.Done():
				return nil
			case <-time.After(20 * time.Millisecond): // polling the record
			}
		}
	}
	// frozenHold waits until the record names a newer token, then tries the
	// guarded write — unless stop is closed first (nobody is left to take
	// the lease over).
	frozenHold := func(l *lease.Lease, called time.Time, stop <-chan struct{}) error {
		h := leaseHolding{owner: "frozen", token: l.Token(), called: called, from: time.Now(), frozen: true}
	poll:
		for { // until the record names a newer holder
			call := lin.begin(clients, leaseInput{Key: "job", Kind: lkHolder})
			info, err := fc.Holder(ctx, "job")
			switch {
			case err == nil:
				call.ok(leaseView{Found: true, Owner: info.Owner, Token: info.Token, Released: info.Released})
			case errors.Is(err, dynamo.ErrNotFound):
				call.ok(leaseView{})
			}
			if err == nil && info.Token > l.Token() {
				writeUntilKnown(ctx, clients, fres, l, &h, 5, true)
				break
			}
			select {
			case <-stop:
				break poll
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond): // polling the record
			}
		}
		h.to = time.Now()
		keep(h)
		frozenClock.Advance(2 * d) // its watchdog ends the stale lease
		<-l.Done()
		return nil
	}
	called := time.Now()
	first := frozenAcquire(nil)
	if first == nil {
		t.Fatalf("the frozen client could not take the unused key: %v", ctx.Err())
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	frozenErr := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := frozenHold(first, called, nil); err != nil {
			frozenErr <- err
			return
		}
		// Once more in the middle of the others' rounds, if it gets the key.
		called := time.Now()
		if l := frozenAcquire(stop); l != nil {
			if err := frozenHold(l, called, stop); err != nil {
				frozenErr <- err
			}
		}
	}()

	// A deleter removes the lease record at random moments through a clean
	// client, as a user or TTL might — between a write and its resend,
	// under a live holder, under the frozen one. Exclusivity and increasing
	// tokens must hold across deletions (see "Deleting a record" in the
	// lease package doc). Token records are never deleted.
	var deletions int
	delStop, delDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(delDone)
		for {
			select {
			case <-delStop:
				return
			case <-ctx.Done():
				return
			case <-time.After(300*time.Millisecond + rand.N(1200*time.Millisecond)):
			}
			call := lin.begin(clients+1, leaseInput{Key: "job", Kind: lkDelete})
			out, err := clean.DeleteItem(ctx, &dynamodb.DeleteItemInput{
				TableName:    aws.String(table),
				Key:          map[string]types.AttributeValue{"key": &types.AttributeValueMemberS{Value: "job"}},
				ReturnValues: types.ReturnValueAllOld,
			})
			if err != nil {
				call.unknown(err)
				continue
			}
			var old leaseView
			if out.Attributes != nil {
				deletions++
				if err := attributevalue.UnmarshalMapWithOptions(out.Attributes, &old, func(o *attributevalue.DecoderOptions) { o.TagKey = "dynamo" }); err != nil {
					t.Errorf("deleter: decoding the record: %v", err)
				}
				old.Found = true
			}
			call.ok(old)
		}
	}()

	var workers sync.WaitGroup
	events := &slogCounter{}
	for i := range clients {
		// Two clients retry as slowly as the SDK's default (up to a second
		// and more): a heartbeat retried that late loses the lease.
		backoff := 30 * time.Millisecond
		if i >= clients-2 {
			backoff = time.Second
		}
		lc, res := newClient(uint64(i), backoff, lease.WithOwner(fmt.Sprintf("c%d", i)), lease.WithLeaseDuration(d),
			lease.WithHeartbeatInterval(d/10), lease.WithPollInterval(25*time.Millisecond), lease.WithLogger(slog.New(events)))
		workers.Add(1)
		go func() {
			defer workers.Done()
			held := 0
			for try := 0; held < rounds && try < 3*rounds && ctx.Err() == nil; try++ {
				called := time.Now()
				call := lin.begin(i, leaseInput{Key: "job", Kind: lkAcquire, Owner: lc.Owner()})
				actx, acancel := context.WithTimeout(ctx, 20*time.Second)
				l, err := lc.Acquire(actx, "job")
				acancel()
				if err == nil {
					call.ok(l.Token())
				} else {
					call.unknown(err)
				}
				mu.Lock()
				acquires++
				if err != nil {
					acquireErrs++
					if acquireErrs <= 3 {
						t.Logf("%s: Acquire: %v", lc.Owner(), err)
					}
				}
				mu.Unlock()
				if err != nil {
					continue
				}
				held++
				h := leaseHolding{owner: lc.Owner(), token: l.Token(), called: called, from: time.Now()}
				writeUntilKnown(ctx, i, res, l, &h, 3, false)
				// Hold the lease a while (its work), so heartbeats run.
				select {
				case <-l.Done():
				case <-time.After(time.Duration(try%4) * 60 * time.Millisecond):
				}
				h.to = time.Now()
				h.lost = errors.Is(l.Err(), lease.ErrLost)
				rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
				call = lin.begin(i, leaseInput{Key: "job", Kind: lkRelease, Owner: lc.Owner(), Token: l.Token()})
				h.released = l.Release(rctx)
				rcancel()
				if h.released == nil {
					call.ok(nil)
				} else {
					call.failed(h.released, mapperNotApplied)
				}
				keep(h)
			}
		}()
	}
	workers.Wait()
	close(delStop)
	<-delDone
	close(stop)
	wg.Wait()
	close(frozenErr)
	for err := range frozenErr {
		t.Fatalf("frozen client: %v", err)
	}
	stats := stopFaults(transports)

	cleanRes, err := dynamo.NewTable[fencedResource](dynamo.NewMapper(clean), resName)
	if err != nil {
		t.Fatal(err)
	}
	final, err := cleanRes.Load(ctx, fencedResource{ID: "r"}, dynamo.ConsistentRead())
	if err != nil {
		t.Fatalf("reading the resource: %v", err)
	}
	call := lin.begin(clients+1, leaseInput{Key: "job", Kind: lkReadRes})
	call.ok(tokensValue(final.Tokens))
	anomalies := checkLeaseFaults(record, final)
	reportAnomalies(t, anomalies)
	hist, hidden := leaseHiddenTakes(lin.history())
	t.Logf("%d takes that an Acquire did not report (their record deleted first) added to the history", hidden)
	nonLinear := checkLinear(t, "lease", leaseModel, nil, hist, linCap, 30*time.Second).Anomalies()
	acked, found, lost, frozen, refusedLost, writes, releaseErrs := 0, 0, 0, 0, 0, 0, 0
	for _, h := range record {
		writes += len(h.writes)
		if _, ok := h.acked(); ok {
			acked++
		}
		if h.released != nil {
			releaseErrs++
		}
		if h.found {
			found++
		}
		if h.lost {
			lost++
		}
		if h.frozen {
			frozen++
			if n := len(h.writes); n > 0 && errors.Is(h.writes[n-1].err, lease.ErrLost) {
				refusedLost++
			}
		}
	}
	if frozen == 0 || refusedLost == 0 {
		t.Errorf("%d frozen holdings, %d of them refused with ErrLost: the stale-holder case was not exercised", frozen, refusedLost)
	}
	t.Logf("%d lease records deleted at random moments", deletions)
	t.Logf("%d Acquire calls (%d failed), %d holdings (%d frozen, %d of them refused with ErrLost), %d leases lost before release, "+
		"%d failed releases, %d takeovers of silent leases, %d failed heartbeats; %d guarded-write attempts: %d acknowledged, %d more found applied after failing, %d accepted by the resource in all",
		acquires, acquireErrs, len(record), frozen, refusedLost, lost, releaseErrs, events.count("taking over a silent lease"), events.count("heartbeat failed"),
		writes, acked, found, len(final.Tokens))
	// Operations: Acquire calls, guarded-write attempts and releases.
	ops := acquires + writes + len(record) - frozen
	ok := acquires - acquireErrs + acked + len(record) - frozen - releaseErrs
	logFaults(t, faultReport{Ops: ops, Acked: ok, Anomalies: len(anomalies) + nonLinear, Stats: stats})
}

// tokensValue is the resource's list of tokens as the lease model holds it.
func tokensValue(tokens []int64) string {
	s := make([]string, len(tokens))
	for i, tok := range tokens {
		s[i] = strconv.FormatInt(tok, 10)
	}
	return strings.Join(s, " ")
}

// slogCounter is a slog.Handler that counts the records logged, by message.
type slogCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *slogCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c *slogCounter) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *slogCounter) WithGroup(string) slog.Handler            { return c }
func (c *slogCounter) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[r.Message]++
	return nil
}

func (c *slogCounter) count(msg string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[msg]
}

// shortRetries gives a client the SDK's standard retryer (3 attempts, the
// default retry quota) with backoffs of up to maxBackoff instead of up to
// seconds, so that a fault costs milliseconds and a test with hundreds of
// them runs in seconds.
func shortRetries(maxBackoff time.Duration) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) { o.Retryer = shortRetryer(maxBackoff) }
}

func shortRetryer(maxBackoff time.Duration) *retry.Standard {
	return retry.NewStandard(func(so *retry.StandardOptions) {
		so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) {
			return rand.N(maxBackoff), nil
		})
	})
}

// TestFaultsLeaseChecker: checkLeaseFaults finds each kind of anomaly in a
// doctored record, and none in a good one.
func TestFaultsLeaseChecker(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	w := func(ms int, err error) []leaseWrite { return []leaseWrite{{start: at(ms), end: at(ms + 5), err: err}} }
	good := func() ([]leaseHolding, fencedResource) {
		return []leaseHolding{
			{owner: "a", token: 10, called: at(0), from: at(10), to: at(100), writes: w(20, nil)},
			{owner: "b", token: 11, called: at(5), from: at(110), to: at(200), writes: w(120, errors.New("reset"))},   // unknown, applied
			{owner: "c", token: 12, called: at(105), from: at(210), to: at(300), writes: w(220, errors.New("reset"))}, // unknown, not applied
			{owner: "d", token: 13, called: at(205), from: at(310), to: at(400), writes: w(320, nil)},
			{owner: "frozen", token: 9, called: at(-100), from: at(-90), to: at(50), frozen: true, writes: w(40, lease.ErrLost)},
		}, fencedResource{ID: "r", Token: 13, Writes: 3, Tokens: []int64{10, 11, 13}}
	}
	if hs, r := good(); len(checkLeaseFaults(hs, r)) != 0 {
		t.Fatalf("good record: %q", checkLeaseFaults(hs, r))
	}
	cases := map[string]func([]leaseHolding, *fencedResource) []leaseHolding{
		"overlapping live holders": func(hs []leaseHolding, _ *fencedResource) []leaseHolding {
			hs[1].from = at(90)
			return hs
		},
		"repeated token": func(hs []leaseHolding, _ *fencedResource) []leaseHolding {
			hs[2].token = 11
			return hs
		},
		"token backwards": func(hs []leaseHolding, r *fencedResource) []leaseHolding {
			hs[3].token = 9
			hs[4].token = 8
			r.Tokens, r.Token, r.Writes = []int64{10, 11}, 11, 2
			return hs
		},
		"acknowledged write missing": func(hs []leaseHolding, r *fencedResource) []leaseHolding {
			r.Tokens, r.Token, r.Writes = []int64{10, 11}, 11, 2
			return hs
		},
		"write counted twice": func(hs []leaseHolding, r *fencedResource) []leaseHolding {
			r.Tokens, r.Writes = []int64{10, 11, 11, 13}, 4
			return hs
		},
		"counter disagrees": func(hs []leaseHolding, r *fencedResource) []leaseHolding {
			r.Writes = 4
			return hs
		},
		"unknown token accepted": func(hs []leaseHolding, r *fencedResource) []leaseHolding {
			r.Tokens, r.Token, r.Writes = []int64{10, 11, 13, 14}, 14, 4
			return hs
		},
		"stale holder's write accepted": func(hs []leaseHolding, r *fencedResource) []leaseHolding {
			hs[2].writes = w(315, nil) // after d (token 13) acquired at 310
			hs[3].writes = w(320, errors.New("refused"))
			r.Tokens, r.Token, r.Writes = []int64{10, 11, 12}, 12, 3
			return hs
		},
		"frozen holder's write accepted": func(hs []leaseHolding, r *fencedResource) []leaseHolding {
			hs[4].writes = w(0, nil)
			r.Tokens, r.Writes = []int64{9, 10, 11, 13}, 4
			return hs
		},
	}
	for name, doctor := range cases {
		hs, r := good()
		hs = doctor(hs, &r)
		if got := checkLeaseFaults(hs, r); len(got) == 0 {
			t.Errorf("%s: no anomaly found", name)
		} else {
			t.Logf("%s: %q", name, got)
		}
	}
}
