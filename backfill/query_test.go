package backfill

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/leaktest"
)

// entry is an item of a table with a sort key: partition PK holds the
// entries SK. Status is the hash key of the index ByStatus.
type entry struct {
	PK       string `dynamo:"pk,hash"`
	SK       string `dynamo:"sk,range"`
	Version  int64  `dynamo:"version,version"`
	Status   string `dynamo:"status,omitempty" index:"ByStatus,hash"`
	Hits     int64  `dynamo:"hits"`
	Migrated int64  `dynamo:"migrated"`
}

// partitions are the partitions of a qenv's table.
var partitions = []string{"a", "b", "c"}

// qenv is a table of perPart entries in each of partitions (every third
// one "open"), and a lease table.
type qenv struct {
	*env
	entries *dynamo.Table[entry]
	perPart int
}

// newQEnv makes a qenv; with an index, the table has the index ByStatus,
// projecting only the keys, so that its items lack hits and migrated.
func newQEnv(t *testing.T, perPart int, index bool) *qenv {
	t.Helper()
	c := dynamotest.Client(t)
	e := &qenv{env: &env{t: t, c: c, n: perPart * len(partitions),
		leases: dynamotest.KeyTable(t, c, "", "key", types.ScalarAttributeTypeS, "", "")}, perPart: perPart}
	var err error
	if index {
		e.table = fmt.Sprintf("backfill-query-%d", time.Now().UnixNano())
		if e.entries, err = dynamo.NewTable[entry](dynamo.NewMapper(c), e.table); err != nil {
			t.Fatal(err)
		}
		if err := e.entries.CreateTable(t.Context(), dynamo.WithProjection("ByStatus", types.Projection{ProjectionType: types.ProjectionTypeKeysOnly})); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.entries.DeleteTable(context.Background()) })
	} else {
		e.table = dynamotest.KeyTable(t, c, "", "pk", types.ScalarAttributeTypeS, "sk", types.ScalarAttributeTypeS)
		if e.entries, err = dynamo.NewTable[entry](dynamo.NewMapper(c), e.table); err != nil {
			t.Fatal(err)
		}
	}
	var reqs []types.WriteRequest
	flush := func() {
		for len(reqs) > 0 {
			out, err := c.BatchWriteItem(t.Context(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{e.table: reqs}})
			if err != nil {
				t.Fatal(err)
			}
			reqs = out.UnprocessedItems[e.table]
		}
	}
	for i := range e.n {
		pk, sk := e.at(i)
		it := map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk},
			"version": &types.AttributeValueMemberN{Value: "1"},
			"hits":    &types.AttributeValueMemberN{Value: "0"}, "migrated": &types.AttributeValueMemberN{Value: "0"},
		}
		if i%3 == 0 {
			it["status"] = &types.AttributeValueMemberS{Value: "open"}
		}
		if reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}); len(reqs) == 25 {
			flush()
		}
	}
	flush()
	return e
}

// at returns the keys of entry i.
func (e *qenv) at(i int) (pk, sk string) { return partitions[i/e.perPart], key(i % e.perPart) }

// writers runs w goroutines of version-checked Updates adding one hit to
// random entries of every partition until stop is called, which returns
// the hits per entry.
func (e *qenv) writers(w int) (stop func() []int64) {
	return e.writersWith(w, func(ctx context.Context, i int) error {
		pk, sk := e.at(i)
		_, err := e.entries.Update(ctx, entry{PK: pk, SK: sk}, func(x entry) (entry, error) {
			x.Hits++
			return x, nil
		})
		return err
	})
}

// check fails the test unless each entry i was migrated once when in(i),
// never otherwise, and holds hits[i] live writes.
func (e *qenv) check(hits []int64, in func(i int) bool) {
	e.t.Helper()
	bad := 0
	for i := range e.n {
		pk, sk := e.at(i)
		x, err := e.entries.Load(e.t.Context(), entry{PK: pk, SK: sk}, dynamo.ConsistentRead())
		if err != nil {
			e.t.Fatal(err)
		}
		want := int64(0)
		if in(i) {
			want = 1
		}
		if x.Migrated != want || x.Hits != hits[i] {
			if bad++; bad < 10 {
				e.t.Errorf("%s/%s: migrated %d times (want %d), %d hits (want %d)", pk, sk, x.Migrated, want, x.Hits, hits[i])
			}
		}
	}
	if bad > 0 {
		e.t.Fatalf("%d of %d entries wrong", bad, e.n)
	}
}

func migrateEntry(x entry) (entry, error) {
	x.Migrated++
	return x, nil
}

// TestQueryMigrationChangesOnlyItsItems: a migration of a Query (one
// partition, a sort key condition) under live writers to every partition
// changes each item the query selects exactly once, no other item, and
// keeps every live write.
func TestQueryMigrationChangesOnlyItsItems(t *testing.T) {
	leaktest.Check(t, backfillPkg)
	e := newQEnv(t, 600, false)
	stop := e.writers(4)
	q := expression.Key("pk").Equal(expression.Value("b")).And(expression.Key("sk").LessThan(expression.Value(key(400))))
	m, err := NewQueryMigration(dynamo.NewMapper(e.c), e.table, "query-b", q, migrateEntry,
		WithFleet(e.leaseClient("w1"), e.leases), WithPageSize(50), WithPollInterval(50*time.Millisecond))
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
	e.check(hits, func(i int) bool { return i/e.perPart == 1 && i%e.perPart < 400 })
	p := m.Progress()
	t.Logf("progress: %+v", p)
	if p.Changed != 400 || p.Segments != 1 || p.SegmentsDone != 1 || p.Remaining != 0 {
		t.Errorf("progress %+v: want 400 changed, 1 segment done, nothing left", p)
	}
}

// TestQueryMigrationResumesFromItsCursor: a query migration stopped
// part-way writes its checkpoint — the query's cursor — as it stops
// (here the only one: the interval is an hour), and a second run goes on
// from there: it reads again at most the page the first was in, and every
// item is changed exactly once, with every live write kept.
func TestQueryMigrationResumesFromItsCursor(t *testing.T) {
	leaktest.Check(t, backfillPkg)
	const pageSize = 50
	e := newQEnv(t, 600, false)
	stop := e.writers(4)
	q := expression.Key("pk").Equal(expression.Value("c"))
	ctx, cancel := context.WithCancel(t.Context())
	var calls atomic.Int64
	m1, err := NewQueryMigration(dynamo.NewMapper(e.c), e.table, "query-c", q, func(x entry) (entry, error) {
		if calls.Add(1) == 175 {
			cancel()
		}
		return migrateEntry(x)
	}, WithFleet(e.leaseClient("w1"), e.leases), WithPageSize(pageSize), WithPollInterval(50*time.Millisecond), WithCheckpointInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := m1.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v, want context.Canceled", err)
	}
	p1 := m1.Progress()
	m2, err := NewQueryMigration(dynamo.NewMapper(e.c), e.table, "query-c", q, migrateEntry,
		WithFleet(e.leaseClient("w2"), e.leases), WithPageSize(pageSize), WithPollInterval(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel2()
	if err := m2.Run(ctx2); err != nil {
		t.Fatal(err)
	}
	hits := stop()
	e.check(hits, func(i int) bool { return i/e.perPart == 2 })
	p2 := m2.Progress()
	t.Logf("first run: %+v\nsecond run: %+v", p1, p2)
	if p1.Changed == 0 || p1.Changed >= int64(e.perPart) {
		t.Fatalf("first run changed %d: want part of the %d", p1.Changed, e.perPart)
	}
	if p2.Scanned > int64(e.perPart)-p1.Changed+pageSize {
		t.Errorf("second run read %d items: want at most the %d left and one page again", p2.Scanned, int64(e.perPart)-p1.Changed)
	}
	checkCountsOf(t, int64(e.perPart), p1.Changed, p2.Changed, 1)
}

// checkCountsOf fails unless two runs' Changed add up to n, less at most
// one per segment (a write cut short may land uncounted).
func checkCountsOf(t *testing.T, n, a, b int64, segments int64) {
	t.Helper()
	if sum := a + b; sum > n || sum < n-segments {
		t.Errorf("changed %d + %d, want %d in all (less at most %d cut short)", a, b, n, segments)
	}
}

// TestQueryMigrationOfIndexKeepsUnprojected: a migration of a query of a
// secondary index that projects only the keys changes each item of the
// index's partition once, reading it again from the table, so that the
// attributes the index lacks — live writes among them — are kept.
func TestQueryMigrationOfIndexKeepsUnprojected(t *testing.T) {
	e := newQEnv(t, 300, true)
	stop := e.writers(4)
	m, err := NewQueryMigration(dynamo.NewMapper(e.c), e.table, "query-open", expression.Key("status").Equal(expression.Value("open")), migrateEntry,
		WithIndex("ByStatus"), WithFleet(e.leaseClient("w1"), e.leases), WithPageSize(50), WithPollInterval(50*time.Millisecond))
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
	e.check(hits, func(i int) bool { return i%3 == 0 })
	if p := m.Progress(); p.Changed != int64(e.n/3) {
		t.Errorf("progress %+v, want %d changed", p, e.n/3)
	}
}

// TestQueryOptionsRefused: a query migration refuses several segments and
// an empty key condition; a scan migration refuses Index. Each error says
// what to do.
func TestQueryOptionsRefused(t *testing.T) {
	c := dynamotest.NewClient("http://127.0.0.1:1")
	q := expression.Key("pk").Equal(expression.Value("a"))
	for name, err := range map[string]error{
		"segments": func() error {
			_, err := NewQueryMigration(dynamo.NewMapper(c), "t", "id", q, migrateEntry, WithDryRun(), WithSegments(4))
			return err
		}(),
		"no key": func() error {
			_, err := NewQueryMigration(dynamo.NewMapper(c), "t", "id", expression.KeyConditionBuilder{}, migrateEntry, WithDryRun())
			return err
		}(),
		"index on a scan": func() error {
			_, err := NewMigration(dynamo.NewMapper(c), "t", "id", migrateEntry, WithDryRun(), WithIndex("ByStatus"))
			return err
		}(),
	} {
		if err == nil || !strings.Contains(err.Error(), "backfill: New") {
			t.Errorf("%s: %v, want an error of New or NewQuery", name, err)
		}
	}
	if _, err := NewQueryMigration(dynamo.NewMapper(c), "t", "id", q, migrateEntry, WithDryRun(), WithSegments(1)); err != nil {
		t.Errorf("one segment: %v", err)
	}
}

// TestQueryDryRun: a dry run of a query migration calls the function on
// the query's items only and writes nothing.
func TestQueryDryRun(t *testing.T) {
	e := newQEnv(t, 100, false)
	m, err := NewQueryMigration(dynamo.NewMapper(e.c), e.table, "dry", expression.Key("pk").Equal(expression.Value("a")), migrateEntry, WithDryRun())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if p := m.Progress(); p.Changed != 100 || p.SegmentsDone != 1 {
		t.Errorf("dry run %+v: want 100 would change, 1 segment done", p)
	}
	out, err := e.c.Scan(t.Context(), &dynamodb.ScanInput{TableName: &e.table, ConsistentRead: aws.Bool(true),
		FilterExpression: aws.String("migrated <> :z"), ExpressionAttributeValues: map[string]types.AttributeValue{":z": &types.AttributeValueMemberN{Value: "0"}}})
	if err != nil || len(out.Items) != 0 {
		t.Errorf("dry run wrote %d items (%v)", len(out.Items), err)
	}
}
