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
// characters, DynamoDB's ClientRequestToken): for 10 minutes after it first
// succeeded, the same members sent again with it succeed without writing;
// other members are refused by DynamoDB. Use one token per logical
// transaction (a job or message id) and resend with it when unsure whether a
// WriteTx succeeded; the members' write tokens derive from it, so the ops can
// be built again. Without it WriteTx uses a random token of its own.
// Details: docs/calls.md#withrequesttoken.
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
