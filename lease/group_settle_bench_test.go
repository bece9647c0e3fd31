package lease

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo/dynamotest"
)

// settleDelay is added to every request of BenchmarkGroupSettle: a
// region's round trip, on top of DynamoDB Local's own time.
const settleDelay = 5 * time.Millisecond

// delayTransport delays every request it forwards by delay and, once
// killed, fails them at once: a worker process that died (its last
// requests in flight still land).
type delayTransport struct {
	next   http.RoundTripper
	delay  time.Duration
	killed atomic.Bool
}

var errKilled = errors.New("bench: the worker was killed")

func (d *delayTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if d.killed.Load() {
		return nil, errKilled
	}
	time.Sleep(d.delay) // the network's round trip, not a synchronisation
	return d.next.RoundTrip(r)
}

// settleFleet is BenchmarkGroupSettle's fleet: workers in this process,
// each with its own DynamoDB client behind its own delayTransport.
type settleFleet struct {
	b       *testing.B
	keys    []string
	cnt     *opCounter
	workers []*settleWorker
}

type settleWorker struct {
	tr     *delayTransport
	g      *Group
	cancel context.CancelFunc
	done   chan error // Run's result, once it returns
}

func newSettleFleet(b *testing.B, workers, keys int) *settleFleet {
	f := &settleFleet{b: b, cnt: &opCounter{next: &http.Transport{MaxIdleConnsPerHost: 1024}}}
	for i := range keys {
		f.keys = append(f.keys, fmt.Sprintf("part-%05d", i))
	}
	table := leaseTable(b)
	for i := range workers {
		tr := &delayTransport{next: f.cnt, delay: settleDelay}
		client := dynamotest.ClientWith(b, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: tr} })
		c := newClient(b, table, client, WithOwner(fmt.Sprintf("w%d", i)))
		g, err := c.Group("settle", f.keys)
		if err != nil {
			b.Fatal(err)
		}
		f.workers = append(f.workers, &settleWorker{tr: tr, g: g})
	}
	b.Cleanup(f.stop)
	return f
}

// lastBeat returns when w's running incarnation sent the write that last
// extended its membership (its join or a heartbeat), on the real clock:
// where the crash bound starts.
func (w *settleWorker) lastBeat() time.Time {
	w.g.mu.Lock()
	m := w.g.cur
	w.g.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.deadline.Add(-m.g.c.o.duration)
}

// run starts w's Run.
func (f *settleFleet) run(w *settleWorker) {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel, w.done = cancel, make(chan error, 1)
	go func() { w.done <- w.g.Run(ctx, func(ctx context.Context, l *Lease) error { <-ctx.Done(); return nil }) }()
}

// leave ends w's Run and waits for it to return.
func (f *settleFleet) leave(w *settleWorker) {
	w.cancel()
	if err := <-w.done; err != nil {
		f.b.Errorf("leaving: %v", err)
	}
	w.done = nil
}

func (f *settleFleet) stop() {
	for _, w := range f.workers {
		w.tr.killed.Store(false)
		if w.done != nil {
			f.leave(w)
		}
	}
}

// heldBy returns how many keys the workers of ws hold in all, and the
// fewest and most one of them holds.
func heldBy(ws []*settleWorker) (n, lo, hi int) {
	lo = int(^uint(0) >> 1)
	for _, w := range ws {
		k := len(w.g.Keys())
		n, lo, hi = n+k, min(lo, k), max(hi, k)
	}
	return n, lo, hi
}

// await waits (polling every 10 ms) until the workers of ws hold every key,
// balanced to one key when balance is set, and returns how long that took;
// it fails the benchmark after limit.
func (f *settleFleet) await(ws []*settleWorker, balance bool, limit time.Duration) time.Duration {
	start := time.Now()
	for {
		n, lo, hi := heldBy(ws)
		if n == len(f.keys) && (!balance || hi-lo <= 1) {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			f.b.Fatalf("not settled after %v: %d of %d keys held, %d to %d per worker", limit, n, len(f.keys), lo, hi)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// BenchmarkGroupSettle measures 10 workers sharing 10 000 keys, every
// request delayed 5 ms, with the package's default timing (lease 20 s,
// heartbeat 5 s, poll 1 s, skew 1.25): cold, the time from starting every
// Run to every key held, 1 000 per worker; kill, from a worker's requests
// failing (as if killed) to the other nine holding every key, and from the
// last write that extended it (kill-since-beat, the crash bound's start,
// if no heartbeat was in flight at the kill); rolling, the
// longest any key is unheld (sampled every 10 ms) while the 10 workers
// leave and start again one by one, each once the fleet is balanced.
// Run it with -benchtime 1x: it runs once whatever b.N.
func BenchmarkGroupSettle(b *testing.B) {
	const workers, keys = 10, 10000
	f := newSettleFleet(b, workers, keys)
	b.ResetTimer()
	f.cnt.reset()
	for _, w := range f.workers {
		f.run(w)
	}
	cold := f.await(f.workers, true, 5*time.Minute)
	b.ReportMetric(cold.Seconds(), "cold-s")
	b.Logf("cold: %d keys over %d workers balanced in %v: %d writes, %d reads", keys, workers, cold.Round(time.Millisecond), f.cnt.writes.Load(), f.cnt.reads.Load())

	dead := f.workers[workers-1]
	f.cnt.reset()
	dead.tr.killed.Store(true)
	beat := time.Since(dead.lastBeat())
	kill := f.await(f.workers[:workers-1], false, 5*time.Minute)
	b.ReportMetric(kill.Seconds(), "kill-s")
	b.ReportMetric((beat + kill).Seconds(), "kill-since-beat-s")
	b.Logf("kill: the other %d workers hold every key %v after the kill, %v after its last heartbeat sent: %d writes, %d reads",
		workers-1, kill.Round(time.Millisecond), (beat + kill).Round(time.Millisecond), f.cnt.writes.Load(), f.cnt.reads.Load())
	dead.tr.killed.Store(false) // it joins again as a new incarnation
	f.await(f.workers, true, 5*time.Minute)

	f.cnt.reset()
	start := time.Now()
	longest := f.rolling()
	b.ReportMetric(longest.Seconds(), "rolling-max-unheld-s")
	b.Logf("rolling restart of %d workers in %v: longest a key was unheld %v: %d writes, %d reads", workers, time.Since(start).Round(time.Millisecond), longest.Round(time.Millisecond), f.cnt.writes.Load(), f.cnt.reads.Load())
	b.StopTimer()
}

// rolling restarts the workers one by one, each once the fleet is
// balanced, and returns the longest any key was unheld meanwhile.
func (f *settleFleet) rolling() time.Duration {
	stop := make(chan struct{})
	var longest time.Duration
	var wg sync.WaitGroup
	stopped := false
	defer func() {
		if !stopped { // await failed the benchmark
			close(stop)
			wg.Wait()
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		since := map[string]time.Time{} // key → when it was first seen unheld
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			now := time.Now()
			holders := map[string]bool{}
			for _, w := range f.workers {
				for _, k := range w.g.Keys() {
					holders[k] = true
				}
			}
			for _, k := range f.keys {
				t, unheld := since[k]
				switch {
				case !holders[k] && !unheld:
					since[k] = now
				case holders[k] && unheld:
					longest = max(longest, now.Sub(t))
					delete(since, k)
				}
			}
		}
	}()
	for _, w := range f.workers {
		f.leave(w)
		f.run(w)
		f.await(f.workers, true, 5*time.Minute)
	}
	close(stop)
	wg.Wait()
	stopped = true
	return longest
}
