package lease

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// Acquire waits through failures that may pass: here every request is
// throttled until the fault budget is spent, and the SDK gives up after
// one attempt. TryAcquire returns such a failure.
func TestAcquireWaitsThroughThrottling(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	oneAttempt := func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }

	f := dynamotest.NewFaults(dynamotest.FaultConfig{Throttle: 1, MaxFaults: 1}, nil)
	try := newClient(t, table, f.Client(t, oneAttempt))
	if _, err := try.TryAcquire(t.Context(), "k"); err == nil {
		t.Fatal("TryAcquire through a throttled request succeeded; want the throttling error")
	}

	f = dynamotest.NewFaults(dynamotest.FaultConfig{Throttle: 1, MaxFaults: 5}, nil)
	c := newClient(t, table, f.Client(t, oneAttempt), WithPollInterval(time.Millisecond))
	l, err := c.Acquire(t.Context(), "k")
	if err != nil {
		t.Fatalf("Acquire through 5 throttled requests: %v", err)
	}
	if st := f.Stats(); st.Throttled != 5 {
		t.Errorf("throttled %d requests, want 5", st.Throttled)
	}
	if err := l.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// A take whose write landed but whose answer was lost, and that the SDK did
// not retry, is recognised by its attempt id: Acquire holds the lease at
// once instead of waiting out its own record.
func TestAcquireAdoptsItsLandedWrite(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	drop := dynamotest.NewDropper("TransactWriteItems")
	c := newClient(t, table, drop.Client(t, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }),
		WithLeaseDuration(time.Hour), WithPollInterval(time.Millisecond))
	drop.Arm(1)
	// Without recognising its write, Acquire would wait out its own record
	// (an hour × 1.25): a short deadline makes that a failure.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	l, err := c.Acquire(ctx, "k")
	if err != nil {
		t.Fatalf("Acquire after a lost TransactWriteItems answer: %v", err)
	}
	if drop.Dropped() != 1 || drop.Sent() != 1 {
		t.Errorf("dropped %d of %d TransactWriteItems answers, want 1 of 1 (the write was not sent again)", drop.Dropped(), drop.Sent())
	}
	info, err := c.Holder(t.Context(), "k")
	if err != nil || info.Owner != c.Owner() || info.Token != l.Token() {
		t.Fatalf("Holder = %+v, %v; want %s with token %d", info, err, c.Owner(), l.Token())
	}
	// The adopted lease is a real one: its guarded writes pass.
	res, err := dynamo.NewTable[record](dynamo.NewMapper(dynamotest.Client(t)), table)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Save(t.Context(), l, res, record{Key: "guarded"}); err != nil {
		t.Errorf("guarded write with the adopted lease: %v", err)
	}
	if err := l.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
}
