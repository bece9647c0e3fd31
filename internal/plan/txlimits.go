package plan

import (
	"fmt"
	"slices"

	"github.com/ddbkit/dynamo/internal/errs"
)

// MaxTxItems is DynamoDB's limit of members in one transaction.
const MaxTxItems = 100

// MaxTxSize is DynamoDB's limit on a transaction's total size, in bytes.
const MaxTxSize = 4 << 20

// TxLimits refuses a transaction of n members of about size bytes in all,
// over DynamoDB's limits, for WriteTx, Transact and the guarded writes of
// GuardedBy. The last checks members are GuardedBy checks (named names,
// when given) added to the call's own, which are noun ("ops"): a refusal
// for their number says the checks took room, and how to split the rest.
func TxLimits(call, noun string, n, size, checks int, names []string) error {
	if checks > 0 && n > MaxTxItems {
		which := fmt.Sprintf("member %d", n)
		if checks > 1 {
			which = fmt.Sprintf("members %d-%d", n-checks+1, n)
		}
		for _, name := range slices.Backward(names) {
			which = name + ", " + which
		}
		word, fix := "check", fmt.Sprintf("pass at most %d checks", MaxTxItems-1)
		if checks > 1 {
			word = "checks"
		}
		if room := MaxTxItems - checks; room > 0 {
			fix = fmt.Sprintf("split the work into transactions of at most %d %s each (each is atomic on its own)", room, noun)
		}
		return fmt.Errorf("%w: %s with %d members, over DynamoDB's %d in one transaction: %d %s and %d GuardedBy %s (%s), which count as members: %s",
			errs.ErrInvalidInput, call, n, MaxTxItems, n-checks, noun, checks, word, which, fix)
	}
	if err := TxCount(call, n); err != nil {
		return err
	}
	if size > MaxTxSize {
		return fmt.Errorf("%w: %s: its %d members are about %d bytes in all, over DynamoDB's 4 MB limit for a transaction: split it",
			errs.ErrInvalidInput, call, n, size)
	}
	return nil
}

// TxCount refuses a transaction of n members: none, or over DynamoDB's limit.
func TxCount(call string, n int) error {
	if n == 0 {
		return fmt.Errorf("%w: %s with no members", errs.ErrInvalidInput, call)
	}
	if n > MaxTxItems {
		return fmt.Errorf("%w: %s with %d members: DynamoDB takes at most %d in one transaction; split it (each part is atomic on its own)",
			errs.ErrInvalidInput, call, n, MaxTxItems)
	}
	return nil
}
