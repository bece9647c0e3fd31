package gate

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// Await waits in the queue of key e until a batch runs w's function, then
// for its outcome; or it runs a batch itself when handed the lead. It
// returns when w.Ctx ends, whatever the batch is doing: Ended, with w's ctx
// error, and Unknown when its change may be in a write (the root words it
// as ErrUnknownOutcome).
func (g *Gate[K, T, O]) Await(e *Key[K, T, O], w *Waiter[T, O]) Outcome[T] {
	changed := false // w's function made a change, which a write may carry
	for {
		select {
		case m := <-w.msgs:
			switch m.kind {
			case msgLead:
				return g.Lead(e, w)
			case msgResult:
				return m.res
			case msgCompute:
				if w.Ctx.Err() != nil {
					w.reply(Computed[T]{Withdrawn: true, seq: m.seq})
					continue // the batch sends the result
				}
				changed = w.computeAndReply(m.cur, m.seq, m.prep) || changed
			}
		case <-w.Ctx.Done():
			// Marked as left, w is asked for nothing more, and the batch
			// that took it (if one did) sees its ctx ended.
			removed, led := g.leaveQueue(e, w)
			if led {
				// Take the lead (its message is queued after any request
				// of a batch that stopped waiting): the batch ends soon,
				// every request in it seeing the ctx ended.
				for (<-w.msgs).kind != msgLead {
				}
				return g.Lead(e, w)
			}
			return Outcome[T]{Err: w.Ctx.Err(), Ended: true, Unknown: changed && !removed}
		}
	}
}

// reply sends c to the batch, dropping the late answer to an earlier
// request the batch stopped waiting for, if it is still there.
func (w *Waiter[T, O]) reply(c Computed[T]) {
	select {
	case <-w.replies:
	default:
	}
	w.replies <- c
}

// computeAndReply calls w's function with cur in the caller's goroutine and
// sends what it returned to the running batch, as the answer to request
// seq. A panic is recovered and reported to the batch (which leaves the
// change out), which may call fn again (when cur turns out not to be the
// stored item) or sends it back as the call's outcome, to be raised again
// in the caller. runtime.Goexit (t.FailNow in a test) cannot be held back:
// it is reported as the caller gone, never to be asked again. It reports
// whether fn made a change. What fn returned is prepared (prep: checked and
// encoded) here too, before the reply: once the batch has the reply, the
// caller may leave Update and change the value its function returned,
// which the batch therefore never reads again.
func (w *Waiter[T, O]) computeAndReply(cur T, seq int, prep func(T) Prepared) (changed bool) {
	normal := false
	defer func() {
		if normal {
			return
		}
		p := recover()
		if p == nil {
			w.reply(Computed[T]{Err: errGoexit, Gone: true, seq: seq})
			return
		}
		w.reply(Computed[T]{Panicked: true, PV: p, seq: seq})
	}()
	w.reply(Computed[T]{started: true, seq: seq}) // the batch may start counting
	next, err := w.Fn(cur)
	c := Computed[T]{Next: next, Err: err, seq: seq}
	if err == nil && prep != nil {
		c.Prep, c.Prepped = prep(next), true
	}
	normal = true
	w.reply(c)
	return err == nil
}

// errGoexit is the outcome of a function that called runtime.Goexit.
var errGoexit = errors.New("dynamo: the Update function called runtime.Goexit")

// CallOwn calls the running batch's own function, holding back a panic until
// the batch is done.
func CallOwn[T any](fn func(T) (T, error), cur T) (c Computed[T]) {
	defer func() {
		if p := recover(); p != nil {
			c = Computed[T]{Panicked: true, PV: p}
		}
	}()
	next, err := fn(cur)
	return Computed[T]{Next: next, Err: err}
}

// Ask has w's function called with in in w's goroutine, w being queued
// behind the running batch (the root calls its Inline function directly:
// CallOwn). held says whether the batch holds changes already: then it
// waits at most cutAfter, and a function still running is cut (left to the
// next batch), so that it holds back nobody whose change was taken.
//
// prep, run on what the function returned when it returned no error,
// makes the change of it; it runs in w's goroutine, before the caller can
// leave Update.
func (w *Waiter[T, O]) Ask(in T, held bool, prep func(T) Prepared) Computed[T] {
	w.asked++
	w.msgs <- waiterMsg[T]{kind: msgCompute, cur: in, seq: w.asked, prep: prep}
	var cut <-chan time.Time
	for {
		select {
		case c := <-w.replies:
			if c.seq != w.asked {
				continue // a late answer to an earlier request
			}
			if c.started {
				// The function runs: from now on it may be cut (the
				// time the caller's goroutine took to be scheduled
				// does not count).
				if held && cut == nil {
					timer := time.NewTimer(cutAfter)
					defer timer.Stop()
					cut = timer.C
				}
				continue
			}
			return c
		case <-w.Ctx.Done():
			return Computed[T]{Withdrawn: true}
		case <-cut:
			return Computed[T]{Cut: true}
		}
	}
}

// Lead runs the batch of self and the calls queued behind it that can share
// its write, and returns self's outcome. Alone, self runs it in its own
// goroutine, bounded by its own ctx. With others, the batch runs in a
// goroutine of its own (drive), and self waits for it like the others, so
// that each returns when its own ctx ends, whatever the batch waits for.
func (g *Gate[K, T, O]) Lead(e *Key[K, T, O], self *Waiter[T, O]) Outcome[T] {
	g.gather(e, self)
	ws := g.batchFor(e, self)
	if len(ws) > 1 {
		self.channels() // queued, the others have theirs
		go g.drive(e, ws)
		return g.Await(e, self)
	}
	self.Inline = true
	defer func() { self.Inline = false }()
	res := e.alone[:] // Run, called through a func value, would make a new slice escape
	finished := false
	defer func() {
		if !finished {
			// self's function called runtime.Goexit, which reaches only
			// self: nothing was written.
			e.Remember(nil, 0, nil, false)
		}
		g.handOff(e, 1)
	}()
	g.Run(e, ws, res)
	finished = true
	out := res[0]
	res[0] = Outcome[T]{} // keeps nothing of it, before the hand-off
	return out
}

// drive runs the batch ws of several calls, sends each its outcome, puts
// back in the queue those left to the next batch, and hands the key on.
func (g *Gate[K, T, O]) drive(e *Key[K, T, O], ws []*Waiter[T, O]) {
	res := make([]Outcome[T], len(ws))
	g.Run(e, ws, res)
	var back []*Waiter[T, O]
	released := 0
	for i, w := range ws {
		if res[i].Requeue {
			back = append(back, w)
			continue
		}
		if !res[i].Gone {
			released++
		}
		w.msgs <- waiterMsg[T]{kind: msgResult, res: res[i]}
	}
	g.requeue(e, back)
	g.handOff(e, released)
}

// BatchContext returns the context of a batch's requests: done when the
// contexts of all its callers are, so that one caller's deadline does not
// decide for the others whose changes the write carries.
func BatchContext[T, O any](ws []*Waiter[T, O]) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ws[0].Ctx))
	var left atomic.Int64
	left.Store(int64(len(ws)))
	stops := make([]func() bool, len(ws))
	for i, w := range ws {
		stops[i] = context.AfterFunc(w.Ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// Rerun returns the members of live from first on whose callers are still
// in Update.
func Rerun[T any](live []int, first int, res []Outcome[T]) []int {
	var out []int
	for _, i := range live {
		if i >= first && !res[i].Gone && !res[i].Requeue {
			out = append(out, i)
		}
	}
	return out
}
