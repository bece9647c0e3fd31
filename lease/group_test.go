package lease

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
)

// Timing of the fleets under test: patience d × skew = 10 s.
const (
	gDur  = 8 * time.Second
	gBeat = 2 * time.Second
	gPoll = time.Second
	gSkew = 1.25
)

// job is what the work on a key writes, guarded by the key's lease and by
// the token stored on it (never a lower one).
type job struct {
	Key    string `dynamo:"key,hash"`
	Token  int64  `dynamo:"token"`
	Holder string `dynamo:"holder"`
}

// fleet runs workers of one group in this process, each with a fake clock
// of its own, and checks exclusivity as the work runs: no key's work starts
// while another live worker's work on it runs, and every holder's guarded
// write carries a token above the previous holder's.
type fleet struct {
	t     *testing.T
	table string
	keys  []string
	jobs  *dynamo.Table[job]

	mu      sync.Mutex
	workers []*worker
	active  map[string]map[string]bool // key → workers whose work on it runs
	writes  map[string][]job           // key → guarded writes that succeeded, in order
	stale   map[string]bool            // workers crashed or paused: their work may still "run"
	wrote   chan struct{}              // closed and replaced at every guarded write
}

// awaitWrites waits until every key has had n guarded writes at least.
func (f *fleet) awaitWrites(n int) {
	for {
		f.mu.Lock()
		ch, done := f.wrote, true
		for _, k := range f.keys {
			done = done && len(f.writes[k]) >= n
		}
		f.mu.Unlock()
		if done {
			return
		}
		select {
		case <-ch:
		case <-f.t.Context().Done():
			return
		}
	}
}

type worker struct {
	name   string
	clk    *clock.Fake
	c      *Client
	g      *Group
	cancel context.CancelFunc
	done   chan error // Run's result
	frozen bool       // the clock is not advanced: crashed or paused
	// metrics reads the worker's own metrics (its mapper's meter
	// provider): ddbkit.lease.held counts its keys.
	metrics *sdkmetric.ManualReader
}

func newFleet(t *testing.T, nkeys int) *fleet {
	t.Helper()
	checkNoLeak(t)
	f := &fleet{t: t, table: leaseTable(t), active: map[string]map[string]bool{}, writes: map[string][]job{}, stale: map[string]bool{}, wrote: make(chan struct{})}
	for i := range nkeys {
		f.keys = append(f.keys, fmt.Sprintf("part-%02d", i))
	}
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "jobs", "key", types.ScalarAttributeTypeS, "", "")
	var err error
	if f.jobs, err = dynamo.NewTable[job](dynamo.NewMapper(dynamotest.Client(t)), name); err != nil {
		t.Fatal(err)
	}
	return f
}

// start starts a worker called name; its clock starts at start.
func (f *fleet) start(name string, start time.Time) *worker {
	f.t.Helper()
	return f.startWith(name, start, nil)
}

// startWith starts a worker whose requests go through client (nil: a plain
// one).
func (f *fleet) startWith(name string, start time.Time, client *dynamodb.Client) *worker {
	f.t.Helper()
	return f.startRun(name, start, client, f.work(name))
}

// startRun starts a worker called name running fn on its keys; its
// requests go through client (nil: a plain one).
func (f *fleet) startRun(name string, start time.Time, client *dynamodb.Client, fn func(context.Context, *Lease) error) *worker {
	f.t.Helper()
	return f.startOn(name, clock.NewFake(start), client, fn)
}

// startOn starts a worker called name on the clock clk, running fn on its
// keys; its requests go through client (nil: a plain one).
func (f *fleet) startOn(name string, clk *clock.Fake, client *dynamodb.Client, fn func(context.Context, *Lease) error) *worker {
	f.t.Helper()
	return f.startIn("job", name, clk, client, fn)
}

// startIn starts a worker called name of the group called group, on the
// clock clk, running fn on its keys; its requests go through client (nil: a
// plain one).
func (f *fleet) startIn(group, name string, clk *clock.Fake, client *dynamodb.Client, fn func(context.Context, *Lease) error) *worker {
	f.t.Helper()
	w := &worker{name: name, clk: clk, done: make(chan error, 1), metrics: sdkmetric.NewManualReader()}
	opts := []Option{WithOwner(name), WithClock(w.clk), WithLeaseDuration(gDur),
		WithHeartbeatInterval(gBeat), WithPollInterval(gPoll), WithClockSkewRate(gSkew)}
	if os.Getenv("LEASE_TEST_LOG") != "" {
		opts = append(opts, WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("worker", name)))
	}
	if client == nil {
		client = dynamotest.Client(f.t)
	}
	m := dynamo.NewMapper(client, dynamo.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(w.metrics))))
	w.c = newClientOn(f.t, m, f.table, opts...)
	var err error
	if w.g, err = w.c.Group(group, f.keys); err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() { w.done <- w.g.Run(ctx, fn) }()
	f.t.Cleanup(func() {
		cancel()
		if w.frozen {
			w.clk.Advance(time.Hour) // let a frozen worker notice it lost everything
		}
		<-w.done
	})
	f.mu.Lock()
	f.workers = append(f.workers, w)
	f.mu.Unlock()
	w.clk.BlockUntil(f.t.Context().Done(), 3) // joined: round, heartbeat and watchdog timers
	return w
}

// work is each worker's fn: it checks that nobody else works on the key,
// writes the key's job guarded by the lease, and works until its ctx ends.
func (f *fleet) work(name string) func(context.Context, *Lease) error {
	return func(ctx context.Context, l *Lease) error {
		k := l.Key()
		f.mu.Lock()
		for other := range f.active[k] {
			if !f.stale[other] {
				f.t.Errorf("%s starts work on %q (token %d) while %s works on it", name, k, l.Token(), other)
			}
		}
		if f.active[k] == nil {
			f.active[k] = map[string]bool{}
		}
		f.active[k][name] = true
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			delete(f.active[k], name)
			f.mu.Unlock()
		}()
		older := expression.Or(expression.AttributeNotExists(expression.Name("token")),
			expression.Name("token").LessThan(expression.Value(l.Token())))
		j := job{Key: k, Token: l.Token(), Holder: name}
		_, err := Save(ctx, l, f.jobs, j, dynamo.WithSaveBehavior(dynamo.SavePut), dynamo.If(older))
		switch {
		case err == nil:
			f.mu.Lock()
			if ws := f.writes[k]; len(ws) > 0 && ws[len(ws)-1].Token >= l.Token() {
				f.t.Errorf("%s wrote %q with token %d after %s's token %d", name, k, l.Token(), ws[len(ws)-1].Holder, ws[len(ws)-1].Token)
			}
			f.writes[k] = append(f.writes[k], j)
			close(f.wrote)
			f.wrote = make(chan struct{})
			f.mu.Unlock()
		case ctx.Err() == nil:
			f.t.Errorf("%s: guarded write of %q while holding it: %v", name, k, err)
		}
		<-ctx.Done()
		return nil
	}
}

// step advances the clock of every running worker that is not frozen by d,
// then waits until each has done what that set off: its round, heartbeat
// and watchdog timers are all pending again.
func (f *fleet) step(d time.Duration) {
	f.t.Helper()
	for _, w := range f.live() {
		w.clk.Advance(d)
	}
	f.idle()
}

// idle waits until every running worker that is not frozen waits on its
// three timers.
func (f *fleet) idle() {
	for _, w := range f.live() {
		w.clk.BlockUntil(f.t.Context().Done(), 3)
		for w.handingOver() {
			runtime.Gosched() // a release is on its way to DynamoDB
		}
	}
}

// handingOver reports whether the worker is releasing keys it handed over.
func (w *worker) handingOver() bool {
	w.g.mu.Lock()
	defer w.g.mu.Unlock()
	if w.g.cur == nil {
		return false
	}
	w.g.cur.mu.Lock()
	defer w.g.cur.mu.Unlock()
	return len(w.g.cur.leaving) > 0
}

// settle steps poll by poll until cond holds, and returns the fake time it
// took; the test fails after limit.
func (f *fleet) settle(limit time.Duration, cond func() bool) time.Duration {
	f.t.Helper()
	f.idle()
	for took := time.Duration(0); ; took += gPoll {
		if cond() {
			return took
		}
		if took > limit {
			f.t.Fatalf("not settled after %v: %s", took, f.describe())
		}
		if os.Getenv("LEASE_TEST_LOG") != "" {
			f.t.Logf("at %v: %s", took, f.describe())
		}
		f.step(gPoll)
	}
}

// describe says who holds what.
func (f *fleet) describe() string {
	var b strings.Builder
	for _, w := range f.live() {
		fmt.Fprintf(&b, "%s: %v", w.name, w.g.Keys())
		w.g.mu.Lock()
		if cur := w.g.cur; cur != nil {
			cur.mu.Lock()
			fmt.Fprintf(&b, " asks %v leaving %v", cur.asks, cur.leaving)
			cur.mu.Unlock()
		}
		w.g.mu.Unlock()
		b.WriteString("; ")
	}
	return b.String()
}

func (f *fleet) live() []*worker {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*worker
	for _, w := range f.workers {
		if !w.frozen && w.g.running.Load() {
			out = append(out, w)
		}
	}
	return out
}

// balanced reports whether the live workers hold every key once, each
// ⌊M/N⌋ or ⌈M/N⌉ of them, and no more handovers are under way.
func (f *fleet) balanced() bool {
	ws := f.live()
	n, m := len(ws), len(f.keys)
	seen := map[string]bool{}
	for _, w := range ws {
		ks := w.g.Keys()
		if len(ks) < m/n || len(ks) > (m+n-1)/n {
			return false
		}
		w.g.mu.Lock()
		cur := w.g.cur
		w.g.mu.Unlock()
		if cur == nil {
			return false
		}
		cur.mu.Lock()
		busy := len(cur.leaving) > 0 || len(cur.asks) > 0
		cur.mu.Unlock()
		if busy {
			return false
		}
		for _, k := range ks {
			if seen[k] {
				f.t.Errorf("key %q held by two workers: %s", k, f.describe())
			}
			seen[k] = true
		}
	}
	return len(seen) == m
}

// Workers joining one after another end up holding ⌊M/N⌋ or ⌈M/N⌉ keys
// each, every key held once, and then nothing moves any more. A key a
// worker holds is refused to Acquire and TryAcquire.
func TestGroupBalancesKeys(t *testing.T) {
	f := newFleet(t, 10)
	now := time.Now()
	f.start("w1", now)
	f.start("w2", now)
	f.start("w3", now)
	took := f.settle(2*time.Minute, f.balanced)
	t.Logf("balanced after %v: %s", took, f.describe())
	before := f.tokens()
	for range 20 {
		f.step(gPoll)
	}
	if after := f.tokens(); !f.balanced() || !maps.Equal(before, after) {
		t.Errorf("keys moved at steady state: tokens %v, then %v: %s", before, after, f.describe())
	}
	k := f.live()[0].g.Keys()[0]
	if _, err := f.live()[0].c.TryAcquire(t.Context(), k); !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "group") {
		t.Errorf("TryAcquire of a key a worker holds: %v, want ErrHeld naming the group", err)
	}
}

// A worker that joins a fleet at rest gets its share within two poll
// intervals (the joiner's asks written at its first round, the holders'
// next rounds releasing the keys, the joiner's next round taking them), and
// every key that moved has a greater token than before.
func TestGroupJoinGetsShare(t *testing.T) {
	f := newFleet(t, 12)
	now := time.Now()
	f.start("w1", now)
	f.start("w2", now)
	f.settle(time.Minute, f.balanced)
	for range 2 * gBeat / gPoll {
		f.step(gPoll) // at rest: every worker record lists what it holds
	}
	tokens := f.tokens()
	w3 := f.start("w3", f.live()[0].clk.Now())
	took := f.settle(time.Minute, f.balanced)
	if bound := 2 * gPoll; took > bound {
		t.Errorf("the joiner got its share after %v, want at most %v", took, bound)
	}
	if got := len(w3.g.Keys()); got != 4 {
		t.Errorf("the joiner holds %d keys, want 4", got)
	}
	for k, tok := range f.tokens() {
		if old, ok := tokens[k]; ok && slices.Contains(w3.g.Keys(), k) && tok <= old {
			t.Errorf("key %q moved with token %d, not above %d", k, tok, old)
		}
	}
	t.Logf("joiner's share after %v: %s", took, f.describe())
}

// A worker alone in its group (no other on the roster it reads after its
// join) takes the free keys at its first round, without waiting a poll
// interval: its clock does not move, and it holds every key.
func TestGroupLoneWorkerTakesKeysAtFirstRound(t *testing.T) {
	f := newFleet(t, 6)
	now := time.Now()
	w := f.start("w1", now)
	// The worker's clock is never advanced: only its first round can
	// take the keys. Real time bounds the wait for its requests.
	deadline := time.Now().Add(30 * time.Second)
	for len(w.g.Keys()) < len(f.keys) {
		if time.Now().After(deadline) {
			t.Fatalf("a lone worker holds %v at its first round, want all %d keys", w.g.Keys(), len(f.keys))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := w.clk.Now(); !got.Equal(now) {
		t.Fatalf("the clock moved to %v", got)
	}
}

// overlapTransport counts the takes (TransactWriteItems writing a token
// record): all of them, and those in flight at once (most: the largest
// count seen); each waits, up to a real-time bound, for another to be in
// flight with it, so that takes sent one after another show as one at a
// time however fast the server answers.
type overlapTransport struct {
	next http.RoundTripper

	mu           sync.Mutex
	cur, most    int
	takes        int
	another      chan struct{} // closed when two are in flight
	anotherClose sync.Once
}

func (o *overlapTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".TransactWriteItems") || req.Body == nil {
		return o.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	if !bytes.Contains(body, []byte(`\u0000token:`)) {
		return o.next.RoundTrip(req) // not a take (which writes the key's token record): a guarded write of the work
	}
	o.mu.Lock()
	o.cur++
	o.takes++
	o.most = max(o.most, o.cur)
	if o.cur >= 2 {
		o.anotherClose.Do(func() { close(o.another) })
	}
	o.mu.Unlock()
	select {
	case <-o.another:
	case <-time.After(2 * time.Second): // a bound on the wait, not synchronisation
	}
	defer func() {
		o.mu.Lock()
		o.cur--
		o.mu.Unlock()
	}()
	return o.next.RoundTrip(req)
}

// A worker taking many free keys takes them in transactions of up to
// takesPerTx keys each, sent at once rather than one after another: three
// transactions for twice takesPerTx keys and two, in flight together, and
// it holds every key.
func TestGroupTakesFreeKeysAtOnce(t *testing.T) {
	f := newFleet(t, 2*takesPerTx+2)
	ot := &overlapTransport{next: http.DefaultTransport, another: make(chan struct{})}
	w := f.startWith("w1", time.Now(), dynamotest.ClientWith(t, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: ot} }))
	f.settle(time.Minute, f.balanced)
	if got := w.g.Keys(); len(got) != len(f.keys) {
		t.Fatalf("holds %d keys, want all %d", len(got), len(f.keys))
	}
	ot.mu.Lock()
	defer ot.mu.Unlock()
	if ot.takes != 3 || ot.most < 2 {
		t.Fatalf("%d takes, at most %d in flight at once; want 3, together", ot.takes, ot.most)
	}
	t.Logf("%d takes, %d in flight at once", ot.takes, ot.most)
}

// A worker whose owner left the group before joins again over its own
// ended record (its join writes under the version that record has, without
// reading it first) and takes the keys.
func TestGroupRejoinsOverItsEndedRecord(t *testing.T) {
	f := newFleet(t, 3)
	now := time.Now()
	w := f.start("w1", now)
	f.settle(time.Minute, f.balanced)
	w.cancel()
	if err := <-w.done; err != nil {
		t.Fatalf("Run after leaving: %v", err)
	}
	w.done <- nil // for the cleanup
	again := f.start("w1", now)
	f.settle(time.Minute, f.balanced)
	if got := again.g.Keys(); len(got) != len(f.keys) {
		t.Fatalf("the worker joining again holds %v, want all %d keys", got, len(f.keys))
	}
	rec, err := again.g.workers.Load(t.Context(), workerRecord{Key: again.g.workerKey("w1")}, dynamo.ConsistentRead())
	if err != nil || rec.Ended || rec.Version < 2 {
		t.Fatalf("worker record %+v (%v): want a live one written over the ended one", rec, err)
	}
}

// tokens returns the tokens of the keys held now, by key.
func (f *fleet) tokens() map[string]int64 {
	out := map[string]int64{}
	for _, w := range f.live() {
		w.g.mu.Lock()
		cur := w.g.cur
		w.g.mu.Unlock()
		cur.mu.Lock()
		for k, l := range cur.held {
			out[k] = l.Token()
		}
		cur.mu.Unlock()
	}
	return out
}

// A worker that leaves (its Run's ctx cancelled) hands its keys back at
// once: Run returns nil after releasing them, and the others take them at
// their next round, without waiting out any lease.
func TestGroupLeaveHandsOver(t *testing.T) {
	f := newFleet(t, 9)
	now := time.Now()
	f.start("w1", now)
	f.start("w2", now)
	w3 := f.start("w3", now)
	f.settle(time.Minute, f.balanced)
	w3.cancel()
	if err := <-w3.done; err != nil {
		t.Fatalf("Run after leaving: %v", err)
	}
	w3.done <- nil // for the cleanup
	took := f.settle(time.Minute, f.balanced)
	if took > gPoll {
		t.Errorf("the leaver's keys moved after %v, want within one poll interval (%v)", took, gPoll)
	}
	info, err := w3.c.Holder(t.Context(), w3.g.workerKey("w3"))
	if err == nil {
		t.Logf("worker record: %+v", info)
	}
	t.Logf("after the leave, %v: %s", took, f.describe())
}

// A crashed worker (its clock and so its heartbeats stop) has its keys
// taken by the others no sooner than the lease duration after its last
// heartbeat — by then it has given them up — and no later than duration ×
// skew rate + two poll intervals after it.
func TestGroupCrashTakeover(t *testing.T) {
	f := newFleet(t, 9)
	now := time.Now()
	f.start("w1", now)
	f.start("w2", now)
	w3 := f.start("w3", now)
	f.settle(time.Minute, f.balanced)
	f.idle() // w3's last heartbeat is done
	w3.g.mu.Lock()
	m3 := w3.g.cur
	w3.g.mu.Unlock()
	f.mu.Lock()
	w3.frozen, f.stale["w3"] = true, true
	f.mu.Unlock()
	m3.mu.Lock()
	lastBeat := m3.deadline.Add(-gDur) // on the shared time line
	held := len(m3.held)
	m3.mu.Unlock()
	took := f.settle(time.Minute, f.balanced)
	since := f.live()[0].clk.Now().Sub(lastBeat)
	if bound := time.Duration(float64(gDur)*gSkew) + 2*gPoll; since < gDur || since > bound {
		t.Errorf("the crashed worker's %d keys were taken %v after its last heartbeat, want between %v and %v", held, since, gDur, bound)
	}
	t.Logf("crashed worker's %d keys taken %v after its last heartbeat (%v of stepping): %s", held, since, took, f.describe())
}

// A worker paused past its lease (its clock stands still) is declared dead
// and its keys are taken; its guarded writes with its old leases are then
// refused with ErrLost and write nothing. Resumed, it finds it lost its
// membership, joins again and gets its share back.
func TestGroupPausedWorkerWritesRefused(t *testing.T) {
	f := newFleet(t, 6)
	now := time.Now()
	f.start("w1", now)
	w2 := f.start("w2", now)
	f.settle(time.Minute, f.balanced)
	w2.g.mu.Lock()
	m2 := w2.g.cur
	w2.g.mu.Unlock()
	m2.mu.Lock()
	var old *Lease
	for _, l := range m2.held {
		old = l
		break
	}
	m2.mu.Unlock()
	f.mu.Lock()
	w2.frozen, f.stale["w2"] = true, true
	f.mu.Unlock()
	f.settle(time.Minute, f.balanced) // w1 holds all six
	if old.Err() != nil {
		t.Fatalf("the paused worker's lease ended although its clock stood still: %v", old.Err())
	}
	_, err := Save(t.Context(), old, f.jobs, job{Key: old.Key(), Token: old.Token(), Holder: "w2-stale"}, dynamo.WithSaveBehavior(dynamo.SavePut))
	if !errors.Is(err, ErrLost) {
		t.Fatalf("the paused worker's guarded write: %v, want ErrLost", err)
	}
	if j, err := f.jobs.Load(t.Context(), job{Key: old.Key()}, dynamo.ConsistentRead()); err != nil || j.Holder != "w1" || j.Token <= old.Token() {
		t.Errorf("job %q after the refused write: %+v %v; want w1's, with a token above %d", old.Key(), j, err, old.Token())
	}
	// Resume: its watchdog fires, its membership is lost, it joins again.
	w2.clk.Advance(f.live()[0].clk.Now().Sub(w2.clk.Now()))
	for {
		w2.g.mu.Lock()
		cur := w2.g.cur
		w2.g.mu.Unlock()
		if cur != nil && cur != m2 {
			break
		}
		w2.clk.BlockUntil(t.Context().Done(), 1)
		w2.clk.Advance(gPoll)
	}
	f.mu.Lock()
	w2.frozen, f.stale["w2"] = false, false
	f.mu.Unlock()
	took := f.settle(time.Minute, f.balanced)
	t.Logf("the resumed worker has its share again after %v: %s", took, f.describe())
}

// Keys() is sorted and empty outside Run; Group refuses bad arguments.
func TestGroupArguments(t *testing.T) {
	c := newClient(t, "t", nil)
	for _, tc := range []struct {
		name string
		keys []string
		want string
	}{
		{"", []string{"a"}, "empty name"},
		{"g", nil, "no keys"},
		{"g", []string{"a", "a"}, "twice"},
		{"g", []string{"\x00x"}, "NUL"},
	} {
		if _, err := c.Group(tc.name, tc.keys); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Group(%q, %q): %v, want %q", tc.name, tc.keys, err, tc.want)
		}
	}
	g, err := c.Group("g", []string{"b", "a"})
	if err != nil || len(g.Keys()) != 0 || !sort.StringsAreSorted(g.keys) {
		t.Errorf("Group: %v, %v", g.Keys(), err)
	}
}

// A take whose answer was lost (and not retried by the SDK) but which
// DynamoDB applied is recognised at the next round by the worker's
// incarnation in the key record: the worker holds the key, and its guarded
// writes pass, instead of leaving a key that names a live worker nobody
// works on.
func TestGroupAdoptsItsLandedTake(t *testing.T) {
	f := newFleet(t, 3)
	drop := dynamotest.NewDropper("TransactWriteItems")
	drop.Arm(1)
	w := f.startWith("w1", time.Now(), drop.Client(t, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }))
	took := f.settle(time.Minute, f.balanced)
	if drop.Dropped() != 1 || len(w.g.Keys()) != 3 {
		t.Fatalf("dropped %d answers; holds %v; want 1 dropped and all 3 keys held", drop.Dropped(), w.g.Keys())
	}
	f.awaitWrites(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range f.keys {
		if len(f.writes[k]) != 1 {
			t.Errorf("key %q: %d guarded writes, want 1: %v", k, len(f.writes[k]), f.writes[k])
		}
	}
	t.Logf("all keys held after %v, one take's answer lost", took)
}

// Client.Close makes a running group worker leave at its next round: its
// keys are released and Run returns ErrClosed.
func TestGroupClientCloseLeaves(t *testing.T) {
	f := newFleet(t, 2)
	w := f.start("w1", time.Now())
	f.settle(time.Minute, f.balanced)
	if err := w.c.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	w.clk.Advance(gPoll)
	err := <-w.done
	w.done <- err // for the cleanup
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("Run after Close: %v, want ErrClosed", err)
	}
	for _, k := range f.keys {
		if info, err := w.c.Holder(t.Context(), k); err != nil || !info.Released {
			t.Errorf("key %q after Close: %+v, %v; want released", k, info, err)
		}
	}
}

// Leaving while a heartbeat is in flight: the heartbeat is applied, and
// leaving stops the heartbeat before its answer arrives. Its write must
// not be abandoned half-way (a record version the worker does not know
// of would make leaving's write conflict): Run leaves with the record
// marked ended and returns nil.
func TestGroupLeaveDuringHeartbeat(t *testing.T) {
	f := newFleet(t, 1)
	drop := dynamotest.NewDropper("PutItem")
	w := f.startWith("w1", time.Now(), drop.Client(t, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }))
	f.settle(time.Minute, f.balanced)
	w.g.mu.Lock()
	m := w.g.cur
	w.g.mu.Unlock()
	drop.ArmThen(func() { // the heartbeat was applied; its answer waits
		w.cancel()
		<-m.beatCtx.Done() // leaving stops the heartbeat
	})
	w.clk.Advance(gBeat)
	err := <-w.done
	w.done <- err // for the cleanup
	if drop.Dropped() != 1 {
		t.Fatalf("dropped %d answers, want the heartbeat's", drop.Dropped())
	}
	if err != nil {
		t.Fatalf("Run after leaving: %v", err)
	}
	rec, err := w.g.workers.Load(t.Context(), workerRecord{Key: w.g.workerKey("w1")}, dynamo.ConsistentRead())
	if err != nil || !rec.Ended {
		t.Errorf("worker record after leaving: %+v, %v; want ended", rec, err)
	}
}

// A worker restarted under its old name joins even when another worker
// marks its old, silent incarnation ended between join's learning of the
// worker record (its first write's conflict carries it) and its write over
// it: join writes its new incarnation over whatever record it finds, so Run
// goes on and takes the group's keys rather than returning the version
// conflict.
func TestGroupJoinOverRecordEndedMeanwhile(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	other, err := dynamo.NewTable[workerRecord](dynamo.NewMapper(dynamotest.Client(t)), table)
	if err != nil {
		t.Fatal(err)
	}
	tr := &afterAnswer{next: http.DefaultTransport.(*http.Transport).Clone(), target: "DynamoDB_20120810.PutItem"}
	t.Cleanup(tr.next.CloseIdleConnections)
	c := newClientOn(t, dynamo.NewMapper(dynamotest.ClientWith(t, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: tr} })),
		table, WithOwner("w1"), WithClock(clock.NewFake(time.Now())))
	g, err := c.Group("g", []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	// The crashed incarnation's record, not ended.
	old, err := other.Save(t.Context(), workerRecord{Key: g.workerKey("w1"), Owner: "w1", Attempt: "crashed", DurationMS: 20000})
	if err != nil {
		t.Fatal(err)
	}
	tr.hook = func() { // join's first write met the record: another worker declares it ended
		old.Ended = true
		if _, err := other.Save(context.Background(), old, dynamo.WithSaveBehavior(dynamo.SavePut)); err != nil {
			t.Error(err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	took := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- g.Run(ctx, func(ctx context.Context, l *Lease) error {
			took <- struct{}{}
			<-ctx.Done()
			return nil
		})
	}()
	select {
	case <-took:
	case err := <-done:
		cancel()
		t.Fatalf("Run returned %v before taking its key; want it to join over the record ended meanwhile", err)
	case <-time.After(30 * time.Second): // a failure bound: the lone worker takes its key at its first round
		t.Error("the key was not taken within 30 s")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after leaving: %v", err)
	}
}

// Two Groups of one name on one client would be two workers of one owner,
// writing over each other's worker record: the second Run is refused at
// once, saying why, and the first keeps its membership and its keys.
func TestGroupSecondOfOneNameOnOneClientRefused(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	clk := clock.NewFake(time.Now())
	c := newClient(t, table, nil, WithOwner("w1"), WithClock(clk))
	g1, err := c.Group("g", []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	g2, err := c.Group("g", []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	took := make(chan *Lease, 1)
	done := make(chan error, 1)
	go func() {
		done <- g1.Run(ctx, func(ctx context.Context, l *Lease) error {
			took <- l
			<-ctx.Done()
			return nil
		})
	}()
	l := <-took
	second := make(chan error, 1)
	go func() {
		second <- g2.Run(ctx, func(ctx context.Context, l *Lease) error { <-ctx.Done(); return nil })
	}()
	select {
	case err := <-second:
		if err == nil || !strings.Contains(err.Error(), "runs on this client") {
			t.Errorf("second Run of group g on one client: %v; want it refused, saying another runs on this client", err)
		}
	case <-time.After(10 * time.Second): // a failure bound: the refusal is at once
		cancel()
		<-second
		t.Error("the second Run of group g on one client was not refused")
	}
	clk.Advance(gBeat) // a heartbeat of the first: its record is still its own
	clk.Advance(gBeat)
	if l.Err() != nil {
		t.Errorf("the first worker's key after the second Run: %v; want it held", l.Err())
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("first Run after leaving: %v", err)
	}
}

// A key a group worker holds longer than the TTL (WithTTL) keeps a record
// that TTL may not remove: its expiry stays ahead of the clock while the
// worker's heartbeats go on. (Were it removed, the key's guarded writes
// would fail with ErrLost, its record deleted: TTL must only clean up.)
func TestGroupKeyHeldPastTheTTLKeepsItsRecord(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	clk := clock.NewFake(time.Now())
	const d, beat, ttl = 4 * time.Minute, time.Minute, time.Hour
	c := newClient(t, table, nil, WithOwner("w1"), WithClock(clk), WithLeaseDuration(d), WithHeartbeatInterval(beat), WithTTL(ttl))
	g, err := c.Group("g", []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	took := make(chan *Lease, 1)
	done := make(chan error, 1)
	go func() {
		done <- g.Run(ctx, func(ctx context.Context, l *Lease) error {
			took <- l
			<-ctx.Done()
			return nil
		})
	}()
	l := <-took
	for end := clk.Now().Add(2 * ttl); clk.Now().Before(end); {
		clk.BlockUntil(t.Context().Done(), 3) // heartbeat, poll and watchdog: the worker waits
		clk.Advance(beat)
	}
	clk.BlockUntil(t.Context().Done(), 3)
	rec, err := c.table.Load(t.Context(), record{Key: "k"}, dynamo.ConsistentRead())
	if err != nil {
		t.Fatal(err)
	}
	if l.Err() != nil || rec.Expires <= clk.Now().Unix() {
		t.Errorf("key held for %v with a TTL of %v: lease err %v, record expires %v, now %v; want held, its record's expiry ahead",
			2*ttl, ttl, l.Err(), time.Unix(rec.Expires, 0), clk.Now())
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after leaving: %v", err)
	}
}

// TestGroupClockJumpPastTheTTLRetakesTheKey: the worker's clock jumping two
// TTLs ahead at once (a suspended VM, an NTP step) is a pause past the
// lease: the membership ends and the key's lease with it, Run joins again
// and retakes the key — with a greater token — once the old incarnation's
// patience has run out, and the key's record then expires a TTL after the
// clock's new time (refreshKeys measures from now, not from the take).
func TestGroupClockJumpPastTheTTLRetakesTheKey(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	clk := clock.NewFake(time.Now())
	const d, beat, ttl = 4 * time.Minute, time.Minute, time.Hour
	c := newClient(t, table, nil, WithOwner("w1"), WithClock(clk), WithLeaseDuration(d), WithHeartbeatInterval(beat), WithTTL(ttl))
	g, err := c.Group("g", []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	took := make(chan *Lease, 2)
	done := make(chan error, 1)
	go func() {
		done <- g.Run(ctx, func(ctx context.Context, l *Lease) error {
			took <- l
			<-ctx.Done()
			return nil
		})
	}()
	first := <-took
	clk.BlockUntil(t.Context().Done(), 3)
	clk.Advance(2 * ttl) // the jump: every timer due fires at once
	var second *Lease
	for i := 0; second == nil; i++ {
		if i > 120 {
			t.Fatalf("no key retaken two hours of beats after the jump; first lease err %v", first.Err())
		}
		select {
		case second = <-took:
			continue
		default:
		}
		clk.BlockUntil(t.Context().Done(), 3)
		clk.Advance(beat)
	}
	if first.Err() == nil || second.Token() <= first.Token() {
		t.Errorf("after the jump: first lease err %v, token %d; retaken with token %d; want the first ended and a greater token", first.Err(), first.Token(), second.Token())
	}
	// A few beats on, the record holds a TTL from the clock's new time.
	for range 3 {
		clk.BlockUntil(t.Context().Done(), 3)
		clk.Advance(beat)
	}
	clk.BlockUntil(t.Context().Done(), 3)
	rec, err := c.table.Load(t.Context(), record{Key: "k"}, dynamo.ConsistentRead())
	if err != nil {
		t.Fatal(err)
	}
	if second.Err() != nil || rec.Token != second.Token() || rec.Expires <= clk.Now().Unix()+int64(ttl/2/time.Second) {
		t.Errorf("retaken key: lease err %v, record token %d (lease %d), expires %v, now %v; want held, the record a TTL ahead",
			second.Err(), rec.Token, second.Token(), time.Unix(rec.Expires, 0), clk.Now())
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after leaving: %v", err)
	}
}

// On a lease table the Mapper treats as MRSC, every take is refused before
// sending (a transaction): Run leaves the group and returns the refusal at
// its first round, rather than holding no key until its ctx ends.
func TestGroupRunOnStrongGlobalTableReturnsRefusal(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	m := dynamo.NewMapper(dynamotest.Client(t), dynamo.WithStrongGlobalTables(table))
	c := newClientOn(t, m, table, WithOwner("w1"))
	g, err := c.Group("g", []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	err = g.Run(t.Context(), func(ctx context.Context, l *Lease) error {
		t.Errorf("fn ran for key %s on an MRSC table", l.Key())
		return nil
	})
	if !errors.Is(err, dynamo.ErrInvalidInput) {
		t.Fatalf("Run = %v, want the refusal (ErrInvalidInput)", err)
	}
	if keys := g.Keys(); len(keys) != 0 {
		t.Errorf("Keys after Run = %v, want none", keys)
	}
}
