package codec

import (
	"encoding/hex"
	"errors"
	"math/big"
	"net"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/codec/codectest"
)

// Text types are stored as attributevalue stores them with
// UseEncodingMarshalers and UseEncodingUnmarshalers, which is the codec's
// reference for shapes whose text types have both methods and hold no
// time.Time (attributevalue would text-encode those too, ignoring
// `unixtime`).

// Code is a string-kind text type with pointer-receiver methods, failing
// on "fail" and on text without its prefix.
type Code string

func (c *Code) MarshalText() ([]byte, error) {
	if *c == "fail" {
		return nil, errors.New("code: fail")
	}
	return []byte("c-" + string(*c)), nil
}

func (c *Code) UnmarshalText(b []byte) error {
	s, ok := strings.CutPrefix(string(b), "c-")
	if !ok {
		return errors.New("code: no prefix")
	}
	*c = Code(s)
	return nil
}

// Bin4 is a byte-array text type that also reads binary values.
type Bin4 [4]byte

func (b Bin4) MarshalText() ([]byte, error) { return []byte(hex.EncodeToString(b[:])), nil }
func (b *Bin4) UnmarshalText(t []byte) error {
	if len(t) != 8 {
		return errors.New("bin4: want 8 hex digits")
	}
	_, err := hex.Decode(b[:], t)
	return err
}
func (b *Bin4) UnmarshalBinary(d []byte) error {
	if len(d) != 4 {
		return errors.New("bin4: want 4 bytes")
	}
	copy(b[:], d)
	return nil
}

// OnlyOut has MarshalText but no UnmarshalText: not a text type, it stays
// a map (in the text shape the reference would differ, so it has its own
// check, TestCodecTextRule).
type OnlyOut struct{ V string }

func (o OnlyOut) MarshalText() ([]byte, error) { return []byte(o.V), nil }

// Wins has both text methods and a DynamoDB marshaler, which wins.
type Wins struct{ V string }

func (w Wins) MarshalText() ([]byte, error) { return []byte("text:" + w.V), nil }
func (w *Wins) UnmarshalText(b []byte) error {
	w.V = "text:" + string(b)
	return nil
}
func (w Wins) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return &types.AttributeValueMemberS{Value: "ddb:" + w.V}, nil
}
func (w *Wins) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	if s, ok := av.(*types.AttributeValueMemberS); ok {
		w.V = strings.TrimPrefix(s.Value, "ddb:")
	}
	return nil
}

type TextInner struct {
	ID  codectest.UUID  `dynamo:"id"`
	PID *codectest.UUID `dynamo:"pid,omitempty"`
}

type Texts struct {
	ID    codectest.UUID            `dynamo:"id"`
	PID   *codectest.UUID           `dynamo:"pid"`
	IDs   []codectest.UUID          `dynamo:"ids"`
	PIDs  []*codectest.UUID         `dynamo:"pids,omitemptyelem"`
	MIDs  map[string]codectest.UUID `dynamo:"mids"`
	Addr  netip.Addr                `dynamo:"addr"`
	PAddr *netip.Addr               `dynamo:"paddr,omitempty"`
	C     Code                      `dynamo:"c"`
	CO    Code                      `dynamo:"co,omitempty"`
	CN    Code                      `dynamo:"cn,nullempty"`
	CS    Code                      `dynamo:"cs,string"`
	Cs    []Code                    `dynamo:"cs2"`
	B4    Bin4                      `dynamo:"b4"`
	In    TextInner                 `dynamo:"in"`
	PIn   *TextInner                `dynamo:"pin"`
	Ins   []TextInner               `dynamo:"ins"`
	Big   *big.Int                  `dynamo:"big"`
	W     Wins                      `dynamo:"w"`
	Plain string                    `dynamo:"plain"`
	Arr   [2]codectest.UUID         `dynamo:"arr"` // handed to attributevalue, with its text options
	MK    map[int]Code              `dynamo:"mk"`
}

// Tree is a recursive type holding a text type: compiled, its own node
// referring to itself.
type Tree struct {
	ID   codectest.UUID `dynamo:"id"`
	Name string         `dynamo:"name"`
	Kids []Tree         `dynamo:"kids"`
	Next *Tree          `dynamo:"next"`
}

// (A string set of a text type, []UUID `dynamo:",stringset"`, is left out:
// attributevalue writes it but decodes set elements without UnmarshalText,
// so it cannot read it back; the codec can: TestCodecTextRule.)

// TextIP holds byte-slice text types (net.IP: MarshalText fails on lengths
// other than 0, 4 and 16).
type TextIP struct {
	IP  net.IP   `dynamo:"ip"`
	IPs []net.IP `dynamo:"ips"`
	PIP *net.IP  `dynamo:"pip"`
}

var (
	textShapes = []reflect.Type{reflect.TypeFor[Texts](), reflect.TypeFor[TextIP](), reflect.TypeFor[TextInner](), reflect.TypeFor[Tree]()}
	textNames  = []string{"id", "pid", "ids", "pids", "sids", "mids", "addr", "paddr", "c", "co", "cn", "cs", "cs2", "b4", "in", "pin", "ins", "big", "w", "plain", "ip", "ips", "pip", "ID", "arr", "mk", "kids", "next", "name"}

	avEncText = attributevalue.NewEncoder(func(o *attributevalue.EncoderOptions) {
		o.TagKey = TagKey
		o.UseEncodingMarshalers = true
	})
	avDecText = attributevalue.NewDecoder(func(o *attributevalue.DecoderOptions) {
		o.TagKey = TagKey
		o.UseNumber = true
		o.UseEncodingUnmarshalers = true
	})
)

// encodeText encodes the struct v points to with the codec (attributevalue
// defaults for what it hands over) and with the text reference, and fails
// on any difference; it returns the reference's item (nil on its error).
func encodeText(t *testing.T, v reflect.Value) map[string]types.AttributeValue {
	t.Helper()
	var want map[string]types.AttributeValue
	av, werr := func() (av types.AttributeValue, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = errors.New("panic")
			}
		}()
		return avEncText.Encode(v.Interface())
	}()
	if werr == nil {
		want = av.(*types.AttributeValueMemberM).Value
	}
	c := For(v.Elem().Type())
	if c == nil {
		t.Fatalf("%s not compiled", v.Elem().Type())
	}
	r, gerr := c.Encode(v.UnsafePointer(), avEnc, &Hooks{Check: acceptAll, Size: func(types.AttributeValue) int { return 0 }}, 0)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%s: encode errors differ: reference %v, codec %v\nvalue %#v", v.Elem().Type(), werr, gerr, v.Elem().Interface())
	}
	if werr == nil && !reflect.DeepEqual(r.Item, want) {
		t.Fatalf("%s: encoded items differ:\nreference %s\ncodec     %s", v.Elem().Type(), show(want), show(r.Item))
	}
	return want
}

// decodeText decodes item with the codec and with the text reference into
// new values of typ and fails on any difference.
func decodeText(t *testing.T, typ reflect.Type, item map[string]types.AttributeValue) {
	t.Helper()
	if hasSS(&types.AttributeValueMemberM{Value: item}) {
		// attributevalue decodes set elements without UnmarshalText, so
		// it is no reference there; the codec must still not panic.
		_ = For(typ).Decode(item, reflect.New(typ).UnsafePointer(), avDec)
		return
	}
	want := reflect.New(typ)
	werr, panicked := func() (err error, panicked bool) {
		defer func() {
			if r := recover(); r != nil {
				panicked = true
			}
		}()
		return avDecText.Decode(&types.AttributeValueMemberM{Value: item}, want.Interface()), false
	}()
	if panicked {
		return // attributevalue panics on a binary value of the wrong length for an array
	}
	got := reflect.New(typ)
	gerr := For(typ).Decode(item, got.UnsafePointer(), avDec)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%s: decode errors differ: reference %v, codec %v\nitem %s", typ, werr, gerr, show(item))
	}
	if werr == nil && !equalValues(got.Elem(), want.Elem()) {
		t.Fatalf("%s: decoded values differ on item %s:\nreference %#v\ncodec     %#v", typ, show(item), want.Elem().Interface(), got.Elem().Interface())
	}
}

// FuzzCodecText builds values of the text shapes and checks the codec
// against the text reference both ways, then decodes a random item.
func FuzzCodecText(f *testing.F) {
	for i := range textShapes {
		f.Add(byte(i), []byte("\x01\x02\x03abcdefghijklmnop\xff\xfe\x80\x81qrstuvwxyz0123456789"))
		f.Add(byte(i), []byte{})
	}
	f.Fuzz(func(t *testing.T, which byte, data []byte) {
		typ := textShapes[int(which)%len(textShapes)]
		g := &codectest.Gen{Data: data}
		v := reflect.New(typ)
		g.Fill(v.Elem())
		if item := encodeText(t, v); item != nil {
			decodeText(t, typ, item)
		}
		item := map[string]types.AttributeValue{}
		for n := int(g.Byte()) % 6; n >= 0 && g.Left() > 0; n-- {
			item[g.Name(textNames)] = g.AV()
		}
		for k := range item {
			for k2 := range item {
				if k != k2 && strings.EqualFold(k, k2) {
					return
				}
			}
		}
		decodeText(t, typ, item)
	})
}

// TestCodecTextRule pins the rule: what is a text type, what is stored as
// S, and that a type's DynamoDB marshaler wins.
func TestCodecTextRule(t *testing.T) {
	for _, c := range []struct {
		typ  reflect.Type
		want bool
	}{
		{reflect.TypeFor[codectest.UUID](), true},
		{reflect.TypeFor[Code](), true},
		{reflect.TypeFor[netip.Addr](), true},
		{reflect.TypeFor[net.IP](), true},
		{reflect.TypeFor[big.Int](), true},
		{reflect.TypeFor[*codectest.UUID](), false}, // the pointer is not, what it points to is
		{reflect.TypeFor[OnlyOut](), false},
		{reflect.TypeFor[Wins](), false},
		{reflect.TypeFor[Marsh](), false},
		{reflect.TypeFor[string](), false},
		{reflect.TypeFor[[16]byte](), false},
		{timeType, false},
		{reflect.TypeFor[struct {
			codectest.UUID
			Name string
		}](), false}, // promoted methods: the struct is not a UUID
		{reflect.TypeFor[struct{ time.Time }](), true}, // wraps it whole: nothing else to lose
	} {
		if got := IsText(c.typ); got != c.want {
			t.Errorf("IsText(%s) = %v, want %v", c.typ, got, c.want)
		}
	}
	type S struct {
		ID  codectest.UUID   `dynamo:"id"`
		O   OnlyOut          `dynamo:"o"`
		W   Wins             `dynamo:"w"`
		Raw [2]byte          `dynamo:"raw"`
		Set []codectest.UUID `dynamo:"set,stringset"`
	}
	v := S{ID: codectest.UUID{1, 2}, O: OnlyOut{V: "x"}, W: Wins{V: "y"}, Raw: [2]byte{7, 8}, Set: []codectest.UUID{{3}}}
	r, err := For(reflect.TypeFor[S]()).Encode(unsafe.Pointer(&v), avEnc, &Hooks{Check: acceptAll, Size: func(types.AttributeValue) int { return 0 }}, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]types.AttributeValue{
		"id":  &types.AttributeValueMemberS{Value: "01020000-0000-0000-0000-000000000000"},
		"o":   &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"V": &types.AttributeValueMemberS{Value: "x"}}},
		"w":   &types.AttributeValueMemberS{Value: "ddb:y"},
		"raw": &types.AttributeValueMemberB{Value: []byte{7, 8}},
		"set": &types.AttributeValueMemberSS{Value: []string{"03000000-0000-0000-0000-000000000000"}},
	}
	if !reflect.DeepEqual(r.Item, want) {
		t.Fatalf("encoded %s, want %s", show(r.Item), show(want))
	}
	var back S
	if err := For(reflect.TypeFor[S]()).Decode(r.Item, unsafe.Pointer(&back), avDec); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, v) {
		t.Fatalf("decoded %+v, want %+v", back, v)
	}
	// A binary value (how a byte array was stored before) still reads.
	var old S
	if err := For(reflect.TypeFor[S]()).Decode(map[string]types.AttributeValue{"id": &types.AttributeValueMemberB{Value: v.ID[:]}}, unsafe.Pointer(&old), avDec); err != nil || old.ID != v.ID {
		t.Fatalf("binary id: %v, %v", old.ID, err)
	}
	// Text that does not parse is the codec's own error.
	var bad S
	err = For(reflect.TypeFor[S]()).Decode(map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "nope"}}, unsafe.Pointer(&bad), avDec)
	var te *TextError
	if !errors.As(err, &te) || te.Method != "UnmarshalText" {
		t.Fatalf("bad text: %v, want a *TextError from UnmarshalText", err)
	}
}

func hasSS(av types.AttributeValue) bool {
	switch v := av.(type) {
	case *types.AttributeValueMemberSS:
		return true
	case *types.AttributeValueMemberL:
		for _, e := range v.Value {
			if hasSS(e) {
				return true
			}
		}
	case *types.AttributeValueMemberM:
		for _, e := range v.Value {
			if hasSS(e) {
				return true
			}
		}
	}
	return false
}

// TestCodecTextClash: a value handed to attributevalue that holds a text
// type and a time.Time cannot be stored as the mapper stores both.
func TestCodecTextClash(t *testing.T) {
	type WithTime struct {
		ID codectest.UUID `dynamo:"id"`
		At time.Time      `dynamo:"at,unixtime"`
	}
	type S struct {
		ID   codectest.UUID    `dynamo:"id"`
		At   time.Time         `dynamo:"at,unixtime"` // compiled: fine
		Arr  [2]codectest.UUID `dynamo:"arr"`         // fallback, text only: fine
		Bad  [1]WithTime       `dynamo:"bad"`         // fallback, text and time: clash
		Fine []WithTime        `dynamo:"fine"`        // compiled: fine
	}
	c := For(reflect.TypeFor[S]())
	if c == nil || !strings.Contains(c.Clash(), "bad") || !strings.Contains(c.Clash(), "time.Time") {
		t.Fatalf("Clash() = %q, want it to name field bad and time.Time", c.Clash())
	}
	type OK struct {
		Arr  [2]codectest.UUID `dynamo:"arr"`
		Fine []WithTime        `dynamo:"fine"`
	}
	if c := For(reflect.TypeFor[OK]()); c == nil || c.Clash() != "" {
		t.Fatalf("OK: Clash() = %q", c.Clash())
	}
}

// TestCodecRecursive: a recursive type is compiled whole (no field left to
// attributevalue), and a tree of it round-trips with its text types as S.
func TestCodecRecursive(t *testing.T) {
	c := For(reflect.TypeFor[Tree]())
	if c == nil || !c.root.pure(map[*node]bool{}) {
		t.Fatal("Tree not compiled whole")
	}
	v := Tree{ID: codectest.UUID{1}, Kids: []Tree{{ID: codectest.UUID{2}, Next: &Tree{ID: codectest.UUID{3}}}}}
	r, err := c.Encode(unsafe.Pointer(&v), avEnc, &Hooks{Check: acceptAll, Size: func(types.AttributeValue) int { return 0 }}, 0)
	if err != nil {
		t.Fatal(err)
	}
	kid := r.Item["kids"].(*types.AttributeValueMemberL).Value[0].(*types.AttributeValueMemberM).Value
	if s, ok := kid["next"].(*types.AttributeValueMemberM).Value["id"].(*types.AttributeValueMemberS); !ok || s.Value != "03000000-0000-0000-0000-000000000000" {
		t.Fatalf("nested id: %s", show(r.Item))
	}
	var back Tree
	if err := c.Decode(r.Item, unsafe.Pointer(&back), avDec); err != nil || !reflect.DeepEqual(back, v) {
		t.Fatalf("decoded %+v (%v), want %+v", back, err, v)
	}
}
