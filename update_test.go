package dynamo

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/plan"
)

func TestUpdateRetriesWithConflictItem(t *testing.T) {
	// Update reads version 6 with title "A"; another writer stores version
	// 7 with title "X" just before the first write, which conflicts, and
	// the conflict carries that item. Update must call fn with it, without
	// another read.
	c := (&fakeDB{}).table("Books", "ISBN", "")
	putBook(c, "A", "6")
	c.hook(&fakeHook{op: "UpdateItem", n: 1, before: func(int) { putBook(c, "X", "7") }})
	books := newBooks(t, c, WithRetry(RetryPolicy{BackoffBase: time.Nanosecond, BackoffMax: time.Nanosecond}))
	var seen []string
	saved, err := books.Update(context.Background(), Book{ISBN: "1"}, func(b Book) (Book, error) {
		seen = append(seen, b.Title)
		b.Title += "+"
		b.Version = 1000 // ignored: Update writes the version it read
		return b, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(seen, ",") != "A,X" {
		t.Errorf("fn saw %v, want A then X", seen)
	}
	if len(c.gets()) != 1 {
		t.Errorf("%d reads, want 1 (the conflict carries the item)", len(c.gets()))
	}
	if saved.Title != "X+" || saved.Version != 8 {
		t.Errorf("saved = %+v, want X+ at version 8", saved)
	}
	if got := c.upds()[1].ExpressionAttributeValues[":v0"].(*types.AttributeValueMemberN).Value; got != "7" {
		t.Errorf("second write held %s, want 7", got)
	}
	if got := storedTitle(c); got != "X+" {
		t.Errorf("stored title %q, want X+", got)
	}
}

func TestUpdateCreatesMissingItem(t *testing.T) {
	c := (&fakeDB{}).table("Books", "ISBN", "")
	books := newBooks(t, c)
	saved, err := books.Update(context.Background(), Book{ISBN: "9", Title: "ignored"}, func(b Book) (Book, error) {
		if b.ISBN != "9" || b.Title != "" || b.Version != 0 {
			t.Errorf("fn got %+v, want only the key", b)
		}
		b.Title = "new"
		return b, nil
	})
	if err != nil || saved.Version != 1 || saved.Title != "new" {
		t.Fatalf("Update = %+v, %v", saved, err)
	}
	if got := c.item("Books", map[string]types.AttributeValue{"ISBN": str("9")}); got == nil || !av.Equal(got["title"], str("new")) || !av.Equal(got["version"], n("1")) {
		t.Errorf("stored %v, want title new at version 1", got)
	}
}

func TestUpdateStops(t *testing.T) {
	var writes int
	conflict := func(int, *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		writes++ // someone else always wrote once more
		return nil, ccf(map[string]types.AttributeValue{"ISBN": str("1"), "version": n(plan.Itoa(int64(writes) + 10))})
	}
	missing := func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return &dynamodb.GetItemOutput{}, nil
	}
	id := func(b Book) (Book, error) { return b, nil }
	ctx := context.Background()

	c := &fakeDB{noStore: true, onGet: missing, onUpd: conflict}
	_, err := newBooks(t, c, WithRetry(RetryPolicy{MaxAttempts: 3, BackoffBase: time.Nanosecond, BackoffMax: time.Nanosecond})).Update(ctx, Book{ISBN: "1"}, id)
	if !errors.Is(err, ErrVersionConflict) || !strings.Contains(err.Error(), "after 3 attempts") || len(c.upds()) != 3 {
		t.Errorf("bounded attempts: %v after %d writes", err, len(c.upds()))
	}

	boom := errors.New("boom")
	c = &fakeDB{noStore: true, onGet: missing}
	_, err = newBooks(t, c).Update(ctx, Book{ISBN: "1"}, func(Book) (Book, error) { return Book{}, boom })
	if !errors.Is(err, boom) || len(c.upds()) != 0 {
		t.Errorf("fn error: %v after %d writes", err, len(c.upds()))
	}

	c = &fakeDB{noStore: true, onGet: missing}
	_, err = newBooks(t, c).Update(ctx, Book{ISBN: "1"}, func(b Book) (Book, error) { b.ISBN = "2"; return b, nil })
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "changed the key") {
		t.Errorf("key change: %v", err)
	}

	cctx, cancel := context.WithCancel(ctx)
	c = &fakeDB{noStore: true, onGet: missing, onUpd: func(n int, in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		cancel()
		return conflict(n, in)
	}}
	_, err = newBooks(t, c, WithRetry(RetryPolicy{BackoffBase: time.Hour, BackoffMax: time.Hour})).Update(cctx, Book{ISBN: "1"}, id)
	if !errors.Is(err, context.Canceled) || len(c.upds()) != 1 {
		t.Errorf("cancelled: %v after %d writes", err, len(c.upds()))
	}

	c = &fakeDB{noStore: true, onGet: missing, onUpd: func(int, *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		return nil, ccf(map[string]types.AttributeValue{"ISBN": str("1"), "version": n("0")})
	}}
	c.onGet = func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		item, _ := attributevalue.MarshalMapWithOptions(Book{ISBN: "1", Version: 4}, func(o *attributevalue.EncoderOptions) { o.TagKey = "dynamo" })
		return &dynamodb.GetItemOutput{Item: item}, nil
	}
	c.onUpd = func(int, *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		// The item Update read, unchanged: the If condition failed on it.
		item, _ := attributevalue.MarshalMapWithOptions(Book{ISBN: "1", Version: 4}, func(o *attributevalue.EncoderOptions) { o.TagKey = "dynamo" })
		return nil, ccf(item)
	}
	_, err = newBooks(t, c).Update(ctx, Book{ISBN: "1"}, id)
	if !errors.Is(err, ErrConditionFailed) || len(c.upds()) != 1 {
		t.Errorf("failed If is not retried: %v after %d writes", err, len(c.upds()))
	}
}

// A key spelled another way than the stored one (-0 for 0, 1.00 for 1) is
// the same item: an Update function that returns the stored item unchanged
// does not change the key, and the write goes to the item.
func TestUpdateKeyOtherSpellingSameItem(t *testing.T) {
	type numItem struct {
		ID  float64               `dynamo:"id,hash"`
		Sub attributevalue.Number `dynamo:"sub,range"`
		V   int64                 `dynamo:"v,version"`
		X   string                `dynamo:"x"`
	}
	c := &fakeDB{noStore: true}
	c.onGet = func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return &dynamodb.GetItemOutput{Item: map[string]types.AttributeValue{"id": n("0"), "sub": n("1"), "v": n("3"), "x": str("a")}}, nil
	}
	tb, err := NewTable[numItem](NewMapper(c), "t")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tb.Update(context.Background(), numItem{ID: negZero(), Sub: "1.00"}, func(it numItem) (numItem, error) { return it, nil })
	if err != nil {
		t.Fatalf("Update of key (-0, 1.00) stored at (0, 1) = %v, want the write", err)
	}
	if got.V != 4 || len(c.upds())+len(c.puts()) != 1 {
		t.Fatalf("Update = %+v after %d writes, want version 4 after one write", got, len(c.upds())+len(c.puts()))
	}
}

// In a combined Update write, a change whose item is over DynamoDB's size
// limit once written — write token included — fails alone with
// ErrInvalidInput; the other callers' changes are written.
func TestUpdateCombinedOversizeChangeFailsAlone(t *testing.T) {
	s := newBookStore()
	books := newBooks(t, s.client())
	// A title that fits without the write token and not with it.
	base := map[string]types.AttributeValue{"ISBN": str("1"), "title": str(""), "version": n("1")}
	title := strings.Repeat("t", maxItemSize-books.writtenSize(base, 3, newToken(), false)+1)
	first := startUpdate(books, appendTitle("A"))
	<-s.holding
	small := startUpdate(books, appendTitle("x"))
	waitQueued(books, kid("1"), 2)
	big := startUpdate(books, func(b Book) (Book, error) {
		b.Title = title
		return b, nil
	})
	waitQueued(books, kid("1"), 3)
	close(s.release)
	if r := hangGuard(t, first, "the first Update"); r.err != nil {
		t.Fatal(r.err)
	}
	if r := hangGuard(t, small, "the small change's Update"); r.err != nil || r.b.Title != "Ax" {
		t.Errorf("small change: %+v, %v; want Ax written", r.b, r.err)
	}
	if r := hangGuard(t, big, "the big change's Update"); !errors.Is(r.err, ErrInvalidInput) {
		t.Errorf("oversize change: %v; want ErrInvalidInput", r.err)
	}
	if got := storedTitle(s.db); got != "Ax" {
		t.Errorf("stored title %.10q, want Ax", got)
	}
}

// An Update function that empties an index key — which DynamoDB would
// refuse for the whole write — fails with ErrInvalidInput before anything is
// sent: alone, and in a combined write, where it fails alone and the other
// callers' changes are written.
func TestUpdateEmptiedIndexKeyFailsAlone(t *testing.T) {
	type member struct {
		ID    string `dynamo:"id,hash"`
		Email string `dynamo:"email" index:"ByEmail,hash"`
		Name  string `dynamo:"name"`
		V     int64  `dynamo:"v,version"`
	}
	db := (&fakeDB{}).table("Members", "id", "")
	holding, release := db.hold("UpdateItem", 1)
	m := NewTableMust[member](t, NewMapper(db))
	type res struct {
		v   member
		err error
	}
	start := func(fn func(member) (member, error)) <-chan res {
		ch := make(chan res, 1)
		go func() {
			v, err := m.Update(context.Background(), member{ID: "1"}, fn)
			ch <- res{v, err}
		}()
		return ch
	}
	set := func(email, name string) func(member) (member, error) {
		return func(v member) (member, error) { v.Email, v.Name = email, v.Name+name; return v, nil }
	}
	first := start(set("a@x", "A"))
	<-holding
	ok := start(set("b@x", "B"))
	waitQueued(m, kid("1"), 2)
	bad := start(set("", "C"))
	waitQueued(m, kid("1"), 3)
	close(release)
	if r := hangGuard(t, first, "the first Update"); r.err != nil {
		t.Fatal(r.err)
	}
	if r := hangGuard(t, ok, "the good change's Update"); r.err != nil || r.v.Name != "AB" || r.v.Email != "b@x" {
		t.Errorf("good change: %+v, %v; want AB, b@x written", r.v, r.err)
	}
	if r := hangGuard(t, bad, "the bad change's Update"); !errors.Is(r.err, ErrInvalidInput) || !strings.Contains(r.err.Error(), `index "ByEmail" hash key email`) {
		t.Errorf("emptied index key: %v; want ErrInvalidInput naming the index key", r.err)
	}
	writes := len(db.upds())
	if _, err := m.Update(context.Background(), member{ID: "1"}, set("", "D")); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("a lone Update emptying the index key: %v; want ErrInvalidInput", err)
	}
	if got, err := m.Load(context.Background(), member{ID: "1"}); err != nil || got.Name != "AB" || got.Email != "b@x" || len(db.upds()) != writes {
		t.Errorf("stored %+v, %v after %d more writes; want AB, b@x and none", got, err, len(db.upds())-writes)
	}
}

// With MustExist, an Update of a missing key fails with ErrNotFound without
// calling its function or writing; an existing item is updated as usual.
func TestUpdateMustExistRefusesMissingItem(t *testing.T) {
	s := newBookStore()
	close(s.release)
	books := newBooks(t, s.client())
	ctx := context.Background()
	called := false
	_, err := books.Update(ctx, Book{ISBN: "1"}, func(b Book) (Book, error) {
		called = true
		return b, nil
	}, MustExist())
	if !errors.Is(err, ErrNotFound) || called || len(s.writes) != 0 {
		t.Fatalf("missing item: %v, fn called %v, %d writes; want ErrNotFound, no call, no write", err, called, len(s.writes))
	}
	putBook(s.db, "a", "4")
	if got, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle("b"), MustExist()); err != nil || got.Title != "ab" || got.Version != 5 {
		t.Fatalf("existing item: %+v, %v; want ab v5", got, err)
	}
}

// An Update function that returns ErrNoChange writes nothing and leaves the
// version; Update returns the stored item. When the item given was the one
// the Table remembered, Update reads the key first, and calls the function
// again on the stored item when someone else wrote it since.
func TestUpdateNoChangeWritesNothing(t *testing.T) {
	s := newBookStore()
	close(s.release)
	c := s.client()
	books := newBooks(t, c)
	ctx := context.Background()
	putBook(s.db, "a", "4")
	got, err := books.Update(ctx, Book{ISBN: "1"}, func(b Book) (Book, error) {
		b.Title = "scribbled on the copy"
		return b, ErrNoChange
	})
	if err != nil || got.Title != "a" || got.Version != 4 || len(s.writes) != 0 {
		t.Fatalf("no change: %+v, %v, %d writes; want a v4 and no write", got, err, len(s.writes))
	}
	if _, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle("b")); err != nil {
		t.Fatal(err)
	}
	putBook(s.db, "ext", "9")
	var seen []string
	reads := len(c.gets())
	got, err = books.Update(ctx, Book{ISBN: "1"}, func(b Book) (Book, error) {
		seen = append(seen, b.Title)
		return b, ErrNoChange
	})
	if err != nil || got.Title != "ext" || got.Version != 9 || len(c.gets()) != reads+1 || !slices.Equal(seen, []string{"ab", "ext"}) {
		t.Fatalf("no change on a remembered item: %+v, %v after %d reads, fn saw %q; want ext v9 from one read, fn called on ab then ext", got, err, len(c.gets())-reads, seen)
	}
	if len(s.writes) != 1 {
		t.Errorf("%d writes, want 1", len(s.writes))
	}
}

// In a combined write, a caller whose function returns ErrNoChange takes no
// version step: it gets the item as the change before it left it, and the
// write advances the version once per change made.
func TestUpdateCombinedNoChangeTakesNoVersionStep(t *testing.T) {
	s := newBookStore()
	books := newBooks(t, s.client())
	first := startUpdate(books, appendTitle("A"))
	<-s.holding
	x := startUpdate(books, appendTitle("x"))
	waitQueued(books, kid("1"), 2)
	same := startUpdate(books, func(b Book) (Book, error) { return b, ErrNoChange })
	waitQueued(books, kid("1"), 3)
	y := startUpdate(books, appendTitle("y"))
	waitQueued(books, kid("1"), 4)
	close(s.release)
	hangGuard(t, first, "the first Update")
	rx, rs, ry := hangGuard(t, x, "x"), hangGuard(t, same, "no change"), hangGuard(t, y, "y")
	if rx.err != nil || rs.err != nil || ry.err != nil {
		t.Fatal(rx.err, rs.err, ry.err)
	}
	if rx.b.Title != "Ax" || rx.b.Version != 2 || rs.b.Title != "Ax" || rs.b.Version != 2 || ry.b.Title != "Axy" || ry.b.Version != 3 {
		t.Errorf("copies %+v %+v %+v; want Ax v2, Ax v2 (no change), Axy v3", rx.b, rs.b, ry.b)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if want := []string{"0->1", "1->3"}; !slices.Equal(s.writes, want) {
		t.Errorf("writes %v, want %v: one version step per change made", s.writes, want)
	}
}

// Issue 11 ("a version number is not an identity") for items created by a
// writer that stores no write token — Java's DynamoDBMapper, an older
// ddbkit, a Table with WithWriteTokenAttribute(""), a raw PutItem — as in
// any mixed fleet. Update reads the item (v1, no token); before it writes,
// that writer deletes the item and creates it again at v1 (acknowledged).
// Update's pin for a token-less basis is attribute_not_exists(#wt), which
// the new incarnation satisfies too: the write computed from the first
// incarnation replaces the second's content (owner "other", jobs [O]).
// Update's doc: every write is pinned to the item read "so that it cannot
// land on another incarnation of the item".
func TestUpdateTokenlessIncarnations(t *testing.T) {
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "tokless", "id", types.ScalarAttributeTypeS, "", "")
	hc := &fakeDB{backend: c}
	tb, err := NewTable[queuedJob](NewMapper(hc), name)
	if err != nil {
		t.Fatal(err)
	}
	java, _ := NewTable[queuedJob](NewMapper(c, WithWriteTokenAttribute("")), name)
	ctx := t.Context()
	if _, err := java.Save(ctx, queuedJob{ID: "k", Owner: "java"}); err != nil {
		t.Fatal(err)
	}
	hc.afterOnce("GetItem", func() {
		if err := java.Delete(ctx, queuedJob{ID: "k"}, WithSaveBehavior(SaveClobber)); err != nil {
			t.Error(err)
		}
		if _, err := java.Save(ctx, queuedJob{ID: "k", Owner: "other", Jobs: []string{"O"}}); err != nil {
			t.Error(err)
		}
	})
	_, err = tb.Update(ctx, queuedJob{ID: "k"}, func(j queuedJob) (queuedJob, error) {
		j.Jobs = append(j.Jobs, "B")
		return j, nil
	})
	got, lerr := java.Load(ctx, queuedJob{ID: "k"}, ConsistentRead())
	if lerr != nil || got.Owner != "other" || !slices.Contains(got.Jobs, "O") {
		t.Fatalf("Update = %v; stored %+v, %v; want the re-created incarnation kept (owner other, jobs with O)", err, got, lerr)
	}
}

// diffDoc is a versioned type whose Saves the codec encodes straight into
// their values (Table.valueNames): its Updates write only what changed.
type diffDoc struct {
	ID      string            `dynamo:"id,hash"`
	Version int64             `dynamo:"v,version"`
	Name    string            `dynamo:"name"`
	Count   int               `dynamo:"count"`
	Note    string            `dynamo:"note,omitempty"`
	Ptr     *string           `dynamo:"ptr"`
	Tags    []string          `dynamo:"tags,stringset,omitempty"`
	Attrs   map[string]string `dynamo:"attrs"`
}

// updateActions resolves an UpdateItem's UpdateExpression into "SET name"
// and "REMOVE name" entries, sorted, and fails the test when the request
// carries a name or value no expression uses (DynamoDB refuses those).
func updateActions(t *testing.T, in *dynamodb.UpdateItemInput) []string {
	t.Helper()
	exprs := aws.ToString(in.UpdateExpression) + " " + aws.ToString(in.ConditionExpression)
	for ph := range in.ExpressionAttributeNames {
		if !regexp.MustCompile(regexp.QuoteMeta(ph) + `\b`).MatchString(exprs) {
			t.Errorf("name %s sent but unused in %q", ph, exprs)
		}
	}
	for ph := range in.ExpressionAttributeValues {
		if !regexp.MustCompile(regexp.QuoteMeta(ph) + `\b`).MatchString(exprs) {
			t.Errorf("value %s sent but unused in %q", ph, exprs)
		}
	}
	var out []string
	clauses := regexp.MustCompile(`(SET|REMOVE|ADD|DELETE) `)
	u := aws.ToString(in.UpdateExpression)
	verbs := clauses.FindAllStringSubmatch(u, -1)
	for i, body := range clauses.Split(u, -1)[1:] {
		for _, action := range strings.Split(body, ",") {
			path := strings.Fields(action)[0]
			out = append(out, verbs[i][1]+" "+in.ExpressionAttributeNames[path])
		}
	}
	slices.Sort(out)
	return out
}

// An Update of an item the Table knows as stored writes only the
// attributes its function changed (SET) or emptied (REMOVE), with the
// version and the write token; the basis condition pins the stored item to
// the one the function saw, so the rest is as the function left it. The
// item stored afterwards is the one Update returned, attributes the type
// does not model kept. (A pointer field is written whenever it holds a
// value, and removed whenever it is nil: the codec compares values of the
// plain kinds only.)
func TestUpdateWritesOnlyWhatChanged(t *testing.T) {
	db := (&fakeDB{}).table("docs", "id", "")
	tb, err := NewTable[diffDoc](NewMapper(db), "docs")
	if err != nil {
		t.Fatal(err)
	}
	if tb.valueNames == nil {
		t.Fatal("diffDoc is not encoded into values: the test checks nothing")
	}
	ctx := t.Context()
	p := "p"
	if _, err := tb.Save(ctx, diffDoc{ID: "k", Name: "n", Count: 1, Note: "x", Ptr: &p, Tags: []string{"a"}, Attrs: map[string]string{"a": "1"}}); err != nil {
		t.Fatal(err)
	}
	key := map[string]types.AttributeValue{"id": str("k")}
	db.item("docs", key)["extra"] = str("unmodeled")
	steps := []struct {
		name string
		fn   func(d diffDoc) diffDoc
		want []string
	}{
		{"a number", func(d diffDoc) diffDoc { d.Count++; return d }, []string{"SET count", "SET ddbkit_wt", "SET ptr", "SET v"}},
		{"nothing", func(d diffDoc) diffDoc { return d }, []string{"SET ddbkit_wt", "SET ptr", "SET v"}},
		{"emptied and set", func(d diffDoc) diffDoc { d.Note, d.Ptr, d.Name = "", nil, "m"; return d },
			[]string{"REMOVE note", "REMOVE ptr", "SET ddbkit_wt", "SET name", "SET v"}},
		{"a set and a map", func(d diffDoc) diffDoc {
			d.Tags = append(d.Tags, "b")
			d.Attrs = map[string]string{"a": "1", "b": "2"}
			return d
		}, []string{"REMOVE ptr", "SET attrs", "SET ddbkit_wt", "SET tags", "SET v"}},
		{"set back", func(d diffDoc) diffDoc { d.Note = "y"; d.Ptr = &p; return d }, []string{"SET ddbkit_wt", "SET note", "SET ptr", "SET v"}},
		{"a map changed in place", func(d diffDoc) diffDoc { d.Attrs["a"] = "3"; return d }, []string{"SET attrs", "SET ddbkit_wt", "SET ptr", "SET v"}},
	}
	for _, st := range steps {
		n := len(db.upds())
		got, err := tb.Update(ctx, diffDoc{ID: "k"}, func(d diffDoc) (diffDoc, error) { return st.fn(d), nil })
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		upds := db.upds()
		if len(upds) != n+1 {
			t.Fatalf("%s: %d UpdateItems, want 1 (the Table remembers the item it wrote)", st.name, len(upds)-n)
		}
		if acts := updateActions(t, upds[n]); !slices.Equal(acts, st.want) {
			t.Errorf("%s: wrote %q, want %q", st.name, acts, st.want)
		}
		stored := db.item("docs", key)
		want, err := tb.encodeUnchecked(&got)
		if err != nil {
			t.Fatal(err)
		}
		want["extra"], want["ddbkit_wt"] = str("unmodeled"), stored["ddbkit_wt"]
		maps.DeleteFunc(want, func(_ string, v types.AttributeValue) bool { return isNull(v) }) // NULLs are removed
		if !reflect.DeepEqual(stored, want) {
			t.Errorf("%s: stored %s\nwant the item returned %s", st.name, fmtItem(stored), fmtItem(want))
		}
	}

	// Another writer leaves the item in a state this library never writes:
	// no write token, the version NULL, an attribute NULL. The Update that
	// reads it writes its changes under a condition on every attribute the
	// type models, and the item stored is the one it returned.
	db.put("docs", map[string]types.AttributeValue{"id": str("k"), "v": &types.AttributeValueMemberNULL{Value: true},
		"name": str("foreign"), "count": n("7"), "note": &types.AttributeValueMemberNULL{Value: true}})
	tb2, err := NewTable[diffDoc](NewMapper(db), "docs") // remembers nothing
	if err != nil {
		t.Fatal(err)
	}
	got, err := tb2.Update(ctx, diffDoc{ID: "k"}, func(d diffDoc) (diffDoc, error) { d.Count++; return d, nil })
	if err != nil || got.Count != 8 || got.Name != "foreign" || got.Version != 1 {
		t.Fatalf("Update over a foreign item = %+v, %v; want count 8, name foreign, version 1", got, err)
	}
	if acts := updateActions(t, db.upds()[len(db.upds())-1]); slices.Contains(acts, "SET name") || !slices.Contains(acts, "SET count") {
		t.Errorf("over a foreign item: wrote %q, want count and not the name it left", acts)
	}
	stored := db.item("docs", key)
	want, err := tb2.encodeUnchecked(&got)
	if err != nil {
		t.Fatal(err)
	}
	want["ddbkit_wt"] = stored["ddbkit_wt"]
	maps.DeleteFunc(want, func(_ string, v types.AttributeValue) bool { return isNull(v) })
	if !reflect.DeepEqual(stored, want) {
		t.Errorf("over a foreign item: stored %s\nwant the item returned %s", fmtItem(stored), fmtItem(want))
	}
}

// On DynamoDB Local, random Updates through two Tables (two processes: each
// one's writes make the other's remembered item stale, so its next Update
// conflicts and runs again on the item the conflict carries), each
// changing, emptying or keeping random attributes, with raw writes of an
// attribute the type does not model in between, always leave stored the
// item the last Update returned, and the unmodeled attribute as last
// written. Some of the writes leave attributes unwritten: the test checks
// the writes of changes.
func TestUpdateOfChangesStoresWhatUpdateReturned(t *testing.T) {
	c := dynamotest.Client(t)
	name := createdTable[diffDoc](t, c).name
	rec := &fakeDB{backend: c}
	tables := []*Table[diffDoc]{newTestTable[diffDoc](t, rec, name), newTestTable[diffDoc](t, c, name)}
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(27, 1))
	pick := func(vals ...string) string { return vals[rng.IntN(len(vals))] }
	change := func(d diffDoc) diffDoc {
		for f := range 6 {
			if rng.IntN(3) > 0 {
				continue // kept
			}
			switch f {
			case 0:
				d.Name = pick("", "a", "b", "ü")
			case 1:
				d.Count = rng.IntN(3) - 1
			case 2:
				d.Note = pick("", "x", "y")
			case 3:
				d.Ptr = nil
				if rng.IntN(2) == 0 {
					d.Ptr = aws.String(pick("", "p", "q"))
				}
			case 4:
				d.Tags = nil
				for _, e := range []string{"a", "b", "c"} {
					if rng.IntN(2) == 0 {
						d.Tags = append(d.Tags, e)
					}
				}
			case 5:
				switch rng.IntN(3) {
				case 0:
					d.Attrs = nil
				case 1:
					d.Attrs = map[string]string{}
				default:
					d.Attrs = map[string]string{pick("a", "b"): pick("1", "2")}
				}
			}
		}
		return d
	}
	key := map[string]types.AttributeValue{"id": str("k")}
	extra := types.AttributeValue(nil)
	var last diffDoc
	for step := range 160 {
		if rng.IntN(6) == 0 {
			extra = str(pick("e1", "e2", "e3"))
			if _, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &name, Key: key,
				UpdateExpression: aws.String("SET extra = :e"), ExpressionAttributeValues: map[string]types.AttributeValue{":e": extra}}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		tb := tables[rng.IntN(2)]
		got, err := tb.Update(ctx, diffDoc{ID: "k"}, func(d diffDoc) (diffDoc, error) { return change(d), nil })
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if got.Version != last.Version+1 {
			t.Fatalf("step %d: version %d after %d", step, got.Version, last.Version)
		}
		last = got
		out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: &name, Key: key, ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		want, err := tb.encodeUnchecked(&got)
		if err != nil {
			t.Fatal(err)
		}
		maps.DeleteFunc(want, func(_ string, v types.AttributeValue) bool { return isNull(v) })
		want["ddbkit_wt"] = out.Item["ddbkit_wt"]
		if extra != nil {
			want["extra"] = extra
		}
		if !av.Equal(&types.AttributeValueMemberM{Value: out.Item}, &types.AttributeValueMemberM{Value: want}) {
			t.Fatalf("step %d: stored %s\nwant what Update returned %s", step, fmtItem(out.Item), fmtItem(want))
		}
	}
	partial := 0
	for _, in := range rec.upds() {
		if len(updateActions(t, in)) < 8 { // 6 attributes, the version, the token
			partial++
		}
	}
	if partial == 0 {
		t.Error("no write left an attribute unwritten: the test checks nothing")
	}
}
