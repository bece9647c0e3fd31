package commitlog

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
)

// errAnswerLost stands for a store answer lost on the way back.
var errAnswerLost = errors.New("test: connection reset (answer lost)")

// faultStore wraps a WriteIDStore. When armed, the next write (Put or Copy,
// with or without an id) is applied, then, the hook is run, and the write
// returns errAnswerLost: a write that landed and whose answer was lost.
// When hold is set instead, the next write is not applied but kept, and
// returns errAnswerLost at once: a request in flight when the client gave
// up, that the test delivers later with deliver.
type faultStore struct {
	WriteIDStore
	mu     sync.Mutex
	armed  bool
	hook   func()
	hold   bool
	held   func() error // the write held back
	writes atomic.Int64 // writes that reached the store's methods
}

func (f *faultStore) fault(do func() error) error {
	f.writes.Add(1)
	f.mu.Lock()
	armed, hook, hold := f.armed, f.hook, f.hold
	f.armed, f.hook, f.hold = false, nil, false
	if hold {
		f.held = do
	}
	f.mu.Unlock()
	switch {
	case hold:
		return errAnswerLost
	case armed:
		if err := do(); err != nil {
			return err
		}
		if hook != nil {
			hook()
		}
		return errAnswerLost
	}
	return do()
}

// deliver applies the write held back.
func (f *faultStore) deliver() error {
	f.mu.Lock()
	do := f.held
	f.held = nil
	f.mu.Unlock()
	return do()
}

func (f *faultStore) Put(ctx context.Context, path string, data []byte) (info ObjectInfo, err error) {
	err = f.fault(func() (err error) { info, err = f.WriteIDStore.Put(context.WithoutCancel(ctx), path, data); return err })
	return info, err
}

func (f *faultStore) PutWithID(ctx context.Context, path string, data []byte, id string) (info ObjectInfo, err error) {
	err = f.fault(func() (err error) {
		info, err = f.WriteIDStore.PutWithID(context.WithoutCancel(ctx), path, data, id)
		return err
	})
	return info, err
}

func (f *faultStore) Copy(ctx context.Context, src, dst string) (info ObjectInfo, err error) {
	err = f.fault(func() (err error) { info, err = f.WriteIDStore.Copy(context.WithoutCancel(ctx), src, dst); return err })
	return info, err
}

func (f *faultStore) CopyWithID(ctx context.Context, src, dst, id string) (info ObjectInfo, err error) {
	err = f.fault(func() (err error) {
		info, err = f.WriteIDStore.CopyWithID(context.WithoutCancel(ctx), src, dst, id)
		return err
	})
	return info, err
}

func (f *faultStore) arm(hook func()) {
	f.mu.Lock()
	f.armed, f.hook = true, hook
	f.mu.Unlock()
}

// plainStore hides the write ids of a faultStore: a Store that keeps none.
type plainStore struct{ s *faultStore }

func (p plainStore) Head(ctx context.Context, path string) (ObjectInfo, error) {
	info, err := p.s.Head(ctx, path)
	info.WriteID = ""
	return info, err
}
func (p plainStore) Get(ctx context.Context, path string) ([]byte, ObjectInfo, error) {
	data, info, err := p.s.Get(ctx, path)
	info.WriteID = ""
	return data, info, err
}
func (p plainStore) Put(ctx context.Context, path string, data []byte) (ObjectInfo, error) {
	return p.s.Put(ctx, path, data)
}
func (p plainStore) Copy(ctx context.Context, src, dst string) (ObjectInfo, error) {
	return p.s.Copy(ctx, src, dst)
}
func (p plainStore) Delete(ctx context.Context, path string) error { return p.s.Delete(ctx, path) }
func (p plainStore) List(ctx context.Context, prefix string) iter.Seq2[ObjectInfo, error] {
	return p.s.List(ctx, prefix)
}

func newFaultStore() *faultStore { return &faultStore{WriteIDStore: NewMemStore().(WriteIDStore)} }

// Issue 11 case 9: x's PutIfMatch lands, its answer is lost, and y writes
// the old content back (A→B→A) before x looks. x's HEAD shows the ETag x
// held; it must not send its write again over y's acknowledged write.
// With write ids x sees that the object is not the one it replaced (a
// success: its write landed first); without them it cannot tell, and says
// ErrUnknownOutcome.
func TestCommitterABANotResent(t *testing.T) {
	for _, ids := range []bool{true, false} {
		t.Run(fmt.Sprintf("write ids %v", ids), func(t *testing.T) {
			checkNoLeak(t)
			table := committerTable(t)
			fs := newFaultStore()
			var xs Store = fs
			if !ids {
				xs = plainStore{fs}
			}
			x := newCommitter(t, table, nil, xs, WithOwner("x"))
			y := newCommitter(t, table, nil, fs.WriteIDStore, WithOwner("y"))
			ctx := t.Context()
			a, err := y.PutIfNotExists(ctx, "p", []byte("A"))
			if err != nil {
				t.Fatal(err)
			}
			var yErr error
			fs.arm(func() { // x's B landed; y turns it back into A
				var b ObjectInfo
				if b, yErr = fs.Head(ctx, "p"); yErr == nil {
					_, yErr = y.PutIfMatch(ctx, "p", []byte("A"), b.ETag)
				}
			})
			before := fs.writes.Load()
			_, err = x.PutIfMatch(ctx, "p", []byte("B"), a.ETag)
			if yErr != nil {
				t.Fatalf("y: %v", yErr)
			}
			if n := fs.writes.Load() - before; n != 1 {
				t.Errorf("x sent its write %d times; want once", n)
			}
			if ids && err != nil {
				t.Errorf("x: %v; want success (its write landed, then y's replaced it)", err)
			}
			if !ids && !errors.Is(err, ErrUnknownOutcome) {
				t.Errorf("x: %v; want ErrUnknownOutcome", err)
			}
			if data, _, _ := fs.Get(ctx, "p"); string(data) != "A" {
				t.Errorf("object %q; want y's acknowledged A", data)
			}
		})
	}
}

// Issue 11 case 9, creates: x's create (PutIfNotExists, CopyIfNotExists)
// lands, its answer is lost, and the object is deleted before x looks. x
// must not create it again: ErrUnknownOutcome, the delete stands, and the
// record stays for others to wait out.
func TestCommitterCreateThenDeleteNotResent(t *testing.T) {
	for _, op := range []string{"put", "copy"} {
		t.Run(op, func(t *testing.T) {
			checkNoLeak(t)
			table := committerTable(t)
			fs := newFaultStore()
			x := newCommitter(t, table, nil, fs, WithOwner("x"))
			ctx := t.Context()
			if _, err := fs.WriteIDStore.Put(ctx, "src", []byte("S")); err != nil {
				t.Fatal(err)
			}
			var delErr error
			fs.arm(func() { delErr = fs.Delete(ctx, "p") })
			before := fs.writes.Load()
			var err error
			if op == "put" {
				_, err = x.PutIfNotExists(ctx, "p", []byte("X"))
			} else {
				_, err = x.CopyIfNotExists(ctx, "src", "p")
			}
			if delErr != nil {
				t.Fatal(delErr)
			}
			if !errors.Is(err, ErrUnknownOutcome) {
				t.Errorf("x: %v; want ErrUnknownOutcome", err)
			}
			if n := fs.writes.Load() - before; n != 1 {
				t.Errorf("x sent its write %d times; want once", n)
			}
			if _, err := fs.Head(ctx, "p"); !errors.Is(err, ErrNotExist) {
				t.Errorf("object after the delete: %v; want it gone (x wrote it again)", err)
			}
			if r := loadRecord(t, x, "p", "*"); r.Done {
				t.Errorf("record %+v marked done; an unknown outcome leaves it for others to wait out", r)
			}
		})
	}
}

// Issue 11 case 11: a write that failed for the client but lands later (it
// was in flight when the client gave up). The Committer does not send it
// again, so no second copy of it lets y write on top before it lands; when
// it lands (within the holder's timeout, as the protocol assumes), it
// cannot overwrite a later acknowledged write, and a writer holding the
// old ETag that waited out the record finds the object changed.
func TestCommitterLateLandingWrite(t *testing.T) {
	checkNoLeak(t)
	table := committerTable(t)
	const timeout, poll = 10 * time.Second, time.Second
	clk := clock.NewFake(time.Now())
	fs := newFaultStore()
	x := newCommitter(t, table, nil, fs, WithOwner("x"), WithClock(clk), WithTimeout(timeout))
	y := newCommitter(t, table, nil, fs.WriteIDStore, WithOwner("y"), WithClock(clk), WithTimeout(timeout), WithPollInterval(poll))
	ctx := t.Context()
	a, err := y.PutIfNotExists(ctx, "p", []byte("A"))
	if err != nil {
		t.Fatal(err)
	}
	fs.mu.Lock()
	fs.hold = true
	fs.mu.Unlock()
	before := fs.writes.Load()
	_, err = x.PutIfMatch(ctx, "p", []byte("B"), a.ETag)
	if !errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("x: %v; want ErrUnknownOutcome", err)
	}
	if n := fs.writes.Load() - before; n != 1 {
		t.Fatalf("x sent its write %d times; want once (a resend lands B, y writes C on top, the late B overwrites C)", n)
	}
	// y, holding A, waits for x's record; x's write lands meanwhile.
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err = y.PutIfMatch(ctx, "p", []byte("C"), a.ETag)
	}()
	clk.BlockUntil(done, 1)
	if err := fs.deliver(); err != nil {
		t.Fatal(err)
	}
	drive(t, clk, done, 10*timeout)
	<-done
	if !errors.Is(err, ErrPreconditionFailed) {
		t.Fatalf("y holding A after x's late write: %v; want ErrPreconditionFailed", err)
	}
	// y reads B and writes on top: acknowledged, and nothing of x's is left
	// to land over it.
	_, b, err := fs.Get(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := y.PutIfMatch(ctx, "p", []byte("C"), b.ETag); err != nil {
		t.Fatal(err)
	}
	if data, _, _ := fs.Get(ctx, "p"); string(data) != "C" {
		t.Errorf("object %q, want y's acknowledged C", data)
	}
}

// deleteRecord deletes a Committer record, as TTL or a person would.
func deleteRecord(t *testing.T, client *dynamodb.Client, table, path, etag string) {
	t.Helper()
	_, err := client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{
		TableName: aws.String(table),
		Key: map[string]types.AttributeValue{
			"path": &types.AttributeValueMemberS{Value: path},
			"etag": &types.AttributeValueMemberS{Value: etag},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Issue 11 case 10: a waiter watching a stale generation-1 record; the
// record is deleted (TTL) and created again by b (generation 1 again), who
// starts writing. The waiter's wait starts again from the moment it sees the
// new incarnation, and its reclaim, conditioned on the incarnation it
// waited on, fails over b's record.
func TestCommitterWaitRestartsOnNewIncarnation(t *testing.T) {
	checkNoLeak(t)
	table := committerTable(t)
	const timeout, rate, poll = 10 * time.Second, 2.0, time.Second
	patience := time.Duration(rate * float64(timeout))
	clk := clock.NewFake(time.Now())
	client := dynamotest.Client(t)
	s := newHookStore(NewMemStore())
	w := newCommitter(t, table, client, s, WithOwner("waiter"), WithClock(clk), WithTimeout(timeout), WithClockSkewRate(rate), WithPollInterval(poll))
	stale := deadRecord(t, w, "p", "*", timeout) // generation 1, left by a dead writer
	start := clk.Now()
	var putAt time.Duration = -1
	s.onPut = func(string) { putAt = clk.Now().Sub(start) }
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		_, err = w.PutIfNotExists(t.Context(), "p", []byte("waiter"))
	}()
	// Just before the waiter reclaims, TTL deletes the stale record and b
	// creates it again, fresh.
	for clk.Now().Sub(start) < patience-poll {
		clk.BlockUntil(done, 1)
		clk.Advance(poll)
	}
	clk.BlockUntil(done, 1)
	deleteRecord(t, client, table, "p", "*")
	fresh, serr := w.table.Save(t.Context(), commitRecord{Path: "p", ETag: "*", TimeoutMS: timeout.Milliseconds(),
		TTL: time.Now().Add(time.Hour).Unix(), Owner: "b", Incarnation: "b-incarnation", Holder: "b"}, dynamo.WithSaveBehavior(dynamo.SavePut))
	if serr != nil {
		t.Fatal(serr)
	}
	if fresh.Generation != stale.Generation {
		t.Fatalf("fresh generation %d, want %d (the number restarts)", fresh.Generation, stale.Generation)
	}
	recreatedAt := clk.Now().Sub(start)
	drive(t, clk, done, 4*patience)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	// The waiter may write only once b's record has gone unfinished for a
	// whole patience after the waiter saw it (at the failed reclaim).
	if putAt < recreatedAt+patience {
		t.Errorf("waiter wrote %v after b created its record, before its patience (%v) ran out: two holders", putAt-recreatedAt, patience)
	}
	if r := loadRecord(t, w, "p", "*"); r.Incarnation != "b-incarnation" || !r.Done {
		t.Errorf("final record %+v; want b's incarnation, reclaimed and done", r)
	}
}

// Issue 11 case 12: a record write whose answer is lost, and so is the
// answer to the mapper's settling read, ends in dynamo.ErrUnknownOutcome;
// the Committer settles it by reading the record itself: it carries our
// holder id, so we hold it and the write goes on — once. The next writer
// does not wait for it.
func TestCommitterRecordWriteLostSettled(t *testing.T) {
	checkNoLeak(t)
	table := committerTable(t)
	var gets atomic.Int32
	drop := dynamotest.NewRequestDropper(func(r *http.Request) bool {
		switch r.Header.Get("X-Amz-Target") {
		case "DynamoDB_20120810.PutItem":
			return true
		case "DynamoDB_20120810.GetItem":
			return gets.Add(1) == 1 // the mapper's settling read
		}
		return false
	})
	clk := &countingClock{Fake: clock.NewFake(time.Now())} // never advanced: a wait would hang
	s := newHookStore(NewMemStore())
	c := newCommitter(t, table, drop.Client(t), s, WithClock(clk))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	drop.Arm(100) // every record write, and the first read
	if _, err := c.PutIfNotExists(ctx, "p", []byte("x")); err != nil {
		t.Fatalf("PutIfNotExists = %v; want success, settled by the Committer's own read", err)
	}
	drop.Arm(0)
	if gets.Load() < 2 {
		t.Errorf("%d reads; want the mapper's (lost) and the Committer's", gets.Load())
	}
	if n := s.Calls("Put"); n != 1 {
		t.Errorf("%d store writes, want 1", n)
	}
	if r := loadRecord(t, c, "p", "*"); !r.Done {
		t.Errorf("record %+v; want it marked done", r)
	}
	if _, err := c.PutIfNotExists(ctx, "p", []byte("y")); !errors.Is(err, ErrExists) {
		t.Fatalf("second PutIfNotExists = %v; want ErrExists", err)
	}
	if n := clk.timers.Load(); n != 0 {
		t.Errorf("%d timers: a writer waited for its own record", n)
	}
}

// A record carrying an absurd timeout makes a waiter wait (nearly) forever,
// never a negative time that would let it reclaim at once.
func TestPatienceDoesNotWrap(t *testing.T) {
	c := &Committer{o: options{timeout: time.Second, skew: 100}}
	for _, ms := range []int64{1 << 62, 1<<63 - 1, 1 << 53} {
		if p := c.patience(commitRecord{TimeoutMS: ms}); p <= 0 || p < time.Duration(float64(time.Millisecond)*float64(min(ms, 1<<53))) {
			t.Errorf("timeout %d ms: patience %v", ms, p)
		}
	}
	if p := c.patience(commitRecord{TimeoutMS: -5}); p != 100*time.Second {
		t.Errorf("negative timeout: patience %v, want the waiter's own 100s", p)
	}
	// Sub-millisecond timeouts are stored rounded up.
	c.o.timeout = 1500 * time.Microsecond
	if ms := c.timeoutMS(); ms != 2 {
		t.Errorf("timeout 1.5ms stored as %d ms, want 2", ms)
	}
}

// A finished record deleted (TTL) between a writer's conflict with it and
// its reclaim: the writer creates the record afresh, and must still HEAD
// again before writing — the finished holder changed the object after the
// writer's first HEAD. Found by the fault suite's reaper.
func TestCommitterRechecksAfterDeletedDoneRecord(t *testing.T) {
	checkNoLeak(t)
	table := committerTable(t)
	client := dynamotest.Client(t)
	var puts atomic.Int64
	tr := dynamotest.NewRequestDropper(func(r *http.Request) bool {
		if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".PutItem") && puts.Add(1) == 2 {
			deleteRecord(t, client, table, "p", "*") // just before the reclaim
		}
		return false
	})
	t.Cleanup(tr.CloseIdleConnections)
	s := newHookStore(NewMemStore())
	w := newCommitter(t, table, tr.Client(t), s, WithOwner("w"))
	x := newCommitter(t, table, client, s.Store, WithOwner("x"))
	ctx := t.Context()
	first := true
	s.onHead = func(path string) { // after w's first HEAD, x creates the object and finishes
		if first {
			first = false
			if _, err := x.PutIfNotExists(ctx, path, []byte("x")); err != nil {
				t.Error(err)
			}
		}
	}
	_, err := w.PutIfNotExists(ctx, "p", []byte("w"))
	if !errors.Is(err, ErrExists) {
		t.Errorf("w: %v; want ErrExists from a HEAD after taking the record", err)
	}
	if puts.Load() < 3 {
		t.Errorf("%d record writes; want create, reclaim, create", puts.Load())
	}
	if data, _, _ := s.Get(ctx, "p"); string(data) != "x" {
		t.Errorf("object %q; want x's (w overwrote it)", data)
	}
}

// A writer whose record write goes out a timeout or more after its HEAD
// (a pause) sends HEAD again once it holds the record: meanwhile another
// writer may have finished, and its done record been deleted (TTL), so
// that the record write meets nothing.
func TestCommitterRechecksAfterLongPause(t *testing.T) {
	checkNoLeak(t)
	table := committerTable(t)
	client := dynamotest.Client(t)
	const timeout = 10 * time.Second
	clk := clock.NewFake(time.Now())
	s := newHookStore(NewMemStore())
	w := newCommitter(t, table, client, s, WithOwner("w"), WithClock(clk), WithTimeout(timeout))
	x := newCommitter(t, table, client, s.Store, WithOwner("x"))
	ctx := t.Context()
	first := true
	s.onHead = func(path string) {
		if first {
			first = false
			if _, err := x.PutIfNotExists(ctx, path, []byte("x")); err != nil {
				t.Error(err)
			}
			deleteRecord(t, client, table, path, "*") // TTL
			clk.Advance(timeout)                      // w pauses
		}
	}
	_, err := w.PutIfNotExists(ctx, "p", []byte("w"))
	if !errors.Is(err, ErrExists) {
		t.Errorf("w: %v; want ErrExists from a HEAD after taking the record", err)
	}
	if data, _, _ := s.Get(ctx, "p"); string(data) != "x" {
		t.Errorf("object %q; want x's (w overwrote it)", data)
	}
}
