package dynamo

import (
	"testing"
	"time"
)

// The bound of the n-th wait is min(BackoffMax, BackoffBase·2ⁿ⁻¹): when
// BackoffBase·2ⁿ⁻¹ overflows, it is BackoffMax, never a wait of zero (or a
// short one) that would retry at full speed.
func TestBreakBackoffOverflow(t *testing.T) {
	base, max := 20*time.Second, time.Hour
	for n := 1; n <= 64; n++ {
		var most time.Duration
		for range 200 {
			most = max0(most, backoff(n, base, max))
		}
		if most >= max {
			t.Fatalf("retry %d waited %v, at least BackoffMax %v", n, most, max)
		}
		if want := min(max, base<<min(n-1, 7)); most < want/4 {
			t.Errorf("retry %d: the longest of 200 waits is %v; want waits up to %v", n, most, want)
		}
	}
}

func max0(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}
