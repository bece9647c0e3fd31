package stream_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ddbkit/dynamo/stream"
)

// TestMeasureThroughputAndLag measures, on the server under test, records
// per second through one worker (a backlog of 2000 changes, batches of
// 100, a handler that does nothing, timed from the first batch to the last) and the lag from a write's answer to
// its handler (100 writes one at a time, idle wait 10-50 ms); then a
// fleet of four workers of a second processor over the same records. Run with
// STREAM_MEASURE=1; the figures go to BENCHMARKS.md.
func TestMeasureThroughputAndLag(t *testing.T) {
	if os.Getenv("STREAM_MEASURE") == "" {
		t.Skip("set STREAM_MEASURE=1 to measure")
	}
	e := newEnv(t)
	ctx := context.Background()
	const backlog = 2000
	for i := range backlog {
		if _, err := e.items.Save(ctx, Item{Customer: fmt.Sprint("c", i%50), ID: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	p := e.processor(t, "m1", stream.WithBatchSize(100), stream.WithSlots(1), stream.WithIdleWait(10*time.Millisecond, 50*time.Millisecond))
	var mu sync.Mutex
	n, n0 := 0, 0
	var first, last time.Time
	sent := map[string]time.Time{}
	var lags []time.Duration
	all := make(chan struct{})
	h := func(ctx context.Context, b *stream.Batch[Item]) error {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if first.IsZero() {
			first = now
			n0 = len(b.Records)
		}
		for _, r := range b.Records {
			n++
			if at, ok := sent[r.New.ID]; ok {
				lag := time.Duration(0) // handled before the write's answer came
				if !at.IsZero() {
					lag = now.Sub(at)
				}
				lags = append(lags, lag)
			}
		}
		last = now
		if n == backlog {
			close(all)
		}
		return nil
	}
	start := time.Now()
	stop := run(t, p, h)
	<-all
	mu.Lock()
	rate := float64(backlog-n0) / last.Sub(first).Seconds()
	startup := first.Sub(start)
	mu.Unlock()
	for i := range 100 {
		id := fmt.Sprint("lag-", i)
		mu.Lock()
		sent[id] = time.Time{}
		mu.Unlock()
		if _, err := e.items.Save(ctx, Item{Customer: "lag", ID: id}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		sent[id] = time.Now()
		mu.Unlock()
		time.Sleep(30 * time.Millisecond) // one write at a time, spaced
	}
	time.Sleep(500 * time.Millisecond) // the last lags come in
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	fleetRate, fleetN, shards := measureFleet(t, e, backlog+100)
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(lags)
	q := func(f float64) time.Duration { return lags[int(f*float64(len(lags)-1))] }
	t.Logf("one worker: %.0f records/s over a backlog of %d (first batch %v after Run)", rate, backlog, startup.Round(time.Millisecond))
	t.Logf("lag write answer -> handler over %d writes: p50 %v p90 %v max %v", len(lags), q(0.5).Round(time.Millisecond), q(0.9).Round(time.Millisecond), q(1).Round(time.Millisecond))
	t.Logf("fleet of 4 workers: %.0f records/s over the stream's %d records (%d shards)", fleetRate, fleetN, shards)
}

// measureFleet runs a second processor ("fleet") of four workers in this
// process over the whole stream, n records, from its trim horizon, and
// returns its records/s from the first batch to the last, and the shards
// it read.
func measureFleet(t *testing.T, e *env, n int) (float64, int, int) {
	var mu sync.Mutex
	got, n0, done := 0, 0, false
	var first, last time.Time
	shards := map[string]bool{}
	all := make(chan struct{})
	h := func(ctx context.Context, b *stream.Batch[Item]) error {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if first.IsZero() {
			first, n0 = now, len(b.Records)
		}
		shards[b.Shard] = true
		got += len(b.Records)
		last = now
		if got >= n && !done {
			done = true
			close(all)
		}
		return nil
	}
	var stops []func() error
	for i := range 4 {
		p, err := stream.New(e.items, stream.Config{Streams: e.streams, Leases: e.leaseClient(t, fmt.Sprint("f", i)), Checkpoints: e.leases, Name: "fleet"},
			stream.WithBatchSize(100), stream.WithSlots(16), stream.WithIdleWait(10*time.Millisecond, 50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		stops = append(stops, run(t, p, h))
	}
	select {
	case <-all:
	case <-time.After(60 * time.Second):
		mu.Lock()
		t.Fatalf("the fleet handled %d of %d records in 60 s", got, n)
	}
	for _, stop := range stops {
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return float64(n-n0) / last.Sub(first).Seconds(), n, len(shards)
}
