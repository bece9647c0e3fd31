package dynamo

import (
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// Every option keeps compiling where it compiled before options became
// interface values: a ReadOption is a QueryOption and a BatchReadOption,
// WithRetry is an option of NewMapper, batches, transactions and table
// creation, and nil is an option of every type.
var (
	_ QueryOption       = ReadOption(nil)
	_ BatchReadOption   = ReadOption(nil)
	_ QueryOption       = ConsistentRead()
	_ BatchReadOption   = ConsistentRead()
	_                   = []WriteOption{If(expression.Name("a").AttributeExists()), WithSaveBehavior(SavePut), nil}
	_ Option            = WithRetry(RetryPolicy{})
	_ BatchReadOption   = WithRetry(RetryPolicy{})
	_ BatchWriteOption  = WithRetry(RetryPolicy{})
	_ TxOption          = WithRetry(RetryPolicy{})
	_ ReadTxOption      = WithRetry(RetryPolicy{})
	_ CreateTableOption = WithRetry(RetryPolicy{})
	_                   = []TxOption{WithRequestToken("t"), WithRetry(RetryPolicy{}), nil}
	_                   = []CreateTableOption{IfNotExists(), WithStream("NEW_IMAGE"), nil}
	_                   = []BatchWriteOption{Clobber(), nil}

	// The transaction names of before the one Tx vocabulary still compile.
	_ func(*Txn) error = func(*Tx) error { return nil }
	_ TxnTable[Book]   = TxTable[Book]{}
)
