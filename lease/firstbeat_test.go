package lease

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
)

// slowAnswer makes the answers of matching requests slow on a fake clock:
// once armed, the first request of operation op whose body holds marker is
// sent, and before its answer is returned the clock is advanced by by — as
// if the answer had taken that long. Other requests pass untouched.
type slowAnswer struct {
	next   http.RoundTripper
	op     string // e.g. "TransactWriteItems"
	marker string // a substring of the request body
	clk    *clock.Fake
	by     time.Duration

	mu    sync.Mutex
	armed bool
	hits  int
}

func (s *slowAnswer) arm() {
	s.mu.Lock()
	s.armed = true
	s.mu.Unlock()
}

func (s *slowAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(req.Header.Get("X-Amz-Target"), "."+s.op) || req.Body == nil {
		return s.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	s.mu.Lock()
	slow := s.armed && bytes.Contains(body, []byte(s.marker))
	if slow {
		s.armed = false
		s.hits++
	}
	s.mu.Unlock()
	resp, err := s.next.RoundTrip(req)
	if slow {
		s.clk.Advance(s.by)
	}
	return resp, err
}

func slowClient(t *testing.T, s *slowAnswer) *dynamodb.Client {
	s.next = http.DefaultTransport
	return dynamotest.ClientWith(t, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: s} })
}

// A lease whose taking write was answered slowly — 7 s of an 8 s lease,
// with 2 s heartbeats — is not lost: its first heartbeat is timed from
// before that write, as its deadline is, so it is sent at once rather than
// a heartbeat interval after the answer (which would be past the deadline).
func TestSlowTakeKeepsLease(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	clk := clock.NewFake(time.Now())
	slow := &slowAnswer{op: "TransactWriteItems", marker: `\u0000token:`, clk: clk, by: 7 * time.Second}
	c := newClientOn(t, dynamo.NewMapper(slowClient(t, slow)), table, WithOwner("slow"), WithClock(clk),
		WithLeaseDuration(8*time.Second), WithHeartbeatInterval(2*time.Second))
	slow.arm()
	l, err := c.TryAcquire(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if slow.hits != 1 {
		t.Fatalf("%d slow takes; want 1", slow.hits)
	}
	for range 20 { // 20 s: ten heartbeats
		clk.BlockUntil(l.Done(), 2) // the heartbeat and the watchdog
		if err := l.Err(); err != nil {
			t.Fatalf("after a slow take, at %v: %v", clk.Now(), err)
		}
		clk.Advance(time.Second)
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
}

// A worker whose join's roster update was answered slowly — 7 s of an 8 s
// lease, with 2 s heartbeats — keeps its membership: its heartbeat runs
// from before the join's write of its worker record, during the roster
// update, rather than from the end of the join. As at a cold start, the
// roster names another worker, live and holding nothing, so the first
// round takes nothing and writes nothing that would extend the membership.
// The worker keeps its incarnation for four lease durations, and holds
// every key once the other is found silent and ended.
func TestGroupSlowRosterUpdateKeepsMembership(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	clk := clock.NewFake(time.Now())
	// The roster's write (its key is the group's prefix alone), not the
	// worker record's (whose key goes on with "\u0000worker:").
	slow := &slowAnswer{op: "UpdateItem", marker: `{"S":"\u0000group:job"}`, clk: clk, by: 7 * time.Second}
	c := newClientOn(t, dynamo.NewMapper(slowClient(t, slow)), table, WithOwner("w1"), WithClock(clk),
		WithLeaseDuration(gDur), WithHeartbeatInterval(gBeat), WithPollInterval(gPoll), WithClockSkewRate(gSkew))
	keys := []string{"a", "b", "c"}
	g, err := c.Group("job", keys)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.workers.Save(t.Context(), workerRecord{Key: g.workerKey("w0"), Owner: "w0", Attempt: "cold", DurationMS: durationMS(gDur)}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.rosters.Save(t.Context(), rosterRecord{Key: g.rosterKey(), Members: []string{"w0"}}); err != nil {
		t.Fatal(err)
	}
	slow.arm()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx, func(ctx context.Context, _ *Lease) error { <-ctx.Done(); return nil }) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	clk.BlockUntil(t.Context().Done(), 3) // joined: round, heartbeat and watchdog
	if slow.hits != 1 {
		t.Fatalf("%d slow roster updates; want 1 (the join's)", slow.hits)
	}
	incarnation := func() string {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.cur == nil {
			return ""
		}
		return g.cur.attempt
	}
	first := incarnation()
	for step := range 4 * gDur / gPoll {
		clk.Advance(gPoll)
		clk.BlockUntil(t.Context().Done(), 3)
		if got := incarnation(); got != first {
			t.Fatalf("after %v: incarnation %q, joined as %q: the slow roster update cost the membership", (step+1)*gPoll, got, first)
		}
	}
	if got := g.Keys(); len(got) != len(keys) {
		t.Fatalf("holds %v; want all of %v", got, keys)
	}
}
