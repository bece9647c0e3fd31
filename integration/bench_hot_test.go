package integration

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// delayingHTTP adds a fixed latency to every request, as a network to a
// region would (DynamoDB Local answers in well under a millisecond).
type delayingHTTP struct {
	next interface {
		Do(*http.Request) (*http.Response, error)
	}
	delay time.Duration
	sent  *atomic.Int64 // counts the requests, when not nil
}

func (d delayingHTTP) Do(r *http.Request) (*http.Response, error) {
	if d.sent != nil {
		d.sent.Add(1)
	}
	if d.delay > 0 {
		time.Sleep(d.delay) // a benchmark's model of latency, not synchronisation
	}
	return d.next.Do(r)
}

// BenchmarkHotKey: increments of one counter through one Table, by one
// goroutine (impl=one: Update after Update) and by 16 or 64 goroutines at
// once (impl=16, impl=64), on DynamoDB Local as it is (lat=0) and with 5 ms added to every
// request (lat=5ms, where one item takes one write per round trip). ns/op is
// the time per increment; one/16 is how much faster 16 goroutines get their
// changes in, thanks to Update combining the changes queued behind a write;
// changes/req is how many increments each request carried on average.
func BenchmarkHotKey(b *testing.B) {
	base := dynamotest.Client(b)
	name := dynamotest.KeyTable(b, base, "bench-hot", "id", types.ScalarAttributeTypeS, "", "")
	inc := func(c benchCounter) (benchCounter, error) { c.N++; return c, nil }
	var round atomic.Int64
	for _, lat := range []time.Duration{0, 5 * time.Millisecond} {
		var sent atomic.Int64
		client := delayedClient(base, lat, &sent)
		for _, workers := range []int{1, 16, 64} {
			b.Run("lat="+lat.String()+"/impl="+hotImpl[workers], func(b *testing.B) {
				key := benchCounter{ID: "hot" + strconv.FormatInt(round.Add(1), 10)}
				benchHot(b, client, name, workers, &sent, key, inc, func(c benchCounter) (int, int64) { return c.N, c.Version })
			})
		}
	}
}

// stampedCounter is benchCounter with the timestamps most items carry.
type stampedCounter struct {
	ID       string    `dynamo:"id,hash"`
	N        int       `dynamo:"n"`
	Payload  string    `dynamo:"payload"`
	Created  time.Time `dynamo:"created,created"`
	Modified time.Time `dynamo:"modified,modified"`
	Version  int64     `dynamo:"v,version"`
}

// BenchmarkHotKeyStamped is BenchmarkHotKey's lat=5ms rows for a type with
// created and modified fields, whose changes share writes as the plain
// type's do (each carried change stamped with its write's time).
func BenchmarkHotKeyStamped(b *testing.B) {
	base := dynamotest.Client(b)
	name := dynamotest.KeyTable(b, base, "bench-hot-stamped", "id", types.ScalarAttributeTypeS, "", "")
	inc := func(c stampedCounter) (stampedCounter, error) { c.N++; return c, nil }
	var round atomic.Int64
	var sent atomic.Int64
	client := delayedClient(base, 5*time.Millisecond, &sent)
	for _, workers := range []int{1, 16} {
		b.Run("lat=5ms/impl="+hotImpl[workers], func(b *testing.B) {
			key := stampedCounter{ID: "hot" + strconv.FormatInt(round.Add(1), 10)}
			benchHot(b, client, name, workers, &sent, key, inc, func(c stampedCounter) (int, int64) { return c.N, c.Version })
		})
	}
}

var hotImpl = map[int]string{1: "one", 16: "16", 64: "64"}

// delayedClient is base with lat added to every request, counted in sent.
func delayedClient(base *dynamodb.Client, lat time.Duration, sent *atomic.Int64) *dynamodb.Client {
	return dynamodb.New(base.Options(), func(o *dynamodb.Options) {
		o.HTTPClient = delayingHTTP{next: o.HTTPClient, delay: lat, sent: sent}
	})
}

// benchHot runs b.N increments (inc) of key through one Table of table
// name, by workers goroutines at once, reports the changes each request
// carried (sent counts them) and checks the count and version (counts)
// stored.
func benchHot[T any](b *testing.B, client *dynamodb.Client, name string, workers int, sent *atomic.Int64, key T,
	inc func(T) (T, error), counts func(T) (int, int64)) {
	table, err := dynamo.NewTable[T](dynamo.NewMapper(client), name)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var next atomic.Int64
	n := int64(b.N)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	b.ResetTimer()
	sent0 := sent.Load()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= n {
				if _, err := table.Update(ctx, key, inc); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	// How many changes each request carried (reads included).
	b.ReportMetric(float64(n)/float64(sent.Load()-sent0), "changes/req")
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	got, err := table.Load(ctx, key, dynamo.ConsistentRead())
	if c, v := counts(got); err != nil || int64(c) != n || v != n {
		b.Fatalf("counter %+v, %v after %d increments: want n = version = %d", got, err, n, n)
	}
}
