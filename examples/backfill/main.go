package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/backfill"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/lease"
)

func main() {
	items := flag.Int("items", 5000, "number of items to migrate")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	endpoint, stop, err := dynamotest.Start(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	if err := run(ctx, os.Stdout, endpoint, *items); err != nil {
		stop()
		log.Fatal(err)
	}
}

// Customer is the item migrated: Tier is the new field; Visits counts the
// live service's writes.
type Customer struct {
	ID      string `dynamo:"id,hash"`
	Version int64  `dynamo:"version,version"`
	Visits  int64  `dynamo:"visits"`
	Tier    string `dynamo:"tier,omitempty"`
}

func run(ctx context.Context, w io.Writer, endpoint string, n int) error {
	client := dynamotest.NewClient(endpoint)
	suffix := fmt.Sprintf("%08x", rand.Uint32())
	customers, err := dynamo.NewTable[Customer](dynamo.NewMapper(client), "Customers-"+suffix)
	if err != nil {
		return err
	}
	if err := customers.CreateTable(ctx); err != nil {
		return err
	}
	defer customers.DeleteTable(context.WithoutCancel(ctx))
	leaseTable := "Leases-" + suffix // shares the segments and holds the checkpoints
	leases, err := lease.New(dynamo.NewMapper(client), leaseTable, lease.WithPollInterval(100*time.Millisecond))
	if err != nil {
		return err
	}
	defer leases.Close(context.WithoutCancel(ctx))
	if err := leases.CreateTable(ctx); err != nil {
		return err
	}
	defer client.DeleteTable(context.WithoutCancel(ctx), &dynamodb.DeleteTableInput{TableName: aws.String(leaseTable)})

	fmt.Fprintf(w, "Writing %d customers...\n", n)
	if err := fill(ctx, customers, n); err != nil {
		return err
	}

	// The live service: 4 writers adding visits to random customers.
	// visits counts the acknowledged ones, failed those whose Update
	// returned an error (applied or not: nobody knows).
	visits := make([]atomic.Int64, n)
	failed := make([]atomic.Int64, n)
	var stopped atomic.Bool
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for !stopped.Load() {
				i := r.IntN(n)
				if _, err := customers.Update(context.WithoutCancel(ctx), Customer{ID: id(i)}, func(c Customer) (Customer, error) {
					c.Visits++
					return c, nil
				}); err == nil {
					visits[i].Add(1)
				} else {
					failed[i].Add(1)
				}
			}
		}()
	}

	m, err := backfill.NewMigration(customers.Mapper(), customers.Name(), "customers-tier", func(c Customer) (Customer, error) {
		if c.Tier != "" {
			return c, dynamo.ErrNoChange
		}
		c.Tier = "standard"
		return c, nil
	}, backfill.WithFleet(leases, leaseTable), backfill.WithSegments(8), backfill.WithPollInterval(200*time.Millisecond),
		backfill.WithCapacity(0, 2000))
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "Migrating while 4 writers update random customers:")
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for err = nil; ; {
		select {
		case err = <-done:
		case <-tick.C:
			fmt.Fprint(w, "\r"+bar(m.Progress(), n))
			continue
		}
		break
	}
	stopped.Store(true)
	wg.Wait()
	p := m.Progress()
	fmt.Fprintln(w, "\r"+bar(p, n))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "changed %d, unchanged %d, skipped %d, rerun after a conflict %d, failed %d; %.0f read and %.0f write units\n",
		p.Changed, p.Unchanged, p.Skipped, p.Reruns, p.Failed, p.ReadUnits, p.WriteUnits)

	// Check: every customer has its tier and every acknowledged visit
	// (and no more than were sent).
	bad := 0
	for c, err := range customers.Scan(ctx, dynamo.ConsistentRead()) {
		if err != nil {
			return err
		}
		var i int
		fmt.Sscanf(c.ID, "c%06d", &i)
		if c.Tier != "standard" || c.Visits < visits[i].Load() || c.Visits > visits[i].Load()+failed[i].Load() {
			bad++
		}
	}
	var total int64
	for i := range visits {
		total += visits[i].Load()
	}
	if bad > 0 {
		return fmt.Errorf("%d customers lack the tier or a visit", bad)
	}
	fmt.Fprintf(w, "all %d customers have their tier, and all %d live writes are there\n", n, total)
	return nil
}

func id(i int) string { return fmt.Sprintf("c%06d", i) }

// fill saves n customers, 16 at a time.
func fill(ctx context.Context, t *dynamo.Table[Customer], n int) error {
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 16 {
				if _, err := t.Save(ctx, Customer{ID: id(i)}); err != nil {
					errs[g] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// bar renders progress as a bar with the estimate of the time left.
func bar(p backfill.Progress[Customer], n int) string {
	done := p.Changed + p.Unchanged + p.Skipped + p.Failed
	frac := min(1, float64(done)/float64(max(n, 1)))
	const width = 30
	full := int(frac * width)
	left := "?"
	if p.Remaining >= 0 {
		left = p.Remaining.Round(100 * time.Millisecond).String()
	}
	return fmt.Sprintf("[%s%s] %3.0f%% %d/%d  segments %d/%d  left %s   ",
		strings.Repeat("#", full), strings.Repeat(".", width-full), frac*100, done, n, p.SegmentsDone, p.Segments, left)
}
