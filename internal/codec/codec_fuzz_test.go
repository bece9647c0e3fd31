package codec

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/codec/codectest"
)

// The differential tests: for values of many shapes, built from fuzz input,
// the compiled codec must produce exactly the item attributevalue produces
// (or fail where it fails), and decode items (as encoded, and random ones)
// exactly as attributevalue decodes them.

// ---- the shapes ----

type Status string

type Level int16

type Inner struct {
	A  string            `dynamo:"a"`
	B  *int              `dynamo:"b,omitempty"`
	C  []string          `dynamo:"c,omitemptyelem"`
	D  map[string]*Inner `dynamo:"-"`
	E  time.Time         `dynamo:"e,unixtime"`
	F  float32           `dynamo:"f,nullempty"`
	G  uint8             `dynamo:"G"`
	St Status            `dynamo:"st"`
}

type Base struct {
	ID     string `dynamo:"id"`
	Shared string `dynamo:"shared"`
	Name   string
}

type Other struct {
	Shared string `dynamo:"shared"` // same depth, both tagged: neither wins
	Name   string // shadowed by Base.Name? same depth, untagged: neither
	Extra  int    `dynamo:"extra"`
}

type PtrEmbed struct {
	P1 string `dynamo:"p1"`
	P2 *int   `dynamo:"p2"`
}

type hidden struct {
	H1 string `dynamo:"h1"`
	H2 int
}

// Marsh has a value-receiver marshaler.
type Marsh struct{ V string }

func (m Marsh) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	if m.V == "fail" {
		return nil, fmt.Errorf("marsh fails")
	}
	return &types.AttributeValueMemberS{Value: "m:" + m.V}, nil
}

func (m *Marsh) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	if s, ok := av.(*types.AttributeValueMemberS); ok {
		m.V = s.Value
		return nil
	}
	return fmt.Errorf("marsh wants S")
}

// PMarsh has a pointer-receiver marshaler: attributevalue calls it only
// where the value is addressable.
type PMarsh struct{ V int }

func (m *PMarsh) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return &types.AttributeValueMemberN{Value: strconv.Itoa(m.V * 2)}, nil
}

type MyTime = codectest.MyTime

type Kitchen struct {
	Base
	*PtrEmbed
	Other
	hidden
	S       string                `dynamo:"s"`
	SO      string                `dynamo:"so,omitempty"`
	SN      string                `dynamo:"sn,nullempty"`
	I       int                   `dynamo:"i"`
	I8      int8                  `dynamo:"i8,string"`
	I64     int64                 `dynamo:"i64,omitempty"`
	U       uint                  `dynamo:"u"`
	U16     uint16                `dynamo:"u16,string"`
	U64     uint64                `dynamo:"u64"`
	F32     float32               `dynamo:"f32"`
	F64     float64               `dynamo:"f64,omitempty"`
	FS      float64               `dynamo:"fs,string"`
	B       bool                  `dynamo:"b"`
	BO      bool                  `dynamo:"bo,omitempty"`
	Lvl     Level                 `dynamo:"lvl"`
	St      Status                `dynamo:"st"`
	PS      *string               `dynamo:"ps"`
	PSO     *string               `dynamo:"pso,omitempty"`
	PI      *int64                `dynamo:"pi,nullempty"`
	PIn     *Inner                `dynamo:"pin"`
	In      Inner                 `dynamo:"in"`
	T       time.Time             `dynamo:"t"`
	TO      time.Time             `dynamo:"to,omitempty"`
	TU      time.Time             `dynamo:"tu,unixtime"`
	PT      *time.Time            `dynamo:"pt"`
	TS      []time.Time           `dynamo:"ts"`
	MT      MyTime                `dynamo:"mt"`
	Bytes   []byte                `dynamo:"bytes"`
	BytesO  []byte                `dynamo:"byteso,omitempty"`
	Arr     [4]byte               `dynamo:"arr"`
	Strs    []string              `dynamo:"strs"`
	StrsOE  []string              `dynamo:"strsoe,omitemptyelem"`
	StrsNE  []string              `dynamo:"strsne,nullemptyelem"`
	SS      []string              `dynamo:"ss,stringset"`
	SSO     []string              `dynamo:"sso,stringset,omitempty"`
	SSP     []*string             `dynamo:"ssp,stringset"`
	NS      []int                 `dynamo:"ns,numberset"`
	NSF     []float64             `dynamo:"nsf,numberset,omitemptyelem"`
	BS      [][]byte              `dynamo:"bs"`
	BSet    [][]byte              `dynamo:"bset,binaryset,omitemptyelem"`
	Ints    []int                 `dynamo:"ints,omitempty"`
	PInts   []*int                `dynamo:"pints"`
	Inners  []Inner               `dynamo:"inners"`
	PInners []*Inner              `dynamo:"pinners,omitemptyelem"`
	M       map[string]string     `dynamo:"m"`
	MO      map[string]string     `dynamo:"mo,omitempty,omitemptyelem"`
	MN      map[string]string     `dynamo:"mn,nullemptyelem"`
	MI      map[string]int        `dynamo:"mi"`
	MIn     map[string]Inner      `dynamo:"min"`
	MP      map[string]*Inner     `dynamo:"mp"`
	MS      map[Status]Level      `dynamo:"ms"`
	MK      map[int]string        `dynamo:"mk"`
	MB      map[bool]string       `dynamo:"mb"`
	MA      map[string]any        `dynamo:"ma"`
	A       any                   `dynamo:"a"`
	JN      json.Number           `dynamo:"jn"`
	AN      attributevalue.Number `dynamo:"an"`
	Ma      Marsh                 `dynamo:"ma2"`
	PMa     *Marsh                `dynamo:"pma"`
	PM      PMarsh                `dynamo:"pm"`
	PMs     []PMarsh              `dynamo:"pms"`
	MPM     map[string]PMarsh     `dynamo:"mpm"`
	Fn      func()                `dynamo:"fn"`
	Skip    string                `dynamo:"-"`
	AVTag   string                `dynamodbav:"avtag,omitempty"`
	Both    string                `dynamodbav:"x,omitempty" dynamo:"both"`
	Cplx    complex64             `dynamo:"cplx"`
	Uptr    uintptr               `dynamo:"uptr"`
	PP      **int                 `dynamo:"pp"`
	unexp   int                   // unexported: never encoded
}

type Small struct {
	ID   string    `dynamo:"id,hash"`
	V    int64     `dynamo:"v,version"`
	Tags []string  `dynamo:"tags,set"`
	On   bool      `dynamo:"on,javabool"`
	At   time.Time `dynamo:"at,javadate"`
}

type Deep struct {
	L []Deep2 `dynamo:"l"`
}

type Deep2 struct {
	M map[string][]map[string][]string `dynamo:"m"`
	P *Deep3                           `dynamo:"p"`
}

type Deep3 struct {
	X [][]string `dynamo:"x,omitemptyelem"`
	Y []*[]int   `dynamo:"y"`
	Z *[]string  `dynamo:"z,stringset"`
}

type Recursive struct {
	Name string     `dynamo:"name"`
	Next *Recursive `dynamo:"next"`
}

type BadNames struct {
	A string `dynamo:"\xff"`
	B string `dynamo:"b"`
}

type EmbedMarsh struct {
	Marsh
	X int `dynamo:"x"`
}

type Conflict struct {
	OmitNull string `dynamo:"on,omitempty,nullempty"`
}

var shapes = []reflect.Type{
	reflect.TypeFor[Kitchen](),
	reflect.TypeFor[Small](),
	reflect.TypeFor[Deep](),
	reflect.TypeFor[Inner](),
	reflect.TypeFor[Recursive](),
	reflect.TypeFor[BadNames](),
	reflect.TypeFor[EmbedMarsh](),
	reflect.TypeFor[Conflict](),
}

var names = []string{"a", "b", "c", "e", "f", "G", "g", "st", "A", "id", "p1", "p2", "x", "l", "m", "p", "y", "z", "tags", "on", "at", "name", "next", "ps", "pin", "in", "t", "ts", "m", "mi", "min", "mp", "ms", "ints", "pints", "ss", "ns", "bs", "bytes", "pm", "pms", "ma2", "pma", "jn", "an", "mk"}

// ---- the targets ----

var (
	avEnc = attributevalue.NewEncoder(func(o *attributevalue.EncoderOptions) { o.TagKey = TagKey })
	avDec = attributevalue.NewDecoder(func(o *attributevalue.DecoderOptions) { o.TagKey = TagKey; o.UseNumber = true })
)

func acceptAll(types.AttributeValue, int) bool { return true }

// encodeBoth encodes the struct v points to both ways and fails on any
// difference; it returns attributevalue's item (nil on its error).
func encodeBoth(t *testing.T, v reflect.Value) map[string]types.AttributeValue {
	t.Helper()
	want, werr := avEncodeSafe(v)
	c := For(v.Elem().Type())
	if c == nil {
		return want
	}
	r, gerr := c.Encode(v.UnsafePointer(), avEnc, &Hooks{Check: acceptAll, Size: func(types.AttributeValue) int { return 0 }}, 0)
	got := r.Item
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%s: encode errors differ: attributevalue %v, codec %v\nvalue %#v", v.Elem().Type(), werr, gerr, v.Elem().Interface())
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: encoded items differ:\nattributevalue %s\ncodec          %s", v.Elem().Type(), show(want), show(got))
	}
	return want
}

func avEncodeSafe(v reflect.Value) (item map[string]types.AttributeValue, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	av, err := avEnc.Encode(v.Interface())
	if err != nil {
		return nil, err
	}
	return av.(*types.AttributeValueMemberM).Value, nil
}

// decodeBoth decodes item both ways into new values of t and fails on any
// difference.
func decodeBoth(t *testing.T, typ reflect.Type, item map[string]types.AttributeValue) {
	t.Helper()
	c := For(typ)
	if c == nil {
		return
	}
	want := reflect.New(typ)
	werr, panicked := avDecodeSafe(item, want)
	if panicked {
		// attributevalue cannot set fields promoted from an unexported
		// embedded struct (reflect panics); the codec sets them.
		return
	}
	got := reflect.New(typ)
	gerr := c.Decode(item, got.UnsafePointer(), avDec)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%s: decode errors differ: attributevalue %v, codec %v\nitem %s", typ, werr, gerr, show(item))
	}
	if werr != nil {
		return
	}
	if !equalValues(got.Elem(), want.Elem()) {
		t.Fatalf("%s: decoded values differ on item %s:\nattributevalue %#v\ncodec          %#v", typ, show(item), want.Elem().Interface(), got.Elem().Interface())
	}
}

func avDecodeSafe(item map[string]types.AttributeValue, out reflect.Value) (err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			panicked = true
		}
	}()
	return avDec.Decode(&types.AttributeValueMemberM{Value: item}, out.Interface()), false
}

// equalValues is reflect.DeepEqual, with NaN equal to NaN: when DeepEqual
// says no, the two values' encodings (which spell NaN as "NaN") decide.
func equalValues(a, b reflect.Value) bool {
	if reflect.DeepEqual(a.Interface(), b.Interface()) {
		return true
	}
	pa, pb := reflect.New(a.Type()), reflect.New(b.Type())
	pa.Elem().Set(a)
	pb.Elem().Set(b)
	ea, erra := avEncodeSafe(pa)
	eb, errb := avEncodeSafe(pb)
	return erra == nil && errb == nil && reflect.DeepEqual(ea, eb) && hasNaN(a)
}

// hasNaN reports whether a float in v is NaN (the only reason two equal
// decodings differ under DeepEqual).
func hasNaN(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		return math.IsNaN(v.Float())
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && hasNaN(v.Elem())
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if hasNaN(v.Index(i)) {
				return true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if hasNaN(it.Value()) {
				return true
			}
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if hasNaN(v.Field(i)) {
				return true
			}
		}
	}
	return false
}

func show(item map[string]types.AttributeValue) string {
	b, _ := json.Marshal(item)
	return string(b)
}

// FuzzCodecEncode builds a value of one of the shapes from the input and
// checks that the codec encodes it exactly as attributevalue does, and
// decodes attributevalue's item exactly as it does.
func FuzzCodecEncode(f *testing.F) {
	for i := range shapes {
		f.Add(byte(i), []byte("\x01\x02\x03abcdefghijklmnop\xff\xfe\x80\x81qrstuvwxyz0123456789"))
		f.Add(byte(i), []byte{})
	}
	f.Fuzz(func(t *testing.T, which byte, data []byte) {
		typ := shapes[int(which)%len(shapes)]
		g := &codectest.Gen{Data: data}
		v := reflect.New(typ)
		g.Fill(v.Elem())
		if typ == reflect.TypeFor[Recursive]() {
			// a cycle would crash both: attributevalue has no bound
			v.Elem().FieldByName("Next").SetZero()
		}
		item := encodeBoth(t, v)
		if item != nil {
			decodeBoth(t, typ, item)
		}
	})
}

// FuzzCodecDecode decodes random items (attributes of the shapes' names
// holding values of any type) both ways.
func FuzzCodecDecode(f *testing.F) {
	for i := range shapes {
		f.Add(byte(i), []byte("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10abcdefghijklmnop"))
	}
	f.Fuzz(func(t *testing.T, which byte, data []byte) {
		typ := shapes[int(which)%len(shapes)]
		g := &codectest.Gen{Data: data}
		item := map[string]types.AttributeValue{}
		for n := int(g.Byte()) % 8; n >= 0 && g.Left() > 0; n-- {
			item[g.Name(names)] = g.AV()
		}
		for k := range item {
			for k2 := range item {
				if k != k2 && strings.EqualFold(k, k2) {
					// Both may land in one field, in map order:
					// attributevalue's own result is not deterministic.
					return
				}
			}
		}
		decodeBoth(t, typ, item)
	})
}

// TestCodecUnexported checks that an unexported field is left out.
func TestCodecUnexported(t *testing.T) {
	k := Kitchen{unexp: 7}
	r, err := For(reflect.TypeFor[Kitchen]()).Encode(unsafe.Pointer(&k), avEnc, &Hooks{Check: acceptAll, Size: func(types.AttributeValue) int { return 0 }}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Item["unexp"]; ok || k.unexp != 7 {
		t.Errorf("unexported field encoded: %s", show(r.Item))
	}
}

// TestCodecCompiles pins which shapes are compiled (a regression that
// stops compiling them would make the fuzz tests vacuous).
func TestCodecCompiles(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[Kitchen](), reflect.TypeFor[Small](), reflect.TypeFor[Deep](), reflect.TypeFor[Inner](), reflect.TypeFor[BadNames](), reflect.TypeFor[Conflict](), reflect.TypeFor[Recursive]()} {
		if For(typ) == nil {
			t.Errorf("%s not compiled", typ)
		}
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[EmbedMarsh](), reflect.TypeFor[int]()} {
		if For(typ) != nil {
			t.Errorf("%s compiled; it must be left to attributevalue", typ)
		}
	}
}
