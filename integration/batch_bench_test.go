package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// batchProfile is a realistic 12-attribute item (as in the root package's
// CPU benchmarks).
type batchProfile struct {
	ID        string            `dynamo:"id,hash"`
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
	Visits    int64             `dynamo:"visits"`
}

const (
	batchBenchItems = 1000 // stored
	batchBenchKeys  = 250  // loaded per op
)

var batchDecOpts = func(o *attributevalue.DecoderOptions) { o.TagKey = "dynamo" }

// BenchmarkBatchLoadLocal: a BatchLoad of 250 keys (3 requests) out of 1000
// stored items, the mapper versus the hand-written SDK loop (rawBatchLoad),
// paired: each iteration runs both on the same keys. It reports each side's
// time per load (mapper-ns/op, sdk-ns/op) and their ratio (mapper/sdk).
func BenchmarkBatchLoadLocal(b *testing.B) {
	client := dynamotest.Client(b)
	name := dynamotest.KeyTable(b, client, "bench-batch", "id", types.ScalarAttributeTypeS, "", "")
	table, err := dynamo.NewTable[batchProfile](dynamo.NewMapper(client), name)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	items := make([]batchProfile, batchBenchItems)
	ids := make([]string, batchBenchItems)
	for i := range items {
		ids[i] = fmt.Sprintf("user#%04d", i)
		items[i] = batchProfile{ID: ids[i], Name: "Ada Lovelace", Email: "ada@example.com", Age: 36, Score: 97.25, Active: true,
			Tags: []string{"admin", "beta", "eu-west-1"}, Attrs: map[string]string{"theme": "dark", "lang": "en-GB"},
			CreatedAt: time.Date(2024, 3, 14, 15, 9, 26, 0, time.UTC), Visits: 1842}
	}
	if err := table.BatchSave(ctx, items, dynamo.WithSaveBehavior(dynamo.SaveClobber)); err != nil {
		b.Fatal(err)
	}
	// keySet(n) is the n-th op's 250 ids, a random subset (same for both sides).
	keySet := func(n int) []string {
		r := rand.New(rand.NewPCG(uint64(n), 7))
		out := make([]string, batchBenchKeys)
		for i, j := range r.Perm(batchBenchItems)[:batchBenchKeys] {
			out[i] = ids[j]
		}
		return out
	}
	sets := make([][]string, 64)
	keys := make([][]batchProfile, len(sets))
	for n := range sets {
		sets[n] = keySet(n)
		keys[n] = make([]batchProfile, batchBenchKeys)
		for i, id := range sets[n] {
			keys[n][i] = batchProfile{ID: id}
		}
	}
	// Warm DynamoDB Local (a JVM) up before measuring: its first few hundred
	// requests are several times slower.
	for n := range 2 * len(sets) {
		if _, err := table.BatchLoad(ctx, keys[n%len(sets)]); err != nil {
			b.Fatal(err)
		}
		if _, err := rawBatchLoad(ctx, client, name, sets[n%len(sets)]); err != nil {
			b.Fatal(err)
		}
	}
	mapper := func(n int) (int, error) {
		got, err := table.BatchLoad(ctx, keys[n])
		return len(got), err
	}
	sdk := func(n int) (int, error) {
		got, err := rawBatchLoad(ctx, client, name, sets[n])
		return len(got), err
	}
	// Each iteration runs both sides on the same keys, alternating which goes
	// first, and times each. DynamoDB Local's pauses (a JVM) and the shared
	// machine make single times jumpy, so the figures reported are medians
	// over iterations: each side's time per load, and the per-iteration
	// ratio mapper/sdk.
	var times [2][]float64
	var ratios []float64
	n := 0
	for b.Loop() {
		var spent [2]time.Duration
		for k := range 2 {
			side, f := (n+k)%2, mapper
			if side == 1 {
				f = sdk
			}
			start := time.Now()
			got, err := f(n % len(sets))
			spent[side] = time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
			if got != batchBenchKeys {
				b.Fatalf("side %d loaded %d items, want %d", side, got, batchBenchKeys)
			}
		}
		times[0] = append(times[0], float64(spent[0]))
		times[1] = append(times[1], float64(spent[1]))
		ratios = append(ratios, float64(spent[0])/float64(spent[1]))
		n++
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(batchMedian(times[0]), "mapper-ns/load")
	b.ReportMetric(batchMedian(times[1]), "sdk-ns/load")
	b.ReportMetric(batchMedian(ratios), "mapper/sdk")
}

func batchMedian(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// rawBatchLoad is what a careful user writes by hand: BatchGetItem per 100
// keys, resending UnprocessedKeys after a jittered exponential backoff,
// unmarshaling each item with the dynamo tag key. Results come in
// DynamoDB's order, not the keys'.
func rawBatchLoad(ctx context.Context, c *dynamodb.Client, table string, ids []string) ([]batchProfile, error) {
	out := make([]batchProfile, 0, len(ids))
	for start := 0; start < len(ids); start += 100 {
		end := min(start+100, len(ids))
		keys := make([]map[string]types.AttributeValue, 0, end-start)
		for _, id := range ids[start:end] {
			keys = append(keys, map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id}})
		}
		req := map[string]types.KeysAndAttributes{table: {Keys: keys}}
		for attempt := 0; len(req) > 0; attempt++ {
			if attempt > 0 {
				d := min(100*time.Millisecond, 2*time.Millisecond<<attempt)
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(rand.N(d)):
				}
			}
			res, err := c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return nil, err
			}
			for _, item := range res.Responses[table] {
				var p batchProfile
				if err := attributevalue.UnmarshalMapWithOptions(item, &p, batchDecOpts); err != nil {
					return nil, err
				}
				out = append(out, p)
			}
			req = res.UnprocessedKeys
		}
	}
	return out, nil
}
