package dynamo

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The cache of stored items keeps the most recently stored within its
// bounds of entries and bytes, and not items over cacheItemSize.
func TestItemCacheBounds(t *testing.T) {
	var c itemCache
	item := func(n int) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"id": str("k"), "pad": str(strings.Repeat("x", n))}
	}
	for i := range cacheEntries + 10 {
		c.put(kid(strconv.Itoa(i)), item(1))
	}
	if c.order.Len() != cacheEntries || c.take(kid("0")) != nil || c.take(kid(strconv.Itoa(cacheEntries+9))) == nil {
		t.Fatalf("%d entries; want the %d most recent", c.order.Len(), cacheEntries)
	}
	c.put(kid("big"), item(cacheItemSize+1))
	if c.take(kid("big")) != nil {
		t.Error("an item over cacheItemSize was kept")
	}
	for i := range 100 {
		c.put(kid("m"+strconv.Itoa(i)), item(cacheItemSize-100))
	}
	if c.bytes > cacheBytes {
		t.Errorf("%d bytes cached, over %d", c.bytes, cacheBytes)
	}
	if c.take(kid("m99")) == nil {
		t.Error("the most recent item was evicted")
	}
}

// Updates of one key through one Table are combined, and each starts from
// what the previous one left: one read in all, no conflict, every change
// applied once, the version advanced once per change.
func TestUpdatesOfOneKeyTakeTurns(t *testing.T) {
	var mu sync.Mutex
	stored := map[string]types.AttributeValue{"ISBN": str("1"), "title": str(""), "version": n("1")}
	c := &stubClient{}
	c.onGet = func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		mu.Lock()
		defer mu.Unlock()
		return &dynamodb.GetItemOutput{Item: stored}, nil
	}
	c.onUpd = func(in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		mu.Lock()
		defer mu.Unlock()
		if held := in.ExpressionAttributeValues[":v0"]; held.(*types.AttributeValueMemberN).Value != stored["version"].(*types.AttributeValueMemberN).Value {
			return nil, ccf(stored)
		}
		stored = map[string]types.AttributeValue{"ISBN": str("1"), "title": in.ExpressionAttributeValues[":a1"], "version": in.ExpressionAttributeValues[":v1"]}
		return &dynamodb.UpdateItemOutput{}, nil
	}
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
	if got := len(stored["title"].(*types.AttributeValueMemberS).Value); got != workers*each {
		t.Errorf("title has %d x, want %d", got, workers*each)
	}
	if v := stored["version"].(*types.AttributeValueMemberN).Value; v != itoa(1+workers*each) {
		t.Errorf("version %s, want %d: one per change", v, 1+workers*each)
	}
	if len(c.upds) > workers*each {
		t.Errorf("%d writes for %d updates: some conflicted", len(c.upds), workers*each)
	}
	if len(c.gets) != 1 {
		t.Errorf("%d reads, want 1: every later Update starts from the item stored last", len(c.gets))
	}
	t.Logf("%d updates in %d writes", workers*each, len(c.upds))
}

// kid is the keyID of a string hash key.
func kid(s string) keyID { return keyID{hashType: 'S', hash: s} }

// bookStore is a stub DynamoDB of one Book item that checks the version
// (nothing else) like DynamoDB would, and can hold the first write until
// released.
type bookStore struct {
	mu      sync.Mutex
	stored  map[string]types.AttributeValue // nil: absent
	writes  []string                        // ":v0 -> :v1" of each write
	holding chan struct{}                   // closed when the first write waits
	release chan struct{}                   // closing it lets the first write go on
}

func newBookStore() *bookStore {
	return &bookStore{holding: make(chan struct{}), release: make(chan struct{})}
}

func (s *bookStore) client() *stubClient {
	c := &stubClient{}
	c.onGet = func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return &dynamodb.GetItemOutput{Item: s.stored}, nil
	}
	c.onUpd = func(in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		s.mu.Lock()
		first := len(s.writes) == 0
		s.writes = append(s.writes, "")
		s.mu.Unlock()
		if first {
			close(s.holding)
			<-s.release
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		held := "0"
		if v, ok := in.ExpressionAttributeValues[":v0"]; ok {
			held = v.(*types.AttributeValueMemberN).Value
		}
		cur := "0"
		if s.stored != nil {
			cur = s.stored["version"].(*types.AttributeValueMemberN).Value
		}
		if held != cur {
			return nil, ccf(s.stored)
		}
		next := in.ExpressionAttributeValues[":v1"].(*types.AttributeValueMemberN).Value
		s.writes[len(s.writes)-1] = held + "->" + next
		s.stored = map[string]types.AttributeValue{"ISBN": str("1"), "title": in.ExpressionAttributeValues[":a1"], "version": n(next)}
		return &dynamodb.UpdateItemOutput{}, nil
	}
	return c
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
	final := s.stored["title"].(*types.AttributeValueMemberS).Value
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if title := s.stored["title"].(*types.AttributeValueMemberS).Value; title != "Abc" {
		t.Errorf("stored title %q, want Abc", title)
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
	if len(c.gets) != 1 {
		t.Fatalf("%d reads for 3 Updates, want 1", len(c.gets))
	}
	s.mu.Lock()
	s.stored = map[string]types.AttributeValue{"ISBN": str("1"), "title": str("ext"), "version": n("9")}
	s.mu.Unlock()
	got, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle("d"))
	if err != nil || got.Title != "extd" || got.Version != 10 || len(c.gets) != 1 {
		t.Fatalf("after another writer: %+v, %v with %d reads; want extd v10 from the conflict's item", got, err, len(c.gets))
	}
	s.mu.Lock()
	s.stored = map[string]types.AttributeValue{"ISBN": str("1"), "title": str("ok"), "version": n("20")}
	s.mu.Unlock()
	calls := 0
	got, err = books.Update(ctx, Book{ISBN: "1"}, func(b Book) (Book, error) {
		calls++
		if b.Title != "ok" {
			return b, errors.New("not ok")
		}
		b.Title += "!"
		return b, nil
	})
	if err != nil || got.Title != "ok!" || got.Version != 21 || calls != 2 || len(c.gets) != 2 {
		t.Fatalf("fn failing on a stale item: %+v, %v after %d calls, %d reads; want ok! v21 after 2 calls and one more read", got, err, calls, len(c.gets))
	}
	boom := errors.New("boom")
	_, err = books.Update(ctx, Book{ISBN: "1"}, func(b Book) (Book, error) { return b, boom })
	if !errors.Is(err, boom) || len(c.gets) != 3 {
		t.Fatalf("fn failing on the current item: %v with %d reads; want boom after one check read", err, len(c.gets))
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
	follower := startUpdate(books, func(b Book) (Book, error) {
		asked <- struct{}{}
		<-unblock
		b.Title += "F"
		return b, nil
	})
	waitQueued(books, kid("1"), 3)
	close(s.release)
	hangGuard(t, first, "the first Update")
	<-asked // the follower's function runs (and blocks) after the leader's
	cancel()
	r := hangGuard(t, leader, "the leader, its ctx cancelled while a follower's function blocks")
	if r.err != nil && !errors.Is(r.err, context.Canceled) {
		t.Fatalf("leader: %v; want its own result or its ctx error", r.err)
	}
	close(unblock)
	if f := hangGuard(t, follower, "the follower"); f.err != nil || !strings.HasSuffix(f.b.Title, "F") {
		t.Fatalf("follower: %+v, %v; want its change written", f.b, f.err)
	}
	if r.err == nil && s.title() != "ALF" {
		t.Errorf("stored title %q, want ALF: each change once, in order", s.title())
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
	follower := startUpdate(books, func(b Book) (Book, error) {
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
}

func (s *bookStore) title() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stored["title"].(*types.AttributeValueMemberS).Value
}
