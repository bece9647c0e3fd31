package dynamotest_test

import (
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo/dynamotest"
)

// TestFaultsClientRetriesFast checks that a Faults client waits a few
// milliseconds between attempts, not the SDK's default backoff (up to 20 s),
// and keeps the SDK's attempt count. It reads the retryer's delays rather
// than timing requests.
func TestFaultsClientRetriesFast(t *testing.T) {
	t.Parallel()
	f := dynamotest.NewFaults(dynamotest.FaultConfig{Seed: 1}, nil)
	r := f.Client(t).Options().Retryer
	if got, want := r.MaxAttempts(), retry.DefaultMaxAttempts; got != want {
		t.Errorf("MaxAttempts = %d, want the SDK's %d", got, want)
	}
	distinct := map[time.Duration]bool{}
	for attempt := 1; attempt <= 20; attempt++ {
		for range 20 {
			d, err := r.RetryDelay(attempt, errors.New("x"))
			if err != nil {
				t.Fatalf("RetryDelay(%d): %v", attempt, err)
			}
			if d < 0 || d > 64*time.Millisecond {
				t.Fatalf("RetryDelay(%d) = %v; want a few milliseconds (at most 64ms)", attempt, d)
			}
			distinct[d] = true
		}
	}
	if len(distinct) < 10 {
		t.Errorf("400 delays took only %d values; want jitter", len(distinct))
	}
}

// TestFaultsClientRetryerOverridable checks that the caller's options come
// after the fast retries, so a test can have the SDK's own retryer back.
func TestFaultsClientRetryerOverridable(t *testing.T) {
	t.Parallel()
	f := dynamotest.NewFaults(dynamotest.FaultConfig{Seed: 1}, nil)
	nop := aws.NopRetryer{}
	c := f.Client(t, func(o *dynamodb.Options) { o.Retryer = nop })
	if _, ok := c.Options().Retryer.(aws.NopRetryer); !ok {
		t.Errorf("Retryer = %T; want the caller's aws.NopRetryer", c.Options().Retryer)
	}
	c = f.Client(t, func(o *dynamodb.Options) { o.RetryMaxAttempts = 7 })
	if got := c.Options().Retryer.MaxAttempts(); got != 7 {
		t.Errorf("with RetryMaxAttempts 7: MaxAttempts = %d", got)
	}
}

// TestRetryBudgetOutlastsFaults: a user's own calls through a Faults client
// run out of the SDK's 3 attempts at a high enough fault rate; with
// RetryBudget they do not, and they retry as fast. Sequential calls make
// the seeded faults the same in every run.
func TestRetryBudgetOutlastsFaults(t *testing.T) {
	cfg := dynamotest.FaultConfig{Seed: 7, Throttle: 0.5}
	calls := func(c *dynamodb.Client) (failed int) {
		for range 60 {
			if _, err := c.ListTables(t.Context(), &dynamodb.ListTablesInput{Limit: aws.Int32(1)}); err != nil {
				failed++
			}
		}
		return failed
	}
	if n := calls(dynamotest.NewFaults(cfg, nil).Client(t)); n == 0 {
		t.Errorf("with the SDK's 3 attempts no call of 60 failed at 50%% throttling: the test shows nothing")
	}
	c := dynamotest.NewFaults(cfg, nil).Client(t, dynamotest.RetryBudget(30))
	if got := c.Options().Retryer.MaxAttempts(); got != 30 {
		t.Errorf("MaxAttempts = %d, want 30", got)
	}
	for attempt := 1; attempt <= 30; attempt++ {
		if d, err := c.Options().Retryer.RetryDelay(attempt, errors.New("x")); err != nil || d > 64*time.Millisecond {
			t.Fatalf("RetryDelay(%d) = %v, %v; want a few milliseconds", attempt, d, err)
		}
	}
	if n := calls(c); n != 0 {
		t.Errorf("with RetryBudget(30), %d calls of 60 failed", n)
	}
	defer func() {
		if recover() == nil {
			t.Error("RetryBudget(0) did not panic")
		}
	}()
	dynamotest.RetryBudget(0)
}
