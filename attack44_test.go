package dynamo

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/clock"
)

// evilStamp's function moves created back to 1970 and zeroes modified on
// every change of a stored item.
type evilStamp struct {
	ID       string    `dynamo:"id,hash"`
	N        int       `dynamo:"n"`
	Created  time.Time `dynamo:"created,created"`
	Modified time.Time `dynamo:"modified,modified"`
	V        int64     `dynamo:"v,version"`
}

func (c evilStamp) count() (int, int64)                   { return c.N, c.V }
func (c evilStamp) stamps() (created, modified time.Time) { return c.Created, c.Modified }
func (c evilStamp) inc() evilStamp {
	c.N++
	if c.V > 0 {
		c.Created, c.Modified = time.Unix(1, 0), time.Time{}
	}
	return c
}

// shared1970 is one pointer every evilRich change stores as created.
var shared1970 = time.Unix(1, 0)

// evilRich has a *time.Time created and a Unix-ms modified; its function
// points created at one time shared by all callers and zeroes modified.
type evilRich struct {
	ID       string     `dynamo:"id,hash"`
	N        int        `dynamo:"n"`
	Created  *time.Time `dynamo:"created,created"`
	Modified int64      `dynamo:"modified,modified"`
	V        int64      `dynamo:"v,version"`
}

func (c evilRich) count() (int, int64) { return c.N, c.V }
func (c evilRich) stamps() (created, modified time.Time) {
	if c.Created != nil {
		created = *c.Created
	}
	return created, time.UnixMilli(c.Modified)
}
func (c evilRich) inc() evilRich {
	c.N++
	if c.V > 0 {
		c.Created, c.Modified = &shared1970, 0
	}
	return c
}

// backClock goes back one second at every reading.
type backClock struct {
	base time.Time
	n    atomic.Int64
}

func (c *backClock) Now() time.Time {
	return c.base.Add(-time.Duration(c.n.Add(1)) * time.Second)
}
func (c *backClock) NewTimer(d time.Duration) clock.Timer { return clock.Real().NewTimer(d) }
func (c *backClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	return clock.Real().AfterFunc(d, f)
}

// Functions that rewrite created and zero modified, on types whose created
// is a time.Time or a *time.Time (with Unix-ms modified), under a clock
// going forwards or backwards: each combined caller's copy is what running
// the calls one after another gives, and no function's value is changed.
func TestAttack44CombinedStampsHold(t *testing.T) {
	base := time.UnixMilli(1_700_000_000_000)
	t.Run("evil/forward", func(t *testing.T) {
		combineUnder[evilStamp](t, evilStamp{ID: "hot"}, &tickClock{base: base})
	})
	t.Run("evil/backward", func(t *testing.T) {
		combineUnder[evilStamp](t, evilStamp{ID: "hot"}, &backClock{base: base})
	})
	t.Run("rich/backward", func(t *testing.T) {
		combineUnder[evilRich](t, evilRich{ID: "hot"}, &backClock{base: base})
		if !shared1970.Equal(time.Unix(1, 0)) {
			t.Errorf("the functions' shared created time was changed to %v", shared1970)
		}
	})
	t.Run("plain/backward", func(t *testing.T) {
		combineUnder[stampCounter](t, stampCounter{ID: "hot"}, &backClock{base: base})
	})
}

func combineUnder[T stamped[T]](t *testing.T, key T, clk clock.Clock) {
	const workers, calls = 12, 15
	db := (&fakeDB{}).table("Counters", "id", "")
	tb, err := NewTable[T](NewMapper(db, WithClock(clk)), "Counters")
	if err != nil {
		t.Fatal(err)
	}
	gk := keyIDOf(tb.p, map[string]types.AttributeValue{"id": str("hot")})
	var live atomic.Int64
	live.Store(workers)
	var mu sync.Mutex
	var writes []stampWrite
	db.hook(&fakeHook{op: "UpdateItem", before: func(int) { waitInside(tb, gk, &live) },
		after: func(_ int, _, out any, err error) {
			if err != nil {
				return
			}
			got, derr := tb.decode(out.(*dynamodb.UpdateItemOutput).Attributes)
			if derr != nil {
				t.Error(derr)
				return
			}
			_, v := got.count()
			c, m := got.stamps()
			mu.Lock()
			defer mu.Unlock()
			writes = append(writes, stampWrite{v, c, m})
		}})
	copies := make([][]T, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer live.Add(-1)
			for range calls {
				got, err := tb.Update(context.Background(), key, func(c T) (T, error) { return c.inc(), nil })
				if err != nil {
					t.Error(err)
					return
				}
				copies[w] = append(copies[w], got)
			}
		}()
	}
	wg.Wait()
	if !t.Failed() {
		checkCopies(t, tb, key, copies, writes, workers*calls)
	}
}

func checkCopies[T stamped[T]](t *testing.T, tb *Table[T], key T, copies [][]T, writes []stampWrite, changes int) {
	t.Helper()
	if len(writes)*4 > changes*3 { // as combineStamped: scheduling decides how many a write carries
		t.Errorf("%d writes for %d changes: want them shared", len(writes), changes)
	}
	sort.Slice(writes, func(i, j int) bool { return writes[i].version < writes[j].version })
	created := writes[0].created
	seen := map[int64]bool{}
	for w, cs := range copies {
		var prev int64
		for _, c := range cs {
			n, v := c.count()
			cr, m := c.stamps()
			i := sort.Search(len(writes), func(i int) bool { return writes[i].version >= v })
			switch {
			case int64(n) != v || v <= prev || seen[v] || v < 1 || v > int64(changes):
				t.Fatalf("caller %d: copy %+v after version %d: want count = version, own, increasing", w, c, prev)
			case i == len(writes) || !m.Equal(writes[i].modified):
				t.Fatalf("caller %d: copy %+v modified %v: want the time of its write", w, c, m)
			case !cr.Equal(created):
				t.Fatalf("caller %d: copy %+v created %v, want %v", w, c, cr, created)
			}
			seen[v], prev = true, v
		}
	}
	stored, err := tb.Load(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	last := writes[len(writes)-1]
	if c, m := stored.stamps(); !c.Equal(created) || !m.Equal(last.modified) || !writes[0].modified.Equal(created) {
		t.Errorf("stored times %v, %v: want created %v (first write's %v), modified %v", c, m, created, writes[0].modified, last.modified)
	}
}

// A Table of pointers whose function returns one pointer shared by all
// callers (with created changed and modified zeroed): combined callers each
// get a pointer of their own at their own version with the stored times,
// and the shared value is never written to.
func TestAttack44SharedPointerNeverAliased(t *testing.T) {
	db := (&fakeDB{}).table("Counters", "id", "")
	tb, err := NewTable[*evilRich](NewMapper(db, WithClock(&backClock{base: time.UnixMilli(1_700_000_000_000)})), "Counters")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := tb.Update(ctx, &evilRich{ID: "hot"}, func(c *evilRich) (*evilRich, error) { c.N = 1; return c, nil })
	if err != nil {
		t.Fatal(err)
	}
	created := *first.Created
	shared := &evilRich{ID: "hot", N: 7, Created: &shared1970}
	const workers, calls = 8, 10
	gk := keyIDOf(tb.p, map[string]types.AttributeValue{"id": str("hot")})
	var live atomic.Int64
	live.Store(workers)
	db.hook(&fakeHook{op: "UpdateItem", before: func(int) { waitInside(tb, gk, &live) }})
	got := make([][]*evilRich, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer live.Add(-1)
			for range calls {
				c, err := tb.Update(ctx, &evilRich{ID: "hot"}, func(*evilRich) (*evilRich, error) { return shared, nil })
				if err != nil {
					t.Error(err)
					return
				}
				got[w] = append(got[w], c)
			}
		}()
	}
	wg.Wait()
	if shared.V != 0 || shared.Modified != 0 || shared.Created != &shared1970 || !shared1970.Equal(time.Unix(1, 0)) {
		t.Fatalf("the functions' value was changed: %+v", shared)
	}
	ptrs, seen := map[*evilRich]bool{}, map[int64]bool{}
	for w, cs := range got {
		var prev int64
		for _, c := range cs {
			switch {
			case c == shared || ptrs[c] || c.Created == &shared1970:
				t.Fatalf("caller %d: copy %p %+v shares memory with the function's value or another copy", w, c, c)
			case c.V <= prev || seen[c.V] || c.Modified == 0 || c.Created == nil || !c.Created.Equal(created):
				t.Fatalf("caller %d: copy %+v after %d: want own increasing version, stamped, created %v", w, c, prev, created)
			}
			ptrs[c], seen[c.V], prev = true, true, c.V
		}
	}
	for _, cs := range got {
		for _, c := range cs {
			for _, d := range got[0] {
				if c != d && c.Created == d.Created {
					t.Fatalf("copies %+v and %+v share a created pointer", c, d)
				}
			}
		}
	}
}
