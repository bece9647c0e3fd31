package lease

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ddbkit/dynamo"
)

// A group worker takes keys in batches: up to takesPerTx keys in one
// TransactWriteItems (each key's record and token record, conditioned as a
// single take is, and the claim's check of the worker's record), and up to
// txAtOnce such transactions at once. A transaction is all or nothing: when
// it is cancelled because some keys' conditions failed (another took them
// first), those keys are dropped and the rest sent again, at most
// batchRetries times; nothing of a cancelled transaction was written.
const (
	takesPerTx   = (dynamo.MaxTxItems - 1) / 2
	txAtOnce     = 2
	batchRetries = 4
)

// taken is the outcome of one key's take in a batch: as write returns.
type taken struct {
	rec    record
	sentAt time.Time
	p      *attempt
	least  int64
	err    error
}

// writeMany takes keys, whose records read views, as write takes one,
// for up to takesPerTx keys in one transaction (with cl's check); each
// key's floor is the least token to issue. out[i] is the outcome for
// keys[i].
func (c *Client) writeMany(ctx context.Context, keys []string, views []view, floors []int64, cl *claim) []taken {
	out := make([]taken, len(keys))
	live := make([]int, len(keys)) // indexes of the keys still to take
	for i := range live {
		live[i] = i
	}
	for try := 0; ; try++ {
		ops := make([]dynamo.TxOp, 0, 2*len(live)+1)
		ts := make([]takeOp, len(live))
		for j, i := range live {
			ts[j] = c.takeOps(keys[i], views[i], floors[i], cl)
			ops = append(ops, ts[j].rec, ts[j].tok)
		}
		ops = append(ops, cl.check)
		sentAt := c.o.clock.Now()
		err := c.table.Mapper().WriteTx(ctx, ops)
		if err == nil {
			for j, i := range live {
				out[i] = taken{rec: ts[j].rec.Saved(), sentAt: sentAt}
			}
			return out
		}
		var te *dynamo.TxError
		if errors.As(err, &te) && !errors.Is(err, dynamo.ErrUnknownOutcome) {
			if cf := te.Failure(len(ops) - 1); cf != nil && cf.Code == dynamo.TxCodeConditionFailed {
				for _, i := range live {
					out[i] = taken{sentAt: sentAt, err: errClaimRefused}
				}
				return out
			}
			var rest []int
			for j, i := range live {
				if raced, least := c.raced(te, 2*j); raced {
					out[i] = taken{sentAt: sentAt, least: least, err: errRace}
				} else {
					rest = append(rest, i)
				}
			}
			if len(rest) < len(live) {
				if live = rest; len(live) == 0 {
					return out
				}
				if try < batchRetries {
					continue // the keys that did not fail, again
				}
				for _, i := range live {
					out[i] = taken{sentAt: sentAt, err: errRace} // not tried again: left to the next pass
				}
				return out
			}
			if try < batchRetries && conflicted(te, len(ops)) {
				continue // a release in flight on some key (TransactionConflict): nothing written, again
			}
		}
		for j, i := range live {
			kerr := fmt.Errorf("lease: take %q (with %d other keys): %w", keys[i], len(live)-1, err)
			out[i] = taken{sentAt: sentAt, err: kerr}
			if maybeApplied(kerr) {
				out[i].p = &attempt{id: ts[j].next.Attempt, sentAt: sentAt}
			}
		}
		return out
	}
}

// conflicted reports whether a member of the cancelled transaction te, of
// n members, was cancelled for a transaction in flight on its item.
func conflicted(te *dynamo.TxError, n int) bool {
	for i := range n {
		if f := te.Failure(i); f != nil && f.Code == dynamo.TxCodeConflict {
			return true
		}
	}
	return false
}

// chunks splits 0 … n-1 into runs of at most size: [lo, hi) pairs.
func chunks(n, size int) [][2]int {
	var out [][2]int
	for lo := 0; lo < n; lo += size {
		out = append(out, [2]int{lo, min(lo+size, n)})
	}
	return out
}

// inBatches runs f on each chunk of 0 … n-1 of at most size, up to
// atOnce of them at once, and returns once all have returned.
func inBatches(n, size, atOnce int, f func(lo, hi int)) {
	cs := chunks(n, size)
	var next atomic.Int64
	inParallel(min(atOnce, len(cs)), func(int) {
		for j := int(next.Add(1)) - 1; j < len(cs); j = int(next.Add(1)) - 1 {
			f(cs[j][0], cs[j][1])
		}
	})
}
