package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/dynamotest"
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

type txSized struct {
	ID  string `dynamo:"id,hash"`
	V   int64  `dynamo:"v,version"`
	Pad string `dynamo:"pad"`
}

// A transaction member whose write would leave the stored item over
// DynamoDB's 400 KB (attributes the type does not model count too, so only
// DynamoDB can tell) fails as Save, Update and Add do in that case: the
// error wraps ErrInvalidInput and says the item would be over 400 KB —
// through WriteTx's TxSave, Transact's Save and a guarded Save (GuardedBy) —
// and nothing is written.
func TestTxItemOverLimitAfterUpdateIsInvalidInput(t *testing.T) {
	ctx := context.Background()
	c := dynamotest.Client(t)
	tb := createdTable[txSized](t, c)
	seed := func(id string) txSized {
		t.Helper()
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tb.Name()), Item: map[string]types.AttributeValue{
			"id": str(id), "v": n("1"), "extra": str(strings.Repeat("e", 300<<10))}}); err != nil {
			t.Fatal(err)
		}
		return txSized{ID: id, V: 1, Pad: strings.Repeat("p", 200<<10)}
	}
	guard := seed("guard")
	guard.Pad = ""
	writes := map[string]func(txSized) error{
		"Save": func(it txSized) error { _, err := tb.Save(ctx, it); return err },
		"WriteTx": func(it txSized) error {
			return tb.Mapper().WriteTx(ctx, []TxOp{tb.TxSave(it)})
		},
		"Transact": func(it txSized) error {
			return tb.Mapper().Transact(ctx, func(tx *Tx) error { _, err := tb.In(tx).Save(it); return err })
		},
		"GuardedBy": func(it txSized) error {
			_, err := tb.Save(ctx, it, GuardedBy(tb.TxCheck(guard)))
			return err
		},
	}
	for name, write := range writes {
		it := seed(name)
		err := write(it)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(fmt.Sprint(err), "400 KB") {
			t.Errorf("%s of an item stored with 300 KB more: %v; want ErrInvalidInput saying the item would be over 400 KB", name, err)
		}
		got, err := tb.Load(ctx, txSized{ID: name}, ConsistentRead())
		if err != nil || got.V != 1 || got.Pad != "" {
			t.Errorf("%s: stored item changed: version %d, pad %d bytes, %v", name, got.V, len(got.Pad), err)
		}
	}
}

// Members of several tables throttled make one *ThrottlingError of no
// table (each member's Failure names its own); a cancellation with no
// throttled member holds none, and Transact returns a throttled
// cancellation without running its function again.
func TestTxThrottledMembersAcrossTables(t *testing.T) {
	throttledTx := txErr(func(int, *dynamodb.TransactWriteItemsInput) error {
		return txCanceled(txReason("ProvisionedThroughputExceeded", nil), txReason("ThrottlingError", nil))
	})
	c := &fakeDB{noStore: true, onTxWrite: throttledTx}
	books, shelves := txTables(t, c)
	ctx := context.Background()
	err := books.Mapper().WriteTx(ctx, []TxOp{books.TxSave(Book{ISBN: "1"}), shelves.TxSave(&Shelf{Room: "r", Number: 1})})
	var te *ThrottlingError
	if !errors.As(err, &te) || te.Table != "" {
		t.Fatalf("WriteTx: %v; want a *ThrottlingError of no one table", err)
	}
	var txe *TxError
	errors.As(err, &txe)
	for i, table := range []string{"Books", "Shelves"} {
		var mt *ThrottlingError
		if f := txe.Failure(i); f == nil || !errors.As(f.Err, &mt) || mt.Table != table {
			t.Errorf("Failure(%d) = %+v; want a *ThrottlingError on %s", i, f, table)
		}
	}
	c.onTxWrite = txErr(func(int, *dynamodb.TransactWriteItemsInput) error {
		return txCanceled(txReason("None", nil), txReason("ConditionalCheckFailed", nil))
	})
	if err := books.Mapper().WriteTx(ctx, []TxOp{books.TxSave(Book{ISBN: "1"}), shelves.TxSave(&Shelf{Room: "r", Number: 1})}); errors.As(err, &te) {
		t.Errorf("WriteTx cancelled by a condition: %v holds a *ThrottlingError", err)
	}
	c.onTxWrite = throttledTx
	runs := 0
	err = books.Mapper().Transact(ctx, func(tx *Tx) error {
		runs++
		if _, err := books.In(tx).Save(Book{ISBN: "1"}); err != nil {
			return err
		}
		_, err := shelves.In(tx).Save(&Shelf{Room: "r", Number: 1})
		return err
	})
	if !errors.As(err, &te) || runs != 1 {
		t.Errorf("Transact: %v after %d runs; want a *ThrottlingError after 1", err, runs)
	}
}
