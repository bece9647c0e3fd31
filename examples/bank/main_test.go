package main

import (
	"strings"
	"testing"

	"github.com/ddbkit/dynamo/dynamotest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

func TestBank(t *testing.T) {
	var out strings.Builder
	if err := run(t.Context(), &out, dynamotest.Client(t), 4, 6, 15); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"total balance 4000, at the start 4000: ok", "equals 1 + the transfers that touched it: ok"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	t.Log("\n" + out.String())
}
