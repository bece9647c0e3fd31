package backfill

import (
	"slices"
	"sync"
)

// writers shares the writers of this process among the pages its segments
// write. Each segment's goroutine is one writer: it writes the items of its
// own page first and, when its page has no item left to take (the rest in
// flight on other writers), or once its segment is done, items of the other
// segments' pages. So a segment that ends early, or waits for its page's
// last writes, lends its writer to the rest: the writes in flight stay at
// most one per segment's goroutine, and the run ends when the work ends,
// not when the largest segment does. A page is finished (and its segment's
// checkpoint may move past it) once each of its items is written, or its
// segment stopped taking them, and none is in flight.
type writers struct {
	mu       sync.Mutex    // guards the fields below and every pageWork's next, inflight and err
	open     []*pageWork   // pages with items to take or in flight
	scanning int           // segments of this process that may open a page
	changed  chan struct{} // closed, and replaced, at every change
}

// pageWork is one page's items being written: n items, the next to take,
// those in flight, and the page's first error (w.mu guards all but n,
// write and stopped, which are set before the page is shared).
type pageWork struct {
	n, next, inflight int
	write             func(i int) error // writes item i
	// stopped returns non-nil when the page's segment takes no more items
	// (its lease ended, or Run stopping): the page's error.
	stopped func() error
	err     error
}

func newWriters() *writers { return &writers{changed: make(chan struct{})} }

// finished reports whether p has nothing to take and nothing in flight.
func (p *pageWork) finished() bool { return (p.err != nil || p.next == p.n) && p.inflight == 0 }

// takeable reports whether an item of p can be taken now; w.mu is held.
func (p *pageWork) takeable() bool {
	if p.err != nil || p.next == p.n {
		return false
	}
	if err := p.stopped(); err != nil {
		p.err = err
		return false
	}
	return true
}

// begin counts a segment that may open pages; end counts it out.
func (w *writers) begin() {
	w.mu.Lock()
	w.scanning++
	w.mu.Unlock()
}

func (w *writers) end() {
	w.mu.Lock()
	w.scanning--
	w.signal()
	w.mu.Unlock()
}

// signal wakes the writers waiting for a change; w.mu is held.
func (w *writers) signal() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// pick takes the next item to write: own's first, else, while own has
// items in flight on other writers, another open page's; nothing once own
// is finished. w.mu is held. It drops the finished pages from open.
func (w *writers) pick(own *pageWork) (*pageWork, int) {
	var p *pageWork
	switch {
	case own == nil:
	case own.takeable():
		p = own
	case own.finished():
		return nil, 0 // its writer returns
	}
	w.open = slices.DeleteFunc(w.open, (*pageWork).finished)
	for _, o := range w.open {
		if p != nil {
			break
		}
		if o.takeable() {
			p = o
		}
	}
	if p == nil {
		return nil, 0
	}
	i := p.next
	p.next++
	p.inflight++
	return p, i
}

// write writes own's items, and others' while own has none to take, and
// returns own's error once own is finished (nil when every item was
// written).
func (w *writers) write(own *pageWork) error {
	if own.n == 0 {
		return nil
	}
	w.mu.Lock()
	w.open = append(w.open, own)
	w.signal()
	w.mu.Unlock()
	return w.work(own, nil, nil)
}

// help writes the items of the other segments' pages until no segment of
// this process may open a page any more, or quit is closed, or done is.
func (w *writers) help(quit, done <-chan struct{}) {
	_ = w.work(nil, quit, done)
}

// work is write (own not nil) and help (own nil).
func (w *writers) work(own *pageWork, quit, done <-chan struct{}) error {
	for {
		w.mu.Lock()
		p, i := w.pick(own) // (own stopped since: its error is set)
		if p == nil {
			if own != nil && own.finished() {
				w.open = slices.DeleteFunc(w.open, (*pageWork).finished)
				w.mu.Unlock()
				return own.err
			}
			if own == nil && w.scanning == 0 && len(w.open) == 0 {
				w.mu.Unlock()
				return nil
			}
			changed := w.changed
			w.mu.Unlock()
			// own, not finished and with nothing to take, has items in
			// flight: their ends signal.
			select {
			case <-changed:
			case <-quit:
				return nil
			case <-done:
				return nil
			}
			continue
		}
		w.mu.Unlock()
		err := p.write(i)
		w.mu.Lock()
		p.inflight--
		if err != nil && p.err == nil {
			p.err = err
		}
		w.signal()
		w.mu.Unlock()
	}
}
