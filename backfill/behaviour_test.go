package backfill

import (
	"context"
	"errors"
	"fmt"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/leaktest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ddbkit/dynamo"
)

// TestDryRunCountsAndWritesNothing: a dry run calls the function on every
// item, counts what would change and what would not, and writes nothing.
func TestDryRunCountsAndWritesNothing(t *testing.T) {
	leaktest.Check(t, backfillPkg)
	e := newEnv(t, 300)
	m, err := NewMigration(dynamo.NewMapper(e.c), e.table, "dry", func(a account) (account, error) {
		if a.ID < key(100) {
			return a, dynamo.ErrNoChange
		}
		return addMigrated(a)
	}, WithDryRun(), WithSegments(4))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	p := m.Progress()
	if p.Changed != 200 || p.Unchanged != 100 || p.Scanned != 300 || p.SegmentsDone != 4 {
		t.Errorf("dry run: %+v; want 200 changed, 100 unchanged, 300 scanned, 4 segments", p)
	}
	for a, err := range e.items.Scan(t.Context(), dynamo.ConsistentRead()) {
		if err != nil {
			t.Fatal(err)
		}
		if a.Version != 1 || a.Migrated != 0 {
			t.Fatalf("dry run wrote %+v", a)
		}
	}
}

// TestNoChangeWritesNothing: items whose function returns ErrNoChange keep
// their version and get no mark, and are counted Unchanged.
func TestNoChangeWritesNothing(t *testing.T) {
	e := newEnv(t, 200)
	m := e.migration("nochange", "w1", func(a account) (account, error) {
		if a.ID < key(50) {
			return a, dynamo.ErrNoChange
		}
		return addMigrated(a)
	})
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	for a, err := range e.items.Scan(t.Context(), dynamo.ConsistentRead()) {
		if err != nil {
			t.Fatal(err)
		}
		untouched := a.ID < key(50)
		if untouched && (a.Version != 1 || a.Migrated != 0) || !untouched && (a.Version != 2 || a.Migrated != 1) {
			t.Errorf("%+v", a)
		}
	}
	if p := m.Progress(); p.Unchanged != 50 || p.Changed != 150 {
		t.Errorf("progress %+v, want 50 unchanged, 150 changed", p)
	}
}

// TestFunctionErrorStopsRun: by default the first failing item stops Run
// with its error, naming the item.
func TestFunctionErrorStopsRun(t *testing.T) {
	leaktest.Check(t, backfillPkg)
	e := newEnv(t, 200)
	boom := errors.New("boom")
	m := e.migration("stop", "w1", func(a account) (account, error) {
		if a.ID == key(42) {
			return a, boom
		}
		return addMigrated(a)
	})
	err := m.Run(t.Context())
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), key(42)) {
		t.Fatalf("Run: %v, want boom naming %s", err, key(42))
	}
	a, err := e.items.Load(t.Context(), account{ID: key(42)})
	if err != nil || a.Migrated != 0 {
		t.Errorf("failed item: %+v, %v", a, err)
	}
}

// TestSkipFailuresRecordsAndGoesOn: with SkipFailures, failing items are
// recorded with their error and every other item is changed.
func TestSkipFailuresRecordsAndGoesOn(t *testing.T) {
	e := newEnv(t, 200)
	boom := errors.New("boom")
	m := e.migration("skip", "w1", func(a account) (account, error) {
		if a.ID == key(42) || a.ID == key(7) {
			return a, boom
		}
		return addMigrated(a)
	}, WithSkipFailures())
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	p := m.Progress()
	if p.Failed != 2 || len(p.Failures) != 2 || p.Changed != 198 {
		t.Fatalf("progress %+v, want 2 failed, 198 changed", p)
	}
	for _, f := range p.Failures {
		if !errors.Is(f.Err, boom) || (f.Item.ID != key(42) && f.Item.ID != key(7)) {
			t.Errorf("failure %+v", f)
		}
	}
}

// TestRunAgainAfterEndChangesNothing: a finished migration run again (same
// id) returns at once and changes nothing more.
func TestRunAgainAfterEndChangesNothing(t *testing.T) {
	e := newEnv(t, 100)
	if err := e.migration("twice", "w1", addMigrated).Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	m := e.migration("twice", "w2", addMigrated)
	start := time.Now()
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if p := m.Progress(); p.Changed != 0 || p.Scanned != 0 {
		t.Errorf("second run: %+v, want nothing scanned or changed (took %v)", p, time.Since(start))
	}
	e.check(nil)
}

// TestConflictRerunsOnStoredItem: a live write landing between the
// migration's read and its write makes the write conflict; the function
// runs again on the stored item, so the live write is kept and the change
// made once.
func TestConflictRerunsOnStoredItem(t *testing.T) {
	e := newEnv(t, 10)
	var live sync.Once
	m := e.migration("conflict", "w1", func(a account) (account, error) {
		if a.ID == key(3) {
			live.Do(func() {
				// Another writer, through another Table: not queued with the migration's.
				other, _ := dynamo.NewTable[account](dynamo.NewMapper(e.c), e.table)
				if _, err := other.Update(context.Background(), account{ID: key(3)}, func(x account) (account, error) {
					x.Hits++
					return x, nil
				}); err != nil {
					t.Error(err)
				}
			})
		}
		return addMigrated(a)
	})
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	hits := make([]int64, e.n)
	hits[3] = 1
	e.check(hits)
	if p := m.Progress(); p.Reruns != 1 || p.Changed != 10 {
		t.Errorf("progress %+v, want 1 rerun, 10 changed", p)
	}
}

// TestLostAnswersChangeOnce: when the answers to the migration's writes are
// lost — once with a live write landing before the SDK's retry, which then
// conflicts (an outcome the mapper cannot tell), and several times plainly —
// every item is still changed exactly once and the live write kept.
func TestLostAnswersChangeOnce(t *testing.T) {
	e := newEnv(t, 20)
	drop := dynamotest.NewDropper("TransactWriteItems")
	dc := drop.Client(t)
	var armed sync.Once
	m, err := NewMigration(dynamo.NewMapper(dc), e.table, "lost", func(a account) (account, error) {
		if a.ID == key(5) {
			armed.Do(func() {
				drop.ArmThen(func() {
					if _, err := e.items.Update(context.Background(), account{ID: key(5)}, func(x account) (account, error) {
						x.Hits++
						return x, nil
					}); err != nil {
						t.Error(err)
					}
					// The commits after it lose their answers too. (Armed
					// here: the page's function calls all run before its
					// commit, and an Arm beside ArmThen would replace it.)
					drop.Arm(3)
				})
			})
		}
		return addMigrated(a)
	}, WithFleet(e.leaseClient("w1"), e.leases), WithSegments(1), WithPollInterval(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if drop.Dropped() < 2 {
		t.Fatalf("dropped %d answers: the test lost none", drop.Dropped())
	}
	hits := make([]int64, e.n)
	hits[5] = 1
	e.check(hits)
	if p := m.Progress(); p.Changed != int64(e.n) {
		t.Errorf("progress %+v, want %d changed", p, e.n)
	}
}

// Clean removes the mark an earlier release wrote for the migration (and no
// other attribute) from the items holding it, once the migration is done.
func TestCleanRemovesTheMark(t *testing.T) {
	e := newEnv(t, 100)
	if err := e.migration("first", "w1", func(a account) (account, error) {
		if a.ID >= key(80) {
			return a, dynamo.ErrNoChange
		}
		return addMigrated(a)
	}).Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i := range e.n { // the marks an earlier release left
		mark := fmt.Sprintf("SET otherMark = :o, %s = :m", DefaultMark)
		values := map[string]types.AttributeValue{":o": &types.AttributeValueMemberS{Value: "other"}, ":m": &types.AttributeValueMemberS{Value: "first"}}
		if i >= 80 {
			mark = "SET otherMark = :o"
			delete(values, ":m")
		}
		if _, err := e.c.UpdateItem(t.Context(), &dynamodb.UpdateItemInput{TableName: &e.table,
			Key:                       map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: key(i)}},
			UpdateExpression:          aws.String(mark),
			ExpressionAttributeValues: values,
		}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := NewCleanMigration[account](dynamo.NewMapper(e.c), e.table, "first", WithFleet(e.leaseClient("w1"), e.leases), WithSegments(4), WithPollInterval(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if p := c.Progress(); p.Changed != 80 {
		t.Errorf("clean changed %d items, want the 80 marked", p.Changed)
	}
	out, err := e.c.Scan(t.Context(), &dynamodb.ScanInput{TableName: &e.table, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range out.Items {
		if _, ok := it[DefaultMark]; ok {
			t.Errorf("mark left on %v", it["id"])
		}
		if v, ok := it["otherMark"].(*types.AttributeValueMemberS); !ok || v.Value != "other" {
			t.Errorf("other attribute on %v: %v", it["id"], it["otherMark"])
		}
	}
}

// TestCleanRefusedUntilTheMigrationIsDone: Clean removes the marks that
// keep a migration from changing an item twice, so while the migration is
// not done — a Run stopped by a failed item (or live in another process)
// resumes from its last checkpoint and reads again the items it changed
// since — Clean's Run is refused with ErrNotDone, changing nothing. Once
// the migration is done, Clean runs (its Segments its own: the
// migration's are read from its checkpoints) and every item was changed
// once.
func TestCleanRefusedUntilTheMigrationIsDone(t *testing.T) {
	e := newEnv(t, 30)
	var calls atomic.Int64
	var failing atomic.Bool
	failing.Store(true)
	boom := errors.New("boom")
	fn := func(a account) (account, error) {
		if calls.Add(1) == 10 && failing.Load() {
			return a, boom
		}
		return addMigrated(a)
	}
	if err := e.migration("mig", "w1", fn, WithSegments(1), WithPageSize(100)).Run(t.Context()); !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want boom (the case under test: stopped with items changed since its checkpoint)", err)
	}
	clean := func(owner string) error {
		c, err := NewCleanMigration[account](dynamo.NewMapper(e.c), e.table, "mig", WithFleet(e.leaseClient(owner), e.leases), WithSegments(3), WithPollInterval(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		return c.Run(t.Context())
	}
	if err := clean("c1"); !errors.Is(err, ErrNotDone) || !strings.Contains(err.Error(), "segment 0") {
		t.Errorf("Clean while the migration is not done = %v, want ErrNotDone naming the segment", err)
	}
	failing.Store(false)
	if err := e.migration("mig", "w2", fn, WithSegments(1), WithPageSize(100)).Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := clean("c2"); err != nil {
		t.Fatalf("Clean once the migration is done = %v", err)
	}
	out, err := e.c.Scan(t.Context(), &dynamodb.ScanInput{TableName: &e.table, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range out.Items {
		if m := it["migrated"].(*types.AttributeValueMemberN).Value; m != "1" {
			t.Errorf("%s migrated %s times, want once", it["id"].(*types.AttributeValueMemberS).Value, m)
		}
		if _, ok := it[DefaultMark]; ok {
			t.Errorf("mark left on %v", it["id"])
		}
	}
}

// TestMissingTableStopsRun: a table that does not exist stops Run with an
// error saying so, instead of the segments being retried for ever.
func TestMissingTableStopsRun(t *testing.T) {
	e := newEnv(t, 0)
	m, err := NewMigration(dynamo.NewMapper(e.c), "no-such-table-backfill", "missing", addMigrated,
		WithFleet(e.leaseClient("w1"), e.leases), WithSegments(2), WithPollInterval(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := m.Run(ctx); !errors.Is(err, dynamo.ErrTableNotFound) {
		t.Fatalf("Run: %v, want ErrTableNotFound", err)
	}
}

// TestDeletedSinceScanStaysDeleted: an item deleted between the scan and
// the migration's write — with a version or without one — is not created
// again, and counts as skipped.
func TestDeletedSinceScanStaysDeleted(t *testing.T) {
	e := newEnv(t, 2)
	if _, err := e.c.UpdateItem(t.Context(), &dynamodb.UpdateItemInput{TableName: &e.table,
		Key:              map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: key(1)}},
		UpdateExpression: aws.String("REMOVE version")}); err != nil {
		t.Fatal(err)
	}
	deleted := map[string]bool{}
	var mu sync.Mutex
	m := e.migration("deleted", "w1", func(a account) (account, error) {
		mu.Lock()
		defer mu.Unlock()
		if !deleted[a.ID] {
			deleted[a.ID] = true
			if _, err := e.c.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: &e.table,
				Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: a.ID}}}); err != nil {
				t.Error(err)
			}
		}
		return addMigrated(a)
	})
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	for a, err := range e.items.Scan(t.Context(), dynamo.ConsistentRead()) {
		t.Errorf("item back after its deletion: %+v %v", a, err)
	}
	if p := m.Progress(); p.Skipped != 2 || p.Changed != 0 {
		t.Errorf("progress %+v, want 2 skipped", p)
	}
}

// updateRecorder records the UpdateItems sent to one table.
type updateRecorder struct {
	dynamo.Client
	table string
	mu    sync.Mutex
	ins   []*dynamodb.UpdateItemInput
}

func (r *updateRecorder) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if aws.ToString(in.TableName) == r.table {
		r.mu.Lock()
		r.ins = append(r.ins, in)
		r.mu.Unlock()
	}
	return r.Client.UpdateItem(ctx, in, optFns...)
}

// A function returning its item unchanged (not ErrNoChange) writes it, and
// the write is counted as a change.
func TestUnchangedResultIsCounted(t *testing.T) {
	e := newEnv(t, 20)
	m := e.migration("same", "w1", func(a account) (account, error) { return a, nil })
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if p := m.Progress(); p.Changed != 20 {
		t.Errorf("progress %+v; want 20 changed", p)
	}
}

// TestTwoMigrationsOfOneIDOnOneLeaseClient: two Migrations of the same id
// in one process, built on the same lease client (one owner: one worker of
// the migration's group), run at once: one Run is refused at once, saying
// why, the other finishes, and every item is changed exactly once.
func TestTwoMigrationsOfOneIDOnOneLeaseClient(t *testing.T) {
	e := newEnv(t, 400)
	lc := e.leaseClient("shared")
	mk := func() *Migration[account] {
		m, err := NewMigration(dynamo.NewMapper(e.c), e.table, "twin", addMigrated, WithFleet(lc, e.leases), WithSegments(4), WithPageSize(20), WithPollInterval(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b := mk(), mk()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	errs := make(chan error, 2)
	go func() { errs <- a.Run(ctx) }()
	go func() { errs <- b.Run(ctx) }()
	refused := 0
	for range 2 {
		switch err := <-errs; {
		case err == nil:
		case strings.Contains(err.Error(), "runs on this client"):
			refused++
		default:
			t.Errorf("Run: %v", err)
		}
	}
	if refused > 1 {
		t.Errorf("both Runs refused")
	}
	e.check(nil)
}

// TestCleanRacingTheMigrationsRun: a Clean started while a Run of its
// migration is under way (in another process) is refused with ErrNotDone
// and writes nothing; run again once the migration is done, it removes
// every mark, and every item was changed exactly once.
func TestCleanRacingTheMigrationsRun(t *testing.T) {
	e := newEnv(t, 200)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	m := e.migration("raced", "w1", func(a account) (account, error) {
		once.Do(func() { close(entered); <-release })
		return addMigrated(a)
	}, WithSegments(2), WithPageSize(20))
	ran := make(chan error, 1)
	go func() { ran <- m.Run(t.Context()) }()
	<-entered
	clean := func(owner string) *Migration[account] {
		c, err := NewCleanMigration[account](dynamo.NewMapper(e.c), e.table, "raced", WithFleet(e.leaseClient(owner), e.leases), WithSegments(2), WithPollInterval(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c1 := clean("c1")
	if err := c1.Run(t.Context()); !errors.Is(err, ErrNotDone) {
		t.Errorf("Clean while the migration's Run is under way = %v, want ErrNotDone", err)
	}
	if p := c1.Progress(); p.Changed != 0 || p.Scanned != 0 {
		t.Errorf("refused Clean: %+v; want nothing scanned or written", p)
	}
	close(release)
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if err := clean("c2").Run(t.Context()); err != nil {
		t.Fatalf("Clean once the migration is done = %v", err)
	}
	out, err := e.c.Scan(t.Context(), &dynamodb.ScanInput{TableName: &e.table, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range out.Items {
		if n := it["migrated"].(*types.AttributeValueMemberN).Value; n != "1" {
			t.Errorf("%v migrated %s times, want once", it["id"], n)
		}
		if _, ok := it[DefaultMark]; ok {
			t.Errorf("mark left on %v", it["id"])
		}
	}
}
