package commitlog

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// A claim applied whose response was lost, and that a reader completed
// before the SDK's retry, is still recognised as ours: the retry finds the
// claim rewritten by the reader (another write token), naming our temporary
// object. Found by TestFaultsCommitlog: Append used to take the retry's
// conflict for another writer's claim and claim the next version with the
// same temporary object, which the reader had deleted — so the entry was in
// the log twice, the later version could never be completed, and every
// later Append failed.
func TestLogClaimCompletedBeforeRetry(t *testing.T) {
	checkNoLeak(t)
	table := logTable(t)
	tr := dynamotest.NewDropper("PutItem")
	client := tr.Client(t, func(o *dynamodb.Options) {
		o.Retryer = retry.AddWithMaxBackoffDelay(retry.NewStandard(), 5*time.Millisecond)
	})
	s := NewMemStore()
	w := openLog(t, table, client, s, "l", WithOwner("writer"))
	r := openLog(t, table, nil, s, "l", WithOwner("reader"))
	ctx := t.Context()

	read := func(v int64, want string) func() {
		return func() {
			if data, err := r.Read(ctx, v); err != nil || string(data) != want {
				t.Errorf("reader: Read(%d) = %q, %v; want %q", v, data, err, want)
			}
		}
	}
	tr.ArmThen(read(1, "one"))
	if v, err := w.Append(ctx, []byte("one")); err != nil || v != 1 {
		t.Fatalf("Append = %d, %v; want 1", v, err)
	}
	tr.ArmThen(read(2, "two"))
	if err := w.AppendAt(ctx, 2, []byte("two")); err != nil {
		t.Fatalf("AppendAt(2) = %v; want nil: the entry is ours", err)
	}
	if v, err := w.Append(ctx, []byte("three")); err != nil || v != 3 {
		t.Fatalf("Append after the races = %d, %v; want 3", v, err)
	}
	for v, want := range map[int64]string{1: "one", 2: "two", 3: "three"} {
		if data, err := r.Read(ctx, v); err != nil || string(data) != want {
			t.Errorf("Read(%d) = %q, %v; want %q", v, data, err, want)
		}
		c, err := r.table.Load(ctx, logRecord{Log: "l", Version: v}, dynamo.ConsistentRead())
		if err != nil || !c.Complete || c.Owner != "writer" {
			t.Errorf("claim %d: %+v, %v", v, c, err)
		}
	}
	if latest, err := r.Latest(ctx); err != nil || latest != 3 {
		t.Errorf("Latest = %d, %v; want 3", latest, err)
	}
	if tmp := tempObjects(t, s, "l"); len(tmp) != 0 {
		t.Errorf("temporary objects left: %v", tmp)
	}
}
