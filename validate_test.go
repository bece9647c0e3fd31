package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

var errSent = errors.New("fakedb: a request was sent")

// silentDB is the fake DynamoDB that answers every request with errSent
// and counts them (count("")): a test of bad input expects no request.
func silentDB() *fakeDB {
	db := &fakeDB{}
	db.fail("", 0, errSent)
	return db
}

type utf8Item struct {
	ID    string            `dynamo:"id,hash"`
	V     int64             `dynamo:"v,version"`
	Name  string            `dynamo:"name"`
	Tags  []string          `dynamo:"tags,set"`
	SS    []string          `dynamo:"ss,stringset"`
	M     map[string]string `dynamo:"m"`
	Any   map[string]any    `dynamo:"any"`
	Inner *utf8Inner        `dynamo:"inner"`
}

type utf8Inner struct {
	Note string
}

// wantInvalid fails unless err wraps ErrInvalidInput and mentions every
// word of want.
func wantInvalid(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if !errors.Is(err, ErrInvalidInput) {
		t.Errorf("%s: err = %v, want ErrInvalidInput", what, err)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not mention %q", what, err, w)
		}
	}
}

// Issue 12 item 1: invalid UTF-8 in keys and anywhere in an item is refused
// in every call, before anything is sent.
func TestInvalidUTF8Refused(t *testing.T) {
	ctx := context.Background()
	c := silentDB()
	m := NewMapper(c)
	tb, err := NewTable[utf8Item](m, "T")
	if err != nil {
		t.Fatal(err)
	}
	bad := utf8Item{ID: "k\xff"}
	okKey := utf8Item{ID: "k"}

	_, err = tb.Save(ctx, bad)
	wantInvalid(t, "Save bad key", err, "UTF-8", "ID", "[]byte")
	_, err = tb.Load(ctx, utf8Item{ID: "k\xfe"})
	wantInvalid(t, "Load bad key", err, "UTF-8", "ID")
	err = tb.Delete(ctx, utf8Item{ID: "k\xfe", V: 1})
	wantInvalid(t, "Delete bad key", err, "UTF-8", "ID")
	_, err = tb.Update(ctx, utf8Item{ID: "k\xfe"}, func(c utf8Item) (utf8Item, error) { return c, nil })
	wantInvalid(t, "Update bad key", err, "UTF-8", "ID")
	_, err = tb.BatchLoad(ctx, []utf8Item{okKey, bad})
	wantInvalid(t, "BatchLoad bad key", err, "UTF-8", "keys[1]")
	err = tb.BatchDelete(ctx, []utf8Item{bad}, Clobber())
	wantInvalid(t, "BatchDelete bad key", err, "UTF-8")
	err = tb.BatchSave(ctx, []utf8Item{bad}, Clobber())
	wantInvalid(t, "BatchSave bad key", err, "UTF-8")
	for _, op := range []TxOp{tb.TxSave(bad), tb.TxDelete(bad), tb.TxCheck(utf8Item{ID: "k\xff", V: 2})} {
		err = m.WriteTx(ctx, []TxOp{tb.TxSave(utf8Item{ID: "other"}), op})
		wantInvalid(t, "WriteTx bad key", err, "UTF-8")
	}
	err = m.ReadTx(ctx, []TxGetOp{tb.TxGet(bad)})
	wantInvalid(t, "ReadTx bad key", err, "UTF-8")

	values := map[string]utf8Item{
		"string":        {ID: "k", Name: "a\xffb"},
		"set element":   {ID: "k", Tags: []string{"ok", "\xfe"}},
		"stringset":     {ID: "k", SS: []string{"\xfe"}},
		"map key":       {ID: "k", M: map[string]string{"\xff": "v"}},
		"map value":     {ID: "k", M: map[string]string{"k": "\xff"}},
		"nested in any": {ID: "k", Any: map[string]any{"a": []any{"x", map[string]any{"b": "\xc3"}}}},
		"nested struct": {ID: "k", Inner: &utf8Inner{Note: "\xed\xa0\x80"}}, // a surrogate
	}
	fields := map[string]string{"string": "Name", "set element": "Tags", "stringset": "SS", "map key": "M",
		"map value": "M", "nested in any": "Any", "nested struct": "Inner"}
	for name, it := range values {
		_, err := tb.Save(ctx, it)
		wantInvalid(t, "Save "+name, err, "UTF-8", fields[name])
		_, err = tb.Save(ctx, it, WithSaveBehavior(SavePut))
		wantInvalid(t, "SavePut "+name, err, "UTF-8")
		err = tb.BatchSave(ctx, []utf8Item{it}, Clobber())
		wantInvalid(t, "BatchSave "+name, err, "UTF-8")
		err = m.WriteTx(ctx, []TxOp{tb.TxSave(it)})
		wantInvalid(t, "TxSave "+name, err, "UTF-8")
	}
	// Values in If conditions: the SDK would change them as well.
	_, err = tb.Save(ctx, okKey, If(expression.Name("name").Equal(expression.Value("\xff"))))
	wantInvalid(t, "Save with If", err, "UTF-8")
	err = tb.Delete(ctx, okKey, If(expression.Name("n\xffame").AttributeExists()))
	wantInvalid(t, "Delete with If name", err, "UTF-8")

	if n := c.count(""); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}

	// Update: the item fn returns is checked like Save's.
	st := &fakeDB{noStore: true, onGet: func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return &dynamodb.GetItemOutput{Item: map[string]types.AttributeValue{
			"id": &types.AttributeValueMemberS{Value: "k"}, "v": &types.AttributeValueMemberN{Value: "1"}}}, nil
	}}
	ut, _ := NewTable[utf8Item](NewMapper(st), "T")
	for name, it := range values {
		_, err := ut.Update(ctx, okKey, func(cur utf8Item) (utf8Item, error) { it.V = cur.V; return it, nil })
		wantInvalid(t, "Update to "+name, err, "UTF-8", fields[name])
	}
	if len(st.puts())+len(st.upds()) != 0 {
		t.Errorf("Update sent %d writes", len(st.puts())+len(st.upds()))
	}
}

type setItem struct {
	ID  string        `dynamo:"id,hash"`
	F   []float64     `dynamo:"f,set"`
	N   []json.Number `dynamo:"n,numberset"`
	P   []*string     `dynamo:"p,set"`
	PS  []*string     `dynamo:"ps,stringset"`
	B   [][]byte      `dynamo:"b"`
	Any any           `dynamo:"any"`
	Fn  func()        `dynamo:"fn"`
	Ch  chan int      `dynamo:"ch"`
	U   []struct{}    `dynamo:"u"`
}

// Issue 12 item 6: sets compare numbers by value, nil set elements and
// func or chan values are errors naming the field.
func TestSetsAndOddValues(t *testing.T) {
	ctx := context.Background()
	st := &fakeDB{noStore: true}
	tb, _ := NewTable[setItem](NewMapper(st), "S")

	negZero := math.Copysign(0, -1)
	if _, err := tb.Save(ctx, setItem{ID: "a", F: []float64{0, negZero, 1.5, 1.5}, N: []json.Number{"1", "1.0", "100", "1e2", "-0", "0"}},
		WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	item := st.puts()[len(st.puts())-1].Item
	if got := item["f"].(*types.AttributeValueMemberNS).Value; len(got) != 2 {
		t.Errorf("f = %q, want 0 (or -0) and 1.5 once each", got)
	}
	if got := item["n"].(*types.AttributeValueMemberNS).Value; len(got) != 3 {
		t.Errorf("n = %q, want 1, 100 and 0 once each", got)
	}

	x := "x"
	_, err := tb.Save(ctx, setItem{ID: "a", P: []*string{&x, nil}})
	wantInvalid(t, "nil in a set", err, "nil element", "P", "[1]")
	_, err = tb.Save(ctx, setItem{ID: "a", PS: []*string{nil}})
	wantInvalid(t, "nil in a stringset", err, "nil element", "PS")
	_, err = tb.Save(ctx, setItem{ID: "a", B: [][]byte{[]byte("x"), nil}})
	wantInvalid(t, "nil in a binary set", err, "nil element", "B")

	_, err = tb.Save(ctx, setItem{ID: "a", Any: map[string]any{"f": func() {}}})
	wantInvalid(t, "func in any", err, "func()", "Any", "dynamo:\"-\"")
	_, err = tb.Save(ctx, setItem{ID: "a", Any: []any{1, make(chan int)}})
	wantInvalid(t, "chan in any", err, "chan int", "Any")
	_, err = tb.Save(ctx, setItem{ID: "a", Any: unsafe.Pointer(&x)})
	wantInvalid(t, "unsafe.Pointer in any", err, "unsafe.Pointer")
	_, err = tb.Save(ctx, setItem{ID: "a", Fn: func() {}})
	wantInvalid(t, "func field", err, "Fn")
	if _, err := tb.Save(ctx, setItem{ID: "a"}); err != nil {
		t.Errorf("nil func and chan fields (dropped, and nil when loaded): %v", err)
	}

	// Numbers DynamoDB refuses: the encoder writes NaN and ±Inf as such.
	for _, v := range []any{math.NaN(), math.Inf(1), math.Inf(-1), json.Number("1e126"), json.Number("1e-131"),
		json.Number("123456789012345678901234567890123456789"), map[string]any{"x": []any{math.NaN()}}} {
		_, err = tb.Save(ctx, setItem{ID: "a", Any: v})
		wantInvalid(t, fmt.Sprintf("number %v", v), err, "Any", "38 significant digits")
	}
	_, err = tb.Save(ctx, setItem{ID: "a", F: []float64{1, math.Inf(1)}})
	wantInvalid(t, "Inf in a set", err, "F", "[1]")
}

// The number rules (what DynamoDB refuses, canonical forms, sizes) are
// tested in internal/av.

// BenchmarkEncodeChecks measures what the front-door checks add to a Save of
// the benchmark item: step=encode is attributevalue's encoding, step=checks
// the encoded-item check plus the exact size (the Go walk is skipped for
// this type: it holds no interfaces, funcs or recursion).
func BenchmarkEncodeChecks(b *testing.B) {
	tb := newBenchTable(b, nil)
	item := benchItem()
	b.Run("step=encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tb.m.enc.Encode(&item); err != nil {
				b.Fatal(err)
			}
		}
	})
	enc, err := tb.encodeUnchecked(&item)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("step=checks", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := tb.p.S.CheckEncoded(tb.name, enc); err != nil {
				b.Fatal(err)
			}
			_ = tb.writtenSize(enc, 4, nil, false)
		}
	})
}
