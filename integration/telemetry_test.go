package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/backfill"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/commitlog"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/lease"
)

// The identifiers of the telemetry walk: item and lease keys, owner ids,
// object paths and a log name, each holding the same sentinel.
const (
	telSentinel = "SNTNL"
	telItemKey  = "SNTNL-item-alice@example.com"
	telLeaseKey = "SNTNL-lease-alice@example.com"
	telOwner    = "SNTNL-owner-host-7"
	telPath     = "SNTNL-path/tenant-alice/obj.json"
	telLogName  = "SNTNL-log/tenant-alice"
)

// telCapture is where one walk's telemetry goes: every span, every metric
// data point, every log line (Debug and up).
type telCapture struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	logs   *telLogBuffer
	opts   []dynamo.Option
}

// telLogBuffer keeps every line logged (lockedBuffer stops at 64 KiB).
type telLogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *telLogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *telLogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newTelCapture(keys bool) *telCapture {
	c := &telCapture{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader(), logs: &telLogBuffer{}}
	c.opts = []dynamo.Option{
		dynamo.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(c.spans))),
		dynamo.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(c.reader))),
		dynamo.WithLogger(slog.New(slog.NewTextHandler(c.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
	}
	if keys {
		c.opts = append(c.opts, dynamo.WithTelemetryKeys())
	}
	return c
}

// spanText is everything the spans recorded: names, attributes, events
// and their attributes, status descriptions.
func (c *telCapture) spanText() string {
	var b strings.Builder
	for _, s := range c.spans.Ended() {
		fmt.Fprintf(&b, "span %q status %q\n", s.Name(), s.Status().Description)
		writeAttrs(&b, s.Attributes())
		for _, e := range s.Events() {
			fmt.Fprintf(&b, " event %q\n", e.Name)
			writeAttrs(&b, e.Attributes)
		}
	}
	return b.String()
}

func writeAttrs(b *strings.Builder, kv []attribute.KeyValue) {
	for _, a := range kv {
		fmt.Fprintf(b, "  %s=%s\n", a.Key, a.Value.Emit())
	}
}

// metricText is every metric's name and every data point's attributes.
func (c *telCapture) metricText(t *testing.T) string {
	var rm metricdata.ResourceMetrics
	if err := c.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			fmt.Fprintf(&b, "metric %s\n", m.Name)
			var sets []attribute.Set
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					sets = append(sets, p.Attributes)
				}
			case metricdata.Sum[float64]:
				for _, p := range d.DataPoints {
					sets = append(sets, p.Attributes)
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					sets = append(sets, p.Attributes)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					sets = append(sets, p.Attributes)
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					sets = append(sets, p.Attributes)
				}
			default:
				t.Fatalf("metric %s of type %T: add it to metricText", m.Name, m.Data)
			}
			for _, s := range sets {
				writeAttrs(&b, s.ToSlice())
			}
		}
	}
	return b.String()
}

// telAccount is the item of the mapper's and the backfill's part of the walk.
type telAccount struct {
	ID      string `dynamo:"id,hash"`
	Balance int64  `dynamo:"balance"`
	Version int64  `dynamo:"version,version"`
}

// Every package's telemetry — the mapper's, a lease's, a lease group's, a
// Committer's, a commit Log's and a backfill's spans, metrics and log
// lines (Debug and up) — walked with item keys, lease keys, owner ids,
// object paths and a log name that all hold a sentinel: without
// dynamo.WithTelemetryKeys none of them shows anywhere (errors are named
// by class, never by message); with it, the spans and logs name them.
// Metrics never carry them either way.
func TestTelemetryNamesIdentifiersOnlyWithTelemetryKeys(t *testing.T) {
	client := dynamotest.Client(t)
	items := dynamotest.KeyTable(t, client, "telitems", "id", types.ScalarAttributeTypeS, "", "")
	leases := uniqueTable(t)
	commits := uniqueTable(t)
	logs := uniqueTable(t)
	setup := dynamo.NewMapper(client)
	lc, err := lease.New(setup, leases)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := commitlog.NewCommitter(setup, commits, commitlog.NewMemStore())
	if err != nil {
		t.Fatal(err)
	}
	ll, err := commitlog.OpenLog(setup, logs, commitlog.NewMemStore(), "setup")
	if err != nil {
		t.Fatal(err)
	}
	for _, create := range []func(context.Context, ...dynamo.CreateTableOption) error{lc.CreateTable, cc.CreateTable, ll.CreateTable} {
		if err := create(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, n := range []string{leases, commits, logs} {
			_, _ = client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(n)})
		}
	})

	for _, keys := range []bool{false, true} {
		t.Run(fmt.Sprintf("keys=%v", keys), func(t *testing.T) {
			cap := newTelCapture(keys)
			walkTelemetry(t, client, cap, items, leases, commits, logs, keys)
			spans, metrics, lines := cap.spanText(), cap.metricText(t), cap.logs.String()
			for _, want := range []string{"lease.TryAcquire", "commitlog.PutIfNotExists", "commitlog.Append", "Update " + items, "Scan " + items} {
				if !strings.Contains(spans, want) {
					t.Errorf("no span %q: the walk missed a package", want)
				}
			}
			for _, want := range []string{"ddbkit.lease.held", "ddbkit.dynamo.operation.duration", "ddbkit.dynamo.conflicts"} {
				if !strings.Contains(metrics, want) {
					t.Errorf("no metric %q", want)
				}
			}
			for _, want := range []string{"acquired", "took a key", "lease lost", "joined the group"} {
				if !strings.Contains(lines, want) {
					t.Errorf("no log line %q", want)
				}
			}
			if strings.Contains(metrics, telSentinel) {
				t.Errorf("a metric attribute names an identifier:\n%s", grepLines(metrics, telSentinel))
			}
			if !keys {
				if strings.Contains(spans, telSentinel) {
					t.Errorf("spans name identifiers without WithTelemetryKeys:\n%s", grepLines(spans, telSentinel))
				}
				if strings.Contains(lines, telSentinel) {
					t.Errorf("logs name identifiers without WithTelemetryKeys:\n%s", grepLines(lines, telSentinel))
				}
				return
			}
			for _, id := range []string{telItemKey, telLeaseKey, telPath, telLogName} {
				if !strings.Contains(spans, id) {
					t.Errorf("spans never name %q with WithTelemetryKeys", id)
				}
			}
			for _, id := range []string{telLeaseKey, telOwner} {
				if !strings.Contains(lines, id) {
					t.Errorf("logs never name %q with WithTelemetryKeys", id)
				}
			}
		})
	}
}

// grepLines returns the lines of s holding sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// walkTelemetry runs every package's calls through a mapper reporting to
// cap, on identifiers holding the sentinel: the item calls and a conflict,
// a lease taken, refused to another owner, used for a guarded write,
// released, and one lost; a group worker taking its keys and leaving; a
// Committer's writes, one refused; a Log's appends and reads; a backfill.
func walkTelemetry(t *testing.T, client *dynamodb.Client, cap *telCapture, items, leases, commits, logs string, keys bool) {
	ctx := t.Context()
	m := dynamo.NewMapper(client, cap.opts...)
	suffix := fmt.Sprint(keys) // each walk its own items and lease keys
	itemKey, leaseKey := telItemKey+suffix, telLeaseKey+suffix

	// The mapper.
	accounts, err := dynamo.NewTable[telAccount](m, items)
	if err != nil {
		t.Fatal(err)
	}
	a, err := accounts.Save(ctx, telAccount{ID: itemKey, Balance: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := accounts.Load(ctx, telAccount{ID: itemKey}, dynamo.ConsistentRead()); err != nil {
		t.Fatal(err)
	}
	if _, err := accounts.Update(ctx, telAccount{ID: itemKey}, func(c telAccount) (telAccount, error) { c.Balance++; return c, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := accounts.Save(ctx, a); !errors.Is(err, dynamo.ErrVersionConflict) { // a stale copy
		t.Fatalf("stale Save: %v; want a conflict", err)
	}
	if err := m.WriteTx(ctx, []dynamo.TxOp{accounts.TxSave(telAccount{ID: itemKey + "-tx"})}); err != nil {
		t.Fatal(err)
	}
	if _, err := accounts.Load(ctx, telAccount{ID: itemKey + "-missing"}); !errors.Is(err, dynamo.ErrNotFound) {
		t.Fatalf("Load of a missing item: %v", err)
	}

	// A lease: taken, refused to another owner, a guarded write, released.
	lc, err := lease.New(m, leases, lease.WithOwner(telOwner+suffix), lease.WithLeaseDuration(2*time.Second), lease.WithPollInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close(context.Background())
	other, err := lease.New(m, leases, lease.WithOwner(telOwner+suffix+"-other"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := lc.TryAcquire(ctx, leaseKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.TryAcquire(ctx, leaseKey); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("second TryAcquire: %v; want ErrHeld", err)
	}
	if _, err := lease.Save(ctx, l, accounts, telAccount{ID: itemKey + "-guarded"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// A lease lost: its record deleted under it, found by the heartbeat
	// (a fake clock drives it).
	clk := clock.NewFake(time.Now())
	lost, err := lease.New(m, leases, lease.WithOwner(telOwner+suffix+"-lost"), lease.WithClock(clk), lease.WithLeaseDuration(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer lost.Close(context.Background())
	ll, err := lost.TryAcquire(ctx, leaseKey+"-lost")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(leases),
		Key: map[string]types.AttributeValue{"key": &types.AttributeValueMemberS{Value: leaseKey + "-lost"}}}); err != nil {
		t.Fatal(err)
	}
	for ll.Err() == nil {
		clk.BlockUntil(ll.Done(), 2) // the heartbeat's timer and the watchdog
		clk.Advance(time.Second)
	}

	// A group worker takes its keys, then leaves.
	gc, err := lease.New(m, leases, lease.WithOwner(telOwner+suffix+"-worker"), lease.WithLeaseDuration(2*time.Second), lease.WithPollInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close(context.Background())
	g, err := gc.Group("telemetry"+suffix, []string{leaseKey + "-g1", leaseKey + "-g2"})
	if err != nil {
		t.Fatal(err)
	}
	gctx, stop := context.WithCancel(ctx)
	var taken sync.WaitGroup
	taken.Add(2)
	ran := make(chan error, 1)
	go func() {
		ran <- g.Run(gctx, func(ctx context.Context, l *lease.Lease) error {
			taken.Done()
			<-ctx.Done()
			return nil
		})
	}()
	taken.Wait()
	stop()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}

	// A Committer: a put, a refused put, a copy.
	cc, err := commitlog.NewCommitter(m, commits, commitlog.NewMemStore(), commitlog.WithTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	path := telPath + suffix
	info, err := cc.PutIfNotExists(ctx, path, []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cc.PutIfNotExists(ctx, path, []byte("2")); !errors.Is(err, commitlog.ErrExists) {
		t.Fatalf("second PutIfNotExists: %v; want ErrExists", err)
	}
	if _, err := cc.PutIfMatch(ctx, path, []byte("3"), info.ETag); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.CopyIfNotExists(ctx, path, path+"-copy"); err != nil {
		t.Fatal(err)
	}

	// A Log: two appends, a read, the latest version.
	lg, err := commitlog.OpenLog(m, logs, commitlog.NewMemStore(), telLogName+suffix)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := lg.Append(ctx, []byte("entry")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := lg.Read(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := lg.Latest(ctx); err != nil {
		t.Fatal(err)
	}

	// A backfill over the items, its segments a lease group.
	bc, err := lease.New(m, leases, lease.WithOwner(telOwner+suffix+"-backfill"), lease.WithLeaseDuration(2*time.Second), lease.WithPollInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer bc.Close(context.Background())
	mig, err := backfill.NewMigration(dynamo.NewMapper(client, cap.opts...), items, "telemetry"+suffix, func(a telAccount) (telAccount, error) {
		a.Balance += 10
		return a, nil
	}, backfill.WithFleet(bc, leases), backfill.WithSegments(2), backfill.WithPollInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := mig.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if p := mig.Progress(); p.Changed == 0 {
		t.Fatalf("the backfill changed nothing: %+v", p)
	}
}
