package dynamo

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestWriteTxConditionFailedAndOtherReasons(t *testing.T) {
	c := &fakeDB{noStore: true, onTxWrite: txErr(func(int, *dynamodb.TransactWriteItemsInput) error {
		return txCanceled(
			txReason("ConditionalCheckFailed", map[string]types.AttributeValue{"ISBN": str("1"), "version": n("1")}),
			types.CancellationReason{Code: aws.String("ValidationError"), Message: aws.String("Item size has exceeded the maximum allowed size")},
			txReason("ConditionalCheckFailed", nil), // a delete of an item that is gone
		)
	})}
	books, _ := txTables(t, c)
	ops := []TxOp{
		books.TxSave(Book{ISBN: "1", Version: 1}, If(expression.Name("title").AttributeExists())),
		books.TxSave(Book{ISBN: "2", Version: 1}),
		books.TxDelete(Book{ISBN: "3", Version: 2}),
	}
	err := books.Mapper().WriteTx(context.Background(), ops)
	if !errors.Is(err, ErrConditionFailed) || !errors.Is(err, ErrVersionConflict) {
		t.Fatalf("err = %v, want both sentinels", err)
	}
	for _, s := range []string{"member 0 (TxSave): dynamo: condition failed", "member 1 (TxSave): ValidationError on table \"Books\" key {ISBN: \"2\"}: Item size",
		"member 2 (TxDelete): dynamo: version conflict", "held version 2, item does not exist"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q lacks %q", err, s)
		}
	}
	if len(c.txWrites()) != 1 {
		t.Errorf("%d attempts: failed conditions must not be retried", len(c.txWrites()))
	}
	var te *TxError
	errors.As(err, &te)
	if f := te.Failure(1); f == nil || f.Code != "ValidationError" || f.Err == nil {
		t.Errorf("Failure(1) = %+v", f)
	}
	if _, err := books.Current(te.Failure(2).Err); !errors.Is(err, ErrNotFound) {
		t.Errorf("Current of a gone item: %v", err)
	}
}

func TestWriteTxIdempotentMismatchExplained(t *testing.T) {
	c := &fakeDB{noStore: true, onTxWrite: txErr(func(int, *dynamodb.TransactWriteItemsInput) error {
		return &types.IdempotentParameterMismatchException{Message: aws.String("mismatch")}
	})}
	books, _ := txTables(t, c)
	err := books.Mapper().WriteTx(context.Background(), []TxOp{books.TxSave(Book{ISBN: "1"})}, WithRequestToken("t"))
	var ipm *types.IdempotentParameterMismatchException
	if !errors.As(err, &ipm) || !strings.Contains(err.Error(), "use a new token for each transaction") {
		t.Fatalf("err = %v", err)
	}
}
