package dynamo

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// hookStore is a stub of one Book item that checks the version like
// DynamoDB (nothing else). Before applying write number n (1-based) it
// calls before(n) without the lock held, which may block (to hold a write
// in flight) or change the stored item (another writer).
type hookStore struct {
	mu     sync.Mutex
	stored map[string]types.AttributeValue
	writes int
	before func(n int)
}

func (s *hookStore) set(title, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stored = map[string]types.AttributeValue{"ISBN": str("1"), "title": str(title), "version": n(version)}
}

func (s *hookStore) title() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stored["title"].(*types.AttributeValueMemberS).Value
}

func (s *hookStore) client() *stubClient {
	c := &stubClient{}
	c.onGet = func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return &dynamodb.GetItemOutput{Item: s.stored}, nil
	}
	c.onUpd = func(in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		s.mu.Lock()
		s.writes++
		w := s.writes
		s.mu.Unlock()
		if s.before != nil {
			s.before(w)
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
		s.stored = map[string]types.AttributeValue{"ISBN": str("1"), "title": in.ExpressionAttributeValues[":a1"], "version": n(next)}
		return &dynamodb.UpdateItemOutput{}, nil
	}
	return c
}

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
// the batch starts over from the stored item and must not wait for an
// answer from a goroutine that already left Update. A panic on a stale item
// is one the function would not have raised on the stored one: like an
// error, the function is called again on the stored item.
func TestBreakCoalescedPanicOnStaleItemDeadlocks(t *testing.T) {
	for _, mode := range []string{"panic", "goexit"} {
		t.Run(mode, func(t *testing.T) {
			s := &hookStore{}
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
			f2 := startUpdate(books, func(b Book) (Book, error) {
				if !strings.HasPrefix(b.Title, "ext") {
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
		})
	}
}

// A follower's function that fails on the item as an earlier change of its
// batch left it, when that write then conflicts: the earlier change was
// never applied, so the state the function failed on never existed; run
// one after another, the function would have seen the stored item with the
// earlier change applied on it. Its error must not stand.
func TestBreakCoalescedErrorOnNeverStoredState(t *testing.T) {
	s := &hookStore{}
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
	f := startUpdate(books, func(b Book) (Book, error) {
		if b.Title == "aL" {
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
}

// The function of a batch's leader calls runtime.Goexit (t.FailNow in a
// test): that reaches only its caller. The others in its batch are run as
// if it had not been there, and the key stays usable.
func TestBreakCoalescedLeaderGoexitFailsOthers(t *testing.T) {
	s := &hookStore{}
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
	if r := hangGuard(t, startUpdate(books, appendTitle("3")), "a later Update"); r.err != nil || r.b.Title != "a123" {
		t.Errorf("later: %+v %v", r.b, r.err)
	}
}
