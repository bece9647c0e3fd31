package backfill_test

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/backfill"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/lease"
)

// The examples run against the DynamoDB server DYNAMODB_ENDPOINT names
// (DynamoDB Local), in tables of their own that they delete at the end.
// TestMain sets client.
var client *dynamodb.Client

// TestMain gives the examples and the tests one server: the one
// DYNAMODB_ENDPOINT names, else a DynamoDB Local started for this test
// binary (named in DYNAMODB_ENDPOINT, so that dynamotest.Client uses it
// too) and stopped at its end. When none can be had, the examples fail
// naming why, and the tests fail as dynamotest.Client makes them.
func TestMain(m *testing.M) {
	if dynamotest.ShortWithoutServer() {
		dynamotest.Main(m) // skips the examples and the tests that need a server
	}
	ep, stop, err := dynamotest.Start(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "backfill tests: no DynamoDB server for the examples: %v\n", err)
		ep, stop = "http://dynamodb-unavailable.invalid", func() {}
	} else {
		os.Setenv("DYNAMODB_ENDPOINT", ep)
	}
	client = dynamotest.NewClient(ep)
	code := m.Run()
	stop()
	os.Exit(code)
}

// unique names a table for one run of an example.
func unique(name string) string { return fmt.Sprintf("%s-%08x", name, rand.Uint32()) }

// newLeases makes the lease table that shares the migration's segments and
// holds its checkpoints. Short timings keep the example quick; the
// defaults suit production.
func newLeases(ctx context.Context) (*lease.Client, string) {
	name := unique("Leases")
	leases, err := lease.New(dynamo.NewMapper(client), name,
		lease.WithPollInterval(50*time.Millisecond), lease.WithOwner("example"))
	if err != nil {
		log.Fatal(err)
	}
	if err := leases.CreateTable(ctx); err != nil {
		log.Fatal(err)
	}
	return leases, name
}

// dropTable deletes a table the example made.
func dropTable[T any](ctx context.Context, t *dynamo.Table[T]) {
	if err := t.DeleteTable(ctx); err != nil {
		log.Print(err)
	}
}

// User is stored with its display name under "nm"; the service moves to
// "name".
type User struct {
	ID      string `dynamo:"id,hash"`
	Version int64  `dynamo:"version,version"`
	OldName string `dynamo:"nm,omitempty"` // read during the move; removed when empty
	Name    string `dynamo:"name,omitempty"`
}

// Recipe: an attribute renamed. While the migration runs the service reads
// both attributes (Name, else OldName) and writes Name; the migration moves
// the rest. Items already moved say "nothing to change".
func Example_renameAttribute() {
	ctx := context.Background()
	users, err := dynamo.NewTable[User](dynamo.NewMapper(client), unique("Users"))
	if err != nil {
		log.Fatal(err)
	}
	if err := users.CreateTable(ctx); err != nil {
		log.Fatal(err)
	}
	defer dropTable(ctx, users)
	for i := range 20 {
		u := User{ID: fmt.Sprintf("u%02d", i), OldName: fmt.Sprintf("user %d", i)}
		if i%4 == 0 {
			u = User{ID: u.ID, Name: u.OldName} // written by the new code already
		}
		if _, err := users.Save(ctx, u); err != nil {
			log.Fatal(err)
		}
	}
	leases, leaseTable := newLeases(ctx)
	defer leases.Close(ctx)

	m, err := backfill.NewMigration(users.Mapper(), users.Name(), "users-rename-nm", func(u User) (User, error) {
		if u.OldName == "" {
			return u, dynamo.ErrNoChange
		}
		u.Name, u.OldName = u.OldName, ""
		return u, nil
	}, backfill.WithFleet(leases, leaseTable), backfill.WithSegments(4), backfill.WithPollInterval(50*time.Millisecond),
		backfill.WithCapacity(500, 200))
	if err != nil {
		log.Fatal(err)
	}
	if err := m.Run(ctx); err != nil {
		log.Fatal(err)
	}
	p := m.Progress()
	fmt.Printf("changed %d, unchanged %d, segments done %d of %d\n", p.Changed, p.Unchanged, p.SegmentsDone, p.Segments)
	u, err := users.Load(ctx, User{ID: "u03"})
	fmt.Printf("%+v %v\n", u, err)
	// Output:
	// changed 15, unchanged 5, segments done 4 of 4
	// {ID:u03 Version:2 OldName: Name:user 3} <nil>
}

// legacyEvent is what the table held before the service versioned it.
type legacyEvent struct {
	ID   string `dynamo:"id,hash"`
	What string `dynamo:"what"`
}

// Event is the versioned type the service uses from now on.
type Event struct {
	ID      string `dynamo:"id,hash"`
	Version int64  `dynamo:"version,version"`
	What    string `dynamo:"what"`
}

// Recipe: unversioned items given their first version. An item without a
// version reads as version zero; writing it back unchanged through Update
// stores version 1, conditioned on the item having no version yet, so a
// writer that versioned it first wins. Items with a version say "nothing to
// change".
func Example_firstVersion() {
	ctx := context.Background()
	name := unique("Events")
	legacy, err := dynamo.NewTable[legacyEvent](dynamo.NewMapper(client), name)
	if err != nil {
		log.Fatal(err)
	}
	if err := legacy.CreateTable(ctx); err != nil {
		log.Fatal(err)
	}
	defer dropTable(ctx, legacy)
	for i := range 10 {
		if _, err := legacy.Save(ctx, legacyEvent{ID: fmt.Sprintf("e%d", i), What: "login"}); err != nil {
			log.Fatal(err)
		}
	}
	events, _ := dynamo.NewTable[Event](dynamo.NewMapper(client), name)
	leases, leaseTable := newLeases(ctx)
	defer leases.Close(ctx)

	m, err := backfill.NewMigration(events.Mapper(), name, "events-first-version", func(e Event) (Event, error) {
		if e.Version != 0 {
			return e, dynamo.ErrNoChange
		}
		return e, nil // written back as version 1
	}, backfill.WithFleet(leases, leaseTable), backfill.WithSegments(2), backfill.WithPollInterval(50*time.Millisecond))
	if err != nil {
		log.Fatal(err)
	}
	if err := m.Run(ctx); err != nil {
		log.Fatal(err)
	}
	e, err := events.Load(ctx, Event{ID: "e7"})
	fmt.Printf("changed %d; %+v %v\n", m.Progress().Changed, e, err)
	// Output:
	// changed 10; {ID:e7 Version:1 What:login} <nil>
}

// order is the service's type: it declares its entity, so its reads skip
// items that do not carry kind=order — those written before the tag.
type order struct {
	ID      string `dynamo:"id,hash"`
	Kind    string `dynamo:"kind,entity=order"`
	Version int64  `dynamo:"version,version"`
	Total   int    `dynamo:"total"`
}

// untypedOrder views the same items without the entity tag, so that the
// migration reads the old items too.
type untypedOrder struct {
	ID      string `dynamo:"id,hash"`
	Kind    string `dynamo:"kind"`
	Version int64  `dynamo:"version,version"`
	Total   int    `dynamo:"total"`
}

// Recipe: adopting entity=NAME for items written before the tag. The
// migration reads through a type without the tag and stamps the entity on
// the items that lack it.
func Example_adoptEntity() {
	ctx := context.Background()
	old, err := dynamo.NewTable[untypedOrder](dynamo.NewMapper(client), unique("Orders"))
	if err != nil {
		log.Fatal(err)
	}
	if err := old.CreateTable(ctx); err != nil {
		log.Fatal(err)
	}
	defer dropTable(ctx, old)
	for i := range 12 {
		if _, err := old.Save(ctx, untypedOrder{ID: fmt.Sprintf("o%02d", i), Total: i}); err != nil {
			log.Fatal(err)
		}
	}
	orders, err := dynamo.NewTable[order](dynamo.NewMapper(client), old.Name())
	if err != nil {
		log.Fatal(err)
	}
	count := func() (n int) {
		for _, err := range orders.Scan(ctx, dynamo.ConsistentRead()) {
			if err != nil {
				log.Fatal(err)
			}
			n++
		}
		return n
	}
	fmt.Println("orders seen before:", count())

	leases, leaseTable := newLeases(ctx)
	defer leases.Close(ctx)
	m, err := backfill.NewMigration(old.Mapper(), old.Name(), "orders-adopt-entity", func(o untypedOrder) (untypedOrder, error) {
		if o.Kind != "" {
			return o, dynamo.ErrNoChange
		}
		o.Kind = "order"
		return o, nil
	}, backfill.WithFleet(leases, leaseTable), backfill.WithSegments(2), backfill.WithPollInterval(50*time.Millisecond))
	if err != nil {
		log.Fatal(err)
	}
	if err := m.Run(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("orders seen after:", count())
	// Output:
	// orders seen before: 0
	// orders seen after: 12
}

// Line is an order line: the lines of an order share its partition.
type Line struct {
	Order    string `dynamo:"order,hash"`
	N        string `dynamo:"n,range"`
	Version  int64  `dynamo:"version,version"`
	Cents    int64  `dynamo:"cents"`
	Currency string `dynamo:"currency,omitempty"`
}

// Recipe: the items of one Query. One order's lines, written before the
// service stored a currency, get the currency of the order; the other
// orders' lines are left alone.
func ExampleNewQueryMigration() {
	ctx := context.Background()
	lines, err := dynamo.NewTable[Line](dynamo.NewMapper(client), unique("Lines"))
	if err != nil {
		log.Fatal(err)
	}
	if err := lines.CreateTable(ctx); err != nil {
		log.Fatal(err)
	}
	defer dropTable(ctx, lines)
	for _, order := range []string{"o1", "o2"} {
		for i := range 5 {
			if _, err := lines.Save(ctx, Line{Order: order, N: fmt.Sprintf("%03d", i), Cents: 100}); err != nil {
				log.Fatal(err)
			}
		}
	}
	leases, leaseTable := newLeases(ctx)
	defer leases.Close(ctx)

	o1 := expression.Key("order").Equal(expression.Value("o1"))
	m, err := backfill.NewQueryMigration(lines.Mapper(), lines.Name(), "lines-o1-currency", o1, func(l Line) (Line, error) {
		if l.Currency != "" {
			return l, dynamo.ErrNoChange
		}
		l.Currency = "EUR"
		return l, nil
	}, backfill.WithFleet(leases, leaseTable), backfill.WithPollInterval(50*time.Millisecond))
	if err != nil {
		log.Fatal(err)
	}
	if err := m.Run(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("changed", m.Progress().Changed)
	for _, order := range []string{"o1", "o2"} {
		l, err := lines.Load(ctx, Line{Order: order, N: "003"})
		fmt.Printf("%+v %v\n", l, err)
	}
	// Output:
	// changed 5
	// {Order:o1 N:003 Version:2 Cents:100 Currency:EUR} <nil>
	// {Order:o2 N:003 Version:1 Cents:100 Currency:} <nil>
}
