package main

import (
	"strings"
	"testing"

	"github.com/ddbkit/dynamo/dynamotest"
)

func TestMain(m *testing.M) {
	if workerMain() { // a worker started by run: the test binary is its executable
		return
	}
	dynamotest.Main(m)
}

// TestStreamView runs the demo: the view ends equal to the source after
// the worker holding the shard is killed.
func TestStreamView(t *testing.T) {
	var out strings.Builder
	if err := run(t.Context(), &out, dynamotest.Endpoint(t)); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"killed worker-", "view in step with the source"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	t.Log("\n" + out.String())
}
