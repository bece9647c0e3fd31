package integration

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/lease"
)

// countingClient returns a client for the test server that counts its
// requests (DynamoDB round trips).
func countingClient(b *testing.B) (*dynamodb.Client, *dynamotest.Counter) {
	ct := dynamotest.NewCounter(nil)
	return ct.Client(b), ct
}

// BenchmarkLeaseAcquireRelease: an uncontended TryAcquire + Release of a
// fresh key, then of a released key; reports DynamoDB round trips per op.
func BenchmarkLeaseAcquireRelease(b *testing.B) {
	c, ct := countingClient(b)
	table := dynamotest.KeyTable(b, dynamotest.Client(b), "bench-lease", "key", types.ScalarAttributeTypeS, "", "")
	lc, err := lease.New(dynamo.NewMapper(c), table)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		key  func(i int) string
	}{
		{"key=new", func(i int) string { return "new-" + strconv.Itoa(i) + "-" + strconv.Itoa(b.N) }},
		{"key=released", func(int) string { return "same" }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			i := 0
			before := ct.Count()
			for b.Loop() {
				l, err := lc.TryAcquire(ctx, tc.key(i))
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Release(ctx); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(ct.Count()-before)/float64(b.N), "roundtrips/op")
		})
	}
}

// BenchmarkLeaseHandoff: the time from the holder's Release to the waiter
// holding the lease, with the waiter polling every 10 ms and every 100 ms.
func BenchmarkLeaseHandoff(b *testing.B) {
	table := dynamotest.KeyTable(b, dynamotest.Client(b), "bench-handoff", "key", types.ScalarAttributeTypeS, "", "")
	for _, poll := range []time.Duration{10 * time.Millisecond, 100 * time.Millisecond} {
		b.Run("poll="+poll.String(), func(b *testing.B) {
			m := dynamo.NewMapper(dynamotest.Client(b))
			holder, _ := lease.New(m, table, lease.WithOwner("holder"))
			waiter, _ := lease.New(m, table, lease.WithOwner("waiter"), lease.WithPollInterval(poll))
			ctx := context.Background()
			key := "handoff-" + poll.String()
			var total time.Duration
			for b.Loop() {
				l, err := holder.Acquire(ctx, key)
				if err != nil {
					b.Fatal(err)
				}
				got := make(chan *lease.Lease)
				go func() {
					w, err := waiter.Acquire(ctx, key)
					if err != nil {
						b.Error(err)
					}
					got <- w
				}()
				// Let the waiter see the held record before releasing.
				for {
					info, err := waiter.Holder(ctx, key)
					if err == nil && info.Owner == "holder" && !info.Released {
						break
					}
				}
				time.Sleep(2 * poll) // not synchronisation: the waiter is in its poll wait
				start := time.Now()
				if err := l.Release(ctx); err != nil {
					b.Fatal(err)
				}
				w := <-got
				total += time.Since(start)
				if w != nil {
					_ = w.Release(ctx)
				}
			}
			b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "handoff-ms")
		})
	}
}
