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

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// benchSizes are the table sizes of BenchmarkMigration, comma-separated:
// a small table shows the fixed costs of a run (joining the lease group,
// learning the end), a bigger one the rate per item.
var benchSizes = flag.String("backfill.items", "1000,5000", "table sizes of BenchmarkMigration, comma-separated")

// benchAttrs is the number of attributes BenchmarkMigration's items carry
// besides the four the change reads and writes (id, version, hits,
// migrated): 0, or wideAttrs (a wideAccount: a realistic mix of strings,
// numbers, a bool, a list, a map and a string set), where writing the
// change alone (dynamo.ChangedFrom) leaves them all out of the migration's
// UpdateItem, as the hand-written UpdateItem loop leaves them out of its
// own.
var benchAttrs = flag.Int("backfill.attrs", 0, "attributes of BenchmarkMigration's items besides id, version, hits and migrated: 0 or 20")

// wideAttrs is the number of attributes a wideAccount has besides an
// account's.
const wideAttrs = 20

// wideAccount is an account with wideAttrs more attributes, which the
// migration's change does not touch.
type wideAccount struct {
	ID       string            `dynamo:"id,hash"`
	Version  int64             `dynamo:"version,version"`
	Hits     int64             `dynamo:"hits"`
	Migrated int64             `dynamo:"migrated"`
	Name     string            `dynamo:"name"`
	Email    string            `dynamo:"email"`
	Country  string            `dynamo:"country"`
	City     string            `dynamo:"city"`
	Street   string            `dynamo:"street"`
	Zip      string            `dynamo:"zip"`
	Phone    string            `dynamo:"phone"`
	Plan     string            `dynamo:"plan"`
	Status   string            `dynamo:"status"`
	Locale   string            `dynamo:"locale"`
	Created  string            `dynamo:"created"`
	Updated  string            `dynamo:"updated"`
	Score    float64           `dynamo:"score"`
	Balance  int64             `dynamo:"balance"`
	Logins   int64             `dynamo:"logins"`
	Age      int64             `dynamo:"age"`
	Verified bool              `dynamo:"verified"`
	Tags     []string          `dynamo:"tags,set"`
	Roles    []string          `dynamo:"roles"`
	Prefs    map[string]string `dynamo:"prefs"`
}

// addMigratedWide is addMigrated of a wideAccount.
func addMigratedWide(a wideAccount) (wideAccount, error) {
	a.Migrated++
	return a, nil
}

// widen writes the env's n items again as wideAccounts (version 1, hits
// and migrated 0).
func widen(b testing.TB, e *env) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	num := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	for i := 0; i < e.n; i += 25 {
		var reqs []types.WriteRequest
		for j := i; j < min(e.n, i+25); j++ {
			item := map[string]types.AttributeValue{
				"id": s(key(j)), "version": num("1"), "hits": num("0"), "migrated": num("0"),
				"name": s(fmt.Sprintf("Customer %05d", j)), "email": s(fmt.Sprintf("customer%05d@example.com", j)),
				"country": s("DE"), "city": s("Berlin"), "street": s(fmt.Sprintf("Hauptstrasse %d", j%200+1)),
				"zip": s(fmt.Sprintf("10%03d", j%1000)), "phone": s(fmt.Sprintf("+49 30 %07d", j)), "plan": s("business"),
				"status": s("active"), "locale": s("de-DE"), "created": s("2024-03-01T09:30:00Z"),
				"updated": s("2026-11-26T17:45:12Z"), "score": num("87.5"), "balance": num(strconv.Itoa(j * 37)),
				"logins": num(strconv.Itoa(j % 900)), "age": num(strconv.Itoa(18 + j%60)),
				"verified": &types.AttributeValueMemberBOOL{Value: j%3 != 0},
				"tags":     &types.AttributeValueMemberSS{Value: []string{"newsletter", "beta"}},
				"roles":    &types.AttributeValueMemberL{Value: []types.AttributeValue{s("owner"), s("billing")}},
				"prefs":    &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"theme": s("dark"), "lang": s("de")}},
			}
			if len(item) != 4+wideAttrs {
				b.Fatalf("a wide item has %d attributes, want %d", len(item), 4+wideAttrs)
			}
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		}
		for len(reqs) > 0 {
			out, err := e.c.BatchWriteItem(b.Context(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{e.table: reqs}})
			if err != nil {
				b.Fatal(err)
			}
			reqs = out.UnprocessedItems[e.table]
		}
	}
}

// benchTokens gives every item of BenchmarkMigration's table a write token,
// as items a mapper wrote hold one: the migration's writes of such items
// are pinned to the token scanned and leave the mark's condition out
// (scannedOpts). Without it the table's items hold none until the first
// migration of the run has written them.
var benchTokens = flag.Bool("backfill.tokens", false, "give every item of BenchmarkMigration's table a write token, as a mapper's items hold")

// withTokens writes the env's n items again (version 1, hits and migrated
// 0) each with a random write token.
func withTokens(b testing.TB, e *env) {
	num := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	for i := 0; i < e.n; i += 25 {
		var reqs []types.WriteRequest
		for j := i; j < min(e.n, i+25); j++ {
			tok := make([]byte, 16)
			crand.Read(tok)
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
				"id": &types.AttributeValueMemberS{Value: key(j)}, "version": num("1"), "hits": num("0"), "migrated": num("0"),
				dynamo.DefaultWriteTokenAttribute: &types.AttributeValueMemberB{Value: tok},
			}}})
		}
		for len(reqs) > 0 {
			out, err := e.c.BatchWriteItem(b.Context(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{e.table: reqs}})
			if err != nil {
				b.Fatal(err)
			}
			reqs = out.UnprocessedItems[e.table]
		}
	}
}

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
// in flight, as a write waiting on the network is). -backfill.attrs gives
// the items more attributes, which the change does not touch.
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
	switch *benchAttrs {
	case 0:
	case wideAttrs:
		widen(b, env)
	default:
		b.Fatalf("-backfill.attrs %d: give 0 or %d", *benchAttrs, wideAttrs)
	}
	if *benchTokens {
		if *benchAttrs != 0 {
			b.Fatal("-backfill.tokens is for the 4-attribute items: leave -backfill.attrs out")
		}
		withTokens(b, env)
	}
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
				opts := []Option{WithFleet(lc, env.leases), WithSegments(benchSegments), WithPageSize(100), WithPollInterval(20 * time.Millisecond)}
				if way == "backfill-budget" {
					// A write budget never reached: every write asks for
					// its consumed capacity (without one, one in 16 does).
					opts = append(opts, WithCapacity(0, 1e9))
				}
				id := way + "-" + strconv.Itoa(i)
				var run func(context.Context) error
				if *benchAttrs == 0 {
					m, err := NewMigration(dynamo.NewMapper(env.c), env.table, id, addMigrated, opts...)
					if err != nil {
						b.Fatal(err)
					}
					run = m.Run
				} else {
					m, err := NewMigration(dynamo.NewMapper(env.c), env.table, id, addMigratedWide, opts...)
					if err != nil {
						b.Fatal(err)
					}
					run = m.Run
				}
				if err := run(b.Context()); err != nil {
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
