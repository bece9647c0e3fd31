package main

import (
	"strings"
	"testing"

	"github.com/ddbkit/dynamo/commitlog/s3test"
	"github.com/ddbkit/dynamo/dynamotest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// TestCommitlogDemo runs the demo against DynamoDB Local and an in-process
// S3 server and checks what it prints.
func TestCommitlogDemo(t *testing.T) {
	var out strings.Builder
	s3Client := s3test.Client(t, s3test.Server(t))
	if err := run(t.Context(), &out, dynamotest.Client(t), s3Client, 4, 5); err != nil {
		t.Fatalf("%v\noutput so far:\n%s", err, out.String())
	}
	for _, want := range []string{
		"4 writers append 5 entries each",
		"latest version: 20",
		"logs/orders/00000000000000000001.json  {\"writer\":",
		"logs/orders/00000000000000000020.json  {\"writer\":",
		"20 entries, versions 1..20 each given out once",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), "logs/orders/0"); n != 20 {
		t.Errorf("%d entries printed, want 20", n)
	}
	t.Log("\n" + out.String())
}
