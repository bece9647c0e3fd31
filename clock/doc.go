// Package clock is the time source of the lease and commitlog packages:
// real time in production, a manually advanced fake in tests.
//
// Only durations measured on one Clock matter to the packages that use it
// (a lease's deadline, a waiter's patience); they never compare the
// readings of different machines.
//
// # Testing with the fake clock
//
// Pass a *Fake (lease.WithClock, commitlog.WithClock) and the code under
// test waits only as long as the test says: time moves when the test calls
// Advance, which fires every timer due by then, in order of their deadlines.
// The code under test usually waits in another goroutine, so the test first
// calls BlockUntil to know that the timer it means to fire has been made —
// advancing before that would leave the timer waiting a full period more.
// No test needs to sleep:
//
//	c := clock.NewFake(time.Now())
//	go worker(c)                // makes a timer and waits on it
//	c.BlockUntil(ctx.Done(), 1) // the worker is waiting now
//	c.Advance(time.Minute)      // its timer fires
//
// Timers, Next and Changed tell a test more about what is pending.
package clock
