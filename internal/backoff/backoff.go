// Package backoff is the waiting of the calls that repeat a request: the
// full-jitter wait before the n-th retry, and a sleep that ends with its
// context. The root's RetryPolicy says which bounds a call uses.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Jitter returns the full-jitter wait before retry n (1-based): a random
// duration in [0, min(max, base·2ⁿ⁻¹)).
func Jitter(n int, base, max time.Duration) time.Duration {
	if base <= 0 {
		return 0
	}
	d := max
	if n-1 < 63 && base < max>>(n-1) { // base·2ⁿ⁻¹ < max, without overflow
		d = base << (n - 1)
	}
	if d <= 0 {
		return 0
	}
	return rand.N(d)
}

// Sleep waits for d, or until ctx is done (then it returns ctx.Err()).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}
