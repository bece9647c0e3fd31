package backfill

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
)

// multi is an account as three migrations see it: each counts its
// applications in an attribute of its own (Migrated, Second, Third).
type multi struct {
	ID       string `dynamo:"id,hash"`
	Version  int64  `dynamo:"version,version"`
	Hits     int64  `dynamo:"hits"`
	Migrated int64  `dynamo:"migrated"`
	Second   int64  `dynamo:"second"`
	Third    int64  `dynamo:"third"`
}

// hitsOnly is the account as a writer that knows only its hits sees it.
type hitsOnly struct {
	ID      string `dynamo:"id,hash"`
	Version int64  `dynamo:"version,version"`
	Hits    int64  `dynamo:"hits"`
}

// counters names the attribute each migration counts in.
var counters = map[string]func(*multi) *int64{
	"first":  func(m *multi) *int64 { return &m.Migrated },
	"second": func(m *multi) *int64 { return &m.Second },
	"third":  func(m *multi) *int64 { return &m.Third },
}

// bump is migration id's change: one more in its counter, not idempotent.
func bump(id string) func(multi) (multi, error) {
	return func(m multi) (multi, error) {
		*counters[id](&m)++
		return m, nil
	}
}

// multiRun makes a process's migration id of the env's table with fn, as
// migration does, and runs it until it is done or fn has been called
// stopAfter times (0: no stop), after which its ctx is cancelled (cancel)
// or fn fails (fail). It returns Run's error and the migration.
func (e *env) multiRun(id, owner string, fn func(multi) (multi, error), stopAfter int64, fail bool, opts ...Option) (*Migration[multi], error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.t.Context(), 2*time.Minute)
	defer cancel()
	var calls atomic.Int64
	errStop := errors.New("stop here")
	wrapped := func(m multi) (multi, error) {
		if stopAfter > 0 && calls.Add(1) > stopAfter {
			if fail {
				return m, errStop
			}
			cancel()
		}
		return fn(m)
	}
	opts = append([]Option{WithFleet(e.leaseClient(owner), e.leases), WithSegments(2), WithPageSize(4), WithPollInterval(20 * time.Millisecond)}, opts...)
	m, err := NewMigration(dynamo.NewMapper(e.c), e.table, id, wrapped, opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	err = m.Run(ctx)
	e.t.Logf("%s (%s): changed %d, reruns %d: %v", id, owner, m.Progress().Changed, m.Progress().Reruns, err)
	if stopAfter == 0 && err != nil {
		e.t.Fatalf("%s (%s) run to its end: %v", id, owner, err)
	}
	return m, err
}

// checkMulti fails the test unless every item holds 1 in the counter of
// each of ids and hits[i] hits (nil: 0).
func (e *env) checkMulti(hits []int64, ids ...string) {
	e.t.Helper()
	t, err := dynamo.NewTable[multi](dynamo.NewMapper(e.c), e.table)
	if err != nil {
		e.t.Fatal(err)
	}
	got, bad := 0, 0
	for it, err := range t.Scan(e.t.Context(), dynamo.ConsistentRead()) {
		if err != nil {
			e.t.Fatal(err)
		}
		if !strings.HasPrefix(it.ID, "acct-") {
			continue
		}
		got++
		var i int
		fmt.Sscanf(it.ID, "acct-%05d", &i)
		wrong := hits == nil && it.Hits != 0 || hits != nil && it.Hits != hits[i]
		for _, id := range ids {
			wrong = wrong || *counters[id](&it) != 1
		}
		if wrong {
			if bad++; bad < 10 {
				e.t.Errorf("%+v: want 1 in the counters of %v, hits %v", it, ids, hits != nil)
			}
		}
	}
	if got != e.n || bad > 0 {
		e.t.Fatalf("%d items of %d, %d wrong", got, e.n, bad)
	}
}

// A second migration (another id) running between a first migration's
// failure and its resumption leaves the first migration's work as it is:
// resumed, the first changes none of its items again.
func TestSecondMigrationKeepsFirstsItems(t *testing.T) {
	e := newEnv(t, 60)
	if _, err := e.multiRun("first", "p1", bump("first"), 30, true, WithSegments(1), WithPageSize(60)); err == nil {
		t.Fatal("the first migration's first run: no error from its failing function")
	}
	e.multiRun("second", "p2", bump("second"), 0, false, WithSegments(1), WithPageSize(60))
	e.multiRun("first", "p3", bump("first"), 0, false, WithSegments(1), WithPageSize(60))
	e.checkMulti(nil, "first", "second")
}

// Three migrations of one table, each stopped part way (cancelled, or by
// its function failing) and resumed, interleaved in every order: every
// item changed exactly once by each.
func TestThreeMigrationsInterleavedStoppedAndResumedInEveryOrder(t *testing.T) {
	orders := [][3]string{
		{"first", "second", "third"}, {"first", "third", "second"}, {"second", "first", "third"},
		{"second", "third", "first"}, {"third", "first", "second"}, {"third", "second", "first"},
	}
	for n, order := range orders {
		t.Run(strings.Join(order[:], "-"), func(t *testing.T) {
			e := newEnv(t, 30)
			run := 0
			step := func(id string, stopAfter int64, fail bool) {
				run++
				_, _ = e.multiRun(id, fmt.Sprintf("%s-%d", id, run), bump(id), stopAfter, fail)
			}
			// Each started and stopped in this order, stopped again in the
			// reverse, then finished in this order.
			for i, id := range order {
				step(id, int64(3+i+n), i%2 == 0)
			}
			for i := range order {
				id := order[len(order)-1-i]
				step(id, int64(5+i), i%2 == 1)
			}
			for _, id := range order {
				step(id, 0, false)
			}
			e.checkMulti(nil, "first", "second", "third")
		})
	}
}

// A run stopped part way is resumed with every option a user may change:
// those its checkpoints depend on (Segments, the table, a query) are
// refused with ErrShapeChanged naming the fix, changing nothing; the others
// are honoured. Every item is changed exactly once in the end.
func TestResumeWithChangedOptions(t *testing.T) {
	e := newEnv(t, 40)
	if _, err := e.multiRun("first", "p0", bump("first"), 6, false); err == nil {
		t.Fatal("the first run was not stopped")
	}
	count := func() int64 {
		var n int64
		for it, err := range e.multiTable().Scan(t.Context(), dynamo.ConsistentRead()) {
			if err != nil {
				t.Fatal(err)
			}
			n += it.Migrated
		}
		return n
	}
	for _, segs := range []int{1, 3, 8} {
		before := count()
		_, err := e.multiRun("first", fmt.Sprintf("segs-%d", segs), bump("first"), 1<<40, false, WithSegments(segs))
		if !errors.Is(err, ErrShapeChanged) || !strings.Contains(err.Error(), "Segments(2)") {
			t.Fatalf("resumed with WithSegments(%d): %v; want ErrShapeChanged naming WithSegments(2)", segs, err)
		}
		if after := count(); after != before {
			t.Fatalf("resumed with WithSegments(%d): %d changes made, want none", segs, after-before)
		}
	}
	other := newEnv(t, 1)
	lc := e.leaseClient("other-table")
	if m, err := NewMigration(dynamo.NewMapper(e.c), other.table, "first", bump("first"), WithFleet(lc, e.leases), WithSegments(2)); err != nil {
		t.Fatal(err)
	} else if err := m.Run(t.Context()); !errors.Is(err, ErrShapeChanged) {
		t.Fatalf("the same id on another table: %v; want ErrShapeChanged", err)
	}
	if m, err := NewQueryMigration(dynamo.NewMapper(e.c), e.table, "first", keyEq("acct-00001"), bump("first"), WithFleet(lc, e.leases)); err != nil {
		t.Fatal(err)
	} else if err := m.Run(t.Context()); !errors.Is(err, ErrShapeChanged) {
		t.Fatalf("the same id as a query: %v; want ErrShapeChanged", err)
	}
	honoured := map[string][]Option{
		"PageSize(3)":            {WithPageSize(3)},
		"PageSize(200)":          {WithPageSize(200)},
		"CheckpointInterval(0)":  {WithCheckpointInterval(0)},
		"CheckpointInterval(1h)": {WithCheckpointInterval(time.Hour)},
		"StronglyConsistent":     {WithStronglyConsistent()},
		"SkipFailures":           {WithSkipFailures()},
		"Capacity":               {WithCapacity(10000, 10000)},
		"PollInterval":           {WithPollInterval(time.Millisecond)},
		"Mark":                   {WithMark("other")},
	}
	i := 0
	for name, opts := range honoured {
		i++
		if _, err := e.multiRun("first", "opt-"+name, bump("first"), 2, i%2 == 0, opts...); err == nil {
			continue // it may finish
		} else if errors.Is(err, ErrShapeChanged) {
			t.Fatalf("resumed with %s: %v", name, err)
		}
	}
	e.multiRun("first", "last", bump("first"), 0, false)
	e.checkMulti(nil, "first")
}

func (e *env) multiTable() *dynamo.Table[multi] {
	t, err := dynamo.NewTable[multi](dynamo.NewMapper(e.c), e.table)
	if err != nil {
		e.t.Fatal(err)
	}
	return t
}

// With SkipFailures, an item whose function fails is recorded; a later Run
// (the function fixed) changes it, once, and nothing else again.
func TestSkipFailuresRetriedByARerun(t *testing.T) {
	e := newEnv(t, 20)
	var broken atomic.Bool
	broken.Store(true)
	fn := func(m multi) (multi, error) {
		if m.ID == key(7) && broken.Load() {
			return m, errors.New("not yet")
		}
		return bump("first")(m)
	}
	m, err := e.multiRun("first", "p1", fn, 0, false, WithSkipFailures())
	if err != nil {
		t.Fatal(err)
	}
	if p := m.Progress(); p.Failed != 1 || p.Changed != int64(e.n-1) {
		t.Fatalf("first run: %d failed, %d changed; want 1 and %d", p.Failed, p.Changed, e.n-1)
	}
	// Run again, still failing: recorded again.
	if m, err = e.multiRun("first", "p2", fn, 0, false, WithSkipFailures()); err != nil || m.Progress().Failed != 1 || m.Progress().Changed != 0 {
		t.Fatalf("second run, still failing: %v, %+v", err, m.Progress())
	}
	broken.Store(false)
	if m, err = e.multiRun("first", "p3", fn, 0, false); err != nil || m.Progress().Changed != 1 {
		t.Fatalf("run with the function fixed: %v, changed %d; want 1", err, m.Progress().Changed)
	}
	// Done: a further run changes nothing.
	if m, err = e.multiRun("first", "p4", fn, 0, false); err != nil || m.Progress().Changed != 0 {
		t.Fatalf("run after the end: %v, changed %d; want 0", err, m.Progress().Changed)
	}
	e.checkMulti(nil, "first")
}

// slowCommits delays each write of the migration, so that several are in
// flight when one segment's function fails.
type slowCommits struct {
	dynamo.Client
}

func (s slowCommits) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	time.Sleep(20 * time.Millisecond) // latency, not synchronisation
	return s.Client.TransactWriteItems(ctx, in, optFns...)
}

func (s slowCommits) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	time.Sleep(20 * time.Millisecond)
	return s.Client.UpdateItem(ctx, in, optFns...)
}

// When a function error stops Run, Progress.Changed counts every change
// that landed, those other segments had in flight included.
func TestChangedCountsEveryCommitWhenAFunctionFails(t *testing.T) {
	for round := range 3 {
		e := newEnv(t, 300)
		var calls atomic.Int64
		fn := func(m multi) (multi, error) {
			if calls.Add(1) == int64(60+round*20) {
				return m, errors.New("fails")
			}
			return bump("first")(m)
		}
		m, err := NewMigration(dynamo.NewMapper(slowCommits{e.c}), e.table, "first", fn, WithFleet(e.leaseClient(fmt.Sprint("r", round)), e.leases),
			WithSegments(8), WithPageSize(5), WithPollInterval(20*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Run(t.Context()); err == nil {
			t.Fatal("Run: no error from the failing function")
		}
		var landed int64
		for it, err := range e.multiTable().Scan(t.Context(), dynamo.ConsistentRead()) {
			if err != nil {
				t.Fatal(err)
			}
			landed += it.Migrated
		}
		if p := m.Progress(); p.Changed != landed {
			t.Errorf("round %d: Progress.Changed %d, %d changes landed", round, p.Changed, landed)
		}
	}
}

// liveWrite is one kind of write of this library adding one hit to item
// i, retried on version conflicts; ok reports a hit that landed.
type liveWrite func(ctx context.Context, i int) (ok bool, err error)

// liveWrites are the writes of this library a service may make while
// migrations run, each adding one hit.
func (e *env) liveWrites() map[string]liveWrite {
	full := e.multiTable()
	part, err := dynamo.NewTable[hitsOnly](dynamo.NewMapper(e.c), e.table)
	if err != nil {
		e.t.Fatal(err)
	}
	save := func(opts ...dynamo.WriteOption) liveWrite {
		return func(ctx context.Context, i int) (bool, error) {
			it, err := full.Load(ctx, multi{ID: key(i)}, dynamo.ConsistentRead())
			if err != nil {
				return false, err
			}
			it.Hits++
			_, err = full.Save(ctx, it, opts...)
			if errors.Is(err, dynamo.ErrVersionConflict) {
				return false, nil
			}
			return err == nil, err
		}
	}
	return map[string]liveWrite{
		"SaveUpdate":          save(),
		"SaveUpdateSkipNulls": save(dynamo.WithSaveBehavior(dynamo.SaveUpdateSkipNulls)),
		"SavePut":             save(dynamo.WithSaveBehavior(dynamo.SavePut)),
		"SaveAppendSet":       save(dynamo.WithSaveBehavior(dynamo.SaveAppendSet)),
		// A clobber of a type modelling only the hits: the one writer of
		// its items' hits.
		"SaveClobber": func(ctx context.Context, i int) (bool, error) {
			it, err := part.Load(ctx, hitsOnly{ID: key(i)}, dynamo.ConsistentRead())
			if err != nil {
				return false, err
			}
			it.Hits++
			_, err = part.Save(ctx, it, dynamo.WithSaveBehavior(dynamo.SaveClobber))
			return err == nil, err
		},
		"Update": func(ctx context.Context, i int) (bool, error) {
			_, err := full.Update(ctx, multi{ID: key(i)}, func(m multi) (multi, error) { m.Hits++; return m, nil })
			return err == nil, err
		},
		"Add": func(ctx context.Context, i int) (bool, error) {
			_, err := full.Add(ctx, multi{ID: key(i)}, dynamo.Increment("hits", 1))
			return err == nil, err
		},
		"WriteTx": func(ctx context.Context, i int) (bool, error) {
			it, err := full.Load(ctx, multi{ID: key(i)}, dynamo.ConsistentRead())
			if err != nil {
				return false, err
			}
			it.Hits++
			err = full.Mapper().WriteTx(ctx, []dynamo.TxOp{full.TxSave(it)})
			if errors.Is(err, dynamo.ErrVersionConflict) {
				return false, nil
			}
			return err == nil, err
		},
		"Transact": func(ctx context.Context, i int) (bool, error) {
			err := full.Mapper().Transact(ctx, func(tx *dynamo.Tx) error {
				it, err := full.In(tx).Load(multi{ID: key(i)})
				if err != nil {
					return err
				}
				it.Hits++
				_, err = full.In(tx).Save(it)
				return err
			})
			return err == nil, err
		},
	}
}

// Two migrations run at once, each stopped and resumed over and over, while
// a writer of each kind of this library's writes (Save in every behaviour,
// Update, Add, WriteTx, Transact; batches insert new items) adds hits: every
// item is changed exactly once by each migration, and holds every hit that
// landed.
func TestLiveWritesOfEveryKindKeepExactlyOnce(t *testing.T) {
	e := newEnv(t, 240)
	kinds := e.liveWrites()
	names := make([]string, 0, len(kinds))
	for name := range kinds {
		names = append(names, name)
	}
	var stopped atomic.Bool
	hits := make([]atomic.Int64, e.n)
	var wg sync.WaitGroup
	for k, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(k), 3))
			for !stopped.Load() {
				i := r.IntN(e.n/len(names))*len(names) + k // this writer's items
				if ok, err := kinds[name](context.Background(), i); err != nil {
					t.Errorf("%s of %s: %v", name, key(i), err)
					return
				} else if ok {
					hits[i].Add(1)
				}
			}
		}()
	}
	// Batches insert new items meanwhile.
	full := e.multiTable()
	wg.Add(1)
	inserted := 0
	go func() {
		defer wg.Done()
		for !stopped.Load() {
			batch := make([]multi, 5)
			for j := range batch {
				batch[j] = multi{ID: fmt.Sprintf("new-%05d", inserted), Hits: 1}
				inserted++
			}
			if err := full.BatchSave(context.Background(), batch, dynamo.WithSaveBehavior(dynamo.SaveClobber)); err != nil {
				t.Errorf("BatchSave: %v", err)
				return
			}
		}
	}()
	var mig sync.WaitGroup
	for _, id := range []string{"first", "second"} {
		mig.Add(1)
		go func() {
			defer mig.Done()
			for run := 0; ; run++ {
				stopAfter := int64(40 + 13*run)
				if run >= 8 {
					stopAfter = 0
				}
				_, err := e.multiRun(id, fmt.Sprintf("%s-%d", id, run), bump(id), stopAfter, run%2 == 1, WithPageSize(10), WithSegments(4))
				if err == nil {
					return
				}
			}
		}()
	}
	mig.Wait()
	stopped.Store(true)
	wg.Wait()
	want := make([]int64, e.n)
	for i := range hits {
		want[i] = hits[i].Load()
	}
	var total int64
	for _, h := range want {
		total += h
	}
	t.Logf("%d live hits, %d items inserted", total, inserted)
	e.checkMulti(want, "first", "second")
	for it, err := range full.Scan(t.Context(), dynamo.ConsistentRead()) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(it.ID, "new-") && (it.Migrated > 1 || it.Second > 1 || it.Hits != 1) {
			t.Errorf("inserted %+v: changed more than once, or its hit lost", it)
		}
	}
}

// keyEq is the key condition of the account id.
func keyEq(id string) expression.KeyConditionBuilder {
	return expression.Key("id").Equal(expression.Value(id))
}
