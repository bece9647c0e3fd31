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
