package leaktest_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/ddbkit/dynamo/internal/leaktest"
)

// poller stands for a type of the package under test that starts a
// goroutine behind its API and must stop it in Close.
type poller struct {
	stop chan struct{}
	done chan struct{}
}

func startPoller() *poller {
	p := &poller{stop: make(chan struct{}), done: make(chan struct{})}
	go p.run()
	return p
}

func (p *poller) run() {
	defer close(p.done)
	<-p.stop
}

func (p *poller) Close() {
	close(p.stop)
	<-p.done
}

// Goroutines lists the goroutines running code of a package. Here the
// package is this example's own (leaktest_test); a test passes the package
// it tests, e.g. "ddbkit/dynamo/lease.".
func ExampleGoroutines() {
	const pkg = "ddbkit/dynamo/internal/leaktest_test."
	p := startPoller()
	fmt.Println("running:", len(leaktest.Goroutines(pkg)))

	p.Close()
	// The goroutine has closed done but may not have returned yet: poll, with
	// a deadline.
	deadline := time.Now().Add(5 * time.Second)
	for len(leaktest.Goroutines(pkg)) > 0 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	fmt.Println("after Close:", len(leaktest.Goroutines(pkg)))
	// Output:
	// running: 1
	// after Close: 0
}

// In a test, Check fails the test when goroutines of the package outlive it
// (it waits up to 5 s for those on their way out).
func ExampleCheck() {
	testPollerStops := func(t *testing.T) {
		leaktest.Check(t, "ddbkit/dynamo/internal/leaktest_test.")
		p := startPoller()
		defer p.Close() // without it, the test fails and prints the goroutine's stack
		// ... use p ...
	}
	_ = testPollerStops
}
