package dynamo

import (
	"math"
	"testing"
	"time"
)

// A policy that sets only BackoffBase above the default BackoffMax (100 ms
// for batches) must not have its waits silently capped below BackoffBase:
// the resolved BackoffMax is at least BackoffBase. Huge values resolve
// without overflow.
func TestBreak5RetryBaseAboveDefaultMax(t *testing.T) {
	for _, base := range []time.Duration{time.Second, time.Duration(math.MaxInt64)} {
		m := NewMapper(&stubClient{})
		p, err := m.retryPolicy(policyBatch, RetryPolicy{BackoffBase: base, MaxAttempts: math.MaxInt}, true, "WithRetry")
		if err != nil {
			t.Fatal(err)
		}
		if p.BackoffMax < p.BackoffBase {
			t.Errorf("call policy base %v: resolved %+v: BackoffMax below BackoffBase caps every wait below the base asked for", base, p)
		}
		for n := 1; n < 100; n += 17 {
			if d := backoff(n, p.BackoffBase, p.BackoffMax); d < 0 {
				t.Errorf("backoff(%d) = %v", n, d)
			}
		}
		mm := NewMapper(&stubClient{}, WithRetry(RetryPolicy{BackoffBase: base}))
		if p, _ := mm.retryPolicy(policyTx, RetryPolicy{}, false, ""); p.BackoffMax < p.BackoffBase {
			t.Errorf("mapper policy base %v: resolved %+v", base, p)
		}
	}
}
