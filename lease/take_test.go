package lease

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
)

// takeAll takes keys, whose records read views, for g's worker
// incarnation attempt as a round does: in transactions of up to takesPerTx
// keys, several at once.
func takeAll(t *testing.T, g *Group, attempt string, keys []string, views []view) []taken {
	out := make([]taken, len(keys))
	floors := make([]int64, len(keys))
	inBatches(len(keys), takesPerTx, txAtOnce, func(lo, hi int) {
		copy(out[lo:hi], g.c.writeMany(t.Context(), keys[lo:hi], views[lo:hi], floors[lo:hi], g.claim(attempt)))
	})
	return out
}

// joinAs writes the worker record of g's owner as the live incarnation
// attempt.
func joinAs(t *testing.T, g *Group, attempt string) workerRecord {
	t.Helper()
	w, err := g.workers.Save(t.Context(), workerRecord{Key: g.workerKey(g.c.o.owner), Owner: g.c.o.owner, Attempt: attempt, DurationMS: 1000},
		dynamo.WithSaveBehavior(dynamo.SavePut))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// joinedGroup returns owner a's group name over keys on client (nil: a
// plain one), joined as incarnation inc-a, and the views of keys it reads.
func joinedGroup(t *testing.T, table string, client *dynamodb.Client, name string, keys []string) (*Group, []view) {
	t.Helper()
	g, err := newClient(t, table, client, WithOwner("a")).Group(name, keys)
	if err != nil {
		t.Fatal(err)
	}
	joinAs(t, g, "inc-a")
	views, err := g.c.readAll(t.Context(), keys)
	if err != nil {
		t.Fatal(err)
	}
	return g, views
}

// batchKeys returns n keys.
func batchKeys(n int) []string {
	var ks []string
	for i := range n {
		ks = append(ks, fmt.Sprintf("k-%03d", i))
	}
	return ks
}

// readBoth reads keys' records and token records.
func readBoth(t *testing.T, c *Client, keys []string) (map[string]*record, map[string]tokenRecord) {
	t.Helper()
	recs := map[string]*record{}
	toks := map[string]tokenRecord{}
	var rk []record
	var tk []tokenRecord
	for _, k := range keys {
		rk, tk = append(rk, record{Key: k}), append(tk, tokenRecord{Key: tokenKey(k)})
	}
	rs, rf, err := c.table.BatchLoadIndexed(t.Context(), rk, dynamo.ConsistentRead())
	if err != nil {
		t.Fatal(err)
	}
	ts, tf, err := c.tokens.BatchLoadIndexed(t.Context(), tk, dynamo.ConsistentRead())
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if rf[i] {
			recs[k] = &rs[i]
		}
		if tf[i] {
			toks[k] = ts[i]
		}
	}
	return recs, toks
}

// Two workers racing, again and again, to take the same 150 keys in
// batched transactions (their batches cut at different keys, so that
// transactions are cancelled for some of their keys and sent again without
// them): every key goes to at most one of them per race, its records name
// that one with the token it was told, and every token is above the
// key's earlier ones. A key neither took is left as it was.
func TestGroupBatchedTakesRacingHoldEachKeyOnce(t *testing.T) {
	table := leaseTable(t)
	keys := batchKeys(150)
	var gs []*Group
	var order [][]string // the keys in the order each worker takes them
	for i, name := range []string{"a", "b"} {
		g, err := newClient(t, table, nil, WithOwner(name)).Group("race", keys)
		if err != nil {
			t.Fatal(err)
		}
		joinAs(t, g, "inc-"+name)
		gs = append(gs, g)
		shift := i * takesPerTx / 2
		order = append(order, append(slices.Clone(keys[shift:]), keys[:shift]...))
	}
	last := map[string]int64{} // key → its latest token
	for race := range 4 {
		views := make([][]view, len(gs))
		for i, g := range gs {
			var err error
			if views[i], err = g.c.readAll(t.Context(), order[i]); err != nil {
				t.Fatal(err)
			}
		}
		before, _ := readBoth(t, gs[0].c, keys)
		results := make([]map[string]taken, len(gs))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, g := range gs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				rs := takeAll(t, g, "inc-"+g.c.o.owner, order[i], views[i])
				results[i] = map[string]taken{}
				for j, k := range order[i] {
					results[i][k] = rs[j]
				}
			}()
		}
		close(start)
		wg.Wait()
		recs, toks := readBoth(t, gs[0].c, keys)
		won := map[string]int{}
		for _, k := range keys {
			winner, token := "", int64(0)
			for i, g := range gs {
				switch r := results[i][k]; {
				case r.err == nil && winner != "":
					t.Errorf("race %d: %q taken by %s and %s", race, k, winner, g.c.o.owner)
				case r.err == nil:
					winner, token = g.c.o.owner, r.rec.Token
				case !errors.Is(r.err, errRace):
					t.Errorf("race %d: %s taking %q: %v, want nil or errRace", race, g.c.o.owner, k, r.err)
				}
			}
			rec, tok := recs[k], toks[k]
			switch {
			case winner == "":
				if b := before[k]; (b == nil) != (rec == nil) || (rec != nil && (rec.Attempt != b.Attempt || rec.Version != b.Version)) {
					t.Errorf("race %d: %q taken by nobody, yet its record changed: %+v, then %+v", race, k, b, rec)
				}
				continue
			case rec == nil || rec.Owner != winner || rec.Worker != "inc-"+winner || rec.Token != token || tok.Token != token:
				t.Errorf("race %d: %q taken by %s with token %d; record %+v, token record %+v", race, k, winner, token, rec, tok)
			case token <= last[k]:
				t.Errorf("race %d: %q taken by %s with token %d, not above %d", race, k, winner, token, last[k])
			}
			last[k] = token
			won[winner]++
		}
		if len(won) == 0 {
			t.Errorf("race %d: no key taken", race)
		}
		t.Logf("race %d: keys won %v", race, won)
	}
}

// A batched take whose transaction is cancelled because two of its keys
// were taken by another since the read leaves those two as the other
// holds them (its token, in the record and the token record), sends the
// transaction again without them, and takes every other key once: no key
// is held by two. Three transactions (two with a key taken meanwhile)
// cost five.
func TestGroupBatchedTakeCancelledHalfwayLeavesNoKeyDoublyHeld(t *testing.T) {
	table := leaseTable(t)
	keys := batchKeys(2*takesPerTx + 2)
	cnt := &opCounter{next: http.DefaultTransport}
	client := dynamotest.ClientWith(t, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: cnt} })
	g, views := joinedGroup(t, table, client, "half", keys)
	other := newClient(t, table, nil, WithOwner("other"))
	held := map[string]*Lease{} // by the other
	for _, k := range []string{keys[10], keys[takesPerTx+10]} {
		l, err := other.TryAcquire(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		held[k] = l
	}
	cnt.reset()
	results := takeAll(t, g, "inc-a", keys, views)
	if got := cnt.writes.Load(); got != 5 {
		t.Errorf("%d transactions sent, want 5: two cancelled, sent again without their taken key, and one", got)
	}
	recs, toks := readBoth(t, g.c, keys)
	for i, k := range keys {
		rec, tok, r := recs[k], toks[k], results[i]
		if l := held[k]; l != nil {
			if !errors.Is(r.err, errRace) || rec.Owner != "other" || rec.Token != l.Token() || tok.Token != l.Token() {
				t.Errorf("%q, taken by another since the read: take %v, record %+v, token record %+v, want errRace and the other's token %d", k, r.err, rec, tok, l.Token())
			}
			continue
		}
		if r.err != nil || rec.Owner != "a" || rec.Token != r.rec.Token || tok.Token != r.rec.Token {
			t.Errorf("%q: take %v, record %+v, token record %+v", k, r.err, rec, tok)
		}
	}
}

// A batched take by a worker incarnation whose record was ended (by others
// that declared it dead) is refused for every key, and writes nothing.
func TestGroupBatchedTakeOfEndedWorkerWritesNothing(t *testing.T) {
	table := leaseTable(t)
	keys := batchKeys(60)
	g, err := newClient(t, table, nil, WithOwner("a")).Group("ended", keys)
	if err != nil {
		t.Fatal(err)
	}
	w := joinAs(t, g, "inc-a")
	w.Ended = true
	if _, err := g.workers.Save(t.Context(), w, dynamo.WithSaveBehavior(dynamo.SavePut)); err != nil {
		t.Fatal(err)
	}
	views, err := g.c.readAll(t.Context(), keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range takeAll(t, g, "inc-a", keys, views) {
		if !errors.Is(r.err, errClaimRefused) {
			t.Errorf("%q: %v, want errClaimRefused", keys[i], r.err)
		}
	}
	if recs, toks := readBoth(t, g.c, keys); len(recs) > 0 || len(toks) > 0 {
		t.Errorf("%d records and %d token records written, want none", len(recs), len(toks))
	}
}

// A batched take of keys whose records were written without a version
// (none stored, or NULL: by hand, or by other code) and released takes
// them, as a single take would, with a token above the one stored, and
// leaves a versioned record.
func TestGroupBatchedTakeOfUnversionedRecords(t *testing.T) {
	table := leaseTable(t)
	keys := batchKeys(2)
	raw := dynamotest.Client(t)
	put := func(key string, released bool, version types.AttributeValue) {
		item := map[string]types.AttributeValue{
			"key": &types.AttributeValueMemberS{Value: key}, "owner": &types.AttributeValueMemberS{Value: "old"},
			"token": &types.AttributeValueMemberN{Value: "5"}, "released": &types.AttributeValueMemberBOOL{Value: released},
			"duration_ms": &types.AttributeValueMemberN{Value: "1000"},
		}
		if version != nil {
			item["version"] = version
		}
		if _, err := raw.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: &table, Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	put(keys[0], true, nil)
	put(keys[1], true, &types.AttributeValueMemberNULL{Value: true})
	g, views := joinedGroup(t, table, nil, "unversioned", keys)
	results := takeAll(t, g, "inc-a", keys, views)
	recs, _ := readBoth(t, g.c, keys)
	for i, k := range keys {
		if r, rec := results[i], recs[k]; r.err != nil || rec.Owner != "a" || rec.Token <= 5 || rec.Version < 1 {
			t.Errorf("%q: take %v, record %+v; want a's, token above 5, versioned", k, r.err, rec)
		}
	}
}

// takeHook is a transport that runs hook on the first TransactWriteItems
// whose body names key, then reports a connection reset to the client: after
// the server applied the request (applied), or without sending it. Other
// requests pass.
type takeHook struct {
	key     string
	applied bool
	hook    func()
	fired   atomic.Bool
}

func (h *takeHook) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".TransactWriteItems") || h.fired.Load() {
		return http.DefaultTransport.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if !bytes.Contains(body, []byte(strconv.Quote(h.key))) || !h.fired.CompareAndSwap(false, true) {
		return http.DefaultTransport.RoundTrip(r)
	}
	if h.applied {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	h.hook()
	return nil, syscall.ECONNRESET
}

// A batched take whose outcome is unknown (its answer lost after DynamoDB
// applied it, or its request lost before) while a single TryAcquire of one
// of its keys runs in between: the key ends held by exactly one of them.
// Applied: TryAcquire is refused (ErrHeld) and the worker holds every key,
// adopting its landed take. Not applied: TryAcquire takes the key, and the
// worker holds every other key and never that one while the lease is held.
func TestGroupBatchedTakeUnknownOutcomeBesideSingleAcquire(t *testing.T) {
	for _, applied := range []bool{true, false} {
		t.Run(map[bool]string{true: "applied", false: "not-applied"}[applied], func(t *testing.T) {
			f := newFleet(t, 6)
			key := f.keys[2]
			solo := newClient(t, f.table, nil, WithOwner("solo"), WithLeaseDuration(time.Hour),
				WithHeartbeatInterval(20*time.Minute), WithPollInterval(gPoll), WithClockSkewRate(gSkew))
			var l *Lease
			var soloErr error
			h := &takeHook{key: key, applied: applied, hook: func() {
				l, soloErr = solo.TryAcquire(context.Background(), key)
			}}
			client := dynamotest.ClientWith(t, func(o *dynamodb.Options) {
				o.HTTPClient = &http.Client{Transport: h}
				o.RetryMaxAttempts = 1
			})
			w := f.startWith("w1", time.Now(), client)
			want := len(f.keys)
			if !applied {
				want--
			}
			f.settle(time.Minute, func() bool { return len(w.g.Keys()) == want })
			if !h.fired.Load() {
				t.Fatal("no batched take of the key was sent")
			}
			switch {
			case applied && !errors.Is(soloErr, ErrHeld):
				t.Fatalf("TryAcquire after the landed take: %v, want ErrHeld", soloErr)
			case !applied && soloErr != nil:
				t.Fatalf("TryAcquire after the lost take request: %v", soloErr)
			}
			for range 10 {
				f.step(gPoll)
				if held := slices.Contains(w.g.Keys(), key); held != applied {
					t.Fatalf("worker holds %q: %v, want %v (TryAcquire: %v)", key, held, applied, soloErr)
				}
			}
			info, err := solo.Holder(t.Context(), key)
			if err != nil {
				t.Fatal(err)
			}
			if tok := f.tokens()[key]; applied && (info.Owner != "w1" || info.Token != tok) || !applied && (info.Owner != "solo" || info.Token != l.Token()) {
				t.Errorf("%q's record: %+v; worker's token %d", key, info, tok)
			}
			if l != nil {
				if err := l.Release(t.Context()); err != nil {
					t.Fatal(err)
				}
				f.settle(time.Minute, func() bool { return len(w.g.Keys()) == len(f.keys) })
				if tok := f.tokens()[key]; tok <= l.Token() {
					t.Errorf("%q taken after the release with token %d, want above %d", key, tok, l.Token())
				}
			}
		})
	}
}

// Workers of two groups over the same keys, whose records were held by
// single leases and released, race for them in batched takes: each key goes
// to one worker at a time (the fleet's work checks), with a token above the
// released one. When one group's worker leaves, the other's takes its keys,
// each with a token above the one it left.
func TestGroupsOfTwoNamesRaceForReleasedKeys(t *testing.T) {
	f := newFleet(t, takesPerTx+6)
	solo := newClient(t, f.table, nil, WithOwner("solo"))
	released := map[string]int64{}
	for _, k := range f.keys {
		l, err := solo.TryAcquire(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
		released[k] = l.Token()
	}
	now := time.Now()
	a := f.startIn("blue", "a", clock.NewFake(now), nil, f.work("a"))
	b := f.startIn("green", "b", clock.NewFake(now), nil, f.work("b"))
	all := func() bool { return len(a.g.Keys())+len(b.g.Keys()) == len(f.keys) }
	f.settle(time.Minute, all)
	for _, k := range a.g.Keys() {
		if slices.Contains(b.g.Keys(), k) {
			t.Errorf("%q held by both groups", k)
		}
	}
	before := f.tokens()
	for k, tok := range before {
		if tok <= released[k] {
			t.Errorf("%q taken with token %d, want above the released %d", k, tok, released[k])
		}
	}
	t.Logf("blue holds %d keys, green %d", len(a.g.Keys()), len(b.g.Keys()))
	left := a.g.Keys()
	a.cancel()
	if err := <-a.done; err != nil {
		t.Fatalf("blue's Run on leaving: %v", err)
	}
	a.done <- nil // for the cleanup
	f.settle(time.Minute, func() bool { return len(b.g.Keys()) == len(f.keys) })
	after := f.tokens()
	for _, k := range left {
		if after[k] <= before[k] {
			t.Errorf("%q taken from the leaving group with token %d, want above %d", k, after[k], before[k])
		}
	}
}
