package codec

import (
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/codec/codectest"
)

// overHooks check and size values deterministically, so that Clean and
// the sizes of the two encodes can be compared: NaN and infinities are
// refused, and string sets with duplicates; every other value passes; a value's size is its JSON length.
var overHooks = &Hooks{
	Check: func(av types.AttributeValue, _ int) bool {
		if ss, ok := av.(*types.AttributeValueMemberSS); ok {
			seen := map[string]bool{}
			for _, s := range ss.Value {
				if seen[s] {
					return false
				}
				seen[s] = true
			}
			return true
		}
		n, ok := av.(*types.AttributeValueMemberN)
		return !ok || !strings.Contains(n.Value, "N") && !strings.Contains(n.Value, "Inf")
	},
	Size: func(av types.AttributeValue) int { return len(show(map[string]types.AttributeValue{"": av})) },
}

// checkEncodeOver builds a value of typ from data, an item prev it was
// computed from (its own encoding, that with some attributes replaced by
// random values, or random attributes), changes some of its fields, and
// fails unless EncodeOver of the changed value over prev is exactly Encode
// of it — the item, Clean, the sizes, the error — and prev is left as it
// was. It returns how many of prev's values the item shares.
func checkEncodeOver(t *testing.T, typ reflect.Type, data []byte) int {
	t.Helper()
	c := For(typ)
	if c == nil {
		return 0
	}
	g := &codectest.Gen{Data: data}
	v0 := reflect.New(typ)
	g.Fill(v0.Elem())
	if typ == reflect.TypeFor[Recursive]() {
		v0.Elem().FieldByName("Next").SetZero()
	}
	var prev map[string]types.AttributeValue
	switch mode := g.Byte() % 4; mode {
	case 0, 1, 2: // its own encoding (the Update's case), some values replaced in 2
		r, err := c.Encode(v0.UnsafePointer(), avEnc, overHooks, 0)
		if err != nil {
			return 0
		}
		prev = r.Item
		if mode == 2 {
			for n := int(g.Byte()) % 4; n >= 0 && g.Left() > 0; n-- {
				prev[g.Name(names)] = g.AV()
			}
		}
	case 3: // random attributes
		prev = map[string]types.AttributeValue{}
		for n := int(g.Byte()) % 8; n >= 0 && g.Left() > 0; n-- {
			prev[g.Name(names)] = g.AV()
		}
	}
	before := show(prev)
	v1 := reflect.New(typ)
	v1.Elem().Set(v0.Elem())
	fields := v1.Elem().NumField()
	for n := int(g.Byte()) % 5; n > 0 && g.Left() > 0; n-- {
		f := v1.Elem().Field(int(g.Byte()) % fields)
		if !f.CanSet() {
			continue
		}
		if g.Byte()%4 == 0 {
			f.SetZero()
		} else {
			g.Fill(f)
		}
	}
	if typ == reflect.TypeFor[Recursive]() {
		v1.Elem().FieldByName("Next").SetZero()
	}
	want, werr := c.Encode(v1.UnsafePointer(), avEnc, overHooks, 0)
	got, gerr := c.EncodeOver(v1.UnsafePointer(), prev, avEnc, overHooks, 0)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%s: errors differ: Encode %v, EncodeOver %v", typ, werr, gerr)
	}
	if werr != nil {
		return 0
	}
	if !reflect.DeepEqual(got.Item, want.Item) || got.Clean != want.Clean || got.Size != want.Size || got.NullSize != want.NullSize {
		t.Fatalf("%s: EncodeOver differs from Encode:\nprev       %s\nEncode     %s (clean %v, size %d/%d)\nEncodeOver %s (clean %v, size %d/%d)",
			typ, before, show(want.Item), want.Clean, want.Size, want.NullSize, show(got.Item), got.Clean, got.Size, got.NullSize)
	}
	if after := show(prev); after != before {
		t.Fatalf("%s: EncodeOver changed prev:\nbefore %s\nafter  %s", typ, before, after)
	}
	checkKept(t, c, "EncodeOver", got, prev)
	checkEncodeInto(t, c, v1.UnsafePointer(), prev, want.Item)
	checkEncodeNamed(t, c, v1.UnsafePointer(), want)
	shared := 0
	for k, av := range got.Item {
		if p, ok := prev[k]; ok && p == av {
			shared++
		}
	}
	return shared
}

// checkEncodeInto fails unless EncodeInto of the value at p into a copy of
// prev leaves in it exactly want (Encode's item) and prev's attributes no
// field names, sharing what EncodeOver shares, with Encode's Clean and
// sizes.
func checkEncodeInto(t *testing.T, c *Struct, p unsafe.Pointer, prev, want map[string]types.AttributeValue) {
	t.Helper()
	over, _ := c.EncodeOver(p, prev, avEnc, overHooks, 0)
	into := maps.Clone(prev)
	if into == nil {
		into = map[string]types.AttributeValue{}
	}
	got, err := c.EncodeInto(p, into, avEnc, overHooks)
	if err != nil {
		t.Fatalf("%s: EncodeInto failed where EncodeOver did not: %v", c.typ, err)
	}
	expect := maps.Clone(want)
	for k, v := range prev {
		if !slices.ContainsFunc(c.root.fields, func(f fieldNode) bool { return f.name == k }) {
			expect[k] = v
		}
	}
	if !reflect.DeepEqual(got.Item, expect) || got.Clean != over.Clean || got.Size != over.Size || got.NullSize != over.NullSize {
		t.Fatalf("%s: EncodeInto differs:\nprev       %s\nwant       %s (clean %v, size %d/%d)\nEncodeInto %s (clean %v, size %d/%d)",
			c.typ, show(prev), show(expect), over.Clean, over.Size, over.NullSize, show(got.Item), got.Clean, got.Size, got.NullSize)
	}
	if reflect.ValueOf(got.Item).UnsafePointer() != reflect.ValueOf(into).UnsafePointer() {
		t.Fatalf("%s: EncodeInto made a map", c.typ)
	}
	if prev != nil {
		checkKept(t, c, "EncodeInto", got, prev)
	}
	for k, v := range over.Item {
		if (prev[k] == v) != (prev[k] == got.Item[k]) {
			t.Fatalf("%s: attribute %q shared by one of EncodeOver and EncodeInto only", c.typ, k)
		}
	}
}

// checkEncodeNamed fails unless EncodeNamed of the value at p writes
// exactly the attributes of want (Encode's result), every field's where its
// name says — into Dst under its new name, or into Alt under its own (every
// third field) — with Encode's Clean and sizes, and makes no item.
func checkEncodeNamed(t *testing.T, c *Struct, p unsafe.Pointer, want Result) {
	t.Helper()
	to := Named{Names: c.Names(), Dst: map[string]types.AttributeValue{}, Alt: map[string]types.AttributeValue{}}
	expectDst, expectAlt := map[string]types.AttributeValue{}, map[string]types.AttributeValue{}
	for i, name := range to.Names {
		av, ok := want.Item[name]
		if i%3 == 0 {
			to.Names[i] = ""
			if ok {
				expectAlt[name] = av
			}
		} else {
			to.Names[i] = ":x" + name
			if ok {
				expectDst[":x"+name] = av
			}
		}
	}
	got, err := c.EncodeNamed(p, &to, avEnc, overHooks)
	if err != nil {
		t.Fatalf("%s: EncodeNamed failed where Encode did not: %v", c.typ, err)
	}
	if got.Item != nil || !reflect.DeepEqual(to.Dst, expectDst) || !reflect.DeepEqual(to.Alt, expectAlt) ||
		got.Clean != want.Clean || got.Size != want.Size || got.NullSize != want.NullSize {
		t.Fatalf("%s: EncodeNamed differs:\nwant %s and %s (clean %v, size %d/%d)\ngot  %s and %s (clean %v, size %d/%d), item %v",
			c.typ, show(expectDst), show(expectAlt), want.Clean, want.Size, want.NullSize, show(to.Dst), show(to.Alt), got.Clean, got.Size, got.NullSize, got.Item)
	}
}

// TestEncodeOverEqualsEncode checks, for random changes of random fields
// of values of every shape (all kinds, omitempty, nullempty, string
// numbers, pointers, nested structs, custom marshalers), over the item
// the value was encoded to or another, that EncodeOver makes exactly the
// item Encode makes — and that it does share values, so the check is not
// vacuous.
func TestEncodeOverEqualsEncode(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	shared := map[reflect.Type]int{}
	for range 3000 {
		data := make([]byte, rng.IntN(600))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		for _, typ := range shapes {
			shared[typ] += checkEncodeOver(t, typ, data)
		}
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[Kitchen](), reflect.TypeFor[Inner](), reflect.TypeFor[Small]()} {
		if shared[typ] == 0 {
			t.Errorf("%s: EncodeOver never shared a value: the test checks nothing", typ)
		}
	}
}

// TestEncodeOverSharesOnlyWhatEncodeMakes checks the cases the random test
// may miss: a number spelled otherwise, a string number, a NaN, a zero under
// omitempty and nullempty, a bool stored as a number, a list are made
// again; equal strings, numbers, bools, times, string sets and string maps
// are shared.
func TestEncodeOverSharesOnlyWhatEncodeMakes(t *testing.T) {
	k := Kitchen{S: "x", I: 100, I8: 5, F32: 1.5, FS: 2.5, B: true, SN: "", U: 7,
		SS: []string{"a", "b"}, M: map[string]string{"k": "v"}, T: time.Unix(1700000000, 5).UTC(), TU: time.Unix(1700000000, 0), Strs: []string{"l"}}
	k.F64 = 0 // omitempty
	c := For(reflect.TypeFor[Kitchen]())
	r, err := c.Encode(unsafePtr(&k), avEnc, overHooks, 0)
	if err != nil {
		t.Fatal(err)
	}
	prev := r.Item
	prev["i"] = &types.AttributeValueMemberN{Value: "1e2"} // 100 spelled otherwise
	prev["u"] = &types.AttributeValueMemberS{Value: "7"}   // not an N
	prev["b"] = &types.AttributeValueMemberN{Value: "1"}   // not a BOOL
	prev["f64"] = &types.AttributeValueMemberN{Value: "0"} // omitted by Encode
	prev["sn"] = &types.AttributeValueMemberS{Value: ""}   // NULL by Encode
	prev["i64"] = &types.AttributeValueMemberN{Value: "0"} // omitted by Encode
	got, err := c.EncodeOver(unsafePtr(&k), prev, avEnc, overHooks, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := c.Encode(unsafePtr(&k), avEnc, overHooks, 0)
	if !reflect.DeepEqual(got.Item, want.Item) {
		t.Fatalf("EncodeOver %s, Encode %s", show(got.Item), show(want.Item))
	}
	for _, name := range []string{"s", "i8", "f32", "fs", "ss", "m", "t", "tu"} {
		if got.Item[name] != prev[name] {
			t.Errorf("attribute %q made again, not shared", name)
		}
	}
	for _, name := range []string{"i", "u", "b", "sn", "strs"} { // strs: a list, made again
		if got.Item[name] == prev[name] {
			t.Errorf("attribute %q shared: %s", name, show(map[string]types.AttributeValue{name: prev[name]}))
		}
	}
	// a map of more entries, a set with a duplicate (Clean as Encode's)
	prev["m"] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberS{Value: "v"}, "k2": &types.AttributeValueMemberS{Value: "v"}}}
	k.SS = []string{"a", "a"}
	prev["ss"] = &types.AttributeValueMemberSS{Value: []string{"a", "a"}}
	got, _ = c.EncodeOver(unsafePtr(&k), prev, avEnc, overHooks, 0)
	want, _ = c.Encode(unsafePtr(&k), avEnc, overHooks, 0)
	if !reflect.DeepEqual(got.Item, want.Item) || got.Clean != want.Clean || want.Clean {
		t.Fatalf("EncodeOver %s (clean %v), Encode %s (clean %v)", show(got.Item), got.Clean, show(want.Item), want.Clean)
	}
	if _, ok := got.Item["f64"]; ok {
		t.Errorf("omitempty zero written")
	}
}

// FuzzEncodeOver is TestEncodeOverEqualsEncode from fuzz input.
func FuzzEncodeOver(f *testing.F) {
	for i := range shapes {
		f.Add(byte(i), []byte("\x01\x02\x03abcdefghijklmnop\xff\xfe\x80\x81qrstuvwxyz0123456789\x00\x01\x02\x03\x04"))
	}
	f.Fuzz(func(t *testing.T, which byte, data []byte) {
		checkEncodeOver(t, shapes[int(which)%len(shapes)], data)
	})
}

func unsafePtr(k *Kitchen) unsafe.Pointer { return unsafe.Pointer(k) }

// checkKept fails unless r.Kept, of an encoding over prev, has exactly the
// bits of the fields whose attribute in r.Item is prev's value itself, or
// absent from both: what a write computed from prev may leave unwritten.
func checkKept(t *testing.T, c *Struct, op string, r Result, prev map[string]types.AttributeValue) {
	t.Helper()
	for i, name := range c.Names() {
		if i >= 64 {
			break
		}
		got, gok := r.Item[name]
		was, wok := prev[name]
		kept := prev != nil && (gok && wok && got == was || !gok && !wok)
		if bit := r.Kept&(1<<i) != 0; bit != kept {
			t.Fatalf("%s: Kept bit %d (%q) is %v, want %v: item %s, prev had %s", op, i, name, bit, kept, show(r.Item), show(map[string]types.AttributeValue{name: was}))
		}
	}
}
