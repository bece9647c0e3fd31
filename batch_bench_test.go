package dynamo

// CPU and allocations of a 250-key BatchLoad, the mapper versus hand-written
// SDK code, against an in-process stub (no network). See BENCHMARKS.md,
// "Batch load".

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

const benchBatchKeys = 250

// benchBatchClient answers BatchGetItem from items marshaled once, by id.
type benchBatchClient struct {
	Client
	items map[string]map[string]types.AttributeValue
}

func newBenchBatchClient(tb testing.TB) (*benchBatchClient, []string) {
	c := &benchBatchClient{items: map[string]map[string]types.AttributeValue{}}
	ids := make([]string, benchBatchKeys)
	for i := range ids {
		p := benchItem()
		p.ID = fmt.Sprintf("user#%04d", i)
		ids[i] = p.ID
		av, err := attributevalue.MarshalMapWithOptions(&p, benchEncOpts)
		if err != nil {
			tb.Fatal(err)
		}
		c.items[p.ID] = av
	}
	return c, ids
}

func (c *benchBatchClient) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	keys := in.RequestItems[benchTable].Keys
	resp := make([]map[string]types.AttributeValue, 0, len(keys))
	for _, k := range keys {
		if it, ok := c.items[k["id"].(*types.AttributeValueMemberS).Value]; ok {
			resp = append(resp, it)
		}
	}
	return &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{benchTable: resp}}, nil
}

// handBatchLoad is what a careful user writes: BatchGetItem per 100 keys,
// resending UnprocessedKeys, unmarshaling each item with the same tag key.
// Results come in DynamoDB's order, not the keys'.
func handBatchLoad(ctx context.Context, c Client, table string, ids []string) ([]benchProfile, error) {
	out := make([]benchProfile, 0, len(ids))
	for start := 0; start < len(ids); start += 100 {
		end := min(start+100, len(ids))
		keys := make([]map[string]types.AttributeValue, 0, end-start)
		for _, id := range ids[start:end] {
			keys = append(keys, map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id}})
		}
		req := map[string]types.KeysAndAttributes{table: {Keys: keys}}
		for attempt := 1; len(req) > 0; attempt++ {
			if attempt > 1 {
				if err := defaultRetry(policyBatch).wait(ctx, attempt-1); err != nil {
					return nil, err
				}
			}
			res, err := c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return nil, err
			}
			for _, item := range res.Responses[table] {
				var p benchProfile
				if err := attributevalue.UnmarshalMapWithOptions(item, &p, benchDecOpts); err != nil {
					return nil, err
				}
				out = append(out, p)
			}
			req = res.UnprocessedKeys
		}
	}
	return out, nil
}

func BenchmarkBatchLoad(b *testing.B) {
	ctx := context.Background()
	c, ids := newBenchBatchClient(b)
	t := newBenchTable(b, c)
	keys := make([]benchProfile, len(ids))
	for i, id := range ids {
		keys[i] = benchProfile{ID: id}
	}
	benchPair(b, func() error {
		got, err := t.BatchLoad(ctx, keys)
		if err == nil && len(got) != benchBatchKeys {
			err = fmt.Errorf("mapper loaded %d", len(got))
		}
		return err
	}, func() error {
		got, err := handBatchLoad(ctx, c, benchTable, ids)
		if err == nil && len(got) != benchBatchKeys {
			err = fmt.Errorf("hand-written code loaded %d", len(got))
		}
		return err
	})
}

// TestBenchBatchLoadSame checks that both sides load the same items.
func TestBenchBatchLoadSame(t *testing.T) {
	ctx := context.Background()
	c, ids := newBenchBatchClient(t)
	keys := make([]benchProfile, len(ids))
	for i, id := range ids {
		keys[i] = benchProfile{ID: id}
	}
	mine, err := newBenchTable(t, c).BatchLoad(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	hand, err := handBatchLoad(ctx, c, benchTable, ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(mine) != benchBatchKeys || !reflect.DeepEqual(mine, hand) {
		t.Errorf("mapper loaded %d items, hand-written %d; equal: %v", len(mine), len(hand), reflect.DeepEqual(mine, hand))
	}
}
