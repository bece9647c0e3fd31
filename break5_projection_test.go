package dynamo

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
)

// The decoder matches attribute names case-insensitively (as attributevalue
// does): an item written by another tool with "name" loads into an untagged
// field Name. A ProjectionExpression naming "Name" (DynamoDB names are
// case-sensitive) must not make Load drop that attribute.
func TestBreak5ProjectionKeepsCaseFoldedAttributes(t *testing.T) {
	type person struct {
		ID   string `dynamo:"id,hash"`
		Name string
	}
	ctx := context.Background()
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "b5proj", "id", types.ScalarAttributeTypeS, "", "")
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: map[string]types.AttributeValue{
		"id":   &types.AttributeValueMemberS{Value: "1"},
		"name": &types.AttributeValueMemberS{Value: "Ada"},
	}}); err != nil {
		t.Fatal(err)
	}
	// Without a projection, the decoder folds case: the item decodes.
	tb := NewTableMust[person](t, NewMapper(c))
	dec, err := tb.decode(map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "1"}, "name": &types.AttributeValueMemberS{Value: "Ada"}})
	if err != nil || dec.Name != "Ada" {
		t.Fatalf("decode without projection: %+v, %v", dec, err)
	}
	tb, err = NewTable[person](NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tb.Load(ctx, person{ID: "1"})
	if err != nil || got.Name != "Ada" {
		t.Errorf("Load: %+v, %v; want Name \"Ada\" as without a projection", got, err)
	}
}
