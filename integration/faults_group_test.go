package integration

// The lease group part of the fault suite (see faults_test.go): workers of
// one group share keys, each over its own faulty DynamoDB transport; they
// join and leave while the work on every key appends "<token> <worker>" to
// the key's log with writes guarded by the key's lease. Checked: no key's
// work starts while another worker's lease on it is live, and every key's
// log is one holder's run after another with rising tokens.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

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

	work := func(name string, logs *dynamo.Table[keyLog]) func(context.Context, *lease.Lease) error {
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
			mu.Unlock()
			defer func() {
				mu.Lock()
				delete(active[k], name)
				mu.Unlock()
			}()
			for ctx.Err() == nil {
				time.Sleep(20 * time.Millisecond)
				cur, err := logs.Load(ctx, keyLog{Key: k}, dynamo.ConsistentRead())
				if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
					continue
				}
				cur.Key = k
				cur.Entries = append(cur.Entries, fmt.Sprintf("%d %s", l.Token(), name))
				_, err = lease.Save(ctx, l, logs, cur)
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
		go func() { w.done <- g.Run(wctx, work(name, logs)) }()
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
	rep.Anomalies = len(anomalies)
	t.Logf("%d holdings over %d keys, %d workers in all", holders, nkeys, next)
	reportAnomalies(t, anomalies)
	logFaults(t, rep)
}
