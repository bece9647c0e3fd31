package backfill

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
)

// deadlines records the deadline of each commit's context.
type deadlines struct {
	dynamo.Client
	mu sync.Mutex
	at []time.Time // guarded by mu
}

func (d *deadlines) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	dl, _ := ctx.Deadline()
	d.mu.Lock()
	d.at = append(d.at, dl)
	d.mu.Unlock()
	return d.Client.TransactWriteItems(ctx, in, optFns...)
}

// Each commit has a bound of its own: an outsider saw a segment's commits
// share one 30 s deadline, so a segment working longer than 30 s failed
// every commit after it (29 of 40 items changed, Run failed).
func TestEachCommitHasItsOwnDeadline(t *testing.T) {
	e := newEnv(t, 12)
	rec := &deadlines{Client: e.c}
	m, err := NewMigration(dynamo.NewMapper(rec), e.table, "deadlines", addMigrated, WithFleet(e.leaseClient("p1"), e.leases),
		WithSegments(1), WithPageSize(1), WithPollInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.check(nil)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	seen := map[time.Time]bool{}
	for _, dl := range rec.at {
		if dl.IsZero() {
			t.Fatal("a commit without a deadline")
		}
		if seen[dl] {
			t.Fatalf("two of %d commits share the deadline %v: a segment's work is bounded, not each commit", len(rec.at), dl)
		}
		seen[dl] = true
	}
	if len(rec.at) < e.n {
		t.Fatalf("%d commits, want one per item (%d)", len(rec.at), e.n)
	}
}
