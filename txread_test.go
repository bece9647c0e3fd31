package dynamo

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestReadTx(t *testing.T) {
	c := &fakeDB{noStore: true, onTxGet: func(_ int, in *dynamodb.TransactGetItemsInput) (*dynamodb.TransactGetItemsOutput, error) {
		return &dynamodb.TransactGetItemsOutput{Responses: []types.ItemResponse{
			{Item: map[string]types.AttributeValue{"ISBN": str("1"), "title": str("T"), "version": n("3")}},
			{},
			{Item: map[string]types.AttributeValue{"room": str("r"), "n": n("2"), "label": str("L"), "v": n("1")}},
		}}, nil
	}}
	books, shelves := txTables(t, c)
	key := Book{ISBN: "1", Title: "ignored"}
	g1, g2, g3 := books.TxGet(key), books.TxGet(Book{ISBN: "2"}), shelves.TxGet(&Shelf{Room: "r", Number: 2})
	if err := books.Mapper().ReadTx(context.Background(), []TxGetOp{g1, g2, g3}); err != nil {
		t.Fatal(err)
	}
	in := c.txGets()[0]
	if len(in.TransactItems) != 3 || aws.ToString(in.TransactItems[2].Get.TableName) != "Shelves" ||
		!reflect.DeepEqual(in.TransactItems[0].Get.Key, map[string]types.AttributeValue{"ISBN": str("1")}) {
		t.Fatalf("request = %+v", in.TransactItems)
	}
	if b, ok := g1.Item(); !ok || b.Title != "T" || b.Version != 3 || key.Title != "ignored" {
		t.Errorf("g1 = %+v %v", b, ok)
	}
	if b, ok := g2.Item(); ok || !reflect.DeepEqual(b, Book{}) {
		t.Errorf("missing item = %+v %v", b, ok)
	}
	if s, ok := g3.Item(); !ok || s.Label != "L" || *s.Version != 1 {
		t.Errorf("g3 = %+v %v", s, ok)
	}
}

func TestReadTxRetriesAndRefusals(t *testing.T) {
	c := &fakeDB{noStore: true, onTxGet: func(n int, in *dynamodb.TransactGetItemsInput) (*dynamodb.TransactGetItemsOutput, error) {
		if n == 1 {
			return nil, txCanceled(txReason("TransactionConflict", nil))
		}
		return &dynamodb.TransactGetItemsOutput{Responses: []types.ItemResponse{{Item: map[string]types.AttributeValue{"ISBN": str("1")}}}}, nil
	}}
	books, _ := txTables(t, c)
	m := books.Mapper()
	ctx := context.Background()
	g := books.TxGet(Book{ISBN: "1"})
	if err := m.ReadTx(ctx, []TxGetOp{g}, WithRetry(RetryPolicy{BackoffBase: time.Microsecond, BackoffMax: time.Microsecond})); err != nil {
		t.Fatal(err)
	}
	if _, ok := g.Item(); !ok || len(c.txGets()) != 2 {
		t.Errorf("found %v after %d reads", ok, len(c.txGets()))
	}
	c.forget()
	many := make([]TxGetOp, MaxTxItems+1)
	for i := range many {
		many[i] = books.TxGet(Book{ISBN: strings.Repeat("x", i+1)})
	}
	for _, tc := range []struct {
		gets []TxGetOp
		msg  string
	}{
		{nil, "ReadTx with no members"},
		{many, "ReadTx with 101 members"},
		{[]TxGetOp{books.TxGet(Book{ISBN: "1"}), books.TxGet(Book{ISBN: "1"})}, `members 0 and 1 both read table "Books" key {ISBN: "1"}`},
		{[]TxGetOp{books.TxGet(Book{})}, "member 0: dynamo: invalid input: table \"Books\": hash key ISBN"},
		{[]TxGetOp{nil}, "member 0 is nil"},
	} {
		if err := m.ReadTx(ctx, tc.gets); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("err = %v, want ErrInvalidInput mentioning %q", err, tc.msg)
		}
	}
	if len(c.txGets()) != 0 {
		t.Errorf("%d requests sent for bad input", len(c.txGets()))
	}
}
