package dynamo

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	avs "github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/schema"
)

type fzNode struct {
	S    string         `dynamo:"s"`
	N    float64        `dynamo:"n"`
	Next *fzNode        `dynamo:"next"`
	A    any            `dynamo:"a"`
	M    map[string]any `dynamo:"m"`
	L    []*fzNode      `dynamo:"l"`
}

type FzEmbedded struct {
	E any `dynamo:"e"`
}

type fzItem struct {
	ID string `dynamo:"id,hash"`
	R  []byte `dynamo:"r,range"`
	V  int64  `dynamo:"v,version"`
	*FzEmbedded
	S    string         `dynamo:"s"`
	Set  []string       `dynamo:"set,set,omitempty"`
	NSet []float64      `dynamo:"nset,set,omitempty"`
	PSet []*string      `dynamo:"pset,set,omitempty"`
	SS   []string       `dynamo:"ss,stringset,omitempty"`
	BS   [][]byte       `dynamo:"bs,omitempty"`
	Node *fzNode        `dynamo:"node"`
	A    any            `dynamo:"a"`
	M    map[string]any `dynamo:"m"`
	F    func()         `dynamo:"f"`
}

// fzBuilder builds values from fuzz input: strings of raw bytes (often not
// UTF-8), special numbers, nested maps and lists, shared and cyclic
// pointers, maps and slices, funcs and chans.
type fzBuilder struct {
	data       []byte
	nodes      []*fzNode
	containers []any // maps and slices built so far, for references back
}

func (b *fzBuilder) byte() byte {
	if len(b.data) == 0 {
		return 0
	}
	c := b.data[0]
	b.data = b.data[1:]
	return c
}

// str returns a string of up to 11 bytes: raw input bytes (often not
// UTF-8) when the length byte has its high bit set, else letters.
func (b *fzBuilder) str() string {
	c := b.byte()
	n := min(int(c&0x7f%12), len(b.data))
	s := []byte(string(b.data[:n]))
	b.data = b.data[n:]
	if c&0x80 == 0 {
		for i := range s {
			s[i] = 'a' + s[i]%26
		}
	}
	return string(s)
}

var fzFloats = []float64{0, math.Copysign(0, -1), 1, -1, 1.5, 1.50, 100, 1e2, math.NaN(), math.Inf(1), math.Inf(-1),
	1e300, 1e-300, 1e125, 1e-129, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64}

func (b *fzBuilder) float() float64 {
	c := b.byte()
	if int(c) < len(fzFloats) {
		return fzFloats[c]
	}
	var buf [8]byte
	for i := range buf {
		buf[i] = b.byte()
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(buf[:]))
}

func (b *fzBuilder) value(depth int) any {
	if depth > 40 || len(b.data) == 0 {
		return b.str()
	}
	switch b.byte() % 20 {
	case 0:
		return nil
	case 1:
		return b.str()
	case 2:
		return b.float()
	case 3:
		return int64(b.byte()) - 128
	case 4:
		return b.byte()%2 == 0
	case 5:
		return []byte(b.str())
	case 6:
		l := make([]any, b.byte()%4)
		b.containers = append(b.containers, l)
		for i := range l {
			l[i] = b.value(depth + 1)
		}
		return l
	case 7:
		m := map[string]any{}
		b.containers = append(b.containers, m)
		for n := b.byte() % 4; n > 0; n-- {
			m[b.str()] = b.value(depth + 1)
		}
		return m
	case 8:
		return b.node(depth + 1)
	case 9:
		return func() {}
	case 10:
		return make(chan int)
	case 11:
		if len(b.containers) == 0 {
			return nil
		}
		return b.containers[int(b.byte())%len(b.containers)] // may be the container being filled: a cycle
	case 12:
		return []string{b.str(), b.str()}
	default:
		return b.str()
	}
}

// node returns a new node or one built before (which may be on the way to
// this one: a cycle).
func (b *fzBuilder) node(depth int) *fzNode {
	c := b.byte()
	if c%3 == 2 && len(b.nodes) > 0 {
		return b.nodes[int(c/3)%len(b.nodes)]
	}
	n := &fzNode{}
	b.nodes = append(b.nodes, n)
	if depth > 40 {
		return n
	}
	n.S, n.N = b.str(), b.float()
	if b.byte()%2 == 1 {
		n.Next = b.node(depth + 1)
	}
	n.A = b.value(depth + 1)
	if b.byte()%3 == 1 {
		n.M = map[string]any{"k" + b.str(): b.value(depth + 1)}
	}
	for k := b.byte() % 3; k > 0; k-- {
		n.L = append(n.L, b.node(depth+1))
	}
	return n
}

func (b *fzBuilder) item() fzItem {
	// Input that runs out (zeros) builds a plain, valid item.
	it := fzItem{ID: "k" + b.str(), R: []byte("r" + b.str()), V: int64(b.byte() % 3)}
	if c := b.byte(); c == 255 {
		it.ID = ""
	} else if c == 254 {
		it.R = nil
	}
	if b.byte()%2 == 1 {
		it.FzEmbedded = &FzEmbedded{E: b.value(1)}
	}
	it.S = b.str()
	for k := b.byte() % 4; k > 0; k-- {
		it.Set = append(it.Set, b.str())
		it.NSet = append(it.NSet, b.float())
		it.SS = append(it.SS, b.str())
		it.BS = append(it.BS, []byte(b.str()))
		if c := b.byte(); c%4 != 3 {
			s := b.str()
			it.PSet = append(it.PSet, &s)
		} else {
			it.PSet = append(it.PSet, nil)
		}
	}
	if b.byte()%2 == 1 {
		it.Node = b.node(1)
	}
	it.A = b.value(1)
	if b.byte()%2 == 1 {
		it.M = map[string]any{b.str(): b.value(1), b.str(): b.value(1)}
	}
	if b.byte()%7 == 6 {
		it.F = func() {}
	}
	return it
}

// FuzzEncode feeds random values through Save's encoding path (a stub
// client answers), and Load's, Delete's, batches' and transactions' key
// and item checks: nothing panics or overflows the stack, every refusal
// wraps ErrInvalidInput, and what is sent is valid UTF-8, within DynamoDB's
// nesting and size limits, with sets free of duplicates.
func FuzzEncode(f *testing.F) {
	f.Add([]byte("\x01a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("\x01k\x01r\x00\x02ok\x02\x01a\x00\x01b\x01c\x01\x01d\x00\x08\x00\x00\x03abc\x00"))
	f.Add([]byte("\x02k\xff\x01r\x00\x00\x00"))                                      // invalid UTF-8 key
	f.Add([]byte("\x01k\x01r\x01\x00\x00\x03\x01x\x00\x01\x01\x02\x02\x01y\x01"))    // sets with 0 and -0
	f.Add([]byte("\x01k\x01r\x00\x01\x0b\x07\x01\x01a\x0b\x00"))                     // embedded map holding itself
	f.Add([]byte("\x01k\x01r\x00\x01\x00\x00\x00\x03\x01x\x00\x02\x00\x00\x00\x00")) // node cycles
	f.Add([]byte("\x01k\x01r\x00\x01\x09\x00"))                                      // func in any
	f.Add([]byte("\x01k\x01r\x00\x01\x02\x08"))                                      // NaN
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := context.Background()
		st := &fakeDB{noStore: true}
		tb, err := NewTable[fzItem](NewMapper(st), "F")
		if err != nil {
			t.Fatal(err)
		}
		b := &fzBuilder{data: data}
		it := b.item()
		for _, beh := range []SaveBehavior{SaveUpdate, SavePut} {
			if _, err := tb.Save(ctx, it, WithSaveBehavior(beh)); err != nil && !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("Save (%v): %v does not wrap ErrInvalidInput", beh, err)
			}
		}
		for _, in := range st.puts() {
			checkSent(t, in.Item)
			if size := avs.ItemSize(in.Item); size > maxItemSize {
				t.Fatalf("sent an item of %d bytes", size)
			}
		}
		for _, in := range st.upds() {
			checkSent(t, in.Key)
			checkSent(t, in.ExpressionAttributeValues)
		}

		sc := silentDB()
		ts, _ := NewTable[fzItem](NewMapper(sc), "F")
		refusedOrSent := func(op string, err error) {
			if err != nil && !errors.Is(err, ErrInvalidInput) && !errors.Is(err, errSent) {
				t.Fatalf("%s: %v does not wrap ErrInvalidInput", op, err)
			}
		}
		_, err = ts.Load(ctx, it)
		refusedOrSent("Load", err)
		refusedOrSent("Delete", ts.Delete(ctx, it))
		refusedOrSent("BatchSave", ts.BatchSave(ctx, []fzItem{it}, Clobber()))
		refusedOrSent("WriteTx", ts.m.WriteTx(ctx, []TxOp{ts.TxSave(it)}))
	})
}

// checkSent fails unless the attribute values are valid UTF-8, within the
// nesting limit, with numbers DynamoDB reads and sets without duplicates.
func checkSent(t *testing.T, item map[string]types.AttributeValue) {
	t.Helper()
	for k, v := range item {
		if b := schema.CheckAVReadOnly(v, 1); b != nil {
			t.Fatalf("sent %q%s: %s", k, b.Where(), b.What)
		}
		if hasDuplicates(v) {
			t.Fatalf("sent %q with duplicate set elements: %v", k, v)
		}
	}
}

// hasDuplicates reports whether av holds a set with duplicate elements (or
// a number DynamoDB refuses), without changing it. It is the oracle for the
// library's hasDupes, so it finds duplicates another way: every pair of
// elements compared, numbers by their value as exact rationals (math/big)
// rather than by the library's canonical form.
func hasDuplicates(av types.AttributeValue) bool {
	switch v := av.(type) {
	case *types.AttributeValueMemberN:
		return schema.CheckItemNumber(v.Value) != nil
	case *types.AttributeValueMemberSS:
		return anyEqualPair(v.Value, func(a, b string) bool { return a == b })
	case *types.AttributeValueMemberNS:
		for _, n := range v.Value {
			if schema.CheckItemNumber(n) != nil {
				return true
			}
		}
		return anyEqualPair(v.Value, sameNumber)
	case *types.AttributeValueMemberBS:
		return anyEqualPair(v.Value, bytes.Equal)
	case *types.AttributeValueMemberM:
		for _, e := range v.Value {
			if hasDuplicates(e) {
				return true
			}
		}
	case *types.AttributeValueMemberL:
		for _, e := range v.Value {
			if hasDuplicates(e) {
				return true
			}
		}
	}
	return false
}

// anyEqualPair reports whether two elements of s are equal by eq, comparing
// every pair.
func anyEqualPair[E any](s []E, eq func(a, b E) bool) bool {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if eq(s[i], s[j]) {
				return true
			}
		}
	}
	return false
}

// sameNumber reports whether the DynamoDB numbers a and b (both valid) have
// the same value.
func sameNumber(a, b string) bool {
	var x, y big.Rat
	if _, ok := x.SetString(a); !ok {
		panic("sameNumber: not a number: " + a)
	}
	if _, ok := y.SetString(b); !ok {
		panic("sameNumber: not a number: " + b)
	}
	return x.Cmp(&y) == 0
}
