package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ddbkit/dynamo/dynamotest"
)

// The example exports the mapper's spans (the Update that met a conflict
// among them) and prints its metrics, and no item value (the owner's name)
// appears in either.
func TestExampleExportsSpansAndMetrics(t *testing.T) {
	var out, logs bytes.Buffer
	if err := run(t.Context(), &out, &logs, dynamotest.Client(t)); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{`"Name":"Update telemetry-example-`, `"ddbkit.conflict"`, `"Name":"Transact"`, `ddbkit.dynamo.conflicts 1 {aws.dynamodb.table_names=["telemetry-example-`, "ddbkit.dynamo.operation.duration count="} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(got+logs.String(), "Lovelace") {
		t.Error("an item value was exported")
	}
}
