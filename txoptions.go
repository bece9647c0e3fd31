package dynamo

import (
	"time"
)

// Options of write and read transactions.

// TxOption configures Mapper.WriteTx and Mapper.ReadTx.
type TxOption func(*txOptions)

type txOptions struct {
	token       string
	tokenSet    bool
	maxAttempts int
	backoffBase time.Duration
	backoffMax  time.Duration
}

// WithRequestToken makes a write transaction idempotent under token (1 to 36
// characters), DynamoDB's ClientRequestToken: for 10 minutes after it first
// succeeded, a transaction sent again with the same token and the same
// members succeeds without writing anything. The same token with different
// members is refused by DynamoDB (IdempotentParameterMismatchException);
// after 10 minutes the token is forgotten and a resent transaction is a new
// one, whose version checks then fail if it was applied.
//
// Use one token per logical transaction, e.g. derived from a job or message
// ID, and resend with it when you do not know whether an earlier WriteTx
// succeeded (a crash, a timeout). The write tokens the members store are
// derived from the request token, table and key, so members built again
// from the same values make the same request: the ops need not be kept.
//
// Without this option WriteTx uses a random token of its own, which still
// makes its own retries and the SDK's idempotent. ReadTx ignores the option.
func WithRequestToken(token string) TxOption {
	return func(o *txOptions) { o.token, o.tokenSet = token, true }
}

// WithTxMaxAttempts bounds how many times WriteTx and ReadTx send a
// transaction that DynamoDB cancelled because it conflicted with another
// transaction (TransactionConflict, TransactionInProgressException); default
// DefaultTxMaxAttempts. Values below 1 mean 1. Failed conditions are never
// retried.
func WithTxMaxAttempts(n int) TxOption {
	return func(o *txOptions) { o.maxAttempts = max(n, 1) }
}

// WithTxBackoff sets the jittered exponential backoff between those
// attempts: the n-th retry waits a random duration in [0, min(max, base·2ⁿ⁻¹)).
// Defaults: DefaultTxBackoffBase, DefaultTxBackoffMax.
func WithTxBackoff(base, max time.Duration) TxOption {
	return func(o *txOptions) { o.backoffBase, o.backoffMax = base, max }
}

func applyTxOptions(opts []TxOption) txOptions {
	o := txOptions{maxAttempts: DefaultTxMaxAttempts, backoffBase: DefaultTxBackoffBase, backoffMax: DefaultTxBackoffMax}
	for _, fn := range opts {
		fn(&o)
	}
	return o
}
