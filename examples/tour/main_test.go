package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/leaktest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// TestTour runs the tour against the test's DynamoDB and checks that its
// output states the facts it is there to show.
func TestTour(t *testing.T) {
	for _, pkg := range []string{"ddbkit/dynamo/lease.", "ddbkit/dynamo/commitlog", "examples/tour", "examples/sessions"} {
		leaktest.Check(t, pkg)
	}
	var b strings.Builder
	if err := run(t.Context(), &b, dynamotest.Client(t)); err != nil {
		t.Fatalf("%v\noutput so far:\n%s", err, b.String())
	}
	out := b.String()
	for _, want := range []string{
		// 1. versions
		"the argument is untouched (version 0); the saved copy has version 1",
		"Alice saves version 2; Bob's save is refused:",
		"dynamo: version conflict", "held version 1, found 2",
		"tags [golang], version 3 — both changes kept",
		// 2. a lost answer: the SDK alone reports a conflict for a write
		// it applied; the mapper reports the success
		"ConditionalCheckFailedException — a conflict.",
		"Yet the table holds its change: \"Effective Java (3rd ed.)\", version 2.",
		"reports the success it was: \"The Go Programming Language (2nd printing)\", version 2.",
		// 3. carts: both changes of a collision kept, a burst with none lost
		"A: version 1: book×1\n",
		"B: version 2: book×1, pen×1\n",
		"B's write was refused (a version conflict: A's came first)",
		"GET from A: version 2: book×1, pen×1 — both changes kept.",
		"Cart: version 40: item-0×10, item-1×10, item-2×10, item-3×10\n",
		"both answer version 3: book×1, pen×3 — added once",
		"reads 31 minutes later gets 404:",
		// 4. lease
		"node-1 gives up on its own clock:",
		"Refused before sending — its lease ended on its own clock:",
		"DynamoDB refuses it",
		"(ConditionalCheckFailed)",
		// 5. commit log
		"orders/00000000000000000001.json  {\"writer\":",
		"orders/00000000000000000012.json  {\"writer\":",
		"12 entries, numbered 1..12: each number given out exactly once, no gap",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("tour output lacks %q", want)
		}
	}
	tokens := regexp.MustCompile(`Fencing tokens: node-1 (\d+) < node-2 (\d+)\.`).FindStringSubmatch(out)
	if tokens == nil {
		t.Error("tour output lacks the fencing tokens")
	} else if t1, _ := strconv.ParseInt(tokens[1], 10, 64); t1 <= 0 {
		t.Errorf("node-1's token %s", tokens[1])
	} else if t2, _ := strconv.ParseInt(tokens[2], 10, 64); t2 <= t1 {
		t.Errorf("tokens not increasing: %d, then %d", t1, t2)
	}
	if n := strings.Count(out, "    orders/0"); n != 12 {
		t.Errorf("%d log entries printed, want 12", n)
	}
	if t.Failed() {
		t.Log("\n" + out)
	}
}
