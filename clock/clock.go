package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock tells time and makes timers. Implementations are safe for
// concurrent use.
type Clock interface {
	// Now returns the current time. Durations between two readings of a
	// real clock use the monotonic clock.
	Now() time.Time
	// NewTimer returns a timer that sends the time on its channel after d.
	NewTimer(d time.Duration) Timer
	// AfterFunc calls f in its own goroutine after d.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a *time.Timer or a fake one.
type Timer interface {
	// C returns the channel the time is sent on (nil for AfterFunc timers).
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
}

// Real returns the system clock.
func Real() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) NewTimer(d time.Duration) Timer {
	return realTimer{time.NewTimer(d)}
}
func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	return realTimer{time.AfterFunc(d, f)}
}

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time { return t.t.C }
func (t realTimer) Stop() bool          { return t.t.Stop() }

// Fake is a Clock that moves only when Advance is called. Its zero value is
// not usable; create one with NewFake.
type Fake struct {
	mu      sync.Mutex
	now     time.Time     // guarded by mu
	timers  []*fakeTimer  // pending timers; guarded by mu
	changed chan struct{} // closed and replaced whenever timers change; guarded by mu
}

// NewFake returns a fake clock reading start.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start, changed: make(chan struct{})}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer that fires when the clock has advanced by d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	return f.add(d, nil)
}

// AfterFunc calls fn in its own goroutine when the clock has advanced by d.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	return f.add(d, fn)
}

func (f *Fake) add(d time.Duration, fn func()) *fakeTimer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{f: f, at: f.now.Add(d), fn: fn}
	if fn == nil {
		t.c = make(chan time.Time, 1)
	}
	if d <= 0 {
		t.fire(f.now)
		return t
	}
	f.timers = append(f.timers, t)
	f.notify()
	return t
}

// notify wakes BlockUntil callers; f.mu must be held.
func (f *Fake) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// Advance moves the clock forward by d, firing every timer due by then, in
// order of their deadlines.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	end := f.now.Add(d)
	for {
		sort.SliceStable(f.timers, func(i, j int) bool { return f.timers[i].at.Before(f.timers[j].at) })
		if len(f.timers) == 0 || f.timers[0].at.After(end) {
			break
		}
		t := f.timers[0]
		f.timers = f.timers[1:]
		if t.at.After(f.now) {
			f.now = t.at
		}
		t.fire(f.now)
	}
	f.now = end
	f.notify()
}

// Timers returns the number of pending timers.
func (f *Fake) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// Next returns how far the clock must advance for the earliest pending
// timer to fire; ok is false when no timer is pending.
func (f *Fake) Next() (d time.Duration, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, t := range f.timers {
		if i == 0 || t.at.Sub(f.now) < d {
			d = t.at.Sub(f.now)
		}
	}
	return d, len(f.timers) > 0
}

// Changed returns a channel closed the next time a timer is added, stopped
// or fired, or the clock advances.
func (f *Fake) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

// BlockUntil waits until at least n timers are pending, or done is closed;
// it reports whether the timers are there. Tests use it to know that the
// code under test is waiting before they advance the clock.
func (f *Fake) BlockUntil(done <-chan struct{}, n int) bool {
	for {
		f.mu.Lock()
		if len(f.timers) >= n {
			f.mu.Unlock()
			return true
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-done:
			return false
		}
	}
}

type fakeTimer struct {
	f  *Fake
	at time.Time
	c  chan time.Time // nil for AfterFunc timers
	fn func()
}

// fire delivers the timer; f.mu is held.
func (t *fakeTimer) fire(now time.Time) {
	if t.fn != nil {
		go t.fn()
		return
	}
	select {
	case t.c <- now:
	default:
	}
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	for i, p := range t.f.timers {
		if p == t {
			t.f.timers = append(t.f.timers[:i], t.f.timers[i+1:]...)
			t.f.notify()
			return true
		}
	}
	return false
}
