package backfill

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/lease"
)

// memTable answers a DynamoDB client's requests in memory, at once, for a
// table of accounts of benchSegments segments of memPages pages of
// memPageSize items each (every item version 1, nothing migrated): a Scan
// with its segment's page after its ExclusiveStartKey (the answers are
// built once), every write with success. It reads each request's body, as
// a real transport does. It stores nothing: the same items are scanned
// again by every pass.
type memTable struct {
	pages map[string][]byte // by segment and ExclusiveStartKey id ("3/" for the first page)
	empty []byte
}

const (
	memPages    = 2
	memPageSize = 100
	memItems    = benchSegments * memPages * memPageSize
)

func newMemTable() *memTable {
	h := &memTable{pages: map[string][]byte{}, empty: []byte(`{}`)}
	for seg := range benchSegments {
		after := ""
		for p := range memPages {
			var b strings.Builder
			b.WriteString(`{"Count":` + fmt.Sprint(memPageSize) + `,"ScannedCount":` + fmt.Sprint(memPageSize) + `,"Items":[`)
			last := ""
			for i := range memPageSize {
				if i > 0 {
					b.WriteByte(',')
				}
				last = fmt.Sprintf("s%d-%05d", seg, p*memPageSize+i)
				fmt.Fprintf(&b, `{"id":{"S":%q},"version":{"N":"1"},"hits":{"N":"0"},"migrated":{"N":"0"}}`, last)
			}
			b.WriteString(`]`)
			if p < memPages-1 {
				fmt.Fprintf(&b, `,"LastEvaluatedKey":{"id":{"S":%q}}`, last)
			}
			b.WriteString(`}`)
			h.pages[fmt.Sprintf("%d/%s", seg, after)] = []byte(b.String())
			after = last
		}
	}
	return h
}

func (h *memTable) Do(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	answer := h.empty
	if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".Scan") {
		var in struct {
			Segment           int
			ExclusiveStartKey struct {
				ID struct{ S string } `json:"id"`
			}
		}
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, err
		}
		var ok bool
		if answer, ok = h.pages[fmt.Sprintf("%d/%s", in.Segment, in.ExclusiveStartKey.ID.S)]; !ok {
			return nil, fmt.Errorf("memTable: no page of segment %d after %q", in.Segment, in.ExclusiveStartKey.ID.S)
		}
	}
	return &http.Response{
		StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "X-Amzn-Requestid": {"REQ"}},
		ContentLength: int64(len(answer)),
		Body:          io.NopCloser(bytes.NewReader(answer)),
		Request:       r,
	}, nil
}

// BenchmarkItemCPU measures the client's CPU per item of a migration and
// of the hand-written loops of BenchmarkMigration, without DynamoDB: the
// client (configured as dynamotest's) talks to memTable, so the SDK's
// serialising, signing and parsing count, the server's work does not. One
// op is one pass over memItems items, benchSegments segments at a time
// (the migration: its segments' scans and writes, as Run does them, without
// the lease group and the checkpoints, which cost per run, not per item).
// The way update-like-migration is the UpdateItem loop sending what the
// migration's UpdateItem carries besides (handLoop's updateLikeMigration):
// the cost of the request itself, whoever builds it.
// The metrics are per item: CPU (user + system, of the whole process, the
// garbage collector's included), allocations and bytes.
func BenchmarkItemCPU(b *testing.B) {
	h := newMemTable()
	c := dynamotest.NewClient("http://dynamodb.invalid", func(o *dynamodb.Options) { o.HTTPClient = h })
	const table = "mem"
	for _, way := range []string{"backfill", "update", "conditional", "update-like-migration"} {
		b.Run("way="+way, func(b *testing.B) {
			var pass func()
			switch way {
			case "backfill":
				lc, err := lease.New(dynamo.NewMapper(c), "leases")
				if err != nil {
					b.Fatal(err)
				}
				pass = func() {
					m, err := NewMigration(dynamo.NewMapper(c), table, "bench", addMigrated, WithFleet(lc, "checkpoints"), WithSegments(benchSegments), WithPageSize(memPageSize))
					if err != nil {
						b.Fatal(err)
					}
					var wg sync.WaitGroup
					for seg := range benchSegments {
						wg.Add(1)
						go func() {
							defer wg.Done()
							if err := m.scanSegment(b.Context(), b.Context(), seg, checkpoint{}, nil, nil); err != nil {
								b.Error(err)
							}
						}()
					}
					wg.Wait()
					if p := m.Progress(); p.Changed != memItems {
						b.Fatalf("progress %+v: want %d changed", p, memItems)
					}
				}
			case "update":
				pass = func() { handLoop(b, c, table, updateConditional) }
			case "conditional":
				pass = func() { handLoop(b, c, table, putConditional) }
			case "update-like-migration":
				pass = func() { handLoop(b, c, table, updateLikeMigration) }
			}
			pass() // warm up
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			cpu := processCPU()
			start := time.Now()
			for b.Loop() {
				pass()
			}
			wall := time.Since(start)
			cpu = processCPU() - cpu
			runtime.ReadMemStats(&after)
			items := float64(b.N * memItems)
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64(cpu)/items/1e3, "cpu-µs/item")
			b.ReportMetric(float64(wall.Nanoseconds())/items/1e3, "wall-µs/item")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/items, "allocs/item")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/items, "B/item")
		})
	}
}
