package codec

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/codec/codectest"
)

// Copyable is a struct of every kind CopyDecoded copies, with the options
// that change how they are stored.
type Copyable struct {
	embedded
	ID      string            `dynamo:"id"`
	SO      string            `dynamo:"so,omitempty"`
	SN      string            `dynamo:"sn,nullempty"`
	B       bool              `dynamo:"b"`
	BO      bool              `dynamo:"bo,omitempty"`
	I       int               `dynamo:"i"`
	I8      int8              `dynamo:"i8,string"`
	I64     int64             `dynamo:"i64,omitempty"`
	U16     uint16            `dynamo:"u16"`
	Lvl     Level             `dynamo:"lvl"`
	T       time.Time         `dynamo:"t"`
	TO      time.Time         `dynamo:"to,omitempty"`
	Tags    []string          `dynamo:"tags,stringset"`
	TagsO   []string          `dynamo:"tagso,stringset,omitempty"`
	Attrs   map[string]string `dynamo:"attrs"`
	AttrsN  map[string]string `dynamo:"attrsn,nullempty"`
	Skipped []int             `dynamo:"-"`
	hidden  string
}

type embedded struct {
	E string `dynamo:"e"`
}

// TestCopyDecodedIsDecodeOfEncode checks, for random values of a struct of
// every kind CopyDecoded copies (times in and out of UTC, empty and nil
// sets and maps, duplicates, unset fields), that whenever it copies, the
// copy is exactly what Decode makes of Encode's item — and that it copies
// often (the check is not vacuous), shares no slice or map with the value,
// and declines the types it does not copy.
func TestCopyDecodedIsDecodeOfEncode(t *testing.T) {
	c := For(reflect.TypeFor[Copyable]())
	if !c.Copyable() {
		t.Fatal("Copyable is not copyable")
	}
	for _, typ := range shapes {
		if s := For(typ); s != nil && s.Copyable() {
			t.Errorf("%s holds kinds CopyDecoded does not copy, yet it is Copyable", typ)
		}
	}
	rng := rand.New(rand.NewPCG(27, 2))
	copied, declined := 0, 0
	for range 20000 {
		data := make([]byte, rng.IntN(300))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		g := &codectest.Gen{Data: data}
		var src Copyable
		g.Fill(reflect.ValueOf(&src).Elem())
		if g.Byte()%2 == 0 { // the usual case: times in UTC
			src.T, src.TO = src.T.UTC(), src.TO.UTC()
		}
		src.hidden, src.Skipped = "h", []int{1}
		r, err := c.Encode(cp(&src), avEnc, overHooks, 0)
		if err != nil {
			var dst Copyable
			if c.CopyDecoded(cp(&dst), cp(&src)) {
				t.Fatalf("copied a value Encode refuses (%v): %+v", err, src)
			}
			continue
		}
		var want Copyable
		derr := c.Decode(r.Item, cp(&want), avDec)
		var got Copyable
		if !c.CopyDecoded(cp(&got), cp(&src)) {
			declined++
			continue
		}
		copied++
		if derr != nil {
			t.Fatalf("copied a value whose item does not decode (%v): %+v", derr, src)
		}
		if !r.Clean && hasDuplicate(r.Item) {
			t.Fatalf("copied a value whose string set has duplicates: %+v", src)
		}
		if !reflect.DeepEqual(got, want) || cap(got.Tags) != cap(want.Tags) {
			t.Fatalf("CopyDecoded differs from Decode(Encode):\nvalue  %#v\ndecode %#v\ncopy   %#v", src, want, got)
		}
		if len(got.Tags) > 0 && &got.Tags[0] == &src.Tags[0] {
			t.Fatal("the copy's string set shares the value's array")
		}
		if got.Attrs != nil {
			got.Attrs["\x00new"] = "x"
			if _, ok := src.Attrs["\x00new"]; ok {
				t.Fatal("the copy's map is the value's map")
			}
		}
	}
	if copied < 1000 || declined < 100 {
		t.Errorf("copied %d, declined %d of 20000: the test does not reach both cases", copied, declined)
	}
}

// TestCopyDecodedDeclines pins what the random test may miss: a time out
// of UTC or beyond year 9999, a string set with a duplicate, and a map with
// an empty key are not copied; a nil and an empty set both read back nil,
// an empty map as an empty map.
func TestCopyDecodedDeclines(t *testing.T) {
	c := For(reflect.TypeFor[Copyable]())
	base := Copyable{ID: "x", T: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}
	for name, v := range map[string]Copyable{
		"local time":    func() Copyable { v := base; v.T = v.T.In(time.FixedZone("X", 3600)); return v }(),
		"year 10000":    func() Copyable { v := base; v.T = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC); return v }(),
		"duplicate tag": func() Copyable { v := base; v.Tags = []string{"a", "b", "a"}; return v }(),
		"empty map key": func() Copyable { v := base; v.Attrs = map[string]string{"": "v"}; return v }(),
	} {
		var dst Copyable
		if c.CopyDecoded(cp(&dst), cp(&v)) {
			t.Errorf("%s: copied", name)
		}
	}
	v := base
	v.T = time.Now().UTC() // with a monotonic reading
	v.Tags, v.TagsO, v.Attrs, v.AttrsN = []string{}, nil, map[string]string{}, map[string]string{}
	var got Copyable
	if !c.CopyDecoded(cp(&got), cp(&v)) {
		t.Fatal("declined")
	}
	r, err := c.Encode(cp(&v), avEnc, overHooks, 0)
	if err != nil {
		t.Fatal(err)
	}
	var want Copyable
	if err := c.Decode(r.Item, cp(&want), avDec); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || got.Tags != nil || got.Attrs == nil || got.AttrsN == nil {
		t.Errorf("copy %#v, want %#v", got, want)
	}
}

func hasDuplicate(item map[string]types.AttributeValue) bool {
	for _, av := range item {
		if ss, ok := av.(*types.AttributeValueMemberSS); ok {
			seen := map[string]bool{}
			for _, s := range ss.Value {
				if seen[s] {
					return true
				}
				seen[s] = true
			}
		}
	}
	return false
}

func cp(v *Copyable) unsafe.Pointer { return unsafe.Pointer(v) }
