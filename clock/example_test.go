package clock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ddbkit/dynamo/clock"
)

// Timers fire when the fake clock is advanced past their deadline, in order
// of their deadlines, each with the time it was due.
func ExampleFake() {
	start := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	c := clock.NewFake(start)
	slow := c.NewTimer(3 * time.Second)
	fast := c.NewTimer(time.Second)

	c.Advance(2 * time.Second)
	fmt.Println("after 2s:", (<-fast.C()).Sub(start), "fired;", c.Timers(), "pending")
	select {
	case <-slow.C():
		fmt.Println("slow fired early")
	default:
		fmt.Println("slow not yet")
	}

	c.Advance(5 * time.Second)
	fmt.Println("slow fired at", (<-slow.C()).Sub(start), "; now", c.Now().Sub(start))
	// Output:
	// after 2s: 1s fired; 1 pending
	// slow not yet
	// slow fired at 3s ; now 7s
}

// retryAfter is code under test: it waits d on c before giving up, the way
// lease and commitlog wait between attempts.
func retryAfter(ctx context.Context, c clock.Clock, d time.Duration) error {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// The code under test waits in its own goroutine. BlockUntil returns once it
// has made its timer, so that Advance fires that timer rather than running
// ahead of it; no sleeping, whatever the machine's load.
func ExampleFake_BlockUntil() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound, not a sleep
	defer cancel()
	c := clock.NewFake(time.Unix(0, 0))

	done := make(chan error)
	go func() { done <- retryAfter(ctx, c, 30*time.Second) }()

	if !c.BlockUntil(ctx.Done(), 1) {
		fmt.Println("the code under test never waited")
		return
	}
	d, _ := c.Next()
	fmt.Println("waiting for", d)
	c.Advance(d)
	fmt.Println("returned", <-done)
	// Output:
	// waiting for 30s
	// returned <nil>
}

// Advance runs the functions of AfterFunc timers in their own goroutines;
// the test waits for what they do, not for time to pass.
func ExampleFake_AfterFunc() {
	c := clock.NewFake(time.Unix(0, 0))
	expired := make(chan string, 1)
	c.AfterFunc(20*time.Second, func() { expired <- "lease expired" })

	c.Advance(19 * time.Second)
	fmt.Println(c.Timers(), "pending")
	c.Advance(time.Second)
	fmt.Println(<-expired)
	// Output:
	// 1 pending
	// lease expired
}

// Real is the clock to use outside of tests; code that takes a clock.Clock
// can be given either.
func ExampleReal() {
	ctx := context.Background()
	if err := retryAfter(ctx, clock.Real(), time.Millisecond); err != nil {
		fmt.Println(err)
	}
	fmt.Println("waited")
	// Output: waited
}
