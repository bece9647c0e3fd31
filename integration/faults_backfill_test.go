package integration

// The backfill part of the fault suite (see faults_test.go): two migrations
// of one table at once, each shared by two runners, while four live writers
// run version-checked Updates and two put whole items (SavePut) on random
// items, every runner and writer over its own faulty DynamoDB transport (its
// item writes, scans, checkpoints and lease requests alike). Every runner is
// stopped part-way and started again; a runner whose Run fails (a request
// that failed after the SDK's retries, a lease lost) is started again too, as
// a new process would be, with a new transport. Checked afterwards, without
// faults, by checkBackfill: every item changed exactly once by each
// migration, every acknowledged live write there and none twice, every
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
	"github.com/ddbkit/dynamo/lease"
)

// bfProcess is one incarnation of a runner: its Run, what it changed, and
// its close.
type bfProcess struct {
	run     func(context.Context) error
	changed func() int64
	close   func()
}

// newBFSecond returns owner's runner of the second migration (bfSecond's
// counter) of table, like newBFRunner.
func newBFSecond(c dynamo.Client, table, leaseTable, id, owner string, opts ...backfill.Option) (bfProcess, error) {
	lc, err := lease.New(dynamo.NewMapper(c), leaseTable, lease.WithOwner(owner),
		lease.WithLeaseDuration(bfLeaseDuration), lease.WithHeartbeatInterval(bfHeartbeat),
		lease.WithPollInterval(50*time.Millisecond))
	if err != nil {
		return bfProcess{}, err
	}
	opts = append([]backfill.Option{backfill.WithFleet(lc, leaseTable), backfill.WithSegments(bfSegments / 2),
		backfill.WithPollInterval(100 * time.Millisecond)}, opts...)
	m, err := backfill.NewMigration(dynamo.NewMapper(c), table, id, func(a bfSecond) (bfSecond, error) { a.Second++; return a, nil }, opts...)
	if err != nil {
		return bfProcess{}, err
	}
	return bfProcess{run: m.Run, changed: func() int64 { return m.Progress().Changed },
		close: func() { _ = lc.Close(context.Background()) }}, nil
}

func TestFaultsBackfill(t *testing.T) {
	leaktest.Check(t, "ddbkit/dynamo/backfill.")
	n := scaled(1000)
	table, leaseTable := bfTables(t, dynamotest.Client(t), n)
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
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

	// The history for the backfill model (linear_test.go): each item's live
	// writes and reads, each migration's step on it (one call pending from
	// the start), and the final read.
	lin := &linRecorder{}
	for i := range n {
		lin.begin(6, bfInput{Key: bfKey(i), Kind: bkMigrate}).unknown(nil)
		lin.begin(7, bfInput{Key: bfKey(i), Kind: bkMigrate, Second: true}).unknown(nil)
	}
	var writes []func(ctx context.Context, i int) error
	for g := range 4 {
		tb, err := dynamo.NewTable[bfAccount](dynamo.NewMapper(newClient(uint64(1100+g))), table)
		if err != nil {
			t.Fatal(err)
		}
		writes = append(writes, func(ctx context.Context, i int) error {
			call := lin.begin(g, bfInput{Key: bfKey(i), Kind: bkHit})
			saved, err := tb.Update(ctx, bfAccount{ID: bfKey(i)}, func(a bfAccount) (bfAccount, error) {
				a.Hits++
				return a, nil
			})
			if err == nil {
				call.ok(bfView{saved.Version, saved.Hits, saved.Migrated, -1})
			} else {
				call.failed(err, mapperNotApplied)
			}
			return err
		})
	}
	for g := range 2 {
		tb, err := dynamo.NewTable[bfStored](dynamo.NewMapper(newClient(uint64(1150+g))), table)
		if err != nil {
			t.Fatal(err)
		}
		writes = append(writes, func(ctx context.Context, i int) error { // a put of the whole item, as loaded
			read := lin.begin(4+g, bfInput{Key: bfKey(i), Kind: bkRead})
			it, err := tb.Load(ctx, bfStored{ID: bfKey(i)}, dynamo.ConsistentRead())
			if err != nil {
				return err
			}
			from := bfView{it.Version, it.Hits, it.Migrated, it.Second}
			read.ok(from)
			it.Hits++
			call := lin.begin(4+g, bfInput{Key: bfKey(i), Kind: bkPut, From: from})
			saved, err := tb.Save(ctx, it, dynamo.WithSaveBehavior(dynamo.SavePut))
			if err == nil {
				call.ok(saved.Version)
			} else {
				call.failed(err, mapperNotApplied)
			}
			return err
		})
	}
	stopWriters := bfWritersWith(writes, n, *faultSeed)

	// Each runner runs until its Run returns nil (its whole migration is
	// done), each incarnation a new "process": new transport, new lease
	// client, new owner name. Each runner is also stopped part-way once,
	// whatever else ended its earlier runs: a once its runs have changed
	// n/8 items (a quarter of its share), b at n/4.
	var changed atomic.Int64
	stopAt := []int64{int64(n / 8), int64(n / 4)}
	type runnerResult struct {
		name     string
		runs     int
		finished bool
		stopped  bool
		causes   map[string]int // why the incarnations before the last ended
	}
	var results []runnerResult
	var rmu sync.Mutex
	var wg sync.WaitGroup
	for mi, mig := range []string{"faults", "second"} {
		for ri, name := range []string{"a", "b"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := runnerResult{name: mig + "/" + name, causes: map[string]int{}}
				var prior int64 // changed by its earlier runs
				defer func() { rmu.Lock(); results = append(results, res); rmu.Unlock() }()
				for ctx.Err() == nil && res.runs < 40 {
					res.runs++
					owner := fmt.Sprintf("%s-%s%d", mig, name, res.runs)
					c := newClient(uint64(1200 + 1000*mi + 100*ri + res.runs))
					var p bfProcess
					if mi == 0 {
						r, err := newBFRunner(c, table, leaseTable, mig, owner, backfill.WithPageSize(25))
						if err != nil {
							t.Error(err)
							return
						}
						p = bfProcess{run: r.m.Run, changed: func() int64 { return r.m.Progress().Changed }, close: r.close}
					} else {
						var err error
						if p, err = newBFSecond(c, table, leaseTable, mig, owner, backfill.WithPageSize(20)); err != nil {
							t.Error(err)
							return
						}
					}
					rctx, rcancel := context.WithCancel(ctx)
					watched := make(chan struct{})
					if !res.stopped {
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
								if prior+p.changed() >= stopAt[ri] {
									res.stopped = true
									rcancel()
								}
							}
						}()
					} else {
						close(watched)
					}
					err := p.run(rctx)
					rcancel()
					<-watched
					got := p.changed()
					changed.Add(got)
					prior += got
					p.close()
					if err == nil {
						res.finished = true
						return
					}
					res.causes[backfillCause(err)]++
					t.Logf("runner %s ended after %d changed: %v", owner, got, err)
				}
			}()
		}
	}
	wg.Wait()
	live := stopWriters()
	stats := stopFaults(transports)

	final := bfFinal(t, table)
	for _, it := range final {
		lin.begin(8, bfInput{Key: it.ID, Kind: bkRead}).ok(bfView{it.Version, it.Hits, it.Migrated, it.Second})
	}
	anomalies := checkBackfill(final, n, true, live)
	reportAnomalies(t, anomalies)
	nonLinear := checkLinear(t, "items", bfModel, nil, lin.history(), linCap, 30*time.Second).Anomalies()
	for _, res := range results {
		t.Logf("runner %s: %d runs, finished %v; earlier runs ended by: %v", res.name, res.runs, res.finished, res.causes)
		if !res.finished {
			t.Errorf("runner %s did not see the migration finish in %d runs", res.name, res.runs)
		}
		if !res.stopped {
			t.Errorf("runner %s was never stopped part-way: the test did not restart it", res.name)
		}
	}
	acked, unknown := live.total()
	t.Logf("%d items; %d live writes acknowledged, %d failed %v; %d items changed by the runners as they counted",
		n, acked, unknown, live.Errors, changed.Load())
	if acked == 0 {
		t.Errorf("no live write was acknowledged: the writers did not write during the migration")
	}
	logFaults(t, faultReport{Ops: int(acked+unknown) + 2*n, Acked: int(acked) + int(changed.Load()), Anomalies: len(anomalies) + nonLinear, Stats: stats})
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
// migrated, migrated twice (by either migration), missing, extra, an
// acknowledged live write lost, a live write applied twice, a version off —
// is reported. No server is needed.
func TestFaultsBackfillCheckerCatchesAnomalies(t *testing.T) {
	base := func() ([]bfStored, bfLive) {
		final := []bfStored{
			{ID: bfKey(0), Version: 3, Migrated: 1, Second: 1},
			{ID: bfKey(1), Version: 5, Hits: 2, Migrated: 1, Second: 1}, // 2 acked
			{ID: bfKey(2), Version: 4, Hits: 1, Migrated: 1, Second: 1}, // 0 acked, 1 failed: applied
			{ID: bfKey(3), Version: 4, Hits: 1, Migrated: 1, Second: 1}, // 1 acked, 1 failed: not applied
		}
		return final, bfLive{Acked: []int64{0, 2, 0, 1}, Unknown: []int64{0, 0, 1, 1}}
	}
	final, live := base()
	if a := checkBackfill(final, 4, true, live); len(a) != 0 {
		t.Fatalf("a consistent end state: %q; want no anomaly", a)
	}
	for _, tc := range []struct {
		name   string
		doctor func(f []bfStored) []bfStored
		want   string
	}{
		{"not migrated", func(f []bfStored) []bfStored { f[0].Migrated, f[0].Version = 0, 2; return f }, "not migrated"},
		{"migrated twice", func(f []bfStored) []bfStored { f[1].Migrated, f[1].Version = 2, 6; return f }, "migrated 2 times"},
		{"second migrated twice", func(f []bfStored) []bfStored { f[2].Second, f[2].Version = 2, 5; return f }, "migrated 2 times by the second"},
		{"missing", func(f []bfStored) []bfStored { return f[1:] }, "item acct-000000 is missing"},
		{"extra", func(f []bfStored) []bfStored {
			return append(f, bfStored{ID: bfKey(9), Version: 3, Migrated: 1, Second: 1})
		}, "item acct-000009 was never filled"},
		{"acknowledged write lost", func(f []bfStored) []bfStored { f[1].Hits, f[1].Version = 1, 4; return f }, "1 acknowledged live writes lost"},
		{"write applied twice", func(f []bfStored) []bfStored { f[3].Hits, f[3].Version = 3, 6; return f }, "a live write applied twice"},
		{"version off", func(f []bfStored) []bfStored { f[0].Version = 4; return f }, "version 4, want 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			final, live := base()
			a := checkBackfill(tc.doctor(final), 4, true, live)
			if !slices.ContainsFunc(a, func(s string) bool { return strings.Contains(s, tc.want) }) {
				t.Errorf("anomalies %q; want one containing %q", a, tc.want)
			}
		})
	}
}
