package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

type sized struct {
	ID  string    `dynamo:"id,hash"`
	V   int64     `dynamo:"v,version"`
	Pad string    `dynamo:"pad"`
	X   any       `dynamo:"x,omitempty"`
	NS  []float64 `dynamo:"ns,set,omitempty"`
	SS  []string  `dynamo:"ss,set,omitempty"`
	BS  [][]byte  `dynamo:"bs,omitempty"`
	Nul *string   `dynamo:"nul"` // NULL: stored by PutItem, removed by UpdateItem
}

// TestItemSizeBoundary checks the 400 KB check byte for byte against the
// server (issue 12 item 6): for each kind of value, the largest item the
// check lets through is stored, and the same item one byte larger, which
// the check refuses, is refused by DynamoDB too when sent directly.
func TestItemSizeBoundary(t *testing.T) {
	c := dynamotest.Client(t)
	ctx := context.Background()
	name := dynamotest.CreateTable(t, c, &dynamodb.CreateTableInput{
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
	})
	tb, err := dynamo.NewTable[sized](dynamo.NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]sized{
		"S":              {X: "héllo wörld"},
		"N int":          {X: -12345},
		"N float":        {X: 0.000125},
		"N big":          {X: uint64(18446744073709551615)},
		"N pow":          {X: 1e20},
		"nested M and L": {X: map[string]any{"a": []any{1.5, "b", map[string]any{"c": -0.5, "dd": []any{}}}, "e": true, "f": nil, "g": map[string]any{}}},
		"sets":           {NS: []float64{1, 22, 333, -4.5, 1e-7}, SS: []string{"a", "bb", ""}, BS: [][]byte{{1, 2, 3}, {}}},
	}
	n := 0
	for label, it := range cases {
		for _, b := range []dynamo.SaveBehavior{dynamo.SaveUpdate, dynamo.SavePut} {
			t.Run(fmt.Sprintf("%s/%v", label, b), func(t *testing.T) {
				n++
				save := func(pad int) error {
					it := it
					it.ID = fmt.Sprintf("k%02d-%07d", n, pad) // fixed width: the key's size does not vary
					it.Pad = strings.Repeat("p", pad)
					_, err := tb.Save(ctx, it, dynamo.WithSaveBehavior(b))
					return err
				}
				// The largest pad the check lets through.
				lo, hi := 0, 400*1024
				for lo < hi {
					mid := (lo + hi + 1) / 2
					err := save(mid)
					switch {
					case err == nil:
						lo = mid
					case errors.Is(err, dynamo.ErrInvalidInput):
						hi = mid - 1
					default:
						t.Fatalf("pad %d: the check let through an item the server refused: %v", mid, err)
					}
				}
				if err := save(lo + 1); !errors.Is(err, dynamo.ErrInvalidInput) {
					t.Fatalf("pad %d: %v, want ErrInvalidInput", lo+1, err)
				}
				// The stored item, one byte larger, is refused by the server:
				// the check is not stricter than DynamoDB.
				key := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: fmt.Sprintf("k%02d-%07d", n, lo)}}
				got, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: &name, Key: key, ConsistentRead: aws.Bool(true)})
				if err != nil || got.Item == nil {
					t.Fatalf("reading the stored item: %v (found: %v)", err, got != nil && got.Item != nil)
				}
				item := got.Item
				item["pad"] = &types.AttributeValueMemberS{Value: strings.Repeat("p", lo+1)}
				_, err = c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: item})
				if err == nil || !strings.Contains(err.Error(), "size") {
					t.Fatalf("the item one byte larger than the check allows: server said %v, want a size error (the check is too strict)", err)
				}
			})
		}
	}
}

// SaveClobber writes the version with ADD (stored + 1), which may have more
// digits than held + 1 (another writer's item clobbered by an older copy):
// an item at the 400 KB boundary is either stored or refused with
// ErrInvalidInput before sending, never refused by DynamoDB first.
func TestClobberSizeWithLargerStoredVersion(t *testing.T) {
	c := dynamotest.Client(t)
	ctx := context.Background()
	name := dynamotest.CreateTable(t, c, &dynamodb.CreateTableInput{
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
	})
	tb, err := dynamo.NewTable[sized](dynamo.NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	clobber := dynamo.WithSaveBehavior(dynamo.SaveClobber)
	save := func(id string, pad int) error {
		_, err := tb.Save(ctx, sized{ID: id, Pad: strings.Repeat("p", pad)}, clobber)
		return err
	}
	// The largest pad the check lets through (fresh keys: ADD gives 1).
	lo, hi, n := 0, 400*1024, 0
	for lo < hi {
		mid := (lo + hi + 1) / 2
		n++
		err := save(fmt.Sprintf("a%04d", n), mid)
		switch {
		case err == nil:
			lo = mid
		case errors.Is(err, dynamo.ErrInvalidInput):
			hi = mid - 1
		default:
			t.Fatalf("pad %d: %v", mid, err)
		}
	}
	// Another writer's copy of key b0000 is at version 1234567890123.
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: "b0000"}, "v": &types.AttributeValueMemberN{Value: "1234567890123"},
		"pad": &types.AttributeValueMemberS{Value: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if err := save("b0000", lo); err != nil && !errors.Is(err, dynamo.ErrInvalidInput) {
		t.Fatalf("SaveClobber of a %d-byte pad (the most the check allows) over a stored version 1234567890123: %v; want it stored or ErrInvalidInput before sending", lo, err)
	}
}
