package dynamo

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// readBackItem is a type whose values an Update remembers as read back
// (Table.readBack): strings, numbers, a time, a string set, a string map,
// and fields the item does not store.
type readBackItem struct {
	ID      string            `dynamo:"id,hash"`
	Version int64             `dynamo:"version,version"`
	N       int               `dynamo:"n"`
	At      time.Time         `dynamo:"at"`
	Tags    []string          `dynamo:"tags,stringset"`
	Attrs   map[string]string `dynamo:"attrs"`
	Note    string            `dynamo:"-"`
	hidden  int
}

// An Update of a key the Table wrote last gives its function the item as
// decoding the stored item would (fields the item does not store zero),
// sharing nothing with what an earlier Update returned or what the
// function changed in place: a function that changes its input's set and
// map in place and fails changes neither the next function's input nor an
// earlier caller's value; a caller changing the value Update returned
// changes neither the next input. For a struct T and a pointer T.
func TestUpdateFunctionGetsItsOwnCopy(t *testing.T) {
	t.Run("struct", func(t *testing.T) {
		checkOwnCopy(t, func(v *readBackItem) *readBackItem { return v }, func(p *readBackItem) readBackItem { return *p })
	})
	t.Run("pointer", func(t *testing.T) {
		checkOwnCopy(t, func(v **readBackItem) *readBackItem { return *v }, func(p *readBackItem) *readBackItem { return p })
	})
}

func checkOwnCopy[T any](t *testing.T, get func(*T) *readBackItem, make func(*readBackItem) T) {
	c := (&fakeDB{}).table("Items", "id", "")
	tb := newTestTable[T](t, c, "Items")
	if !tb.readsBack {
		t.Fatal("readBackItem is not read back: the test checks nothing")
	}
	ctx := context.Background()
	key := make(&readBackItem{ID: "k"})
	at := time.Date(2026, 11, 27, 4, 0, 0, 123, time.UTC)
	first, err := tb.Update(ctx, key, func(cur T) (T, error) {
		p := get(&cur)
		q := *p
		q.N, q.At, q.Tags, q.Attrs, q.Note, q.hidden = 1, at, []string{"a", "b"}, map[string]string{"k": "v"}, "note", 7
		return make(&q), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := readBackItem{ID: "k", Version: 1, N: 1, At: at, Tags: []string{"a", "b"}, Attrs: map[string]string{"k": "v"}}
	boom := errors.New("boom")
	// The function changes its input in place and fails: nothing written.
	_, err = tb.Update(ctx, key, func(cur T) (T, error) {
		p := get(&cur)
		if !reflect.DeepEqual(*p, want) {
			t.Errorf("second function got %+v, want %+v (as decoded)", *p, want)
		}
		p.Tags[0], p.Attrs["k"], p.Attrs["x"] = "X", "Y", "Z"
		return cur, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update: %v, want boom", err)
	}
	if f := get(&first); f.Tags[0] != "a" || f.Attrs["k"] != "v" || len(f.Attrs) != 1 || f.Note != "note" || f.hidden != 7 {
		t.Errorf("the first caller's value changed: %+v", *f)
	}
	// Now the function changes its input in place and writes it.
	third, err := tb.Update(ctx, key, func(cur T) (T, error) {
		p := get(&cur)
		if !reflect.DeepEqual(*p, want) {
			t.Errorf("third function got %+v, want %+v (the failed function's changes are not stored)", *p, want)
		}
		p.Tags[0], p.Attrs["k"], p.N = "X", "Y", 2
		return cur, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want = readBackItem{ID: "k", Version: 2, N: 2, At: at, Tags: []string{"X", "b"}, Attrs: map[string]string{"k": "Y"}}
	if len(c.gets()) != 2 {
		t.Errorf("%d reads, want 2 (the first Update's, and the check of the failed function's item)", len(c.gets()))
	}
	// The caller changes what Update returned.
	tp := get(&third)
	tp.Tags[1], tp.Attrs["k"], tp.Attrs["c"] = "CALLER", "CALLER", "CALLER"
	loaded, err := tb.Load(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*get(&loaded), want) {
		t.Fatalf("stored %+v, want %+v", *get(&loaded), want)
	}
	_, err = tb.Update(ctx, key, func(cur T) (T, error) {
		if p := get(&cur); !reflect.DeepEqual(*p, want) || slices.Contains(p.Tags, "CALLER") {
			t.Errorf("fourth function got %+v, want %+v (as stored)", *p, want)
		}
		return cur, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// An Update's request reuses the key map it computed for the item's key
// only when the encoded item holds exactly those key attributes — the same
// types and text, so the request is byte for byte the one with the key
// picked from the item — never for numbers, whose spelling may differ.
func TestUpdateReusesKeyOnlyWhenItemHoldsIt(t *testing.T) {
	tb := newTestTable[readBackItem](t, &fakeDB{noStore: true}, "Items")
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	key := map[string]types.AttributeValue{"id": s("k")}
	for _, c := range []struct {
		key, item map[string]types.AttributeValue
		want      bool
	}{
		{key, map[string]types.AttributeValue{"id": s("k"), "n": n("1")}, true},
		{nil, map[string]types.AttributeValue{"id": s("k")}, false},
		{key, map[string]types.AttributeValue{"id": s("K")}, false},
		{key, map[string]types.AttributeValue{"id": &types.AttributeValueMemberB{Value: []byte("k")}}, false},
		{key, map[string]types.AttributeValue{"n": n("1")}, false},
		{map[string]types.AttributeValue{"id": n("1")}, map[string]types.AttributeValue{"id": n("1")}, false},
		{map[string]types.AttributeValue{"id": s("k"), "x": s("k")}, map[string]types.AttributeValue{"id": s("k")}, false},
	} {
		if got := tb.reusesKey(c.key, c.item); got != c.want {
			t.Errorf("reusesKey(%v, %v) = %v, want %v", c.key, c.item, got, c.want)
		}
	}
	bin := newTestTable[struct {
		ID []byte `dynamo:"id,hash"`
		R  string `dynamo:"r,range"`
	}](t, &fakeDB{noStore: true}, "Bin")
	bk := map[string]types.AttributeValue{"id": &types.AttributeValueMemberB{Value: []byte{1}}, "r": s("a")}
	if !bin.reusesKey(bk, map[string]types.AttributeValue{"id": &types.AttributeValueMemberB{Value: []byte{1}}, "r": s("a")}) ||
		bin.reusesKey(bk, map[string]types.AttributeValue{"id": &types.AttributeValueMemberB{Value: []byte{2}}, "r": s("a")}) ||
		bin.reusesKey(bk, map[string]types.AttributeValue{"id": &types.AttributeValueMemberB{Value: []byte{1}}, "r": s("b")}) {
		t.Error("reusesKey of a binary hash key and a range key: want true only for the same bytes and text")
	}
}
