package dynamo

// Benchmark: CPU and allocations of reading a query's results, the mapper's
// Query iterator versus hand-written SDK code (dynamodb.NewQueryPaginator +
// attributevalue.UnmarshalListOfMaps with TagKey "dynamo"), both reading the
// same canned pages from an in-process stub client. See BENCHMARKS.md,
// "Query decode throughput". TestBenchQueryMatch checks that both sides send
// the same requests and decode the same items.

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// benchEntry is a 12-attribute versioned item with a sort key, like
// benchProfile (bench_test.go) but queryable.
type benchEntry struct {
	User      string            `dynamo:"user,hash"`
	Seq       int64             `dynamo:"seq,range"`
	Version   int64             `dynamo:"version,version"`
	Name      string            `dynamo:"name"`
	Email     string            `dynamo:"email"`
	Age       int               `dynamo:"age"`
	Score     float64           `dynamo:"score"`
	Active    bool              `dynamo:"active"`
	Tags      []string          `dynamo:"tags,stringset"`
	Attrs     map[string]string `dynamo:"attrs"`
	Nickname  *string           `dynamo:"nickname"`
	CreatedAt time.Time         `dynamo:"created_at"`
}

const (
	benchQueryPages    = 3
	benchQueryPageSize = 100
	benchQueryUser     = "user#7c0f3b5e"
)

// benchQueryClient answers Query with three canned pages of 100 items each,
// marshaled once at setup; the next page is found from ExclusiveStartKey.
// It keeps the inputs only when record is set (TestBenchQueryMatch).
type benchQueryClient struct {
	Client // nil: other methods panic

	pages  []*dynamodb.QueryOutput
	next   map[string]int // seq of a page's last item → index of the next page
	record bool
	inputs []*dynamodb.QueryInput
}

func newBenchQueryClient(tb testing.TB) *benchQueryClient {
	c := &benchQueryClient{next: map[string]int{}}
	seq := int64(0)
	for p := range benchQueryPages {
		out := &dynamodb.QueryOutput{}
		for range benchQueryPageSize {
			seq++
			e := benchEntry{
				User: benchQueryUser, Seq: seq, Version: 3, Name: "Ada Lovelace " + strconv.FormatInt(seq, 10),
				Email: "ada@example.com", Age: 36, Score: 97.25, Active: seq%2 == 0,
				Tags:      []string{"admin", "beta", "eu-west-1"},
				Attrs:     map[string]string{"theme": "dark", "lang": "en-GB"},
				CreatedAt: time.Date(2024, 3, 14, 15, 9, 26, 535897000, time.UTC).Add(time.Duration(seq) * time.Second),
			}
			item, err := attributevalue.MarshalMapWithOptions(&e, benchEncOpts)
			if err != nil {
				tb.Fatal(err)
			}
			out.Items = append(out.Items, item)
		}
		if p < benchQueryPages-1 {
			last := out.Items[len(out.Items)-1]
			out.LastEvaluatedKey = map[string]types.AttributeValue{"user": last["user"], "seq": last["seq"]}
			c.next[last["seq"].(*types.AttributeValueMemberN).Value] = p + 1
		}
		c.pages = append(c.pages, out)
	}
	return c
}

func (c *benchQueryClient) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if c.record {
		c.inputs = append(c.inputs, in)
	}
	if in.ExclusiveStartKey == nil {
		return c.pages[0], nil
	}
	n, ok := in.ExclusiveStartKey["seq"].(*types.AttributeValueMemberN)
	if !ok {
		return nil, fmt.Errorf("stub: bad ExclusiveStartKey")
	}
	p, ok := c.next[n.Value]
	if !ok {
		return nil, fmt.Errorf("stub: ExclusiveStartKey seq %s starts no page", n.Value)
	}
	return c.pages[p], nil
}

// benchSink keeps the compiler from discarding decoded items.
var benchSink int

// mapperQuery reads every item of the query with the mapper and passes
// each to use.
func mapperQuery(ctx context.Context, t *Table[benchEntry], use func(benchEntry)) error {
	for e, err := range t.Query(ctx, expression.Key("user").Equal(expression.Value(benchQueryUser))) {
		if err != nil {
			return err
		}
		use(e)
	}
	return nil
}

// handQuery is what a careful user of the SDK writes for the same query:
// the key condition built per call, the SDK's paginator, and each page
// unmarshaled with the same tag key.
func handQuery(ctx context.Context, c dynamodb.QueryAPIClient, use func(benchEntry)) error {
	e, err := expression.NewBuilder().
		WithKeyCondition(expression.Key("user").Equal(expression.Value(benchQueryUser))).Build()
	if err != nil {
		return err
	}
	p := dynamodb.NewQueryPaginator(c, &dynamodb.QueryInput{
		TableName:                 aws.String(benchTable),
		KeyConditionExpression:    e.KeyCondition(),
		ExpressionAttributeNames:  e.Names(),
		ExpressionAttributeValues: e.Values(),
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		var page []benchEntry
		if err := attributevalue.UnmarshalListOfMapsWithOptions(out.Items, &page, benchDecOpts); err != nil {
			return err
		}
		for i := range page {
			use(page[i])
		}
	}
	return nil
}

func benchUse(e benchEntry) { benchSink += e.Age }

// BenchmarkQuery reads a 300-item query result (3 pages of 100) per op.
func BenchmarkQuery(b *testing.B) {
	ctx := context.Background()
	c := newBenchQueryClient(b)
	t, err := NewTable[benchEntry](NewMapper(c), benchTable)
	if err != nil {
		b.Fatal(err)
	}
	benchPair(b, func() error {
		return mapperQuery(ctx, t, benchUse)
	}, func() error {
		return handQuery(ctx, c, benchUse)
	})
}

// TestBenchQueryMatch checks that both sides of BenchmarkQuery send the same
// requests (table, key condition, start keys) and decode the same 300 items.
func TestBenchQueryMatch(t *testing.T) {
	ctx := context.Background()
	c := newBenchQueryClient(t)
	c.record = true
	tb, err := NewTable[benchEntry](NewMapper(c), benchTable)
	if err != nil {
		t.Fatal(err)
	}
	var mine, hand []benchEntry
	if err := mapperQuery(ctx, tb, func(e benchEntry) { mine = append(mine, e) }); err != nil {
		t.Fatal(err)
	}
	mineIn := c.inputs
	c.inputs = nil
	if err := handQuery(ctx, c, func(e benchEntry) { hand = append(hand, e) }); err != nil {
		t.Fatal(err)
	}
	handIn := c.inputs
	if len(mine) != benchQueryPages*benchQueryPageSize || !reflect.DeepEqual(mine, hand) {
		t.Fatalf("decoded items differ: mapper %d, hand-written %d", len(mine), len(hand))
	}
	if len(mineIn) != benchQueryPages || len(handIn) != benchQueryPages {
		t.Fatalf("requests: mapper %d, hand-written %d; want %d each", len(mineIn), len(handIn), benchQueryPages)
	}
	for i := range mineIn {
		m, h := mineIn[i], handIn[i]
		mk := resolveExpr(t, aws.ToString(m.KeyConditionExpression), m.ExpressionAttributeNames, m.ExpressionAttributeValues)
		hk := resolveExpr(t, aws.ToString(h.KeyConditionExpression), h.ExpressionAttributeNames, h.ExpressionAttributeValues)
		if mk != hk || mk != "user = S:"+benchQueryUser {
			t.Errorf("request %d key condition: mapper %q, hand-written %q", i, mk, hk)
		}
		if aws.ToString(m.TableName) != aws.ToString(h.TableName) || !reflect.DeepEqual(m.ExclusiveStartKey, h.ExclusiveStartKey) ||
			m.Limit != nil || h.Limit != nil || m.FilterExpression != nil || m.ConsistentRead != nil || m.ScanIndexForward != nil {
			t.Errorf("request %d differs: mapper %+v, hand-written %+v", i, m, h)
		}
	}
}
