package lease

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo/dynamotest"
)

// opCounter counts the DynamoDB requests it forwards, writes and reads
// apart (by the operation named in X-Amz-Target).
type opCounter struct {
	next          http.RoundTripper
	writes, reads atomic.Int64
}

func (c *opCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	op := r.Header.Get("X-Amz-Target")
	op = op[strings.LastIndex(op, ".")+1:]
	switch op {
	case "PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem":
		c.writes.Add(1)
	case "GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems":
		c.reads.Add(1)
	}
	return c.next.RoundTrip(r)
}

func (c *opCounter) reset() { c.writes.Store(0); c.reads.Store(0) }

// Timing of the measurement: the package's default ratio (heartbeat a
// quarter of the duration), slow enough that 10 000 single leases'
// heartbeats stay within what DynamoDB Local on two cores answers.
const (
	benchDur    = 60 * time.Second
	benchBeat   = 15 * time.Second
	benchWindow = 2 * benchBeat
)

// BenchmarkGroupWrites measures what a fleet of 10 workers at rest sends
// per second while holding 1, 100 or 10 000 keys: as a Group (one worker
// record per worker) and, as the baseline, as single leases (one record,
// one heartbeat write, per key). Requests are counted at the HTTP client
// over a window of two heartbeat intervals once every key is held. It runs
// once whatever b.N (-benchtime 1x).
func BenchmarkGroupWrites(b *testing.B) {
	for _, keys := range []int{1, 100, 10000} {
		for _, kind := range []string{"group", "single"} {
			b.Run(fmt.Sprintf("keys_%d/%s", keys, kind), func(b *testing.B) {
				cnt := &opCounter{next: &http.Transport{MaxIdleConnsPerHost: 64}}
				client := dynamotest.ClientWith(b, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: cnt} })
				table := leaseTable(b)
				var ks []string
				for i := range keys {
					ks = append(ks, fmt.Sprintf("part-%05d", i))
				}
				var clients []*Client
				for i := range 10 {
					clients = append(clients, newClient(b, table, client, WithOwner(fmt.Sprintf("w%d", i)),
						WithLeaseDuration(benchDur), WithHeartbeatInterval(benchBeat)))
				}
				start := time.Now()
				var stop func()
				if kind == "group" {
					stop = runGroups(b, clients, ks)
				} else {
					stop = holdSingles(b, clients, ks)
				}
				setup := time.Since(start)
				b.ResetTimer()
				cnt.reset()
				time.Sleep(benchWindow)
				w, r := cnt.writes.Load(), cnt.reads.Load()
				b.StopTimer()
				stop()
				secs := benchWindow.Seconds()
				b.ReportMetric(float64(w)/secs, "writes/s")
				b.ReportMetric(float64(w)/10/(benchWindow.Seconds()/benchBeat.Seconds()), "writes/worker/interval")
				b.ReportMetric(float64(r)/secs, "reads/s")
				b.Logf("%s, %d keys, 10 workers: setup %v; in %v: %d writes, %d reads", kind, keys, setup.Round(time.Millisecond), benchWindow, w, r)
			})
		}
	}
}

// runGroups runs a Group over keys on every client until every key is held
// and each worker's record lists what it holds, and returns what stops
// them.
func runGroups(b *testing.B, clients []*Client, keys []string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var groups []*Group
	for _, c := range clients {
		g, err := c.Group("bench", keys)
		if err != nil {
			b.Fatal(err)
		}
		groups = append(groups, g)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := g.Run(ctx, func(ctx context.Context, l *Lease) error { <-ctx.Done(); return nil }); err != nil {
				b.Error(err)
			}
		}()
	}
	stop = func() { cancel(); wg.Wait() }
	deadline := time.Now().Add(5 * time.Minute)
	for {
		held, lo, hi := 0, len(keys), 0
		for _, g := range groups {
			n := len(g.Keys())
			held += n
			lo, hi = min(lo, n), max(hi, n)
		}
		if held == len(keys) && hi-lo <= 1 {
			break
		}
		if time.Now().After(deadline) {
			stop()
			b.Fatalf("not balanced after 5 minutes: %d of %d keys held, %d to %d per worker", held, len(keys), lo, hi)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(benchBeat + time.Second) // every worker's heartbeat has written what it holds
	return stop
}

// holdSingles acquires every key as a single lease, spread over the
// clients, and returns what ends them.
func holdSingles(b *testing.B, clients []*Client, keys []string) (stop func()) {
	var mu sync.Mutex
	var leases []*Lease
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := i; j < len(keys); j += len(clients) {
				l, err := c.TryAcquire(context.Background(), keys[j])
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				leases = append(leases, l)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	return func() {
		done, cancel := context.WithCancel(context.Background())
		cancel() // stop the heartbeats; the records are left with the table
		for _, l := range leases {
			_ = l.Release(done)
		}
	}
}
