package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo/dynamotest"
)

func TestMain(m *testing.M) {
	if groupWorkerMain() { // a worker process TestGroupProcesses started
		return
	}
	if backfillWorkerMain() { // a worker process of a backfill test
		return
	}
	dynamotest.Main(m)
}

// dropClient returns a client whose responses for the operation op (e.g.
// "UpdateItem") can be dropped with the returned Dropper's Arm.
func dropClient(t *testing.T, op string) (*dynamodb.Client, *dynamotest.Dropper) {
	d := dynamotest.NewDropper(op)
	return d.Client(t), d
}

func mustContain(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want one mentioning %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}

func ctx(t *testing.T) context.Context { return t.Context() }
