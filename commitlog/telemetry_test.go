package commitlog

import (
	"errors"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/telemetry"
)

// TestTelemetryNamesErrorsByClass: a Committer's span records the kind of
// the error its call returned in error.type — a commit-log sentinel by its
// name (exists), an error of the mapper as the mapper's own span names it
// (table_not_found: the table does not exist), never a bare "error".
func TestTelemetryNamesErrorsByClass(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	m := dynamo.NewMapper(dynamotest.Client(t), dynamo.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))))
	classOf := func(c *Committer, want error) string {
		t.Helper()
		n := len(spans.Ended())
		if _, err := c.PutIfNotExists(t.Context(), "a", []byte("x")); !errors.Is(err, want) {
			t.Fatalf("PutIfNotExists: %v; want %v", err, want)
		}
		for _, s := range spans.Ended()[n:] {
			if strings.HasPrefix(s.Name(), "commitlog.PutIfNotExists") {
				for _, kv := range s.Attributes() {
					if kv.Key == telemetry.ErrorType {
						return kv.Value.AsString()
					}
				}
			}
		}
		t.Fatal("no commitlog.PutIfNotExists span with error.type")
		return ""
	}
	missing, err := NewCommitter(m, uniqueTable("missing"), NewMemStore())
	if err != nil {
		t.Fatal(err)
	}
	if got := classOf(missing, dynamo.ErrTableNotFound); got != "table_not_found" {
		t.Errorf("error.type on a missing table %q; want table_not_found", got)
	}
	c, err := NewCommitter(m, committerTable(t), NewMemStore())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutIfNotExists(t.Context(), "a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got := classOf(c, ErrExists); got != "exists" {
		t.Errorf("error.type of a put over an object %q; want exists", got)
	}
}
