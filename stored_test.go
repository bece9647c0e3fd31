package dynamo

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/dynamotest"
)

func TestDecodeStoredItemAsLoadDoes(t *testing.T) {
	m := NewMapper(dynamotest.NewClient("http://127.0.0.1:1"))
	orders, err := NewTable[shopOrder](m, "Shop")
	if err != nil {
		t.Fatal(err)
	}
	item := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "C#1"}, "sk": &types.AttributeValueMemberS{Value: "O#1"},
		"kind": &types.AttributeValueMemberS{Value: "order"}, "status": &types.AttributeValueMemberS{Value: "paid"},
		"total": &types.AttributeValueMemberN{Value: "12"}, "v": &types.AttributeValueMemberN{Value: "3"},
	}
	o, err := orders.Decode(item)
	if err != nil || o.Total != 12 || o.Status != "paid" || o.Version != 3 {
		t.Fatalf("Decode = %+v, %v", o, err)
	}
	item["kind"] = &types.AttributeValueMemberS{Value: "customer"}
	if _, err := orders.Decode(item); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another entity's item: %v, want ErrNotFound", err)
	}
	item["kind"] = &types.AttributeValueMemberS{Value: "order"}
	item["total"] = &types.AttributeValueMemberS{Value: "twelve"}
	if _, err := orders.Decode(item); err == nil || !strings.Contains(err.Error(), "total") || !strings.Contains(err.Error(), "O#1") {
		t.Fatalf("undecodable item: %v, want the attribute and key named", err)
	}
	a := orders.Attributes()
	if a != (Attributes{Hash: "pk", Range: "sk", Version: "v", Entity: "kind", EntityName: "order"}) {
		t.Fatalf("Attributes = %+v", a)
	}
}
