package lease

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
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
