package backfill

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// benchItems is the table size of BenchmarkMigration.
const benchItems = 1000

// BenchmarkMigration migrates a table of benchItems items (add one to
// "migrated") with 8 segments, one goroutine each, three ways side by side:
// this package; a hand-written parallel scan writing each item back with a
// version-conditioned PutItem (no mark, no checkpoints, no retry on
// conflict, no capacity accounting); and the same loop with blind PutItems,
// which lose live writes. One op is one migration of the whole table.
func BenchmarkMigration(b *testing.B) {
	for _, way := range []string{"backfill", "conditional", "blind"} {
		b.Run(way, func(b *testing.B) {
			env := newEnv(b, benchItems)
			lc := env.leaseClient("bench")
			for i := 0; b.Loop(); i++ {
				switch way {
				case "backfill":
					m, err := New(env.c, env.table, "bench-"+strconv.Itoa(i), addMigrated,
						Fleet(lc, env.leases), Segments(8), PageSize(100), PollInterval(20*time.Millisecond))
					if err != nil {
						b.Fatal(err)
					}
					if err := m.Run(b.Context()); err != nil {
						b.Fatal(err)
					}
				case "conditional":
					handLoop(b, env, true)
				case "blind":
					handLoop(b, env, false)
				}
			}
			b.ReportMetric(float64(benchItems*b.N)/b.Elapsed().Seconds(), "items/s")
		})
	}
}

// handLoop is what a script does: a parallel scan of 8 segments, each item
// written back with migrated+1, under its version (conditional) or not.
func handLoop(b *testing.B, e *env, conditional bool) {
	var wg sync.WaitGroup
	for seg := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var start map[string]types.AttributeValue
			for {
				out, err := e.c.Scan(context.Background(), &dynamodb.ScanInput{TableName: &e.table,
					Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(8), Limit: aws.Int32(100), ExclusiveStartKey: start})
				if err != nil {
					b.Error(err)
					return
				}
				for _, it := range out.Items {
					v, _ := strconv.Atoi(it["version"].(*types.AttributeValueMemberN).Value)
					mig, _ := strconv.Atoi(it["migrated"].(*types.AttributeValueMemberN).Value)
					it["migrated"] = &types.AttributeValueMemberN{Value: strconv.Itoa(mig + 1)}
					it["version"] = &types.AttributeValueMemberN{Value: strconv.Itoa(v + 1)}
					in := &dynamodb.PutItemInput{TableName: &e.table, Item: it}
					if conditional {
						in.ConditionExpression = aws.String("version = :v")
						in.ExpressionAttributeValues = map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.Itoa(v)}}
					}
					if _, err := e.c.PutItem(context.Background(), in); err != nil {
						b.Error(err)
						return
					}
				}
				if start = out.LastEvaluatedKey; len(start) == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
}
