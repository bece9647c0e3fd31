package backfill

import (
	"context"
	crand "crypto/rand"
	"flag"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
)

// benchSizes are the table sizes of BenchmarkMigration, comma-separated:
// a small table shows the fixed costs of a run (joining the lease group,
// learning the end), a bigger one the rate per item.
var benchSizes = flag.String("backfill.items", "1000,5000", "table sizes of BenchmarkMigration, comma-separated")

// benchLatency is added to every request of BenchmarkMigration, of every
// way alike, as a network to an AWS region would (about 5 ms a request
// there; DynamoDB Local answers in well under a millisecond, so at 0 the
// figures measure the client and the server sharing the machine's CPUs).
var benchLatency = flag.Duration("backfill.latency", 0, "latency added to every request of BenchmarkMigration, e.g. 5ms (AWS-like); 0 adds none")

// delayingTransport sleeps delay before sending each request: a
// benchmark's model of a network's latency (integration's BenchmarkHotKey
// adds its lat=5ms the same way, to the client's HTTPClient).
type delayingTransport struct {
	next  http.RoundTripper
	delay time.Duration
}

func (d delayingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if d.delay > 0 {
		time.Sleep(d.delay) // a benchmark's model of latency, not synchronisation
	}
	return d.next.RoundTrip(req)
}

// benchSegments is the number of segments, and of concurrent writers, of
// every way BenchmarkMigration runs.
const benchSegments = 8

// BenchmarkMigration migrates a table (add one to "migrated") five ways
// side by side, each with benchSegments segments and as many concurrent
// writes (one goroutine per segment writing one item at a time): this
// package (which also reads each segment's next page while it writes),
// without and with a write budget (never reached, but then every write
// asks DynamoDB for its consumed capacity);
// a hand-written parallel scan writing each item back with a
// version-conditioned PutItem (no mark, no checkpoints, no retry on
// conflict, no capacity accounting); the same loop with blind PutItems,
// which lose live writes; and the same loop writing with a
// version-conditioned UpdateItem of the changed attribute and the version
// — the request the migration must send to keep the attributes T does not
// model, without the rest. Every op runs all four on the same table, in an
// order rotated from op to op, so that the machine's load falls on all of
// them alike; the metrics are each way's items per second over all ops,
// the mean number of its writes in flight (writesInFlight: below
// benchSegments, writers waiting on something else than their write), and
// the migration's rate over each loop's. -backfill.latency adds a latency
// to every request of every way (inside writesInFlight, which counts it as
// in flight, as a write waiting on the network is).
func BenchmarkMigration(b *testing.B) {
	for _, f := range strings.Split(*benchSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("-backfill.items %q: give table sizes such as 1000,5000", *benchSizes)
		}
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) { benchMigration(b, n) })
	}
}

func benchMigration(b *testing.B, n int) {
	env := newEnv(b, n)
	inFlight := newWritesInFlight()
	inFlight.base = delayingTransport{next: inFlight.base, delay: *benchLatency}
	env.c = dynamotest.ClientWith(b, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: inFlight} })
	lc := env.leaseClient("bench")
	ways := []string{"backfill", "conditional", "blind", "update", "backfill-budget"}
	spent := map[string]time.Duration{}
	busy := map[string]time.Duration{} // writes in flight
	for i := 0; b.Loop(); i++ {
		for k := range ways {
			way := ways[(k+i)%len(ways)]
			start, busyBefore := time.Now(), inFlight.nano.Load()
			switch way {
			case "backfill", "backfill-budget":
				opts := []Option{Fleet(lc, env.leases), Segments(benchSegments), PageSize(100), PollInterval(20 * time.Millisecond)}
				if way == "backfill-budget" {
					// A write budget never reached: every write asks for
					// its consumed capacity (without one, one in 16 does).
					opts = append(opts, Capacity(0, 1e9))
				}
				m, err := New(env.c, env.table, way+"-"+strconv.Itoa(i), addMigrated, opts...)
				if err != nil {
					b.Fatal(err)
				}
				if err := m.Run(b.Context()); err != nil {
					b.Fatal(err)
				}
			case "conditional":
				handLoop(b, env.c, env.table, putConditional)
			case "blind":
				handLoop(b, env.c, env.table, putBlind)
			case "update":
				handLoop(b, env.c, env.table, updateConditional)
			}
			spent[way] += time.Since(start)
			busy[way] += time.Duration(inFlight.nano.Load() - busyBefore)
		}
	}
	rate := func(way string) float64 { return float64(n*b.N) / spent[way].Seconds() }
	b.ReportMetric(0, "ns/op")
	for _, way := range ways {
		b.ReportMetric(rate(way), way+"-items/s")
		b.ReportMetric(busy[way].Seconds()/spent[way].Seconds(), way+"-writes-in-flight")
	}
	b.ReportMetric(rate("backfill")/rate("conditional"), "x-conditional")
	b.ReportMetric(rate("backfill")/rate("blind"), "x-blind")
	b.ReportMetric(rate("backfill")/rate("update"), "x-update")
	b.ReportMetric(rate("backfill-budget")/rate("update"), "budget-x-update")
}

// How handLoop writes an item back.
const (
	putConditional    = iota // PutItem of the item, under its version
	putBlind                 // PutItem of the item
	updateConditional        // UpdateItem of migrated and the version, under the version
	// updateLikeMigration is an UpdateItem with what the migration's carries
	// besides: every attribute, a write token, the mark and its condition,
	// ALL_OLD on a failed condition, the capacity consumed.
	updateLikeMigration
)

// handLoop is what a script does: a parallel scan of benchSegments
// segments of the table through c, each item written back with migrated+1
// and its version+1, the way write says.
func handLoop(b testing.TB, c *dynamodb.Client, table string, write int) {
	// updateLikeMigration's mark: another migration's each pass.
	mark := &types.AttributeValueMemberS{Value: "bench-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	var wg sync.WaitGroup
	for seg := range benchSegments {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var start map[string]types.AttributeValue
			for {
				out, err := c.Scan(context.Background(), &dynamodb.ScanInput{TableName: &table,
					Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(benchSegments), Limit: aws.Int32(100), ExclusiveStartKey: start})
				if err != nil {
					b.Error(err)
					return
				}
				for _, it := range out.Items {
					v, _ := strconv.Atoi(it["version"].(*types.AttributeValueMemberN).Value)
					mig, _ := strconv.Atoi(it["migrated"].(*types.AttributeValueMemberN).Value)
					it["migrated"] = &types.AttributeValueMemberN{Value: strconv.Itoa(mig + 1)}
					it["version"] = &types.AttributeValueMemberN{Value: strconv.Itoa(v + 1)}
					var err error
					switch write {
					case updateLikeMigration:
						token := make([]byte, 16)
						crand.Read(token)
						_, err = c.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: &table,
							Key:                      map[string]types.AttributeValue{"id": it["id"]},
							UpdateExpression:         aws.String("SET #m = :m, #0 = :0, #1 = :1, #2 = :2, #3 = :3"),
							ConditionExpression:      aws.String("#2 = :4 AND (attribute_not_exists(#4) OR #4 <> :5)"),
							ExpressionAttributeNames: map[string]string{"#0": "hits", "#1": "migrated", "#2": "version", "#3": "tok", "#4": "migration", "#m": "migration"},
							ExpressionAttributeValues: map[string]types.AttributeValue{":0": it["hits"], ":1": it["migrated"], ":2": it["version"],
								":3": &types.AttributeValueMemberB{Value: token}, ":4": &types.AttributeValueMemberN{Value: strconv.Itoa(v)},
								":5": mark, ":m": mark},
							ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
							ReturnConsumedCapacity:              types.ReturnConsumedCapacityTotal})
					case updateConditional:
						_, err = c.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: &table,
							Key:                 map[string]types.AttributeValue{"id": it["id"]},
							UpdateExpression:    aws.String("SET migrated = :m, version = :v1"),
							ConditionExpression: aws.String("version = :v"),
							ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.Itoa(v)},
								":v1": it["version"], ":m": it["migrated"]}})
					default:
						in := &dynamodb.PutItemInput{TableName: &table, Item: it}
						if write == putConditional {
							in.ConditionExpression = aws.String("version = :v")
							in.ExpressionAttributeValues = map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.Itoa(v)}}
						}
						_, err = c.PutItem(context.Background(), in)
					}
					if err != nil {
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
