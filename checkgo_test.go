package dynamo

import (
	"context"
	"errors"
	"math/big"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

type node struct {
	ID   string `dynamo:"id,hash"`
	Next *node  `dynamo:"next"`
	Val  any    `dynamo:"val"`
}

type ptrLoop *ptrLoop

type loopy struct {
	ID string  `dynamo:"id,hash"`
	P  ptrLoop `dynamo:"p"`
	A  any     `dynamo:"a"`
	L  []any   `dynamo:"l"`
}

// Issue 12 item 3: values that refer to themselves, or nest deeper than
// DynamoDB's 32 levels, are an error, never a crash.
func TestCyclesAndDepthRefused(t *testing.T) {
	ctx := context.Background()
	c := silentDB()
	nodes, _ := NewTable[node](NewMapper(c), "N")
	loops, _ := NewTable[*loopy](NewMapper(c), "L")

	n := &node{ID: "a"}
	n.Next = n
	_, err := nodes.Save(ctx, *n)
	wantInvalid(t, "n.Next = n", err, "refers to itself", "Next")

	a, b := &node{ID: "a"}, &node{ID: "b"}
	a.Next, b.Next = b, a
	_, err = nodes.Save(ctx, *a)
	wantInvalid(t, "a → b → a", err, "refers to itself")

	m := map[string]any{}
	m["self"] = m
	_, err = nodes.Save(ctx, node{ID: "a", Val: m})
	wantInvalid(t, "map holding itself", err, "refers to itself", "Val")

	s := []any{nil}
	s[0] = s
	_, err = loops.Save(ctx, &loopy{ID: "a", L: s})
	wantInvalid(t, "slice holding itself", err, "refers to itself")

	var p ptrLoop
	p = &p
	_, err = loops.Save(ctx, &loopy{ID: "a", P: p})
	wantInvalid(t, "pointer to itself", err, "refers to itself")

	var x any
	x = &x
	_, err = loops.Save(ctx, &loopy{ID: "a", A: x})
	wantInvalid(t, "interface holding a pointer to itself", err, "refers to itself")

	// Depth: an attribute holds at most 31 maps or lists inside one another.
	deep := func(levels int) *node {
		var head *node
		for i := 0; i < levels; i++ {
			head = &node{ID: "x", Next: head}
		}
		return head
	}
	if _, err := nodes.Save(ctx, node{ID: "a", Next: deep(31)}); !errors.Is(err, errSent) {
		t.Errorf("31 levels: %v, want it sent", err)
	}
	_, err = nodes.Save(ctx, node{ID: "a", Next: deep(32)})
	wantInvalid(t, "32 levels", err, "deeper than DynamoDB's 32 levels")
	_, err = nodes.Save(ctx, node{ID: "a", Next: deep(100000)})
	wantInvalid(t, "100000 levels", err, "deeper than DynamoDB's 32 levels")
	var deepList any = "leaf"
	for i := 0; i < 40; i++ {
		deepList = []any{deepList}
	}
	_, err = nodes.Save(ctx, node{ID: "a", Val: deepList})
	wantInvalid(t, "40 nested lists", err, "deeper than")

	// A small value whose pointers branch and meet again encodes to 2^30
	// leaves: refused at once rather than encoded for hours.
	var dag any = "leaf"
	for i := 0; i < 30; i++ {
		dag = []any{dag, dag}
	}
	_, err = nodes.Save(ctx, node{ID: "a", Val: dag})
	wantInvalid(t, "shared DAG", err, "more than", "400 KB")

	// Keys of types with custom encodings go through the encoder too.
	_, err = nodes.Load(ctx, *n)
	if !errors.Is(err, errSent) {
		t.Errorf("Load of a cyclic value's key: %v (only the key is encoded)", err)
	}
}

// walkDoc is a nested struct whose fields the checks of Go values must
// see as the codec does.
type walkDoc struct {
	walkExtra     // its Fn is hidden by the outer Fn: never encoded
	Fn        int `dynamo:"fn"`
	// Left out by `dynamodbav:"-"` (the empty dynamo tag is not read).
	Gone func() `dynamodbav:"-" dynamo:""`
	// Named "named" by dynamodbav.
	Named func() `dynamodbav:"named" dynamo:""`
	walkPromoted
}

type walkExtra struct {
	Fn func() `dynamo:"fn"`
}

type walkPromoted struct {
	Cb func() `dynamo:"cb"`
}

type walkItem struct {
	ID  string  `dynamo:"id,hash"`
	Doc walkDoc `dynamo:"doc"`
	Any any     `dynamo:"any"`
}

// The checks of a Go value before encoding (funcs, chans, cycles, text
// types lost in interfaces) look at the fields the codec encodes, named as
// it names them: a field left out (`dynamodbav:"-"` with an empty `dynamo`
// tag) or hidden by a shallower field of the same name is never refused,
// a field named by `dynamodbav` is refused under that name, and a promoted
// field of an embedded struct is checked.
func TestGoValueChecksSeeEncodedFields(t *testing.T) {
	ctx := context.Background()
	tb, err := NewTable[walkItem](NewMapper(silentDB()), "W")
	if err != nil {
		t.Fatal(err)
	}
	fn := func() {}
	// attributevalue (TagKey "dynamo") stores the outer fn, not the hidden
	// one, and nothing of the skipped field.
	hidden, err := attributevalue.NewEncoder(func(o *attributevalue.EncoderOptions) { o.TagKey = TagKey }).
		Encode(walkDoc{walkExtra: walkExtra{Fn: fn}, Fn: 1, Gone: fn})
	if m, ok := hidden.(*types.AttributeValueMemberM); err != nil || !ok || len(m.Value) != 1 || !reflect.DeepEqual(m.Value["fn"], n("1")) {
		t.Errorf("attributevalue encodes the doc as %#v (%v), want only fn: 1", hidden, err)
	}
	for what, doc := range map[string]walkDoc{
		"hidden func":  {walkExtra: walkExtra{Fn: fn}, Fn: 1},
		"skipped func": {Gone: fn},
	} {
		if _, err := tb.Save(ctx, walkItem{ID: "a", Doc: doc}); !errors.Is(err, errSent) {
			t.Errorf("%s (not encoded): %v, want it sent", what, err)
		}
	}
	_, err = tb.Save(ctx, walkItem{ID: "a", Doc: walkDoc{Named: fn}})
	wantInvalid(t, "func named by dynamodbav", err, `at .named holds a func()`)
	_, err = tb.Save(ctx, walkItem{ID: "a", Doc: walkDoc{walkPromoted: walkPromoted{Cb: fn}}})
	wantInvalid(t, "promoted func", err, `at .cb holds a func()`)

	// In an interface value: a big.Int in a field left out is not stored,
	// so it is not lost either.
	type skippedBig struct {
		X int
		N *big.Int `dynamo:"-"`
	}
	if _, err := tb.Save(ctx, walkItem{ID: "a", Any: skippedBig{X: 1, N: big.NewInt(1)}}); !errors.Is(err, errSent) {
		t.Errorf("big.Int in a skipped field in an interface: %v, want it sent", err)
	}
	type keptBig struct {
		X int
		N *big.Int
	}
	_, err = tb.Save(ctx, walkItem{ID: "a", Any: keptBig{X: 1, N: big.NewInt(1)}})
	wantInvalid(t, "big.Int in an interface", err, "big.Int in an interface value")
}
