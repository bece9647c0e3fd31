package dynamo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
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

// An Update of a key the Table wrote last with an UpdateItem encodes its
// item into the item it remembers (basis.own: no map made), which then
// holds what is stored (a NULL where the stored item lacks the attribute),
// from write to write; a map the Table did not
// make for an UpdateItem is never written into: an item read (the first
// Update's, a conflict's), nor the item a SavePut sent — the client's map
// stays as sent, and the next write is made in a map of its own.
func TestUpdateEncodesIntoOnlyItsOwnItem(t *testing.T) {
	db := (&fakeDB{}).table("Items", "id", "")
	tb := newTestTable[readBackItem](t, db, "Items")
	other := newTestTable[readBackItem](t, db, "Items") // a writer the first Table does not know of
	ctx := context.Background()
	key := readBackItem{ID: "k"}
	gk := kid("k")
	remembered := func(when string) (map[string]types.AttributeValue, bool) {
		t.Helper()
		waitQuiet(tb, gk)
		e, ok := tb.gate.State(gk)
		if !ok || !e.Cached {
			t.Fatalf("%s: the key's item is not remembered", when)
		}
		stored := db.item("Items", map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "k"}})
		noNulls := func(m map[string]types.AttributeValue) map[string]types.AttributeValue {
			m = maps.Clone(m)
			maps.DeleteFunc(m, func(_ string, v types.AttributeValue) bool { return isNull(v) })
			return m
		}
		if !reflect.DeepEqual(noNulls(e.Item), noNulls(stored)) { // a NULL reads as absent (UpdateItem stores none)
			t.Fatalf("%s: remembered %s, stored %s", when, itemText(e.Item), itemText(stored))
		}
		return e.Item, e.Own
	}
	same := func(a, b map[string]types.AttributeValue) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	step := func(cur readBackItem) (readBackItem, error) {
		cur.N++
		cur.Tags = append(cur.Tags, string(rune('a'+cur.N)))
		return cur, nil
	}
	update := func(opts ...WriteOption) {
		t.Helper()
		if _, err := tb.Update(ctx, key, step, opts...); err != nil {
			t.Fatal(err)
		}
	}
	update() // reads the (absent) item, writes a map of its own
	first, own := remembered("first Update")
	if !own {
		t.Fatal("the item the first Update encoded for its UpdateItem is not its own")
	}
	update()
	if second, _ := remembered("second Update"); !same(first, second) {
		t.Error("the second Update made a map: want its item encoded into the one it remembers")
	}
	if _, err := other.Update(ctx, key, step); err != nil { // the remembered item is stale now
		t.Fatal(err)
	}
	update() // conflicts, computed again from the conflict's item
	third, own := remembered("Update after a conflict")
	if same(first, third) || !own {
		t.Errorf("after a conflict: same map %v, own %v; want a new map of its own", same(first, third), own)
	}
	update(WithSaveBehavior(SavePut))
	put, own := remembered("SavePut")
	sent := db.puts()[len(db.puts())-1].Item
	if !same(put, sent) || own {
		t.Fatalf("SavePut: remembers the item it sent %v, own %v; want the sent item, not its own", same(put, sent), own)
	}
	was := itemText(sent)
	update()
	if now := itemText(sent); now != was {
		t.Errorf("the next Update wrote into the item a PutItem sent:\nsent %s\nnow  %s", was, now)
	}
	if last, _ := remembered("Update after SavePut"); same(last, sent) {
		t.Error("the Update after a SavePut encoded into the item the PutItem sent")
	}
}

// itemText shows item's attributes in name order, each value with its
// address: an attribute replaced shows, even by an equal value.
func itemText(item map[string]types.AttributeValue) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(item)) {
		fmt.Fprintf(&b, "%s=%p%+v; ", k, item[k], item[k])
	}
	return b.String()
}
