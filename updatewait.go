package dynamo

import (
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// await waits in the queue of key k until a batch runs w's function, then
// for its outcome; or it runs a batch itself when handed the lead. It
// returns when w.ctx ends, whatever the batch is doing: with w's ctx error
// when its change is in no write (the batch leaves it out), else with an
// error satisfying errors.Is(err, ErrUnknownOutcome).
func (t *Table[T]) await(e *hotKey[T], k map[string]types.AttributeValue, w *waiter[T]) outcome[T] {
	changed := false // w's function made a change, which a write may carry
	for {
		select {
		case m := <-w.msgs:
			switch m.kind {
			case msgLead:
				return t.lead(e, k, w)
			case msgResult:
				return m.res
			case msgCompute:
				if w.ctx.Err() != nil {
					w.reply(computed[T]{withdrawn: true, seq: m.seq})
					continue // the batch sends the result
				}
				changed = w.computeAndReply(m.cur, m.seq, m.prep) || changed
			}
		case <-w.ctx.Done():
			// Marked as left, w is asked for nothing more, and the batch
			// that took it (if one did) sees its ctx ended.
			removed, led := t.gate.leaveQueue(e, w)
			if led {
				// Take the lead (its message is queued after any request
				// of a batch that stopped waiting): the batch ends soon,
				// every request in it seeing the ctx ended.
				for (<-w.msgs).kind != msgLead {
				}
				return t.lead(e, k, w)
			}
			if changed && !removed {
				return outcome[T]{err: fmt.Errorf("dynamo: Update of table %q key %s: %w: ctx ended while its change was being written with others' (%w)",
					t.name, formatKey(k), ErrUnknownOutcome, w.ctx.Err())}
			}
			return outcome[T]{err: fmt.Errorf("dynamo: Update of table %q key %s: %w", t.name, formatKey(k), w.ctx.Err())}
		}
	}
}

// reply sends c to the batch, dropping the late answer to an earlier
// request the batch stopped waiting for, if it is still there.
func (w *waiter[T]) reply(c computed[T]) {
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
func (w *waiter[T]) computeAndReply(cur T, seq int, prep func(T) prepared) (changed bool) {
	normal := false
	defer func() {
		if normal {
			return
		}
		p := recover()
		if p == nil {
			w.reply(computed[T]{err: errGoexit, gone: true, seq: seq})
			return
		}
		w.reply(computed[T]{panicked: true, pv: p, seq: seq})
	}()
	w.reply(computed[T]{started: true, seq: seq}) // the batch may start counting
	next, err := w.fn(cur)
	c := computed[T]{next: next, err: err, seq: seq}
	if err == nil && prep != nil {
		c.prep, c.prepped = prep(next), true
	}
	normal = true
	w.reply(c)
	return err == nil
}

// errGoexit is the outcome of a function that called runtime.Goexit.
var errGoexit = errors.New("dynamo: the Update function called runtime.Goexit")

// callOwn calls the running batch's own function, holding back a panic until
// the batch is done.
func callOwn[T any](fn func(T) (T, error), cur T) (c computed[T]) {
	defer func() {
		if p := recover(); p != nil {
			c = computed[T]{panicked: true, pv: p}
		}
	}()
	next, err := fn(cur)
	return computed[T]{next: next, err: err}
}

// ask has w's function called with in: directly when the batch runs in w's
// goroutine, otherwise in w's goroutine. held says whether the batch holds
// changes already: then it waits at most cutAfter, and a function still
// running is cut (left to the next batch), so that it holds back nobody
// whose change was taken.
//
// prep, run on what the function returned when it returned no error,
// makes the change of it; in another goroutine than the batch's, it runs
// there, before the caller can leave Update.
func (t *Table[T]) ask(w *waiter[T], in T, held bool, prep *preparer[T]) computed[T] {
	if w.ctx.Err() != nil {
		return computed[T]{withdrawn: true}
	}
	if w.inline {
		c := callOwn(w.fn, in)
		if c.err == nil && !c.panicked {
			c.prep, c.prepped = prep.run(c.next), true
		}
		return c
	}
	w.asked++
	p := *prep // the caller's goroutine runs its own copy
	w.msgs <- waiterMsg[T]{kind: msgCompute, cur: in, seq: w.asked, prep: p.run}
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
		case <-w.ctx.Done():
			return computed[T]{withdrawn: true}
		case <-cut:
			return computed[T]{cut: true}
		}
	}
}

// lead runs the batch of self and the calls queued behind it that can share
// its write, and returns self's outcome. Alone, self runs it in its own
// goroutine, bounded by its own ctx. With others, the batch runs in a
// goroutine of its own (drive), and self waits for it like the others, so
// that each returns when its own ctx ends, whatever the batch waits for.
func (t *Table[T]) lead(e *hotKey[T], k map[string]types.AttributeValue, self *waiter[T]) outcome[T] {
	t.gate.gather(e, self)
	ws := t.gate.batchFor(e, self)
	if len(ws) > 1 {
		self.channels() // queued, the others have theirs
		go t.drive(e, k, ws)
		return t.await(e, k, self)
	}
	self.inline = true
	defer func() { self.inline = false }()
	res := make([]outcome[T], 1)
	finished := false
	defer func() {
		if !finished {
			// self's function called runtime.Goexit, which reaches only
			// self: nothing was written.
			e.remember(nil, 0, nil, false)
		}
		t.gate.handOff(e, 1)
	}()
	t.runBatch(e, k, ws, res)
	finished = true
	return res[0]
}

// drive runs the batch ws of several calls, sends each its outcome, puts
// back in the queue those left to the next batch, and hands the key on.
func (t *Table[T]) drive(e *hotKey[T], k map[string]types.AttributeValue, ws []*waiter[T]) {
	res := make([]outcome[T], len(ws))
	t.runBatch(e, k, ws, res)
	var back []*waiter[T]
	released := 0
	for i, w := range ws {
		if res[i].requeue {
			back = append(back, w)
			continue
		}
		if !res[i].gone {
			released++
		}
		w.msgs <- waiterMsg[T]{kind: msgResult, res: res[i]}
	}
	t.gate.requeue(e, back)
	t.gate.handOff(e, released)
}
