package dynamo

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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
	_ BatchWriteOption  = WithSaveBehavior(SaveClobber)

	// The transaction names of before the one Tx vocabulary still compile.
	_ func(*Txn) error = func(*Tx) error { return nil }
	_ TxnTable[Book]   = TxTable[Book]{}
)

// A nil option in a variadic list is no option, for every call that takes
// options: nothing panics.
func TestNilOptionsAreNoOptions(t *testing.T) {
	c := &fakeDB{noStore: true}
	c.onGet = func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return &dynamodb.GetItemOutput{}, nil
	}
	for name, f := range map[string]func(){
		"Load(nil)": func() {
			_, _ = newBooks(t, c).Load(context.Background(), Book{ISBN: "1"}, nil)
		},
		"ScanPage(nil) refused before sending": func() {
			_, _, _ = newBooks(t, &fakeDB{noStore: true}).ScanPage(context.Background(), nil, Limit(-1))
		},
		"WithEncoderOptions(nil)": func() { newBooks(t, c, WithEncoderOptions(nil)) },
		"WithDecoderOptions(nil)": func() { newBooks(t, c, WithDecoderOptions(nil)) },
	} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s panicked: %v", name, p)
				}
			}()
			f()
		}()
	}
}

// Batch writes take the one clobber vocabulary: WithSaveBehavior(SaveClobber)
// lets BatchSave and BatchDelete write a versioned type, exactly as the
// deprecated Clobber() does (the last behaviour given wins, as for Save),
// and the write options a batch cannot honour are refused with
// ErrInvalidInput naming the option, before anything is sent.
func TestBatchWritesTakeSaveClobber(t *testing.T) {
	books := newBooks(t, &fakeDB{noStore: true})
	for name, opts := range map[string][]BatchWriteOption{
		"WithSaveBehavior(SaveClobber)":      {WithSaveBehavior(SaveClobber)},
		"Clobber()":                          {Clobber()},
		"SaveUpdate then SaveClobber":        {WithSaveBehavior(SaveUpdate), WithSaveBehavior(SaveClobber)},
		"SaveClobber with WithRetry and nil": {nil, WithSaveBehavior(SaveClobber), WithRetry(RetryPolicy{MaxAttempts: 3})},
	} {
		for _, op := range []string{"BatchSave", "BatchDelete"} {
			if _, err := books.checkBatchWrite(op, opts); err != nil {
				t.Errorf("%s with %s: %v", op, name, err)
			}
		}
	}
	for name, opts := range map[string][]BatchWriteOption{
		"SaveClobber":                     nil, // the fix the message names
		"If":                              {WithSaveBehavior(SaveClobber), If(expression.Name("title").AttributeExists())},
		"MustExist":                       {MustExist(), WithSaveBehavior(SaveClobber)},
		"GuardedBy":                       {WithSaveBehavior(SaveClobber), GuardedBy(books.TxCheck(Book{ISBN: "1"}))},
		"WithSaveBehavior(SavePut)":       {WithSaveBehavior(SavePut)},
		"WithSaveBehavior(SaveAppendSet)": {WithSaveBehavior(SaveClobber), WithSaveBehavior(SaveAppendSet)},
	} {
		_, err := books.checkBatchWrite("BatchSave", opts)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), name) {
			t.Errorf("BatchSave with %s: err = %v, want ErrInvalidInput naming %s", name, err, name)
		}
	}
}
