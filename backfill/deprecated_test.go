package backfill

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// Each deprecated option sets what its With form sets.
func TestDeprecatedOptionsAreTheirWithForms(t *testing.T) {
	apply := func(opts ...Option) options {
		var o options
		for _, opt := range opts {
			opt(&o)
		}
		return o
	}
	for name, pair := range map[string][2]Option{
		"Fleet":              {Fleet(nil, "cps"), WithFleet(nil, "cps")},
		"Segments":           {Segments(3), WithSegments(3)},
		"PageSize":           {PageSize(7), WithPageSize(7)},
		"Capacity":           {Capacity(5, 6), WithCapacity(5, 6)},
		"DryRun":             {DryRun(), WithDryRun()},
		"SkipFailures":       {SkipFailures(), WithSkipFailures()},
		"Mark":               {Mark("m"), WithMark("m")},
		"PollInterval":       {PollInterval(time.Minute), WithPollInterval(time.Minute)},
		"CheckpointInterval": {CheckpointInterval(time.Hour), WithCheckpointInterval(time.Hour)},
		"StronglyConsistent": {StronglyConsistent(), WithStronglyConsistent()},
		"Index":              {Index("ByX"), WithIndex("ByX")},
	} {
		if got, want := apply(pair[0]), apply(pair[1]); !reflect.DeepEqual(got, want) || reflect.DeepEqual(got, options{}) {
			t.Errorf("%s sets %+v, With%s sets %+v", name, got, name, want)
		}
	}
}

// The constructors that take a mapper refuse a nil one, a mapper without a
// client, and MapperOptions (the mapper's own options apply), each naming
// the fix, before sending anything.
func TestMigrationConstructorsRefuseBadMappers(t *testing.T) {
	c := dynamotest.NewClient("http://127.0.0.1:1")
	q := expression.Key("id").Equal(expression.Value("a"))
	for name, tc := range map[string]struct {
		err  error
		want string
	}{
		"nil mapper": {func() error {
			_, err := NewMigration[account](nil, "t", "id", addMigrated, WithDryRun())
			return err
		}(), "backfill: NewMigration: nil mapper: pass the dynamo.Mapper"},
		"nil mapper, query": {func() error {
			_, err := NewQueryMigration[account](nil, "t", "id", q, addMigrated, WithDryRun())
			return err
		}(), "backfill: NewQueryMigration: nil mapper"},
		"nil mapper, clean": {func() error {
			_, err := NewCleanMigration[account](nil, "t", "id", WithDryRun())
			return err
		}(), "backfill: NewCleanMigration: nil mapper"},
		"mapper without a client": {func() error {
			_, err := NewMigration(dynamo.NewMapper(nil), "t", "id", addMigrated, WithDryRun())
			return err
		}(), "the mapper has no client: make it with dynamo.NewMapper(client)"},
		"MapperOptions with a mapper": {func() error {
			_, err := NewMigration(dynamo.NewMapper(c), "t", "id", addMigrated, WithDryRun(), MapperOptions())
			return err
		}(), "MapperOptions with a mapper: build the mapper with those options"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", name, tc.err, tc.want)
		}
	}
	if _, err := New(c, "t", "id", addMigrated, WithDryRun(), MapperOptions(dynamo.WithWriteTokenAttribute("tok"))); err != nil {
		t.Errorf("New with MapperOptions: %v", err)
	}
}

// The deprecated constructors and option names work as before: New with
// every old option name (and MapperOptions, whose write token attribute
// the writes use) changes every item once, Clean of it finds nothing to
// remove, and NewQuery's dry run reads its partition. NewMigration writes
// with the options of the mapper it is given.
func TestDeprecatedNamesWorkAsBefore(t *testing.T) {
	e := newEnv(t, 40)
	m, err := New(e.c, e.table, "old-names", addMigrated, Fleet(e.leaseClient("w1"), e.leases), Segments(2), PageSize(10),
		Capacity(0, 0), SkipFailures(), Mark("backfill"), PollInterval(20*time.Millisecond), CheckpointInterval(0),
		StronglyConsistent(), MapperOptions(dynamo.WithWriteTokenAttribute("old_tok")))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.check(nil)
	e.wroteToken(key(7), "old_tok")

	c, err := Clean[account](e.c, e.table, "old-names", Fleet(e.leaseClient("w2"), e.leases), Segments(2), PollInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(t.Context()); err != nil {
		t.Fatalf("Clean of a done migration: %v", err)
	}
	if p := c.Progress(); p.Changed != 0 || p.Scanned != 40 {
		t.Errorf("Clean with no marks: %+v; want 40 scanned, none changed", p)
	}

	dry, err := NewQuery(e.c, e.table, "old-query", expression.Key("id").Equal(expression.Value(key(3))), addMigrated, DryRun())
	if err != nil {
		t.Fatal(err)
	}
	if err := dry.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if p := dry.Progress(); p.Scanned != 1 || p.Changed != 1 {
		t.Errorf("NewQuery dry run: %+v; want 1 scanned, 1 changed", p)
	}

	n, err := NewMigration(dynamo.NewMapper(e.c, dynamo.WithWriteTokenAttribute("new_tok")), e.table, "new-names", addMigrated,
		WithFleet(e.leaseClient("w3"), e.leases), WithSegments(2), WithPollInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.wroteToken(key(7), "new_tok")
}

// wroteToken fails the test unless the stored item id holds a write token
// in the attribute attr.
func (e *env) wroteToken(id, attr string) {
	e.t.Helper()
	out, err := e.c.GetItem(e.t.Context(), &dynamodb.GetItemInput{TableName: aws.String(e.table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id}}})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, ok := out.Item[attr].(*types.AttributeValueMemberB); !ok {
		e.t.Errorf("item %s: no write token in %q: %v", id, attr, out.Item)
	}
}
