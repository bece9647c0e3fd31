package integration

// Tests with DynamoDB Local and an S3 wire-protocol server: package
// commitlog's Committer and Log over NewS3Store, talking HTTP to gofakes3
// (package s3test) and to DynamoDB Local (package dynamotest).

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/commitlog"
	"github.com/ddbkit/dynamo/commitlog/s3test"
	"github.com/ddbkit/dynamo/dynamotest"
)

// s3Store returns a store over a fresh bucket of a fresh in-process S3
// server, and a counter of the HTTP requests sent to it.
func s3Store(tb testing.TB) (commitlog.Store, *dynamotest.Counter) {
	tb.Helper()
	base := s3test.Client(tb, s3test.Server(tb))
	bucket := s3test.Bucket(tb, base)
	ct := dynamotest.NewCounter(base.Options().HTTPClient.(*http.Client).Transport)
	client := s3.New(base.Options(), func(o *s3.Options) { o.HTTPClient = &http.Client{Transport: ct} })
	return commitlog.NewS3Store(client, bucket), ct
}

func commitlogMapper(tb testing.TB) *dynamo.Mapper { return dynamo.NewMapper(dynamotest.Client(tb)) }

// newLogTable creates a log table with Log.CreateTable and deletes it when
// the test ends.
func newLogTable(tb testing.TB, s commitlog.Store) string {
	tb.Helper()
	name := fmt.Sprintf("commitlog-log-%d", time.Now().UnixNano())
	l, err := commitlog.OpenLog(commitlogMapper(tb), name, s, "setup")
	if err != nil {
		tb.Fatal(err)
	}
	if err := l.CreateTable(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { dropTable(tb, name) })
	return name
}

func newCommitTable(tb testing.TB, s commitlog.Store) string {
	tb.Helper()
	name := fmt.Sprintf("commitlog-commit-%d", time.Now().UnixNano())
	c, err := commitlog.NewCommitter(commitlogMapper(tb), name, s)
	if err != nil {
		tb.Fatal(err)
	}
	if err := c.CreateTable(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { dropTable(tb, name) })
	return name
}

func dropTable(tb testing.TB, name string) {
	t, err := dynamo.NewTable[struct {
		K string `dynamo:"k,hash"`
	}](commitlogMapper(tb), name)
	if err == nil {
		err = t.DeleteTable(context.Background())
	}
	if err != nil {
		tb.Logf("deleting table %s: %v", name, err)
	}
}

// 8 writers × 50 Appends on S3: versions 1..400, each exactly once, each
// reading back what the writer that was told that version appended.
func TestCommitlogLogConcurrentAppendsS3(t *testing.T) {
	const writers, rounds = 8, 50
	s, _ := s3Store(t)
	table := newLogTable(t, s)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	var mu sync.Mutex
	told := map[int64]string{}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	start := time.Now()
	for w := range writers {
		// Each writer has its own Log and its own DynamoDB client, as
		// separate processes would.
		l, err := commitlog.OpenLog(commitlogMapper(t), table, s, "logs/orders", commitlog.WithOwner("w"+strconv.Itoa(w)))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				data := fmt.Sprintf(`{"writer":%d,"i":%d}`, w, i)
				v, err := l.Append(ctx, []byte(data))
				if err != nil {
					errs <- fmt.Errorf("writer %d append %d: %w", w, i, err)
					return
				}
				mu.Lock()
				if prev, dup := told[v]; dup {
					errs <- fmt.Errorf("version %d told to two writers: %s and %s", v, prev, data)
				}
				told[v] = data
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d appends by %d writers in %v", writers*rounds, writers, time.Since(start))
	reader, err := commitlog.OpenLog(commitlogMapper(t), table, s, "logs/orders")
	if err != nil {
		t.Fatal(err)
	}
	if latest, err := reader.Latest(ctx); err != nil || latest != writers*rounds {
		t.Fatalf("Latest = %d, %v; want %d", latest, err, writers*rounds)
	}
	next := int64(1)
	for e, err := range reader.Entries(ctx, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Version != next || string(e.Data) != told[e.Version] {
			t.Fatalf("entry %d (want %d) reads %q; its writer appended %q", e.Version, next, e.Data, told[e.Version])
		}
		next++
	}
	if next != writers*rounds+1 {
		t.Fatalf("read %d entries", next-1)
	}
	// The objects are the entries, in order, and nothing else is left.
	var paths []string
	for info, err := range s.List(ctx, "logs/orders/") {
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, info.Path)
	}
	if len(paths) != writers*rounds || paths[0] != reader.Path(1) || paths[len(paths)-1] != reader.Path(writers*rounds) {
		t.Errorf("%d objects under logs/orders/, first %q, last %q", len(paths), paths[0], paths[len(paths)-1])
	}
}

// claimRecord is a Log claim as the package documents its schema; the test
// writes one directly to play a writer that died after claiming.
type claimRecord struct {
	Log      string `dynamo:"log,hash"`
	Version  int64  `dynamo:"version,range"`
	Temp     string `dynamo:"temp"`
	Complete bool   `dynamo:"complete"`
	Owner    string `dynamo:"owner"`
	Rev      int64  `dynamo:"rev,version"`
}

// A writer that dies after claiming and before copying is completed by the
// next reader or writer, on S3.
func TestCommitlogDeadWriterCompletedS3(t *testing.T) {
	s, _ := s3Store(t)
	table := newLogTable(t, s)
	ctx := t.Context()
	m := commitlogMapper(t)
	claims, err := dynamo.NewTable[claimRecord](m, table)
	if err != nil {
		t.Fatal(err)
	}
	l, err := commitlog.OpenLog(m, table, s, "l")
	if err != nil {
		t.Fatal(err)
	}
	die := func(v int64, data string) {
		t.Helper()
		tmp := fmt.Sprintf("l/_tmp/dead-%d", v)
		if _, err := s.Put(ctx, tmp, []byte(data)); err != nil {
			t.Fatal(err)
		}
		if _, err := claims.Save(ctx, claimRecord{Log: "l", Version: v, Temp: tmp, Owner: "dead"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Append(ctx, []byte("one")); err != nil {
		t.Fatal(err)
	}
	die(2, "two, by the dead writer")
	// The next reader completes it.
	if data, err := l.Read(ctx, 2); err != nil || string(data) != "two, by the dead writer" {
		t.Fatalf("Read(2) = %q, %v", data, err)
	}
	if c, _ := claims.Load(ctx, claimRecord{Log: "l", Version: 2}, dynamo.ConsistentRead()); !c.Complete {
		t.Errorf("claim 2 after Read: %+v", c)
	}
	die(3, "three, by the dead writer")
	// The next writer (here a fresh one: it asks DynamoDB for the latest)
	// completes it before claiming 4.
	w, err := commitlog.OpenLog(m, table, s, "l")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := w.Append(ctx, []byte("four")); err != nil || v != 4 {
		t.Fatalf("Append = %d, %v; want 4", v, err)
	}
	for v, want := range map[int64]string{1: "one", 2: "two, by the dead writer", 3: "three, by the dead writer", 4: "four"} {
		if data, _, err := s.Get(ctx, l.Path(v)); err != nil || string(data) != want {
			t.Errorf("object of version %d: %q, %v", v, data, err)
		}
	}
	for _, tmp := range []string{"l/_tmp/dead-2", "l/_tmp/dead-3"} {
		if _, err := s.Head(ctx, tmp); !errors.Is(err, commitlog.ErrNotExist) {
			t.Errorf("temporary object %s: %v", tmp, err)
		}
	}
	if err := w.AppendAt(ctx, 4, []byte("again")); !errors.Is(err, commitlog.ErrExists) {
		t.Errorf("AppendAt(4): %v, want ErrExists", err)
	}
}

// 5 workers × 10 read-increment-PutIfMatch on one S3 object: 50.
func TestCommitlogCounterS3(t *testing.T) {
	s, _ := s3Store(t)
	table := newCommitTable(t, s)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	seed, err := commitlog.NewCommitter(commitlogMapper(t), table, s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := seed.PutIfNotExists(ctx, "counter", []byte("0")); err != nil {
		t.Fatal(err)
	}
	if _, err := seed.PutIfNotExists(ctx, "counter", []byte("0")); !errors.Is(err, commitlog.ErrExists) {
		t.Fatalf("second create: %v, want ErrExists", err)
	}
	const workers, rounds = 5, 10
	var retries atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		c, err := commitlog.NewCommitter(commitlogMapper(t), table, s,
			commitlog.WithOwner("w"+strconv.Itoa(w)), commitlog.WithPollInterval(5*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				for {
					data, info, err := s.Get(ctx, "counter")
					if err != nil {
						errs <- err
						return
					}
					n, _ := strconv.Atoi(string(data))
					_, err = c.PutIfMatch(ctx, "counter", []byte(strconv.Itoa(n+1)), info.ETag)
					if errors.Is(err, commitlog.ErrPreconditionFailed) {
						retries.Add(1)
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	data, _, err := s.Get(ctx, "counter")
	if err != nil || string(data) != "50" {
		t.Fatalf("counter = %q, %v; want 50", data, err)
	}
	t.Logf("50 increments, %d retries", retries.Load())

	// CopyIfNotExists: S3 has no conditional CopyObject; the Committer adds it.
	if _, err := seed.CopyIfNotExists(ctx, "counter", "snapshot"); err != nil {
		t.Fatal(err)
	}
	if _, err := seed.CopyIfNotExists(ctx, "counter", "snapshot"); !errors.Is(err, commitlog.ErrExists) {
		t.Errorf("second copy: %v, want ErrExists", err)
	}
	if _, err := seed.PutIfMatch(ctx, "snapshot", []byte("x"), `"0123"`); !errors.Is(err, commitlog.ErrPreconditionFailed) {
		t.Errorf("PutIfMatch with a wrong ETag: %v", err)
	}
}

// nativeLog is the log a store with native conditional writes makes
// possible without DynamoDB: PutIfNotExists of <name>/<N>.json, and N+1
// when N is taken.
type nativeLog struct {
	s    commitlog.ConditionalStore
	name string
	next int64 // this writer's hint
}

func (n *nativeLog) Append(ctx context.Context, data []byte) (int64, error) {
	if n.next == 0 {
		n.next = 1
	}
	for {
		_, err := n.s.PutIfNotExists(ctx, fmt.Sprintf("%s/%020d.json", n.name, n.next), data)
		if errors.Is(err, commitlog.ErrExists) {
			n.next++
			continue
		}
		if err != nil {
			return 0, err
		}
		n.next++
		return n.next - 1, nil
	}
}

// BenchmarkCommitlogAppend: appends per second and round trips per append
// (DynamoDB + S3 requests) of the DynamoDB-synchronized Log and of a log of
// native conditional puts (nativeLog), on the in-process S3 server, with 1
// and 8 writers. b.N is the number of appends in all, shared among the
// writers.
func BenchmarkCommitlogAppend(b *testing.B) {
	for _, writers := range []int{1, 8} {
		for _, impl := range []string{"dynamodb", "native"} {
			b.Run(fmt.Sprintf("impl=%s/writers=%d", impl, writers), func(b *testing.B) {
				benchAppend(b, impl, writers)
			})
		}
	}
}

func benchAppend(b *testing.B, impl string, writers int) {
	s, s3n := s3Store(b)
	ddb, ddbn := countingClient(b)
	ctx := context.Background()
	appenders := make([]func([]byte) (int64, error), writers)
	if impl == "dynamodb" {
		table := newLogTable(b, s)
		for w := range appenders {
			l, err := commitlog.OpenLog(dynamo.NewMapper(ddb), table, s, "bench")
			if err != nil {
				b.Fatal(err)
			}
			appenders[w] = func(d []byte) (int64, error) { return l.Append(ctx, d) }
		}
	} else {
		cs, ok := s.(commitlog.ConditionalStore)
		if !ok {
			b.Fatal("the S3 store has no native conditional writes")
		}
		for w := range appenders {
			l := &nativeLog{s: cs, name: "bench"}
			appenders[w] = func(d []byte) (int64, error) { return l.Append(ctx, d) }
		}
	}
	data := []byte(`{"op":"add","path":"part-00001.parquet","size":1048576}`)
	// Warm up connections (and the Logs' hints) outside the measurement.
	for _, a := range appenders {
		if _, err := a(data); err != nil {
			b.Fatal(err)
		}
	}
	ddb0, s30 := ddbn.Count(), s3n.Count()
	var next atomic.Int64
	var max atomic.Int64
	start := time.Now()
	b.ResetTimer()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for _, a := range appenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				v, err := a(data)
				if err != nil {
					errs <- err
					return
				}
				for m := max.Load(); v > m && !max.CompareAndSwap(m, v); m = max.Load() {
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	if got := max.Load(); got != int64(b.N+writers) {
		b.Fatalf("highest version %d after %d appends", got, b.N+writers)
	}
	n := float64(b.N)
	b.ReportMetric(n/elapsed.Seconds(), "appends/s")
	b.ReportMetric(float64(ddbn.Count()-ddb0)/n, "ddb-rt/op")
	b.ReportMetric(float64(s3n.Count()-s30)/n, "s3-rt/op")
	b.ReportMetric(float64(ddbn.Count()-ddb0+s3n.Count()-s30)/n, "rt/op")
}

// BenchmarkCommitlogCommitter: one writer's PutIfNotExists of new paths and
// PutIfMatch of one object, through a Committer and through the S3 store's
// native conditional puts; round trips per operation.
func BenchmarkCommitlogCommitter(b *testing.B) {
	for _, impl := range []string{"dynamodb", "native"} {
		b.Run("impl="+impl, func(b *testing.B) {
			s, s3n := s3Store(b)
			ddb, ddbn := countingClient(b)
			ctx := context.Background()
			var putIfNotExists func(string, []byte) (commitlog.ObjectInfo, error)
			var putIfMatch func(string, []byte, string) (commitlog.ObjectInfo, error)
			if impl == "dynamodb" {
				c, err := commitlog.NewCommitter(dynamo.NewMapper(ddb), newCommitTable(b, s), s)
				if err != nil {
					b.Fatal(err)
				}
				putIfNotExists = func(p string, d []byte) (commitlog.ObjectInfo, error) { return c.PutIfNotExists(ctx, p, d) }
				putIfMatch = func(p string, d []byte, e string) (commitlog.ObjectInfo, error) { return c.PutIfMatch(ctx, p, d, e) }
			} else {
				cs := s.(commitlog.ConditionalStore)
				putIfNotExists = func(p string, d []byte) (commitlog.ObjectInfo, error) { return cs.PutIfNotExists(ctx, p, d) }
				putIfMatch = func(p string, d []byte, e string) (commitlog.ObjectInfo, error) { return cs.PutIfMatch(ctx, p, d, e) }
			}
			info, err := putIfNotExists("counter", []byte("0"))
			if err != nil {
				b.Fatal(err)
			}
			for _, op := range []string{"PutIfNotExists", "PutIfMatch"} {
				b.Run("op="+op, func(b *testing.B) {
					ddb0, s30 := ddbn.Count(), s3n.Count()
					i := 0
					for b.Loop() {
						i++
						var err error
						if op == "PutIfNotExists" {
							_, err = putIfNotExists("new/"+strconv.Itoa(i)+"-"+strconv.Itoa(b.N), []byte("x"))
						} else {
							info, err = putIfMatch("counter", []byte(strconv.Itoa(i)), info.ETag)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
					n := float64(b.N)
					b.ReportMetric(float64(ddbn.Count()-ddb0)/n, "ddb-rt/op")
					b.ReportMetric(float64(s3n.Count()-s30)/n, "s3-rt/op")
				})
			}
		})
	}
}
