package dynamo

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

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/telemetry"
)

// telemetryRig records what a mapper built with its options reports: spans
// (the SDK's in-memory recorder), metrics (a manual reader) and logs.
type telemetryRig struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	mu     sync.Mutex
	logs   bytes.Buffer
	opts   []Option
}

func newTelemetryRig(t *testing.T) *telemetryRig {
	t.Helper()
	r := &telemetryRig{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	log := slog.New(slog.NewTextHandler(lockedWriter{&r.mu, &r.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r.opts = []Option{WithTracerProvider(tp), WithMeterProvider(mp), WithLogger(log)}
	return r
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (r *telemetryRig) logText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.logs.String()
}

// ended returns the ended spans called name.
func (r *telemetryRig) ended(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range r.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// span returns the one ended span called name.
func (r *telemetryRig) span(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	got := r.ended(name)
	if len(got) != 1 {
		var names []string
		for _, s := range r.spans.Ended() {
			names = append(names, s.Name())
		}
		t.Fatalf("%d spans called %q; want 1 (spans: %v)", len(got), name, names)
	}
	return got[0]
}

// events returns the events of s called name.
func events(s sdktrace.ReadOnlySpan, name string) []sdktrace.Event {
	var out []sdktrace.Event
	for _, e := range s.Events() {
		if e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// attr returns the value of key among kvs.
func attr(kvs []attribute.KeyValue, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func (r *telemetryRig) collect(t *testing.T) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// count returns the sum of the int64 counter (or the count of the
// histogram) name over the data points carrying every attribute of want.
func (r *telemetryRig) count(t *testing.T, name string, want ...attribute.KeyValue) int64 {
	t.Helper()
	rm := r.collect(t)
	var n int64
	matches := func(set attribute.Set) bool {
		for _, kv := range want {
			if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
				return false
			}
		}
		return true
	}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != telemetry.ScopeName {
			t.Errorf("scope %q; want the module path", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					if matches(p.Attributes) {
						n += p.Value
					}
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					if matches(p.Attributes) {
						n += int64(p.Count)
					}
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					if matches(p.Attributes) {
						n += int64(p.Count)
					}
				}
			}
		}
	}
	return n
}

// everything returns every string the rig recorded: span names, attributes,
// events and their attributes, status, metric names and attributes, logs.
func (r *telemetryRig) everything(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	kvs := func(kvs []attribute.KeyValue) {
		for _, kv := range kvs {
			b.WriteString(string(kv.Key) + "=" + kv.Value.Emit() + "\n")
		}
	}
	for _, s := range r.spans.Ended() {
		b.WriteString(s.Name() + "\n" + s.Status().Description + "\n")
		kvs(s.Attributes())
		for _, e := range s.Events() {
			b.WriteString(e.Name + "\n")
			kvs(e.Attributes)
		}
	}
	for _, sm := range r.collect(t).ScopeMetrics {
		for _, m := range sm.Metrics {
			b.WriteString(m.Name + "\n")
			var sets []attribute.Set
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
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
			}
			for _, s := range sets {
				kvs(s.ToSlice())
			}
		}
	}
	b.WriteString(r.logText())
	return b.String()
}

// An Update whose write meets another version retries: its span carries a
// ddbkit.conflict event (attempt 1, version held 5, found 7) and a
// ddbkit.retry event (attempt 2), and the conflict and retry counters and
// the duration histogram count it once.
func TestTelemetryUpdateConflictRetried(t *testing.T) {
	r := newTelemetryRig(t)
	held := `{"id":{"S":"k"},"n":{"N":"5"},"version":{"N":"5"},"ddbkit_wt":{"B":"` + heldToken + `"}}`
	s := &scriptedTransport{get: held, steps: []step{conflict(7, false), ok}}
	saved, err := scriptedTable(t, s, r.opts...).Update(context.Background(), regressCounter{ID: "k"}, func(c regressCounter) (regressCounter, error) {
		c.N++
		return c, nil
	})
	if err != nil || saved.Version != 8 {
		t.Fatalf("Update = %+v, %v; want version 8", saved, err)
	}
	sp := r.span(t, "Update Counters")
	if v, _ := attr(sp.Attributes(), telemetry.DBSystemName); v.AsString() != "aws.dynamodb" {
		t.Errorf("db.system.name = %q", v.AsString())
	}
	if v, _ := attr(sp.Attributes(), telemetry.DBTableNames); len(v.AsStringSlice()) != 1 || v.AsStringSlice()[0] != "Counters" {
		t.Errorf("aws.dynamodb.table_names = %v", v.AsStringSlice())
	}
	conflicts := events(sp, telemetry.EventConflict)
	if len(conflicts) != 1 {
		t.Fatalf("%d conflict events; want 1", len(conflicts))
	}
	for key, want := range map[attribute.Key]int64{telemetry.Attempt: 1, telemetry.VersionHeld: 5, telemetry.VersionFound: 7} {
		if v, ok := attr(conflicts[0].Attributes, key); !ok || v.AsInt64() != want {
			t.Errorf("conflict event %s = %v; want %d", key, v.Emit(), want)
		}
	}
	if retries := events(sp, telemetry.EventRetry); len(retries) != 1 {
		t.Errorf("%d retry events; want 1", len(retries))
	} else if v, _ := attr(retries[0].Attributes, telemetry.Attempt); v.AsInt64() != 2 {
		t.Errorf("retry event attempt %d; want 2", v.AsInt64())
	}
	op := telemetry.DBOperationName.String("Update")
	if n := r.count(t, telemetry.MetricConflicts, op); n != 1 {
		t.Errorf("%s = %d; want 1", telemetry.MetricConflicts, n)
	}
	if n := r.count(t, telemetry.MetricRetries, op); n != 1 {
		t.Errorf("%s = %d; want 1", telemetry.MetricRetries, n)
	}
	if n := r.count(t, telemetry.MetricDuration, op); n != 1 {
		t.Errorf("%s counts %d calls; want 1", telemetry.MetricDuration, n)
	}
}

// A Save whose answer was lost, settled by a read that finds its own write,
// is a success: its span has a ddbkit.settle event with verdict applied and
// no error status; ddbkit.dynamo.settled{verdict=applied} counts 1, and no
// unknown outcome is counted or logged.
func TestTelemetryLostAnswerSettledAsSuccess(t *testing.T) {
	r := newTelemetryRig(t)
	s := &scriptedTransport{steps: []step{reset}, gets: []getStep{stored(6, true)}}
	if _, err := scriptedTable(t, s, r.opts...).Save(context.Background(), regressCounter{ID: "k", N: 6, Version: 5}); err != nil {
		t.Fatal(err)
	}
	sp := r.span(t, "Save Counters")
	settles := events(sp, telemetry.EventSettle)
	if len(settles) != 1 {
		t.Fatalf("%d settle events; want 1", len(settles))
	}
	if v, _ := attr(settles[0].Attributes, telemetry.Verdict); v.AsString() != telemetry.VerdictApplied {
		t.Errorf("verdict %q; want %q", v.AsString(), telemetry.VerdictApplied)
	}
	if sp.Status().Code.String() == "Error" {
		t.Errorf("status %v; want no error", sp.Status())
	}
	if n := r.count(t, telemetry.MetricSettled, telemetry.Verdict.String(telemetry.VerdictApplied)); n != 1 {
		t.Errorf("%s{applied} = %d; want 1", telemetry.MetricSettled, n)
	}
	if n := r.count(t, telemetry.MetricUnknown); n != 0 {
		t.Errorf("%s = %d; want 0", telemetry.MetricUnknown, n)
	}
	if strings.Contains(r.logText(), "unknown") {
		t.Errorf("logs %q; want nothing about an unknown outcome", r.logText())
	}
}

// A Save whose answer was lost and whose settling read finds someone else's
// write ends with an unknown outcome: a ddbkit.settle event (verdict
// conflict), a ddbkit.unknown_outcome event, error.type unknown_outcome,
// ddbkit.dynamo.unknown_outcomes counts 1, and a Warn log says so.
func TestTelemetryUnknownOutcome(t *testing.T) {
	r := newTelemetryRig(t)
	s := &scriptedTransport{steps: []step{reset}, gets: []getStep{stored(7, false)}}
	_, err := scriptedTable(t, s, r.opts...).Save(context.Background(), regressCounter{ID: "k", N: 6, Version: 5})
	if !errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("err = %v; want ErrUnknownOutcome", err)
	}
	sp := r.span(t, "Save Counters")
	if settles := events(sp, telemetry.EventSettle); len(settles) != 1 {
		t.Errorf("%d settle events; want 1", len(settles))
	} else if v, _ := attr(settles[0].Attributes, telemetry.Verdict); v.AsString() != telemetry.VerdictConflict {
		t.Errorf("verdict %q; want %q", v.AsString(), telemetry.VerdictConflict)
	}
	if len(events(sp, telemetry.EventUnknown)) != 1 {
		t.Error("no unknown-outcome event")
	}
	if v, _ := attr(sp.Attributes(), telemetry.ErrorType); v.AsString() != "unknown_outcome" {
		t.Errorf("error.type %q; want unknown_outcome", v.AsString())
	}
	if n := r.count(t, telemetry.MetricUnknown, telemetry.DBOperationName.String("Save")); n != 1 {
		t.Errorf("%s = %d; want 1", telemetry.MetricUnknown, n)
	}
	if n := r.count(t, telemetry.MetricSettled, telemetry.Verdict.String(telemetry.VerdictConflict)); n != 1 {
		t.Errorf("%s{conflict} = %d; want 1", telemetry.MetricSettled, n)
	}
	if logs := r.logText(); !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "outcome is unknown") {
		t.Errorf("logs %q; want a WARN saying the outcome is unknown", logs)
	}
}

// A WriteTx or a Transact whose outcome is unknown names the tables it
// wrote in its Warn log and on its span (aws.dynamodb.table_names).
func TestTelemetryUnknownTransactionNamesItsTables(t *testing.T) {
	r := newTelemetryRig(t)
	c := &fakeDB{noStore: true, onTxWrite: txErr(func(int, *dynamodb.TransactWriteItemsInput) error {
		return &smithy.GenericAPIError{Code: "TransactionInProgressException", Message: "in progress"}
	})}
	books, shelves := txTables(t, c, r.opts...)
	err := books.Mapper().WriteTx(context.Background(), []TxOp{books.TxSave(Book{ISBN: "1"}), shelves.TxSave(&Shelf{Room: "r", Number: 1})},
		WithRetry(RetryPolicy{MaxAttempts: 2, BackoffBase: time.Microsecond, BackoffMax: time.Microsecond}))
	if !errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("WriteTx = %v; want ErrUnknownOutcome", err)
	}
	ac := storeDB(acctRaw("a", 100, 1, 1), acctRaw("b", 0, 1, 2))
	ac.onTxWrite = txErr(func(int, *dynamodb.TransactWriteItemsInput) error {
		return &smithy.GenericAPIError{Code: "InternalServerError", Message: "500 after apply"}
	})
	accts, err := NewTable[acct](NewMapper(ac, r.opts...), "Acct")
	if err != nil {
		t.Fatal(err)
	}
	if err := accts.Mapper().Transact(context.Background(), transferFn(accts, "a", "b", 1), quick); !errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("Transact = %v; want ErrUnknownOutcome", err)
	}
	logs := r.logText()
	for _, want := range []string{"op=WriteTx tables=\"[Books Shelves]\"", "op=Transact tables=[Acct]"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs %q; want %s", logs, want)
		}
	}
	if strings.Contains(logs, "table=\"\"") || strings.Contains(logs, "table= ") {
		t.Errorf("logs %q name an empty table", logs)
	}
	for span, want := range map[string][]string{"WriteTx": {"Books", "Shelves"}, "Transact": {"Acct"}} {
		v, _ := attr(r.span(t, span).Attributes(), telemetry.DBTableNames)
		if !slices.Equal(v.AsStringSlice(), want) {
			t.Errorf("%s span: aws.dynamodb.table_names %v; want %v", span, v.AsStringSlice(), want)
		}
	}
}

// Updates queued behind a write in flight share the next write: the span
// of the Update that leads it carries a ddbkit.combined_write event with
// the number of changes, and the combined-write histogram records 1 (the
// first write) and the batch.
func TestTelemetryCombinedWrite(t *testing.T) {
	r := newTelemetryRig(t)
	s := newBookStore()
	books := newBooks(t, s.client(), r.opts...)
	ctx := context.Background()
	first := make(chan error, 1)
	go func() {
		_, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle("A"))
		first <- err
	}()
	<-s.holding
	const queued = 3
	errs := make(chan error, queued)
	for i := range queued {
		go func() {
			_, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle(string(rune('a'+i))))
			errs <- err
		}()
	}
	waitQueued(books, kid("1"), 1+queued)
	close(s.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for range queued {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	spans := r.ended("Update Books")
	if len(spans) != 1+queued {
		t.Fatalf("%d Update spans; want %d", len(spans), 1+queued)
	}
	var sizes []int64
	for _, sp := range spans {
		for _, e := range events(sp, telemetry.EventCombined) {
			v, _ := attr(e.Attributes, telemetry.Changes)
			sizes = append(sizes, v.AsInt64())
		}
	}
	if len(sizes) != 1 || sizes[0] != queued {
		t.Errorf("combined-write events carry %v changes; want one of %d", sizes, queued)
	}
	if n := r.count(t, telemetry.MetricWriteSize); n != 2 {
		t.Errorf("%s counts %d writes; want 2", telemetry.MetricWriteSize, n)
	}
}

// A Transact whose commit is cancelled because an item it read changed
// runs again: its span carries a ddbkit.tx.rerun event (run 2, reason
// item_changed) and ddbkit.dynamo.tx.reruns{reason=item_changed} counts 1.
func TestTelemetryTransactRerun(t *testing.T) {
	r := newTelemetryRig(t)
	c := storeDB(acctRaw("a", 100, 1, 1), acctRaw("b", 0, 1, 2))
	c.onTxWrite = txErr(func(n int, in *dynamodb.TransactWriteItemsInput) error {
		if n == 1 {
			return txCanceled(txReason(TxCodeConditionFailed, acctRaw("a", 50, 2, 9)), txReason("None", nil))
		}
		return nil
	})
	tb, err := NewTable[acct](NewMapper(c, r.opts...), "Acct")
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Mapper().Transact(context.Background(), transferFn(tb, "a", "b", 10), quick); err != nil {
		t.Fatal(err)
	}
	sp := r.span(t, "Transact")
	reruns := events(sp, telemetry.EventRerun)
	if len(reruns) != 1 {
		t.Fatalf("%d rerun events; want 1", len(reruns))
	}
	if v, _ := attr(reruns[0].Attributes, telemetry.Reason); v.AsString() != telemetry.RerunItemChanged {
		t.Errorf("reason %q; want %q", v.AsString(), telemetry.RerunItemChanged)
	}
	if v, _ := attr(reruns[0].Attributes, telemetry.Run); v.AsInt64() != 2 {
		t.Errorf("run %d; want 2", v.AsInt64())
	}
	if n := r.count(t, telemetry.MetricReruns, telemetry.Reason.String(telemetry.RerunItemChanged)); n != 1 {
		t.Errorf("%s = %d; want 1", telemetry.MetricReruns, n)
	}
}

// An Update or a Transact whose function panics ends its span and records
// its duration, both with error.type panic, and the panic reaches the
// caller with its value.
func TestTelemetryEndsCallWhoseFunctionPanics(t *testing.T) {
	r := newTelemetryRig(t)
	books := newBooks(t, (&fakeDB{}).table("Books", "ISBN", ""), r.opts...)
	acctDB := storeDB(acctRaw("a", 100, 1, 1))
	accts, err := NewTable[acct](NewMapper(acctDB, r.opts...), "Acct")
	if err != nil {
		t.Fatal(err)
	}
	type boom struct{ call string }
	panicked := func(call string, run func()) {
		t.Helper()
		defer func() {
			t.Helper()
			if v := recover(); v != (boom{call}) {
				t.Errorf("%s: recovered %v; want the function's panic value", call, v)
			}
		}()
		run()
		t.Errorf("%s returned; want the function's panic", call)
	}
	panicked("Update", func() {
		_, _ = books.Update(context.Background(), Book{ISBN: "1"}, func(Book) (Book, error) { panic(boom{"Update"}) })
	})
	panicked("Transact", func() {
		_ = accts.Mapper().Transact(context.Background(), func(tx *Tx) error {
			if _, err := accts.In(tx).Load(acct{ID: "a"}); err != nil {
				return err
			}
			panic(boom{"Transact"})
		})
	})
	for _, c := range []struct{ span, op string }{{"Update Books", "Update"}, {"Transact", "Transact"}} {
		sp := r.span(t, c.span)
		if v, _ := attr(sp.Attributes(), telemetry.ErrorType); v.AsString() != "panic" {
			t.Errorf("%s: error.type %q; want panic", c.span, v.AsString())
		}
		if sp.Status().Code != codes.Error {
			t.Errorf("%s: status %v; want Error", c.span, sp.Status())
		}
		if n := r.count(t, telemetry.MetricDuration, telemetry.DBOperationName.String(c.op), telemetry.ErrorType.String("panic")); n != 1 {
			t.Errorf("%s counts %d %s calls that panicked; want 1", telemetry.MetricDuration, n, c.op)
		}
	}
}

// No item value appears in any span, event, metric or log: a sentinel in
// an attribute that is not a key, written, read, conflicted on and
// unknown, is nowhere in what was recorded. The key appears only with
// WithTelemetryKeys.
func TestTelemetryRecordsNoItemValue(t *testing.T) {
	const value, key = "VALUE-SENTINEL-9f3a", "KEY-SENTINEL-77c1"
	for _, keys := range []bool{false, true} {
		r := newTelemetryRig(t)
		opts := r.opts
		if keys {
			opts = append(opts, WithTelemetryKeys())
		}
		stored := map[string]types.AttributeValue{"ISBN": str(key), "title": str(value), "version": n("3")}
		c := &fakeDB{noStore: true}
		c.onGet = func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
			return &dynamodb.GetItemOutput{Item: stored}, nil
		}
		// Every write meets a newer version, written by someone else.
		var mu sync.Mutex
		version := 3
		newer := func() error {
			mu.Lock()
			defer mu.Unlock()
			version++
			return ccf(map[string]types.AttributeValue{"ISBN": str(key), "title": str(value), "version": n(plan.Itoa(int64(version)))})
		}
		c.onUpd = func(int, *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) { return nil, newer() }
		c.onDel = func(int, *dynamodb.DeleteItemInput) (*dynamodb.DeleteItemOutput, error) { return nil, newer() }
		books := newBooks(t, c, append(opts, WithRetry(RetryPolicy{MaxAttempts: 2}))...)
		ctx := context.Background()
		b, err := books.Load(ctx, Book{ISBN: key})
		if err != nil || b.Title != value {
			t.Fatalf("Load = %+v, %v", b, err)
		}
		if _, err := books.Save(ctx, Book{ISBN: key, Title: value, Version: 1}); !errors.Is(err, ErrVersionConflict) {
			t.Fatalf("Save: %v; want a conflict", err)
		}
		if _, err := books.Update(ctx, Book{ISBN: key}, appendTitle(value)); !errors.Is(err, ErrVersionConflict) {
			t.Fatalf("Update: %v; want a conflict", err)
		}
		if err := books.Delete(ctx, Book{ISBN: key, Version: 1}); !errors.Is(err, ErrVersionConflict) {
			t.Fatalf("Delete: %v; want a conflict", err)
		}
		all := r.everything(t)
		if strings.Contains(all, value) {
			t.Errorf("an item value was recorded:\n%s", all)
		}
		if strings.Contains(all, key) != keys {
			t.Errorf("key recorded = %v with WithTelemetryKeys %v:\n%s", strings.Contains(all, key), keys, all)
		}
		if !strings.Contains(all, telemetry.EventConflict) || !strings.Contains(all, "Load Books") {
			t.Errorf("the rig recorded too little to prove anything:\n%s", all)
		}
	}
}

// With telemetry off — no provider given and none set globally, or no-op
// providers given — a call's telemetry allocates nothing.
func TestTelemetryOffAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	for name, m := range map[string]*Mapper{
		"default": NewMapper(&fakeDB{noStore: true}),
		"no-op":   NewMapper(&fakeDB{noStore: true}, WithTracerProvider(tracenoop.NewTracerProvider()), WithMeterProvider(metricnoop.NewMeterProvider())),
	} {
		allocs := testing.AllocsPerRun(100, func() {
			cctx, c := m.begin(ctx, "Load", "T")
			c.noteConsistent(true)
			m.noteKey(cctx, nil)
			_ = c.end(nil)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per call; want 0", name, allocs)
		}
	}
}

// A mapper without providers of its own follows the global ones: spans
// start once a program sets a global tracer provider after NewMapper, and
// stop when it is set back to the default.
func TestTelemetryFollowsGlobalProvider(t *testing.T) {
	m := NewMapper(&fakeDB{noStore: true})
	if _, c := m.begin(context.Background(), "Load", "T"); c.recording() {
		t.Fatal("a span records before any provider is set")
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	_, c := m.begin(context.Background(), "Load", "T")
	_ = c.end(nil)
	if got := len(rec.Ended()); got != 1 {
		t.Fatalf("%d spans after the global provider was set; want 1", got)
	}
	otel.SetTracerProvider(prev)
	if _, c := m.begin(context.Background(), "Load", "T"); c.recording() {
		t.Error("a span records after the default provider was set back")
	}
}

// labelledTP is a tracer provider whose values cannot be compared with ==
// (it holds a slice), passed by value.
type labelledTP struct {
	*sdktrace.TracerProvider
	labels []string
}

// A mapper whose tracer provider is a value that cannot be compared with ==
// (a struct holding a slice) traces its calls, beside a meter provider that
// is a pointer or not, and calls after the first find their state again
// without panicking.
func TestTelemetryWithUncomparableProvider(t *testing.T) {
	for _, mp := range []struct {
		name string
		mp   metric.MeterProvider
	}{{"pointer meter", sdkmetric.NewMeterProvider()}, {"value meter", metricnoop.MeterProvider{}}} {
		t.Run(mp.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := labelledTP{sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), []string{"a"}}
			books := newBooks(t, (&fakeDB{}).table("Books", "ISBN", ""), WithTracerProvider(tp), WithMeterProvider(mp.mp))
			ctx := context.Background()
			b, err := books.Save(ctx, Book{ISBN: "1", Title: "a"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := books.Save(ctx, b); err != nil {
				t.Fatal(err)
			}
			if got := len(rec.Ended()); got != 2 {
				t.Errorf("%d spans ended, want 2 (one per Save)", got)
			}
		})
	}
}
