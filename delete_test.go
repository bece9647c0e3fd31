package dynamo

import (
	"context"
	"errors"
	"testing"
)

// A nil option given to Delete is no option, as for every other call that
// takes options: the delete is sent with its version condition, no panic,
// and the fake store, evaluating that condition, deletes the item.
func TestDeleteNilOptionIsNoOption(t *testing.T) {
	c := (&fakeDB{}).table("Books", "ISBN", "")
	putBook(c, "t", "2")
	books := newBooks(t, c)
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("Delete(ctx, item, nil) panicked: %v", p)
			}
		}()
		err = books.Delete(context.Background(), Book{ISBN: "1", Version: 2}, nil)
	}()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.dels()) != 1 || c.dels()[0].ConditionExpression == nil {
		t.Fatalf("want one version-checked DeleteItem, got %d requests", len(c.dels()))
	}
	if item := c.item("Books", book1); item != nil {
		t.Errorf("stored %v after the delete of version 2", item)
	}
}

// A delete writes no attributes, so of the save behaviours only SaveClobber
// (no version check) means anything to Delete, TxDelete and TxCheck; the
// others are refused with ErrInvalidInput before anything is sent, never
// silently ignored.
func TestDeleteRefusesWriteBehaviours(t *testing.T) {
	ctx := context.Background()
	for _, b := range []SaveBehavior{SavePut, SaveUpdateSkipNulls, SaveAppendSet, SaveBehavior(42)} {
		c := &fakeDB{noStore: true}
		books := newBooks(t, c)
		item := Book{ISBN: "1", Version: 2}
		if err := books.Delete(ctx, item, WithSaveBehavior(b)); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("Delete with %v: got %v, want ErrInvalidInput", b, err)
		}
		if err := books.m.WriteTx(ctx, []TxOp{books.TxDelete(item, WithSaveBehavior(b))}); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("TxDelete with %v: got %v, want ErrInvalidInput", b, err)
		}
		if err := books.m.WriteTx(ctx, []TxOp{books.TxCheck(item, WithSaveBehavior(b))}); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("TxCheck with %v: got %v, want ErrInvalidInput", b, err)
		}
		if len(c.dels()) != 0 || len(c.txWrites()) != 0 {
			t.Errorf("%v: %d deletes and %d transactions sent, want none", b, len(c.dels()), len(c.txWrites()))
		}
	}
	// SaveClobber still deletes without a condition: an item stored at
	// another version (5) is deleted all the same.
	c := (&fakeDB{}).table("Books", "ISBN", "")
	putBook(c, "t", "5")
	if err := newBooks(t, c).Delete(ctx, Book{ISBN: "1", Version: 2}, WithSaveBehavior(SaveClobber)); err != nil {
		t.Fatal(err)
	}
	if len(c.dels()) != 1 || c.dels()[0].ConditionExpression != nil {
		t.Fatalf("SaveClobber: want one unconditional DeleteItem, got %+v", c.dels())
	}
	if item := c.item("Books", book1); item != nil {
		t.Errorf("SaveClobber: stored %v after the delete", item)
	}
}
