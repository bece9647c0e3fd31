package dynamo

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// storedBook is a Book as stored at version 2, with a write token and an
// attribute Book does not model.
func storedBook() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"ISBN": str("1"), "title": str("T"), "authors": &types.AttributeValueMemberSS{Value: []string{"a"}},
		"note": str("n"), "version": n("2"), "ddbkit_wt": &types.AttributeValueMemberB{Value: []byte("0123456789abcdef")},
		"extra": str("x"),
	}
}

// A Save with ChangedFrom sends only what the item changes from the item
// read — the SET of the attributes whose value differs, the REMOVE of those
// read holds and the item does not — with the version and the write token,
// under the version condition and the write token read (the incarnation);
// nothing else of the item read is named, and the item read is left as it
// was.
func TestChangedFromSendsOnlyTheChanges(t *testing.T) {
	for _, tc := range []struct {
		name   string
		item   Book
		read   func(map[string]types.AttributeValue)
		update string
		names  []string
		values []string
	}{
		{"one attribute changed", Book{ISBN: "1", Title: "U", Authors: []string{"a"}, Note: aws.String("n"), Version: 2}, nil,
			"SET #a1 = :a1, #a4 = :v1, #wt = :wt", []string{"#a1", "#a4", "#wt"}, []string{":a1", ":v0", ":v1", ":wt"}},
		{"one attribute removed", Book{ISBN: "1", Title: "T", Authors: []string{"a"}, Version: 2}, nil,
			"SET #a4 = :v1, #wt = :wt REMOVE #a3", []string{"#a3", "#a4", "#wt"}, []string{":v0", ":v1", ":wt"}},
		{"nothing changed", Book{ISBN: "1", Title: "T", Authors: []string{"a"}, Note: aws.String("n"), Version: 2}, nil,
			"SET #a4 = :v1, #wt = :wt", []string{"#a4", "#wt"}, []string{":v0", ":v1", ":wt"}},
		{"an attribute read absent, written", Book{ISBN: "1", Title: "T", Authors: []string{"a"}, Note: aws.String("n"), Version: 2},
			func(r map[string]types.AttributeValue) { delete(r, "title") },
			"SET #a1 = :a1, #a4 = :v1, #wt = :wt", []string{"#a1", "#a4", "#wt"}, []string{":a1", ":v0", ":v1", ":wt"}},
		{"a NULL read, absent written: left", Book{ISBN: "1", Title: "T", Authors: []string{"a"}, Version: 2},
			func(r map[string]types.AttributeValue) { r["note"] = &types.AttributeValueMemberNULL{Value: true} },
			"SET #a4 = :v1, #wt = :wt", []string{"#a4", "#wt"}, []string{":v0", ":v1", ":wt"}},
		{"a set of another type read: written", Book{ISBN: "1", Title: "T", Authors: []string{"a"}, Note: aws.String("n"), Version: 2},
			func(r map[string]types.AttributeValue) {
				r["authors"] = &types.AttributeValueMemberL{Value: []types.AttributeValue{str("a")}}
			},
			"SET #a2 = :a2, #a4 = :v1, #wt = :wt", []string{"#a2", "#a4", "#wt"}, []string{":a2", ":v0", ":v1", ":wt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeDB{noStore: true}
			read := storedBook()
			if tc.read != nil {
				tc.read(read)
			}
			before := maps.Clone(read)
			saved, err := newBooks(t, c).Save(context.Background(), tc.item, ChangedFrom(read))
			if err != nil {
				t.Fatal(err)
			}
			if saved.Version != 3 {
				t.Errorf("saved version %d, want 3", saved.Version)
			}
			if !reflect.DeepEqual(read, before) {
				t.Errorf("the item read was modified: %v", read)
			}
			in := c.upds()[0]
			if got := aws.ToString(in.UpdateExpression); got != tc.update {
				t.Errorf("update %q, want %q", got, tc.update)
			}
			if got := aws.ToString(in.ConditionExpression); got != "(#a4 = :v0) AND (#wt = :wh)" {
				t.Errorf("condition %q, want the version's and the token read's", got)
			}
			if got := sortedKeys(in.ExpressionAttributeNames); !reflect.DeepEqual(got, tc.names) {
				t.Errorf("names %v, want %v", got, tc.names)
			}
			want := append(slices.Clone(tc.values), ":wh")
			slices.Sort(want)
			if got := sortedKeys(in.ExpressionAttributeValues); !reflect.DeepEqual(got, want) {
				t.Errorf("values %v, want %v", got, want)
			}
		})
	}
}

// A write of the changes leaves what it does not change as stored — an
// attribute another writer changed without moving the version too, and the
// attributes the type does not model — and a lost answer to it is settled
// by its write token as any Save's: the call succeeds.
func TestChangedFromLeavesTheRestAsStored(t *testing.T) {
	db := (&fakeDB{}).table("Books", "ISBN", "")
	key := map[string]types.AttributeValue{"ISBN": str("1")}
	stored := storedBook()
	if _, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String("Books"), Item: stored}); err != nil {
		t.Fatal(err)
	}
	read := maps.Clone(stored)
	// Another writer changes the title without moving the version.
	db.item("Books", key)["title"] = str("foreign")
	books := newBooks(t, db)
	saved, err := books.Save(context.Background(), Book{ISBN: "1", Title: "T", Authors: []string{"a", "b"}, Note: aws.String("n"), Version: 2}, ChangedFrom(read))
	if err != nil || saved.Version != 3 {
		t.Fatalf("Save = %+v, %v; want version 3", saved, err)
	}
	got := db.item("Books", key)
	want := map[string]types.AttributeValue{"ISBN": str("1"), "title": str("foreign"), "authors": &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"note": str("n"), "version": n("3"), "ddbkit_wt": got["ddbkit_wt"], "extra": str("x")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stored %v\n want %v", got, want)
	}
	if reflect.DeepEqual(got["ddbkit_wt"], stored["ddbkit_wt"]) {
		t.Error("the write token was not written")
	}

	// The answer of the next write is lost after it was applied.
	read = maps.Clone(got)
	db.lose("UpdateItem", 0, errors.New("connection reset after the write"))
	saved, err = books.Save(context.Background(), Book{ISBN: "1", Title: "foreign", Authors: []string{"a", "b"}, Version: 3}, ChangedFrom(read))
	if err != nil || saved.Version != 4 {
		t.Fatalf("Save after a lost answer = %+v, %v; want version 4, settled by its token", saved, err)
	}
	if got := db.item("Books", key); got["note"] != nil || got["version"].(*types.AttributeValueMemberN).Value != "4" {
		t.Errorf("stored %v, want note removed at version 4", got)
	}
}

// ChangedFrom is refused, before anything is sent, wherever it cannot
// work: save behaviours other than SaveUpdate, a type without a version,
// an unsaved item, an item read of another key or version or none (a NULL
// version, one beyond int64), an item holding invalid UTF-8 even where the
// read holds the same bytes (the value shared with the read is still
// checked), and every call other than Save (Update, whether it changes
// nothing or creates the item, Delete, Add, transactions, GuardedBy,
// batches).
func TestChangedFromRefused(t *testing.T) {
	ctx := context.Background()
	item := Book{ISBN: "1", Title: "U", Version: 2}
	other := storedBook()
	other["ISBN"] = str("2")
	older := storedBook()
	older["version"] = n("1")
	noVersion := storedBook()
	delete(noVersion, "version")
	for _, tc := range []struct {
		name string
		want string // in the error
		call func(*Table[Book], *Table[unversionedItem]) error
	}{
		{"SavePut", "only SaveUpdate", func(b *Table[Book], _ *Table[unversionedItem]) error {
			_, err := b.Save(ctx, item, ChangedFrom(storedBook()), WithSaveBehavior(SavePut))
			return err
		}},
		{"SaveClobber", "only SaveUpdate", func(b *Table[Book], _ *Table[unversionedItem]) error {
			_, err := b.Save(ctx, item, WithSaveBehavior(SaveClobber), ChangedFrom(storedBook()))
			return err
		}},
		{"unversioned type", "no version attribute", func(_ *Table[Book], p *Table[unversionedItem]) error {
			_, err := p.Save(ctx, unversionedItem{ID: "1"}, ChangedFrom(map[string]types.AttributeValue{"id": str("1")}))
			return err
		}},
		{"nil read", "nil", func(b *Table[Book], _ *Table[unversionedItem]) error {
			_, err := b.Save(ctx, item, ChangedFrom(nil))
			return err
		}},
		{"unsaved item", "unsaved", func(b *Table[Book], _ *Table[unversionedItem]) error {
			_, err := b.Save(ctx, Book{ISBN: "1"}, ChangedFrom(storedBook()))
			return err
		}},
		{"another key", "another key", func(b *Table[Book], _ *Table[unversionedItem]) error {
			_, err := b.Save(ctx, item, ChangedFrom(other))
			return err
		}},
		{"another version", "holds version 1", func(b *Table[Book], _ *Table[unversionedItem]) error {
			_, err := b.Save(ctx, item, ChangedFrom(older))
			return err
		}},
		{"no version read", "holds no version", func(b *Table[Book], _ *Table[unversionedItem]) error {
			_, err := b.Save(ctx, item, ChangedFrom(noVersion))
			return err
		}},
		{"Update", "Update", func(b *Table[Book], _ *Table[unversionedItem]) error {
			_, err := b.Update(ctx, item, func(c Book) (Book, error) { c.Title = "U"; return c, nil }, ChangedFrom(storedBook()))
			return err
		}},
		{"an overflowing version read", "holds version 99999999999999999999", func(b *Table[Book], _ *Table[unversionedItem]) error {
			r := storedBook()
			r["version"] = n("99999999999999999999")
			_, err := b.Save(ctx, item, ChangedFrom(r))
			return err
		}},
		{"a NULL version read", "holds no version", func(b *Table[Book], _ *Table[unversionedItem]) error {
			r := storedBook()
			r["version"] = &types.AttributeValueMemberNULL{Value: true}
			_, err := b.Save(ctx, item, ChangedFrom(r))
			return err
		}},
		{"invalid UTF-8 shared with the read", "not valid UTF-8", func(b *Table[Book], _ *Table[unversionedItem]) error {
			r := storedBook()
			r["title"] = str("\xff")
			_, err := b.Save(ctx, Book{ISBN: "1", Title: "\xff", Authors: []string{"a"}, Version: 2}, ChangedFrom(r))
			return err
		}},
		{"Update changing nothing", "Update", func(b *Table[Book], _ *Table[unversionedItem]) error {
			_, err := b.Update(ctx, item, func(c Book) (Book, error) { return c, nil }, ChangedFrom(storedBook()))
			return err
		}},
		{"Update over an absent item", "Update", func(b *Table[Book], _ *Table[unversionedItem]) error {
			_, err := b.Update(ctx, Book{ISBN: "9"}, func(c Book) (Book, error) { c.Title = "U"; return c, nil }, ChangedFrom(storedBook()))
			return err
		}},
		{"Delete", "only Save", func(b *Table[Book], _ *Table[unversionedItem]) error {
			return b.Delete(ctx, item, ChangedFrom(storedBook()))
		}},
		{"Add", "only Save", func(b *Table[Book], _ *Table[unversionedItem]) error {
			_, err := b.Add(ctx, item, Increment("n", 1), ChangedFrom(storedBook()))
			return err
		}},
		{"TxSave", "transaction", func(b *Table[Book], _ *Table[unversionedItem]) error {
			return b.m.WriteTx(ctx, []TxOp{b.TxSave(item, ChangedFrom(storedBook()))})
		}},
		{"TxDelete", "only Save", func(b *Table[Book], _ *Table[unversionedItem]) error {
			return b.m.WriteTx(ctx, []TxOp{b.TxDelete(item, ChangedFrom(storedBook()))})
		}},
		{"GuardedBy", "transaction", func(b *Table[Book], _ *Table[unversionedItem]) error {
			_, err := b.Save(ctx, item, ChangedFrom(storedBook()), GuardedBy(b.TxCheck(Book{ISBN: "2", Version: 1})))
			return err
		}},
		{"BatchSave", "ChangedFrom", func(b *Table[Book], _ *Table[unversionedItem]) error {
			return b.BatchSave(ctx, []Book{item}, ChangedFrom(storedBook()))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := (&fakeDB{}).table("Books", "ISBN", "").table("Plain", "id", "")
			if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("Books"), Item: storedBook()}); err != nil {
				t.Fatal(err)
			}
			db.forget()
			plain, err := NewTable[unversionedItem](NewMapper(db), "Plain")
			if err != nil {
				t.Fatal(err)
			}
			err = tc.call(newBooks(t, db), plain)
			if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v; want ErrInvalidInput saying %q", err, tc.want)
			}
			if n := len(db.upds()) + len(sentOf[dynamodb.PutItemInput](db)) + len(sentOf[dynamodb.TransactWriteItemsInput](db)) + len(sentOf[dynamodb.DeleteItemInput](db)); n != 0 {
				t.Errorf("%d writes sent", n)
			}
		})
	}
}

// unversionedItem is a type without a version attribute.
type unversionedItem struct {
	ID   string `dynamo:"id,hash"`
	Name string `dynamo:"name"`
}

// A write of the changes is pinned to the incarnation read, not only to its
// version: version numbers start again at 1 when an item is deleted and
// created again, so over an item created again since it was read — whose
// write token differs from the one read, or is there where the read had
// none, or is gone where the read had one — the write is a version conflict
// carrying the stored item, and nothing is written (the old item's changes
// never land on the new one). An item read without a token is written
// while the stored one has none either, and a token of another type than
// the mapper's (another client's S) pins the write as a B token does.
func TestChangedFromRefusesAnotherIncarnation(t *testing.T) {
	noToken := func(m map[string]types.AttributeValue) { delete(m, "ddbkit_wt") }
	sToken := func(m map[string]types.AttributeValue) { m["ddbkit_wt"] = str("0123456789abcdef") }
	for _, tc := range []struct {
		name         string
		read, stored func(map[string]types.AttributeValue)
		conflict     bool
	}{
		{"another write token stored", nil, func(m map[string]types.AttributeValue) {
			m["ddbkit_wt"] = &types.AttributeValueMemberB{Value: []byte("fedcba9876543210")}
		}, true},
		{"a token stored, none read", noToken, nil, true},
		{"none stored, a token read", nil, noToken, true},
		{"none stored, none read", noToken, noToken, false},
		// Tokens of another client, of another type than the mapper's B.
		{"the same S token read and stored", sToken, sToken, false},
		{"an S token of the read token's bytes stored", nil, sToken, true},
		{"a NULL token stored", nil, func(m map[string]types.AttributeValue) {
			m["ddbkit_wt"] = &types.AttributeValueMemberNULL{Value: true}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := (&fakeDB{}).table("Books", "ISBN", "")
			key := map[string]types.AttributeValue{"ISBN": str("1")}
			read, stored := storedBook(), storedBook()
			stored["title"] = str("the new item's")
			for f, m := range map[*func(map[string]types.AttributeValue)]map[string]types.AttributeValue{&tc.read: read, &tc.stored: stored} {
				if *f != nil {
					(*f)(m)
				}
			}
			if _, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String("Books"), Item: maps.Clone(stored)}); err != nil {
				t.Fatal(err)
			}
			_, err := newBooks(t, db).Save(context.Background(), Book{ISBN: "1", Title: "T", Authors: []string{"a", "b"}, Note: aws.String("n"), Version: 2}, ChangedFrom(read))
			if !tc.conflict {
				if err != nil {
					t.Fatalf("Save = %v, want it written", err)
				}
				return
			}
			var ce *ConditionError
			if !errors.Is(err, ErrVersionConflict) || !errors.As(err, &ce) {
				t.Fatalf("Save = %v, want a version conflict", err)
			}
			if !reflect.DeepEqual(ce.Item, stored) {
				t.Errorf("the conflict carries %v, want the stored item %v", ce.Item, stored)
			}
			if !strings.Contains(err.Error(), "created again") {
				t.Errorf("error %q does not say the item was created again", err)
			}
			if got := db.item("Books", key); !reflect.DeepEqual(got, stored) {
				t.Errorf("stored %v, want it untouched: %v", got, stored)
			}
		})
	}
}

// TestChangedFromReadsAnySpellingOfTheVersion: a version read spelled as
// any number equal to the one held ("2.0", "2e0", "20e-1", "0.2e1") is
// that version — DynamoDB stores such a number as 2, and the version
// condition `version = 2` holds on it (checked on DynamoDB Local) — so
// ChangedFrom takes the read and the write is sent under the version
// condition. A spelling of another number (2.5, 3.0, 0.2e2) is refused as
// another version, naming it as read.
func TestChangedFromReadsAnySpellingOfTheVersion(t *testing.T) {
	for _, v := range []string{"2.0", "2.000", "2e0", "20e-1", "0.2e1", "+2", "002"} {
		c := &fakeDB{noStore: true}
		read := storedBook()
		read["version"] = n(v)
		saved, err := newBooks(t, c).Save(t.Context(), Book{ISBN: "1", Title: "U", Authors: []string{"a"}, Note: aws.String("n"), Version: 2}, ChangedFrom(read))
		if err != nil || saved.Version != 3 {
			t.Errorf("version read as %s: Save = version %d, %v; want version 3 (the read is version 2)", v, saved.Version, err)
			continue
		}
		if in := c.upds()[0]; aws.ToString(in.ConditionExpression) != "(#a4 = :v0) AND (#wt = :wh)" {
			t.Errorf("version read as %s: condition %q, want the version's and the token read's", v, aws.ToString(in.ConditionExpression))
		}
	}
	for _, v := range []string{"2.5", "3.0", "0.2e2", "2e-1"} {
		c := &fakeDB{noStore: true}
		read := storedBook()
		read["version"] = n(v)
		_, err := newBooks(t, c).Save(t.Context(), Book{ISBN: "1", Title: "U", Authors: []string{"a"}, Version: 2}, ChangedFrom(read))
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "version "+v) || len(c.upds()) != 0 {
			t.Errorf("version read as %s: %v, %d requests; want ErrInvalidInput naming version %s, nothing sent", v, err, len(c.upds()), v)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
