package integration

// The backfill part of the fault suite (see faults_test.go): a migration
// shared by two runners while four live writers run version-checked Updates
// on random items, every runner and writer over its own faulty DynamoDB
// transport (its item writes, scans, checkpoints and lease requests alike).
// Both runners are stopped part-way and started again; a runner whose Run fails
// (a request that failed after the SDK's retries, a lease lost) is started
// again too, as a new process would be, with a new transport. Checked
// afterwards, without faults, by checkBackfill: every item changed exactly
// once and marked, every acknowledged live write there and none twice, every
// version accounted for.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/backfill"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/leaktest"
)

func TestFaultsBackfill(t *testing.T) {
	leaktest.Check(t, "ddbkit/dynamo/backfill.")
	const id = "faults"
	n := scaled(1000)
	table, leaseTable := bfTables(t, dynamotest.Client(t), n)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	var mu sync.Mutex
	var transports []*dynamotest.Faults
	newClient := func(salt uint64) *dynamodb.Client {
		f := dynamotest.NewFaults(faultConfig(t, salt, scaled(300)), nil)
		mu.Lock()
		transports = append(transports, f)
		mu.Unlock()
		return f.Client(t)
	}

	var tables []*dynamo.Table[bfAccount]
	for g := range 4 {
		tb, err := dynamo.NewTable[bfAccount](dynamo.NewMapper(newClient(uint64(1100+g))), table)
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, tb)
	}
	stopWriters := bfWriters(tables, n, *faultSeed)

	// Each runner runs until its Run returns nil (the whole migration is
	// done), each incarnation a new "process": new transport, new lease
	// client, new owner name. Each runner is also stopped part-way once,
	// whatever else ended its earlier runs: a once its runs have changed
	// n/8 items (a quarter of its share), b at n/4.
	var changed atomic.Int64
	stopAt := []int64{int64(n / 8), int64(n / 4)}
	var stopped [2]atomic.Bool
	type runnerResult struct {
		runs     int
		finished bool
		causes   map[string]int // why the incarnations before the last ended
	}
	results := make([]runnerResult, 2)
	var wg sync.WaitGroup
	for ri, name := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := runnerResult{causes: map[string]int{}}
			var prior int64 // changed by its earlier runs
			defer func() { results[ri] = res }()
			for ctx.Err() == nil && res.runs < 40 {
				res.runs++
				owner := fmt.Sprintf("%s%d", name, res.runs)
				r, err := newBFRunner(newClient(uint64(1200+100*ri+res.runs)), table, leaseTable, id, owner, backfill.PageSize(25))
				if err != nil {
					t.Error(err)
					return
				}
				rctx, rcancel := context.WithCancel(ctx)
				watched := make(chan struct{})
				if !stopped[ri].Load() {
					go func() { // the deliberate stop
						defer close(watched)
						tick := time.NewTicker(5 * time.Millisecond)
						defer tick.Stop()
						for rctx.Err() == nil {
							select {
							case <-tick.C:
							case <-rctx.Done():
								return
							}
							if prior+r.m.Progress().Changed >= stopAt[ri] {
								stopped[ri].Store(true)
								rcancel()
							}
						}
					}()
				} else {
					close(watched)
				}
				err = r.m.Run(rctx)
				rcancel()
				<-watched
				p := r.m.Progress()
				changed.Add(p.Changed)
				prior += p.Changed
				r.close()
				if err == nil {
					res.finished = true
					return
				}
				res.causes[backfillCause(err)]++
				t.Logf("runner %s ended after %d changed: %v", owner, p.Changed, err)
			}
		}()
	}
	wg.Wait()
	live := stopWriters()
	var stats dynamotest.FaultStats
	for _, f := range transports {
		f.Stop()
		stats = stats.Add(f.Stats())
	}

	anomalies := checkBackfill(bfFinal(t, table), n, id, live)
	reportAnomalies(t, anomalies)
	for i, res := range results {
		t.Logf("runner %c: %d runs, finished %v; earlier runs ended by: %v", 'a'+i, res.runs, res.finished, res.causes)
		if !res.finished {
			t.Errorf("runner %c did not see the migration finish in %d runs", 'a'+i, res.runs)
		}
		if !stopped[i].Load() {
			t.Errorf("runner %c was never stopped part-way: the test did not restart it", 'a'+i)
		}
	}
	acked, unknown := live.total()
	t.Logf("%d items; %d live writes acknowledged, %d failed %v; %d items changed by the runners as they counted",
		n, acked, unknown, live.Errors, changed.Load())
	if acked == 0 {
		t.Errorf("no live write was acknowledged: the writers did not write during the migration")
	}
	logFaults(t, faultReport{Ops: int(acked+unknown) + n, Acked: int(acked) + int(changed.Load()), Anomalies: len(anomalies), Stats: stats})
}

// backfillCause names why a Run under faults ended, for the log.
func backfillCause(err error) string {
	msg := err.Error()
	for _, c := range []string{"stopped before its end", "retry quota exceeded", "exceeded maximum number of attempts", "lease", "may have been applied"} {
		if strings.Contains(msg, c) {
			return c
		}
	}
	return "other"
}

// TestFaultsBackfillCheckerCatchesAnomalies shows that checkBackfill can
// fail: a consistent end state passes, and each doctored one — an item not
// migrated, migrated twice, without the mark, missing, extra, an
// acknowledged live write lost, a live write applied twice, a version off —
// is reported. No server is needed.
func TestFaultsBackfillCheckerCatchesAnomalies(t *testing.T) {
	const id = "m"
	base := func() ([]bfStored, bfLive) {
		final := []bfStored{
			{ID: bfKey(0), Version: 2, Migrated: 1, Mark: id},
			{ID: bfKey(1), Version: 4, Hits: 2, Migrated: 1, Mark: id}, // 2 acked
			{ID: bfKey(2), Version: 3, Hits: 1, Migrated: 1, Mark: id}, // 0 acked, 1 failed: applied
			{ID: bfKey(3), Version: 3, Hits: 1, Migrated: 1, Mark: id}, // 1 acked, 1 failed: not applied
		}
		return final, bfLive{Acked: []int64{0, 2, 0, 1}, Unknown: []int64{0, 0, 1, 1}}
	}
	final, live := base()
	if a := checkBackfill(final, 4, id, live); len(a) != 0 {
		t.Fatalf("a consistent end state: %q; want no anomaly", a)
	}
	for _, tc := range []struct {
		name   string
		doctor func(f []bfStored) []bfStored
		want   string
	}{
		{"not migrated", func(f []bfStored) []bfStored { f[0].Migrated, f[0].Version = 0, 1; return f }, "not migrated"},
		{"migrated twice", func(f []bfStored) []bfStored { f[1].Migrated, f[1].Version = 2, 5; return f }, "migrated 2 times"},
		{"no mark", func(f []bfStored) []bfStored { f[2].Mark = ""; return f }, `mark "", want "m"`},
		{"missing", func(f []bfStored) []bfStored { return f[1:] }, "item acct-000000 is missing"},
		{"extra", func(f []bfStored) []bfStored {
			return append(f, bfStored{ID: bfKey(9), Version: 2, Migrated: 1, Mark: id})
		}, "item acct-000009 was never filled"},
		{"acknowledged write lost", func(f []bfStored) []bfStored { f[1].Hits, f[1].Version = 1, 3; return f }, "1 acknowledged live writes lost"},
		{"write applied twice", func(f []bfStored) []bfStored { f[3].Hits, f[3].Version = 3, 5; return f }, "a live write applied twice"},
		{"version off", func(f []bfStored) []bfStored { f[0].Version = 3; return f }, "version 3, want 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			final, live := base()
			a := checkBackfill(tc.doctor(final), 4, id, live)
			if !slices.ContainsFunc(a, func(s string) bool { return strings.Contains(s, tc.want) }) {
				t.Errorf("anomalies %q; want one containing %q", a, tc.want)
			}
		})
	}
}
