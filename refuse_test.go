package dynamo

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo/internal/refusal"
)

// refusalCall is a call taking WriteOptions, made on a store holding
// storedBook (Book "1" at version 2) with the options given (and, for
// the guarded variants, a GuardedBy check of Book "2" that holds).
type refusalCall struct {
	c    refusal.Call
	call func(ctx context.Context, b *Table[Book], opts []WriteOption) error
}

// refusalCalls are every call that takes WriteOptions.
var refusalCalls = []refusalCall{
	{refusal.Save, func(ctx context.Context, b *Table[Book], opts []WriteOption) error {
		_, err := b.Save(ctx, refusalItem, opts...)
		return err
	}},
	{refusal.SaveGuarded, func(ctx context.Context, b *Table[Book], opts []WriteOption) error {
		_, err := b.Save(ctx, refusalItem, append(opts, refusalGuard(b))...)
		return err
	}},
	{refusal.Update, func(ctx context.Context, b *Table[Book], opts []WriteOption) error {
		_, err := b.Update(ctx, Book{ISBN: "1"}, appendTitle("x"), opts...)
		return err
	}},
	{refusal.UpdateGuarded, func(ctx context.Context, b *Table[Book], opts []WriteOption) error {
		_, err := b.Update(ctx, Book{ISBN: "1"}, appendTitle("x"), append(opts, refusalGuard(b))...)
		return err
	}},
	{refusal.Add, func(ctx context.Context, b *Table[Book], opts []WriteOption) error {
		_, err := b.Add(ctx, Book{ISBN: "1"}, AddToSet("authors", []string{"x"}), opts...)
		return err
	}},
	{refusal.Delete, func(ctx context.Context, b *Table[Book], opts []WriteOption) error {
		return b.Delete(ctx, refusalItem, opts...)
	}},
	{refusal.TxSave, func(ctx context.Context, b *Table[Book], opts []WriteOption) error {
		return b.m.WriteTx(ctx, []TxOp{b.TxSave(refusalItem, opts...)})
	}},
	{refusal.TxDelete, func(ctx context.Context, b *Table[Book], opts []WriteOption) error {
		return b.m.WriteTx(ctx, []TxOp{b.TxDelete(refusalItem, opts...)})
	}},
	{refusal.TxCheck, func(ctx context.Context, b *Table[Book], opts []WriteOption) error {
		// With an If of its own, so that SaveClobber leaves something to check.
		opts = append([]WriteOption{If(expression.Name("title").AttributeExists())}, opts...)
		return b.m.WriteTx(ctx, []TxOp{b.TxCheck(refusalItem, opts...), b.TxSave(Book{ISBN: "3"})})
	}},
	{refusal.TxnSave, func(ctx context.Context, b *Table[Book], opts []WriteOption) error {
		return b.m.Transact(ctx, func(tx *Tx) error {
			_, err := b.In(tx).Save(refusalItem, opts...)
			return err
		})
	}},
	{refusal.TxnDelete, func(ctx context.Context, b *Table[Book], opts []WriteOption) error {
		return b.m.Transact(ctx, func(tx *Tx) error { return b.In(tx).Delete(refusalItem, opts...) })
	}},
	{refusal.BatchSave, func(ctx context.Context, b *Table[Book], opts []WriteOption) error {
		return b.BatchSave(ctx, []Book{refusalItem}, batchOpts(opts)...)
	}},
	{refusal.BatchDelete, func(ctx context.Context, b *Table[Book], opts []WriteOption) error {
		return b.BatchDelete(ctx, []Book{refusalItem}, batchOpts(opts)...)
	}},
}

// refusalItem is Book "1" as stored by storedBook, at version 2.
var refusalItem = Book{ISBN: "1", Title: "U", Authors: []string{"a"}, Version: 2}

// refusalGuard is a check that holds on the store of the test: Book "2"
// is not stored.
func refusalGuard(b *Table[Book]) WriteOption { return GuardedBy(b.TxCheck(Book{ISBN: "2"})) }

func batchOpts(opts []WriteOption) []BatchWriteOption {
	out := make([]BatchWriteOption, len(opts))
	for i, o := range opts {
		out[i] = o
	}
	return out
}

// refusalOption is one WriteOption of a kind, and its name as an error
// names it.
type refusalOption struct {
	kind refusal.Kind
	name string
	opt  func(b *Table[Book]) WriteOption
}

var refusalOptions = []refusalOption{
	{refusal.SkipNulls, "WithSaveBehavior(SaveUpdateSkipNulls)", func(*Table[Book]) WriteOption { return WithSaveBehavior(SaveUpdateSkipNulls) }},
	{refusal.Put, "WithSaveBehavior(SavePut)", func(*Table[Book]) WriteOption { return WithSaveBehavior(SavePut) }},
	{refusal.Clobber, "WithSaveBehavior(SaveClobber)", func(*Table[Book]) WriteOption { return WithSaveBehavior(SaveClobber) }},
	{refusal.AppendSet, "WithSaveBehavior(SaveAppendSet)", func(*Table[Book]) WriteOption { return WithSaveBehavior(SaveAppendSet) }},
	{refusal.BadBehavior, "WithSaveBehavior(SaveBehavior(42))", func(*Table[Book]) WriteOption { return WithSaveBehavior(42) }},
	{refusal.If, "If", func(*Table[Book]) WriteOption { return If(expression.Name("title").AttributeExists()) }},
	{refusal.MustExist, "MustExist", func(*Table[Book]) WriteOption { return MustExist() }},
	{refusal.GuardedBy, "GuardedBy", func(b *Table[Book]) WriteOption { return GuardedBy(b.TxCheck(Book{ISBN: "4"})) }},
	{refusal.ChangedFrom, "ChangedFrom", func(*Table[Book]) WriteOption { return ChangedFrom(storedBook()) }},
	{refusal.IdemKey, "IdempotencyKey", func(*Table[Book]) WriteOption { return IdempotencyKey("ev-1") }},
}

// Every call taking WriteOptions, given each kind of option alone, does
// what refusal.Rules says: refuses it with ErrInvalidInput naming the option,
// before any request is sent; or takes it and succeeds — sending, when it
// does nothing with the option, the requests it sends without it.
func TestWriteOptionsRefusedOrTaken(t *testing.T) {
	ctx := context.Background()
	run := func(c refusalCall, opt func(*Table[Book]) WriteOption) (*fakeDB, error) {
		db := (&fakeDB{}).table("Books", "ISBN", "")
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("Books"), Item: storedBook()}); err != nil {
			t.Fatal(err)
		}
		db.forget()
		b := newBooks(t, db)
		var opts []WriteOption
		if opt != nil {
			opts = append(opts, opt(b))
		}
		return db, c.call(ctx, b, opts)
	}
	for _, c := range refusalCalls {
		plain, plainErr := run(c, nil) // for the options it does nothing with
		for _, o := range refusalOptions {
			t.Run(refusal.CallNames[c.c].Doc+"/"+o.name, func(t *testing.T) {
				db, err := run(c, o.opt)
				rule := refusal.Rules[c.c][o.kind]
				switch {
				case rule.Refused != nil:
					if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), " with "+o.name) || !strings.Contains(err.Error(), rule.Refused.Why) {
						t.Errorf("err = %v; want ErrInvalidInput naming %s and saying %q", err, o.name, rule.Refused.Why)
					}
					if n := db.count(""); n != 0 {
						t.Errorf("refused after %d requests (%v); want none sent", n, db.ops())
					}
				case err != nil:
					t.Errorf("err = %v; want the option taken", err)
				case rule.Inert && (plainErr != nil || !slices.Equal(db.ops(), plain.ops())):
					t.Errorf("sent %v; without the option %v (%v)", db.ops(), plain.ops(), plainErr)
				}
			})
		}
	}
}

// The test above covers every call and every kind of option the table
// rules.
func TestWriteOptionsRefusedOrTakenCoversTheTable(t *testing.T) {
	calls := map[refusal.Call]bool{}
	for _, c := range refusalCalls {
		calls[c.c] = true
	}
	kinds := map[refusal.Kind]bool{}
	for _, o := range refusalOptions {
		kinds[o.kind] = true
	}
	if len(calls) != int(refusal.NumCalls) || len(kinds) != int(refusal.NumKinds) {
		t.Errorf("%d calls and %d kinds tested; the table has %d and %d", len(calls), len(kinds), refusal.NumCalls, refusal.NumKinds)
	}
}

// Options given together are each ruled as alone: of behaviours given
// twice the last counts, for a batch as for a single write (a batch given
// SavePut and then SaveClobber clobbers; given SaveClobber and then
// SavePut it is refused), and GuardedBy with no checks guards nothing, so
// that a batch and Add take it.
func TestWriteOptionsTogether(t *testing.T) {
	ctx := context.Background()
	db := (&fakeDB{}).table("Books", "ISBN", "")
	b := newBooks(t, db)
	if err := b.BatchSave(ctx, []Book{refusalItem}, WithSaveBehavior(SavePut), WithSaveBehavior(SaveClobber), GuardedBy()); err != nil {
		t.Errorf("BatchSave with SavePut, SaveClobber and GuardedBy(): %v", err)
	}
	if _, err := b.Add(ctx, Book{ISBN: "1"}, AddToSet("authors", []string{"x"}), GuardedBy()); err != nil {
		t.Errorf("Add with GuardedBy(): %v", err)
	}
	db.forget()
	err := b.BatchDelete(ctx, []Book{refusalItem}, WithSaveBehavior(SaveClobber), WithSaveBehavior(SavePut))
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "with WithSaveBehavior(SavePut):") {
		t.Errorf("BatchDelete with SaveClobber, SavePut: %v; want ErrInvalidInput naming SavePut", err)
	}
	if _, err := b.Save(ctx, refusalItem, WithSaveBehavior(SaveClobber), ChangedFrom(storedBook()), GuardedBy(b.TxCheck(Book{ISBN: "2"}))); !errors.Is(err, ErrInvalidInput) ||
		!strings.Contains(err.Error(), "Save with GuardedBy on table \"Books\" with WithSaveBehavior(SaveClobber):") {
		t.Errorf("Save with SaveClobber, ChangedFrom and GuardedBy: %v; want the first refusal, of SaveClobber", err)
	}
	if n := db.count(""); n != 0 {
		t.Errorf("%d requests sent by refused calls", n)
	}
}

// refusedGuards are GuardedBy checks a write can never send: a check given
// an option TxCheck refuses, a nil check, a write given as a check, and a
// check of the very item the write (of Book "1") writes.
func refusedGuards(b *Table[Book]) map[string]TxOp {
	return map[string]TxOp{
		"a check given SavePut":        b.TxCheck(Book{ISBN: "2"}, WithSaveBehavior(SavePut)),
		"a nil check":                  nil,
		"a save as a check":            b.TxSave(Book{ISBN: "2"}),
		"a check of the item written":  b.TxCheck(Book{ISBN: "1"}),
		"a check given ChangedFrom":    b.TxCheck(Book{ISBN: "2"}, ChangedFrom(storedBook())),
		"a check given a bad behavior": b.TxCheck(Book{ISBN: "2"}, WithSaveBehavior(42)),
	}
}

// Update refuses GuardedBy checks it could never send as it refuses its own
// options: with ErrInvalidInput, before its read (no request sent) and
// without calling its function — not after reading the item and running
// the function on it.
func TestUpdateRefusesBadGuardsBeforeReading(t *testing.T) {
	for name := range refusedGuards(newBooks(t, &fakeDB{})) {
		t.Run(name, func(t *testing.T) {
			db := (&fakeDB{}).table("Books", "ISBN", "").put("Books", storedBook())
			db.forget()
			b := newBooks(t, db)
			g := refusedGuards(b)[name]
			called := false
			_, err := b.Update(t.Context(), Book{ISBN: "1"}, func(c Book) (Book, error) {
				called = true
				return appendTitle("x")(c)
			}, GuardedBy(g))
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("Update = %v; want ErrInvalidInput", err)
			}
			if n := db.count(""); n != 0 || called {
				t.Errorf("refused after %d requests (%v), function called: %v; want nothing sent, no call", n, db.ops(), called)
			}
		})
	}
}

// Transact refuses GuardedBy checks given as its TxOption that it could
// never send before running its function (whose reads are requests), as
// WriteTx refuses them before sending. (A check of an item the function
// reads or writes is known only once it ran: refused at the commit.)
func TestTransactRefusesBadGuardsBeforeRunning(t *testing.T) {
	for name := range refusedGuards(newBooks(t, &fakeDB{})) {
		if name == "a check of the item written" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			db := (&fakeDB{}).table("Books", "ISBN", "").put("Books", storedBook())
			db.forget()
			b := newBooks(t, db)
			runs := 0
			err := b.m.Transact(t.Context(), func(tx *Tx) error {
				runs++
				c, err := b.In(tx).Load(Book{ISBN: "1"})
				if err != nil {
					return err
				}
				c.Title += "x"
				_, err = b.In(tx).Save(c)
				return err
			}, GuardedBy(refusedGuards(b)[name]))
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("Transact = %v; want ErrInvalidInput", err)
			}
			if n := db.count(""); n != 0 || runs != 0 {
				t.Errorf("refused after %d requests (%v) and %d runs; want nothing sent, no run", n, db.ops(), runs)
			}
		})
	}
}
