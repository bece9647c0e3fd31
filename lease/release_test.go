package lease

import (
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// groupLeases takes keys for g's worker incarnation attempt in batches and
// returns a group Lease of each, ending with the test.
func groupLeases(t *testing.T, g *Group, attempt string, keys []string) []*Lease {
	t.Helper()
	views, err := g.c.readAll(t.Context(), keys)
	if err != nil {
		t.Fatal(err)
	}
	var ls []*Lease
	for i, r := range takeAll(t, g, attempt, keys, views) {
		if r.err != nil {
			t.Fatalf("taking %q: %v", keys[i], r.err)
		}
		ls = append(ls, newGroupLease(g.c, r.rec, r.sentAt, t.Context()))
	}
	return ls
}

// A batched release whose transaction is cancelled because two of its keys
// were taken by another worker meanwhile (their records released by an
// earlier write of ours, then taken) and one key's record moved on (an
// expiry write of ours) leaves the two as the other holds them (record and
// token record), releases the moved one at its new version and every other
// key with its token record, and reports no error: no key is held by two,
// in at most one transaction per key that failed, and one.
func TestGroupBatchedReleaseCancelledHalfwayLeavesNoKeyDoublyHeld(t *testing.T) {
	table := leaseTable(t)
	keys := batchKeys(40)
	cnt := &opCounter{next: http.DefaultTransport}
	client := dynamotest.ClientWith(t, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: cnt} })
	ga, err := newClient(t, table, client, WithOwner("a")).Group("rel", keys)
	if err != nil {
		t.Fatal(err)
	}
	gb, err := newClient(t, table, nil, WithOwner("b")).Group("rel", keys)
	if err != nil {
		t.Fatal(err)
	}
	joinAs(t, ga, "inc-a")
	joinAs(t, gb, "inc-b")
	ls := groupLeases(t, ga, "inc-a", keys)
	taken := map[string]*Lease{} // by b
	for _, i := range []int{5, 30} {
		rec := ls[i].rec
		rec.Released = true
		if _, err := ga.c.table.Save(t.Context(), rec, dynamo.WithSaveBehavior(dynamo.SavePut)); err != nil {
			t.Fatal(err)
		}
		taken[keys[i]] = groupLeases(t, gb, "inc-b", keys[i:i+1])[0]
	}
	moved := ls[12]
	next := moved.rec
	next.Expires++
	saved, err := ga.c.table.Save(t.Context(), next, dynamo.WithSaveBehavior(dynamo.SavePut))
	if err != nil {
		t.Fatal(err)
	}
	cnt.reset()
	for i, err := range ga.c.releaseMany(t.Context(), ls) {
		if err != nil {
			t.Errorf("releasing %q: %v", keys[i], err)
		}
	}
	if got := cnt.writes.Load(); got < 2 || got > 4 {
		// DynamoDB names every failed member; DynamoDB Local, the first.
		t.Errorf("%d writes, want 2 to 4: cancelled, then sent without the keys that failed", got)
	}
	recs, toks := readBoth(t, ga.c, keys)
	for i, k := range keys {
		rec, tok := recs[k], toks[k]
		if l := taken[k]; l != nil {
			if rec.Owner != "b" || rec.Released || rec.Token != l.Token() || tok.Released || tok.Token != l.Token() {
				t.Errorf("%q, taken by b: record %+v, token record %+v; want b's, token %d, held", k, rec, tok, l.Token())
			}
			continue
		}
		if rec.Owner != "a" || !rec.Released || rec.Token != ls[i].Token() || !tok.Released {
			t.Errorf("%q: record %+v, token record %+v; want a's, released", k, rec, tok)
		}
		if ls[i].Err() == nil {
			t.Errorf("%q: the lease has not ended", k)
		}
	}
	if rec := recs[keys[12]]; rec.Version != saved.Version+1 {
		t.Errorf("the moved key's record at version %d, want %d: released over the write that moved it", rec.Version, saved.Version+1)
	}
}

// A batched release whose answer is lost (applied, the client told of a
// reset, no retry) is settled by reading the records back, as a single
// Release settles one: no error, every record and token record released,
// every lease ended.
func TestGroupBatchedReleaseLostAnswerReadsBack(t *testing.T) {
	table := leaseTable(t)
	keys := batchKeys(30)
	drop := dynamotest.NewDropper("TransactWriteItems")
	client := drop.Client(t, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	g, err := newClient(t, table, client, WithOwner("a")).Group("lost", keys)
	if err != nil {
		t.Fatal(err)
	}
	joinAs(t, g, "inc-a")
	ls := groupLeases(t, g, "inc-a", keys)
	drop.Arm(1)
	for i, err := range g.c.releaseMany(t.Context(), ls) {
		if err != nil {
			t.Errorf("releasing %q: %v", keys[i], err)
		}
	}
	if drop.Dropped() != 1 {
		t.Fatalf("dropped %d answers, want 1", drop.Dropped())
	}
	recs, toks := readBoth(t, g.c, keys)
	for i, k := range keys {
		if rec, tok := recs[k], toks[k]; rec.Owner != "a" || !rec.Released || !tok.Released || ls[i].Err() == nil {
			t.Errorf("%q: record %+v, token record %+v, lease %v; want released", k, rec, tok, ls[i].Err())
		}
	}
}
