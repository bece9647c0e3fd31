package dynamo_test

import (
	"log/slog"
	"os"

	"go.opentelemetry.io/otel"

	"github.com/ddbkit/dynamo"
)

// A mapper reporting spans and metrics to the program's OpenTelemetry
// providers, and the events an operator must see (unknown outcomes) to a
// logger. Without WithTracerProvider and WithMeterProvider the global
// providers are used, looked up at each call; the lease and commitlog
// clients built on m report through the same.
func ExampleWithTracerProvider() {
	m := dynamo.NewMapper(client,
		dynamo.WithTracerProvider(otel.GetTracerProvider()),
		dynamo.WithMeterProvider(otel.GetMeterProvider()),
		dynamo.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))),
	)
	_ = m
}
