package backoff

import (
	"testing"
	"time"
)

// backoff stays within its bounds, also for huge n.
func TestBackoffBounds(t *testing.T) {
	for n := 1; n < 100; n++ {
		d := Jitter(n, time.Millisecond, 50*time.Millisecond)
		limit := min(50*time.Millisecond, time.Millisecond<<min(n-1, 20))
		if d < 0 || d >= limit {
			t.Fatalf("Jitter(%d) = %v, want [0, %v)", n, d, limit)
		}
	}
	if Jitter(3, 0, time.Second) != 0 {
		t.Error("zero base must not wait")
	}
}

// The bound of the n-th wait is min(BackoffMax, BackoffBase·2ⁿ⁻¹): when
// BackoffBase·2ⁿ⁻¹ overflows, it is BackoffMax, never a wait of zero (or a
// short one) that would retry at full speed.
func TestBackoffOverflowIsBackoffMax(t *testing.T) {
	base, max := 20*time.Second, time.Hour
	for n := 1; n <= 64; n++ {
		var most time.Duration
		for range 200 {
			most = max0(most, Jitter(n, base, max))
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
