package dynamo

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
)

// seenClient records the attribute names of the items DynamoDB returns.
type seenClient struct {
	*dynamodb.Client
	mu    sync.Mutex
	names map[string]bool
}

func (c *seenClient) see(items ...map[string]types.AttributeValue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, it := range items {
		for k := range it {
			c.names[k] = true
		}
	}
}

func (c *seenClient) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	out, err := c.Client.GetItem(ctx, in, opts...)
	if err == nil {
		c.see(out.Item)
	}
	return out, err
}

func (c *seenClient) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := c.Client.Query(ctx, in, opts...)
	if err == nil {
		c.see(out.Items...)
	}
	return out, err
}

func (c *seenClient) Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	out, err := c.Client.Scan(ctx, in, opts...)
	if err == nil {
		c.see(out.Items...)
	}
	return out, err
}

func (c *seenClient) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	out, err := c.Client.BatchGetItem(ctx, in, opts...)
	if err == nil {
		for _, items := range out.Responses {
			c.see(items...)
		}
	}
	return out, err
}

func (c *seenClient) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	out, err := c.Client.TransactGetItems(ctx, in, opts...)
	if err == nil {
		for _, r := range out.Responses {
			c.see(r.Item)
		}
	}
	return out, err
}

// profileSummary models two attributes of an item that has more (a big
// "body" among them).
type profileSummary struct {
	ID      string `dynamo:"id,hash"`
	Name    string `dynamo:"name"`
	Version int64  `dynamo:"v,version"`
}

// A narrow type reads only the attributes it models (Load, Query, Scan,
// BatchLoad, TxGet), and its SaveUpdate keeps the others — while the
// version is still checked.
func TestNarrowTypeIsAProjection(t *testing.T) {
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "proj", "id", types.ScalarAttributeTypeS, "", "")
	ctx := t.Context()
	_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: "p1"}, "name": &types.AttributeValueMemberS{Value: "Ada"},
		"v": &types.AttributeValueMemberN{Value: "1"}, "body": &types.AttributeValueMemberS{Value: strings.Repeat("x", 100_000)},
		"other.attr": &types.AttributeValueMemberN{Value: "7"}}})
	if err != nil {
		t.Fatal(err)
	}
	sc := &seenClient{Client: c, names: map[string]bool{}}
	tb, err := NewTable[profileSummary](NewMapper(sc), name)
	if err != nil {
		t.Fatal(err)
	}
	key := profileSummary{ID: "p1"}
	got, err := tb.Load(ctx, key, ConsistentRead())
	if err != nil || got.Name != "Ada" || got.Version != 1 {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	for _, err := range tb.Query(ctx, expression.Key("id").Equal(expression.Value("p1"))) {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, err := range tb.Scan(ctx) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tb.BatchLoad(ctx, []profileSummary{key}); err != nil {
		t.Fatal(err)
	}
	g := tb.TxGet(key)
	if err := tb.Mapper().ReadTx(ctx, []TxGetOp{g}); err != nil {
		t.Fatal(err)
	}
	if names := slicesSorted(sc.names); !slices.Equal(names, []string{"id", "name", "v"}) {
		t.Errorf("reads returned attributes %v, want only the modeled id, name, v", names)
	}
	got.Name = "Ada L."
	if _, err := tb.Save(ctx, got); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Save(ctx, got); err == nil { // stale: holds 1, stored 2
		t.Error("a stale summary saved without a conflict")
	}
	raw, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(name), Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "p1"}}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := raw.Item["body"].(*types.AttributeValueMemberS); !ok || len(b.Value) != 100_000 || raw.Item["other.attr"] == nil {
		t.Errorf("the save of the summary lost the attributes it does not model: %v", slicesSorted(mapKeys(raw.Item)))
	}
}

func mapKeys(m map[string]types.AttributeValue) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

func slicesSorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
