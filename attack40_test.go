package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// attackKind is what one attacking Update call does.
type attackKind int

const (
	akPlain    attackKind = iota // appends its token
	akPut                        // appends its token, SavePut
	akIf                         // appends its token, with an If: written alone
	akCancel                     // appends its token, its ctx ends in its function
	akErr                        // returns an error
	akPanic                      // panics
	akNoChange                   // returns ErrNoChange
	akKinds
)

// attackCall is the record of one call: its token and how it ended.
type attackCall struct {
	tok      string
	kind     attackKind
	err      error
	panicked bool
	got      Book
}

// attackRun has workers goroutines Update book 1 through tables (two
// Tables on one table name), each call of a kind drawn by seed, while the
// fake loses the responses of some writes. Every change appends its token
// to the title and to the authors set.
func attackRun(t *testing.T, seed uint64, workers, each int, lost []int) ([]attackCall, *fakeDB) {
	db := (&fakeDB{}).table("Books", "ISBN", "")
	putBook(db, "", "1")
	for _, n := range lost {
		db.lose("UpdateItem", n, errors.New("connection reset after the write"))
	}
	tables := []*Table[Book]{newBooks(t, db), newBooks(t, db)}
	calls := make([][]attackCall, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			for i := range each {
				c := attackCall{tok: fmt.Sprintf("<%d.%d>", w, i), kind: attackKind(r.IntN(int(akKinds)))}
				attackOne(tables[r.IntN(len(tables))], &c)
				calls[w] = append(calls[w], c)
			}
		}()
	}
	wg.Wait()
	return slices.Concat(calls...), db
}

// attackOne makes c's call, checks the copy it got and then scribbles
// over the copy's slice and pointer, in place: a copy aliased with
// another caller's, the stored item's or the gate's shows the scribbles.
func attackOne(books *Table[Book], c *attackCall) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var opts []WriteOption
	switch c.kind {
	case akPut:
		opts = append(opts, WithSaveBehavior(SavePut))
	case akIf:
		opts = append(opts, If(expression.AttributeExists(expression.Name("ISBN"))))
	}
	fn := func(b Book) (Book, error) {
		switch c.kind {
		case akErr:
			return b, errors.New("attack: no")
		case akPanic:
			panic("attack: panic " + c.tok)
		case akNoChange:
			return b, ErrNoChange
		case akCancel:
			cancel()
		}
		b.Title += c.tok
		b.Authors = append(b.Authors, c.tok)
		note := c.tok
		b.Note = &note
		return b, nil
	}
	defer func() {
		if p := recover(); p != nil {
			c.panicked = true
		}
	}()
	c.got, c.err = books.Update(ctx, Book{ISBN: "1"}, fn, opts...)
	got := c.got
	c.got.Authors = slices.Clone(got.Authors)
	if got.Note != nil {
		note := *got.Note
		c.got.Note = &note
		*got.Note = "scribbled"
	}
	for i := range got.Authors {
		got.Authors[i] = "scribbled"
	}
}

// checkAttack checks the calls against what docs/mapper.md promises and
// the item stored: each change applied at most once, exactly once when its
// call succeeded, never when it ended with an error that is not
// ErrUnknownOutcome; the version one past the first per change; each copy
// holds its own change and as many as its version says.
func checkAttack(t *testing.T, calls []attackCall, db *fakeDB) {
	t.Helper()
	stored := db.item("Books", book1)
	title := stored["title"].(*types.AttributeValueMemberS).Value
	var authors []string
	if ss, ok := stored["authors"].(*types.AttributeValueMemberSS); ok {
		authors = ss.Value
	}
	if strings.Contains(title, "scribbled") || slices.Contains(authors, "scribbled") {
		t.Errorf("stored item %v holds a caller's scribbles over its copy", stored)
	}
	if note, ok := stored["note"].(*types.AttributeValueMemberS); ok && note.Value == "scribbled" {
		t.Errorf("stored note is a caller's scribble")
	}
	applied := 0
	for _, c := range calls {
		n := strings.Count(title, c.tok)
		applied += n
		inSet := slices.Contains(authors, c.tok)
		if (n == 1) != inSet {
			t.Errorf("%s: %d times in the title, in the authors %v", c.tok, n, inSet)
		}
		switch {
		case n > 1:
			t.Errorf("%s (kind %d, err %v) applied %d times", c.tok, c.kind, c.err, n)
		case c.panicked:
			if c.kind != akPanic {
				t.Errorf("%s (kind %d) panicked", c.tok, c.kind)
			}
			if n != 0 {
				t.Errorf("%s panicked yet applied", c.tok)
			}
		case c.kind == akErr || c.kind == akPanic:
			if c.err == nil || n != 0 {
				t.Errorf("%s (kind %d): err %v, applied %d", c.tok, c.kind, c.err, n)
			}
		case c.kind == akNoChange:
			if c.err != nil {
				t.Errorf("%s ErrNoChange: err %v", c.tok, c.err)
			}
		case c.err == nil:
			checkAttackCopy(t, c, n)
		case errors.Is(c.err, ErrUnknownOutcome):
		case n != 0:
			t.Errorf("%s (kind %d) applied, yet its call failed without ErrUnknownOutcome: %v", c.tok, c.kind, c.err)
		}
	}
	v := stored["version"].(*types.AttributeValueMemberN).Value
	if want := fmt.Sprint(1 + applied); v != want {
		t.Errorf("version %s, want %s: one per change applied (%d)", v, want, applied)
	}
}

// checkAttackCopy checks the copy a successful call got.
func checkAttackCopy(t *testing.T, c attackCall, n int) {
	t.Helper()
	b := c.got
	if n != 1 {
		t.Errorf("%s (kind %d) succeeded, applied %d times", c.tok, c.kind, n)
	}
	if !strings.HasSuffix(b.Title, c.tok) {
		t.Errorf("%s: copy's title %q does not end with its own change", c.tok, b.Title)
	}
	if b.Note == nil || *b.Note != c.tok {
		t.Errorf("%s: copy's note %v, want its own", c.tok, b.Note)
	}
	toks := strings.Count(b.Title, "<")
	if int64(toks) != b.Version-1 {
		t.Errorf("%s: copy's version %d after %d changes (title %q)", c.tok, b.Version, toks, b.Title)
	}
	if len(b.Authors) != toks || !slices.Contains(b.Authors, c.tok) || slices.Contains(b.Authors, "scribbled") {
		t.Errorf("%s: copy's authors %v, title %q", c.tok, b.Authors, b.Title)
	}
}

// Updates of one key from many goroutines through two Tables on one
// table name, of every kind at once — plain, SavePut, with an If, whose
// ctx ends in their function, failing, panicking, ErrNoChange — while
// some responses are lost: each change is applied at most once (exactly
// once when its call succeeds), the version advances by one per change,
// and no copy handed out is aliased with another's or the stored item.
func TestAttack40MixedUpdatesOfOneKey(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			calls, db := attackRun(t, seed, 8, 30, []int{3, 17, 40})
			checkAttack(t, calls, db)
			kinds := map[string]int{}
			for _, c := range calls {
				switch {
				case c.panicked:
					kinds["panicked"]++
				case errors.Is(c.err, ErrUnknownOutcome):
					kinds["unknown"]++
				case c.err != nil:
					kinds["error"]++
				default:
					kinds["ok"]++
				}
			}
			t.Logf("%v; %d writes", kinds, len(db.upds())+len(db.puts()))
		})
	}
}

// tinyVer has a version that holds up to 127.
type tinyVer struct {
	ID    string `dynamo:"id,hash"`
	Title string `dynamo:"title"`
	V     int8   `dynamo:"v,version"`
}

// Updates of one key queued behind each other when the version is near
// the largest its type holds: the stored version never passes 127 nor
// wraps, it advances by one per change applied, a call that succeeded
// applied its change once and one that failed (not ErrUnknownOutcome)
// applied none.
func TestAttack40UpdatesNearTheLargestVersion(t *testing.T) {
	db := (&fakeDB{}).table("Tiny", "id", "")
	db.put("Tiny", map[string]types.AttributeValue{"id": str("1"), "title": str(""), "v": n("118")})
	tb, err := NewTable[tinyVer](NewMapper(db), "Tiny")
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 6, 4
	type res struct {
		tok string
		got tinyVer
		err error
	}
	out := make(chan res, workers*each)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				tok := fmt.Sprintf("<%d.%d>", w, i)
				got, err := tb.Update(context.Background(), tinyVer{ID: "1"}, func(c tinyVer) (tinyVer, error) {
					c.Title += tok
					return c, nil
				})
				out <- res{tok, got, err}
			}
		}()
	}
	wg.Wait()
	close(out)
	stored := db.item("Tiny", map[string]types.AttributeValue{"id": str("1")})
	title := stored["title"].(*types.AttributeValueMemberS).Value
	applied, failed := 0, 0
	for r := range out {
		k := strings.Count(title, r.tok)
		applied += k
		switch {
		case r.err == nil:
			if k != 1 || !strings.HasSuffix(r.got.Title, r.tok) || int(r.got.V) != 118+strings.Count(r.got.Title, "<") {
				t.Errorf("%s succeeded: applied %d, copy %+v", r.tok, k, r.got)
			}
		case errors.Is(r.err, ErrUnknownOutcome):
			t.Errorf("%s: %v; nothing was lost", r.tok, r.err)
		default:
			failed++
			if k != 0 {
				t.Errorf("%s failed (%v) yet applied", r.tok, r.err)
			}
		}
	}
	v := stored["v"].(*types.AttributeValueMemberN).Value
	if want := fmt.Sprint(118 + applied); v != want {
		t.Errorf("version %s, want %s (%d applied)", v, want, applied)
	}
	if applied != 127-118 {
		t.Errorf("%d changes applied, want %d: every version up to the largest taken", applied, 127-118)
	}
	t.Logf("%d applied, %d failed; %d writes", applied, failed, len(db.upds()))
}

// A Save of a Loaded copy, through the Table whose Updates of the same key
// are in flight, is caught by the version check or applied once: each
// change (Update's or Save's) at most once, once when its call succeeded,
// and the version advanced by one per change.
func TestAttack40SaveBesideUpdatesOfOneKey(t *testing.T) {
	db := (&fakeDB{}).table("Books", "ISBN", "")
	putBook(db, "", "1")
	books := newBooks(t, db)
	const workers, each = 6, 25
	calls := make([][]attackCall, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				c := attackCall{tok: fmt.Sprintf("<%d.%d>", w, i)}
				if w == 0 {
					b, err := books.Load(context.Background(), Book{ISBN: "1"})
					if err == nil {
						b.Title += c.tok
						b.Authors = append(b.Authors, c.tok)
						note := c.tok
						b.Note = &note
						c.got, err = books.Save(context.Background(), b)
					}
					c.err = err
					if err != nil && !errors.Is(err, ErrVersionConflict) {
						t.Errorf("Save: %v", err)
					}
				} else {
					attackOne(books, &c)
				}
				calls[w] = append(calls[w], c)
			}
		}()
	}
	wg.Wait()
	all := slices.Concat(calls...)
	checkAttack(t, all, db)
	saved := 0
	for _, c := range calls[0] {
		if c.err == nil {
			saved++
		}
	}
	t.Logf("%d of %d Saves went through", saved, each)
}

// An Update after a Delete through the same Table, of the item that Table
// remembers from its last Update, starts from the absent item: MustExist
// fails with ErrNotFound, writing nothing, and a plain Update creates the
// item afresh (the remembered title gone, version 1).
func TestAttack40UpdateAfterDeleteForgetsTheRememberedItem(t *testing.T) {
	db := (&fakeDB{}).table("Books", "ISBN", "")
	putBook(db, "old", "1")
	books := newBooks(t, db)
	ctx := context.Background()
	a, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle("A"))
	if err != nil {
		t.Fatal(err)
	}
	if err := books.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle("B"), MustExist()); !errors.Is(err, ErrNotFound) {
		t.Errorf("Update with MustExist after Delete: %v, want ErrNotFound", err)
	}
	if it := db.item("Books", book1); it != nil {
		t.Fatalf("stored %v after a failed MustExist Update", it)
	}
	got, err := books.Update(ctx, Book{ISBN: "1"}, appendTitle("C"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "C" || got.Version != 1 || storedTitle(db) != "C" {
		t.Errorf("got %+v, stored title %q; want title C, version 1", got, storedTitle(db))
	}
}
