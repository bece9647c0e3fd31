package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/codec/codectest"
)

func textIDs() (a, b, c codectest.UUID) {
	for i := range 16 {
		a[i], b[i], c[i] = byte(i), byte(i+16), byte(i+32)
	}
	return
}

// putRaw stores an item as given, with PutItem: items as a text type is
// stored (S), as Java writes them.
func putRaw(t *testing.T, c *dynamodb.Client, table string, item map[string]types.AttributeValue) {
	t.Helper()
	if _, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
		t.Fatal(err)
	}
}

type textOwned struct {
	ID    string         `dynamo:"id,hash"`
	Owner codectest.UUID `dynamo:"owner"`
}

// TestTextConditionIntegration: an If condition comparing a text-typed
// attribute with expression.Value(uuid) matches the item holding the
// uuid's text: the value is sent as the attribute stores it.
func TestTextConditionIntegration(t *testing.T) {
	c := dynamotest.Client(t)
	ctx := context.Background()
	name := dynamotest.KeyTable(t, c, "", "id", types.ScalarAttributeTypeS, "", "")
	u1, u2, _ := textIDs()
	putRaw(t, c, name, map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "a"}, "owner": &types.AttributeValueMemberS{Value: u1.String()}})
	tb, err := dynamo.NewTable[textOwned](dynamo.NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	owner := func(u codectest.UUID) dynamo.WriteOption {
		return dynamo.If(expression.Name("owner").Equal(expression.Value(u)))
	}
	if err := tb.Delete(ctx, textOwned{ID: "a"}, owner(u2)); !errors.Is(err, dynamo.ErrConditionFailed) {
		t.Fatalf("Delete if owner is u2 = %v, want ErrConditionFailed", err)
	}
	if err := tb.Delete(ctx, textOwned{ID: "a"}, owner(u1)); err != nil {
		t.Fatalf("Delete if owner is u1 (stored as its text) = %v", err)
	}
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(name), Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "a"}}})
	if err != nil || out.Item != nil {
		t.Fatalf("after Delete: %v %v", out.Item, err)
	}
}

type textKeyed struct {
	ID    codectest.UUID `dynamo:"id,hash"`
	Seq   int            `dynamo:"seq,range"`
	Owner codectest.UUID `dynamo:"owner" index:"byOwner,hash"`
}

// TestTextKeyQueryIntegration: a Query with
// expression.Key("id").Equal(expression.Value(uuid)) on a table whose
// hash key is a text type reads that partition (the key is sent as the
// uuid's text), on the table and on a global index keyed by a text type;
// a Filter and an If on the text attribute match too.
func TestTextKeyQueryIntegration(t *testing.T) {
	c := dynamotest.Client(t)
	ctx := context.Background()
	name := dynamotest.CreateTable(t, c, &dynamodb.CreateTableInput{
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("seq"), AttributeType: types.ScalarAttributeTypeN},
			{AttributeName: aws.String("owner"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("seq"), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName:  aws.String("byOwner"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("owner"), KeyType: types.KeyTypeHash}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
	})
	tb, err := dynamo.NewTable[textKeyed](dynamo.NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	u1, u2, u3 := textIDs()
	s := func(u codectest.UUID) types.AttributeValue { return &types.AttributeValueMemberS{Value: u.String()} }
	n := func(i int) types.AttributeValue { return &types.AttributeValueMemberN{Value: fmt.Sprint(i)} }
	putRaw(t, c, name, map[string]types.AttributeValue{"id": s(u1), "seq": n(1), "owner": s(u2)})
	putRaw(t, c, name, map[string]types.AttributeValue{"id": s(u1), "seq": n(2), "owner": s(u3)})
	putRaw(t, c, name, map[string]types.AttributeValue{"id": s(u2), "seq": n(1), "owner": s(u2)})
	collect := func(key expression.KeyConditionBuilder, opts ...dynamo.QueryOption) []textKeyed {
		t.Helper()
		var got []textKeyed
		for it, err := range tb.Query(ctx, key, opts...) {
			if err != nil {
				t.Fatalf("Query: %v", err)
			}
			got = append(got, it)
		}
		return got
	}
	got := collect(expression.Key("id").Equal(expression.Value(u1)))
	if len(got) != 2 || got[0].ID != u1 || got[0].Owner != u2 || got[1].Seq != 2 {
		t.Errorf("Query id = u1: %v", got)
	}
	if got := collect(expression.Key("id").Equal(expression.Value(u1)), dynamo.Filter(expression.Name("owner").Equal(expression.Value(u3)))); len(got) != 1 || got[0].Seq != 2 {
		t.Errorf("Query id = u1, owner = u3: %v", got)
	}
	if got := collect(expression.Key("owner").Equal(expression.Value(u2)), dynamo.Index("byOwner")); len(got) != 2 {
		t.Errorf("Query byOwner u2: %v", got)
	}
	err = tb.Delete(ctx, textKeyed{ID: u1, Seq: 1}, dynamo.If(expression.Name("owner").Equal(expression.Value(u3))))
	if !errors.Is(err, dynamo.ErrConditionFailed) {
		t.Errorf("Delete if owner = u3 = %v, want ErrConditionFailed", err)
	}
	if err := tb.Delete(ctx, textKeyed{ID: u1, Seq: 1}, dynamo.If(expression.Name("owner").Equal(expression.Value(u2)))); err != nil {
		t.Errorf("Delete if owner = u2: %v", err)
	}
	if got := collect(expression.Key("id").Equal(expression.Value(u1))); len(got) != 1 {
		t.Errorf("after Delete: %v", got)
	}
}
