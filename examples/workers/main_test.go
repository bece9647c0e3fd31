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

// TestWorkers runs the demo: 4 worker processes share 16 partitions, one is
// killed, and the other three take its partitions over, balanced.
func TestWorkers(t *testing.T) {
	var out strings.Builder
	if err := run(t.Context(), &out, dynamotest.Endpoint(t), 4, 16); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"worker-1 holds  4", "killed worker-1", "taken over within", "worker-4 holds"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	t.Log("\n" + out.String())
}
