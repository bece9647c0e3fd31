package lease

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
)

// The round trips on the way of a group's moves, as docs/leases.md states
// them: the requests sent one after another between the event and the
// take, each costing its time to be answered on top of the waits on the
// workers' clocks.
const (
	crashTrips = 10 // a crashed worker's keys: d × r + 2p + crashTrips
	leaveTrips = 9  // a leaving worker's keys, from its functions' return: p + leaveTrips
)

// trip is a request a worker sent: its operation and the records it names
// ("GetItem roster", "BatchGetItem worker:w2", "TransactWriteItems
// part-01,token:part-01,worker:w1"), at the sender's fake time.
type trip struct {
	at       time.Time
	what     string
	answered bool
}

// tripLog records every request of one worker, and can hold one request
// chosen in advance — before DynamoDB sees it, or once DynamoDB has
// answered it but before the worker gets the answer — until the test lets
// it go: a request in flight, made to last as long as the test needs.
type tripLog struct {
	next http.RoundTripper
	clk  *clock.Fake
	done <-chan struct{} // the test's end: lets any held request go

	mu      sync.Mutex
	trips   []trip
	hold    *heldReq
	changed chan struct{} // closed and replaced at every answer
}

// heldReq is a request to hold: the next whose trip reads what.
type heldReq struct {
	what    string
	before  bool          // hold it before sending (DynamoDB has not seen it)
	held    chan struct{} // closed once the request is held
	release chan struct{} // closed by the test to let it go
	at      int           // its index in the log, once held
}

func newTripLog(t *testing.T, clk *clock.Fake) (*tripLog, *dynamodb.Client) {
	l := &tripLog{next: http.DefaultTransport, clk: clk, done: t.Context().Done(), changed: make(chan struct{})}
	return l, dynamotest.ClientWith(t, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: l} })
}

// holdNext holds the next request whose trip reads what.
func (l *tripLog) holdNext(what string, before bool) *heldReq {
	h := &heldReq{what: what, before: before, held: make(chan struct{}), release: make(chan struct{})}
	l.mu.Lock()
	l.hold = h
	l.mu.Unlock()
	return h
}

func (l *tripLog) RoundTrip(req *http.Request) (*http.Response, error) {
	op := req.Header.Get("X-Amz-Target")
	op = op[strings.LastIndex(op, ".")+1:]
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	what := op + " " + recordsNamed(body)
	l.mu.Lock()
	i := len(l.trips)
	l.trips = append(l.trips, trip{at: l.clk.Now(), what: what})
	h := l.hold
	if h != nil && h.what == what {
		l.hold, h.at = nil, i
	} else {
		h = nil
	}
	l.mu.Unlock()
	wait := func() {
		close(h.held)
		select {
		case <-h.release:
		case <-l.done:
		}
	}
	if h != nil && h.before {
		wait()
	}
	resp, err := l.next.RoundTrip(req)
	if h != nil && !h.before {
		wait()
	}
	l.mu.Lock()
	l.trips[i].answered = true
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
	return resp, err
}

// log returns the trips so far.
func (l *tripLog) log() []trip {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.trips)
}

// await waits until cond holds of the trips.
func (l *tripLog) await(t *testing.T, cond func([]trip) bool) {
	t.Helper()
	for {
		l.mu.Lock()
		ok, ch := cond(l.trips), l.changed
		l.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-l.done:
			t.Fatal("the requests awaited never came")
		}
	}
}

// recordsNamed names the lease-table records a request's body names by
// their "key" attribute, sorted: "roster", "worker:<owner>",
// "token:<key>", or the lease key itself.
func recordsNamed(body []byte) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return "?"
	}
	names := map[string]bool{}
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			if k, ok := x["key"].(map[string]any); ok {
				if s, ok := k["S"].(string); ok {
					names[recordName(s)] = true
				}
			}
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(v)
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func recordName(key string) string {
	switch {
	case strings.HasPrefix(key, groupPrefix):
		rest := key[len(groupPrefix):]
		if i := strings.Index(rest, "\x00worker:"); i >= 0 {
			return "worker:" + rest[i+len("\x00worker:"):]
		}
		return "roster"
	case strings.HasPrefix(key, tokenPrefix):
		return "token:" + key[len(tokenPrefix):]
	}
	return key
}

// roundTrips returns the trips of path as round trips, in order: the two
// batch reads of a round's keys that Client.readAll sends at once — their
// records and their token records — are one round trip.
func roundTrips(path []trip) []string {
	batch := func(w string) (recs string, tokens, ok bool) {
		recs, found := strings.CutPrefix(w, "BatchGetItem ")
		if !found {
			return "", false, false
		}
		names := strings.Split(recs, ",")
		switch {
		case !slices.ContainsFunc(names, func(n string) bool { return !strings.HasPrefix(n, "token:") }):
			return strings.ReplaceAll(recs, "token:", ""), true, true
		case !slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, ":") || n == "roster" }):
			return recs, false, true
		}
		return "", false, false
	}
	var out []string
	pending := map[int]bool{} // indexes of out holding one half of a readAll pair
	for _, tr := range path {
		recs, tokens, ok := batch(tr.what)
		if ok {
			merged := false
			for i := range pending {
				if r, tk, _ := batch(out[i]); r == recs && tk != tokens {
					out[i] = "BatchGetItem " + recs + " + token records"
					delete(pending, i)
					merged = true
					break
				}
			}
			if merged {
				continue
			}
			pending[len(out)] = true
		}
		out = append(out, tr.what)
	}
	return out
}

// member returns the worker's incarnation running now.
func (w *worker) member() *member {
	w.g.mu.Lock()
	defer w.g.mu.Unlock()
	return w.g.cur
}

// heldKey returns the one key the member holds.
func (f *fleet) heldKey(m *member) string {
	f.t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.held) != 1 {
		f.t.Fatalf("holds %v, want one key", m.heldLocked())
	}
	for k := range m.held {
		return k
	}
	return ""
}

// stepToBeat steps the fleet until w's next heartbeat is one poll interval
// away.
func (f *fleet) stepToBeat(w *worker) {
	f.t.Helper()
	for range 2 * gBeat / gPoll {
		m := w.member()
		m.mu.Lock()
		next := m.deadline.Add(gBeat - gDur)
		m.mu.Unlock()
		if next.Sub(w.clk.Now()) == gPoll {
			return
		}
		f.step(gPoll)
	}
	f.t.Fatalf("%s's heartbeat is never one poll away", w.name)
}

// takeOf returns the index of the first trip in ts from index from on that
// took key (its transaction writes the key's token record).
func takeOf(t *testing.T, ts []trip, key string, from int) int {
	t.Helper()
	i := slices.IndexFunc(ts[from:], func(tr trip) bool {
		return strings.HasPrefix(tr.what, "TransactWriteItems ") && strings.Contains(tr.what, "token:"+key)
	})
	if i < 0 {
		t.Fatalf("no take of %q among %v", key, ts[from:])
	}
	return from + i
}

// roundUpTo returns the trips of ts sent at the instant at by the worker
// owner's balancer, before index end (inclusive): its own record's writes —
// heartbeats and publish, sent by other goroutines or after the take —
// left out.
func roundUpTo(ts []trip, owner string, at time.Time, end int) []trip {
	var out []trip
	for i, tr := range ts[:end+1] {
		if tr.at.Equal(at) && tr.what != "PutItem worker:"+owner {
			out = append(out, ts[i])
		}
	}
	return out
}

// The keys of a crashed worker are taken within d × r + 2p on the workers'
// clocks plus crashTrips round trips after its last heartbeat that got
// through, counted here on the worst way there: the taker's read of the
// crashed worker's record is answered just after that heartbeat landed
// (one trip), so the taker sees it a round later (two: the roster and the
// worker records); d × r on, a round reads again (two), marks the record
// ended (one), drops it from the roster (two: Update's read and write),
// reads the key's records (one: the record and the token record at once)
// and takes the key (one). No sleeps: requests are held and let go, and
// the clocks are stepped.
func TestGroupCrashBoundCountsRoundTrips(t *testing.T) {
	f := newFleet(t, 2)
	now := time.Now()
	clk1 := clock.NewFake(now)
	log1, client1 := newTripLog(t, clk1)
	w1 := f.startOn("w1", clk1, client1, f.work("w1"))
	w2 := f.start("w2", now)
	f.settle(time.Minute, f.balanced)
	f.stepToBeat(w2)
	m2 := w2.member()
	key := f.heldKey(m2)

	// w1's round reads w2's record; DynamoDB answers before w2's heartbeat
	// lands, and the answer reaches w1 after it.
	read := log1.holdNext("BatchGetItem worker:w2", false)
	w1.clk.Advance(gPoll)
	<-read.held
	w2.clk.Advance(gPoll)
	w2.clk.BlockUntil(t.Context().Done(), 3) // its heartbeat landed; its round is done
	m2.mu.Lock()
	lastBeat := m2.deadline.Add(-gDur)
	m2.mu.Unlock()
	if !lastBeat.Equal(w2.clk.Now()) || !w1.clk.Now().Equal(lastBeat) {
		t.Fatalf("w2's last heartbeat at %v, w1 at %v, w2 at %v: want one instant", lastBeat, w1.clk.Now(), w2.clk.Now())
	}
	f.mu.Lock()
	w2.frozen, f.stale["w2"] = true, true // crashed
	f.mu.Unlock()
	close(read.release)
	f.settle(time.Minute, f.balanced) // w1 holds both keys

	ts := log1.log()
	take := takeOf(t, ts, key, read.at)
	path := []trip{ts[read.at]}
	path = append(path, roundUpTo(ts, "w1", lastBeat.Add(gPoll), take)...)
	path = append(path, roundUpTo(ts, "w1", ts[take].at, take)...)
	got := roundTrips(path)
	want := []string{
		"BatchGetItem worker:w2",                   // answered after the last heartbeat landed
		"GetItem roster", "BatchGetItem worker:w2", // the round that sees it: the watch starts
		"GetItem roster", "BatchGetItem worker:w2", // d × r later
		"PutItem worker:w2",                   // marked ended
		"GetItem roster", "UpdateItem roster", // dropped from the roster
		"BatchGetItem " + key + " + token records",
		"TransactWriteItems " + key + ",token:" + key + ",worker:w1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("round trips on the way of the takeover:\n got %q\nwant %q", got, want)
	}
	if len(want) != crashTrips {
		t.Errorf("%d round trips on the way, the doc says %d", len(want), crashTrips)
	}
	took := ts[take].at.Sub(lastBeat)
	if bound := time.Duration(float64(gDur)*gSkew) + 2*gPoll; took < gDur || took > bound {
		t.Errorf("taken %v after the last heartbeat on the clocks, want between %v and %v", took, gDur, bound)
	}
	t.Logf("taken %v on the clocks + %d round trips after the last heartbeat: %q", took, len(got), got)
}

// The keys of a leaving worker are taken within p on the clocks plus
// leaveTrips round trips after its functions returned, counted here on the
// worst way there: a heartbeat of the leaver is in flight (one trip, which
// the leave waits for), then it marks its record ended (one); the taker's
// read of that record is answered just after (one), so the taker sees it
// a round later (two: the roster, which still lists the leaver, and the
// worker records), drops the leaver from the roster (two), reads the key's
// records (one) and takes it (one). The key's own release, sent as its
// function returned, has landed by then; the leaver's own roster update is
// held until the take.
func TestGroupLeaveBoundCountsRoundTrips(t *testing.T) {
	f := newFleet(t, 2)
	now := time.Now()
	clk1, clk2 := clock.NewFake(now), clock.NewFake(now)
	log1, client1 := newTripLog(t, clk1)
	log2, client2 := newTripLog(t, clk2)
	w1 := f.startOn("w1", clk1, client1, f.work("w1"))
	w2 := f.startOn("w2", clk2, client2, f.work("w2"))
	f.settle(time.Minute, f.balanced)
	f.stepToBeat(w2)
	m2 := w2.member()
	key := f.heldKey(m2)

	read := log1.holdNext("BatchGetItem worker:w2", false)
	w1.clk.Advance(gPoll)
	<-read.held // w1's round read w2's record; the answer is on its way
	beat := log2.holdNext("PutItem worker:w2", false)
	w2.clk.Advance(gPoll)
	<-beat.held                              // w2's heartbeat is in flight
	w2.clk.BlockUntil(t.Context().Done(), 2) // w2's round is done: the watchdog and its timer
	left := w2.clk.Now()
	roster := log2.holdNext("UpdateItem roster", true) // the leave's roster update (of the roster this worker wrote last: no read) waits
	from := len(log2.log())
	w2.cancel() // w2 leaves: its fn returns at once, its key is released
	log2.await(t, func(ts []trip) bool {
		return slices.ContainsFunc(ts[from:], func(tr trip) bool {
			// Its release: the record and the token record in one transaction.
			return tr.answered && tr.what == "TransactWriteItems "+strings.Join(slices.Sorted(slices.Values([]string{key, "token:" + key})), ",")
		})
	})
	close(beat.release)
	ended := -1
	log2.await(t, func(ts []trip) bool {
		ended = slices.IndexFunc(ts[from:], func(tr trip) bool { return tr.answered && tr.what == "PutItem worker:w2" })
		return ended >= 0
	})
	ended += from
	close(read.release)
	w1.clk.BlockUntil(t.Context().Done(), 3) // w1's round is done: w2 was live in its view
	w1.clk.Advance(gPoll)
	w1.clk.BlockUntil(t.Context().Done(), 3)
	if got := w1.g.Keys(); len(got) != 2 {
		t.Fatalf("w1 holds %v a poll interval after w2 left, want both keys", got)
	}
	close(roster.release)
	if err := <-w2.done; err != nil {
		t.Errorf("Run after leaving: %v", err)
	}
	w2.done <- nil // for the cleanup

	ts1, ts2 := log1.log(), log2.log()
	take := takeOf(t, ts1, key, read.at)
	path := []trip{ts2[beat.at], ts2[ended], ts1[read.at]}
	path = append(path, roundUpTo(ts1, "w1", ts1[take].at, take)...)
	got := roundTrips(path)
	want := []string{
		"PutItem worker:w2",                        // the heartbeat in flight when the functions returned
		"PutItem worker:w2",                        // marked ended
		"BatchGetItem worker:w2",                   // answered after it landed
		"GetItem roster", "BatchGetItem worker:w2", // the round that sees it
		"GetItem roster", "UpdateItem roster", // dropped from the roster
		"BatchGetItem " + key + " + token records",
		"TransactWriteItems " + key + ",token:" + key + ",worker:w1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("round trips on the way of the handover:\n got %q\nwant %q", got, want)
	}
	if len(want) != leaveTrips {
		t.Errorf("%d round trips on the way, the doc says %d", len(want), leaveTrips)
	}
	if took := ts1[take].at.Sub(left); took > gPoll {
		t.Errorf("taken %v after the leave on the clocks, want at most %v", took, gPoll)
	}
	t.Logf("taken %v on the clocks + %d round trips after the functions returned: %q", ts1[take].at.Sub(left), len(got), got)
}

// A worker whose clock runs 6 times slower than the others' — beyond
// d × r / heartbeat interval, 5 here — is silent between two of its
// heartbeats in their eyes: it is declared dead at rest over and over and
// joins again each time, while fencing holds throughout: the fleet's work
// checks every guarded write's token against the previous holder's, and
// no guarded write of a holder fails while it still holds the key.
func TestGroupSlowClockBeyondTheRateKeepsFencing(t *testing.T) {
	const slow = 6
	f := newFleet(t, 4)
	now := time.Now()
	w1 := f.start("w1", now)
	w2 := f.start("w2", now)
	f.settle(time.Minute, f.balanced)
	f.mu.Lock()
	f.stale["w2"] = true // its functions may run on after a takeover: that is what is lost
	f.mu.Unlock()
	incarnations := map[*member]bool{}
	for range 120 {
		w1.clk.Advance(gPoll)
		w2.clk.Advance(gPoll / slow)
		f.idle()
		if m := w2.member(); m != nil {
			incarnations[m] = true
		}
	}
	if len(incarnations) < 3 {
		t.Errorf("w2 ran %d incarnations in 120 s of a clock 6 times slow, want it declared dead over and over", len(incarnations))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range f.keys {
		ws := f.writes[k]
		for i := 1; i < len(ws); i++ {
			if ws[i].Token <= ws[i-1].Token {
				t.Errorf("key %q: %s wrote token %d after %s's %d", k, ws[i].Holder, ws[i].Token, ws[i-1].Holder, ws[i-1].Token)
			}
		}
	}
	t.Logf("w2 ran %d incarnations; guarded writes per key: %d %d %d %d", len(incarnations),
		len(f.writes[f.keys[0]]), len(f.writes[f.keys[1]]), len(f.writes[f.keys[2]]), len(f.writes[f.keys[3]]))
}
