package dynamo

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Load reads the item with the key of the value it is given and returns it
// decoded: eventually consistent unless ConsistentRead is passed; a missing
// item is ErrNotFound naming the table and the key; a value whose key is
// empty is refused with ErrInvalidInput before any request.
func TestLoadReadsTheKeyAsked(t *testing.T) {
	db := (&fakeDB{}).table("Books", "ISBN", "")
	db.put("Books", map[string]types.AttributeValue{"ISBN": str("1"), "title": str("Dune"), "version": n("3")})
	books := newBooks(t, db)
	ctx := context.Background()

	got, err := books.Load(ctx, Book{ISBN: "1", Title: "ignored"})
	if err != nil || got.ISBN != "1" || got.Title != "Dune" || got.Version != 3 {
		t.Fatalf("Load = %+v, %v; want the stored item at version 3", got, err)
	}
	if gets := db.gets(); len(gets) != 1 || aws.ToBool(gets[0].ConsistentRead) || aws.ToString(gets[0].TableName) != "Books" {
		t.Fatalf("Load sent %d GetItems; want one, eventually consistent, of table Books", len(gets))
	}
	if _, err := books.Load(ctx, Book{ISBN: "1"}, ConsistentRead()); err != nil || !aws.ToBool(db.gets()[1].ConsistentRead) {
		t.Errorf("Load with ConsistentRead: %v; want a strongly consistent GetItem", err)
	}

	_, err = books.Load(ctx, Book{ISBN: "2"})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "Books") || !strings.Contains(err.Error(), `"2"`) {
		t.Errorf("Load of a missing item = %v; want ErrNotFound naming table Books and key \"2\"", err)
	}

	sent := db.count("GetItem")
	if _, err := books.Load(ctx, Book{}); !errors.Is(err, ErrInvalidInput) || db.count("GetItem") != sent {
		t.Errorf("Load of an empty key = %v after %d requests; want ErrInvalidInput and none", err, db.count("GetItem")-sent)
	}
}
