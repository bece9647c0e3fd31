package main

import (
	"strings"
	"testing"

	"github.com/ddbkit/dynamo/dynamotest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// TestBackfill runs the demo on 1000 items: it must end with every item
// changed and every live write kept.
func TestBackfill(t *testing.T) {
	var out strings.Builder
	if err := run(t.Context(), &out, dynamotest.Endpoint(t), 1000); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "all 1000 customers have their tier") {
		t.Errorf("output:\n%s", out.String())
	}
	t.Log("\n" + out.String())
}
