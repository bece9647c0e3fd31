package backfill

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/ddbkit/dynamo"
)

// ranked is an item of an index sorted by rank: a migration of a query of
// that index whose function moves the rank moves the item in the index.
type ranked struct {
	ID       string `dynamo:"id,hash"`
	Version  int64  `dynamo:"version,version"`
	Grp      string `dynamo:"grp" index:"ByRank,hash"`
	Rank     int64  `dynamo:"rank" index:"ByRank,range"`
	Migrated int64  `dynamo:"migrated"`
}

// newRanked returns an env and a table of its own with n ranked items, all
// in group "g", ranked 0 to n-1.
func newRanked(t *testing.T, n int) (*env, *dynamo.Table[ranked]) {
	t.Helper()
	e := newEnv(t, 0)
	items, err := dynamo.NewTable[ranked](dynamo.NewMapper(e.c), fmt.Sprintf("backfill-rank-%d", time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	if err := items.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = items.DeleteTable(context.Background()) })
	for i := range n {
		if _, err := items.Save(t.Context(), ranked{ID: key(i), Grp: "g", Rank: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	return e, items
}

// A query migration of an index whose function changes the index's sort
// key would move each item past the query's cursor, to be found and changed
// again (an outsider saw 20 of 20 items changed up to 5 times): the change
// is refused, naming the attribute, and no item is changed twice.
func TestIndexQueryMigrationRefusesMovingTheSortKey(t *testing.T) {
	const n = 20
	e, items := newRanked(t, n)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var calls atomic.Int64
	m, err := NewQueryMigration(dynamo.NewMapper(e.c), items.Name(), "rerank", expression.Key("grp").Equal(expression.Value("g")),
		func(r ranked) (ranked, error) {
			if calls.Add(1) > 4*n {
				cancel() // it would go on for ever
			}
			r.Rank += 1000
			r.Migrated++
			return r, nil
		}, WithIndex("ByRank"), WithFleet(e.leaseClient("w1"), e.leases), WithPageSize(5), WithPollInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	runErr := m.Run(ctx)
	if !errors.Is(runErr, dynamo.ErrInvalidInput) || !strings.Contains(runErr.Error(), `"rank"`) {
		t.Errorf("Run: %v; want ErrInvalidInput naming the index's sort key \"rank\"", runErr)
	}
	for it, err := range items.Scan(t.Context(), dynamo.ConsistentRead()) {
		if err != nil {
			t.Fatal(err)
		}
		if it.Migrated > 1 {
			t.Errorf("%s changed %d times", it.ID, it.Migrated)
		}
	}
}

// A query migration of an index that leaves the index's keys as they are
// runs to its end, each item changed once; an Index the table lacks is
// refused before any item is read.
func TestIndexQueryMigrationKeepingTheSortKeyChangesEachItemOnce(t *testing.T) {
	const n = 12
	e, items := newRanked(t, n)
	bump := func(r ranked) (ranked, error) { r.Migrated++; return r, nil }
	q := expression.Key("grp").Equal(expression.Value("g"))
	bad, err := NewQueryMigration(dynamo.NewMapper(e.c), items.Name(), "no-index", q, bump, WithIndex("ByNothing"), WithFleet(e.leaseClient("w1"), e.leases))
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.Run(t.Context()); !errors.Is(err, dynamo.ErrInvalidInput) || !strings.Contains(err.Error(), "ByNothing") {
		t.Errorf("Run with a missing index: %v; want ErrInvalidInput naming it", err)
	}
	m, err := NewQueryMigration(dynamo.NewMapper(e.c), items.Name(), "keep", q, bump, WithIndex("ByRank"), WithFleet(e.leaseClient("w1"), e.leases), WithPageSize(5), WithPollInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	for it, err := range items.Scan(t.Context(), dynamo.ConsistentRead()) {
		if err != nil {
			t.Fatal(err)
		}
		if it.Migrated != 1 {
			t.Errorf("%s changed %d times, want once", it.ID, it.Migrated)
		}
	}
}
