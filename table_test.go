package dynamo

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Current hands back the item a failed write found, without another read:
// the stored item for a conflict, ErrNotFound for an absent item, an error
// wrapping err for an error that carries no item, ErrInvalidInput for nil.
func TestCurrentIsTheItemTheFailureFound(t *testing.T) {
	db := (&fakeDB{}).table("Books", "ISBN", "")
	db.put("Books", map[string]types.AttributeValue{"ISBN": str("1"), "title": str("stored"), "version": n("4")})
	books := newBooks(t, db)
	ctx := context.Background()

	_, err := books.Save(ctx, Book{ISBN: "1", Title: "mine", Version: 2})
	got, cerr := books.Current(err)
	if !errors.Is(err, ErrVersionConflict) || cerr != nil || got.Title != "stored" || got.Version != 4 {
		t.Fatalf("Current(%v) = %+v, %v; want the stored item at version 4", err, got, cerr)
	}
	if n := db.count("GetItem"); n != 0 {
		t.Errorf("Current sent %d GetItems; want none", n)
	}

	err = books.Delete(ctx, Book{ISBN: "2", Version: 1})
	if _, cerr := books.Current(err); !errors.Is(err, ErrVersionConflict) || !errors.Is(cerr, ErrNotFound) {
		t.Errorf("Current after a delete of an absent item (%v) = %v; want ErrNotFound", err, cerr)
	}

	other := errors.New("some other failure")
	if _, cerr := books.Current(other); !errors.Is(cerr, other) {
		t.Errorf("Current(an error without an item) = %v; want it wrapped", cerr)
	}
	if _, cerr := books.Current(nil); !errors.Is(cerr, ErrInvalidInput) {
		t.Errorf("Current(nil) = %v; want ErrInvalidInput", cerr)
	}
}

// keptDoc is an item whose doc attribute is of a type that keeps the value
// its marshaler returns and its unmarshaler is given (sharedAV).
type keptDoc struct {
	ID  string   `dynamo:"id,hash"`
	Doc sharedAV `dynamo:"doc"`
	N   int      `dynamo:"n"`
	V   int64    `dynamo:"v,version"`
}

// docX is the string at "x" of d's doc map ("" when none).
func docX(d keptDoc) string {
	m, _ := d.Doc.av.(*types.AttributeValueMemberM)
	if m == nil {
		return ""
	}
	s, _ := m.Value["x"].(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}

// The values of a type's own marshaler and unmarshaler share nothing with
// what the mapper keeps between calls (a key's last item): a returned copy
// changed in place afterwards, or the value a function set changed in
// place after its Update, is not what the next Update's function is given,
// nor written by it.
func TestValuesOfOwnMarshalersShareNothingKept(t *testing.T) {
	tb, _ := idTable[keptDoc](t)
	ctx := t.Context()
	mine := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"x": &types.AttributeValueMemberS{Value: "old"}}}
	if _, err := tb.Save(ctx, keptDoc{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Update(ctx, keptDoc{ID: "a"}, func(cur keptDoc) (keptDoc, error) { cur.Doc.av = mine; return cur, nil }); err != nil {
		t.Fatal(err)
	}
	mine.Value["x"] = &types.AttributeValueMemberS{Value: "changed after the Update"}
	got, err := tb.Update(ctx, keptDoc{ID: "a"}, func(cur keptDoc) (keptDoc, error) {
		if x := docX(cur); x != "old" {
			t.Errorf("the function was given doc x %q, want old: the value set by the last Update, changed since", x)
		}
		cur.N++
		return cur, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got.Doc.av.(*types.AttributeValueMemberM).Value["x"] = &types.AttributeValueMemberS{Value: "changed in the returned copy"}
	if _, err := tb.Update(ctx, keptDoc{ID: "a"}, func(cur keptDoc) (keptDoc, error) {
		if x := docX(cur); x != "old" {
			t.Errorf("the function was given doc x %q, want old: the copy the last Update returned, changed since", x)
		}
		cur.N++
		return cur, nil
	}); err != nil {
		t.Fatal(err)
	}
	stored, err := tb.Load(ctx, keptDoc{ID: "a"}, ConsistentRead())
	if err != nil || docX(stored) != "old" || stored.N != 2 {
		t.Fatalf("stored %+v (doc x %q), %v; want doc x old, n 2", stored, docX(stored), err)
	}
}
