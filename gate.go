package dynamo

import (
	"github.com/ddbkit/dynamo/internal/gate"
)

// The Update calls of one Table are coordinated key by key by its gate
// (Table.gate, internal/gate): the per-key queue, the batch that runs the
// calls queued behind its lead, the wait for released callers, the
// hand-off, the cache of quiet keys' items. What a batch reads, computes
// and writes is the root's: runBatch, the gate's Run (updatebatch.go).

// hotKey is the gate's state of one key; waiter is one Update call.
type (
	hotKey[T any] = gate.Key[keyID, T, writeOptions]
	waiter[T any] = gate.Waiter[T, writeOptions]
)

// noWriteOptions are the options of an Update given none: a waiter refers
// to them, so that it is small (a writeOptions is ~190 B); only read.
var noWriteOptions writeOptions

// coalescable reports whether calls with these options can share a write
// with others: conditions are checked against the stored item, which only
// the first change of a write sees, and SaveClobber, SaveUpdateSkipNulls and
// SaveAppendSet return the item DynamoDB stored, which only the last change
// of a write gets.
func (wo *writeOptions) coalescable() bool {
	return len(wo.conds) == 0 && len(wo.guards) == 0 && (wo.behavior == SaveUpdate || wo.behavior == SavePut)
}

// share returns the gate's class of calls with these options
// (gate.Waiter.Share): 0 when they keep their write to themselves, else
// one per save behaviour.
func (wo *writeOptions) share() uint8 {
	if !wo.coalescable() {
		return 0
	}
	return uint8(wo.behavior) + 1
}

// ask has w's function called with in: directly when the batch runs in w's
// goroutine, otherwise in w's goroutine (gate.Waiter.Ask, which may cut a
// slow function when the batch holds changes already).
//
// prep, run on what the function returned when it returned no error,
// makes the change of it; in another goroutine than the batch's, it runs
// there, before the caller can leave Update.
func (t *Table[T]) ask(w *waiter[T], in T, held bool, prep *preparer[T]) gate.Computed[T] {
	if w.Ctx.Err() != nil {
		return gate.Computed[T]{Withdrawn: true}
	}
	if w.Inline {
		c := gate.CallOwn(w.Fn, in)
		if c.Err == nil && !c.Panicked {
			c.Prep, c.Prepped = prep.run(c.Next), true
		}
		return c
	}
	p := *prep // the caller's goroutine runs its own copy
	return w.Ask(in, held, p.run)
}
