package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/ddbkit/dynamo/internal/backoff"
)

// RetryPolicy says how often a call that repeats a request tries — Update
// after a version conflict, the batch calls after unprocessed items, WriteTx,
// ReadTx and Transact after a transaction conflict, CreateTable polling — and
// how long it waits: the n-th retry waits a random duration in
// [0, min(BackoffMax, BackoffBase·2ⁿ⁻¹)). A zero field takes the call's
// default (Update, batches, Transact: 100 attempts, 2 ms to 100 ms; WriteTx,
// ReadTx: 8, 10 ms to 500 ms; table polling: no bound, 20 ms to 1 s). Give it
// with WithRetry to NewMapper or to one call; a negative field, or BackoffMax
// below BackoffBase, is refused. Details: docs/calls.md#retrypolicy.
type RetryPolicy struct {
	// MaxAttempts bounds the requests (or, for Update, the writes) in all,
	// the first one included. 1 means no retry.
	MaxAttempts int
	// BackoffBase is the bound on the first wait; it doubles with every
	// further retry up to BackoffMax.
	BackoffBase time.Duration
	// BackoffMax bounds every wait.
	BackoffMax time.Duration
}

// retryKind is a kind of call with a default RetryPolicy.
type retryKind int

const (
	policyUpdate retryKind = iota
	policyBatch
	policyTx
	policyPoll
)

// defaultRetry returns the default policy of a kind of call (see the table
// in RetryPolicy's doc). MaxAttempts 0 means no bound.
func defaultRetry(k retryKind) RetryPolicy {
	switch k {
	case policyTx:
		return RetryPolicy{MaxAttempts: 8, BackoffBase: 10 * time.Millisecond, BackoffMax: 500 * time.Millisecond}
	case policyPoll:
		return RetryPolicy{BackoffBase: tablePollMin, BackoffMax: tablePollMax}
	}
	return RetryPolicy{MaxAttempts: 100, BackoffBase: 2 * time.Millisecond, BackoffMax: 100 * time.Millisecond}
}

// or returns p with its zero fields taken from d.
func (p RetryPolicy) or(d RetryPolicy) RetryPolicy {
	if p.MaxAttempts == 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.BackoffBase == 0 {
		p.BackoffBase = d.BackoffBase
	}
	if p.BackoffMax == 0 {
		// A base set above the default bound raises the bound to it: the
		// waits asked for are not silently capped below the base.
		p.BackoffMax = max(d.BackoffMax, p.BackoffBase)
	}
	return p
}

// check refuses a policy no call can follow; where names the option.
func (p RetryPolicy) check(where string) error {
	if p.MaxAttempts < 0 || p.BackoffBase < 0 || p.BackoffMax < 0 {
		return fmt.Errorf("%w: %s: %+v has a negative field: use 0 for the default, MaxAttempts 1 for no retry",
			ErrInvalidInput, where, p)
	}
	if p.BackoffMax != 0 && p.BackoffMax < p.BackoffBase {
		return fmt.Errorf("%w: %s: BackoffMax %v is below BackoffBase %v: make BackoffMax at least BackoffBase",
			ErrInvalidInput, where, p.BackoffMax, p.BackoffBase)
	}
	return nil
}

// exhausted reports whether attempt (1-based) was the last one allowed.
func (p RetryPolicy) exhausted(attempt int) bool {
	return p.MaxAttempts > 0 && attempt >= p.MaxAttempts
}

// wait sleeps before retry n (1-based), or until ctx is done.
func (p RetryPolicy) wait(ctx context.Context, n int) error {
	return backoff.Sleep(ctx, backoff.Jitter(n, p.BackoffBase, p.BackoffMax))
}

// RetryOption sets the RetryPolicy of the calls it is given to; see
// WithRetry. It is an Option of NewMapper and an option of the batch,
// transaction and CreateTable calls, and of nothing else: Save and Delete
// send one write and never repeat it.
type RetryOption struct {
	p RetryPolicy
}

// WithRetry sets the retry policy: given to NewMapper, of every Table's
// Update, batch calls and transactions (not of CreateTable's polling);
// given to a batch call, WriteTx, ReadTx, Transact or CreateTable, of that
// call. Zero fields of p take the mapper's values or the defaults (see
// RetryPolicy).
//
// Update takes its policy from the mapper only: the Update calls of one
// Table on one key share writes, and a per-call policy would make one
// call's limits depend on the others'. Use a second Mapper for Tables that need
// another policy; Mappers are cheap.
func WithRetry(p RetryPolicy) RetryOption { return RetryOption{p: p} }

func (o RetryOption) applyMapper(m *mapperOptions)           { m.retry, m.retrySet = o.p, true }
func (o RetryOption) applyBatchRead(b *batchReadOptions)     { b.retry, b.retrySet = o.p, true }
func (o RetryOption) applyBatchWrite(b *batchWriteOptions)   { b.retry, b.retrySet = o.p, true }
func (o RetryOption) applyTx(t *txOptions)                   { t.retry, t.retrySet = o.p, true }
func (o RetryOption) applyReadTx(t *txOptions)               { t.retry, t.retrySet = o.p, true }
func (o RetryOption) applyCreateTable(c *createTableOptions) { c.retry, c.retrySet = o.p, true }

// retryPolicy returns the policy of a kind of call: call (when set), else
// the mapper's (except for polling), else the defaults, field by field; or
// an error for a policy that is refused.
func (m *Mapper) retryPolicy(k retryKind, call RetryPolicy, callSet bool, where string) (RetryPolicy, error) {
	p := defaultRetry(k)
	if m.opts.retrySet && k != policyPoll {
		p = m.opts.retry.or(p)
	}
	if callSet {
		if err := call.check(where); err != nil {
			return p, err
		}
		p = call.or(p)
	}
	return p, nil
}
