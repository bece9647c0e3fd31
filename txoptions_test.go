package dynamo

import (
	"context"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// With a request token, members built again from the same values make the
// identical request (write tokens derived from the request token), so
// DynamoDB recognises a resent transaction. Without one, every call is new.
func TestWriteTxRequestTokenMakesIdenticalRequests(t *testing.T) {
	c := &fakeDB{noStore: true}
	books, shelves := txTables(t, c)
	build := func() []TxOp {
		return []TxOp{books.TxSave(Book{ISBN: "1", Title: "T", Version: 1}),
			books.TxSave(Book{ISBN: "2"}, WithSaveBehavior(SavePut)),
			shelves.TxSave(&Shelf{Room: "r", Number: 1})}
	}
	ctx := context.Background()
	m := books.Mapper()
	for range 2 {
		if err := m.WriteTx(ctx, build(), WithRequestToken("order-42")); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.WriteTx(ctx, build(), WithRequestToken("order-43")); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteTx(ctx, build()); err != nil {
		t.Fatal(err)
	}
	if aws.ToString(c.txWrites()[0].ClientRequestToken) != "order-42" {
		t.Errorf("token = %q", aws.ToString(c.txWrites()[0].ClientRequestToken))
	}
	if !reflect.DeepEqual(c.txWrites()[0], c.txWrites()[1]) {
		t.Error("the same token and values made different requests")
	}
	tok := func(i int) []byte {
		return c.txWrites()[i].TransactItems[0].Update.ExpressionAttributeValues[":wt"].(*types.AttributeValueMemberB).Value
	}
	putTok := func(i int) []byte {
		return c.txWrites()[i].TransactItems[1].Put.Item["ddbkit_wt"].(*types.AttributeValueMemberB).Value
	}
	if reflect.DeepEqual(tok(0), tok(2)) || reflect.DeepEqual(tok(0), tok(3)) || reflect.DeepEqual(tok(0), putTok(0)) {
		t.Error("write tokens repeat across request tokens or items")
	}
	// The same ops sent again make the same request too.
	ops := build()
	c.forget()
	for range 2 {
		if err := m.WriteTx(ctx, ops, WithRequestToken("x")); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(c.txWrites()[0], c.txWrites()[1]) {
		t.Error("the same ops and token made different requests")
	}
}
