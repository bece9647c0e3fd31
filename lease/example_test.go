package lease_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/lease"
)

// client is configured elsewhere: dynamodb.NewFromConfig(cfg), or
// dynamotest.NewClient(endpoint) against DynamoDB Local.
var client *dynamodb.Client

// Report is a resource the lease protects. Token is the fencing token of the
// holder that wrote it last.
type Report struct {
	Day     string `dynamo:"day,hash"`
	Status  string `dynamo:"status"`
	Token   int64  `dynamo:"token"`
	Version int64  `dynamo:"version,version"`
}

// New sends nothing; the lease table is created once, at deployment or at
// start-up.
func ExampleNew() {
	ctx := context.Background()
	leases, err := lease.New(dynamo.NewMapper(client), "Leases",
		lease.WithLeaseDuration(10*time.Second), // lost 10 s after the last heartbeat that got through
		lease.WithOwner("worker-1"))             // default: host name and a random suffix
	if err != nil {
		log.Fatal(err)
	}
	defer leases.Close(ctx) // releases what is still held

	err = leases.CreateTable(ctx) // on demand, TTL on "expires"; waits until active
	if err != nil && !errors.Is(err, dynamo.ErrTableExists) {
		log.Fatal(err)
	}
}

// Acquire waits until the lease is free or its holder has gone silent. The
// work runs under l.Context(), which is cancelled the moment the lease is
// lost, and hands l.Token() to whatever it writes.
func ExampleClient_Acquire() {
	leases, _ := lease.New(dynamo.NewMapper(client), "Leases")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // bounds the waiting only
	defer cancel()
	l, err := leases.Acquire(ctx, "nightly-report")
	if err != nil {
		log.Fatal(err) // ctx ended first, or DynamoDB failed
	}
	defer l.Release(context.Background())

	if err := buildReport(l.Context(), l.Token()); err != nil {
		if l.Err() != nil {
			log.Printf("stopped: %v", l.Err()) // lost: taken over, or not extended in time
		}
		log.Fatal(err)
	}
}

func buildReport(ctx context.Context, token int64) error { return ctx.Err() }

// TryAcquire does not wait: a key that someone holds is ErrHeld at once,
// even if the holder has died (only waiting, as Acquire does, can tell).
func ExampleClient_TryAcquire() {
	ctx := context.Background()
	leases, _ := lease.New(dynamo.NewMapper(client), "Leases")

	l, err := leases.TryAcquire(ctx, "compaction")
	switch {
	case errors.Is(err, lease.ErrHeld):
		fmt.Println("someone else is compacting:", err) // names the holder
		return
	case err != nil:
		log.Fatal(err)
	}
	defer l.Release(ctx)
	// ... compact ...
}

// Done is closed, and Context cancelled, when the lease is lost or
// released; a worker selects on it next to its own work.
func ExampleLease_Done() {
	leases, _ := lease.New(dynamo.NewMapper(client), "Leases")
	l, err := leases.Acquire(context.Background(), "leader")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(context.Background())

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-l.Done():
			log.Printf("no longer the leader: %v", l.Err())
			return
		case <-tick.C:
			// ... lead, passing l.Token() to the systems led ...
		}
	}
}

// Stock is a resource several workers restock, one at a time under a
// lease. Token is the fencing token of the holder that wrote it last.
type Stock struct {
	SKU     string `dynamo:"sku,hash"`
	Count   int    `dynamo:"count"`
	Token   int64  `dynamo:"token"`
	Version int64  `dynamo:"version,version"`
}

// notLater is the usual fencing condition: the resource's stored token is
// not later than the writer's. With <= the holder writes again and again;
// only writers with an older token — earlier holders — are refused. (With <
// the holder's own second write would be refused.)
func notLater(token int64) dynamo.WriteOption {
	return dynamo.If(expression.Or(
		expression.AttributeNotExists(expression.Name("token")),
		expression.Name("token").LessThanEqual(expression.Value(token))))
}

// Update is Table.Update guarded by the lease: the read-modify-write loop
// (conflicts retried on the item the conflict carried), each write in one
// transaction with a check of the lease record. A worker paused past its
// lease cannot land a write after a takeover: it gets ErrLost, and nothing
// is written.
func ExampleUpdate() {
	ctx := context.Background()
	m := dynamo.NewMapper(client)
	leases, _ := lease.New(m, "Leases")
	stock, _ := dynamo.NewTable[Stock](m, "Stock")

	l, err := leases.Acquire(ctx, "restock/warehouse-7")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)

	for _, sku := range []string{"apple", "pear"} {
		s, err := lease.Update(l.Context(), l, stock, Stock{SKU: sku}, func(s Stock) (Stock, error) {
			s.Count += 100
			s.Token = l.Token() // stored on the resource, for notLater
			return s, nil
		}, notLater(l.Token()))
		switch {
		case errors.Is(err, lease.ErrLost):
			log.Print("the lease was taken over; nothing written: ", err)
			return
		case err != nil:
			log.Fatal(err)
		}
		fmt.Println(s.SKU, s.Count)
	}
}

// Transact guarded by the lease: a fenced read-modify-write of several
// items in one call. The function reads both items and moves stock; the
// commit carries the lease's guard, and runs again if an item changed.
func ExampleLease_Transact() {
	ctx := context.Background()
	m := dynamo.NewMapper(client)
	leases, _ := lease.New(m, "Leases")
	stock, _ := dynamo.NewTable[Stock](m, "Stock")

	l, err := leases.Acquire(ctx, "restock/warehouse-7")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)

	err = l.Transact(ctx, func(tx *dynamo.Tx) error {
		from, err := stock.In(tx).Load(Stock{SKU: "apple"})
		if err != nil {
			return err
		}
		to, err := stock.In(tx).Load(Stock{SKU: "apple-crate"})
		if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
			return err
		}
		to.SKU = "apple-crate"
		from.Count, to.Count = from.Count-12, to.Count+1
		from.Token, to.Token = l.Token(), l.Token()
		if _, err := stock.In(tx).Save(from, notLater(l.Token())); err != nil {
			return err
		}
		_, err = stock.In(tx).Save(to, notLater(l.Token()))
		return err
	})
	if errors.Is(err, lease.ErrLost) {
		log.Print("the lease was taken over; neither item written")
		return
	}
	if err != nil {
		log.Fatal(err)
	}
}

// Save writes through the mapper only while the lease is still held: the
// write and a check of the lease record go in one transaction, so a holder
// that was paused past its lease (GC, a frozen VM) cannot land it after a
// takeover. The report stores the token, and the If condition refuses
// tokens older than the one stored — never the holder's own.
func ExampleSave() {
	ctx := context.Background()
	m := dynamo.NewMapper(client)
	leases, _ := lease.New(m, "Leases")
	reports, _ := dynamo.NewTable[Report](m, "Reports")

	l, err := leases.Acquire(ctx, "report/2024-06-01")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)

	r, err := reports.Load(ctx, Report{Day: "2024-06-01"}, dynamo.ConsistentRead())
	if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
		log.Fatal(err)
	}
	r.Day, r.Status, r.Token = "2024-06-01", "done", l.Token()
	saved, err := lease.Save(ctx, l, reports, r, notLater(l.Token()))
	switch {
	case errors.Is(err, lease.ErrLost):
		log.Print("the lease was taken over; nothing written")
	case errors.Is(err, dynamo.ErrVersionConflict):
		log.Print("the report changed since it was read; read it again")
	case errors.Is(err, dynamo.ErrConditionFailed):
		log.Print("a later holder has written the report already")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println(saved.Version)
	}
}

// WriteTx puts several writes, on any tables of the same DynamoDB client,
// into one transaction with the lease's guard.
func ExampleLease_WriteTx() {
	ctx := context.Background()
	m := dynamo.NewMapper(client)
	leases, _ := lease.New(m, "Leases")
	reports, _ := dynamo.NewTable[Report](m, "Reports")

	l, err := leases.Acquire(ctx, "reports")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)

	today := reports.TxSave(Report{Day: "2024-06-02", Status: "open", Token: l.Token()})
	err = l.WriteTx(ctx, []dynamo.TxOp{
		today,
		reports.TxDelete(Report{Day: "2024-05-02", Version: 3}),
	})
	if errors.Is(err, lease.ErrLost) {
		log.Print("lost the lease: neither write happened")
		return
	}
	if err != nil {
		log.Fatal(err) // a *dynamo.TxError says which member failed
	}
	fmt.Println(today.Saved().Version)
}

// Guard is the check the guarded calls add; pass it to any write with
// dynamo.GuardedBy, or put it among WriteTx's ops yourself, for instance
// with a request token of your own. Its failure is then the
// *dynamo.TxError naming it, not ErrLost.
func ExampleLease_Guard() {
	ctx := context.Background()
	m := dynamo.NewMapper(client)
	leases, _ := lease.New(m, "Leases")
	reports, _ := dynamo.NewTable[Report](m, "Reports")

	l, err := leases.Acquire(ctx, "reports")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)

	err = m.WriteTx(ctx, []dynamo.TxOp{
		l.Guard(),
		reports.TxSave(Report{Day: "2024-06-03", Status: "open", Token: l.Token()}),
	}, dynamo.WithRequestToken(fmt.Sprintf("open-2024-06-03-%d", l.Token())))
	var txErr *dynamo.TxError
	if errors.As(err, &txErr) && txErr.Failure(0) != nil {
		log.Print("the guard failed: someone else holds the lease now")
	}
}

// Holder reads a key's record without acquiring it: who holds it, with
// which token, and the data the holder stored (lease.WithData), such as a
// leader's address.
func ExampleClient_Holder() {
	ctx := context.Background()
	leases, _ := lease.New(dynamo.NewMapper(client), "Leases")

	info, err := leases.Holder(ctx, "leader")
	if errors.Is(err, dynamo.ErrNotFound) {
		fmt.Println("never led")
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	if info.Released {
		fmt.Println("no leader; the last was", info.Owner)
		return
	}
	fmt.Printf("%s leads at %s (token %d)\n", info.Owner, info.Data, info.Token)
}

// Partition is a resource a group's key protects: the output of one
// partition of a job. Token is the fencing token of its last writer.
type Partition struct {
	ID      string `dynamo:"id,hash"`
	Offset  int64  `dynamo:"offset"`
	Token   int64  `dynamo:"token"`
	Version int64  `dynamo:"version,version"`
}

// A fleet of workers shares a job's 64 partitions: each runs the same
// program, and Run calls the function once per partition the worker is
// given, in a goroutine of its own, until the partition moves elsewhere
// (handed over to a worker that joined, or lost) or the worker leaves.
// Every write of the work is guarded by the partition's lease and stores
// the lease's token, so a worker paused past its lease writes nothing.
func ExampleClient_Group() {
	m := dynamo.NewMapper(client)
	leases, _ := lease.New(m, "Leases", lease.WithOwner("worker-1"))
	partitions, _ := dynamo.NewTable[Partition](m, "Partitions")

	var keys []string
	for i := range 64 {
		keys = append(keys, fmt.Sprintf("job-42/partition-%02d", i))
	}
	group, err := leases.Group("job-42", keys)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt) // Ctrl-C: leave, handing the keys over
	defer stop()
	err = group.Run(ctx, func(ctx context.Context, l *lease.Lease) error {
		// Fenced: only a token at least as high as the last writer's.
		notOlder := expression.Or(
			expression.AttributeNotExists(expression.Name("token")),
			expression.Name("token").LessThanEqual(expression.Value(l.Token())))
		for ctx.Err() == nil {
			p, err := partitions.Load(ctx, Partition{ID: l.Key()}, dynamo.ConsistentRead())
			if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
				return err // the partition is released, and taken again later
			}
			p.ID, p.Offset, p.Token = l.Key(), p.Offset+1, l.Token() // ... one step of the work ...
			if _, err := lease.Save(ctx, l, partitions, p, dynamo.If(notOlder)); err != nil {
				if l.Err() != nil {
					return nil // moved elsewhere: stop
				}
				return err
			}
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
}
