package dynamo

// Options of write and read transactions.

// TxOption configures Mapper.WriteTx and Transact: WithRequestToken,
// WithRetry and GuardedBy.
type TxOption interface {
	applyTx(*txOptions)
}

// ReadTxOption configures Mapper.ReadTx: WithRetry.
type ReadTxOption interface {
	applyReadTx(*txOptions)
}

type txOptionFunc func(*txOptions)

func (f txOptionFunc) applyTx(o *txOptions) { f(o) }

type txOptions struct {
	token    string
	tokenSet bool
	retry    RetryPolicy // when retrySet; then the effective policy (applyTxOptions)
	retrySet bool
	guards   []TxOp // GuardedBy: checks added to every transaction sent
	// guardNames are the names given to the checks of guards (Named), for
	// the refusals that count them.
	guardNames []string
	// tel is the telemetry of the WriteTx or Transact call, which learns
	// the tables its transactions write (noteTables); nil elsewhere.
	tel   *call
	known []txKnownItem // TxKnown: items Transact's first run knows
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
// makes its own retries and the SDK's idempotent.
func WithRequestToken(token string) TxOption {
	return txOptionFunc(func(o *txOptions) { o.token, o.tokenSet = token, true })
}

// applyTxOptions returns WriteTx's options, with o.retry the policy to
// follow: how many times a transaction that DynamoDB cancelled because it
// conflicted with another one (TransactionConflict,
// TransactionInProgressException) is sent in all, and the waits between.
// Failed conditions are never retried.
func (m *Mapper) applyTxOptions(call string, kind retryKind, opts []TxOption) (txOptions, error) {
	var o txOptions
	applyOptions(&o, opts, TxOption.applyTx)
	var err error
	o.retry, err = m.retryPolicy(kind, o.retry, o.retrySet, call+" option WithRetry")
	return o, err
}

// applyReadTxOptions is applyTxOptions for ReadTx.
func (m *Mapper) applyReadTxOptions(opts []ReadTxOption) (txOptions, error) {
	var o txOptions
	applyOptions(&o, opts, ReadTxOption.applyReadTx)
	var err error
	o.retry, err = m.retryPolicy(policyTx, o.retry, o.retrySet, "ReadTx option WithRetry")
	return o, err
}
