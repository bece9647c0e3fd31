package main

import (
	"strings"
	"testing"

	"github.com/ddbkit/dynamo/dynamotest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

func TestTour(t *testing.T) {
	var out strings.Builder
	if err := run(t.Context(), &out, dynamotest.Client(t)); err != nil {
		t.Fatalf("%v\noutput so far:\n%s", err, out.String())
	}
	for _, want := range []string{
		"draft.Version = 0, saved.Version = 1",
		"alice saved version 2",
		"dynamo: version conflict",
		"held version 1, found 2",
		"version 3 — both changes kept",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("tour output lacks %q:\n%s", want, out.String())
		}
	}
}
