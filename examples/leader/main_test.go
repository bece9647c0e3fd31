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

// TestLeader runs the demo; its workers are child processes of the test
// binary.
func TestLeader(t *testing.T) {
	var out strings.Builder
	if err := run(t.Context(), &out, dynamotest.Endpoint(t), 3); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"is leader with fencing token", "killed worker-", "took over with fencing token", "the new token is greater"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	t.Log("\n" + out.String())
}
