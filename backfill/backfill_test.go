package backfill

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/ddbkit/dynamo/internal/leaktest"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/lease"
)

// backfillPkg names this package's code for leaktest: no goroutine of Run
// outlives it.
const backfillPkg = "ddbkit/dynamo/backfill."

// account is the item under migration: Hits counts live writes, Migrated
// counts applications of the migration's change.
type account struct {
	ID       string `dynamo:"id,hash"`
	Version  int64  `dynamo:"version,version"`
	Hits     int64  `dynamo:"hits"`
	Migrated int64  `dynamo:"migrated"`
}

// addMigrated is the migration's change: not idempotent, so that a second
// application shows.
func addMigrated(a account) (account, error) {
	a.Migrated++
	return a, nil
}

// env is a table of n accounts and a lease table.
type env struct {
	t      testing.TB
	c      *dynamodb.Client
	table  string
	leases string
	items  *dynamo.Table[account]
	n      int
}

func newEnv(t testing.TB, n int) *env {
	t.Helper()
	c := dynamotest.Client(t)
	e := &env{t: t, c: c, n: n,
		table:  dynamotest.KeyTable(t, c, "", "id", types.ScalarAttributeTypeS, "", ""),
		leases: dynamotest.KeyTable(t, c, "", "key", types.ScalarAttributeTypeS, "", ""),
	}
	var err error
	if e.items, err = dynamo.NewTable[account](dynamo.NewMapper(c), e.table); err != nil {
		t.Fatal(err)
	}
	// Fill with BatchWriteItem: 25 a request.
	for i := 0; i < n; i += 25 {
		var reqs []types.WriteRequest
		for j := i; j < min(n, i+25); j++ {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
				"id":       &types.AttributeValueMemberS{Value: key(j)},
				"version":  &types.AttributeValueMemberN{Value: "1"},
				"hits":     &types.AttributeValueMemberN{Value: "0"},
				"migrated": &types.AttributeValueMemberN{Value: "0"},
			}}})
		}
		for len(reqs) > 0 {
			out, err := c.BatchWriteItem(t.Context(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{e.table: reqs}})
			if err != nil {
				t.Fatal(err)
			}
			reqs = out.UnprocessedItems[e.table]
		}
	}
	return e
}

func key(i int) string { return fmt.Sprintf("acct-%05d", i) }

// leaseClient is a lease client of the env's lease table with short,
// real-time timings (the group's rounds run on the system clock). Its
// heartbeat has 5.5 s to land before the lease is lost: a -race suite on a
// loaded 2-core machine starves goroutines for over a second, and a 2 s
// lease then ended migrations with "lease: lost" (seen twice in fresh
// clones' runs at load 10–15). Only TestMigrationProcessKilled waits for
// an expiry, once.
func (e *env) leaseClient(owner string) *lease.Client {
	e.t.Helper()
	lc, err := lease.New(dynamo.NewMapper(e.c), e.leases, lease.WithOwner(owner),
		lease.WithLeaseDuration(6*time.Second), lease.WithHeartbeatInterval(500*time.Millisecond),
		lease.WithPollInterval(50*time.Millisecond))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = lc.Close(context.Background()) })
	return lc
}

func (e *env) migration(id, owner string, fn func(account) (account, error), opts ...Option) *Migration[account] {
	e.t.Helper()
	opts = append([]Option{WithFleet(e.leaseClient(owner), e.leases), WithSegments(8), WithPageSize(50), WithPollInterval(50 * time.Millisecond)}, opts...)
	m, err := NewMigration(dynamo.NewMapper(e.c), e.table, id, fn, opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// writers runs w goroutines of version-checked Updates adding one hit to
// random items until stop is called, which returns the hits per item.
func (e *env) writers(w int) (stop func() []int64) {
	return e.writersWith(w, func(ctx context.Context, i int) error {
		_, err := e.items.Update(ctx, account{ID: key(i)}, func(a account) (account, error) {
			a.Hits++
			return a, nil
		})
		return err
	})
}

// writersWith is writers with update adding the hit to item i.
func (e *env) writersWith(w int, update func(ctx context.Context, i int) error) (stop func() []int64) {
	// Writers stop at a flag, not by a ctx: a write cut short by its ctx
	// could land without its writer knowing.
	ctx := context.Background()
	var stopped atomic.Bool
	hits := make([]atomic.Int64, e.n)
	var wg sync.WaitGroup
	var errs atomic.Int64
	for g := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for !stopped.Load() {
				i := r.IntN(e.n)
				err := update(ctx, i)
				switch {
				case err == nil:
					hits[i].Add(1)
				default:
					errs.Add(1)
					e.t.Errorf("live write of %s: %v", key(i), err)
				}
			}
		}()
	}
	halt := func() {
		stopped.Store(true)
		wg.Wait()
	}
	// A test that fails before it stops its writers still joins them
	// before its table goes (cleanups run last first).
	e.t.Cleanup(halt)
	return func() []int64 {
		halt()
		out := make([]int64, e.n)
		for i := range hits {
			out[i] = hits[i].Load()
		}
		return out
	}
}

// check fails the test unless every item was migrated exactly once and
// holds hits[i] live writes (nil: any).
func (e *env) check(hits []int64) {
	e.t.Helper()
	got := 0
	bad := 0
	for a, err := range e.items.Scan(e.t.Context(), dynamo.ConsistentRead()) {
		if err != nil {
			e.t.Fatal(err)
		}
		got++
		var i int
		fmt.Sscanf(a.ID, "acct-%05d", &i)
		if a.Migrated != 1 || hits != nil && a.Hits != hits[i] || hits == nil && a.Hits != 0 {
			if bad++; bad < 10 {
				e.t.Errorf("%s: migrated %d times, %d hits (want 1)", a.ID, a.Migrated, a.Hits)
			}
		}
	}
	if got != e.n || bad > 0 {
		e.t.Fatalf("%d items of %d, %d wrong", got, e.n, bad)
	}
}

// TestMigrationUnderLiveWrites: with 6 goroutines running version-checked
// Updates on random items throughout, a migration changes every item
// exactly once and every live write is kept.
func TestMigrationUnderLiveWrites(t *testing.T) {
	e := newEnv(t, 3000)
	stop := e.writers(6)
	m := e.migration("add-one", "w1", addMigrated)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	err := m.Run(ctx)
	hits := stop()
	if err != nil {
		t.Fatal(err)
	}
	e.check(hits)
	p := m.Progress()
	t.Logf("progress: %+v", p)
	if p.Changed != int64(e.n) || p.SegmentsDone != 8 || p.Remaining != 0 {
		t.Errorf("progress says %d changed, %d segments done, %v left; want %d, 8, 0", p.Changed, p.SegmentsDone, p.Remaining, e.n)
	}
	if p.Reruns == 0 {
		t.Log("no conflict met: the writers never hit an item under migration")
	}
}

// TestMigrationResumesWithoutRedoing: a migration stopped half-way and run
// again finishes the rest, changing each item once, and does not scan
// again the segments the first run finished.
func TestMigrationResumesWithoutRedoing(t *testing.T) {
	leaktest.Check(t, backfillPkg)
	e := newEnv(t, 2000)
	stop := e.writers(4)
	ctx, cancel := context.WithCancel(t.Context())
	var m1 *Migration[account]
	// Stop once two segments are done: the others are then part-way.
	m1 = e.migration("resume", "w1", func(a account) (account, error) {
		if m1.segsDone.Load() >= 2 {
			cancel()
		}
		return addMigrated(a)
	})
	if err := m1.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v, want context.Canceled", err)
	}
	p1 := m1.Progress()
	done := doneSegments(t, e, m1)
	t.Logf("first run: %+v; segments done %v", p1, done)
	if p1.Changed == 0 || p1.Changed >= int64(e.n) || len(done) == 0 || len(done) == 8 {
		t.Fatalf("first run changed %d of %d items, finished segments %v: want part of them", p1.Changed, e.n, done)
	}
	m2 := e.migration("resume", "w1", addMigrated)
	scans := &scanCounter{Client: e.c}
	m2.meter.Client = scans
	ctx2, cancel2 := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel2()
	if err := m2.Run(ctx2); err != nil {
		t.Fatal(err)
	}
	hits := stop()
	e.check(hits)
	p2 := m2.Progress()
	t.Logf("second run: %+v", p2)
	for _, seg := range done {
		if n := scans.segment(seg); n > 0 {
			t.Errorf("segment %d finished by the first run was scanned again (%d requests)", seg, n)
		}
	}
	checkCounts(t, e.n, p1.Changed, p2.Changed)
}

// doneSegments returns the segments whose checkpoint says done.
func doneSegments(t *testing.T, e *env, m *Migration[account]) []int {
	var out []int
	for seg := range m.o.segments {
		cp, err := m.cps.Load(t.Context(), checkpoint{Key: m.checkpointKey(seg)}, dynamo.ConsistentRead())
		if err == nil && cp.Done {
			out = append(out, seg)
		}
	}
	return out
}

// scanCounter counts Scan requests per segment.
type scanCounter struct {
	dynamo.Client
	mu   sync.Mutex
	segs map[int32]int
}

func (s *scanCounter) Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	s.mu.Lock()
	if s.segs == nil {
		s.segs = map[int32]int{}
	}
	s.segs[aws.ToInt32(in.Segment)]++
	s.mu.Unlock()
	return s.Client.Scan(ctx, in, optFns...)
}

func (s *scanCounter) segment(i int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.segs[int32(i)]
}

// TestMigrationSharedByTwoRunnersOneStopped: two processes share a
// migration; one stops half-way and the other finishes every segment, each
// item changed once and every live write kept.
func TestMigrationSharedByTwoRunnersOneStopped(t *testing.T) {
	leaktest.Check(t, backfillPkg)
	e := newEnv(t, 2000)
	stop := e.writers(4)
	var calls atomic.Int64
	ctxA, cancelA := context.WithCancel(t.Context())
	a := e.migration("shared", "a", func(x account) (account, error) {
		if calls.Add(1) == int64(e.n/4) {
			cancelA()
		}
		return addMigrated(x)
	})
	b := e.migration("shared", "b", addMigrated)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	errA := make(chan error, 1)
	go func() { errA <- a.Run(ctxA) }()
	if err := b.Run(ctx); err != nil {
		t.Fatal(err)
	}
	// The stopped runner says it stopped, or nil when the fleet finished
	// the migration before it was idle (its commits in flight included).
	if err := <-errA; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("stopped runner: %v, want context.Canceled or nil", err)
	}
	hits := stop()
	e.check(hits)
	pa, pb := a.Progress(), b.Progress()
	t.Logf("a: %+v\nb: %+v", pa, pb)
	if pa.Changed == 0 {
		t.Error("runner a changed nothing: the test did not share the work")
	}
	checkCounts(t, e.n, pa.Changed, pb.Changed)
}

// checkCounts fails unless two runs' Changed add up to n items, less at most
// one per segment: a write in flight when a run's ctx ends may land without
// the run counting it (check finds it in the item).
func checkCounts(t *testing.T, n int, a, b int64) {
	t.Helper()
	if sum := a + b; sum > int64(n) || sum < int64(n-8) {
		t.Errorf("changed %d + %d, want %d in all (less at most 8 cut short)", a, b, n)
	}
}

// TestMigrationProcessKilled: a runner in another process is killed
// (SIGKILL) while it holds every segment, a quarter of the way through,
// with items in hand; a runner in this process then takes over the dead
// one's segments once their leases run out and finishes: every item is
// changed exactly once and every live write is kept.
//
// The child holds still at a point this test controls — its function
// blocks from the n/4-th call on and it says so — so the kill lands in
// the middle of the work however loaded the machine is.
func TestMigrationProcessKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	e := newEnv(t, 2000)
	stop := e.writers(4)
	child := exec.Command(os.Args[0], "-test.run=^TestChildRunner$", "-test.count=1")
	child.Env = append(os.Environ(), fmt.Sprintf("BACKFILL_CHILD=%s,%s,%d", e.table, e.leases, e.n/4))
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	n, held := int64(0), false
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "holding after %d changed", &n); err == nil {
			held = true
			break
		}
	}
	_ = child.Process.Kill()
	_, _ = io.Copy(io.Discard, out)
	_ = child.Wait()
	if !held {
		stop()
		t.Fatal("the child ended before it held still: the test did not kill a runner")
	}
	m := e.migration("killed", "parent", addMigrated)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := m.Run(ctx); err != nil {
		stop()
		t.Fatal(err)
	}
	hits := stop()
	e.check(hits)
	p := m.Progress()
	t.Logf("child changed at least %d before it was killed; this runner: %+v", n, p)
	// The child changed at least n (it said so) and at most n/4 calls'
	// worth, some of whose writes may have landed after it said so; this
	// runner the rest.
	if p.Changed > int64(e.n)-n || p.Changed < int64(e.n)-int64(e.n/4) {
		t.Errorf("this runner changed %d items, the child at least %d of at most %d: want the rest of %d", p.Changed, n, e.n/4, e.n)
	}
}

// TestChildRunner is the runner TestMigrationProcessKilled starts in a
// process of its own and kills. Its function blocks from its limit-th call
// on; once it blocks the runner prints "holding after N changed" and waits
// to be killed.
func TestChildRunner(t *testing.T) {
	spec := os.Getenv("BACKFILL_CHILD")
	if spec == "" {
		t.Skip("run by TestMigrationProcessKilled")
	}
	parts := strings.Split(spec, ",")
	limit, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	c := dynamotest.Client(t)
	e := &env{t: t, c: c, table: parts[0], leases: parts[1]}
	var calls atomic.Int64
	holding, never := make(chan struct{}), make(chan struct{})
	var once sync.Once
	m := e.migration("killed", "child", func(a account) (account, error) {
		if calls.Add(1) >= limit {
			once.Do(func() { close(holding) })
			<-never
		}
		return addMigrated(a)
	})
	go func() {
		<-holding
		fmt.Printf("holding after %d changed\n", m.Progress().Changed)
	}()
	err = m.Run(t.Context())
	t.Fatalf("the child runner was not killed: Run returned %v", err)
}

// plainAccount is account without a version attribute: Update guards its
// writes by the values of every attribute it models.
type plainAccount struct {
	ID       string `dynamo:"id,hash"`
	Hits     int64  `dynamo:"hits"`
	Migrated int64  `dynamo:"migrated"`
}

// TestUnversionedMigrationUnderLiveWrites: for a type without a version,
// live Updates and the migration's writes do not overwrite each other
// either: every item is changed once and keeps every live write.
func TestUnversionedMigrationUnderLiveWrites(t *testing.T) {
	e := newEnv(t, 1000)
	plain, err := dynamo.NewTable[plainAccount](dynamo.NewMapper(e.c), e.table)
	if err != nil {
		t.Fatal(err)
	}
	stop := e.writersWith(4, func(ctx context.Context, i int) error {
		_, err := plain.Update(ctx, plainAccount{ID: key(i)}, func(a plainAccount) (plainAccount, error) {
			a.Hits++
			return a, nil
		})
		return err
	})
	m, err := NewMigration(dynamo.NewMapper(e.c), e.table, "plain", func(a plainAccount) (plainAccount, error) {
		a.Migrated++
		return a, nil
	}, WithFleet(e.leaseClient("w1"), e.leases), WithSegments(4), WithPageSize(50), WithPollInterval(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	err = m.Run(ctx)
	hits := stop()
	if err != nil {
		t.Fatal(err)
	}
	e.check(hits)
	t.Logf("progress: %+v", m.Progress())
}

// holdWrite is a client whose first UpdateItem or PutItem waits, once it
// has reached DynamoDB's side of the call, until release is closed; held is
// closed when it arrives.
type holdWrite struct {
	dynamo.Client
	once          sync.Once
	held, release chan struct{}
}

func (h *holdWrite) hold() {
	h.once.Do(func() {
		close(h.held)
		<-h.release
	})
}

func (h *holdWrite) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	h.hold()
	return h.Client.UpdateItem(ctx, in, optFns...)
}

func (h *holdWrite) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	h.hold()
	return h.Client.PutItem(ctx, in, optFns...)
}

// TestLostSegmentFinishesTheItemInHand: when a segment's lease ends (its ctx
// here) while an item's write is in flight, the write still lands and is
// counted as a change — its next holder scans past the mark and would not
// count it — and the segment stops before the next item, returning ctx's
// error.
func TestLostSegmentFinishesTheItemInHand(t *testing.T) {
	e := newEnv(t, 3)
	h := &holdWrite{Client: e.c, held: make(chan struct{}), release: make(chan struct{})}
	m, err := NewMigration(dynamo.NewMapper(h), e.table, "inhand", addMigrated, WithFleet(e.leaseClient("w"), e.leases), WithSegments(1), WithPageSize(10))
	if err != nil {
		t.Fatal(err)
	}
	leaseCtx, lose := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- m.scanSegment(leaseCtx, t.Context(), 0, checkpoint{Key: m.checkpointKey(0)}, nil, nil) }()
	<-h.held
	lose() // the lease ends while the first item's write is in flight
	close(h.release)
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("scanSegment after its lease ended: %v, want context.Canceled", err)
	}
	if p := m.Progress(); p.Changed != 1 {
		t.Errorf("changed %d after the lease ended during the first write, want 1 (the write in hand, counted; no further item)", p.Changed)
	}
	migrated := 0
	for a, err := range e.items.Scan(t.Context(), dynamo.ConsistentRead()) {
		if err != nil {
			t.Fatal(err)
		}
		migrated += int(a.Migrated)
	}
	if migrated != 1 {
		t.Errorf("%d items migrated, want 1", migrated)
	}
}

// TestFunctionChangingTheKeyWritesNoOtherItem pins that a function which
// returns its item under another key fails that item and writes nothing,
// as Table.Update refuses it: the versioned fast path (Save under the
// version scanned) must not write the changed copy over the item that
// holds the other key (here acct-00001, at the same version 1, unmarked).
func TestFunctionChangingTheKeyWritesNoOtherItem(t *testing.T) {
	e := newEnv(t, 2)
	m := e.migration("move-key", "p1", func(a account) (account, error) {
		if a.ID != key(0) {
			return a, dynamo.ErrNoChange
		}
		a.ID = key(1)
		a.Migrated = 100
		return a, nil
	}, WithSegments(1))
	err := m.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "key") {
		t.Errorf("Run = %v, want the item's failure for a changed key", err)
	}
	got, lerr := e.items.Load(context.Background(), account{ID: key(1)})
	if lerr != nil {
		t.Fatal(lerr)
	}
	if got.Migrated != 0 {
		t.Errorf("item %s = %+v: written over by the function's copy of %s", key(1), got, key(0))
	}
}

// TestMarkModeledByTheTypeRefused pins that New refuses a Mark attribute
// that T models (the doc: "T must not model the attribute"), before any
// request: the mark would be written over the field (or the key) in every
// change, or every write would fail only once Run is under way.
func TestMarkModeledByTheTypeRefused(t *testing.T) {
	e := newEnv(t, 0)
	for _, attr := range []string{"id", "version", "hits"} {
		_, err := NewMigration(dynamo.NewMapper(e.c), e.table, "mark-"+attr, addMigrated, WithFleet(e.leaseClient("p"), e.leases), WithMark(attr))
		if err == nil {
			t.Errorf("NewMigration with WithMark(%q), an attribute of account: no error", attr)
		}
	}
}

// TestVersionTheFunctionReturnsIgnored pins that the version a function
// returns is ignored, as Table.Update ignores it (New: "fn is called as
// Table.Update calls its function"): a function that builds a fresh item
// (version zero), moves the version, or sets it negative changes every
// item once, with no rerun (no live write ran) and no failure.
func TestVersionTheFunctionReturnsIgnored(t *testing.T) {
	for name, set := range map[string]func(*account){
		"zero":     func(a *account) { a.Version = 0 },
		"moved":    func(a *account) { a.Version += 5 },
		"negative": func(a *account) { a.Version = -1 },
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, 3)
			m := e.migration("version-"+name, "p", func(a account) (account, error) {
				set(&a)
				a.Migrated++
				return a, nil
			}, WithSegments(1))
			if err := m.Run(context.Background()); err != nil {
				t.Fatalf("Run = %v", err)
			}
			if p := m.Progress(); p.Changed != 3 || p.Reruns != 0 {
				t.Errorf("Progress: %d changed, %d reruns; want 3 changed, 0 reruns", p.Changed, p.Reruns)
			}
			for i := range 3 {
				a, err := e.items.Load(context.Background(), account{ID: key(i)})
				if err != nil || a.Migrated != 1 || a.Version != 2 {
					t.Errorf("item %s = %+v, %v; want migrated once, at version 2", key(i), a, err)
				}
			}
		})
	}
}

// TestCapacityNaNRefused pins that New refuses a capacity that is not a
// number, before any request: with it the budget never lets a request
// through and Run makes no progress at all until its ctx ends.
func TestCapacityNaNRefused(t *testing.T) {
	e := newEnv(t, 0)
	for _, c := range [][2]float64{{math.NaN(), 0}, {0, math.NaN()}} {
		if _, err := NewMigration(dynamo.NewMapper(e.c), e.table, "nan", addMigrated, WithFleet(e.leaseClient("p"), e.leases), WithCapacity(c[0], c[1])); err == nil {
			t.Errorf("NewMigration with WithCapacity(%g, %g): no error", c[0], c[1])
		}
	}
}

// TestSecondConcurrentRunRefusedLeavingTheFirstAlone pins that Run called
// while another Run of the same Migration is under way fails at once with
// an error saying so, without touching the first run's state: its start
// (Progress.Elapsed) and its stop signal, which its segments wait on to
// write their checkpoint when its ctx ends. The first run then finishes.
func TestSecondConcurrentRunRefusedLeavingTheFirstAlone(t *testing.T) {
	e := newEnv(t, 3)
	clk := clock.NewFake(time.Unix(1e9, 0))
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	m := e.migration("twice", "p", func(a account) (account, error) {
		once.Do(func() { close(entered); <-release })
		return addMigrated(a)
	}, WithSegments(1), WithClock(clk))
	first := make(chan error, 1)
	go func() { first <- m.Run(context.Background()) }()
	<-entered
	clk.Advance(time.Hour)
	err := m.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "running") {
		t.Errorf("second Run = %v, want it refused as running already", err)
	}
	if p := m.Progress(); p.Elapsed != time.Hour {
		t.Errorf("Progress.Elapsed = %v after the refused Run, want the first run's hour", p.Elapsed)
	}
	close(release)
	if err := <-first; err != nil {
		t.Errorf("first Run = %v", err)
	}
}

// TestUndecodableItemIsAFailureNamingIt: an item that does not decode into
// T (another writer stored "hits" as a string) does not stop the other
// items of its page. Without SkipFailures, Run stops with an error that
// names the item's key (so that it can be fixed or removed); with
// SkipFailures, the item is recorded as a failure — Failure.Item holds its
// key, Failure.Err names it — and every other item is changed once.
func TestUndecodableItemIsAFailureNamingIt(t *testing.T) {
	e := newEnv(t, 10)
	if _, err := e.c.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: "bad"}, "hits": &types.AttributeValueMemberS{Value: "x"}}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	m := e.migration("undecodable", "p", addMigrated, WithSegments(1))
	if err := m.Run(ctx); err == nil || !strings.Contains(err.Error(), `"bad"`) || ctx.Err() != nil {
		t.Errorf("Run = %v, want an error naming the key \"bad\" before the ctx ends", err)
	}
	m = e.migration("undecodable", "p", addMigrated, WithSegments(1), WithSkipFailures())
	if err := m.Run(ctx); err != nil {
		t.Fatalf("Run with SkipFailures = %v, want nil (the item recorded as failed)", err)
	}
	p := m.Progress()
	if p.Failed != 1 || len(p.Failures) != 1 || p.Failures[0].Item.ID != "bad" || !strings.Contains(fmt.Sprint(p.Failures[0].Err), `"bad"`) {
		t.Errorf("progress %+v, want one failure of item \"bad\" naming it", p)
	}
	for i := range e.n {
		a, err := e.items.Load(t.Context(), account{ID: key(i)}, dynamo.ConsistentRead())
		if err != nil || a.Migrated != 1 {
			t.Errorf("item %s: %+v, %v; want migrated once", key(i), a, err)
		}
	}
}

// TestFunctionChangingTheKeyInPlaceWritesNoOtherItem pins the same for a
// pointer type whose function changes the key of the item it was given in
// place: the key scanned is compared, not the (shared) item's.
func TestFunctionChangingTheKeyInPlaceWritesNoOtherItem(t *testing.T) {
	e := newEnv(t, 2)
	m, err := NewMigration(dynamo.NewMapper(e.c), e.table, "move-key-ptr", func(a *account) (*account, error) {
		if a.ID != key(0) {
			return a, dynamo.ErrNoChange
		}
		a.ID, a.Migrated = key(1), 100
		return a, nil
	}, WithFleet(e.leaseClient("p"), e.leases), WithSegments(1), WithPollInterval(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "key") {
		t.Errorf("Run = %v, want the item's failure for a changed key", err)
	}
	if got, err := e.items.Load(context.Background(), account{ID: key(1)}); err != nil || got.Migrated != 0 {
		t.Errorf("item %s = %+v, %v: written over by the function's copy of %s", key(1), got, err, key(0))
	}
}

// TestMigrationCancelledAtRandomAndResumed: a migration run by two
// processes at once, both stopped (their ctx cancelled) after a random
// number of items, again and again, then run to its end, changes every
// item exactly once, and the processes' Changed counts add up to the items.
func TestMigrationCancelledAtRandomAndResumed(t *testing.T) {
	leaktest.Check(t, backfillPkg)
	e := newEnv(t, 600)
	r := rand.New(rand.NewPCG(1, 2))
	var changed int64
	for round := 0; ; round++ {
		last := round >= 6
		var ms []*Migration[account]
		errs := make(chan error, 2)
		for p := range 2 {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			stopAt := int64(1 + r.IntN(150))
			var calls atomic.Int64
			m := e.migration("stop-go", fmt.Sprintf("p%d-%d", round, p), func(a account) (account, error) {
				if calls.Add(1) == stopAt && !last {
					cancel()
				}
				return addMigrated(a)
			}, WithSegments(4), WithPageSize(20))
			ms = append(ms, m)
			go func() { errs <- m.Run(ctx) }()
		}
		finished := 0
		for range 2 {
			switch err := <-errs; {
			case err == nil:
				finished++
			case !errors.Is(err, context.Canceled):
				t.Fatalf("round %d: Run = %v, want nil or context.Canceled", round, err)
			}
		}
		for _, m := range ms {
			changed += m.Progress().Changed
		}
		if finished > 0 {
			break
		}
		if last {
			t.Fatal("the last round, not cancelled, did not finish")
		}
	}
	e.check(nil)
	if changed != int64(e.n) {
		t.Errorf("the runs counted %d items changed, want %d", changed, e.n)
	}
}

// An item deleted and created again
// (by the mapper: version 1 again) between the scan and the migration's
// write is a live write like any other, and wins: the function runs on the
// new item as stored, not on the scanned one — the write must not carry
// the old item's changed attributes over the new item.
func TestRecreatedSinceScanKeepsTheNewItem(t *testing.T) {
	e := newEnv(t, 1)
	var once sync.Once
	m := e.migration("recreated", "w1", func(a account) (account, error) {
		once.Do(func() {
			if _, err := e.c.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: &e.table,
				Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: a.ID}}}); err != nil {
				t.Error(err)
			}
			// A new account under the same key, as a mapper's Save of a new item writes it.
			if _, err := e.items.Save(context.Background(), account{ID: a.ID, Hits: 5, Migrated: 7}); err != nil {
				t.Error(err)
			}
		})
		return addMigrated(a)
	})
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := e.items.Load(t.Context(), account{ID: key(0)}, dynamo.ConsistentRead())
	if err != nil {
		t.Fatal(err)
	}
	if got.Hits != 5 || got.Migrated != 8 {
		t.Errorf("re-created item after the migration: %+v; want hits 5 and migrated 8 (the function run on the new item)", got)
	}
}

// pausedAfterCheckpointRead is a process's client that, once the
// segment's first page and its checkpoint have both been read (at once),
// holds that checkpoint read's answer and every later call until thaw is
// closed: the process is paused between reading its checkpoint and using
// the page read with it.
type pausedAfterCheckpointRead struct {
	dynamo.Client
	checkpoints string
	scanned     chan struct{} // closed when the first Scan has returned
	scanOnce    sync.Once
	paused      chan struct{} // closed when the checkpoint read is held
	pauseOnce   sync.Once
	thaw        chan struct{}
	reads       atomic.Int64 // of the segment's checkpoint
}

func (p *pausedAfterCheckpointRead) gate() {
	select {
	case <-p.paused:
		<-p.thaw
	default:
	}
}

func (p *pausedAfterCheckpointRead) GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	p.gate()
	out, err := p.Client.GetItem(ctx, in, optFns...)
	if aws.ToString(in.TableName) == p.checkpoints {
		// (The first read of the checkpoint is Run's, before it starts: is
		// the migration one an earlier release started.)
		if id, ok := in.Key["key"].(*types.AttributeValueMemberS); ok && id.Value == checkpointKey("peer", 0) && p.reads.Add(1) == 2 {
			<-p.scanned
			p.pauseOnce.Do(func() { close(p.paused) })
			<-p.thaw
		}
	}
	return out, err
}

func (p *pausedAfterCheckpointRead) Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	p.gate()
	out, err := p.Client.Scan(ctx, in, optFns...)
	p.scanOnce.Do(func() { close(p.scanned) })
	return out, err
}

func (p *pausedAfterCheckpointRead) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	p.gate()
	return p.Client.PutItem(ctx, in, optFns...)
}

func (p *pausedAfterCheckpointRead) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	p.gate()
	return p.Client.UpdateItem(ctx, in, optFns...)
}

func (p *pausedAfterCheckpointRead) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	p.gate()
	return p.Client.BatchGetItem(ctx, in, optFns...)
}

func (p *pausedAfterCheckpointRead) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	p.gate()
	return p.Client.TransactWriteItems(ctx, in, optFns...)
}

// A process paused right after it read a fresh segment's first page and
// its checkpoint (at once), whose lease runs out meanwhile, while a peer
// takes the segment, changes every item and checkpoints it done: resumed,
// it uses neither its stale page nor its stale checkpoint to change
// anything again — every item changed exactly once, the peer's count is
// every item, the paused one's none — and its Run ends with the
// migration done.
func TestPausedAfterFirstPageAndCheckpointChangesNothingAgain(t *testing.T) {
	leaktest.Check(t, backfillPkg)
	e := newEnv(t, 60)
	p := &pausedAfterCheckpointRead{Client: e.c, checkpoints: e.leases,
		scanned: make(chan struct{}), paused: make(chan struct{}), thaw: make(chan struct{})}
	thawed := sync.OnceFunc(func() { close(p.thaw) })
	t.Cleanup(thawed)
	lc, err := lease.New(dynamo.NewMapper(p), e.leases, lease.WithOwner("paused"),
		lease.WithLeaseDuration(2*time.Second), lease.WithHeartbeatInterval(500*time.Millisecond),
		lease.WithPollInterval(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lc.Close(context.Background()) })
	paused, err := NewMigration(dynamo.NewMapper(p), e.table, "peer", addMigrated, WithFleet(lc, e.leases), WithSegments(1), WithPageSize(100))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- paused.Run(ctx) }()
	select {
	case <-p.paused:
	case err := <-done:
		t.Fatalf("Run returned %v before reading its first page and checkpoint", err)
	}
	peer := e.migration("peer", "peer", addMigrated, WithSegments(1), WithPageSize(100))
	if err := peer.Run(ctx); err != nil {
		t.Fatalf("the peer's Run: %v", err)
	}
	thawed()
	if err := <-done; err != nil {
		t.Fatalf("the paused process's Run after it resumed: %v", err)
	}
	e.check(nil)
	pp, pa := peer.Progress(), paused.Progress()
	t.Logf("peer: %+v\npaused: %+v", pp, pa)
	if pp.Changed != int64(e.n) || pa.Changed != 0 {
		t.Errorf("changed: peer %d, paused %d; want %d and 0", pp.Changed, pa.Changed, e.n)
	}
}

// A query migration over an index whose sort key has several attributes
// refuses a function that changes any of them (the item would move along
// the query), naming the first changed, and lets the others change.
func TestMovesIndexSortChecksEverySortAttribute(t *testing.T) {
	type order struct {
		ID     string `dynamo:"id,hash"`
		Status string `dynamo:"status"`
		Day    int    `dynamo:"day"`
		Note   string `dynamo:"note"`
	}
	m := &Migration[order]{indexSort: []string{"status", "day"}}
	cur := order{ID: "o1", Status: "open", Day: 3}
	for _, tc := range []struct {
		out  order
		want string
	}{
		{order{ID: "o1", Status: "open", Day: 3, Note: "x"}, ""},
		{order{ID: "o1", Status: "paid", Day: 3}, "status"},
		{order{ID: "o1", Status: "open", Day: 4}, "day"},
	} {
		if got := m.movesIndexSort(cur, tc.out); got != tc.want {
			t.Errorf("movesIndexSort(%+v) = %q, want %q", tc.out, got, tc.want)
		}
	}
}
