package lease

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/leaktest"
	"github.com/ddbkit/dynamo/internal/telemetry"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// leaseTable creates a lease table through Client.CreateTable and returns
// its name.
func leaseTable(t testing.TB) string {
	t.Helper()
	name := "lease-" + strings.ReplaceAll(strings.ToLower(t.Name()), "/", "-")
	c, err := New(dynamo.NewMapper(dynamotest.Client(t)), name+"-"+randSuffix())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.table.DeleteTable(context.Background()) })
	return c.table.Name()
}

func randSuffix() string { return time.Now().Format("150405.000000000") }

func newClient(t testing.TB, table string, c *dynamodb.Client, opts ...Option) *Client {
	t.Helper()
	if c == nil {
		c = dynamotest.Client(t)
	}
	return newClientOn(t, dynamo.NewMapper(c), table, opts...)
}

// newClientOn returns a lease client of table on m, closed when the test
// ends.
func newClientOn(t testing.TB, m *dynamo.Mapper, table string, opts ...Option) *Client {
	t.Helper()
	lc, err := New(m, table, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lc.Close(context.Background()) })
	return lc
}

// checkNoLeak fails the test if goroutines of this package (heartbeats,
// watchdogs, waiters) are still running once it ends and its cleanups ran.
func checkNoLeak(t *testing.T) { leaktest.Check(t, leasePkg) }

const leasePkg = "ddbkit/dynamo/lease."

func leakedGoroutines() []string { return leaktest.Goroutines(leasePkg) }

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		want string
	}{
		{[]Option{WithLeaseDuration(0)}, "positive duration"},
		{[]Option{WithHeartbeatInterval(time.Minute)}, "shorter than the lease duration"},
		{[]Option{WithClockSkewRate(0.5)}, "from 1 to 100"},
		{[]Option{WithPollInterval(-1)}, "positive"},
		{[]Option{WithTTL(time.Minute)}, "at least an hour"},
	} {
		_, err := buildOptions(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
	o, err := buildOptions(nil)
	if err != nil || o.duration != 20*time.Second || o.heartbeat != 5*time.Second || o.poll != time.Second || o.skew != 1.25 || o.owner == "" {
		t.Errorf("defaults %+v %v", o, err)
	}
}

func TestTryAcquireReleaseAndTokens(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	a := newClient(t, table, nil, WithOwner("a"))
	b := newClient(t, table, nil, WithOwner("b"), WithData([]byte("10.0.0.2:80")))
	ctx := t.Context()

	la, err := a.TryAcquire(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	if la.Err() != nil || la.Key() != "job" || la.Token() < time.Now().Add(-time.Hour).UnixMilli() {
		t.Fatalf("first lease %+v: token %d should start from the time in ms", la.Err(), la.Token())
	}
	_, err = b.TryAcquire(ctx, "job")
	if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "by a") {
		t.Fatalf("TryAcquire of a held lease: %v", err)
	}
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-la.Done():
	default:
		t.Fatal("Done open after Release")
	}
	if !errors.Is(la.Err(), ErrReleased) || la.Context().Err() == nil {
		t.Errorf("Err after Release = %v", la.Err())
	}
	if err := la.Release(ctx); err != nil {
		t.Errorf("second Release: %v", err)
	}
	lb, err := b.TryAcquire(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	if lb.Token() != la.Token()+1 {
		t.Errorf("token after release and re-acquire = %d, want %d", lb.Token(), la.Token()+1)
	}
	info, err := a.Holder(ctx, "job")
	if err != nil || info.Owner != "b" || string(info.Data) != "10.0.0.2:80" || info.Released {
		t.Errorf("Holder = %+v %v", info, err)
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(lb.Err(), ErrReleased) {
		t.Errorf("Close did not release: %v", lb.Err())
	}
	if _, err := b.TryAcquire(ctx, "job"); !errors.Is(err, ErrClosed) {
		t.Errorf("TryAcquire after Close: %v", err)
	}
	info, _ = a.Holder(ctx, "job")
	if !info.Released {
		t.Errorf("record not marked released: %+v", info)
	}
}

// A holder that stops heartbeating is taken over no sooner than the lease
// duration and no later than duration × skew rate + one poll interval, on
// the waiter's clock.
func TestCrashTakeoverTiming(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	const d, poll, rate = 10 * time.Second, time.Second, 1.5
	frozen := clock.NewFake(time.Now()) // the crashed holder's clock never moves
	waiterClock := clock.NewFake(time.Now())
	holder := newClient(t, table, nil, WithOwner("holder"), WithClock(frozen), WithLeaseDuration(d))
	waiter := newClient(t, table, nil, WithOwner("waiter"), WithClock(waiterClock),
		WithLeaseDuration(d), WithPollInterval(poll), WithClockSkewRate(rate))
	lh, err := holder.TryAcquire(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		l   *Lease
		err error
	}
	got := make(chan result, 1)
	go func() {
		l, err := waiter.Acquire(t.Context(), "k")
		got <- result{l, err}
	}()
	// Advance the waiter's clock from poll to poll: whenever its only timer
	// is a poll timer (due within a poll interval), jump to it.
	start := waiterClock.Now()
	for {
		changed := waiterClock.Changed() // before looking, so no change is missed
		if next, ok := waiterClock.Next(); ok && waiterClock.Timers() == 1 && next <= poll {
			if waiterClock.Now().Sub(start) > 2*d {
				t.Fatalf("not taken over after %v", waiterClock.Now().Sub(start))
			}
			waiterClock.Advance(next)
			continue
		}
		select {
		case r := <-got:
			if r.err != nil {
				t.Fatal(r.err)
			}
			waited := r.l.acquired.Sub(start)
			if waited < d || waited > time.Duration(float64(d)*rate)+poll {
				t.Errorf("taken over after %v; want between %v and %v", waited, d, time.Duration(float64(d)*rate)+poll)
			}
			if r.l.Token() != lh.Token()+1 {
				t.Errorf("token %d, want %d", r.l.Token(), lh.Token()+1)
			}
			t.Logf("taken over after %v of silence (duration %v, rate %v, poll %v)", waited, d, rate, poll)
			_ = r.l.Release(t.Context())
			frozen.Advance(d) // let the crashed holder's watchdog run, so nothing leaks
			<-lh.Done()
			return
		case <-changed:
		}
	}
}

// A heartbeat whose response was lost but which DynamoDB applied does not
// lose the lease.
func TestLostHeartbeatResponseKeepsLease(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	drop := dynamotest.NewDropper("UpdateItem")
	clk := clock.NewFake(time.Now())
	c := newClient(t, table, drop.Client(t), WithOwner("h"), WithClock(clk), WithLeaseDuration(8*time.Second))
	l, err := c.TryAcquire(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := c.table.Load(t.Context(), record{Key: "k"}, dynamo.ConsistentRead())
	for i := range 3 {
		drop.Arm(1)
		sent := drop.Sent()
		clk.BlockUntil(t.Context().Done(), 2) // watchdog + heartbeat timer
		clk.Advance(2 * time.Second)          // the heartbeat interval
		for drop.Sent() < sent+1 {            // the heartbeat (its lost answer is settled by a read, not resent)
			runtime.Gosched()
		}
		clk.BlockUntil(t.Context().Done(), 2) // the heartbeat is done and waits again
		if err := l.Err(); err != nil {
			t.Fatalf("heartbeat %d: lease lost after a dropped response: %v", i, err)
		}
	}
	after, _ := c.table.Load(t.Context(), record{Key: "k"}, dynamo.ConsistentRead())
	if drop.Dropped() != 3 || after.Version != before.Version+3 || after.Owner != "h" {
		t.Errorf("dropped %d; version %d → %d; want 3 drops and 3 heartbeats applied once each", drop.Dropped(), before.Version, after.Version)
	}
	_ = l.Release(t.Context())
}

// Freeze a holder past its lease; another takes over; the frozen holder's
// guarded write fails and its Done is closed.
func TestPausedHolderCannotWrite(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	jobs := dynamotest.KeyTable(t, dynamotest.Client(t), "jobs", "id", types.ScalarAttributeTypeS, "", "")
	type Job struct {
		ID      string `dynamo:"id,hash"`
		Token   int64  `dynamo:"token"`
		Version int64  `dynamo:"v,version"`
	}
	jt, err := dynamo.NewTable[Job](dynamo.NewMapper(dynamotest.Client(t)), jobs)
	if err != nil {
		t.Fatal(err)
	}
	const d = 4 * time.Second
	pausedClock := clock.NewFake(time.Now())
	paused := newClient(t, table, nil, WithOwner("paused"), WithClock(pausedClock), WithLeaseDuration(d))
	other := newClient(t, table, nil, WithOwner("other"), WithLeaseDuration(d), WithPollInterval(50*time.Millisecond), WithClockSkewRate(1))
	lp, err := paused.TryAcquire(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	job, err := Save(t.Context(), lp, jt, Job{ID: "j", Token: lp.Token()})
	if err != nil {
		t.Fatalf("guarded write while holding: %v", err)
	}
	// The paused holder's clock stands still: no heartbeat, no watchdog.
	lo, err := other.Acquire(t.Context(), "k") // takes over after d of silence (real time)
	if err != nil {
		t.Fatal(err)
	}
	defer lo.Release(context.Background())
	if lo.Token() != lp.Token()+1 {
		t.Fatalf("token %d, want %d", lo.Token(), lp.Token()+1)
	}
	// Before its clock runs again the paused holder still believes; the
	// guard in the transaction stops its write.
	job.Token = lp.Token()
	_, err = Save(t.Context(), lp, jt, job)
	if !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "taken over by other") {
		t.Fatalf("guarded write after takeover: %v, want ErrLost", err)
	}
	select {
	case <-lp.Done():
	default:
		t.Fatal("Done still open after the guard failed")
	}
	stored, _ := jt.Load(t.Context(), Job{ID: "j"}, dynamo.ConsistentRead())
	if stored.Version != 1 {
		t.Errorf("the paused holder's write landed: %+v", stored)
	}
	if _, err := Save(t.Context(), lo, jt, stored); err != nil {
		t.Errorf("new holder's guarded write: %v", err)
	}
	pausedClock.Advance(d)
}

// A holder whose heartbeats cannot get through gives the lease up at its
// deadline on its own clock.
func TestNotExtendedInTime(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	clk := clock.NewFake(time.Now())
	c := newClient(t, table, nil, WithOwner("h"), WithClock(clk), WithLeaseDuration(4*time.Second))
	l, err := c.TryAcquire(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	// Take the table away so heartbeats fail.
	if err := c.table.DeleteTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	for l.Err() == nil {
		clk.BlockUntil(l.Done(), 2) // the watchdog and a heartbeat timer
		clk.Advance(500 * time.Millisecond)
	}
	<-l.Done()
	if !errors.Is(l.Err(), ErrLost) || !strings.Contains(l.Err().Error(), "not extended") {
		t.Errorf("Err = %v", l.Err())
	}
	if l.Context().Err() == nil {
		t.Error("Context not cancelled")
	}
	if err := l.Release(t.Context()); err == nil {
		t.Log("release of a lease in a deleted table reported no error")
	}
}

// The leak check sees a heartbeat, and Release ends it.
func TestReleaseStopsGoroutines(t *testing.T) {
	table := leaseTable(t)
	c := newClient(t, table, nil)
	l, err := c.TryAcquire(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if g := leakedGoroutines(); len(g) == 0 || !strings.Contains(strings.Join(g, ""), "lease.(*Client).start") {
		t.Fatalf("no heartbeat goroutine seen while holding: %v", g)
	}
	if err := l.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	if g := leakedGoroutines(); len(g) != 0 {
		t.Fatalf("goroutines after Release:\n%s", strings.Join(g, "\n\n"))
	}
}

// A heartbeat whose call failed after DynamoDB applied it leaves a newer
// version of our own record; the next heartbeat and Release carry on from it
// instead of declaring the lease lost or leaving it unreleased.
func TestOwnEarlierWriteIsAdopted(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	clk := clock.NewFake(time.Now())
	c := newClient(t, table, nil, WithOwner("h"), WithClock(clk), WithLeaseDuration(8*time.Second))
	ctx := t.Context()
	l, err := c.TryAcquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	bump := func() int64 { // what the applied-but-failed call wrote
		l.mu.Lock()
		rec := l.rec
		l.mu.Unlock()
		saved, err := c.table.Save(ctx, rec)
		if err != nil {
			t.Fatal(err)
		}
		return saved.Version
	}
	v := bump()
	clk.BlockUntil(ctx.Done(), 2)
	clk.Advance(2 * time.Second) // heartbeat: conflicts with our own write, adopts it
	clk.BlockUntil(ctx.Done(), 2)
	clk.Advance(500 * time.Millisecond) // the quick retry extends from the adopted version
	clk.BlockUntil(ctx.Done(), 2)
	stored, _ := c.table.Load(ctx, record{Key: "k"}, dynamo.ConsistentRead())
	if l.Err() != nil || stored.Version != v+1 || stored.Owner != "h" {
		t.Fatalf("lease err %v, stored %+v; want held and version %d", l.Err(), stored, v+1)
	}
	bump()
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if info, _ := c.Holder(ctx, "k"); !info.Released {
		t.Errorf("not released after our own newer write: %+v", info)
	}
}

// afterAnswer is an http.RoundTripper that calls hook once, when the answer
// to the first request of a DynamoDB operation has arrived and before the
// client reads it.
type afterAnswer struct {
	next   *http.Transport
	target string // the X-Amz-Target watched
	once   sync.Once
	hook   func()
}

func (a *afterAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := a.next.RoundTrip(r)
	if err == nil && r.Header.Get("X-Amz-Target") == a.target {
		a.once.Do(a.hook)
	}
	return resp, err
}

// refusing answers every request with a 400 ValidationException (which
// the SDK does not retry and which was certainly not applied) once refuse
// is set.
type refusing struct {
	next   http.RoundTripper
	refuse atomic.Bool
}

func (r *refusing) RoundTrip(req *http.Request) (*http.Response, error) {
	if !r.refuse.Load() {
		return r.next.RoundTrip(req)
	}
	body := `{"__type":"com.amazon.coral.validation#ValidationException","message":"refused by the test"}`
	return &http.Response{StatusCode: 400, Status: "400 Bad Request", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}}, Body: io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)), Request: req}, nil
}

// An Acquire whose write landed while Client.Close ran, and whose release
// of that record then failed, returns ErrClosed saying the release failed
// and that others take the key over after its duration; it does not hang,
// and the lease is not left counted in ddbkit.lease.held.
func TestAcquireRacingCloseReleaseFailing(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	var c *Client
	ref := &refusing{}
	tr := &afterAnswer{next: http.DefaultTransport.(*http.Transport).Clone(), target: "DynamoDB_20120810.TransactWriteItems",
		hook: func() { ref.refuse.Store(true); _ = c.Close(context.Background()) }}
	ref.next = tr
	t.Cleanup(tr.next.CloseIdleConnections)
	reader := sdkmetric.NewManualReader()
	m := dynamo.NewMapper(dynamotest.ClientWith(t, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: ref} }),
		dynamo.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	c = newClientOn(t, m, table, WithOwner("h"), WithClock(clock.NewFake(time.Now())))
	done := make(chan error, 1)
	go func() {
		_, err := c.Acquire(t.Context(), "k")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "releasing the lease on \"k\" taken meanwhile failed") ||
			!strings.Contains(err.Error(), "refused by the test") {
			t.Fatalf("Acquire racing Close, its release refused: %v; want ErrClosed saying the release failed and why", err)
		}
	case <-time.After(30 * time.Second): // a failure bound, not a wait: the answer is at hand
		t.Fatal("Acquire racing Close still has not returned after 30 s: it hangs")
	}
	if n := sum(t, reader, telemetry.MetricLeasesHeld); n != 0 {
		t.Errorf("%s = %d after an Acquire that lost the race with Close; want 0", telemetry.MetricLeasesHeld, n)
	}
}

// An Acquire whose write landed while Client.Close ran returns ErrClosed,
// at once, with the record it wrote marked released, and the lease counted
// neither in nor out of ddbkit.lease.held: a Close racing an Acquire
// neither leaves a record naming the client nor hangs the Acquire.
func TestAcquireRacingCloseReleases(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	var c *Client
	tr := &afterAnswer{next: http.DefaultTransport.(*http.Transport).Clone(), target: "DynamoDB_20120810.TransactWriteItems",
		hook: func() { _ = c.Close(context.Background()) }}
	t.Cleanup(tr.next.CloseIdleConnections)
	reader := sdkmetric.NewManualReader()
	m := dynamo.NewMapper(dynamotest.ClientWith(t, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: tr} }),
		dynamo.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	c = newClientOn(t, m, table, WithOwner("h"), WithClock(clock.NewFake(time.Now())))
	done := make(chan error, 1)
	go func() {
		_, err := c.Acquire(t.Context(), "k")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Acquire racing Close: %v, want ErrClosed", err)
		}
	case <-time.After(30 * time.Second): // a failure bound, not a wait: the answer is at hand
		t.Fatal("Acquire racing Close still has not returned after 30 s: it hangs")
	}
	if n := sum(t, reader, telemetry.MetricLeasesHeld); n != 0 {
		t.Errorf("%s = %d after an Acquire that lost the race with Close; want 0", telemetry.MetricLeasesHeld, n)
	}
	if info, err := c.Holder(t.Context(), "k"); err != nil || !info.Released {
		t.Errorf("record after the Acquire racing Close: %+v, %v; want released", info, err)
	}
}
