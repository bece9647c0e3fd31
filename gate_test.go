package dynamo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/gate"
	"github.com/ddbkit/dynamo/internal/plan"
)

// Concurrent Updates of one key through one Table take turns, each
// starting from what the previous one left: one read in all, no conflict,
// every change applied once, the version advanced once per change. This
// holds whether or not calls share a write (how many do depends on the
// scheduler here); TestUpdateCoalesces pins that queued calls share one.
func TestUpdatesOfOneKeyTakeTurns(t *testing.T) {
	c := (&fakeDB{}).table("Books", "ISBN", "")
	putBook(c, "", "1")
	books := newBooks(t, c, WithRetry(RetryPolicy{MaxAttempts: 1}))
	const workers, each = 8, 25
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := books.Update(context.Background(), Book{ISBN: "1"}, func(b Book) (Book, error) {
					b.Title += "x"
					return b, nil
				}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := len(storedTitle(c)); got != workers*each {
		t.Errorf("title has %d x, want %d", got, workers*each)
	}
	if v := c.item("Books", book1)["version"].(*types.AttributeValueMemberN).Value; v != plan.Itoa(1+workers*each) {
		t.Errorf("version %s, want %d: one per change", v, 1+workers*each)
	}
	if len(c.upds()) > workers*each {
		t.Errorf("%d writes for %d updates: some conflicted", len(c.upds()), workers*each)
	}
	if len(c.gets()) != 1 {
		t.Errorf("%d reads, want 1: every later Update starts from the item stored last", len(c.gets()))
	}
	t.Logf("%d updates in %d writes", workers*each, len(c.upds()))
}

// kid is the keyID of a string hash key.
func kid(s string) keyID { return keyID{hashType: 'S', hash: s} }

// bookStore is the fake DynamoDB of Book items (table Books) whose first
// write waits until released, and which records the version each write
// moved its item from and to.
type bookStore struct {
	db      *fakeDB
	mu      sync.Mutex
	writes  []string      // "v0->v1" of each write, from its request ("" failed)
	holding chan struct{} // closed when the first write waits
	release chan struct{} // closing it lets the first write go on
}

func newBookStore() *bookStore {
	s := &bookStore{db: (&fakeDB{}).table("Books", "ISBN", "")}
	s.holding, s.release = s.db.hold("UpdateItem", 1)
	s.db.hook(&fakeHook{op: "UpdateItem", after: func(_ int, in, _ any, err error) {
		w := "" // a write that failed
		if err == nil {
			vals := in.(*dynamodb.UpdateItemInput).ExpressionAttributeValues
			held := "0"
			if v, ok := vals[":v0"]; ok {
				held = v.(*types.AttributeValueMemberN).Value
			}
			w = held + "->" + vals[":v1"].(*types.AttributeValueMemberN).Value
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.writes = append(s.writes, w)
	}})
	return s
}

func (s *bookStore) client() *fakeDB { return s.db }

// book1 is the key of the Book the gate tests update.
var book1 = map[string]types.AttributeValue{"ISBN": str("1")}

// storedTitle returns the title of book 1 in db.
func storedTitle(db *fakeDB) string {
	return db.item("Books", book1)["title"].(*types.AttributeValueMemberS).Value
}

// putBook stores book 1 in db with title and version, as another writer.
func putBook(db *fakeDB, title, version string) {
	db.put("Books", map[string]types.AttributeValue{"ISBN": str("1"), "title": str(title), "version": n(version)})
}

func appendTitle(s string) func(Book) (Book, error) {
	return func(b Book) (Book, error) {
		b.Title += s
		return b, nil
	}
}

// Calls queued behind a write in flight share the next write: their
// functions run one after another on the item as the previous one left it,
// the version advances by one per change, and each caller gets the copy
// after its own change.
func TestUpdateCoalesces(t *testing.T) {
	s := newBookStore()
	books := newBooks(t, s.client())
	ctx := context.Background()
	gk := kid("1")
	first := make(chan error, 1)
	go func() {
		_, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle("A"))
		first <- err
	}()
	<-s.holding // A's write is in flight
	const queued = 5
	type got struct {
		b   Book
		err error
	}
	results := make(chan got, queued)
	for i := range queued {
		go func() {
			b, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle(string(rune('a'+i))))
			results <- got{b, err}
		}()
	}
	waitQueued(books, gk, 1+queued)
	close(s.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	var all []got
	for range queued {
		all = append(all, <-results)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	final := storedTitle(s.db)
	seen := map[int64]bool{}
	for _, r := range all {
		if r.err != nil {
			t.Fatal(r.err)
		}
		// The copy after its own change: the title as it was at its version.
		if seen[r.b.Version] || r.b.Version < 2 || r.b.Version > 1+queued || r.b.Title != final[:r.b.Version] {
			t.Errorf("copy %+v of final title %q: want a distinct version in 2..%d with the title up to its change", r.b, final, 1+queued)
		}
		seen[r.b.Version] = true
	}
	if want := []string{"0->1", "1->6"}; !slices.Equal(s.writes, want) {
		t.Errorf("writes %v, want %v: the queued changes in one write", s.writes, want)
	}
	if len(final) != 1+queued || final[0] != 'A' {
		t.Errorf("title %q: every change once, A first", final)
	}
}

// In a shared write, a function's error or panic reaches only its caller;
// the others' changes are written; a caller whose ctx ends while queued
// gets its ctx error and its change is not applied.
func TestUpdateCoalescedFailuresStayWithTheirCaller(t *testing.T) {
	s := newBookStore()
	books := newBooks(t, s.client())
	ctx := context.Background()
	boom := errors.New("boom")
	go func() { _, _ = books.Update(ctx, Book{ISBN: "1"}, appendTitle("A")) }()
	<-s.holding
	cctx, cancel := context.WithCancel(ctx)
	type got struct {
		b        Book
		err      error
		panicked any
	}
	fns := []func(Book) (Book, error){
		appendTitle("b"),
		func(Book) (Book, error) { return Book{}, boom },
		func(Book) (Book, error) { panic("fn panicked") },
		appendTitle("c"),
	}
	results := make([]chan got, len(fns)+1)
	for i := range results {
		results[i] = make(chan got, 1)
	}
	for i, fn := range fns {
		go func() {
			var r got
			defer func() {
				r.panicked = recover()
				results[i] <- r
			}()
			r.b, r.err = books.Update(ctx, Book{ISBN: "1"}, fn)
		}()
		waitQueued(books, kid("1"), 2+i)
	}
	go func() {
		b, err := books.Update(cctx, Book{ISBN: "1"}, appendTitle("x"))
		results[len(fns)] <- got{b: b, err: err}
	}()
	waitQueued(books, kid("1"), 2+len(fns))
	cancel()
	if r := <-results[len(fns)]; !errors.Is(r.err, context.Canceled) || errors.Is(r.err, ErrUnknownOutcome) {
		t.Fatalf("cancelled while queued: %v; want context.Canceled, not an unknown outcome", r.err)
	}
	close(s.release)
	rb, rerr, rpanic, rc := <-results[0], <-results[1], <-results[2], <-results[3]
	if rb.err != nil || rc.err != nil || rb.b.Title != "Ab" || rc.b.Title != "Abc" || rc.b.Version != 3 {
		t.Errorf("b: %+v %v; c: %+v %v; want Ab v2 and Abc v3", rb.b, rb.err, rc.b, rc.err)
	}
	if !errors.Is(rerr.err, boom) || rerr.panicked != nil {
		t.Errorf("the failing function's caller got %v / %v", rerr.err, rerr.panicked)
	}
	if rpanic.panicked != "fn panicked" {
		t.Errorf("the panicking function's caller got %v / %v, want its panic", rpanic.err, rpanic.panicked)
	}
	if title := storedTitle(s.db); title != "Abc" {
		t.Errorf("stored title %q, want Abc", title)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if want := []string{"0->1", "1->3"}; !slices.Equal(s.writes, want) {
		t.Errorf("writes %v, want %v: b's and c's changes in one write, the failing calls in none", s.writes, want)
	}
}

// An Update of a key this Table wrote last starts from the item it stored,
// without a read, also after the key was quiet. When someone else wrote it
// since, the write conflicts and the conflict's item is used (still no
// read); a function that fails on the remembered item is called again on
// the stored one when that differs.
func TestUpdateRemembersStoredItem(t *testing.T) {
	s := newBookStore()
	close(s.release)
	c := s.client()
	books := newBooks(t, c)
	ctx := context.Background()
	for _, x := range []string{"a", "b", "c"} {
		if _, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle(x)); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.gets()) != 1 {
		t.Fatalf("%d reads for 3 Updates, want 1", len(c.gets()))
	}
	putBook(c, "ext", "9")
	got, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle("d"))
	if err != nil || got.Title != "extd" || got.Version != 10 || len(c.gets()) != 1 {
		t.Fatalf("after another writer: %+v, %v with %d reads; want extd v10 from the conflict's item", got, err, len(c.gets()))
	}
	putBook(c, "ok", "20")
	calls := 0
	got, err = books.Update(ctx, Book{ISBN: "1"}, func(b Book) (Book, error) {
		calls++
		if b.Title != "ok" {
			return b, errors.New("not ok")
		}
		b.Title += "!"
		return b, nil
	})
	if err != nil || got.Title != "ok!" || got.Version != 21 || calls != 2 || len(c.gets()) != 2 {
		t.Fatalf("fn failing on a stale item: %+v, %v after %d calls, %d reads; want ok! v21 after 2 calls and one more read", got, err, calls, len(c.gets()))
	}
	boom := errors.New("boom")
	_, err = books.Update(ctx, Book{ISBN: "1"}, func(b Book) (Book, error) { return b, boom })
	if !errors.Is(err, boom) || len(c.gets()) != 3 {
		t.Fatalf("fn failing on the current item: %v with %d reads; want boom after one check read", err, len(c.gets()))
	}
}

// A key's state (hotKey) is reused when the key goes quiet and comes back:
// it waits in the cache, as the cache's entry, holding its item and
// nothing else — no queue, no waiter, no gathering channel, no call or
// batch counted — and the next Update of the key takes that very state back
// out of the cache, so a quiet key's Update allocates none. This holds
// after a key had callers queued and combined, and after every one of them
// returned; the cached state is never in use by a call (keys) at the same
// time.
func TestQuietKeyStateIsReusedAndHoldsNoWaiter(t *testing.T) {
	s := newBookStore()
	books := newBooks(t, s.client())
	ctx := context.Background()
	gk := kid("1")
	first := make(chan error, 1)
	go func() {
		_, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle("A"))
		first <- err
	}()
	<-s.holding // A's write is in flight
	const queued = 3
	results := make(chan error, queued)
	for i := range queued {
		go func() {
			_, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle(string(rune('a'+i))))
			results <- err
		}()
	}
	waitQueued(books, gk, 1+queued)
	close(s.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for range queued {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	quiet := func(when string) any {
		t.Helper()
		waitQuiet(books, gk)
		e, ok := books.gate.State(gk)
		if ok && !e.Cached {
			t.Fatalf("%s: the key is still in use (refs %d, busy %v)", when, e.Refs, e.Busy)
		}
		if !ok {
			t.Fatalf("%s: the key's item is not cached", when)
		}
		if e.HoldsQueue || e.Gathering || e.Refs != 0 || e.Busy || e.Item == nil {
			t.Fatalf("%s: cached state holds queue %v, full %v, refs %d, busy %v, item %v: want only the item",
				when, e.HoldsQueue, e.Gathering, e.Refs, e.Busy, e.Item != nil)
		}
		return e.ID
	}
	e0 := quiet("after the combined write")
	reads := len(s.db.gets())
	for i := range 3 {
		if _, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle("z")); err != nil {
			t.Fatal(err)
		}
		if e := quiet("after a lone Update"); e != e0 {
			t.Fatalf("Update %d of the quiet key made a new state; want the cached one reused", i)
		}
	}
	if n := len(s.db.gets()); n != reads {
		t.Errorf("%d reads for Updates of a quiet key the Table wrote last, want none", n-reads)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if got := storedTitle(s.db); len(got) != 1+queued+3 || got[1+queued:] != "zzz" {
		t.Errorf("title %q: every change once", got)
	}
}

// The key map an Update sends is made once per key and sent again by later
// Updates of the key (hotKey.keyMap), and an error hands its caller a copy
// of its own: changing a ConditionError's Key changes no later request.
func TestUpdateKeyMapReusedErrorsOwnACopy(t *testing.T) {
	db := (&fakeDB{}).table("Books", "ISBN", "")
	books := newBooks(t, db)
	ctx := context.Background()
	for range 2 {
		if _, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle("a")); err != nil {
			t.Fatal(err)
		}
	}
	same := func(a, b map[string]types.AttributeValue) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	ups := db.upds()
	if len(ups) != 2 || !same(ups[0].Key, ups[1].Key) {
		t.Fatalf("%d writes; the second Update of the key made a new key map: want the first one sent again", len(ups))
	}
	_, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle("b"), If(expression.Name("title").Equal(expression.Value("nope"))))
	ce, ok := asConditionError(err)
	if !ok || !errors.Is(err, ErrConditionFailed) {
		t.Fatalf("Update under a failing If: %v, want a ConditionError of ErrConditionFailed", err)
	}
	if same(ce.Key, ups[0].Key) {
		t.Fatal("the error carries the key map the Table sends again, not a copy")
	}
	ce.Key["ISBN"] = str("2")
	if _, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle("c")); err != nil {
		t.Fatal(err)
	}
	ups = db.upds()
	if got := ups[len(ups)-1].Key["ISBN"].(*types.AttributeValueMemberS).Value; got != "1" {
		t.Errorf("after the error's key was changed, an Update of book 1 wrote key %q", got)
	}
	if got := db.item("Books", book1)["title"].(*types.AttributeValueMemberS).Value; got != "aac" {
		t.Errorf("title %q, want aac", got)
	}
}

// A caller whose change is taken into a combined write does not wait for a
// later caller's function: with the function after it blocked, the leader
// of the batch returns — by its own ctx at the latest — and the blocked
// function delays only itself; its change is written afterwards.
func TestUpdateLeaderNotHeldBySlowFollower(t *testing.T) {
	s := newBookStore()
	books := newBooks(t, s.client())
	first := startUpdate(books, appendTitle("A"))
	<-s.holding // A's write is in flight
	lctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	leader := make(chan upResult, 1)
	go func() {
		b, err := books.Update(lctx, Book{ISBN: "1"}, appendTitle("L"))
		leader <- upResult{b: b, err: err}
	}()
	waitQueued(books, kid("1"), 2)
	asked, unblock := make(chan struct{}, 8), make(chan struct{})
	firstAsked := -1 // writes sent when the follower's function was first called
	follower := startUpdate(books, func(b Book) (Book, error) {
		s.mu.Lock()
		if firstAsked < 0 {
			firstAsked = len(s.writes)
		}
		s.mu.Unlock()
		asked <- struct{}{}
		<-unblock
		b.Title += "F"
		return b, nil
	})
	waitQueued(books, kid("1"), 3)
	close(s.release)
	hangGuard(t, first, "the first Update")
	<-asked // the follower's function runs (and blocks) after the leader's
	s.mu.Lock()
	if firstAsked != 1 {
		t.Errorf("the follower's function was first called after %d writes, want 1 (A's): in the leader's batch, before the leader's change was written", firstAsked)
	}
	s.mu.Unlock()
	cancel()
	r := hangGuard(t, leader, "the leader, its ctx cancelled while a follower's function blocks")
	if r.err != nil && !errors.Is(r.err, context.Canceled) {
		t.Fatalf("leader: %v; want its own result or its ctx error", r.err)
	}
	close(unblock)
	if f := hangGuard(t, follower, "the follower"); f.err != nil || !strings.HasSuffix(f.b.Title, "F") {
		t.Fatalf("follower: %+v, %v; want its change written", f.b, f.err)
	}
	if r.err == nil && storedTitle(s.db) != "ALF" {
		t.Errorf("stored title %q, want ALF: each change once, in order", storedTitle(s.db))
	}
}

// Combined Updates cannot deadlock where calls run one after another
// cannot: a caller holding a lock that a later caller's function takes
// returns (its change written), and the later function then runs.
func TestUpdateLeaderHoldingLockNeededByFollower(t *testing.T) {
	s := newBookStore()
	books := newBooks(t, s.client())
	first := startUpdate(books, appendTitle("A"))
	<-s.holding
	var mu sync.Mutex
	locked := make(chan struct{})
	leader := make(chan upResult, 1)
	go func() {
		mu.Lock()
		defer mu.Unlock()
		close(locked)
		b, err := books.Update(context.Background(), Book{ISBN: "1"}, appendTitle("L"))
		leader <- upResult{b: b, err: err}
	}()
	<-locked
	waitQueued(books, kid("1"), 2)
	firstAsked := -1 // writes sent when the follower's function was first called
	follower := startUpdate(books, func(b Book) (Book, error) {
		s.mu.Lock()
		if firstAsked < 0 {
			firstAsked = len(s.writes)
		}
		s.mu.Unlock()
		mu.Lock()
		defer mu.Unlock()
		b.Title += "F"
		return b, nil
	})
	waitQueued(books, kid("1"), 3)
	close(s.release)
	hangGuard(t, first, "the first Update")
	if r := hangGuard(t, leader, "the leader holding the lock"); r.err != nil || r.b.Title != "AL" {
		t.Fatalf("leader: %+v, %v; want AL", r.b, r.err)
	}
	if f := hangGuard(t, follower, "the follower needing the lock"); f.err != nil || f.b.Title != "ALF" {
		t.Fatalf("follower: %+v, %v; want ALF", f.b, f.err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if firstAsked != 1 {
		t.Errorf("the follower's function was first called after %d writes, want 1 (A's): in the leader's batch, before the leader's change was written", firstAsked)
	}
}

// hookStore is the fake DynamoDB of Book items (table Books) that calls
// before(n) before write n (from 1), which may block (to hold a write in
// flight) or change the stored item (another writer).
type hookStore struct {
	db     *fakeDB
	before func(n int)
}

func newHookStore() *hookStore {
	s := &hookStore{db: (&fakeDB{}).table("Books", "ISBN", "")}
	s.db.hook(&fakeHook{op: "UpdateItem", before: func(n int) {
		if s.before != nil {
			s.before(n)
		}
	}})
	return s
}

func (s *hookStore) set(title, version string) { putBook(s.db, title, version) }
func (s *hookStore) title() string             { return storedTitle(s.db) }
func (s *hookStore) client() *fakeDB           { return s.db }

// hangGuard fails the test when ch does not deliver: a deadlock.
func hangGuard[V any](t *testing.T, ch <-chan V, what string) V {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		buf := make([]byte, 1<<16)
		t.Fatalf("deadlock: %s never returned\n%s", what, buf[:runtime.Stack(buf, true)])
		panic("unreachable")
	}
}

type upResult struct {
	b        Book
	err      error
	panicked any
	exited   bool
}

// startUpdate runs books.Update in a goroutine; its result (or panic, or
// runtime.Goexit) arrives on the returned channel.
func startUpdate(books *Table[Book], fn func(Book) (Book, error)) <-chan upResult {
	ch := make(chan upResult, 1)
	go func() {
		var r upResult
		normal := false
		defer func() {
			if !normal {
				if r.panicked = recover(); r.panicked == nil {
					r.exited = true
				}
			}
			ch <- r
		}()
		r.b, r.err = books.Update(context.Background(), Book{ISBN: "1"}, fn)
		normal = true
	}()
	return ch
}

// A batch that starts from a remembered item which turns out stale, where a
// follower's function panics (or calls runtime.Goexit) on that stale item:
// the batch starts over from the stored item without waiting for an answer
// from a goroutine that already left Update. A panic on a stale item is one
// the function would not have raised on the stored one: like an error, the
// function is called again on the stored item.
func TestCoalescedPanicOnStaleItemRerunsOnStored(t *testing.T) {
	for _, mode := range []string{"panic", "goexit"} {
		t.Run(mode, func(t *testing.T) {
			s := newHookStore()
			books := newBooks(t, s.client())
			if _, err := books.Update(context.Background(), Book{ISBN: "1"}, appendTitle("a")); err != nil {
				t.Fatal(err)
			}
			holding, release := make(chan struct{}), make(chan struct{})
			s.before = func(n int) {
				if n == 2 {
					close(holding)
					<-release
				}
			}
			lead := startUpdate(books, appendTitle("L"))
			<-holding
			f1 := startUpdate(books, appendTitle("1"))
			waitQueued(books, kid("1"), 2)
			var stale atomic.Bool
			f2 := startUpdate(books, func(b Book) (Book, error) {
				if !strings.HasPrefix(b.Title, "ext") {
					stale.Store(true)
					if mode == "panic" {
						panic("stale")
					}
					runtime.Goexit()
				}
				b.Title += "2"
				return b, nil
			})
			waitQueued(books, kid("1"), 3)
			// Right after write 2 (L's) lands, another writer writes.
			s.before = func(n int) {
				if n == 3 {
					s.set("ext", "9")
				}
			}
			close(release)
			if r := hangGuard(t, lead, "the first Update"); r.err != nil {
				t.Fatal(r.err)
			}
			r1 := hangGuard(t, f1, "the batch's leader")
			r2 := hangGuard(t, f2, "the follower")
			if r1.err != nil || !strings.HasPrefix(r1.b.Title, "ext1") {
				t.Errorf("leader: %+v %v; want ext1...", r1.b, r1.err)
			}
			if mode == "panic" && (r2.panicked != nil || r2.err != nil || r2.b.Title != "ext12") {
				t.Errorf("follower: %+v %v panic %v: want ext12, its function called again on the stored item", r2.b, r2.err, r2.panicked)
			}
			if mode == "goexit" && !r2.exited {
				t.Errorf("follower: %+v %v; want its goroutine ended by runtime.Goexit", r2.b, r2.err)
			}
			if !stale.Load() {
				t.Error("the follower's function was never called on the stale item: it was not in the batch of the remembered item")
			}
		})
	}
}

// A follower's function that fails on the item as an earlier change of its
// batch left it, when that write then conflicts: the earlier change was
// never applied, so the state the function failed on never existed; run
// one after another, the function would have seen the stored item with the
// earlier change applied on it. Its error does not stand: it runs again.
func TestCoalescedErrorOnNeverStoredStateReruns(t *testing.T) {
	s := newHookStore()
	books := newBooks(t, s.client())
	holding, release := make(chan struct{}), make(chan struct{})
	s.before = func(n int) {
		if n == 1 {
			close(holding)
			<-release
		}
	}
	first := startUpdate(books, appendTitle("a"))
	<-holding
	lead := startUpdate(books, appendTitle("L"))
	waitQueued(books, kid("1"), 2)
	errSaw := errors.New("saw aL")
	var sawAL atomic.Bool
	f := startUpdate(books, func(b Book) (Book, error) {
		if b.Title == "aL" {
			sawAL.Store(true)
			return b, errSaw
		}
		b.Title += "F"
		return b, nil
	})
	waitQueued(books, kid("1"), 3)
	// Another writer writes v1 -> v2 just before the batch's write.
	s.before = func(n int) {
		if n == 2 {
			s.set("ext", "2")
		}
	}
	close(release)
	if r := hangGuard(t, first, "the first Update"); r.err != nil {
		t.Fatal(r.err)
	}
	rl, rf := hangGuard(t, lead, "leader"), hangGuard(t, f, "follower")
	if rl.err != nil || rl.b.Title != "extL" {
		t.Errorf("leader: %+v %v, want extL", rl.b, rl.err)
	}
	if rf.err != nil || rf.b.Title != "extLF" || s.title() != "extLF" {
		t.Errorf("follower: %+v %v, stored %q; want extLF: its function failed on %q, which was never stored", rf.b, rf.err, s.title(), "aL")
	}
	if !sawAL.Load() {
		t.Errorf("the follower's function never saw %q: it was not in the leader's batch", "aL")
	}
}

// The function of a batch's leader calls runtime.Goexit (t.FailNow in a
// test): that reaches only its caller. The others in its batch are run as
// if it had not been there, and the key stays usable.
func TestCoalescedLeaderGoexitReachesOnlyItsCaller(t *testing.T) {
	s := newHookStore()
	books := newBooks(t, s.client())
	holding, release := make(chan struct{}), make(chan struct{})
	s.before = func(n int) {
		if n == 1 {
			close(holding)
			<-release
		}
	}
	first := startUpdate(books, appendTitle("a"))
	<-holding
	lead := startUpdate(books, func(Book) (Book, error) { runtime.Goexit(); return Book{}, nil })
	waitQueued(books, kid("1"), 2)
	f1 := startUpdate(books, appendTitle("1"))
	waitQueued(books, kid("1"), 3)
	f2 := startUpdate(books, appendTitle("2"))
	waitQueued(books, kid("1"), 4)
	close(release)
	if r := hangGuard(t, first, "the first Update"); r.err != nil {
		t.Fatal(r.err)
	}
	if r := hangGuard(t, lead, "the leader"); !r.exited {
		t.Errorf("leader: %+v %v; want its goroutine ended by runtime.Goexit", r.b, r.err)
	}
	r1, r2 := hangGuard(t, f1, "follower 1"), hangGuard(t, f2, "follower 2")
	if r1.err != nil || r2.err != nil || r1.b.Title != "a1" || r2.b.Title != "a12" || s.title() != "a12" {
		t.Errorf("followers: %+v %v, %+v %v, stored %q; want a1, a12: the leader's Goexit is its own", r1.b, r1.err, r2.b, r2.err, s.title())
	}
	if n := s.db.count("UpdateItem"); n != 2 {
		t.Errorf("%d writes, want 2: the first, and one for both followers of the batch", n)
	}
	if r := hangGuard(t, startUpdate(books, appendTitle("3")), "a later Update"); r.err != nil || r.b.Title != "a123" {
		t.Errorf("later: %+v %v", r.b, r.err)
	}
}

type narrowOrder struct {
	PK    string `dynamo:"pk,hash"`
	SK    string `dynamo:"sk,range"`
	Kind  string `dynamo:"kind,entity=order"`
	Total int    `dynamo:"total"`
	V     int8   `dynamo:"v,version,versionstart=7,versionstep=40"`
}

// Coalesced Updates of an entity type with a narrow version and a step: each
// caller gets what running the Updates one after another would give — its
// own copy (with the entity name, as Load returns it) at its own version —
// and the change that leaves no room in the int8 fails alone.
func TestCoalescedEntityNarrowVersion(t *testing.T) {
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "shop", "pk", types.ScalarAttributeTypeS, "sk", types.ScalarAttributeTypeS)
	hc := &fakeDB{backend: c}
	holding, release := hc.hold("UpdateItem", 2)
	orders, err := NewTable[narrowOrder](NewMapper(hc), name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	key := narrowOrder{PK: "C#1", SK: "O#1"}
	add := func(o narrowOrder) (narrowOrder, error) { o.Total++; return o, nil }
	if got, err := orders.Update(ctx, key, add); err != nil || got.V != 7 || got.Kind != "order" {
		t.Fatalf("first Update = %+v, %v", got, err)
	}
	type res struct {
		o   narrowOrder
		err error
	}
	start := func() <-chan res {
		ch := make(chan res, 1)
		go func() { o, err := orders.Update(ctx, key, add); ch <- res{o, err} }()
		return ch
	}
	lead := start()
	<-holding
	f1 := start()
	waitQueued(orders, keyIDOf(orders.p, map[string]types.AttributeValue{"pk": str("C#1"), "sk": str("O#1")}), 2)
	f2 := start()
	waitQueued(orders, keyIDOf(orders.p, map[string]types.AttributeValue{"pk": str("C#1"), "sk": str("O#1")}), 3)
	f3 := start()
	waitQueued(orders, keyIDOf(orders.p, map[string]types.AttributeValue{"pk": str("C#1"), "sk": str("O#1")}), 4)
	close(release)
	r0, r1, r2, r3 := <-lead, <-f1, <-f2, <-f3
	if r0.err != nil || r0.o.V != 47 || r0.o.Total != 2 || r0.o.Kind != "order" {
		t.Errorf("lead = %+v, %v; want total 2 version 80 kind order", r0.o, r0.err)
	}
	if r1.err != nil || r1.o.V != 87 || r1.o.Total != 3 || r1.o.Kind != "order" {
		t.Errorf("first follower = %+v, %v; want total 3 version 87 kind order", r1.o, r1.err)
	}
	if r2.err != nil || r2.o.V != 127 || r2.o.Total != 4 || r2.o.Kind != "order" {
		t.Errorf("second follower = %+v, %v; want total 4 version 127 kind order", r2.o, r2.err)
	}
	if !errors.Is(r3.err, ErrInvalidInput) {
		t.Errorf("third follower = %+v, %v; want ErrInvalidInput: no room for version 167 in an int8", r3.o, r3.err)
	}
	got, err := orders.Load(ctx, key, ConsistentRead())
	if err != nil || got.V != 127 || got.Total != 4 {
		t.Errorf("stored %+v, %v; want total 4 version 127", got, err)
	}
	if n := hc.count("UpdateItem"); n != 3 {
		t.Errorf("%d writes, want 3: the first, the lead's, and one for both followers that fit", n)
	}
}

// gatherFixture starts A's Update of book 1 and holds its write (the
// Table's first, which the gate's fake clock times at 10 ms), queues B, C and D
// behind it, and releases A's write: A returns, and B leads the next batch.
// second is closed when the second write starts.
func gatherFixture(t *testing.T) (s *bookStore, books *Table[Book], clk *clock.Fake, results chan error, second chan struct{}) {
	t.Helper()
	s = newBookStore()
	clk = clock.NewFake(time.Unix(1_700_000_000, 0))
	c := s.client()
	second = make(chan struct{})
	c.hook(&fakeHook{op: "UpdateItem", n: 2, before: func(int) { close(second) }})
	books = newBooks(t, c)
	books.gate.Clk = clk
	ctx := context.Background()
	first := make(chan error, 1)
	go func() {
		_, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle("A"))
		first <- err
	}()
	<-s.holding
	clk.Advance(10 * time.Millisecond) // the write's round trip
	results = make(chan error, 4)
	for _, c := range []string{"b", "c", "d"} {
		go func() {
			_, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle(c))
			results <- err
		}()
	}
	waitQueued(books, kid("1"), 4)
	close(s.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	return s, books, clk, results, second
}

// After a write, the next batch waits for the callers that write released
// to queue again, and leaves the moment the last of them has: A's next
// change shares the write of B, C and D, without the clock moving.
func TestUpdateBatchGathersReleasedCallers(t *testing.T) {
	s, books, clk, results, second := gatherFixture(t)
	// B gathers: A, released, has not queued again.
	if !clk.BlockUntil(second, 1) {
		t.Fatal("the next write left without waiting for A")
	}
	s.mu.Lock()
	if len(s.writes) != 1 {
		t.Errorf("writes %v while B gathers: want only A's", s.writes)
	}
	s.mu.Unlock()
	go func() {
		_, err := books.Update(context.Background(), Book{ISBN: "1"}, appendTitle("E"))
		results <- err
	}()
	for range 4 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if want := []string{"0->1", "1->5"}; !slices.Equal(s.writes, want) {
		t.Errorf("writes %v, want %v: A's next change in the write of B, C and D", s.writes, want)
	}
	// b, c and d queued in any order; A's second change came last.
	if title := storedTitle(s.db); len(title) != 5 || title[0] != 'A' || title[4] != 'E' ||
		!strings.Contains(title, "b") || !strings.Contains(title, "c") || !strings.Contains(title, "d") {
		t.Errorf("title %q, want A, then b, c and d in any order, then E", title)
	}
	if n := clk.Timers(); n != 0 {
		t.Errorf("%d timers left", n)
	}
}

// The wait is bounded by half the Table's write round trip: when a
// released caller does not come back, the batch leaves without it once
// that has passed (not before), and the next batch waits for none of the
// callers this one had, as none came back after the first.
func TestUpdateBatchGatherIsBounded(t *testing.T) {
	s, books, clk, results, second := gatherFixture(t)
	if !clk.BlockUntil(second, 1) {
		t.Fatal("the next write left without waiting for A")
	}
	if d, _ := clk.Next(); d != 5*time.Millisecond {
		t.Errorf("gather waits %v, want half the 10 ms round trip", d)
	}
	clk.Advance(5*time.Millisecond - 1)
	s.mu.Lock()
	if len(s.writes) != 1 {
		t.Errorf("writes %v before the bound: want only A's", s.writes)
	}
	s.mu.Unlock()
	clk.Advance(1)
	for range 3 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	if want := []string{"0->1", "1->4"}; !slices.Equal(s.writes, want) {
		t.Errorf("writes %v, want %v", s.writes, want)
	}
	s.mu.Unlock()
	waitQuiet(books, kid("1"))
	e, ok := books.gate.State(kid("1"))
	if !ok || !e.Cached {
		t.Fatal("the quiet key's item is not cached")
	}
	// A, released by the first write, did not come back within its return
	// window (b, c and d were queued before): the next batch expects none
	// of the 3 callers the last one released.
	if expect := e.Expect; expect != 0 {
		t.Errorf("the key went quiet expecting %d callers, want none: none came back", expect)
	}
}

// A caller alone on a key never waits for others: with the write round
// trip measured (the stub's writes take 5 ms of the fake clock), its
// Updates in a loop start no timer.
func TestUpdateLoneCallerNeverWaits(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	s := newBookStore()
	close(s.release)
	c := s.client()
	c.hook(&fakeHook{op: "UpdateItem", before: func(int) { clk.Advance(5 * time.Millisecond) }})
	books := newBooks(t, c)
	books.gate.Clk = clk
	done := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		defer close(done)
		for range 5 {
			if _, err := books.Update(context.Background(), Book{ISBN: "1"}, appendTitle("x")); err != nil {
				errs <- err
				return
			}
		}
	}()
	if clk.BlockUntil(done, 1) {
		t.Error("a lone caller waited for a timer")
		clk.Advance(time.Hour)
		<-done
	}
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	if rtt := books.gate.RTT(); rtt != 5*time.Millisecond {
		t.Errorf("round trip %v, want the 5 ms measured", rtt)
	}
	if len(s.writes) != 5 {
		t.Errorf("%d writes, want 5", len(s.writes))
	}
}

// The mapper's clock (WithClock) drives versions and timestamps only, never
// the gate's timing: with a fake clock that moved once during the first
// write (a round trip of 10 ms on it) and never again, concurrent Updates
// of one key, which gather for each other, all complete — also when a
// caller they gather for does not come back (each caller stops after a
// number of Updates of its own).
func TestCombinedUpdatesCompleteUnderStandingFakeClock(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	s := newBookStore()
	close(s.release)
	c := s.client()
	var once sync.Once
	c.hook(&fakeHook{op: "UpdateItem", before: func(int) { once.Do(func() { clk.Advance(10 * time.Millisecond) }) }})
	books := newBooks(t, c, WithClock(clk))
	if _, err := books.Update(context.Background(), Book{ISBN: "1"}, appendTitle("x")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a hang fails, not blocks
	defer cancel()
	const callers = 8
	errs := make(chan error, callers)
	changes := 1
	for i := range callers {
		changes += 2 + i
		go func() {
			for range 2 + i {
				if _, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle("x")); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range callers {
		if err := <-errs; err != nil {
			t.Fatalf("Update under a fake clock that stands still: %v", err)
		}
	}
	if got := storedTitle(s.db); len(got) != changes {
		t.Errorf("title of %d changes, want %d", len(got), changes)
	}
}

// The writes of a lone caller are timed at the first and then one in
// gate.RTTSample (the Table's round trip follows theirs while few of them read
// the clock): after the first write's 8 ms, gate.RTTSample-1 writes of 4 ms leave
// the round trip at 8 ms, and the next one moves it a quarter of the way.
func TestLoneWritesAreTimedOneInRTTSample(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	s := newBookStore()
	close(s.release)
	c := s.client()
	var took atomic.Int64
	took.Store(int64(8 * time.Millisecond))
	c.hook(&fakeHook{op: "UpdateItem", before: func(int) { clk.Advance(time.Duration(took.Load())) }})
	books := newBooks(t, c)
	books.gate.Clk = clk
	update := func() {
		t.Helper()
		if _, err := books.Update(context.Background(), Book{ISBN: "1"}, appendTitle("x")); err != nil {
			t.Fatal(err)
		}
	}
	rtt := books.gate.RTT
	update()
	took.Store(int64(4 * time.Millisecond))
	for range gate.RTTSample - 1 {
		update()
	}
	if got := rtt(); got != 8*time.Millisecond {
		t.Fatalf("round trip %v after the first write and %d untimed ones, want the first's 8 ms", got, gate.RTTSample-1)
	}
	update()
	if got := rtt(); got != 7*time.Millisecond {
		t.Errorf("round trip %v after write %d, want 7 ms (a quarter of the way to its 4 ms)", got, gate.RTTSample+1)
	}
}

// A combined Update writes what each function returned when it returned:
// a caller that left Update (its ctx ended while its change was being
// written with others') and then changes the slice it returned from its
// function changes neither the stored item nor what the batch remembers.
func TestCombinedUpdateWritesWhatTheFunctionReturned(t *testing.T) {
	db := (&fakeDB{}).table("Books", "ISBN", "")
	books := newBooks(t, db)
	holding, release := db.hold("UpdateItem", 1)
	first := startUpdate(books, appendTitle("0"))
	<-holding // the first write is in flight: A and C queue behind it

	shared := []string{"orig"}
	actx, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	aDone := make(chan error, 1)
	go func() {
		_, err := books.Update(actx, Book{ISBN: "1"}, func(b Book) (Book, error) {
			b.Authors = shared
			return b, nil
		})
		aDone <- err
	}()
	waitQueued(books, kid("1"), 2)
	cStarted, cGo := make(chan struct{}), make(chan struct{})
	var once bool
	cDone := startUpdate(books, func(b Book) (Book, error) {
		if !once {
			once = true
			close(cStarted)
			<-cGo
		}
		return b, errors.New("no change from C")
	})
	waitQueued(books, kid("1"), 3)
	close(release)
	if r := hangGuard(t, first, "the first Update"); r.err != nil {
		t.Fatal(r.err)
	}
	<-cStarted // A's function has returned: its change is in the batch
	cancelA()
	if err := hangGuard(t, aDone, "A's Update"); !errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("A: %v; want ErrUnknownOutcome (setup: its change is in a write)", err)
	}
	shared[0] = "changed after Update returned" // A's own slice, A having left
	close(cGo)
	if r := hangGuard(t, cDone, "C's Update"); r.err == nil {
		t.Fatalf("C: %+v, want its error", r.b)
	}
	stored := db.item("Books", map[string]types.AttributeValue{"ISBN": str("1")})
	ss, _ := stored["authors"].(*types.AttributeValueMemberSS)
	if ss == nil {
		t.Fatalf("stored %v: setup: A's change was not written", stored)
	}
	if !slices.Equal(ss.Value, []string{"orig"}) {
		t.Errorf("stored authors %v, want [orig]: the write carried a change made after Update returned, which no function returned", ss.Value)
	}
}

// TestCombinedUpdateReturnsTheFunctionsValue: every caller of a combined
// Update gets back the value its function returned (with the version
// written), as a lone caller does: fields the item does not store
// (dynamo:"-", unexported) are the function's, not lost to the encoding the
// batch writes from.
func TestCombinedUpdateReturnsTheFunctionsValue(t *testing.T) {
	s := newBookStore()
	books := newBooks(t, s.client())
	first := startUpdate(books, func(b Book) (Book, error) {
		b.Title, b.Skip = "0", "lone"
		return b, nil
	})
	<-s.holding // the first write is in flight: the others queue behind it
	const queued = 3
	results := make([]<-chan upResult, queued)
	for i := range queued {
		skip := string(rune('a' + i))
		results[i] = startUpdate(books, func(b Book) (Book, error) {
			b.Title += skip
			b.Skip = skip
			return b, nil
		})
		waitQueued(books, kid("1"), 2+i)
	}
	close(s.release)
	if r := hangGuard(t, first, "the first Update"); r.err != nil || r.b.Skip != "lone" {
		t.Fatalf("the lone Update: %+v, %v; want Skip %q, what its function returned", r.b, r.err, "lone")
	}
	for i, ch := range results {
		r := hangGuard(t, ch, "a queued Update")
		if r.err != nil {
			t.Fatal(r.err)
		}
		if want := string(rune('a' + i)); r.b.Skip != want {
			t.Errorf("caller %d got %+v: Skip %q, want %q, what its function returned", i, r.b, r.b.Skip, want)
		}
		if r.b.Version != int64(2+i) {
			t.Errorf("caller %d got version %d, want %d", i, r.b.Version, 2+i)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if want := []string{"0->1", "1->4"}; !slices.Equal(s.writes, want) {
		t.Errorf("writes %v, want %v: the queued changes in one write", s.writes, want)
	}
}

// counted is an item of a key whose field N counts the changes made to it.
type counted struct {
	ID      string `dynamo:"id,hash"`
	N       int    `dynamo:"n"`
	Version int64  `dynamo:"version,version"`
}

// Many goroutines updating a few hot keys and many more keys than the
// item cache holds (so that quiet keys' states are evicted, reused and
// made again while others still run), through two Tables on one table
// name, with functions that fail, panic or make no change among them:
// every key's counter is exactly the number of calls whose function
// added one and whose Update returned no error, its version the number of
// those changes, and each caller gets its own outcome — the saved copy
// holds the change its own function made.
func TestUpdateCountsExactUnderChurn(t *testing.T) {
	db := (&fakeDB{}).table("Counters", "id", "")
	m := NewMapper(db)
	var tables [2]*Table[counted]
	for i := range tables {
		tb, err := NewTable[counted](m, "Counters")
		if err != nil {
			t.Fatal(err)
		}
		tables[i] = tb
	}
	const workers, calls, many = 8, 600, gate.CacheEntries + 300
	errFn := errors.New("fn failed")
	var mu sync.Mutex
	added := map[string]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for i := range calls {
				id := strconv.Itoa((w*calls + i) * 7919 % many)
				if i%3 == 0 {
					id = "hot" + strconv.Itoa(i%2)
				}
				kind := (w + i) % 11 // 0: error, 1: panic, 2: no change, else +1
				tag := w*calls + i + 1
				got, err, panicked := func() (got counted, err error, panicked bool) {
					defer func() {
						if p := recover(); p != nil {
							if p != any(tag) {
								t.Errorf("call %d panicked with %v, want its own panic %d", tag, p, tag)
							}
							panicked = true
						}
					}()
					got, err = tables[i%2].Update(ctx, counted{ID: id}, func(c counted) (counted, error) {
						switch kind {
						case 0:
							return c, fmt.Errorf("call %d: %w", tag, errFn)
						case 1:
							panic(tag)
						case 2:
							return c, ErrNoChange
						}
						c.N++
						return c, nil
					})
					return got, err, false
				}()
				switch {
				case kind == 1:
					if !panicked {
						t.Errorf("call %d: its function panicked, Update did not", tag)
					}
				case kind == 0:
					if !errors.Is(err, errFn) || !strings.Contains(err.Error(), fmt.Sprintf("call %d:", tag)) {
						t.Errorf("call %d: %v, want its own function's error", tag, err)
					}
				case err != nil:
					t.Errorf("call %d: %v", tag, err)
				case got.ID != id || int64(got.N) != got.Version:
					t.Errorf("call %d on %s: saved %+v, want key %s at version N", tag, id, got, id)
				case kind != 2:
					mu.Lock()
					added[id]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for id, n := range added {
		c, err := tables[0].Load(context.Background(), counted{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		if c.N != n || c.Version != int64(n) {
			t.Errorf("key %s: n=%d version %d, want %d changes counted, %d versions", id, c.N, c.Version, n, n)
		}
	}
}
