package dynamo

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestUpdateRetriesWithConflictItem(t *testing.T) {
	// The first write conflicts; the conflict carries version 7 with title
	// "X". Update must call fn with that item, without another read.
	c := &stubClient{}
	c.onGet = func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return &dynamodb.GetItemOutput{Item: map[string]types.AttributeValue{"ISBN": str("1"), "title": str("A"), "version": n("6")}}, nil
	}
	c.onUpd = func(in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		if len(c.upds) == 1 {
			return nil, ccf(map[string]types.AttributeValue{"ISBN": str("1"), "title": str("X"), "version": n("7")})
		}
		return &dynamodb.UpdateItemOutput{}, nil
	}
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
	if len(c.gets) != 1 {
		t.Errorf("%d reads, want 1 (the conflict carries the item)", len(c.gets))
	}
	if saved.Title != "X+" || saved.Version != 8 {
		t.Errorf("saved = %+v, want X+ at version 8", saved)
	}
	if got := c.upds[1].ExpressionAttributeValues[":v0"].(*types.AttributeValueMemberN).Value; got != "7" {
		t.Errorf("second write held %s, want 7", got)
	}
}

func TestUpdateCreatesMissingItem(t *testing.T) {
	c := &stubClient{onGet: func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) { return &dynamodb.GetItemOutput{}, nil }}
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
}

func TestUpdateStops(t *testing.T) {
	var writes int
	conflict := func(*dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		writes++ // someone else always wrote once more
		return nil, ccf(map[string]types.AttributeValue{"ISBN": str("1"), "version": n(itoa(int64(writes) + 10))})
	}
	missing := func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) { return &dynamodb.GetItemOutput{}, nil }
	id := func(b Book) (Book, error) { return b, nil }
	ctx := context.Background()

	c := &stubClient{onGet: missing, onUpd: conflict}
	_, err := newBooks(t, c, WithRetry(RetryPolicy{MaxAttempts: 3, BackoffBase: time.Nanosecond, BackoffMax: time.Nanosecond})).Update(ctx, Book{ISBN: "1"}, id)
	if !errors.Is(err, ErrVersionConflict) || !strings.Contains(err.Error(), "after 3 attempts") || len(c.upds) != 3 {
		t.Errorf("bounded attempts: %v after %d writes", err, len(c.upds))
	}

	boom := errors.New("boom")
	c = &stubClient{onGet: missing}
	_, err = newBooks(t, c).Update(ctx, Book{ISBN: "1"}, func(Book) (Book, error) { return Book{}, boom })
	if !errors.Is(err, boom) || len(c.upds) != 0 {
		t.Errorf("fn error: %v after %d writes", err, len(c.upds))
	}

	c = &stubClient{onGet: missing}
	_, err = newBooks(t, c).Update(ctx, Book{ISBN: "1"}, func(b Book) (Book, error) { b.ISBN = "2"; return b, nil })
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "changed the key") {
		t.Errorf("key change: %v", err)
	}

	cctx, cancel := context.WithCancel(ctx)
	c = &stubClient{onGet: missing, onUpd: func(in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		cancel()
		return conflict(in)
	}}
	_, err = newBooks(t, c, WithRetry(RetryPolicy{BackoffBase: time.Hour, BackoffMax: time.Hour})).Update(cctx, Book{ISBN: "1"}, id)
	if !errors.Is(err, context.Canceled) || len(c.upds) != 1 {
		t.Errorf("cancelled: %v after %d writes", err, len(c.upds))
	}

	c = &stubClient{onGet: missing, onUpd: func(*dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		return nil, ccf(map[string]types.AttributeValue{"ISBN": str("1"), "version": n("0")})
	}}
	c.onGet = func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		item, _ := attributevalue.MarshalMapWithOptions(Book{ISBN: "1", Version: 4}, func(o *attributevalue.EncoderOptions) { o.TagKey = "dynamo" })
		return &dynamodb.GetItemOutput{Item: item}, nil
	}
	c.onUpd = func(*dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		// The item Update read, unchanged: the If condition failed on it.
		item, _ := attributevalue.MarshalMapWithOptions(Book{ISBN: "1", Version: 4}, func(o *attributevalue.EncoderOptions) { o.TagKey = "dynamo" })
		return nil, ccf(item)
	}
	_, err = newBooks(t, c).Update(ctx, Book{ISBN: "1"}, id)
	if !errors.Is(err, ErrConditionFailed) || len(c.upds) != 1 {
		t.Errorf("failed If is not retried: %v after %d writes", err, len(c.upds))
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
	c := &stubClient{}
	c.onGet = func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
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
	if got.V != 4 || len(c.upds)+len(c.puts) != 1 {
		t.Fatalf("Update = %+v after %d writes, want version 4 after one write", got, len(c.upds)+len(c.puts))
	}
}
