package dynamo

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// BenchmarkTelemetry measures Save, SavePut and Load over the stub client of
// bench_test.go with telemetry off (the default) and recording (the
// OpenTelemetry SDK sampling every span, with no exporter, and a manual
// metric reader): the cost of the library's spans, events and metrics
// alone. See BENCHMARKS.md, "Telemetry".
func BenchmarkTelemetry(b *testing.B) {
	ctx := context.Background()
	c := newBenchClient(b)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(ctx)
		_ = mp.Shutdown(ctx)
	})
	tables := map[string]*Table[benchProfile]{}
	for name, opts := range map[string][]Option{"off": nil, "recording": {WithTracerProvider(tp), WithMeterProvider(mp)}} {
		t, err := NewTable[benchProfile](NewMapper(c, opts...), benchTable)
		if err != nil {
			b.Fatal(err)
		}
		tables[name] = t
	}
	item := benchItem()
	key := benchProfile{ID: item.ID}
	put := WithSaveBehavior(SavePut)
	ops := []struct {
		name string
		f    func(t *Table[benchProfile]) error
	}{
		{"Save", func(t *Table[benchProfile]) error { _, err := t.Save(ctx, item); return err }},
		{"SavePut", func(t *Table[benchProfile]) error { _, err := t.Save(ctx, item, put); return err }},
		{"Load", func(t *Table[benchProfile]) error { _, err := t.Load(ctx, key); return err }},
	}
	for _, op := range ops {
		for _, tel := range []string{"off", "recording"} {
			t := tables[tel]
			b.Run("op="+op.name+"/telemetry="+tel, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := op.f(t); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
