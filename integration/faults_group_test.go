package integration

// The lease group part of the fault suite (see faults_test.go): workers of
// one group share keys, each over its own faulty DynamoDB transport; they
// join and leave while the work on every key appends "<token> <worker>" to
// the key's log with writes guarded by the key's lease. Checked: no key's
// work starts while another worker's lease on it is live, and every key's
// log is one holder's run after another with rising tokens. Each key's
// holdings, reads and guarded writes of its log are also checked with
// porcupine against the lease model (linear_test.go): a holding is an
// acquisition whose token the Group reported when it called the work, over
// an interval from before the worker could have sent the take (its Run's
// start, or its previous holding of the key's end) to that call; the work's
// return is a release (the holding reported over: no write of that token
// may land after it); the log is the resource.

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/leaktest"
	"github.com/ddbkit/dynamo/lease"
)

func TestFaultsGroup(t *testing.T) {
	leaktest.Check(t, "ddbkit/dynamo/lease.")
	const nkeys, d = 16, time.Second
	clean := dynamotest.Client(t)
	table := dynamotest.KeyTable(t, clean, "faults-group", "key", types.ScalarAttributeTypeS, "", "")
	logsName := dynamotest.KeyTable(t, clean, "faults-group-logs", "key", types.ScalarAttributeTypeS, "", "")
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	var mu sync.Mutex
	var rep faultReport
	var anomalies []string
	active := map[string]map[string]*lease.Lease{} // key → worker → its lease while its work runs
	var transports []*dynamotest.Faults

	lin := &linRecorder{}       // the history for the lease model, one partition per key
	ended := map[string]int64{} // worker NUL key → stamp of the end of its last holding of key
	work := func(name string, client int, runStart int64, logs *dynamo.Table[keyLog]) func(context.Context, *lease.Lease) error {
		return func(ctx context.Context, l *lease.Lease) error {
			k := l.Key()
			mu.Lock()
			for other, ol := range active[k] {
				if ol.Err() == nil {
					anomalies = append(anomalies, fmt.Sprintf("%s starts on %s (token %d) while %s's lease (token %d) is live", name, k, l.Token(), other, ol.Token()))
				}
			}
			if active[k] == nil {
				active[k] = map[string]*lease.Lease{}
			}
			active[k][name] = l
			since := max(runStart, ended[name+"\x00"+k])
			mu.Unlock()
			// The take landed after since (this Run started, or its last
			// holding of k ended) and before this call.
			lin.beginAt(client, leaseInput{Key: k, Kind: lkAcquire, Owner: name}, since).ok(l.Token())
			defer func() {
				lin.begin(client, leaseInput{Key: k, Kind: lkRelease, Owner: name, Token: l.Token()}).ok(nil)
				mu.Lock()
				delete(active[k], name)
				ended[name+"\x00"+k] = lin.now()
				mu.Unlock()
			}()
			for ctx.Err() == nil {
				time.Sleep(20 * time.Millisecond)
				read := lin.begin(client, leaseInput{Key: k, Kind: lkReadRes})
				cur, err := logs.Load(ctx, keyLog{Key: k}, dynamo.ConsistentRead())
				if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
					continue // a failed read: left out of the history
				}
				read.ok(groupLogValue(cur.Entries))
				if ctx.Err() != nil {
					break // Save would refuse it unsent
				}
				from := groupLogValue(cur.Entries)
				cur.Key = k
				cur.Entries = append(cur.Entries, fmt.Sprintf("%d %s", l.Token(), name))
				write := lin.begin(client, leaseInput{Key: k, Kind: lkWrite, Owner: name, Token: l.Token(), From: from, To: groupLogValue(cur.Entries)})
				_, err = lease.Save(ctx, l, logs, cur)
				if err == nil {
					write.ok(nil)
				} else {
					write.failed(err, mapperNotApplied)
				}
				mu.Lock()
				rep.Ops++
				if err == nil {
					rep.Acked++
				}
				mu.Unlock()
			}
			return nil
		}
	}
	type worker struct {
		cancel context.CancelFunc
		done   chan error
	}
	start := func(i int) *worker {
		name := fmt.Sprintf("w%d", i)
		f := dynamotest.NewFaults(faultConfig(t, uint64(900+i), scaled(150)), nil)
		mu.Lock()
		transports = append(transports, f)
		mu.Unlock()
		m := dynamo.NewMapper(f.Client(t, shortRetries(100*time.Millisecond)))
		lc, err := lease.New(m, table, lease.WithOwner(name), lease.WithLeaseDuration(d),
			lease.WithHeartbeatInterval(d/4), lease.WithPollInterval(50*time.Millisecond), lease.WithClockSkewRate(1.25))
		if err != nil {
			t.Fatal(err)
		}
		logs, err := dynamo.NewTable[keyLog](m, logsName)
		if err != nil {
			t.Fatal(err)
		}
		g, err := lc.Group("job", groupKeys(nkeys))
		if err != nil {
			t.Fatal(err)
		}
		wctx, wcancel := context.WithCancel(ctx)
		w := &worker{cancel: wcancel, done: make(chan error, 1)}
		fn := work(name, i, lin.now(), logs)
		go func() { w.done <- g.Run(wctx, fn) }()
		return w
	}
	stop := func(w *worker) {
		w.cancel()
		if err := <-w.done; err != nil {
			t.Logf("leaving through faults: %v", err) // its keys are taken after d × skew instead
		}
	}

	var ws []*worker
	for i := range 4 {
		ws = append(ws, start(i))
	}
	next := 4
	for range scaled(3) {
		time.Sleep(2 * time.Second)
		stop(ws[0]) // leave: handover
		ws = append(ws[1:], start(next))
		next++
	}
	time.Sleep(2 * time.Second)
	for _, w := range ws {
		stop(w)
	}

	// Every key's log: one holder's run after another, tokens rising.
	logs, err := dynamo.NewTable[keyLog](dynamo.NewMapper(clean), logsName)
	if err != nil {
		t.Fatal(err)
	}
	holders := 0
	for _, k := range groupKeys(nkeys) {
		kl, err := logs.Load(t.Context(), keyLog{Key: k}, dynamo.ConsistentRead())
		if err != nil {
			anomalies = append(anomalies, fmt.Sprintf("log of %s: %v", k, err))
			continue
		}
		lin.begin(next, leaseInput{Key: k, Kind: lkReadRes}).ok(groupLogValue(kl.Entries))
		var lastTok int64
		lastWorker := ""
		for i, e := range kl.Entries {
			var tok int64
			var w string
			if _, err := fmt.Sscanf(e, "%d %s", &tok, &w); err != nil {
				t.Fatalf("log of %s entry %d: %q", k, i, e)
			}
			switch {
			case tok < lastTok, tok == lastTok && w != lastWorker:
				anomalies = append(anomalies, fmt.Sprintf("log of %s entry %d: %q after token %d of %s: two holders", k, i, e, lastTok, lastWorker))
			case tok != lastTok:
				holders++
			}
			lastTok, lastWorker = tok, w
		}
	}
	for _, f := range transports {
		rep.Stats = rep.Stats.Add(f.Stats())
	}
	t.Logf("%d holdings over %d keys, %d workers in all", holders, nkeys, next)
	reportAnomalies(t, anomalies)
	nonLinear := checkLinear(t, "keys", leaseModel, nil, lin.history(), linCap, 30*time.Second).Anomalies()
	rep.Anomalies = len(anomalies) + nonLinear
	logFaults(t, rep)
}

// groupLogValue is a key's log as the lease model's resource holds it: the
// number of entries, the last one, and a hash of them all (a history holds
// every value read and written: a few bytes each, not the whole log).
func groupLogValue(entries []string) string {
	if len(entries) == 0 {
		return ""
	}
	h := fnv.New64a()
	for _, e := range entries {
		h.Write([]byte(e))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%d, last %q, #%016x", len(entries), entries[len(entries)-1], h.Sum64())
}

// TestLinearGroupRefusesBrokenClients: the lease model on a group's key as
// TestFaultsGroup records it — holdings called from before the take could
// have been sent, ended by the work's return — accepts handovers with
// rising tokens, a take that landed while the old holder still wrote, and a
// write lost in a handover that landed; it refuses a worker that writes
// with its token after its key was handed over, one that writes after its
// work was told the key is gone (fencing bypassed), a recorder that fakes
// two holders with the same token, and tokens going backwards.
func TestLinearGroupRefusesBrokenClients(t *testing.T) {
	hold := func(owner string) leaseInput { return leaseInput{Key: "k", Kind: lkAcquire, Owner: owner} }
	end := func(owner string, tok int64) leaseInput {
		return leaseInput{Key: "k", Kind: lkRelease, Owner: owner, Token: tok}
	}
	write := func(owner string, tok int64, from, to string) leaseInput {
		return leaseInput{Key: "k", Kind: lkWrite, Owner: owner, Token: tok, From: from, To: to}
	}
	read := leaseInput{Key: "k", Kind: lkReadRes}
	runLinCases(t, leaseModel, nil, []linCase{
		{"handovers, tokens rising", []porcupine.Operation{
			lop(0, 1, 3, hold("a"), int64(1)),
			lop(1, 2, 12, hold("b"), int64(2)), // b's Run started at 2; its work called at 12
			lop(0, 4, 5, read, ""),
			lop(0, 6, 7, write("a", 1, "", "x"), nil),
			lop(0, 8, 9, write("a", 1, "x", "xy"), nil),
			lop(0, 10, 11, end("a", 1), nil),
			lop(1, 13, 14, read, "xy"),
			lop(1, 15, 16, write("b", 2, "xy", "xyz"), nil),
			lop(1, 17, 18, end("b", 2), nil),
			lop(0, 19, 22, hold("a"), int64(3)), // a's earlier holding ended at 18
			lop(2, 23, 24, read, "xyz"),
		}, true},
		{"taken over while the old holder still wrote", []porcupine.Operation{
			// a's lease ran out on b's clock, not yet on its own: its
			// write after the take is refused, and its work ends later.
			lop(0, 1, 2, hold("a"), int64(1)),
			lop(0, 3, 4, write("a", 1, "", "x"), nil),
			lop(1, 2, 6, hold("b"), int64(2)),
			lop(0, 7, 8, write("a", 1, "x", "xa"), linRefused{}),
			lop(1, 9, 10, write("b", 2, "x", "xb"), nil),
			lop(0, 11, 12, end("a", 1), nil),
			lop(2, 13, 14, read, "xb"),
		}, true},
		{"a write lost in the handover, landed", []porcupine.Operation{
			lop(0, 1, 2, hold("a"), int64(1)),
			lop(0, 3, 0, write("a", 1, "", "x"), nil), // its ctx cancelled by the handover
			lop(0, 4, 5, end("a", 1), nil),
			lop(1, 2, 6, hold("b"), int64(2)),
			lop(1, 7, 8, read, "x"),
		}, true},
		{"a write with the token after the key was handed over", []porcupine.Operation{
			lop(0, 1, 2, hold("a"), int64(1)),
			lop(1, 2, 4, hold("b"), int64(2)),
			lop(0, 5, 6, write("a", 1, "", "x"), nil),
		}, false},
		{"a write after the work was told the key is gone", []porcupine.Operation{
			lop(0, 1, 2, hold("a"), int64(1)),
			lop(0, 3, 4, end("a", 1), nil),
			lop(0, 5, 6, write("a", 1, "", "x"), nil),
		}, false},
		{"two holders with the same token", []porcupine.Operation{
			lop(0, 1, 2, hold("a"), int64(1)),
			lop(0, 3, 4, end("a", 1), nil),
			lop(1, 1, 6, hold("b"), int64(1)),
		}, false},
		{"tokens going backwards", []porcupine.Operation{
			lop(0, 1, 2, hold("a"), int64(2)),
			lop(0, 3, 4, end("a", 2), nil),
			lop(1, 5, 6, hold("b"), int64(1)),
		}, false},
		{"a write from a stale read", []porcupine.Operation{
			lop(0, 1, 2, hold("a"), int64(1)),
			lop(0, 3, 4, write("a", 1, "", "x"), nil),
			lop(0, 5, 6, end("a", 1), nil),
			lop(1, 1, 7, hold("b"), int64(2)),
			lop(1, 8, 9, write("b", 2, "", "y"), nil),
		}, false},
	})
	if groupLogValue([]string{"1 a", "2 b"}) == groupLogValue([]string{"1 c", "2 b"}) || groupLogValue(nil) != "" {
		t.Error("groupLogValue: two logs read as one, or an empty log as not empty")
	}
}
