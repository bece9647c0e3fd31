package commitlog

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/leaktest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// checkNoLeak fails the test if goroutines of this package are still
// running once it ends and its cleanups ran. Goroutines of the HTTP client
// and the test servers are not counted.
func checkNoLeak(t *testing.T) { leaktest.Check(t, "ddbkit/dynamo/commitlog.") }

// countingClient returns a client for the test server that counts its
// requests.
func countingClient(t *testing.T) (*dynamodb.Client, *dynamotest.Counter) {
	ct := dynamotest.NewCounter(nil)
	return ct.Client(t), ct
}

// hookStore wraps a Store, counts its calls by method, and calls the hook
// of a method, if set, before passing the call on.
type hookStore struct {
	Store
	mu     sync.Mutex
	calls  map[string]int
	onHead func(path string)
	onPut  func(path string)
	onCopy func()
}

func newHookStore(s Store) *hookStore { return &hookStore{Store: s, calls: map[string]int{}} }

func (h *hookStore) count(op string) {
	h.mu.Lock()
	h.calls[op]++
	h.mu.Unlock()
}

func (h *hookStore) Calls(op string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[op]
}

func (h *hookStore) Head(ctx context.Context, path string) (ObjectInfo, error) {
	h.count("Head")
	info, err := h.Store.Head(ctx, path)
	if h.onHead != nil {
		h.onHead(path) // after the HEAD: its answer may be stale by the time it returns
	}
	return info, err
}

func (h *hookStore) Get(ctx context.Context, path string) ([]byte, ObjectInfo, error) {
	h.count("Get")
	return h.Store.Get(ctx, path)
}

func (h *hookStore) Put(ctx context.Context, path string, data []byte) (ObjectInfo, error) {
	h.count("Put")
	if h.onPut != nil {
		h.onPut(path)
	}
	return h.Store.Put(ctx, path, data)
}

func (h *hookStore) Copy(ctx context.Context, src, dst string) (ObjectInfo, error) {
	h.count("Copy")
	if h.onCopy != nil {
		h.onCopy()
	}
	return h.Store.Copy(ctx, src, dst)
}

func (h *hookStore) Delete(ctx context.Context, path string) error {
	h.count("Delete")
	return h.Store.Delete(ctx, path)
}

func (h *hookStore) List(ctx context.Context, prefix string) iter.Seq2[ObjectInfo, error] {
	h.count("List")
	return h.Store.List(ctx, prefix)
}

// countingClock is a fake clock that counts the timers made on it.
type countingClock struct {
	*clock.Fake
	timers atomic.Int64
}

func (c *countingClock) NewTimer(d time.Duration) clock.Timer {
	c.timers.Add(1)
	return c.Fake.NewTimer(d)
}

var tableSeq atomic.Int64

func uniqueTable(prefix string) string {
	return prefix + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.FormatInt(tableSeq.Add(1), 10)
}

// committerTable creates a Committer table through Committer.CreateTable,
// deleted when the test ends, and returns its name.
func committerTable(t *testing.T) string {
	t.Helper()
	c, err := NewCommitter(dynamo.NewMapper(dynamotest.Client(t)), uniqueTable("commit"), NewMemStore())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.table.DeleteTable(context.Background()) })
	return c.table.Name()
}

func newCommitter(t *testing.T, table string, client *dynamodb.Client, s Store, opts ...Option) *Committer {
	t.Helper()
	if client == nil {
		client = dynamotest.Client(t)
	}
	c, err := NewCommitter(dynamo.NewMapper(client), table, s, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// loadRecord reads the Committer record of (path, etag).
func loadRecord(t *testing.T, c *Committer, path, etag string) commitRecord {
	t.Helper()
	r, err := c.table.Load(context.Background(), commitRecord{Path: path, ETag: etag}, dynamo.ConsistentRead())
	if err != nil {
		t.Fatalf("record (%s, %s): %v", path, etag, err)
	}
	return r
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		want string
	}{
		{[]Option{WithTimeout(0)}, "from 1 ms to 24h"},
		{[]Option{WithTimeout(25 * time.Hour)}, "from 1 ms to 24h"},
		{[]Option{WithClockSkewRate(math.NaN())}, "from 1 to 100"},
		{[]Option{WithClockSkewRate(math.Inf(1))}, "from 1 to 100"},
		{[]Option{WithMaxClockSkewRate(0.5)}, "from 1 to 100"},
		{[]Option{WithMaxClockSkewRate(101)}, "from 1 to 100"},
		{[]Option{WithPollInterval(0)}, "WithPollInterval"},
		{[]Option{WithTTL(time.Minute)}, "ten timeouts"},
		{[]Option{WithTimeout(time.Hour)}, "ten timeouts"}, // the 1 h default TTL is too short then
	} {
		_, err := buildOptions(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalidInput) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
		if _, err := NewCommitter(dynamo.NewMapper(noClient{}), "t", NewMemStore(), tc.opts...); err == nil {
			t.Errorf("NewCommitter accepted %q", tc.want)
		}
		if _, err := OpenLog(dynamo.NewMapper(noClient{}), "t", NewMemStore(), "log", tc.opts...); err == nil {
			t.Errorf("OpenLog accepted %q", tc.want)
		}
	}
	o, err := buildOptions(nil)
	if err != nil || o.timeout != 20*time.Second || o.skew != 3 || o.ttl != time.Hour || o.poll != 100*time.Millisecond || o.owner == "" || o.clock == nil {
		t.Errorf("defaults %+v %v", o, err)
	}
	if _, err := NewCommitter(nil, "t", NewMemStore()); err == nil {
		t.Error("NewCommitter accepted a nil mapper")
	}
	if _, err := NewCommitter(dynamo.NewMapper(noClient{}), "t", nil); err == nil {
		t.Error("NewCommitter accepted a nil store")
	}
}

// Bad input is refused before any request, to DynamoDB or to the store.
func TestCommitterRefusesBadInput(t *testing.T) {
	checkNoLeak(t)
	client, ct := countingClient(t)
	s := newHookStore(NewMemStore())
	c := newCommitter(t, "never-created", client, s)
	ctx := t.Context()
	for name, call := range map[string]func() error{
		"empty path":          func() error { _, err := c.PutIfNotExists(ctx, "", []byte("x")); return err },
		"NUL in path":         func() error { _, err := c.PutIfNotExists(ctx, "a\x00b", []byte("x")); return err },
		"empty etag":          func() error { _, err := c.PutIfMatch(ctx, "a", []byte("x"), ""); return err },
		"etag *":              func() error { _, err := c.PutIfMatch(ctx, "a", []byte("x"), "*"); return err },
		"copy to itself":      func() error { _, err := c.CopyIfNotExists(ctx, "a", "a"); return err },
		"copy from empty":     func() error { _, err := c.CopyIfNotExists(ctx, "", "a"); return err },
		"copy to long":        func() error { _, err := c.CopyIfNotExists(ctx, "a", strings.Repeat("x", 1025)); return err },
		"put if match no etc": func() error { _, err := c.PutIfMatch(ctx, "", []byte("x"), `"e"`); return err },
	} {
		if err := call(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if n := ct.Count(); n != 0 {
		t.Errorf("%d DynamoDB requests sent for refused input", n)
	}
	for _, op := range []string{"Head", "Put", "Copy"} {
		if n := s.Calls(op); n != 0 {
			t.Errorf("%d store %s calls for refused input", n, op)
		}
	}
}

func TestPutIfNotExists(t *testing.T) {
	checkNoLeak(t)
	table := committerTable(t)
	client, ct := countingClient(t)
	s := newHookStore(NewMemStore())
	c := newCommitter(t, table, client, s, WithOwner("w1"))
	ctx := t.Context()

	info, err := c.PutIfNotExists(ctx, "a/b.json", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Path != "a/b.json" || info.Size != 3 || info.ETag == "" {
		t.Errorf("info %+v", info)
	}
	r := loadRecord(t, c, "a/b.json", "*")
	if !r.Done || r.Generation != 2 || r.Owner != "w1" || r.TimeoutMS != 20000 || r.TTL < time.Now().Add(59*time.Minute).Unix() {
		t.Errorf("record after the put %+v; want done, generation 2 (created 1, marked done 2)", r)
	}
	if n := ct.Count(); n != 3 { // record, done mark, and our Load
		t.Errorf("%d DynamoDB requests, want 2 for the put", n-1)
	}

	// Fail fast: the HEAD finds the object; DynamoDB is not asked.
	before := ct.Count()
	_, err = c.PutIfNotExists(ctx, "a/b.json", []byte("two"))
	if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "a/b.json") {
		t.Fatalf("second put: %v, want ErrExists", err)
	}
	if n := ct.Count() - before; n != 0 {
		t.Errorf("%d DynamoDB requests for a put that the HEAD refuses", n)
	}
	if data, _, _ := s.Get(ctx, "a/b.json"); string(data) != "one" {
		t.Errorf("object %q, want the first put's", data)
	}
}

func TestPutIfMatch(t *testing.T) {
	checkNoLeak(t)
	table := committerTable(t)
	client, ct := countingClient(t)
	s := NewMemStore()
	c := newCommitter(t, table, client, s)
	ctx := t.Context()

	_, err := c.PutIfMatch(ctx, "x", []byte("v1"), `"nope"`)
	if !errors.Is(err, ErrPreconditionFailed) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("PutIfMatch of a missing object: %v", err)
	}
	first, err := c.PutIfNotExists(ctx, "x", []byte("v1"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.PutIfMatch(ctx, "x", []byte("v2"), first.ETag)
	if err != nil {
		t.Fatal(err)
	}
	if second.ETag == first.ETag {
		t.Error("ETag unchanged by PutIfMatch")
	}
	before := ct.Count()
	_, err = c.PutIfMatch(ctx, "x", []byte("v3"), first.ETag) // stale
	if !errors.Is(err, ErrPreconditionFailed) || !strings.Contains(err.Error(), second.ETag) {
		t.Fatalf("PutIfMatch with a stale ETag: %v", err)
	}
	if n := ct.Count() - before; n != 0 {
		t.Errorf("%d DynamoDB requests for a PutIfMatch that the HEAD refuses", n)
	}
	if data, _, _ := s.Get(ctx, "x"); string(data) != "v2" {
		t.Errorf("object %q, want v2", data)
	}
	r := loadRecord(t, c, "x", first.ETag)
	if !r.Done || r.Generation != 2 {
		t.Errorf("record %+v", r)
	}
}

func TestCopyIfNotExists(t *testing.T) {
	checkNoLeak(t)
	table := committerTable(t)
	s := NewMemStore()
	c := newCommitter(t, table, nil, s)
	ctx := t.Context()
	if _, err := s.Put(ctx, "src", []byte("data")); err != nil {
		t.Fatal(err)
	}
	info, err := c.CopyIfNotExists(ctx, "src", "dst")
	if err != nil {
		t.Fatal(err)
	}
	if info.Path != "dst" {
		t.Errorf("info %+v", info)
	}
	if _, err := c.CopyIfNotExists(ctx, "src", "dst"); !errors.Is(err, ErrExists) {
		t.Errorf("second copy: %v, want ErrExists", err)
	}
	// It excludes PutIfNotExists on the destination too: same record.
	if _, err := c.PutIfNotExists(ctx, "dst", []byte("x")); !errors.Is(err, ErrExists) {
		t.Errorf("put over the copy: %v, want ErrExists", err)
	}
	// A missing source is a definite failure: the record is marked done,
	// so the next writer of the destination does not wait.
	_, err = c.CopyIfNotExists(ctx, "missing", "dst2")
	if !errors.Is(err, ErrNotExist) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("copy of a missing source: %v", err)
	}
	if r := loadRecord(t, c, "dst2", "*"); !r.Done {
		t.Errorf("record after a failed copy %+v, want done", r)
	}
	if _, err := c.PutIfNotExists(ctx, "dst2", []byte("x")); err != nil {
		t.Errorf("put after the failed copy: %v", err)
	}
}

// 5 workers × 10 read-increment-PutIfMatch on one object, retrying on
// ErrPreconditionFailed by reading again: no increment is lost.
func TestCounterPutIfMatch(t *testing.T) {
	checkNoLeak(t)
	table := committerTable(t)
	s := NewMemStore()
	ctx := t.Context()
	seed := newCommitter(t, table, nil, s)
	if _, err := seed.PutIfNotExists(ctx, "counter", []byte("0")); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 5, 10
	var wg sync.WaitGroup
	var retries atomic.Int64
	errs := make(chan error, workers)
	for w := range workers {
		c := newCommitter(t, table, nil, s, WithOwner("w"+strconv.Itoa(w)), WithPollInterval(2*time.Millisecond))
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
					if errors.Is(err, ErrPreconditionFailed) {
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
	if err != nil || string(data) != strconv.Itoa(workers*rounds) {
		t.Fatalf("counter %q %v, want %d", data, err, workers*rounds)
	}
	t.Logf("%d increments, %d retries after ErrPreconditionFailed", workers*rounds, retries.Load())
}

// deadRecord writes the record a writer that died holding (path, etag)
// leaves behind, and returns it.
func deadRecord(t *testing.T, c *Committer, path, etag string, timeout time.Duration) commitRecord {
	t.Helper()
	r, err := c.table.Save(t.Context(), commitRecord{Path: path, ETag: etag, TimeoutMS: timeout.Milliseconds(),
		TTL: time.Now().Add(time.Hour).Unix(), Owner: "dead"}, dynamo.WithSaveBehavior(dynamo.SavePut))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// drive advances clk from timer to timer while the code under test waits on
// one, until done is closed or the clock has moved limit.
func drive(t *testing.T, clk *clock.Fake, done <-chan struct{}, limit time.Duration) {
	t.Helper()
	start := clk.Now()
	for {
		if !clk.BlockUntil(done, 1) {
			return
		}
		d, ok := clk.Next()
		if !ok {
			continue
		}
		if clk.Now().Sub(start)+d > limit {
			t.Fatalf("still waiting after %v", clk.Now().Sub(start))
		}
		clk.Advance(d) // fires and removes the timer; the next round waits for the next one
	}
}

// A record left by a dead writer is reclaimed with generation + 1 once
// timeout × skew rate has passed on the waiter's clock: not before, and
// within one poll interval after.
func TestDeadWriterReclaimedAfterTimeoutTimesRate(t *testing.T) {
	checkNoLeak(t)
	table := committerTable(t)
	const timeout, rate, poll = 10 * time.Second, 3.0, time.Second
	clk := clock.NewFake(time.Now())
	s := newHookStore(NewMemStore())
	c := newCommitter(t, table, nil, s, WithClock(clk), WithTimeout(timeout), WithClockSkewRate(rate), WithPollInterval(poll))
	dead := deadRecord(t, c, "p", "*", timeout)

	start := clk.Now()
	var putAt time.Duration
	var putRec commitRecord
	var putErr error
	s.onPut = func(path string) { // the reclaimer writes: look at the record it holds
		putAt = clk.Now().Sub(start)
		putRec, putErr = c.table.Load(context.Background(), commitRecord{Path: "p", ETag: "*"}, dynamo.ConsistentRead())
	}
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		_, err = c.PutIfNotExists(t.Context(), "p", []byte("mine"))
	}()
	drive(t, clk, done, 2*time.Duration(rate*float64(timeout)))
	<-done
	if err != nil || putErr != nil {
		t.Fatal(err, putErr)
	}
	patience := time.Duration(rate * float64(timeout))
	if putAt < patience || putAt > patience+poll {
		t.Errorf("reclaimed after %v, want between %v and %v", putAt, patience, patience+poll)
	}
	if putRec.Generation != dead.Generation+1 || putRec.Done || putRec.Owner == "dead" {
		t.Errorf("record while writing %+v, want generation %d held by us", putRec, dead.Generation+1)
	}
	if heads := s.Calls("Head"); heads < int(patience/poll) {
		t.Errorf("%d HEADs while waiting %v with a %v poll interval", heads, patience, poll)
	}
	if r := loadRecord(t, c, "p", "*"); !r.Done || r.Generation != dead.Generation+2 {
		t.Errorf("final record %+v", r)
	}
	t.Logf("reclaimed after %v (timeout %v × rate %v, poll %v), %d HEADs", putAt, timeout, rate, poll, s.Calls("Head"))
}

// While waiting for a record, the HEAD every poll interval fails fast once
// the object no longer meets the precondition.
func TestPreconditionFailsWhileWaiting(t *testing.T) {
	for _, tc := range []struct {
		name string
		want error
	}{{"put if not exists", ErrExists}, {"put if match", ErrPreconditionFailed}} {
		t.Run(tc.name, func(t *testing.T) {
			checkNoLeak(t)
			table := committerTable(t)
			const timeout, poll = 10 * time.Second, time.Second
			clk := clock.NewFake(time.Now())
			s := newHookStore(NewMemStore())
			c := newCommitter(t, table, nil, s, WithClock(clk), WithTimeout(timeout), WithPollInterval(poll))
			ctx := t.Context()
			etag := "*"
			if tc.want == ErrPreconditionFailed {
				info, err := s.Put(ctx, "p", []byte("v1"))
				if err != nil {
					t.Fatal(err)
				}
				etag = info.ETag
			}
			deadRecord(t, c, "p", etag, timeout) // a live holder, as far as we know
			done := make(chan struct{})
			var err error
			go func() {
				defer close(done)
				if etag == "*" {
					_, err = c.PutIfNotExists(ctx, "p", []byte("mine"))
				} else {
					_, err = c.PutIfMatch(ctx, "p", []byte("mine"), etag)
				}
			}()
			start := clk.Now()
			clk.BlockUntil(done, 1) // waiting
			clk.Advance(poll)       // one HEAD: still as it was
			clk.BlockUntil(done, 1)
			if _, err := s.Put(ctx, "p", []byte("the holder's write")); err != nil { // the holder writes
				t.Fatal(err)
			}
			clk.Advance(poll)
			<-done
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if waited := clk.Now().Sub(start); waited != 2*poll {
				t.Errorf("failed after %v, want %v", waited, 2*poll)
			}
			if data, _, _ := s.Get(ctx, "p"); string(data) != "the holder's write" {
				t.Errorf("object %q was overwritten", data)
			}
		})
	}
}

// Delete, then create on the same path: the first create's record is done,
// so the second takes it at once — no waiting on the clock.
func TestDeleteThenCreateDoesNotWait(t *testing.T) {
	checkNoLeak(t)
	table := committerTable(t)
	clk := &countingClock{Fake: clock.NewFake(time.Now())} // never advanced: a wait would hang
	s := NewMemStore()
	c := newCommitter(t, table, nil, s, WithClock(clk))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for i := range 3 {
		if _, err := c.PutIfNotExists(ctx, "p", []byte(strconv.Itoa(i))); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		if err := s.Delete(ctx, "p"); err != nil {
			t.Fatal(err)
		}
	}
	if n := clk.timers.Load(); n != 0 {
		t.Errorf("%d timers made: the creates waited", n)
	}
	if r := loadRecord(t, c, "p", "*"); !r.Done || r.Generation != 6 {
		t.Errorf("record %+v, want done, generation 6 (three creates, each +1 to take, +1 done)", r)
	}
}

// A reclaimed record is checked with a HEAD before writing: the previous
// holder may have finished (done record) with a write of its own.
func TestReclaimedDoneRecordChecksObject(t *testing.T) {
	checkNoLeak(t)
	table := committerTable(t)
	s := newHookStore(NewMemStore())
	c := newCommitter(t, table, nil, s)
	ctx := t.Context()
	// Two writers both saw "absent"; the first finished before the second
	// wrote its record: the object is created (and the record marked done)
	// between the second's HEAD and its record write.
	first := true
	s.onHead = func(path string) {
		if first {
			first = false
			if _, err := c.PutIfNotExists(ctx, path, []byte("first")); err != nil {
				t.Error(err)
			}
		}
	}
	_, err := c.PutIfNotExists(ctx, "p", []byte("second"))
	if !errors.Is(err, ErrExists) {
		t.Fatalf("err %v, want ErrExists from the HEAD after reclaiming", err)
	}
	if data, _, _ := s.Get(ctx, "p"); string(data) != "first" {
		t.Errorf("object %q, want first", data)
	}
	if r := loadRecord(t, c, "p", "*"); !r.Done {
		t.Errorf("record %+v: the refused writer must mark it done", r)
	}
}

// A holder whose timeout passed before it could start writes nothing.
func TestTimeoutPassedBeforeWrite(t *testing.T) {
	checkNoLeak(t)
	table := committerTable(t)
	clk := clock.NewFake(time.Now())
	s := newHookStore(NewMemStore())
	c := newCommitter(t, table, nil, s, WithClock(clk), WithTimeout(time.Second))
	ctx := t.Context()
	if _, err := c.PutIfNotExists(ctx, "p", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	// The next create reclaims the done record, then HEADs: stall there
	// past the timeout.
	heads := 0
	s.onHead = func(string) {
		if heads++; heads == 2 {
			clk.Advance(2 * time.Second)
		}
	}
	_, err := c.PutIfNotExists(ctx, "p", []byte("2"))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err %v, want ErrTimeout", err)
	}
	if _, err := s.Head(ctx, "p"); !errors.Is(err, ErrNotExist) {
		t.Errorf("the timed-out writer wrote: %v", err)
	}
	if r := loadRecord(t, c, "p", "*"); !r.Done {
		t.Errorf("record %+v, want done", r)
	}
}

// A record write that DynamoDB applied but whose response was lost is
// recognised as our own (the mapper settles it by a read): no conflict with
// ourselves.
func TestLostRecordResponseIsOurs(t *testing.T) {
	checkNoLeak(t)
	table := committerTable(t)
	drop := dynamotest.NewDropper("PutItem")
	clk := &countingClock{Fake: clock.NewFake(time.Now())}
	c := newCommitter(t, table, drop.Client(t), NewMemStore(), WithClock(clk))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	drop.Arm(1) // the record's creation
	if _, err := c.PutIfNotExists(ctx, "p", []byte("x")); err != nil {
		t.Fatal(err)
	}
	// create (its lost answer settled by the mapper's read, never resent), done mark
	if drop.Dropped() != 1 || drop.Sent() != 2 {
		t.Errorf("dropped %d, sent %d; want 1 and 2", drop.Dropped(), drop.Sent())
	}
	if n := clk.timers.Load(); n != 0 {
		t.Errorf("%d timers: the writer waited for its own record", n)
	}
	if r := loadRecord(t, c, "p", "*"); !r.Done || r.Generation != 2 {
		t.Errorf("record %+v, want done, generation 2", r)
	}
}

// ctx ends the waiting; nothing is written.
func TestWaitingEndsWithContext(t *testing.T) {
	checkNoLeak(t)
	table := committerTable(t)
	clk := clock.NewFake(time.Now())
	s := NewMemStore()
	c := newCommitter(t, table, nil, s, WithClock(clk))
	deadRecord(t, c, "p", "*", time.Minute)
	ctx, cancel := context.WithCancelCause(t.Context())
	done := make(chan error)
	go func() {
		_, err := c.PutIfNotExists(ctx, "p", []byte("x"))
		done <- err
	}()
	clk.BlockUntil(t.Context().Done(), 1)
	cancel(fmt.Errorf("shutting down"))
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "shutting down") || !strings.Contains(err.Error(), "held by dead") {
		t.Errorf("err %v", err)
	}
	if _, err := s.Head(t.Context(), "p"); !errors.Is(err, ErrNotExist) {
		t.Errorf("written: %v", err)
	}
}

// A store write that returns after the holder's deadline, by the
// Committer's clock, is never reported as a success: a waiter may have
// reclaimed the record and written meanwhile, so it is an error wrapping
// ErrUnknownOutcome. Here the holder's write stalls past its deadline (on
// its injected clock) while a waiter reclaims the record and writes; both
// store writes go through, and at most one of the two calls may succeed.
func TestWriteReturningAfterDeadlineIsUnknown(t *testing.T) {
	checkNoLeak(t)
	table := committerTable(t)
	const timeout, poll = time.Minute, 10 * time.Second
	mem := NewMemStore()
	slow := newHookStore(mem)
	clkA := clock.NewFake(time.Now())
	clkB := clock.NewFake(time.Now())
	a := newCommitter(t, table, nil, slow, WithClock(clkA), WithTimeout(timeout), WithPollInterval(poll), WithOwner("a"))
	b := newCommitter(t, table, nil, mem, WithClock(clkB), WithTimeout(timeout), WithPollInterval(poll), WithOwner("b"))
	ctx := t.Context()

	var errB error
	stalled := false
	slow.onPut = func(string) {
		if stalled {
			return
		}
		stalled = true
		// A holds the record and is about to write: it stalls past its
		// deadline, and B reclaims the record and writes meanwhile.
		clkA.Advance(2 * timeout)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, errB = b.PutIfNotExists(ctx, "p", []byte("b"))
		}()
		drive(t, clkB, done, 10*timeout)
		<-done
	}
	_, errA := a.PutIfNotExists(ctx, "p", []byte("a"))
	if errB != nil {
		t.Fatalf("waiter: %v", errB)
	}
	if errA == nil {
		t.Fatal("the holder whose write returned after its deadline reports success; the waiter's write is lost")
	}
	if !errors.Is(errA, ErrUnknownOutcome) {
		t.Errorf("holder: %v, want ErrUnknownOutcome", errA)
	}
}
