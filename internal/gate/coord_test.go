package gate

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ddbkit/dynamo/clock"
)

type testGate = Gate[string, int, struct{}]

// The round trip is the first write's, then moves a quarter of the way to
// each write timed; a negative duration (a clock stepped back) is ignored.
func TestRoundTripMovesAQuarterOfTheWay(t *testing.T) {
	var g testGate
	g.NoteRTT(8 * time.Millisecond)
	g.NoteRTT(-time.Second)
	g.NoteRTT(4 * time.Millisecond)
	if got := g.RTT(); got != 7*time.Millisecond {
		t.Errorf("round trip %v, want 7 ms", got)
	}
}

// A batch takes the calls queued behind its lead that share its class, up
// to the first that does not; a lead of class 0 runs alone.
func TestBatchTakesQueuedCallsOfTheLeadsClass(t *testing.T) {
	var g testGate
	lead := &Waiter[int, struct{}]{Ctx: context.Background(), Share: 1}
	e, first := g.Join("k", nil, lead)
	if !first {
		t.Fatal("the first call did not lead")
	}
	classes := []uint8{1, 1, 2, 1}
	for _, c := range classes {
		if _, led := g.Join("k", nil, &Waiter[int, struct{}]{Ctx: context.Background(), Share: c}); led {
			t.Fatal("a call joining a busy key led")
		}
	}
	if ws := g.batchFor(e, lead); len(ws) != 3 || len(e.queue) != 2 {
		t.Errorf("batch of %d, %d left queued; want 3 and 2", len(ws), len(e.queue))
	}
	alone := &Waiter[int, struct{}]{Ctx: context.Background()}
	if ws := g.batchFor(e, alone); len(ws) != 1 || len(e.queue) != 2 {
		t.Errorf("a lead of class 0 took %d calls", len(ws)-1)
	}
}

// gathering returns a key whose last batch released 3 callers, with the
// round trip at 10 ms of clk, and a lead about to gather for them.
func gathering(clk *clock.Fake) (*testGate, *Key[string, int, struct{}], *Waiter[int, struct{}]) {
	g := &testGate{Clk: clk}
	g.NoteRTT(10 * time.Millisecond)
	lead := &Waiter[int, struct{}]{Ctx: context.Background(), Share: 1}
	e, _ := g.Join("k", nil, lead)
	g.handOff(e, 3) // released 3, none queued: the key is free again
	e.busy = true   // lead holds it again, as Join would hand it
	e.expect = 3
	return g, e, lead
}

// The lead waits for the callers expected and leaves the moment the last
// of them has queued, without the clock moving.
func TestGatherLeavesOnceTheExpectedCallersQueued(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	g, e, lead := gathering(clk)
	done := make(chan struct{})
	go func() { defer close(done); g.gather(e, lead) }()
	if !clk.BlockUntil(done, 1) {
		t.Fatal("the lead did not wait")
	}
	for range 2 {
		g.Join("k", nil, &Waiter[int, struct{}]{Ctx: context.Background(), Share: 1})
	}
	<-done
	if n := clk.Timers(); n != 0 {
		t.Errorf("%d timers left", n)
	}
}

// The wait is bounded by half the round trip.
func TestGatherIsBoundedByHalfTheRoundTrip(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	g, e, lead := gathering(clk)
	done := make(chan struct{})
	go func() { defer close(done); g.gather(e, lead) }()
	if !clk.BlockUntil(done, 1) {
		t.Fatal("the lead did not wait")
	}
	if d, _ := clk.Next(); d != 5*time.Millisecond {
		t.Errorf("gather waits %v, want half the 10 ms round trip", d)
	}
	clk.Advance(5 * time.Millisecond)
	<-done
}

// Concurrent calls on one key take turns through Lead and Await: every
// function runs once per call, one after another, each on the value the
// previous one left, whether its batch ran alone or with others.
func TestCallsOfOneKeyRunOneAfterAnother(t *testing.T) {
	var g testGate
	value := 0 // the stored value: written by the running batch only
	g.Run = func(e *Key[string, int, struct{}], ws []*Waiter[int, struct{}], res []Outcome[int]) {
		cur := value
		for i, w := range ws {
			var c Computed[int]
			if w.Inline {
				c = CallOwn(w.Fn, cur)
			} else {
				c = w.Ask(cur, false, nil)
			}
			cur = c.Next
			res[i] = Outcome[int]{Saved: cur, Err: c.Err}
		}
		value = cur
	}
	const callers, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan string, callers)
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				w := &Waiter[int, struct{}]{Ctx: context.Background(), Fn: func(v int) (int, error) { return v + 1, nil }, Share: 1}
				e, lead := g.Join("k", nil, w)
				var res Outcome[int]
				if lead {
					res = g.Lead(e, w)
				} else {
					res = g.Await(e, w)
				}
				g.Leave("k", e)
				if res.Err != nil || res.Saved < 1 {
					errs <- "a call had no outcome"
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, ok := g.State("k"); ok {
		t.Error("the quiet key without an item kept its state")
	}
	if value != callers*each {
		t.Errorf("value %d, want %d: every function once", value, callers*each)
	}
}

// A batch's next one expects back the share of released callers that the
// last closed return window saw join (rounded up): here 1 of 4 came back
// within an eighth of the round trip, so of the next 4 released, 1.
func TestNextBatchExpectsTheShareThatCameBack(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	g := &testGate{Clk: clk}
	g.NoteRTT(16 * time.Millisecond) // return window 2 ms
	e, _ := g.Join("k", nil, &Waiter[int, struct{}]{Ctx: context.Background()})
	g.handOff(e, 4)
	if e.expect != 4 {
		t.Fatalf("expect %d before any window closed, want all 4 released", e.expect)
	}
	clk.Advance(time.Millisecond)
	if _, led := g.Join("k", nil, &Waiter[int, struct{}]{Ctx: context.Background()}); !led {
		t.Fatal("a call joining a free key did not lead")
	}
	clk.Advance(3 * time.Millisecond)
	g.handOff(e, 4)
	if !e.measured || e.returning != 1 || e.returnedOf != 4 || e.expect != 1 {
		t.Errorf("measured %v, %d of %d came back, expect %d; want 1 of 4 and expect 1", e.measured, e.returning, e.returnedOf, e.expect)
	}
}
