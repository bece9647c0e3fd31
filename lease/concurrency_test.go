package lease

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/telemetry"
)

// Many goroutines of one client take, release (twice at once, once with a
// cancelled ctx), write guarded and give up on three keys at once, with
// cancelled and expiring contexts, while Close comes in the middle:
// ddbkit.lease.held never reads below 0 and reads 0 once all is done;
// every lease handed out has ended once Close returned; the tokens of each
// key strictly increase in the order the leases were taken; no goroutine
// of the package is left.
func TestLeaseChaosKeepsGaugeAndTokens(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	reader := sdkmetric.NewManualReader()
	m := dynamo.NewMapper(dynamotest.Client(t), dynamo.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	c := newClientOn(t, m, table, WithOwner("h"), WithClock(clock.NewFake(time.Now())))
	jobs, err := dynamo.NewTable[job](dynamo.NewMapper(dynamotest.Client(t)), dynamotest.KeyTable(t, dynamotest.Client(t), "jobs", "key", types.ScalarAttributeTypeS, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"a", "b", "c"}
	var mu sync.Mutex
	tokens := map[string][]int64{}
	var got []*Lease
	took := func(l *Lease) {
		mu.Lock()
		tokens[l.Key()] = append(tokens[l.Key()], l.Token())
		got = append(got, l)
		mu.Unlock()
	}
	ok := func(err error) bool {
		return err == nil || errors.Is(err, ErrHeld) || errors.Is(err, ErrClosed) || errors.Is(err, ErrLost) || errors.Is(err, ErrReleased) ||
			errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
	}
	stopWatch := make(chan struct{})
	watched := make(chan struct{})
	go func() { // the gauge, read while all runs
		defer close(watched)
		for {
			if n := held(t, reader); n < 0 {
				t.Errorf("%s = %d while leases are taken and given up", telemetry.MetricLeasesHeld, n)
				return
			}
			select {
			case <-stopWatch:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	var ops sync.WaitGroup
	var steps atomic.Int64
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		for steps.Load() < 360 {
			runtime.Gosched()
		}
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	for g := range 8 {
		ops.Add(1)
		go func() {
			defer ops.Done()
			r := rand.New(rand.NewPCG(uint64(g), 3))
			for range 60 {
				steps.Add(1)
				key := keys[r.IntN(len(keys))]
				switch r.IntN(3) {
				case 0: // take, then a guarded write and two Releases at once
					l, err := c.TryAcquire(t.Context(), key)
					if !ok(err) {
						t.Errorf("TryAcquire: %v", err)
					}
					if l == nil {
						continue
					}
					took(l)
					var wg sync.WaitGroup
					for i := range 3 {
						wg.Add(1)
						go func() {
							defer wg.Done()
							var err error
							if i == 0 {
								_, err = Save(t.Context(), l, jobs, job{Key: key, Token: l.Token(), Holder: "h"}, dynamo.WithSaveBehavior(dynamo.SavePut))
							} else {
								err = l.Release(t.Context())
							}
							if !ok(err) {
								t.Errorf("guarded write or Release racing: %v", err)
							}
						}()
					}
					wg.Wait()
				case 1: // wait with a ctx cancelled soon (or already)
					ctx, cancel := context.WithTimeout(t.Context(), time.Duration(r.IntN(20))*time.Millisecond)
					l, err := c.Acquire(ctx, key)
					cancel()
					if !ok(err) {
						t.Errorf("Acquire: %v", err)
					}
					if l == nil {
						continue
					}
					took(l)
					dead, stop := context.WithCancel(t.Context())
					stop()
					if err := l.Release(dead); !ok(err) && !errors.Is(err, dynamo.ErrUnknownOutcome) {
						t.Errorf("Release with a cancelled ctx: %v", err)
					}
					if err := l.Release(t.Context()); err != nil && !errors.Is(err, ErrClosed) {
						t.Errorf("Release after a cancelled one: %v", err)
					}
				case 2: // a Release after the lease ended (released by another goroutine, or Close)
					mu.Lock()
					var l *Lease
					if len(got) > 0 {
						l = got[r.IntN(len(got))]
					}
					mu.Unlock()
					if l != nil && l.Err() != nil {
						if err := l.Release(t.Context()); err != nil {
							t.Errorf("Release of an ended lease: %v", err)
						}
					}
				}
			}
		}()
	}
	ops.Wait()
	<-closed
	close(stopWatch)
	<-watched
	if n := held(t, reader); n != 0 {
		t.Errorf("%s = %d once all leases were released and the client closed; want 0", telemetry.MetricLeasesHeld, n)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, l := range got {
		if l.Err() == nil {
			t.Errorf("lease on %q (token %d) still held after Close", l.Key(), l.Token())
		}
	}
	for k, ts := range tokens {
		for i := 1; i < len(ts); i++ {
			if ts[i] <= ts[i-1] {
				t.Errorf("key %q: token %d taken after %d", k, ts[i], ts[i-1])
			}
		}
	}
	t.Logf("leases taken: %d", len(got))
}

// Group workers join and leave at random moments — their Run's ctx
// cancelled or their client closed, at once or while they take, hand over
// and release keys — three at a time on six keys: every worker's
// ddbkit.lease.held never reads below 0 and reads 0 once its Run returned
// (nil, or ErrClosed after Close); no two workers' functions run on one
// key at once; no goroutine of the package is left.
func TestGroupChurnKeepsGauge(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	keys := []string{"k0", "k1", "k2", "k3", "k4", "k5"}
	var mu sync.Mutex
	active := map[string]string{} // key → the worker whose function runs on it
	works := 0
	var slots sync.WaitGroup
	for s := range 3 {
		slots.Add(1)
		go func() {
			defer slots.Done()
			r := rand.New(rand.NewPCG(uint64(s), 5))
			for i := range 6 {
				name := fmt.Sprintf("w%d-%d", s, i)
				reader := sdkmetric.NewManualReader()
				m := dynamo.NewMapper(dynamotest.Client(t), dynamo.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
				c, err := New(m, table, WithOwner(name), WithLeaseDuration(4*time.Second), WithHeartbeatInterval(500*time.Millisecond), WithPollInterval(20*time.Millisecond))
				if err != nil {
					t.Error(err)
					return
				}
				g, err := c.Group("churn", keys)
				if err != nil {
					t.Error(err)
					return
				}
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() {
					done <- g.Run(ctx, func(ctx context.Context, l *Lease) error {
						mu.Lock()
						if o, ok := active[l.Key()]; ok {
							t.Errorf("key %q: %s's work starts while %s's runs", l.Key(), name, o)
						}
						active[l.Key()] = name
						works++
						mu.Unlock()
						<-ctx.Done()
						mu.Lock()
						delete(active, l.Key())
						mu.Unlock()
						return nil
					})
				}()
				for end := time.Now().Add(time.Duration(100+r.IntN(500)) * time.Millisecond); time.Now().Before(end); {
					if n := held(t, reader); n < 0 {
						t.Errorf("%s: %s = %d while running", name, telemetry.MetricLeasesHeld, n)
					}
					time.Sleep(5 * time.Millisecond) // a random moment to stop at, not a synchronisation
				}
				closing := r.IntN(2) == 0
				if closing {
					if err := c.Close(context.Background()); err != nil {
						t.Errorf("%s: Close: %v", name, err)
					}
				} else {
					cancel()
				}
				err = <-done
				cancel()
				switch {
				case closing && err != nil && !errors.Is(err, ErrClosed):
					t.Errorf("%s: Run after Close: %v", name, err)
				case !closing && err != nil:
					t.Errorf("%s: Run after its ctx was cancelled: %v", name, err)
				}
				if n := held(t, reader); n != 0 {
					t.Errorf("%s: %s = %d once Run returned; want 0", name, telemetry.MetricLeasesHeld, n)
				}
				_ = c.Close(context.Background())
			}
		}()
	}
	slots.Wait()
	if works == 0 {
		t.Error("no key was taken: nothing under test")
	}
	t.Logf("%d works started", works)
}

// heldReleases is a transport that holds back a worker's releases of its
// keys' records (PutItem marking one released, or TransactWriteItems
// marking several: a batched release), once armed, until open is closed;
// waiting counts the key records held back.
type heldReleases struct {
	next    *http.Transport
	armed   atomic.Bool
	open    chan struct{}
	mu      sync.Mutex
	waiting int
}

func (h *heldReleases) RoundTrip(req *http.Request) (*http.Response, error) {
	target := req.Header.Get("X-Amz-Target")
	if !h.armed.Load() || (target != "DynamoDB_20120810.PutItem" && target != "DynamoDB_20120810.TransactWriteItems") || req.Body == nil {
		return h.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	if n := releasedRecords(target, body); n > 0 {
		h.mu.Lock()
		h.waiting += n
		h.mu.Unlock()
		select {
		case <-h.open:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	return h.next.RoundTrip(req)
}

// releasedRecords counts the key records (not token records) that a
// PutItem or TransactWriteItems body marks released.
func releasedRecords(target string, body []byte) int {
	type put struct {
		Item map[string]json.RawMessage
	}
	var puts []put
	if target == "DynamoDB_20120810.PutItem" {
		var p put
		_ = json.Unmarshal(body, &p)
		puts = append(puts, p)
	} else {
		var tx struct{ TransactItems []struct{ Put *put } }
		_ = json.Unmarshal(body, &tx)
		for _, it := range tx.TransactItems {
			if it.Put != nil {
				puts = append(puts, *it.Put)
			}
		}
	}
	n := 0
	for _, p := range puts {
		var k map[string]string
		_ = json.Unmarshal(p.Item["key"], &k)
		if !strings.HasPrefix(k["S"], tokenPrefix) && bytes.Equal(bytes.ReplaceAll(p.Item["released"], []byte(" "), nil), []byte(`{"BOOL":true}`)) {
			n++
		}
	}
	return n
}

func (h *heldReleases) held() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waiting
}

// A worker that leaves and at once starts again under the same owner (a
// new client: a restarted process) while its old incarnation's releases
// are still on their way — let through before the others' patience ran
// out, or only after the keys were taken again — never has one key
// worked on by two workers, its guarded writes' tokens strictly increase
// per key (the fleet checks both), every key ends up held once, the old
// Run returns, and the old client's ddbkit.lease.held reads 0.
func TestGroupRestartWhileOldReleasesInFlight(t *testing.T) {
	for _, late := range []bool{false, true} {
		t.Run(map[bool]string{false: "ReleasedBeforeTakeover", true: "ReleasedAfterTakeover"}[late], func(t *testing.T) {
			f := newFleet(t, 6)
			now := time.Now()
			h := &heldReleases{next: http.DefaultTransport.(*http.Transport).Clone(), open: make(chan struct{})}
			t.Cleanup(h.next.CloseIdleConnections)
			var opened sync.Once
			open := func() { opened.Do(func() { close(h.open) }) }
			t.Cleanup(open)
			old := f.startWith("w1", now, dynamotest.ClientWith(t, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: h} }))
			f.start("w2", now)
			f.settle(time.Minute, f.balanced)
			n := len(old.g.Keys())
			if n == 0 {
				t.Fatalf("w1 holds no key: nothing under test: %s", f.describe())
			}
			// Leaving needs no stepping of its clock. Its fns have returned
			// before its releases are sent, so the fleet's checks of the new
			// w1's work are not blurred by the old one's of the same name.
			f.mu.Lock()
			old.frozen = true
			f.mu.Unlock()
			h.armed.Store(true) // its handovers while settling went through
			old.cancel()
			for h.held() < n {
				runtime.Gosched() // the old incarnation's releases reach the transport
			}
			again := f.start("w1", old.clk.Now())
			if late {
				f.settle(time.Minute, f.balanced)
				open()
			} else {
				f.step(gPoll)
				open()
			}
			err := <-old.done
			old.done <- err // for the cleanup
			t.Logf("the old incarnation's Run: %v", err)
			f.settle(time.Minute, f.balanced)
			if got := held(t, old.metrics); got != 0 {
				t.Errorf("old client: ddbkit.lease.held = %d once its Run returned; want 0", got)
			}
			for _, k := range f.keys {
				info, err := again.c.Holder(t.Context(), k)
				if err != nil || info.Released {
					t.Errorf("key %q after all: %+v, %v; want held", k, info, err)
				}
			}
			t.Logf("%s", f.describe())
		})
	}
}

// trimmedBatches is a transport that has DynamoDB process only the first
// key of every BatchGetItem and answers the others as UnprocessedKeys, as
// DynamoDB may under load. It records the moves sent to the lease table
// (leaseTable): takes (TransactWriteItems writing one of its records) and
// updates of its records (UpdateItem: releases, roster updates, key
// expiries); not heartbeats (PutItem), nor the work's guarded writes,
// which only check a lease record beside a write to another table.
type trimmedBatches struct {
	next       *http.Transport
	leaseTable string
	trimmed    atomic.Int64
	mu         sync.Mutex
	moves      []string // "take <key>", "update <key>", in the order sent
}

func (tb *trimmedBatches) movesSent() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return slices.Clone(tb.moves)
}

// leaseWrites returns the lease table's records that a TransactWriteItems
// or UpdateItem body writes.
func (tb *trimmedBatches) leaseWrites(target string, body []byte) ([]string, error) {
	type write struct {
		TableName string
		Key       map[string]map[string]string
		Item      map[string]json.RawMessage
	}
	keyOf := func(w write) string {
		if k, ok := w.Key["key"]; ok {
			return k["S"]
		}
		var k map[string]string
		_ = json.Unmarshal(w.Item["key"], &k)
		return k["S"]
	}
	var out []string
	switch target {
	case "DynamoDB_20120810.UpdateItem":
		var w write
		if err := json.Unmarshal(body, &w); err != nil {
			return nil, err
		}
		if w.TableName == tb.leaseTable {
			out = append(out, "update "+strconv.Quote(keyOf(w)))
		}
	case "DynamoDB_20120810.TransactWriteItems":
		var in struct{ TransactItems []map[string]write }
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, err
		}
		for _, it := range in.TransactItems {
			for kind, w := range it {
				if kind != "ConditionCheck" && w.TableName == tb.leaseTable {
					out = append(out, "take "+strconv.Quote(keyOf(w)))
				}
			}
		}
	}
	return out, nil
}

func (tb *trimmedBatches) RoundTrip(req *http.Request) (*http.Response, error) {
	switch target := req.Header.Get("X-Amz-Target"); target {
	case "DynamoDB_20120810.TransactWriteItems", "DynamoDB_20120810.UpdateItem":
		if req.Body == nil {
			break
		}
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		ws, err := tb.leaseWrites(target, body)
		if err != nil {
			return nil, err
		}
		tb.mu.Lock()
		tb.moves = append(tb.moves, ws...)
		tb.mu.Unlock()
	}
	if req.Header.Get("X-Amz-Target") != "DynamoDB_20120810.BatchGetItem" || req.Body == nil {
		return tb.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	var in struct {
		RequestItems map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	unprocessed := map[string]map[string]json.RawMessage{}
	for table, ka := range in.RequestItems {
		var keys []json.RawMessage
		if err := json.Unmarshal(ka["Keys"], &keys); err != nil {
			return nil, err
		}
		if len(keys) < 2 {
			continue
		}
		rest := maps.Clone(ka)
		ka["Keys"], _ = json.Marshal(keys[:1])
		rest["Keys"], _ = json.Marshal(keys[1:])
		unprocessed[table] = rest
		tb.trimmed.Add(int64(len(keys) - 1))
	}
	if body, err = json.Marshal(in); err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	req.Header.Del("Content-Length")
	resp, err := tb.next.RoundTrip(req) // the signature is not checked by DynamoDB Local
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(answer, &out); err != nil {
		return nil, err
	}
	out["UnprocessedKeys"], _ = json.Marshal(unprocessed)
	answer, _ = json.Marshal(out)
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(answer)), int64(len(answer))
	resp.Header.Del("X-Amz-Crc32")
	resp.Header.Set("Content-Length", fmt.Sprint(len(answer)))
	return resp, nil
}

// Workers whose every batch read of worker, key and token records is
// answered one record at a time (the rest as UnprocessedKeys) read the
// rest again rather than taking the records unanswered for missing: they
// balance the keys, no key worked on by two at once, tokens increasing per
// key (the fleet checks these); and at rest — for longer than a worker's
// patience, every batch still answered in parts — they write to the lease
// table only heartbeats: no live worker dropped from the roster (and added
// back), no take of a held key tried (a key unanswered for would look
// free), no release. Only the lease table's writes count: the work's
// guarded writes (a check of the lease record beside a write to the jobs
// table) may still be on their way when the fleet has settled.
func TestGroupBatchReadsAnsweredInPartsBalance(t *testing.T) {
	f := newFleet(t, 6)
	now := time.Now()
	tb := &trimmedBatches{next: http.DefaultTransport.(*http.Transport).Clone(), leaseTable: f.table}
	t.Cleanup(tb.next.CloseIdleConnections)
	trimmed := func() *dynamodb.Client {
		return dynamotest.ClientWith(t, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: tb} })
	}
	f.startWith("w1", now, trimmed())
	f.settle(time.Minute, f.balanced)
	f.startWith("w2", now, trimmed())
	f.startWith("w3", now, trimmed())
	f.settle(2*time.Minute, f.balanced)
	if len(tb.movesSent()) == 0 {
		t.Fatal("no take or release was seen: the transport does not recognise the lease table's writes")
	}
	moves, trimmedBefore := len(tb.movesSent()), tb.trimmed.Load()
	rest := time.Duration(0)
	for ; rest <= time.Duration(float64(gDur)*gSkew)+2*gBeat; rest += gPoll { // at rest past every patience: nobody dropped, nothing moves
		f.step(gPoll)
		if !f.balanced() {
			t.Fatalf("unbalanced at rest after %v: %s", rest, f.describe())
		}
	}
	if at := tb.movesSent()[moves:]; len(at) > 0 {
		t.Errorf("%d writes other than heartbeats sent to the lease table at rest (%v), want none: a record left unprocessed was taken for missing", len(at), at)
	}
	if tb.trimmed.Load() == trimmedBefore {
		t.Fatal("no batch read at rest was answered in parts: nothing under test")
	}
	t.Logf("%d keys left unprocessed; %s", tb.trimmed.Load(), f.describe())
}

// Eight owners' workers on twelve keys, on one fake time line, join, leave
// (Run's ctx cancelled), leave by Client.Close, crash (their clock and
// heartbeats stop for good) and restart under an owner that just left —
// before its old Run has returned — at random moments, with time stepped
// between: no key is worked on by two live workers at once, every holder's
// guarded write carries a token above the previous one (the fleet checks
// both), every Run that returned returned nil (ErrClosed after Close; also
// when its owner's restart replaced its record before its ended mark) with
// its ddbkit.lease.held at 0, and the workers left
// alive end up holding every key once.
func TestGroupRandomChurnOnOneTimeLine(t *testing.T) {
	f := newFleet(t, 12)
	r := rand.New(rand.NewPCG(9, 27))
	start := time.Now()
	elapsed := time.Duration(0)
	running := map[string]*worker{} // by owner: the worker running under it
	crashed := map[string]bool{}    // owners never reused: their frozen Run still runs
	inc := 0
	launch := func(owner string) *worker {
		inc++
		w := f.start(owner, start.Add(elapsed))
		running[owner] = w
		return w
	}
	finish := func(w *worker, closing bool) {
		err := <-w.done
		w.done <- err // for the cleanup
		switch {
		case closing && !errors.Is(err, ErrClosed):
			t.Errorf("%s: Run after Close: %v, want ErrClosed", w.name, err)
		case !closing && err != nil:
			t.Errorf("%s: Run after its ctx was cancelled: %v", w.name, err)
		}
		if n := held(t, w.metrics); n != 0 {
			t.Errorf("%s: ddbkit.lease.held = %d once Run returned; want 0", w.name, n)
		}
	}
	stop := func(w *worker, closing bool) {
		f.mu.Lock()
		w.frozen = true // leaving: out of the fleet's stepping
		f.mu.Unlock()
		if closing {
			if err := w.c.Close(t.Context()); err != nil {
				t.Errorf("%s: Close: %v", w.name, err)
			}
			w.clk.Advance(gPoll) // it leaves at its next round
		} else {
			w.cancel()
		}
	}
	owners := []string{"o0", "o1", "o2", "o3", "o4", "o5", "o6", "o7"}
	launch("o0")
	for step := range 40 {
		var live, idle []string
		for _, o := range owners {
			switch {
			case running[o] != nil:
				live = append(live, o)
			case !crashed[o]:
				idle = append(idle, o)
			}
		}
		switch a := r.IntN(6); {
		case a == 0 && len(idle) > 0:
			launch(idle[r.IntN(len(idle))])
		case a == 1 && len(live) > 1: // leave, or Close, and maybe restart at once
			o := live[r.IntN(len(live))]
			w, closing := running[o], r.IntN(2) == 0
			delete(running, o)
			stop(w, closing)
			if r.IntN(2) == 0 {
				launch(o) // while the old Run may still be leaving
			}
			finish(w, closing)
		case a == 2 && len(live) > 2 && len(crashed) < 2: // crash
			o := live[r.IntN(len(live))]
			w := running[o]
			delete(running, o)
			crashed[o] = true
			f.mu.Lock()
			w.frozen, f.stale[o] = true, true
			f.mu.Unlock()
		default:
			d := time.Duration(1+r.IntN(4)) * gPoll
			f.step(d)
			elapsed += d
		}
		if testing.Verbose() {
			t.Logf("step %d at %v: %s", step, elapsed, f.describe())
		}
	}
	took := f.settle(3*time.Minute, f.balanced)
	t.Logf("%d incarnations; balanced %v after the churn: %s", inc, took, f.describe())
}
