package backfill

import (
	"context"
	crand "crypto/rand"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// writesInFlight is an HTTP transport (the SDK's default one beneath) that
// adds up the time each PutItem and UpdateItem spends in it, from sending
// to the response's headers: over a span of wall time, the mean number of
// writes in flight. With benchSegments writers that each write one item at
// a time, a mean below benchSegments is the time writers spent elsewhere
// (reading pages, joining the lease group, the client's own work).
type writesInFlight struct {
	base http.RoundTripper
	nano atomic.Int64
}

func newWritesInFlight() *writesInFlight {
	return &writesInFlight{base: awshttp.NewBuildableClient().GetTransport()}
}

func (w *writesInFlight) RoundTrip(req *http.Request) (*http.Response, error) {
	op := req.Header.Get("X-Amz-Target")
	if !strings.HasSuffix(op, ".UpdateItem") && !strings.HasSuffix(op, ".PutItem") {
		return w.base.RoundTrip(req)
	}
	start := time.Now()
	resp, err := w.base.RoundTrip(req)
	w.nano.Add(int64(time.Since(start)))
	return resp, err
}

// Parts of the migration's UpdateItem that BenchmarkWriteParts adds, one
// at a time, to a version-conditioned UpdateItem of two attributes.
const (
	partCapacity = 1 << iota // ReturnConsumedCapacity TOTAL
	partAllOld               // ReturnValuesOnConditionCheckFailure ALL_OLD
	partAllAttrs             // every attribute in the SET clause (here one more)
	partToken                // a random 16-byte binary attribute (the mapper's write token)
	partMark                 // the mark in the SET clause and in the condition
	partMarkSet              // the mark in the SET clause only
	partPin                  // the condition on the write token read (ChangedFrom's)
)

// BenchmarkWriteParts measures what each part of the migration's
// UpdateItem costs DynamoDB: the parallel scan and write loop of
// BenchmarkMigration (benchSegments segments and writers, items of
// -backfill.items' first size) writing with a version-conditioned
// UpdateItem of the changed attribute and the version, and the same
// with one part of the migration's request added (partCapacity …
// partMark), all but the capacity, all, and the migration's write of the
// change alone pinned to the token read (partPin) with and without the
// mark's condition. Every op runs each way once on
// the same table, in an order rotated from op to op; the metrics are each
// way's items per second and its rate over the plain way's.
func BenchmarkWriteParts(b *testing.B) {
	n, err := strconv.Atoi(strings.TrimSpace(strings.Split(*benchSizes, ",")[0]))
	if err != nil || n < 1 {
		b.Fatalf("-backfill.items %q: give table sizes such as 1000,5000", *benchSizes)
	}
	env := newEnv(b, n)
	all := partCapacity | partAllOld | partAllAttrs | partToken | partMark
	ways := []struct {
		name  string
		parts int
	}{
		{"plain", 0}, {"capacity", partCapacity}, {"allold", partAllOld}, {"allattrs", partAllAttrs},
		{"token", partToken}, {"mark", partMark}, {"all-but-capacity", all &^ partCapacity}, {"all", all},
		// What a write of only the changed attributes leaves (no other
		// attribute in the SET clause), with and without the write token.
		{"diff", all &^ (partCapacity | partAllAttrs)}, {"diff-no-token", all &^ (partCapacity | partAllAttrs | partToken)},
		// The migration's write of the change alone, pinned to the token
		// read: with the mark's condition (before 7039385) and without.
		{"pinned-markcond", partAllOld | partToken | partMark | partPin}, {"pinned", partAllOld | partToken | partMarkSet | partPin},
	}
	spent := make([]time.Duration, len(ways))
	for i := 0; b.Loop(); i++ {
		for k := range ways {
			w := (k + i) % len(ways)
			start := time.Now()
			partsLoop(b, env.c, env.table, ways[w].parts)
			spent[w] += time.Since(start)
		}
	}
	b.ReportMetric(0, "ns/op")
	for w, way := range ways {
		b.ReportMetric(float64(n*b.N)/spent[w].Seconds(), way.name+"-items/s")
		if w > 0 {
			b.ReportMetric(spent[0].Seconds()/spent[w].Seconds(), "x-"+way.name)
		}
	}
}

// partsLoop is handLoop writing with a version-conditioned UpdateItem of
// migrated and the version, with the parts of the migration's request
// given.
func partsLoop(b testing.TB, c *dynamodb.Client, table string, parts int) {
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
					if err := partsWrite(c, table, it, parts, mark); err != nil {
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

// partsWrite writes the scanned item it back with migrated+1 and its
// version+1, under its version, with the parts given.
func partsWrite(c *dynamodb.Client, table string, it map[string]types.AttributeValue, parts int, mark types.AttributeValue) error {
	v, _ := strconv.Atoi(it["version"].(*types.AttributeValueMemberN).Value)
	mig, _ := strconv.Atoi(it["migrated"].(*types.AttributeValueMemberN).Value)
	set, cond := "SET #1 = :1, #2 = :2", "#2 = :4"
	names := map[string]string{"#1": "migrated", "#2": "version"}
	values := map[string]types.AttributeValue{":1": &types.AttributeValueMemberN{Value: strconv.Itoa(mig + 1)},
		":2": &types.AttributeValueMemberN{Value: strconv.Itoa(v + 1)}, ":4": &types.AttributeValueMemberN{Value: strconv.Itoa(v)}}
	in := &dynamodb.UpdateItemInput{TableName: &table, Key: map[string]types.AttributeValue{"id": it["id"]}}
	if parts&partAllAttrs != 0 {
		set += ", #0 = :0"
		names["#0"], values[":0"] = "hits", it["hits"]
	}
	if parts&partToken != 0 {
		token := make([]byte, 16)
		crand.Read(token)
		set += ", #3 = :3"
		names["#3"], values[":3"] = "tok", &types.AttributeValueMemberB{Value: token}
	}
	if parts&partPin != 0 {
		if t, ok := it["tok"]; ok {
			cond += " AND #5 = :6"
			values[":6"] = t
		} else {
			cond += " AND attribute_not_exists(#5)"
		}
		names["#5"] = "tok"
	}
	if parts&partMarkSet != 0 {
		set = "SET #m = :m, " + set[len("SET "):]
		names["#m"], values[":m"] = "migration", mark
	}
	if parts&partMark != 0 {
		set = "SET #m = :m, " + set[len("SET "):]
		cond += " AND (attribute_not_exists(#4) OR #4 <> :5)"
		names["#4"], names["#m"] = "migration", "migration"
		values[":5"], values[":m"] = mark, mark
	}
	if parts&partCapacity != 0 {
		in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	}
	if parts&partAllOld != 0 {
		in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	}
	in.UpdateExpression, in.ConditionExpression = &set, &cond
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = names, values
	_, err := c.UpdateItem(context.Background(), in)
	return err
}
