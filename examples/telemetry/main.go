package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// Account is the item the example writes. Its owner is personal data:
// it appears in no span, metric or log.
type Account struct {
	ID      string `dynamo:"id,hash"`
	Owner   string `dynamo:"owner"`
	Balance int64  `dynamo:"balance"`
	Version int64  `dynamo:"version,version"`
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	endpoint, stop, err := dynamotest.Start(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	if err := run(ctx, os.Stdout, os.Stderr, dynamotest.NewClient(endpoint)); err != nil {
		stop()
		log.Fatal(err)
	}
}

// run makes the calls, with spans written to spans as JSON and the metrics
// printed to out at the end; logs go to logs.
func run(ctx context.Context, out, logs io.Writer, client *dynamodb.Client) error {
	exp, err := stdouttrace.New(stdouttrace.WithWriter(out))
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()

	m := dynamo.NewMapper(client,
		dynamo.WithTracerProvider(tp),
		dynamo.WithMeterProvider(mp),
		dynamo.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	table := fmt.Sprintf("telemetry-example-%d", time.Now().UnixNano())
	accounts, err := dynamo.NewTable[Account](m, table)
	if err != nil {
		return err
	}
	if err := accounts.CreateTable(ctx); err != nil {
		return err
	}
	defer func() { _ = accounts.DeleteTable(context.Background()) }()

	// A save and an Update through accounts, then a write through another
	// Table of the same mapper: accounts' stale save fails with a conflict,
	// and its next Update, starting from the item it wrote last, meets the
	// conflict (an event on its span) and retries.
	other, err := dynamo.NewTable[Account](m, table)
	if err != nil {
		return err
	}
	a, err := accounts.Save(ctx, Account{ID: "a", Owner: "Ada Lovelace", Balance: 100})
	if err != nil {
		return err
	}
	deposit := func(cur Account) (Account, error) {
		cur.Balance += 5
		return cur, nil
	}
	b, err := accounts.Update(ctx, Account{ID: "a"}, deposit)
	if err != nil {
		return err
	}
	b.Balance = 90
	if _, err := other.Save(ctx, b); err != nil {
		return err
	}
	if _, err := accounts.Save(ctx, a); err == nil {
		return fmt.Errorf("a stale save succeeded")
	}
	if _, err := accounts.Update(ctx, Account{ID: "a"}, deposit); err != nil {
		return err
	}
	if _, err := accounts.Load(ctx, Account{ID: "a"}, dynamo.ConsistentRead()); err != nil {
		return err
	}
	if err := m.Transact(ctx, func(tx *dynamo.Tx) error {
		v := accounts.In(tx)
		cur, err := v.Load(Account{ID: "a"})
		if err != nil {
			return err
		}
		cur.Balance--
		_, err = v.Save(cur)
		return err
	}); err != nil {
		return err
	}
	return printMetrics(ctx, out, reader)
}

// printMetrics prints every data point reader collects, one a line: a tiny
// stand-in for an exporter.
func printMetrics(ctx context.Context, out io.Writer, reader *sdkmetric.ManualReader) error {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		return err
	}
	var lines []string
	attrs := func(s attribute.Set) string {
		var kv []string
		for _, a := range s.ToSlice() {
			kv = append(kv, string(a.Key)+"="+a.Value.Emit())
		}
		return strings.Join(kv, " ")
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("%s %d {%s}", m.Name, p.Value, attrs(p.Attributes)))
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("%s count=%d sum=%d {%s}", m.Name, p.Count, p.Sum, attrs(p.Attributes)))
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("%s count=%d sum=%.4fs {%s}", m.Name, p.Count, p.Sum, attrs(p.Attributes)))
				}
			}
		}
	}
	sort.Strings(lines)
	fmt.Fprintln(out, "\nMetrics:")
	for _, l := range lines {
		fmt.Fprintln(out, "  "+l)
	}
	return nil
}
