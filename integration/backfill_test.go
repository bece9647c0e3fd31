package integration

// Package backfill at the scale issue 26 asks for, on the shared server: a
// migration of -backfill.items items (6 000 by default, to keep CI short;
// give -backfill.items=20000 for the scale the issue names) while 8
// writers run version-checked Updates on random items, in one process, in a
// process killed (SIGKILL) half-way and started again, and in two processes
// sharing it, one killed (and, beyond the issue, one frozen past its leases
// and resumed). Afterwards every item must carry the migration's change
// exactly once (Migrated == 1) and every acknowledged
// live write (Hits == acknowledged increments; a failed Update counts as 0
// or 1), and its version must account for all of them.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/backfill"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/lease"
)

var backfillItems = flag.Int("backfill.items", 6000, "items of the backfill tests' tables (issue 26 names 20000)")

// bfAccount is the item under migration: Hits counts live writes, Migrated
// the applications of the migration's change.
type bfAccount struct {
	ID       string `dynamo:"id,hash"`
	Version  int64  `dynamo:"version,version"`
	Hits     int64  `dynamo:"hits"`
	Migrated int64  `dynamo:"migrated"`
}

// bfStored is bfAccount as stored, with the count of a second migration
// (bfSecond's), for the final check and for live writers that put whole
// items.
type bfStored struct {
	ID       string `dynamo:"id,hash"`
	Version  int64  `dynamo:"version,version"`
	Hits     int64  `dynamo:"hits"`
	Migrated int64  `dynamo:"migrated"`
	Second   int64  `dynamo:"second"`
}

// bfSecond is the item as a second migration of the table sees it.
type bfSecond struct {
	ID      string `dynamo:"id,hash"`
	Version int64  `dynamo:"version,version"`
	Hits    int64  `dynamo:"hits"`
	Second  int64  `dynamo:"second"`
}

// bfMigrate is the migration's change: not idempotent, so that a second
// application shows.
func bfMigrate(a bfAccount) (bfAccount, error) {
	a.Migrated++
	return a, nil
}

func bfKey(i int) string { return fmt.Sprintf("acct-%06d", i) }

// bfIndex is the index of key k, -1 if k is not one of bfKey's.
func bfIndex(k string) int {
	var i int
	if _, err := fmt.Sscanf(k, "acct-%06d", &i); err != nil || bfKey(i) != k {
		return -1
	}
	return i
}

// Timing of the migrations' lease groups: a dead process's segments move
// within about 2 × 1.25 s of its last heartbeat.
const (
	bfLeaseDuration = 2 * time.Second
	bfHeartbeat     = 500 * time.Millisecond
	bfSegments      = 8
)

// bfRunner is one process's share of a migration: its lease client and
// its Migration.
type bfRunner struct {
	leases *lease.Client
	m      *backfill.Migration[bfAccount]
}

// newBFRunner returns owner's runner of the migration id of table, with
// the lease group and checkpoints in leaseTable, through c.
func newBFRunner(c dynamo.Client, table, leaseTable, id, owner string, opts ...backfill.Option) (*bfRunner, error) {
	lc, err := lease.New(dynamo.NewMapper(c), leaseTable, lease.WithOwner(owner),
		lease.WithLeaseDuration(bfLeaseDuration), lease.WithHeartbeatInterval(bfHeartbeat),
		lease.WithPollInterval(50*time.Millisecond))
	if err != nil {
		return nil, err
	}
	opts = append([]backfill.Option{backfill.WithFleet(lc, leaseTable), backfill.WithSegments(bfSegments),
		backfill.WithPollInterval(100 * time.Millisecond)}, opts...)
	m, err := backfill.NewMigration(dynamo.NewMapper(c), table, id, bfMigrate, opts...)
	if err != nil {
		return nil, err
	}
	return &bfRunner{leases: lc, m: m}, nil
}

// close closes the runner's lease client.
func (r *bfRunner) close() { _ = r.leases.Close(context.Background()) }

// bfTables creates a table of n accounts (version 1, nothing migrated;
// every other one holding a write token, see bfTokens) and a lease table;
// it returns their names.
func bfTables(t *testing.T, c dynamo.Client, n int) (table, leaseTable string) {
	t.Helper()
	clean := dynamotest.Client(t)
	table = dynamotest.KeyTable(t, clean, "", "id", types.ScalarAttributeTypeS, "", "")
	leaseTable = dynamotest.KeyTable(t, clean, "", "key", types.ScalarAttributeTypeS, "", "")
	items, err := dynamo.NewTable[bfAccount](dynamo.NewMapper(c), table)
	if err != nil {
		t.Fatal(err)
	}
	// 8 goroutines of BatchSave, 25 items a request.
	const fillers, chunk = 8, 500
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, fillers)
	for g := range fillers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo := int(next.Add(chunk)) - chunk
				if lo >= n {
					return
				}
				batch := make([]bfAccount, 0, chunk)
				for i := lo; i < min(n, lo+chunk); i++ {
					batch = append(batch, bfAccount{ID: bfKey(i)})
				}
				if err := items.BatchSave(t.Context(), batch, dynamo.WithSaveBehavior(dynamo.SaveClobber)); err != nil {
					errs[g] = err
					return
				}
				if errs[g] = bfTokens(t.Context(), clean, table, lo, min(n, lo+chunk)); errs[g] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("filling %d items: %v", n, err)
	}
	return table, leaseTable
}

// bfTokens gives the even items of lo to hi a write token, at the version
// they hold, as items a mapper wrote carry one: the migration's write of
// such an item is pinned to the token scanned and leaves the mark's
// condition out, that of an item without one keeps it, so both meet the
// tests' faults and checks.
func bfTokens(ctx context.Context, c *dynamodb.Client, table string, lo, hi int) error {
	for i := lo + lo%2; i < hi; i += 2 {
		tok := []byte(fmt.Sprintf("tok-%012d", i))
		if _, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &table,
			Key:                       map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: bfKey(i)}},
			UpdateExpression:          aws.String("SET #wt = :wt"),
			ExpressionAttributeNames:  map[string]string{"#wt": dynamo.DefaultWriteTokenAttribute},
			ExpressionAttributeValues: map[string]types.AttributeValue{":wt": &types.AttributeValueMemberB{Value: tok}},
		}); err != nil {
			return fmt.Errorf("giving %s a write token: %w", bfKey(i), err)
		}
	}
	return nil
}

// bfLive is what the live writers did: per item, the increments
// acknowledged and those that failed (applied or not: unknown).
type bfLive struct {
	Acked, Unknown []int64
	Errors         map[string]int // failed increments by cause
}

// total returns the acknowledged and failed increments.
func (l bfLive) total() (acked, unknown int64) {
	for i := range l.Acked {
		acked += l.Acked[i]
		unknown += l.Unknown[i]
	}
	return acked, unknown
}

// bfWriters starts one goroutine per table in tables, each running
// version-checked Updates that add a hit to random items among n, until
// stop is called, which returns what they did.
func bfWriters(tables []*dynamo.Table[bfAccount], n int, seed uint64) (stop func() bfLive) {
	writes := make([]func(ctx context.Context, i int) error, len(tables))
	for g, tb := range tables {
		writes[g] = func(ctx context.Context, i int) error {
			_, err := tb.Update(ctx, bfAccount{ID: bfKey(i)}, func(a bfAccount) (bfAccount, error) {
				a.Hits++
				return a, nil
			})
			return err
		}
	}
	return bfWritersWith(writes, n, seed)
}

// bfWritersWith is bfWriters of one goroutine per write, each adding a hit
// to random items among n with its write.
func bfWritersWith(writes []func(ctx context.Context, i int) error, n int, seed uint64) (stop func() bfLive) {
	// Writers stop at a flag, not by a ctx: a write cut short by its ctx
	// could land without its writer knowing.
	var stopped atomic.Bool
	acked := make([]atomic.Int64, n)
	unknown := make([]atomic.Int64, n)
	var mu sync.Mutex
	causes := map[string]int{}
	var wg sync.WaitGroup
	for g, write := range writes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(g)))
			for !stopped.Load() {
				i := r.IntN(n)
				err := write(context.Background(), i)
				if err == nil {
					acked[i].Add(1)
					continue
				}
				unknown[i].Add(1)
				mu.Lock()
				causes[bfCause(err)]++
				mu.Unlock()
			}
		}()
	}
	return func() bfLive {
		stopped.Store(true)
		wg.Wait()
		l := bfLive{Acked: make([]int64, n), Unknown: make([]int64, n), Errors: causes}
		for i := range acked {
			l.Acked[i], l.Unknown[i] = acked[i].Load(), unknown[i].Load()
		}
		return l
	}
}

// bfCause names the cause of a failed live Update.
func bfCause(err error) string {
	switch {
	case errors.Is(err, dynamo.ErrUnknownOutcome):
		return "unknown outcome"
	case errors.Is(err, dynamo.ErrVersionConflict):
		return "version conflict"
	}
	return errorCause(err)
}

// bfFinal reads every item of table through a client without faults.
func bfFinal(t *testing.T, table string) []bfStored {
	t.Helper()
	tb, err := dynamo.NewTable[bfStored](dynamo.NewMapper(dynamotest.Client(t)), table)
	if err != nil {
		t.Fatal(err)
	}
	var out []bfStored
	for it, err := range tb.Scan(t.Context(), dynamo.ConsistentRead()) {
		if err != nil {
			t.Fatalf("reading the final items without faults: %v", err)
		}
		out = append(out, it)
	}
	return out
}

// checkBackfill checks the final items of a migration over n items (and of
// a second one, bfSecond's, with second) against what the live writers did:
//
//   - every item is there, once, and no other;
//   - it carries the change exactly once (Migrated == 1; Second == 1 with
//     second, else 0);
//   - it holds every acknowledged live write, and no more than were sent:
//     Acked ≤ Hits ≤ Acked + Unknown;
//   - its version accounts for every write: 1 (filled), plus Migrated,
//     Second and Hits.
func checkBackfill(final []bfStored, n int, second bool, live bfLive) []string {
	var out []string
	addf := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	seen := make([]bool, n)
	for _, it := range final {
		i := bfIndex(it.ID)
		switch {
		case i < 0 || i >= n:
			addf("item %s was never filled", it.ID)
			continue
		case seen[i]:
			addf("item %s read twice", it.ID)
			continue
		}
		seen[i] = true
		switch {
		case it.Migrated == 0:
			addf("item %s: not migrated", it.ID)
		case it.Migrated > 1:
			addf("item %s: migrated %d times", it.ID, it.Migrated)
		}
		switch {
		case second && it.Second != 1:
			addf("item %s: migrated %d times by the second migration", it.ID, it.Second)
		case !second && it.Second != 0:
			addf("item %s: changed by a second migration that did not run", it.ID)
		}
		if a, u := live.Acked[i], live.Unknown[i]; it.Hits < a {
			addf("item %s: %d hits, %d acknowledged: %d acknowledged live writes lost", it.ID, it.Hits, a, a-it.Hits)
		} else if it.Hits > a+u {
			addf("item %s: %d hits, but only %d acknowledged and %d failed were sent: a live write applied twice", it.ID, it.Hits, a, u)
		}
		if want := 1 + it.Migrated + it.Second + it.Hits; it.Version != want {
			addf("item %s: version %d, want %d (1 + %d migrated + %d second + %d hits): a write not accounted for", it.ID, it.Version, want, it.Migrated, it.Second, it.Hits)
		}
	}
	missing := 0
	for i, ok := range seen {
		if !ok {
			if missing++; missing <= 10 {
				addf("item %s is missing", bfKey(i))
			}
		}
	}
	if missing > 10 {
		addf("... %d items missing in all", missing)
	}
	return out
}

// bfEnv is a filled table with 8 live writers at work on it.
type bfEnv struct {
	n                 int
	table, leaseTable string
	start             time.Time
	stop              func() bfLive
}

func newBFEnv(t *testing.T) *bfEnv {
	t.Helper()
	n := *backfillItems
	c := dynamotest.Client(t)
	start := time.Now()
	table, leaseTable := bfTables(t, c, n)
	t.Logf("filled %d items in %v", n, time.Since(start).Round(time.Millisecond))
	var tables []*dynamo.Table[bfAccount]
	for range 8 {
		tb, err := dynamo.NewTable[bfAccount](dynamo.NewMapper(c), table)
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, tb)
	}
	e := &bfEnv{n: n, table: table, leaseTable: leaseTable, start: time.Now()}
	e.stop = bfWriters(tables, n, 1)
	return e
}

// finish stops the writers and checks every item.
func (e *bfEnv) finish(t *testing.T, id string, reruns int64) {
	t.Helper()
	took := time.Since(e.start)
	live := e.stop()
	acked, unknown := live.total()
	reportAnomalies(t, checkBackfill(bfFinal(t, e.table), e.n, false, live))
	t.Logf("BACKFILL %s: %d items, 8 writers, %v; %d live writes acknowledged, %d failed %v; %d conflicts (reruns)",
		t.Name(), e.n, took.Round(time.Millisecond), acked, unknown, live.Errors, reruns)
	for cause, k := range live.Errors {
		if cause != "unknown outcome" && cause != "version conflict" {
			t.Errorf("%d live writes failed with %q: none should without faults", k, cause)
		}
	}
}

// TestBackfillUnderLiveWrites: with 8 goroutines running version-checked
// Updates on random items throughout, a migration of every item changes
// each exactly once and keeps every live write.
func TestBackfillUnderLiveWrites(t *testing.T) {
	e := newBFEnv(t)
	r, err := newBFRunner(dynamotest.Client(t), e.table, e.leaseTable, "live", "p1")
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	err = r.m.Run(ctx)
	p := r.m.Progress()
	if err != nil {
		e.stop()
		t.Fatal(err)
	}
	e.finish(t, "live", p.Reruns)
	t.Logf("progress: changed %d, skipped %d, reruns %d, scanned %d, %.0f read and %.0f write units",
		p.Changed, p.Skipped, p.Reruns, p.Scanned, p.ReadUnits, p.WriteUnits)
	if p.Changed != int64(e.n) {
		t.Errorf("changed %d items, want %d", p.Changed, e.n)
	}
	if p.Reruns == 0 {
		t.Errorf("no conflict with a live write: the writers did not write during the migration")
	}
}

// The environment of a backfill worker process.
const (
	envBFWorker = "DYNAMO_BACKFILL_TEST_WORKER" // its owner name
	envBFTables = "DYNAMO_BACKFILL_TEST_TABLES" // "<table>,<lease table>,<migration id>"
)

// backfillWorkerMain runs a backfill worker when this process is one
// (started by the backfill tests), and reports whether it was.
func backfillWorkerMain() bool {
	name := os.Getenv(envBFWorker)
	if name == "" {
		return false
	}
	if err := runBFWorker(name, strings.Split(os.Getenv(envBFTables), ",")); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	return true
}

// runBFWorker runs its share of the migration to the end, printing its
// progress every 20 ms as "progress <changed> <scanned> <reruns>" and
// "end <changed> <scanned> <reruns>" when done.
func runBFWorker(name string, spec []string) error {
	if len(spec) != 3 {
		return fmt.Errorf("%s=%q: want table,leases,id", envBFTables, os.Getenv(envBFTables))
	}
	c := dynamotest.NewClient(os.Getenv("DYNAMODB_ENDPOINT"))
	r, err := newBFRunner(c, spec[0], spec[1], spec[2], name)
	if err != nil {
		return err
	}
	defer r.close()
	say := func(what string) {
		p := r.m.Progress()
		fmt.Printf("%s %d %d %d\n", what, p.Changed, p.Scanned, p.Reruns)
	}
	done := make(chan error, 1)
	go func() { done <- r.m.Run(context.Background()) }()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return err
			}
			say("end")
			return nil
		case <-tick.C:
			say("progress")
		}
	}
}

// bfProc is a backfill worker process and its last line.
type bfProc struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	last bfLine
	ch   chan struct{} // closed and replaced at each line
	done chan struct{} // closed when its output ends
}

// bfLine is a worker's progress line.
type bfLine struct {
	end                      bool
	changed, scanned, reruns int64
}

// startBFWorker starts a worker process named name on the migration id of
// e's tables.
func startBFWorker(t *testing.T, e *bfEnv, id, name string) *bfProc {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), envBFWorker+"="+name, envBFTables+"="+e.table+","+e.leaseTable+","+id,
		"DYNAMODB_ENDPOINT="+dynamotest.Endpoint(t))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &bfProc{name: name, cmd: cmd, ch: make(chan struct{}), done: make(chan struct{})}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		_ = cmd.Wait()
	})
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) != 4 || f[0] != "progress" && f[0] != "end" {
				continue
			}
			var l bfLine
			l.end = f[0] == "end"
			l.changed, _ = strconv.ParseInt(f[1], 10, 64)
			l.scanned, _ = strconv.ParseInt(f[2], 10, 64)
			l.reruns, _ = strconv.ParseInt(f[3], 10, 64)
			p.mu.Lock()
			p.last = l
			close(p.ch)
			p.ch = make(chan struct{})
			p.mu.Unlock()
		}
	}()
	return p
}

// await waits until the worker's last line satisfies ok, and returns it;
// it fails the test if the worker's output ends first or limit passes.
func (p *bfProc) await(t *testing.T, limit time.Duration, ok func(bfLine) bool) bfLine {
	t.Helper()
	deadline := time.After(limit)
	for {
		p.mu.Lock()
		l, ch := p.last, p.ch
		p.mu.Unlock()
		if ok(l) {
			return l
		}
		select {
		case <-ch:
		case <-p.done:
			p.mu.Lock()
			l = p.last
			p.mu.Unlock()
			if ok(l) {
				return l
			}
			t.Fatalf("worker %s ended at %+v before the awaited line", p.name, l)
		case <-deadline:
			t.Fatalf("worker %s: no awaited line within %v (last %+v)", p.name, limit, l)
		}
	}
}

// kill kills the worker (SIGKILL) and waits for it.
func (p *bfProc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.done
	_ = p.cmd.Wait()
}

// wait waits for the worker to exit, and fails the test unless it ended its
// run with nil.
func (p *bfProc) wait(t *testing.T) bfLine {
	t.Helper()
	l := p.await(t, 5*time.Minute, func(l bfLine) bool { return l.end })
	<-p.done
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("worker %s: %v", p.name, err)
	}
	return l
}

// TestBackfillKilledAndStartedAgain: the migration's process is killed
// (SIGKILL) once it has changed half of the items, under live writes; a new
// process started on the same migration finishes it, without scanning again
// what the first one checkpointed: every item changed exactly once, every
// live write kept.
func TestBackfillKilledAndStartedAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	const id = "killed"
	e := newBFEnv(t)
	start := time.Now()
	first := startBFWorker(t, e, id, "first")
	half := first.await(t, 5*time.Minute, func(l bfLine) bool { return l.changed >= int64(e.n/2) })
	rate := float64(half.changed) / time.Since(start).Seconds() // items/s, a lower bound
	first.kill(t)
	t.Logf("first process killed after it said %d changed (%d scanned)", half.changed, half.scanned)
	second := startBFWorker(t, e, id, "second")
	end := second.wait(t)
	e.finish(t, id, half.reruns+end.reruns)
	t.Logf("second process: %d changed, %d scanned", end.changed, end.scanned)
	// The first process checkpointed at least what it said it changed, less
	// what is read again after a crash (backfill's doc.go): per segment the
	// work since its last checkpoint, at most DefaultCheckpointInterval of
	// it (here at the first process's rate, with a second's slack for the
	// checkpoint's own write), and the pages in flight (the one written and
	// the one read ahead).
	redo := int64(rate*(backfill.DefaultCheckpointInterval+time.Second).Seconds()) + 2*bfSegments*backfill.DefaultPageSize
	if limit := int64(e.n) - half.changed + redo; end.scanned > limit {
		t.Errorf("the second process scanned %d items, want at most %d: it scanned again what the first had finished", end.scanned, limit)
	}
	if end.changed == 0 || end.changed > int64(e.n)-half.changed {
		t.Errorf("the second process changed %d items, want the rest of %d after %d", end.changed, e.n, half.changed)
	}
}

// TestBackfillSharedOneKilled: two processes share the migration under live
// writes; one is killed (SIGKILL) once the two have changed about half of
// the items, and the other takes over its segments and finishes: every item
// changed exactly once, every live write kept.
func TestBackfillSharedOneKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	const id = "shared"
	e := newBFEnv(t)
	a := startBFWorker(t, e, id, "a")
	b := startBFWorker(t, e, id, "b")
	// Each holds about half of the segments once b has joined (a, started
	// first, holds them all until then): a at a quarter is about half of
	// the whole.
	b.await(t, 5*time.Minute, func(l bfLine) bool { return l.changed > 0 })
	la := a.await(t, 5*time.Minute, func(l bfLine) bool { return l.changed >= int64(e.n/4) })
	a.kill(t)
	b.mu.Lock()
	lb := b.last
	b.mu.Unlock()
	t.Logf("a killed after it said %d changed; b had said %d", la.changed, lb.changed)
	end := b.wait(t)
	e.finish(t, id, la.reruns+end.reruns)
	t.Logf("b: %d changed, %d scanned", end.changed, end.scanned)
	if lb.changed == 0 {
		t.Errorf("b had changed nothing when a was killed: the two did not share the work")
	}
	if end.changed > int64(e.n)-la.changed || end.changed < int64(e.n)/2 {
		t.Errorf("b changed %d items, a at least %d: want b to finish the rest of %d", end.changed, la.changed, e.n)
	}
}

// TestBackfillSharedOneFrozen: two processes share the migration under live
// writes; one is frozen (SIGSTOP) past its leases and then resumed, its
// writes in flight landing late, as a process paused by the machine would.
// The other takes over its segments and finishes; the resumed one's late
// item writes find the items changed (the mark) and its late checkpoints are
// refused (the lease guard), so every item is changed exactly once and every
// live write kept. The resumed process may end with nil (the migration is
// done) or with the lease group's error: either way it wrote nothing twice.
func TestBackfillSharedOneFrozen(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	const id = "frozen"
	e := newBFEnv(t)
	a := startBFWorker(t, e, id, "a")
	b := startBFWorker(t, e, id, "b")
	la := a.await(t, 5*time.Minute, func(l bfLine) bool { return l.changed >= int64(e.n/8) })
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Past its leases: taken over after duration × skew rate (1.25) and a
	// poll; twice that to be sure on a loaded machine.
	time.Sleep(2 * (bfLeaseDuration*5/4 + 100*time.Millisecond))
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	t.Logf("a frozen after it said %d changed, resumed", la.changed)
	end := b.wait(t)
	select {
	case <-a.done:
	case <-time.After(time.Minute):
		t.Fatalf("the resumed process had not ended a minute after the migration's end")
	}
	errA := a.cmd.Wait()
	a.mu.Lock()
	lastA := a.last
	a.mu.Unlock()
	e.finish(t, id, lastA.reruns+end.reruns)
	t.Logf("b: %d changed; a: %d changed, ended with %v", end.changed, lastA.changed, errA)
}
