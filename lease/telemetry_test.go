package lease

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/telemetry"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A lease taken and then lost (not extended in time) shows in the
// telemetry of the mapper the client was built on: a lease.TryAcquire span
// with the token, under which the mapper's spans of the acquiring requests
// nest; a lease.Lost span with a ddbkit.lease.lost event (reason expired);
// ddbkit.lease.lost counts 1 and ddbkit.lease.held goes back to 0; the
// mapper's logger (no logger given to the lease client) logs the loss at
// Warn.
func TestTelemetryLostLease(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	var logs syncBuffer
	m := dynamo.NewMapper(dynamotest.Client(t), dynamo.WithTracerProvider(tp), dynamo.WithMeterProvider(mp),
		dynamo.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	clk := clock.NewFake(time.Now())
	c, err := New(m, table, WithOwner("h"), WithClock(clk), WithLeaseDuration(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	l, err := c.TryAcquire(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if held := sum(t, reader, telemetry.MetricLeasesHeld); held != 1 {
		t.Errorf("%s = %d while held; want 1", telemetry.MetricLeasesHeld, held)
	}
	if err := c.table.DeleteTable(t.Context()); err != nil { // heartbeats fail
		t.Fatal(err)
	}
	for l.Err() == nil {
		clk.BlockUntil(l.Done(), 2)
		clk.Advance(500 * time.Millisecond)
	}
	<-l.Done()
	if !errors.Is(l.Err(), ErrLost) {
		t.Fatalf("Err = %v; want ErrLost", l.Err())
	}

	var acquire, lost sdktrace.ReadOnlySpan
	children := 0
	for _, s := range spans.Ended() {
		switch s.Name() {
		case "lease.TryAcquire " + table:
			acquire = s
		case "lease.Lost " + table:
			lost = s
		}
	}
	if acquire == nil || lost == nil {
		t.Fatalf("spans lease.TryAcquire %v, lease.Lost %v; want both", acquire != nil, lost != nil)
	}
	for _, s := range spans.Ended() {
		if s.Parent().SpanID() == acquire.SpanContext().SpanID() {
			children++
		}
	}
	if children == 0 {
		t.Error("no mapper span nests under lease.TryAcquire")
	}
	if v, ok := attrOf(acquire.Attributes(), telemetry.LeaseToken); !ok || v.AsInt64() != l.Token() {
		t.Errorf("lease.TryAcquire token %v; want %d", v.Emit(), l.Token())
	}
	if _, ok := attrOf(acquire.Attributes(), telemetry.LeaseKey); ok {
		t.Error("the lease key was recorded without dynamo.WithTelemetryKeys")
	}
	var ev []sdktrace.Event
	for _, e := range lost.Events() {
		if e.Name == telemetry.EventLeaseLost {
			ev = append(ev, e)
		}
	}
	if len(ev) != 1 {
		t.Fatalf("%d lease-lost events; want 1", len(ev))
	}
	if v, _ := attrOf(ev[0].Attributes, telemetry.LeaseReason); v.AsString() != "expired" {
		t.Errorf("reason %q; want expired", v.AsString())
	}
	if n := sum(t, reader, telemetry.MetricLeasesLost); n != 1 {
		t.Errorf("%s = %d; want 1", telemetry.MetricLeasesLost, n)
	}
	if held := sum(t, reader, telemetry.MetricLeasesHeld); held != 0 {
		t.Errorf("%s = %d after the loss; want 0", telemetry.MetricLeasesHeld, held)
	}
	if got := logs.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "lease lost") {
		t.Errorf("logs %q; want a WARN saying the lease was lost", got)
	}
	_ = l.Release(t.Context())
}

func attrOf(kvs []attribute.KeyValue, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// sum returns the sum of the int64 sum metric name over its data points.
func sum(t *testing.T, r *sdkmetric.ManualReader, name string) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if d, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name {
				for _, p := range d.DataPoints {
					n += p.Value
				}
			}
		}
	}
	return n
}

// held returns what ddbkit.lease.held reads in r.
func held(t *testing.T, r *sdkmetric.ManualReader) int64 {
	t.Helper()
	return sum(t, r, telemetry.MetricLeasesHeld)
}

// checkHeld checks that each running worker's ddbkit.lease.held equals the
// keys it holds, and that of each stopped worker (Run returned) reads 0.
func (f *fleet) checkHeld(when string) {
	f.t.Helper()
	f.mu.Lock()
	ws := slices.Clone(f.workers)
	f.mu.Unlock()
	for _, w := range ws {
		want := int64(len(w.g.Keys())) // empty when Run is not running
		if got := held(f.t, w.metrics); got != want || got < 0 {
			f.t.Errorf("%s: %s's %s = %d; want %d, the keys it holds", when, w.name, telemetry.MetricLeasesHeld, got, want)
		}
	}
}

// stop ends w's Run with stop (cancelling its ctx, or closing its client)
// and returns what Run returned.
func (w *worker) stop(stop func()) error {
	stop()
	w.clk.Advance(gPoll) // a closed client's worker leaves at its next round
	err := <-w.done
	w.done <- err // for the cleanup
	return err
}

// ddbkit.lease.held counts the keys a group worker holds, once each: each
// worker's gauge equals the number of keys it holds — after taking them,
// after handing some over to a joiner, after a paused worker lost its keys
// (one of them by a refused guarded write, the others with its membership)
// and joined again — and reads exactly 0 once its Run has returned, whether
// it left (ctx cancelled) or its client was closed. It never reads below 0.
func TestTelemetryHeldCountsGroupKeys(t *testing.T) {
	f := newFleet(t, 6)
	now := time.Now()
	f.start("w1", now)
	w2 := f.start("w2", now)
	f.settle(time.Minute, f.balanced)
	f.checkHeld("keys taken")

	w3 := f.start("w3", f.live()[0].clk.Now())
	f.settle(time.Minute, f.balanced)
	f.checkHeld("keys handed over to a joiner")

	// w3 pauses: the others take its keys; its guarded write with an old
	// lease is refused (ErrLost); resumed, it loses its membership and
	// joins again.
	w3.g.mu.Lock()
	m3 := w3.g.cur
	w3.g.mu.Unlock()
	m3.mu.Lock()
	var old *Lease
	for _, l := range m3.held {
		old = l
		break
	}
	m3.mu.Unlock()
	f.mu.Lock()
	w3.frozen, f.stale["w3"] = true, true
	f.mu.Unlock()
	f.settle(time.Minute, f.balanced)
	if _, err := Save(t.Context(), old, f.jobs, job{Key: old.Key(), Token: old.Token(), Holder: "w3-stale"}, dynamo.WithSaveBehavior(dynamo.SavePut)); !errors.Is(err, ErrLost) {
		t.Fatalf("the paused worker's guarded write: %v, want ErrLost", err)
	}
	if got := held(t, w3.metrics); got != 1 {
		t.Errorf("paused worker, one of its two keys lost by a refused write: %s = %d; want 1", telemetry.MetricLeasesHeld, got)
	}
	w3.clk.Advance(f.live()[0].clk.Now().Sub(w3.clk.Now()))
	for {
		w3.g.mu.Lock()
		cur := w3.g.cur
		w3.g.mu.Unlock()
		if cur != nil && cur != m3 {
			break
		}
		w3.clk.BlockUntil(t.Context().Done(), 1)
		w3.clk.Advance(gPoll)
	}
	f.mu.Lock()
	w3.frozen, f.stale["w3"] = false, false
	f.mu.Unlock()
	f.settle(time.Minute, f.balanced)
	f.checkHeld("the paused worker joined again")

	if err := w3.stop(w3.cancel); err != nil {
		t.Fatalf("Run after leaving: %v", err)
	}
	f.settle(time.Minute, f.balanced)
	f.checkHeld("a worker left")

	if err := w2.stop(func() { _ = w2.c.Close(t.Context()) }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Run after Close: %v, want ErrClosed", err)
	}
	f.settle(time.Minute, f.balanced)
	f.checkHeld("a worker's client closed")
}

// ddbkit.lease.lost counts each group key a worker loses with its
// membership (a paused worker whose membership was not extended in time),
// with the reason "expired", as it counts a single lease lost; keys a
// worker hands back when it leaves are not lost and are not counted.
func TestTelemetryLostCountsGroupKeysLostWithTheMembership(t *testing.T) {
	f := newFleet(t, 4)
	now := time.Now()
	w1 := f.start("w1", now)
	w2 := f.start("w2", now)
	f.settle(time.Minute, f.balanced)

	w2.g.mu.Lock()
	m2 := w2.g.cur
	w2.g.mu.Unlock()
	m2.mu.Lock()
	n := int64(len(m2.held))
	m2.mu.Unlock()
	if n == 0 {
		t.Fatalf("w2 holds no key: %s", f.describe())
	}
	f.mu.Lock()
	w2.frozen, f.stale["w2"] = true, true
	f.mu.Unlock()
	f.settle(time.Minute, f.balanced) // w1 takes w2's keys over
	w2.clk.Advance(f.live()[0].clk.Now().Sub(w2.clk.Now()))
	for { // resumed, w2's watchdog ends its membership; it joins again
		w2.g.mu.Lock()
		cur := w2.g.cur
		w2.g.mu.Unlock()
		if cur != nil && cur != m2 {
			break
		}
		w2.clk.BlockUntil(t.Context().Done(), 1)
		w2.clk.Advance(gPoll)
	}
	if got := sum(t, w2.metrics, telemetry.MetricLeasesLost); got != n {
		t.Errorf("w2 lost its membership holding %d keys: %s = %d; want %d", n, telemetry.MetricLeasesLost, got, n)
	}
	if why := lostReasons(t, w2.metrics); len(why) != 1 || why["expired"] != n {
		t.Errorf("reasons of w2's lost keys: %v; want %d expired", why, n)
	}
	f.mu.Lock()
	w2.frozen, f.stale["w2"] = false, false
	f.mu.Unlock()
	f.settle(time.Minute, f.balanced)

	for _, w := range []*worker{w2, w1} {
		if err := w.stop(w.cancel); err != nil {
			t.Fatalf("%s: Run after leaving: %v", w.name, err)
		}
	}
	if got := sum(t, w2.metrics, telemetry.MetricLeasesLost); got != n {
		t.Errorf("after w2 left: %s = %d; want still %d (keys handed back are not lost)", telemetry.MetricLeasesLost, got, n)
	}
	if got := sum(t, w1.metrics, telemetry.MetricLeasesLost); got != 0 {
		t.Errorf("w1 never lost a key: %s = %d; want 0", telemetry.MetricLeasesLost, got)
	}
}

// lostReasons returns ddbkit.lease.lost in r by reason.
func lostReasons(t *testing.T, r *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if d, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == telemetry.MetricLeasesLost {
				for _, p := range d.DataPoints {
					why, _ := p.Attributes.Value(telemetry.LeaseReason)
					out[why.AsString()] += p.Value
				}
			}
		}
	}
	return out
}

// A key whose work returned an error is released and taken again at a
// later round: ddbkit.lease.held counts it out when its lease ends and in
// again when it is taken, so that it equals the keys held.
func TestTelemetryHeldCountsKeysWhoseWorkFailed(t *testing.T) {
	f := newFleet(t, 2)
	failed := make(chan string, len(f.keys))
	var mu sync.Mutex
	tries := map[string]int{}
	w := f.startRun("w1", time.Now(), nil, func(ctx context.Context, l *Lease) error {
		mu.Lock()
		tries[l.Key()]++
		first := tries[l.Key()] == 1
		mu.Unlock()
		if first {
			failed <- l.Key()
			return errors.New("the work failed")
		}
		<-ctx.Done()
		return nil
	})
	for range f.keys {
		select {
		case <-failed:
		case <-t.Context().Done():
			t.Fatal("the work did not start")
		}
	}
	f.settle(time.Minute, f.balanced)
	f.checkHeld("keys taken again after their work failed")
	if got := held(t, w.metrics); got != 2 {
		t.Errorf("%s = %d; want 2", telemetry.MetricLeasesHeld, got)
	}
	if err := w.stop(w.cancel); err != nil {
		t.Fatalf("Run after leaving: %v", err)
	}
	f.checkHeld("the worker left")
}

// ddbkit.lease.held counts a single lease in when it is taken and out once
// when it ends, however it ends: released (and released again), lost to a
// guarded write refused after another marked the record released, or
// released by Client.Close.
func TestTelemetryHeldCountsSingleLeases(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	reader := sdkmetric.NewManualReader()
	m := dynamo.NewMapper(dynamotest.Client(t), dynamo.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	c := newClientOn(t, m, table, WithOwner("h"), WithClock(clock.NewFake(time.Now())))
	ctx := t.Context()
	want := func(when string, n int64) {
		t.Helper()
		if got := held(t, reader); got != n {
			t.Errorf("%s: %s = %d; want %d", when, telemetry.MetricLeasesHeld, got, n)
		}
	}

	l, err := c.TryAcquire(ctx, "released")
	if err != nil {
		t.Fatal(err)
	}
	want("acquired", 1)
	for range 2 {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		want("released", 0)
	}

	l, err = c.Acquire(ctx, "lost")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := c.table.Load(ctx, record{Key: "lost"}, dynamo.ConsistentRead())
	if err != nil {
		t.Fatal(err)
	}
	rec.Owner, rec.Released = "other", true
	if _, err := c.table.Save(ctx, rec, dynamo.WithSaveBehavior(dynamo.SaveClobber)); err != nil {
		t.Fatal(err)
	}
	if err := l.WriteTx(ctx, nil); !errors.Is(err, ErrLost) {
		t.Fatalf("guarded write after another released the record: %v, want ErrLost", err)
	}
	want("lost", 0)
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	want("lost, then released", 0)

	for _, k := range []string{"closed-1", "closed-2"} {
		if _, err := c.TryAcquire(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	want("two acquired", 2)
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	want("client closed", 0)
}

// TestTelemetryNamesMapperErrorsAsTheMapperDoes: a lease call failing with
// an error of the mapper records it in error.type as the mapper's own span
// does (here table_not_found: the lease table does not exist), not as a
// bare "error" — one classification for the mapper, lease and commitlog.
func TestTelemetryNamesMapperErrorsAsTheMapperDoes(t *testing.T) {
	checkNoLeak(t)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	m := dynamo.NewMapper(dynamotest.Client(t), dynamo.WithTracerProvider(tp))
	c, err := New(m, "no-such-lease-table-"+strings.ReplaceAll(t.Name(), "/", "-"), WithOwner("h"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	if _, err := c.TryAcquire(t.Context(), "k"); !errors.Is(err, dynamo.ErrTableNotFound) {
		t.Fatalf("TryAcquire on a missing table: %v; want ErrTableNotFound", err)
	}
	classes := map[string]string{}
	for _, s := range spans.Ended() {
		v, _ := attrOf(s.Attributes(), telemetry.ErrorType)
		classes[strings.Fields(s.Name())[0]] = v.AsString()
	}
	if classes["lease.TryAcquire"] != "table_not_found" {
		t.Errorf("error.type of the spans: %v; want lease.TryAcquire's table_not_found", classes)
	}
}

// A key taken and released is logged at Debug, not Info: a fleet of
// thousands of keys would fill an Info log. With the Info level nothing is
// logged for them; with Debug both lines are there, without the key or the
// owner unless dynamo.WithTelemetryKeys.
func TestKeyTakenAndReleasedLoggedAtDebug(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var logs syncBuffer
		m := dynamo.NewMapper(dynamotest.Client(t), dynamo.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: level}))))
		c, err := New(m, table, WithOwner("owner-"+level.String()))
		if err != nil {
			t.Fatal(err)
		}
		l, err := c.TryAcquire(t.Context(), "key-"+level.String())
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
		got := logs.String()
		if level == slog.LevelInfo && got != "" {
			t.Errorf("at Info, a lease taken and released logged:\n%s", got)
		}
		if level == slog.LevelDebug {
			for _, want := range []string{"level=DEBUG msg=acquired", "level=DEBUG msg=released"} {
				if !strings.Contains(got, want) {
					t.Errorf("at Debug, no %q in:\n%s", want, got)
				}
			}
			if strings.Contains(got, "key-") || strings.Contains(got, "owner-") {
				t.Errorf("key or owner logged without WithTelemetryKeys:\n%s", got)
			}
		}
		_ = c.Close(t.Context())
	}
}
