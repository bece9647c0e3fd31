package dynamo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
)

// openLat is the latency BenchmarkHotKeyOpenLoop adds to every request.
const openLat = 5 * time.Millisecond

// BenchmarkHotKeyOpenLoop: single Updates of one key arriving as a Poisson
// process (seeded, exponential gaps) at load times one writer's rate (one
// goroutine's Update loop, measured first), each caller making one Update
// and leaving, on DynamoDB Local with 5 ms added to every request;
// loopers=4 adds four goroutines in an Update loop on the same key.
// gather=on is the gate as built, gather=off a gate that never waits for
// released callers (gate.NoGather). Reported: the arrivals' p50-ms and
// p99-ms latency from their scheduled time (so a late start counts) and
// upd/s, all Updates completed per second. Run with -test.benchtime 1x.
func BenchmarkHotKeyOpenLoop(b *testing.B) {
	c := dynamotest.Client(b)
	name := dynamotest.KeyTable(b, c, "bench-open", "id", types.ScalarAttributeTypeS, "", "")
	db := &fakeDB{backend: c}
	db.hook(&fakeHook{before: func(int) { time.Sleep(openLat) }}) // a model of latency, not synchronisation
	var round atomic.Int64
	table := func() (*Table[counted], counted) {
		tb, err := NewTable[counted](NewMapper(db), name)
		if err != nil {
			b.Fatal(err)
		}
		return tb, counted{ID: fmt.Sprintf("open%d", round.Add(1))}
	}
	one := oneWriterRate(b, table)
	b.Logf("one writer: %.0f updates/s", one)
	for _, loopers := range []int{0, 4} {
		for _, load := range []float64{0.1, 0.5, 0.8, 0.95, 1.5, 3, 16} {
			if loopers > 0 && load > 1 {
				continue
			}
			for _, gather := range []string{"on", "off"} {
				b.Run(fmt.Sprintf("loopers=%d/load=%.2f/gather=%s", loopers, load, gather), func(b *testing.B) {
					for i := range b.N {
						tb, key := table()
						tb.gate.NoGather = gather == "off"
						r := openRun(b, tb, key, load*one, loopers, uint64(i)+uint64(load*100))
						b.ReportMetric(r.p50, "p50-ms")
						b.ReportMetric(r.p99, "p99-ms")
						b.ReportMetric(r.rate, "upd/s")
					}
				})
			}
		}
	}
}

// oneWriterRate returns the Updates per second of one goroutine's loop.
func oneWriterRate(b *testing.B, table func() (*Table[counted], counted)) float64 {
	tb, key := table()
	ctx := context.Background()
	n, start := 0, time.Now()
	for ; time.Since(start) < time.Second; n++ {
		if _, err := tb.Update(ctx, key, incCounted); err != nil {
			b.Fatal(err)
		}
	}
	return float64(n) / time.Since(start).Seconds()
}

func incCounted(c counted) (counted, error) { c.N++; return c, nil }

// openResult is what one open-loop run measured.
type openResult struct{ p50, p99, rate float64 }

// openDur is how long one open-loop run's arrivals come.
const openDur = 3 * time.Second

// openRun sends Updates of key through tb arriving at rate per second for
// openDur, exponential gaps drawn from seed, beside loopers goroutines in
// an Update loop, and checks the count stored.
func openRun(b *testing.B, tb *Table[counted], key counted, rate float64, loopers int, seed uint64) openResult {
	ctx := context.Background()
	for range 5 { // the round trip measured, the item stored
		if _, err := tb.Update(ctx, key, incCounted); err != nil {
			b.Fatal(err)
		}
	}
	var mu sync.Mutex
	var lats []time.Duration
	var done atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	fail := func(err error) {
		if err != nil {
			b.Error(err)
		}
	}
	for range loopers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				_, err := tb.Update(ctx, key, incCounted)
				fail(err)
				done.Add(1)
			}
		}()
	}
	rng := rand.New(rand.NewPCG(seed, 44))
	start := time.Now()
	for at := time.Duration(0); ; {
		at += time.Duration(rng.ExpFloat64() / rate * float64(time.Second))
		if at > openDur {
			break
		}
		sched := start.Add(at)
		time.Sleep(time.Until(sched)) // the arrival process, not synchronisation
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := tb.Update(ctx, key, incCounted)
			fail(err)
			d := time.Since(sched)
			done.Add(1)
			mu.Lock()
			lats = append(lats, d)
			mu.Unlock()
		}()
	}
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(start)
	got, err := tb.Load(ctx, key, ConsistentRead())
	if err != nil || int64(got.N) != 5+done.Load() {
		b.Fatalf("stored %+v, %v: want n = %d", got, err, 5+done.Load())
	}
	slices.Sort(lats)
	ms := func(q float64) float64 {
		if len(lats) == 0 {
			return 0
		}
		return float64(lats[min(len(lats)-1, int(q*float64(len(lats))))]) / float64(time.Millisecond)
	}
	return openResult{p50: ms(0.5), p99: ms(0.99), rate: float64(done.Load()) / elapsed.Seconds()}
}
