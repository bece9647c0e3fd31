package clock

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestFakeFiresInOrder(t *testing.T) {
	start := time.Unix(1000, 0)
	f := NewFake(start)
	a := f.NewTimer(2 * time.Second)
	b := f.NewTimer(time.Second)
	var called atomic.Bool
	done := make(chan struct{})
	f.AfterFunc(3*time.Second, func() { called.Store(true); close(done) })
	stopped := f.NewTimer(time.Second)
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop should report true once")
	}
	if f.Timers() != 3 {
		t.Fatalf("%d timers pending", f.Timers())
	}
	f.Advance(1500 * time.Millisecond)
	select {
	case at := <-b.C():
		if !at.Equal(start.Add(time.Second)) {
			t.Errorf("b fired at %v", at)
		}
	default:
		t.Fatal("b did not fire")
	}
	select {
	case <-a.C():
		t.Fatal("a fired early")
	default:
	}
	f.Advance(2 * time.Second)
	<-a.C()
	<-done
	if !called.Load() || !f.Now().Equal(start.Add(3500*time.Millisecond)) {
		t.Errorf("now %v", f.Now())
	}
	if f.NewTimer(0); f.Timers() != 0 {
		t.Error("a zero timer stays pending")
	}
}

func TestBlockUntil(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	go f.NewTimer(time.Second)
	if !f.BlockUntil(nil, 1) {
		t.Fatal("BlockUntil returned false")
	}
	done := make(chan struct{})
	close(done)
	if f.BlockUntil(done, 5) {
		t.Fatal("BlockUntil(5) with a closed done returned true")
	}
	if Real().Now().IsZero() {
		t.Fatal("real clock")
	}
	rt := Real().NewTimer(time.Hour)
	if !rt.Stop() {
		t.Fatal("real timer Stop")
	}
}
