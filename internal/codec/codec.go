// Package codec encodes Go structs to DynamoDB items and decodes them back
// through code prepared once per struct type, producing exactly what
// attributevalue's Encoder and Decoder (with TagKey "dynamo" and otherwise
// default options) produce, without walking the type on every call.
//
// One rule is the mapper's own: values of text types (IsText: uuid-style
// [16]byte types, netip.Addr, net.IP, big.Int) are stored as an S holding
// MarshalText's output and read with UnmarshalText, as attributevalue does
// with UseEncodingMarshalers and UseEncodingUnmarshalers, which would also
// turn time.Time into text (ignoring `unixtime`): the codec applies the rule
// to text types only.
//
// What it does not compile is handed to attributevalue, field by field:
// types with a custom MarshalDynamoDBAttributeValue or
// UnmarshalDynamoDBAttributeValue (also promoted or through a pointer),
// interfaces, arrays, maps with keys other than plain strings, pointers to
// pointers, number-like strings (json.Number, attributevalue.Number), types
// convertible to time.Time other than time.Time itself, funcs, chans,
// complex numbers. Recursive types are compiled (their node refers to
// itself). A field handed over that holds text types goes to attributevalue
// with its text options (Struct.Clash names those that also hold types the
// options would change). A field that needs attributevalue is
// encoded and decoded by it in place (the field's memory is viewed as a
// one-field struct carrying the field's tag), so addressability, and with it
// which marshaler methods apply, is the same as in a whole-struct call. A
// struct that needs attributevalue in a position that is not addressable (a
// map value) is not compiled at all.
//
// The field rules (which fields are visible, embedded structs flattened,
// shadowing by depth and tags, case-insensitive name matching on decode)
// follow attributevalue v1.21's field.go (Apache License 2.0). Encoders and
// decoders configured with options other than the defaults are not
// compiled: the caller uses attributevalue for them.
package codec

import (
	"encoding"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	avs "github.com/ddbkit/dynamo/internal/av"
)

// TagKey is the struct tag the codec reads, after `dynamodbav` (which it
// overrides), as attributevalue does with EncoderOptions.TagKey "dynamo".
// The mapper's dynamo.TagKey is this constant.
const TagKey = "dynamo"

// AVTagKey is attributevalue's own struct tag, which it reads whatever its
// TagKey option says.
const AVTagKey = "dynamodbav"

// TagKeys are the struct tags attributevalue reads with TagKey "dynamo", in
// the order it reads them (ReadTags).
var TagKeys = [...]string{AVTagKey, TagKey}

// MaxNesting is DynamoDB's nesting limit as its server counts it: the item
// is level 1, every map or list one level more.
const MaxNesting = 32

// MaxNameLen is the longest attribute name or map key DynamoDB stores, in
// bytes ("Attribute name is too large, must be less than 65536 bytes").
const MaxNameLen = 65535

// ValidName reports whether DynamoDB stores k, as the SDK sends it, as an
// attribute name or map key: not empty, at most MaxNameLen bytes, valid
// UTF-8 (the SDK would send U+FFFD for the bad bytes).
func ValidName(k string) bool {
	return k != "" && len(k) <= MaxNameLen && utf8.ValidString(k)
}

// Struct is the compiled codec of one struct type. It is immutable and safe
// for concurrent use.
type Struct struct {
	typ  reflect.Type
	root *node
	// clash describes a field handed to attributevalue that holds both a
	// text type and a type attributevalue's text options would change
	// (Clash); "" when there is none.
	clash string
	// copy is how CopyDecoded copies values (nil: it does not).
	copy copyPlan
}

var cache sync.Map // reflect.Type → *Struct (nil when not compiled)

// For returns the codec of struct type t, or nil when t cannot be compiled
// (its values must go through attributevalue whole).
func For(t reflect.Type) *Struct {
	if c, ok := cache.Load(t); ok {
		return c.(*Struct)
	}
	var s *Struct
	if t.Kind() == reflect.Struct {
		b := &builder{onPath: map[reflect.Type]bool{}, open: map[openKey]*node{}}
		if n := b.compile(t, tag{}, true); n != nil && n.kind == kStruct {
			s = &Struct{typ: t, root: n, clash: b.clash, copy: compileCopy(n)}
		}
	}
	c, _ := cache.LoadOrStore(t, s)
	return c.(*Struct)
}

// Type returns the struct type s encodes.
func (s *Struct) Type() reflect.Type { return s.typ }

// Clash describes a value the codec hands to attributevalue (see the
// package doc) that holds a text type, which attributevalue stores as text
// only with options that would also change another type it holds
// (time.Time, or a type with only some of the text and binary methods);
// "" when there is none. The caller refuses such types.
func (s *Struct) Clash() string { return s.clash }

// Check is the caller's check of a value the codec does not check itself
// (numbers written from floats, sets, values encoded by attributevalue):
// it reports whether av, at nesting level level (its container's level; a
// top-level attribute has level 1), is one DynamoDB accepts as it is —
// valid strings and numbers, nesting within MaxNesting, no duplicate set
// elements.
type Check func(av types.AttributeValue, level int) bool

// Hooks are the caller's rules the codec applies while it encodes.
type Hooks struct {
	Check Check
	// Size returns the size the caller counts for a value (DynamoDB's item
	// size rules); the codec sums it over the top-level attributes, with
	// their names.
	Size func(av types.AttributeValue) int
}

// Result is an encoded item.
type Result struct {
	Item map[string]types.AttributeValue
	// Clean reports that every string and name is valid UTF-8, no map key
	// or name is empty or longer than MaxNameLen, the item nests no deeper than MaxNesting, and
	// Hooks.Check accepted every value handed to it; when Clean is false
	// the caller must check the item itself.
	Clean bool
	// Size is the sum of len(name) + Hooks.Size(value) over Item, and
	// NullSize the part of it of the attributes that are NULL.
	Size, NullSize int
	// Kept, from EncodeOver and EncodeInto, has bit i set (i < 64: the
	// i-th of Names) when field i left prev as it was: its attribute is
	// prev's value itself, or prev has none and the field wrote none. A
	// clear bit says nothing (a value equal to prev's but made again).
	Kept uint64
}

// Encode encodes the struct p points to (of s's type) into an item, as
// enc.Encode of a pointer to it would. room is how many attributes the
// caller will add to the item. An error means attributevalue would fail
// too: the caller asks it for its error.
func (s *Struct) Encode(p unsafe.Pointer, enc *attributevalue.Encoder, h *Hooks, room int) (Result, error) {
	return s.encode(p, nil, false, nil, enc, h, room)
}

// EncodeOver is Encode that takes, for a field of a string, bool or number
// kind (not a text type, not a pointer), the attribute value prev holds
// under the field's name when it is the value Encode would make of the
// field (the same kind and text), instead of making it again. The item
// returned then shares those values with prev: the caller must never
// change one in place (replacing an item's value is fine).
func (s *Struct) EncodeOver(p unsafe.Pointer, prev map[string]types.AttributeValue, enc *attributevalue.Encoder, h *Hooks, room int) (Result, error) {
	return s.encode(p, prev, false, nil, enc, h, room)
}

// EncodeInto is EncodeOver that makes no map: it writes the item into prev
// itself, replacing the values of the fields' attributes that differ and
// deleting those Encode would leave out; prev's other attributes (no
// field's) stay. The returned Item is prev, and Size and NullSize count the
// fields' attributes only, as Encode's do. After an error prev is partly
// written: the caller must drop it. For a caller that owns prev, the item
// it was computed from, and needs it no more.
func (s *Struct) EncodeInto(p unsafe.Pointer, prev map[string]types.AttributeValue, enc *attributevalue.Encoder, h *Hooks) (Result, error) {
	return s.encode(p, prev, true, nil, enc, h, 0)
}

// Names returns the attribute names of the fields s encodes, in the order
// EncodeNamed's names are given.
func (s *Struct) Names() []string {
	names := make([]string, len(s.root.fields))
	for i := range s.root.fields {
		names[i] = s.root.fields[i].name
	}
	return names
}

// Named says where EncodeNamed writes each field's attribute: the
// attribute of field i (Names()[i]) into Dst under Names[i], or, where
// Names[i] is "", into Alt under its own name.
type Named struct {
	Names    []string
	Dst, Alt map[string]types.AttributeValue
}

// EncodeNamed is Encode that makes no item: it writes the attributes where
// to says (an UpdateItem's values, under their placeholders, and its key).
// The returned Item is nil; Size and NullSize count the attributes under
// their own names, as Encode's do. After an error the maps are partly
// written: the caller must drop them.
func (s *Struct) EncodeNamed(p unsafe.Pointer, to *Named, enc *attributevalue.Encoder, h *Hooks) (Result, error) {
	return s.encode(p, nil, false, to, enc, h, 0)
}

func (s *Struct) encode(p unsafe.Pointer, prev map[string]types.AttributeValue, into bool, to *Named, enc *attributevalue.Encoder, h *Hooks, room int) (Result, error) {
	e := encState{enc: enc, check: h.Check, clean: true, few: prev != nil}
	n := s.root
	if !n.namesOK {
		e.clean = false
	}
	var r Result
	switch {
	case into:
		r.Item = prev
	case to == nil:
		r.Item = make(map[string]types.AttributeValue, len(n.fields)+room)
	}
	for i := range n.fields {
		f := &n.fields[i]
		old := prev[f.name]
		fp, ok := fieldPtr(p, f.hops)
		var av types.AttributeValue
		switch {
		case !ok:
		case old != nil && e.same(f.n, fp, old, 1):
			av = old
		default:
			var err error
			if av, err = e.value(f.n, fp, 1); err != nil {
				return Result{}, atAttr(err, f.name)
			}
		}
		if prev != nil && i < 64 && av == old {
			r.Kept |= 1 << i // the same value, or none in either
		}
		if av == nil {
			if into && old != nil {
				delete(r.Item, f.name)
			}
			continue
		}
		switch {
		case to != nil && to.Names[i] != "":
			to.Dst[to.Names[i]] = av
		case to != nil:
			to.Alt[f.name] = av
		case av != old || !into:
			r.Item[f.name] = av
		}
		var sz int
		switch v := av.(type) {
		case *types.AttributeValueMemberS:
			sz = len(v.Value)
		case *types.AttributeValueMemberBOOL:
			sz = 1
		case *types.AttributeValueMemberNULL:
			sz = 1
			r.NullSize += len(f.name) + 1
		default:
			sz = h.Size(av)
		}
		r.Size += len(f.name) + sz
	}
	r.Clean = e.clean
	return r, nil
}

// Decode decodes item into the zero struct p points to, as dec.Decode of
// the item into a pointer to it would. After an error p holds a partly
// decoded value: the caller asks attributevalue for its error.
func (s *Struct) Decode(item map[string]types.AttributeValue, p unsafe.Pointer, dec *attributevalue.Decoder) error {
	d := decState{dec: dec}
	return d.structFields(s.root, item, p)
}

// DecodeTo is Decode into *out, for callers without unsafe: S must be the
// struct type s was compiled for (else an error, nothing decoded).
func DecodeTo[S any](s *Struct, item map[string]types.AttributeValue, out *S, dec *attributevalue.Decoder) error {
	if reflect.TypeFor[S]() != s.typ {
		return fmt.Errorf("codec: DecodeTo a %s with the codec of %s", reflect.TypeFor[S](), s.typ)
	}
	return s.Decode(item, unsafe.Pointer(out), dec)
}

// DecodeValue is Decode into the struct p points to, for callers without
// unsafe: p must be a non-nil pointer to s's struct type (else an error,
// nothing decoded).
func (s *Struct) DecodeValue(item map[string]types.AttributeValue, p reflect.Value, dec *attributevalue.Decoder) error {
	if p.Kind() != reflect.Pointer || p.Type().Elem() != s.typ || p.IsNil() {
		return fmt.Errorf("codec: DecodeValue into a %s with the codec of %s", p.Type(), s.typ)
	}
	return s.Decode(item, p.UnsafePointer(), dec)
}

// ---- types ----

type kind uint8

const (
	kString kind = iota + 1
	kBool
	kInt
	kUint
	kFloat
	kTime
	kPtr
	kSlice
	kMap
	kStruct
	kFallback
	kText // a text type (IsText): MarshalText to S, UnmarshalText from S
)

// tag is the part of a struct tag attributevalue reads.
type tag struct {
	name                     string
	ignore                   bool
	omitEmpty, omitEmptyElem bool
	nullEmpty, nullEmptyElem bool
	asString                 bool
	binSet, numSet, strSet   bool
	unixTime                 bool
	raw                      string // options as written, for a fallback's view
}

func (t *tag) parse(s string) {
	parts := strings.Split(s, ",")
	if name := parts[0]; name == "-" {
		t.name, t.ignore = "", true
	} else {
		t.name, t.ignore = name, false
	}
	for _, opt := range parts[1:] {
		switch opt {
		case "omitempty":
			t.omitEmpty = true
		case "omitemptyelem":
			t.omitEmptyElem = true
		case "nullempty":
			t.nullEmpty = true
		case "nullemptyelem":
			t.nullEmptyElem = true
		case "string":
			t.asString = true
		case "binaryset":
			t.binSet = true
		case "numberset":
			t.numSet = true
		case "stringset":
			t.strSet = true
		case "unixtime":
			t.unixTime = true
		}
	}
}

// ReadTags is the rule for which struct tag names a field, and with which
// options, as attributevalue reads them with TagKey "dynamo": it calls fn
// with the key and value of each tag it reads, in order (TagKeys), skipping
// empty ones. The name in the last value called (its text before the first
// comma) names the field, "-" leaving it out, "" giving it its Go name; the
// options of every value apply.
func ReadTags(st reflect.StructTag, fn func(key, value string)) {
	for _, key := range TagKeys {
		if s := st.Get(key); s != "" {
			fn(key, s)
		}
	}
}

// parseTags reads a struct field's tags by the rule of ReadTags.
func parseTags(st reflect.StructTag) tag {
	var t tag
	ReadTags(st, func(_, s string) { t.parse(s) })
	t.raw = rawOptions(st)
	return t
}

// elemTag is the tag attributevalue encodes elements of lists, sets and
// maps with.
func (t tag) elemTag() tag {
	return tag{omitEmpty: t.omitEmptyElem, omitEmptyElem: t.omitEmptyElem, nullEmpty: t.nullEmptyElem}
}

// node is the compiled form of one Go type at one position (its tag).
type node struct {
	kind   kind
	typ    reflect.Type
	size   uintptr
	tag    tag
	bits   int   // kInt, kUint, kFloat: 8..64
	elem   *node // kPtr, kSlice, kMap
	bytes  bool  // kSlice: elements are uint8 kind (B)
	fields []fieldNode
	byName map[string]int
	view   reflect.Type // kFallback: struct{ F typ `dynamo:"..."` }
	// raw: kText: the node of the same type as if it were not a text type
	// (a fallback when the codec cannot compile it), decoding stored values
	// other than S and B as attributevalue would.
	raw *node
	// text: kFallback: the value holds text types, so it goes to
	// attributevalue with its text options (avText, avTextDec).
	text bool
	// keyPlain: kMap with key type exactly string (typed fast paths).
	keyPlain bool
	// namesOK: kStruct: every attribute name is valid, non-empty UTF-8.
	namesOK bool
}

// fieldNode is one visible field of a struct node.
type fieldNode struct {
	name string
	hops []hop // offsets from the struct, through embedded pointers
	n    *node
}

// hop is one step of a field path: add off; when deref, the field there is
// a pointer to an embedded struct, followed (nil: the field is absent).
type hop struct {
	off   uintptr
	deref bool
	typ   reflect.Type // deref: the embedded struct type (for allocation)
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	marshalerType   = reflect.TypeFor[attributevalue.Marshaler]()
	unmarshalerType = reflect.TypeFor[attributevalue.Unmarshaler]()
	numbererType    = reflect.TypeFor[interface {
		Float64() (float64, error)
		Int64() (int64, error)
		String() string
	}]()
)

type builder struct {
	onPath map[reflect.Type]bool
	// open are the struct nodes being built, so that a recursive type
	// refers to its own node (the node graph then has cycles; values,
	// which checkGo keeps acyclic, and items do not).
	open map[openKey]*node
	// rawText is the text type being compiled as if it were not one (a
	// kText node's raw).
	rawText reflect.Type
	clash   string // Struct.clash
}

// custom reports whether values of t (or pointers to them) have a method
// attributevalue calls instead of encoding or decoding them itself.
func custom(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(marshalerType) || pt.Implements(marshalerType) ||
		t.Implements(unmarshalerType) || pt.Implements(unmarshalerType)
}

// compile returns the node of type t at a position with tag tg, or nil when
// the codec cannot handle it. addressable says whether values at the
// position are addressable in attributevalue's walk (struct fields of an
// addressable struct, pointer targets, slice elements; not map values): only
// there may a struct hand fields to attributevalue.
func (b *builder) compile(t reflect.Type, tg tag, addressable bool) *node {
	if custom(t) {
		return nil
	}
	n := &node{typ: t, size: t.Size(), tag: tg}
	if t != b.rawText && IsText(t) {
		return b.compileText(n, addressable)
	}
	switch t.Kind() {
	case reflect.String:
		if t.Implements(numbererType) {
			return nil
		}
		n.kind = kString
	case reflect.Bool:
		n.kind = kBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n.kind, n.bits = kInt, int(t.Size()*8)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n.kind, n.bits = kUint, int(t.Size()*8)
	case reflect.Float32, reflect.Float64:
		n.kind, n.bits = kFloat, int(t.Size()*8)
	case reflect.Pointer:
		et := t.Elem()
		if et.Kind() == reflect.Pointer || et.Kind() == reflect.Interface {
			return nil
		}
		e := b.compile(et, tg, true)
		if e == nil {
			return nil
		}
		n.kind, n.elem = kPtr, e
	case reflect.Slice:
		et := t.Elem()
		if et.Kind() == reflect.Uint8 {
			n.bytes = true
		}
		e := b.compile(et, tg.elemTag(), true)
		if e == nil {
			return nil
		}
		n.kind, n.elem = kSlice, e
	case reflect.Map:
		kt := t.Key()
		if kt.Kind() != reflect.String || kt.NumMethod() > 0 || reflect.PointerTo(kt).NumMethod() > 0 {
			return nil
		}
		e := b.compile(t.Elem(), tg.elemTag(), false)
		if e == nil || !e.pure(map[*node]bool{}) {
			return nil
		}
		n.kind, n.elem = kMap, e
		n.keyPlain = kt == reflect.TypeFor[string]()
	case reflect.Struct:
		return b.compileStruct(n, addressable)
	default:
		return nil
	}
	return n
}

// compileText completes n, of a type with text methods, as a kText node:
// its raw node is how the type's kind alone would encode it, used where
// the text methods do not apply.
func (b *builder) compileText(n *node, addressable bool) *node {
	t := n.typ
	n.kind = kText
	saved := b.rawText
	b.rawText = t
	n.raw = b.compile(t, n.tag, addressable)
	b.rawText = saved
	if n.raw == nil {
		n.raw = fallbackNode(t, n.tag)
	}
	return n
}

// compileStruct completes n, of a struct type, as a kTime or kStruct node;
// for a recursive type, it returns the node already open for it. nil: the
// type is left to attributevalue.
func (b *builder) compileStruct(n *node, addressable bool) *node {
	t := n.typ
	if t == timeType {
		n.kind = kTime
		return n
	}
	if t.ConvertibleTo(timeType) {
		return nil
	}
	key := openKey{t, addressable}
	if o := b.open[key]; o != nil {
		return o // a recursive type: the node being built, completed below
	}
	if b.onPath[t] {
		return nil // open in the other position kind: attributevalue's
	}
	b.onPath[t] = true
	b.open[key] = n
	defer delete(b.onPath, t)
	defer delete(b.open, key)
	if !b.structFields(n, t, addressable) {
		return nil
	}
	n.kind = kStruct
	return n
}

// openKey is a struct type at a position kind (addressable or not).
type openKey struct {
	t           reflect.Type
	addressable bool
}

// pure reports whether n hands nothing to attributevalue. A node still
// being built (kind 0) is not known to be pure; seen breaks cycles.
func (n *node) pure(seen map[*node]bool) bool {
	if seen[n] {
		return true
	}
	seen[n] = true
	switch n.kind {
	case 0, kFallback:
		return false
	case kPtr, kSlice, kMap:
		return n.elem.pure(seen)
	case kStruct:
		for i := range n.fields {
			if !n.fields[i].n.pure(seen) {
				return false
			}
		}
	}
	return true
}

// structFields compiles the visible fields of struct type t into n.
func (b *builder) structFields(n *node, t reflect.Type, addressable bool) bool {
	fs, ok := visibleFields(t)
	if !ok {
		return false
	}
	n.byName = make(map[string]int, len(fs))
	n.namesOK = true
	for _, f := range fs {
		hops, ok := hopsOf(t, f.Index)
		if !ok {
			return false
		}
		fn := b.compile(f.Type, f.tag, addressable)
		if fn == nil {
			if !addressable {
				return false
			}
			fn = fallbackNode(f.Type, f.tag)
			if r := ReachOf(f.Type); r.Text != nil {
				// Text types inside it are stored as text too.
				fn.text = true
				if r.Clash != nil && b.clash == "" {
					b.clash = fmt.Sprintf("field %s (%s) holds %s at %q, stored as text, and %s at %q, which attributevalue would then store otherwise",
						f.Name, f.Type, r.Text, r.TextPath, r.Clash, r.ClashPath)
				}
			}
		}
		if !ValidName(f.Name) {
			n.namesOK = false
		}
		n.byName[f.Name] = len(n.fields)
		n.fields = append(n.fields, fieldNode{name: f.Name, hops: hops, n: fn})
	}
	return true
}

// fallbackNode is a field attributevalue encodes and decodes: its memory is
// viewed as struct{ F T `dynamo:"f,<options>"` }, which has the layout of T.
func fallbackNode(t reflect.Type, tg tag) *node {
	view := reflect.StructOf([]reflect.StructField{{
		Name: "F",
		Type: t,
		Tag:  reflect.StructTag(TagKey + ":" + strconv.Quote("f"+tg.raw)),
	}})
	return &node{kind: kFallback, typ: t, size: t.Size(), tag: tg, view: view}
}

// hopsOf turns a field index path into offsets, following embedded
// pointers. It refuses paths through embedded pointers to unexported
// struct types, which attributevalue's decoder cannot allocate.
func hopsOf(t reflect.Type, index []int) ([]hop, bool) {
	var hops []hop
	var off uintptr
	for i, x := range index {
		if i > 0 && t.Kind() == reflect.Pointer {
			hops = append(hops, hop{off: off, deref: true, typ: t.Elem()})
			off = 0
			t = t.Elem()
		}
		sf := t.Field(x)
		if i < len(index)-1 && sf.Type.Kind() == reflect.Pointer && !sf.IsExported() {
			return nil, false
		}
		off += sf.Offset
		t = sf.Type
	}
	return append(hops, hop{off: off}), true
}

// FieldState says what attributevalue does with a struct field (Layout).
type FieldState uint8

const (
	// Visible: the field is an attribute of the item.
	Visible FieldState = iota
	// Shadowed: another field of the same name hides it (Go's rules for
	// embedded fields, ties broken by depth, then by a name given in a
	// tag), or ties with it, which leaves both out: it is not stored.
	Shadowed
	// Skipped: its tags leave it out ("-").
	Skipped
	// Unexported: an unexported field attributevalue does not read (not
	// embedded), or an unexported embedded type it does not flatten
	// (Layout.Opaque).
	Unexported
	// Embedded: an embedded struct (or pointer to one) without a name in
	// its tags: its fields follow it in Layout.All, flattened into the
	// item, and its own options do nothing.
	Embedded
)

// Field is one struct field as attributevalue (with TagKey "dynamo") sees
// it.
type Field struct {
	// Name is the attribute name (Visible, Shadowed): the name the tags
	// give (ReadTags), else the Go field name.
	Name   string
	GoName string       // the Go path from the top struct, e.g. "Base.ID"
	Index  []int        // the reflect index path from the top struct
	Type   reflect.Type // as declared (an embedded pointer stays a pointer)
	ViaPtr bool         // Index passes through an embedded pointer
	// Anonymous reports an embedded field (Go's StructField.Anonymous).
	Anonymous bool
	// Tag is the field's whole struct tag, for the caller's own tags and
	// options.
	Tag   reflect.StructTag
	State FieldState

	tag     tag  // the options attributevalue reads
	fromTag bool // Name comes from a tag
}

// Layout is what attributevalue sees of a struct type (LayoutOf).
type Layout struct {
	// Fields are the Visible fields of All, in struct order: the attributes
	// of the item.
	Fields []Field
	// All are the fields the walk meets, in struct order, depth first: the
	// fields of an Embedded struct follow its entry (a struct embedded in
	// itself is not entered again).
	All []Field
	// Opaque reports an unexported embedded type attributevalue does not
	// flatten: it lists it and then panics reading it, so the codec leaves
	// the type to attributevalue whole.
	Opaque bool
}

var layouts sync.Map // reflect.Type → *Layout; immutable values

// LayoutOf returns the fields of struct type t, embedded structs
// flattened, computed once per type: the one list of which fields exist,
// under which name and with which options, that the codec and the mapper's
// walkers (schema, Java conversions, validation, conditions) read. The
// rules follow attributevalue v1.21's field.go (unionStructFields).
func LayoutOf(t reflect.Type) *Layout {
	if l, ok := layouts.Load(t); ok {
		return l.(*Layout)
	}
	l := &Layout{}
	if t.Kind() == reflect.Struct {
		l.walk(t, nil, "", false, map[reflect.Type]bool{})
		l.dominate()
	}
	actual, _ := layouts.LoadOrStore(t, l)
	return actual.(*Layout)
}

// walk appends the fields of struct type t at index to l.All. onPath cuts
// a struct embedded in itself; a struct embedded twice elsewhere is walked
// twice, its fields then tie (dominate).
func (l *Layout) walk(t reflect.Type, index []int, prefix string, viaPtr bool, onPath map[reflect.Type]bool) {
	if onPath[t] {
		return
	}
	onPath[t] = true
	defer delete(onPath, t)
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		idx := make([]int, len(index)+1)
		copy(idx, index)
		idx[len(index)] = i
		f := Field{Name: sf.Name, GoName: prefix + sf.Name, Index: idx, Type: sf.Type, ViaPtr: viaPtr, Anonymous: sf.Anonymous, Tag: sf.Tag}
		switch {
		case !sf.IsExported() && !sf.Anonymous:
			f.State = Unexported
			l.All = append(l.All, f)
			continue
		}
		f.tag = parseTags(sf.Tag)
		if f.tag.ignore {
			f.State = Skipped
			l.All = append(l.All, f)
			continue
		}
		if f.tag.name != "" {
			f.Name, f.fromTag = f.tag.name, true
		}
		et, ptr := sf.Type, false
		if et.Name() == "" && et.Kind() == reflect.Pointer {
			et, ptr = et.Elem(), true
		}
		switch {
		case sf.Anonymous && !f.fromTag && et.Kind() == reflect.Struct:
			f.State = Embedded
			l.All = append(l.All, f)
			l.walk(et, idx, f.GoName+".", viaPtr || ptr, onPath)
		case !sf.IsExported():
			f.State = Unexported
			l.Opaque = true
			l.All = append(l.All, f)
		default:
			l.All = append(l.All, f) // Visible until dominate says otherwise
		}
	}
}

// dominate marks Shadowed the fields that another field of the same name
// hides, as attributevalue's dominantField does: of the fields named alike
// the shallowest wins; at one depth the only one named by a tag, else the
// only one; a tie leaves them all out. It then collects l.Fields.
func (l *Layout) dominate() {
	byName := map[string][]int{}
	for i := range l.All {
		if l.All[i].State == Visible {
			byName[l.All[i].Name] = append(byName[l.All[i].Name], i)
		}
	}
	for _, group := range byName {
		if len(group) == 1 {
			continue
		}
		depth := len(l.All[group[0]].Index)
		for _, i := range group {
			depth = min(depth, len(l.All[i].Index))
		}
		win, tagged, shallow := -1, 0, 0
		for _, i := range group {
			if f := &l.All[i]; len(f.Index) == depth {
				shallow++
				if f.fromTag {
					tagged++
					win = i
				}
			}
		}
		if tagged == 0 && shallow == 1 {
			for _, i := range group {
				if len(l.All[i].Index) == depth {
					win = i
				}
			}
		} else if tagged != 1 {
			win = -1
		}
		for _, i := range group {
			if i != win {
				l.All[i].State = Shadowed
			}
		}
	}
	for _, f := range l.All {
		if f.State == Visible {
			l.Fields = append(l.Fields, f)
		}
	}
}

// visibleFields returns the attributes of struct type t (LayoutOf), and
// false when the codec must leave t to attributevalue (Layout.Opaque).
func visibleFields(t reflect.Type) ([]Field, bool) {
	l := LayoutOf(t)
	return l.Fields, !l.Opaque
}

// rawOptions returns the options of the tags attributevalue reads for a
// field (ReadTags), as ",opt,opt", for a fallback's view type.
func rawOptions(st reflect.StructTag) string {
	var opts []string
	ReadTags(st, func(_, s string) {
		if _, rest, ok := strings.Cut(s, ","); ok {
			opts = append(opts, rest)
		}
	})
	if len(opts) == 0 {
		return ""
	}
	return "," + strings.Join(opts, ",")
}

// ---- encoding ----

type encState struct {
	enc   *attributevalue.Encoder
	check Check
	clean bool
	// Attribute values and number and time strings are carved out of
	// chunks allocated a few at a time instead of one by one. Nothing
	// written to a chunk is written again, so what was handed out stays.
	ss    []types.AttributeValueMemberS
	ns    []types.AttributeValueMemberN
	bools []types.AttributeValueMemberBOOL
	buf   []byte
	// few: the item is encoded over a previous one (EncodeOver), whose
	// values most fields share, so the first chunk of each kind and the
	// first buffer are small (firstChunk, firstBuf): an Update changing one
	// number makes one N.
	few bool
}

const (
	chunk      = 8
	firstChunk = 2
	firstBuf   = 48
)

// size returns the capacity of a new chunk when the last one, of capacity
// had, is full.
func (e *encState) size(had int) int {
	if e.few && had == 0 {
		return firstChunk
	}
	return chunk
}

func (e *encState) newS(s string) *types.AttributeValueMemberS {
	if len(e.ss) == cap(e.ss) {
		e.ss = make([]types.AttributeValueMemberS, 0, e.size(cap(e.ss)))
	}
	e.ss = append(e.ss, types.AttributeValueMemberS{Value: s})
	return &e.ss[len(e.ss)-1]
}

func (e *encState) newN(s string) *types.AttributeValueMemberN {
	if len(e.ns) == cap(e.ns) {
		e.ns = make([]types.AttributeValueMemberN, 0, e.size(cap(e.ns)))
	}
	e.ns = append(e.ns, types.AttributeValueMemberN{Value: s})
	return &e.ns[len(e.ns)-1]
}

func (e *encState) newBool(b bool) *types.AttributeValueMemberBOOL {
	if len(e.bools) == cap(e.bools) {
		e.bools = make([]types.AttributeValueMemberBOOL, 0, e.size(cap(e.bools)))
	}
	e.bools = append(e.bools, types.AttributeValueMemberBOOL{Value: b})
	return &e.bools[len(e.bools)-1]
}

// room makes room for n more bytes in buf and returns where they start.
func (e *encState) room(n int) int {
	if cap(e.buf)-len(e.buf) < n {
		size := 256
		if e.few && cap(e.buf) == 0 {
			size = firstBuf
		}
		e.buf = make([]byte, 0, max(size, n))
	}
	return len(e.buf)
}

// str returns the bytes of buf from start as a string (they are never
// written again).
func (e *encState) str(start int) string {
	return unsafe.String(&e.buf[start], len(e.buf)-start)
}

// scalarAV returns av as an S (asString) or an N.
func (e *encState) numAV(s string, asString bool) types.AttributeValue {
	if asString {
		return e.newS(s)
	}
	return e.newN(s)
}

var errEncode = errors.New("codec: attributevalue refuses this value")

func nullAV() types.AttributeValue { return &types.AttributeValueMemberNULL{Value: true} }

// isZero is attributevalue's isZeroValue for the value at p.
func (n *node) isZero(p unsafe.Pointer) bool {
	switch n.kind {
	case kString:
		return len(*(*string)(p)) == 0
	case kBool:
		return !*(*bool)(p)
	case kInt:
		return readInt(p, n.bits) == 0
	case kUint:
		return readUint(p, n.bits) == 0
	case kFloat:
		return readFloat(p, n.bits) == 0
	case kPtr:
		return *(*unsafe.Pointer)(p) == nil
	case kSlice:
		return (*sliceHeader)(p).data == nil
	case kMap:
		return *(*unsafe.Pointer)(p) == nil
	case kText:
		return textZero(reflect.NewAt(n.typ, p).Elem())
	}
	return false
}

// textZero is attributevalue's isZeroValue for a value of a text type.
func textZero(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.String:
		return v.Len() == 0
	case reflect.Map, reflect.Slice:
		return v.IsNil()
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	}
	return false
}

// textNullable reports whether a zero value of text type t is NULL
// (attributevalue's isNullableZeroValue: a nil map or slice).
func textNullable(t reflect.Type) bool {
	return t.Kind() == reflect.Map || t.Kind() == reflect.Slice
}

type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func readInt(p unsafe.Pointer, bits int) int64 {
	switch bits {
	case 8:
		return int64(*(*int8)(p))
	case 16:
		return int64(*(*int16)(p))
	case 32:
		return int64(*(*int32)(p))
	}
	return *(*int64)(p)
}

func readUint(p unsafe.Pointer, bits int) uint64 {
	switch bits {
	case 8:
		return uint64(*(*uint8)(p))
	case 16:
		return uint64(*(*uint16)(p))
	case 32:
		return uint64(*(*uint32)(p))
	}
	return *(*uint64)(p)
}

func readFloat(p unsafe.Pointer, bits int) float64 {
	if bits == 32 {
		return float64(*(*float32)(p))
	}
	return *(*float64)(p)
}

// value encodes the value at p as attributevalue's encode(v, n.tag) does;
// nil means omitted. level is the level of the value's container.
func (e *encState) value(n *node, p unsafe.Pointer, level int) (types.AttributeValue, error) {
	if n.kind == kFallback {
		return e.fallback(n, p, level)
	}
	if n.isZero(p) {
		tg := &n.tag
		if tg.omitEmpty && tg.nullEmpty {
			return nil, errEncode
		}
		if tg.omitEmpty {
			return nil, nil
		}
		switch n.kind {
		case kPtr, kSlice, kMap:
			return nullAV(), nil
		case kText:
			if textNullable(n.typ) {
				return nullAV(), nil
			}
		}
		if tg.nullEmpty {
			return nullAV(), nil
		}
	}
	if n.kind == kPtr {
		return e.body(n.elem, *(*unsafe.Pointer)(p), level)
	}
	return e.body(n, p, level)
}

// body encodes the value at p after the zero check (what attributevalue
// does after valueElem).
func (e *encState) body(n *node, p unsafe.Pointer, level int) (types.AttributeValue, error) {
	tg := &n.tag
	switch n.kind {
	case kString:
		s := *(*string)(p)
		if e.clean && !utf8.ValidString(s) {
			e.clean = false
		}
		return e.newS(s), nil
	case kBool:
		return e.newBool(*(*bool)(p)), nil
	case kInt, kUint, kFloat:
		start := e.room(32)
		e.buf = n.appendNum(e.buf, p)
		av := e.numAV(e.str(start), tg.asString)
		e.checkFloat(n, p, av, level)
		return av, nil
	case kTime:
		t := *(*time.Time)(p)
		if tg.unixTime {
			start := e.room(20)
			e.buf = strconv.AppendInt(e.buf, t.Unix(), 10)
			return e.newN(e.str(start)), nil
		}
		start := e.room(40)
		e.buf = t.AppendFormat(e.buf, time.RFC3339Nano)
		return e.newS(e.str(start)), nil
	case kStruct:
		if level+1 > MaxNesting {
			e.clean = false
		}
		m, err := e.structBody(n, p, level+1)
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	case kMap:
		return e.mapBody(n, p, level)
	case kSlice:
		return e.sliceBody(n, p, level)
	case kPtr: // a pointer as an element: value handles fields
		return e.value(n, p, level)
	case kText:
		b, err := reflect.NewAt(n.typ, p).Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			return nil, &TextError{Type: n.typ, Method: "MarshalText", Err: err}
		}
		s := string(b)
		if e.clean && !utf8.ValidString(s) {
			e.clean = false
		}
		return e.newS(s), nil
	}
	return nil, errEncode
}

// appendNum appends the text of the number at p (n of kind kInt, kUint or
// kFloat) to b.
func (n *node) appendNum(b []byte, p unsafe.Pointer) []byte {
	switch n.kind {
	case kInt:
		return strconv.AppendInt(b, readInt(p, n.bits), 10)
	case kUint:
		return strconv.AppendUint(b, readUint(p, n.bits), 10)
	}
	return strconv.AppendFloat(b, readFloat(p, n.bits), 'f', -1, n.bits)
}

// checkFloat lets the caller's check decide on av, the N made of a float at
// p that DynamoDB may refuse (and word the error); nothing for other kinds.
func (e *encState) checkFloat(n *node, p unsafe.Pointer, av types.AttributeValue, level int) {
	if n.kind != kFloat || n.tag.asString || !e.clean {
		return
	}
	if f := readFloat(p, n.bits); math.IsNaN(f) || math.IsInf(f, 0) || f != 0 && (math.Abs(f) >= 1e125 || math.Abs(f) < 1e-129) {
		e.clean = e.check(av, level)
	}
}

// same reports whether old is the value value(n, p, level) would make of
// the field at p, for a field of a string, bool or number kind (false for
// any other, and wherever value's zero rules apply), accounting for it in
// e as body would have (e.clean).
func (e *encState) same(n *node, p unsafe.Pointer, old types.AttributeValue, level int) bool {
	switch n.kind {
	case kString, kBool, kInt, kUint, kFloat, kTime:
	case kSlice, kMap:
		if n.isZero(p) {
			return false // value's rules, not body's
		}
		return e.sameContainer(n, p, old, level)
	default:
		return false
	}
	if (n.tag.omitEmpty || n.tag.nullEmpty) && n.isZero(p) {
		return false // value's rules, not body's
	}
	switch n.kind {
	case kTime:
		t := *(*time.Time)(p)
		if n.tag.unixTime {
			var buf [24]byte
			o, ok := old.(*types.AttributeValueMemberN)
			return ok && string(strconv.AppendInt(buf[:0], t.Unix(), 10)) == o.Value
		}
		o, ok := old.(*types.AttributeValueMemberS)
		return ok && sameTimeText(t, o.Value) // value's RFC3339Nano text, read rather than written
	case kString:
		o, ok := old.(*types.AttributeValueMemberS)
		s := *(*string)(p)
		if !ok || o.Value != s {
			return false
		}
		if e.clean && !utf8.ValidString(s) {
			e.clean = false
		}
		return true
	case kBool:
		o, ok := old.(*types.AttributeValueMemberBOOL)
		return ok && o.Value == *(*bool)(p)
	}
	var text string
	if n.tag.asString {
		o, ok := old.(*types.AttributeValueMemberS)
		if !ok {
			return false
		}
		text = o.Value
	} else {
		o, ok := old.(*types.AttributeValueMemberN)
		if !ok {
			return false
		}
		text = o.Value
	}
	var buf [32]byte
	if string(n.appendNum(buf[:0], p)) != text {
		return false
	}
	e.checkFloat(n, p, old, level)
	return true
}

// sameContainer is same for the non-nil slice or map at p of two shapes
// body makes without calling the caller's code: a string set of plain
// strings (strSet) and a map[string]string without element tags (mapBody).
func (e *encState) sameContainer(n *node, p unsafe.Pointer, old types.AttributeValue, level int) bool {
	el := n.elem
	if el.kind != kString || el.tag.omitEmpty || el.tag.nullEmpty {
		return false
	}
	switch {
	case n.kind == kSlice && n.tag.strSet && !n.bytes && !n.tag.binSet && !n.tag.numSet:
		h := (*sliceHeader)(p)
		o, ok := old.(*types.AttributeValueMemberSS)
		if !ok || h.len == 0 || len(o.Value) != h.len {
			return false
		}
		for i, s := range unsafe.Slice((*string)(h.data), h.len) {
			if o.Value[i] != s {
				return false
			}
		}
		e.checked(old, level)
		return true
	case n.kind == kMap && n.keyPlain && el.typ == reflect.TypeFor[string]():
		src := *(*map[string]string)(p)
		o, ok := old.(*types.AttributeValueMemberM)
		if !ok || len(o.Value) != len(src) {
			return false
		}
		clean := e.clean && level+1 <= MaxNesting
		for k, s := range src {
			ov, ok := o.Value[k].(*types.AttributeValueMemberS)
			if k == "" || !ok || ov.Value != s {
				return false
			}
			if clean && (!ValidName(k) || !utf8.ValidString(s)) {
				clean = false
			}
		}
		e.clean = clean
		return true
	}
	return false
}

// structBody encodes the fields of the struct at p; level is the level of
// the map it becomes.
func (e *encState) structBody(n *node, p unsafe.Pointer, level int) (map[string]types.AttributeValue, error) {
	if !n.namesOK {
		e.clean = false
	}
	m := make(map[string]types.AttributeValue, len(n.fields))
	for i := range n.fields {
		f := &n.fields[i]
		fp, ok := fieldPtr(p, f.hops)
		if !ok {
			continue
		}
		av, err := e.value(f.n, fp, level)
		if err != nil {
			return nil, atAttr(err, f.name)
		}
		if av != nil {
			m[f.name] = av
		}
	}
	return m, nil
}

// fieldPtr follows a field path from the struct at p; false at a nil
// embedded pointer.
func fieldPtr(p unsafe.Pointer, hops []hop) (unsafe.Pointer, bool) {
	for _, h := range hops {
		p = unsafe.Add(p, h.off)
		if h.deref {
			p = *(*unsafe.Pointer)(p)
			if p == nil {
				return nil, false
			}
		}
	}
	return p, true
}

func (e *encState) mapBody(n *node, p unsafe.Pointer, level int) (types.AttributeValue, error) {
	if level+1 > MaxNesting {
		e.clean = false
	}
	if n.keyPlain && n.elem.kind == kString && n.elem.typ == reflect.TypeFor[string]() {
		src := *(*map[string]string)(p)
		out := make(map[string]types.AttributeValue, len(src))
		for k, s := range src {
			if k == "" {
				return nil, errEncode
			}
			if s == "" && n.elem.tag.omitEmpty && n.elem.tag.nullEmpty {
				return nil, errEncode
			}
			if s == "" && n.elem.tag.omitEmpty {
				continue
			}
			if e.clean && (!ValidName(k) || !utf8.ValidString(s)) {
				e.clean = false
			}
			if s == "" && n.elem.tag.nullEmpty {
				out[k] = nullAV()
				continue
			}
			out[k] = e.newS(s)
		}
		return &types.AttributeValueMemberM{Value: out}, nil
	}
	mv := reflect.NewAt(n.typ, p).Elem()
	out := make(map[string]types.AttributeValue, mv.Len())
	tmp := reflect.New(n.elem.typ).Elem()
	tp := tmp.Addr().UnsafePointer()
	it := mv.MapRange()
	for it.Next() {
		k := it.Key().String()
		if k == "" {
			return nil, errEncode
		}
		if e.clean && !ValidName(k) {
			e.clean = false
		}
		tmp.SetIterValue(it)
		av, err := e.value(n.elem, tp, level+1)
		if err != nil {
			return nil, err
		}
		if av != nil {
			out[k] = av
		}
	}
	return &types.AttributeValueMemberM{Value: out}, nil
}

func (e *encState) sliceBody(n *node, p unsafe.Pointer, level int) (types.AttributeValue, error) {
	h := (*sliceHeader)(p)
	if n.bytes {
		b := make([]byte, h.len)
		copy(b, unsafe.Slice((*byte)(h.data), h.len))
		return &types.AttributeValueMemberB{Value: b}, nil
	}
	tg := &n.tag
	switch {
	case tg.binSet || n.typ == reflect.TypeFor[[][]byte]():
		return e.binSet(n, h, level)
	case tg.numSet:
		return e.numSet(n, h, level)
	case tg.strSet:
		return e.strSet(n, h, level)
	}
	if level+1 > MaxNesting {
		e.clean = false
	}
	el := n.elem
	l := make([]types.AttributeValue, 0, h.len)
	for i := 0; i < h.len; i++ {
		av, err := e.value(el, unsafe.Add(h.data, uintptr(i)*el.size), level+1)
		if err != nil {
			return nil, err
		}
		if av != nil {
			l = append(l, av)
		}
	}
	return &types.AttributeValueMemberL{Value: l}, nil
}

// binSet encodes the slice h of n as a BS (NULL when empty): each element
// must encode to a B or be left out.
func (e *encState) binSet(n *node, h *sliceHeader, level int) (types.AttributeValue, error) {
	if h.len == 0 {
		return nullAV(), nil
	}
	bs, err := setElems(e, n, h, level, func(av types.AttributeValue) ([]byte, bool) {
		if b, ok := av.(*types.AttributeValueMemberB); ok && b.Value != nil {
			return b.Value, true
		}
		return nil, false
	})
	if err != nil {
		return nil, err
	}
	return e.checked(&types.AttributeValueMemberBS{Value: bs}, level), nil
}

// numSet encodes the slice h of n as an NS (NULL when empty): each element
// must encode to an N or be left out.
func (e *encState) numSet(n *node, h *sliceHeader, level int) (types.AttributeValue, error) {
	if h.len == 0 {
		return nullAV(), nil
	}
	ns, err := setElems(e, n, h, level, func(av types.AttributeValue) (string, bool) {
		if nv, ok := av.(*types.AttributeValueMemberN); ok {
			return nv.Value, true
		}
		return "", false
	})
	if err != nil {
		return nil, err
	}
	return e.checked(&types.AttributeValueMemberNS{Value: ns}, level), nil
}

// strSet encodes the slice h of n as an SS (NULL when empty): each element
// must encode to an S or be left out; plain strings are copied as they are.
func (e *encState) strSet(n *node, h *sliceHeader, level int) (types.AttributeValue, error) {
	if h.len == 0 {
		return nullAV(), nil
	}
	if el := n.elem; el.kind == kString && !el.tag.omitEmpty && !el.tag.nullEmpty {
		ss := append(make([]string, 0, h.len), unsafe.Slice((*string)(h.data), h.len)...)
		return e.checked(&types.AttributeValueMemberSS{Value: ss}, level), nil
	}
	ss, err := setElems(e, n, h, level, func(av types.AttributeValue) (string, bool) {
		if sv, ok := av.(*types.AttributeValueMemberS); ok {
			return sv.Value, true
		}
		return "", false
	})
	if err != nil {
		return nil, err
	}
	return e.checked(&types.AttributeValueMemberSS{Value: ss}, level), nil
}

// setElems encodes the elements of the slice h of n for a set: elements
// that encode to nothing are left out, the others must be the member pick
// accepts (else errEncode), and pick's value of each is kept.
func setElems[E any](e *encState, n *node, h *sliceHeader, level int, pick func(types.AttributeValue) (E, bool)) ([]E, error) {
	el := n.elem
	out := make([]E, 0, h.len)
	for i := 0; i < h.len; i++ {
		av, err := e.value(el, unsafe.Add(h.data, uintptr(i)*el.size), level+1)
		if err != nil {
			return nil, err
		}
		if av == nil {
			continue
		}
		v, ok := pick(av)
		if !ok {
			return nil, errEncode
		}
		out = append(out, v)
	}
	return out, nil
}

// checked hands a set to the caller's check.
func (e *encState) checked(av types.AttributeValue, level int) types.AttributeValue {
	if e.clean {
		e.clean = e.check(av, level)
	}
	return av
}

// fallback encodes the field at p with attributevalue, through its view.
// What a type's own MarshalDynamoDBAttributeValue returns may be a value it
// keeps: the item gets a copy (avs.Clone), as it gets a copy of a []byte,
// so that nothing the mapper keeps (a key's last item) changes with it.
func (e *encState) fallback(n *node, p unsafe.Pointer, level int) (types.AttributeValue, error) {
	enc := e.enc
	if n.text {
		enc = avText
	}
	av, err := SafeEncode(enc, reflect.NewAt(n.view, p).Interface())
	if err != nil {
		return nil, err
	}
	m, ok := av.(*types.AttributeValueMemberM)
	if !ok {
		return nil, errEncode
	}
	v, ok := m.Value["f"]
	if !ok {
		return nil, nil
	}
	v = avs.Clone(v)
	if e.clean {
		e.clean = e.check(v, level)
	}
	return v, nil
}

// ---- decoding ----

type decState struct {
	dec *attributevalue.Decoder
}

// errDecode stands for whatever error attributevalue returns: the caller
// asks it for the real one.
var errDecode = errors.New("codec: attributevalue refuses this item")

// structFields decodes the attributes of m into the struct at p, as
// attributevalue's decodeMap does for a struct.
func (d *decState) structFields(n *node, m map[string]types.AttributeValue, p unsafe.Pointer) error {
	for k, av := range m {
		i, ok := n.byName[k]
		if !ok {
			i = -1
			for j := range n.fields {
				if strings.EqualFold(n.fields[j].name, k) {
					if _, exact := m[n.fields[j].name]; !exact {
						// An attribute named exactly as the field
						// wins over one differing in case, whatever
						// the order of the map: attributevalue takes
						// whichever comes last.
						i = j
					}
					break
				}
			}
			if i < 0 {
				continue
			}
		}
		f := &n.fields[i]
		fp := p
		for _, h := range f.hops {
			fp = unsafe.Add(fp, h.off)
			if h.deref {
				q := (*unsafe.Pointer)(fp)
				if *q == nil {
					*q = reflect.New(h.typ).UnsafePointer()
				}
				fp = *q
			}
		}
		if err := d.value(f.n, av, fp); err != nil {
			return atAttr(err, f.name)
		}
	}
	return nil
}

// value decodes av into the value at p as attributevalue's decode(av, v,
// n.tag) does.
func (d *decState) value(n *node, av types.AttributeValue, p unsafe.Pointer) error {
	if n.kind == kFallback {
		return d.fallback(n, av, p)
	}
	if n.kind == kText {
		switch v := av.(type) {
		case nil, *types.AttributeValueMemberNULL:
			typedClear(n, p)
			return nil
		case *types.AttributeValueMemberS:
			return unmarshalText(n.typ, v.Value, p)
		case *types.AttributeValueMemberB:
			return d.textBin(n, v.Value, p)
		}
		return d.value(n.raw, av, p) // as the type's kind decodes it
	}
	switch v := av.(type) {
	case nil, *types.AttributeValueMemberNULL:
		typedClear(n, p)
		return nil
	case *types.AttributeValueMemberS:
		return d.str(n, v.Value, p, n.tag.asString)
	case *types.AttributeValueMemberN:
		return d.num(n, v.Value, p)
	case *types.AttributeValueMemberBOOL:
		switch n.kind {
		case kBool:
			*(*bool)(p) = v.Value
			return nil
		case kPtr:
			return d.value(n.elem, av, deref(n, p))
		}
		return errDecode
	case *types.AttributeValueMemberB:
		return d.bin(n, v.Value, p)
	case *types.AttributeValueMemberM:
		switch n.kind {
		case kPtr:
			return d.value(n.elem, av, deref(n, p))
		case kStruct:
			return d.structFields(n, v.Value, p)
		case kTime:
			return nil // a struct without fields attributevalue sees
		case kMap:
			return d.mapValue(n, v.Value, p)
		}
		return errDecode
	case *types.AttributeValueMemberL:
		return decodeElems(d, n, av, v.Value, p, d.value)
	case *types.AttributeValueMemberSS:
		return decodeElems(d, n, av, v.Value, p, d.setStr)
	case *types.AttributeValueMemberNS:
		return decodeElems(d, n, av, v.Value, p, d.num)
	case *types.AttributeValueMemberBS:
		return decodeElems(d, n, av, v.Value, p, d.bin)
	}
	return errDecode
}

// decodeElems decodes a list or a set, av, whose elements are elems, into
// the slice n at p (or into what the pointer n points to), each element
// with dec.
func decodeElems[E any](d *decState, n *node, av types.AttributeValue, elems []E, p unsafe.Pointer, dec func(*node, E, unsafe.Pointer) error) error {
	if n.kind == kPtr {
		return d.value(n.elem, av, deref(n, p))
	}
	if n.kind != kSlice {
		return errDecode
	}
	data := d.makeSlice(n, len(elems), p)
	for i, e := range elems {
		if err := dec(n.elem, e, unsafe.Add(data, uintptr(i)*n.elem.size)); err != nil {
			return err
		}
	}
	return nil
}

// setStr decodes an SS element.
func (d *decState) setStr(n *node, s string, p unsafe.Pointer) error {
	return d.str(n, s, p, false)
}

// deref returns the target of the pointer at p, allocating it when nil.
func deref(n *node, p unsafe.Pointer) unsafe.Pointer {
	q := (*unsafe.Pointer)(p)
	if *q == nil {
		*q = reflect.New(n.elem.typ).UnsafePointer()
	}
	return *q
}

// typedClear sets the value at p to its zero value.
func typedClear(n *node, p unsafe.Pointer) {
	reflect.NewAt(n.typ, p).Elem().SetZero()
}

// makeSlice stores a new slice of length ln (of n's type) at p and returns
// its data; as attributevalue does, the slice is non-nil even when empty.
func (d *decState) makeSlice(n *node, ln int, p unsafe.Pointer) unsafe.Pointer {
	s := reflect.MakeSlice(n.typ, ln, ln)
	reflect.NewAt(n.typ, p).Elem().Set(s)
	return (*sliceHeader)(p).data
}

// str decodes a string (an S, or an SS element) as decodeString does.
func (d *decState) str(n *node, s string, p unsafe.Pointer, asString bool) error {
	if n.kind == kText {
		return unmarshalText(n.typ, s, p)
	}
	if n.kind == kPtr && n.elem.kind == kText {
		return unmarshalText(n.elem.typ, s, deref(n, p))
	}
	if asString {
		return d.num(n, s, p)
	}
	switch n.kind {
	case kPtr:
		return d.str(n.elem, s, deref(n, p), asString)
	case kString:
		*(*string)(p) = s
		return nil
	case kTime:
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return errDecode
		}
		*(*time.Time)(p) = t
		return nil
	}
	return errDecode
}

// num decodes a number (an N, an NS element, or an S of a `string` field)
// as decodeNumber does.
func (d *decState) num(n *node, s string, p unsafe.Pointer) error {
	switch n.kind {
	case kText:
		if n.raw.kind == kFallback {
			return d.fallback(n.raw, &types.AttributeValueMemberN{Value: s}, p)
		}
		return d.num(n.raw, s, p)
	case kPtr:
		return d.num(n.elem, s, deref(n, p))
	case kString:
		*(*string)(p) = s
		return nil
	case kInt:
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return errDecode
		}
		switch n.bits {
		case 8:
			return store[int8](p, i)
		case 16:
			return store[int16](p, i)
		case 32:
			return store[int32](p, i)
		}
		*(*int64)(p) = i
		return nil
	case kUint:
		u, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return errDecode
		}
		switch n.bits {
		case 8:
			return store[uint8](p, u)
		case 16:
			return store[uint16](p, u)
		case 32:
			return store[uint32](p, u)
		}
		*(*uint64)(p) = u
		return nil
	case kFloat:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return errDecode
		}
		if n.bits == 32 {
			if a := math.Abs(f); math.MaxFloat32 < a && a <= math.MaxFloat64 {
				return errDecode
			}
			*(*float32)(p) = float32(f)
		} else {
			*(*float64)(p) = f
		}
		return nil
	case kTime:
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return errDecode
		}
		*(*time.Time)(p) = time.Unix(i, 0)
		return nil
	}
	return errDecode
}

// store stores x at p as an I, or fails with errDecode when it does not
// fit.
func store[I int8 | int16 | int32 | uint8 | uint16 | uint32, X int64 | uint64](p unsafe.Pointer, x X) error {
	if X(I(x)) != x {
		return errDecode
	}
	*(*I)(p) = I(x)
	return nil
}

// bin decodes a binary value (a B, or a BS element) as decodeBinary does.
func (d *decState) bin(n *node, b []byte, p unsafe.Pointer) error {
	switch n.kind {
	case kText:
		return d.textBin(n, b, p)
	case kPtr:
		return d.bin(n.elem, b, deref(n, p))
	case kSlice:
		if !n.bytes {
			return errDecode
		}
		data := d.makeSlice(n, len(b), p)
		copy(unsafe.Slice((*byte)(data), len(b)), b)
		return nil
	}
	return errDecode
}

func (d *decState) mapValue(n *node, m map[string]types.AttributeValue, p unsafe.Pointer) error {
	mv := reflect.NewAt(n.typ, p).Elem()
	if mv.IsNil() {
		mv.Set(reflect.MakeMapWithSize(n.typ, len(m)))
	}
	if n.keyPlain && n.elem.typ == reflect.TypeFor[string]() {
		dst := *(*map[string]string)(p)
		for k, av := range m {
			var s string
			switch v := av.(type) {
			case *types.AttributeValueMemberS:
				s = v.Value
			case *types.AttributeValueMemberN:
				s = v.Value
			case nil, *types.AttributeValueMemberNULL:
			default:
				return errDecode
			}
			dst[k] = s
		}
		return nil
	}
	kt := n.typ.Key()
	for k, av := range m {
		ev := reflect.New(n.elem.typ).Elem()
		if err := d.value(n.elem, av, ev.Addr().UnsafePointer()); err != nil {
			return err
		}
		kv := reflect.New(kt).Elem()
		kv.SetString(k)
		mv.SetMapIndex(kv, ev)
	}
	return nil
}

// fallback decodes av into the field at p with attributevalue, through its
// view. A type's own UnmarshalDynamoDBAttributeValue may keep the value it
// is given: it gets a copy (avs.Clone), so that the value stays the
// caller's alone — the item decoded may be one the mapper keeps and decodes
// again (a key's last item).
func (d *decState) fallback(n *node, av types.AttributeValue, p unsafe.Pointer) error {
	av = avs.Clone(av)
	m := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"f": av}}
	dec := d.dec
	if n.text {
		dec = avTextDec
	}
	if err := SafeDecode(dec, m, reflect.NewAt(n.view, p).Interface()); err != nil {
		return fmt.Errorf("%w: %w", errDecode, err)
	}
	return nil
}

// ---- text types ----

// TextError is a text type's MarshalText or UnmarshalText failing: the
// codec's own verdict, not one attributevalue would reach (it stores such
// types its own way).
type TextError struct {
	// Path is the attribute the value is in, as names of the maps on the
	// way ("kids.id"); "" when not known.
	Path   string
	Type   reflect.Type
	Method string // "MarshalText", "UnmarshalText", "UnmarshalBinary"; "" for a stored value of the wrong type
	Err    error
}

func (e *TextError) Error() string {
	var at string
	if e.Path != "" {
		at = fmt.Sprintf("attribute %q: ", e.Path)
	}
	if e.Method == "" {
		return fmt.Sprintf("%s%s: %v", at, e.Type, e.Err)
	}
	return fmt.Sprintf("%s%s.%s: %v", at, e.Type, e.Method, e.Err)
}

// atAttr prefixes the path of a *TextError with the attribute name.
func atAttr(err error, name string) error {
	if te, ok := err.(*TextError); ok {
		if te.Path == "" {
			te.Path = name
		} else {
			te.Path = name + "." + te.Path
		}
	}
	return err
}

func (e *TextError) Unwrap() error { return e.Err }

// unmarshalText decodes the text s into the value of text type t at p.
func unmarshalText(t reflect.Type, s string, p unsafe.Pointer) error {
	if err := reflect.NewAt(t, p).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
		return &TextError{Type: t, Method: "UnmarshalText", Err: err}
	}
	return nil
}

// textBin decodes a binary value into a text type, as attributevalue's
// decoder with UseEncodingUnmarshalers does: through UnmarshalBinary when
// the type has it, else as bytes into a byte slice or a byte array of the
// same length (which is how byte types were stored before they were text).
func (d *decState) textBin(n *node, b []byte, p unsafe.Pointer) error {
	pv := reflect.NewAt(n.typ, p)
	if u, ok := pv.Interface().(encoding.BinaryUnmarshaler); ok {
		if err := u.UnmarshalBinary(b); err != nil {
			return &TextError{Type: n.typ, Method: "UnmarshalBinary", Err: err}
		}
		return nil
	}
	v := pv.Elem()
	switch v.Kind() {
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() != reflect.Uint8 {
			break
		}
		if v.Kind() == reflect.Slice {
			s := reflect.MakeSlice(n.typ, len(b), len(b))
			reflect.Copy(s, reflect.ValueOf(b))
			v.Set(s)
			return nil
		}
		if v.Len() != len(b) {
			return &TextError{Type: n.typ, Err: fmt.Errorf("a binary value of %d bytes does not fit a [%d]byte", len(b), v.Len())}
		}
		reflect.Copy(v, reflect.ValueOf(b))
		return nil
	}
	return &TextError{Type: n.typ, Err: errors.New("a binary value cannot be read into a type stored as text (S)")}
}

// SafeDecode is dec.Decode(av, out), with a panic inside attributevalue
// turned into an error: it panics on a binary value longer or shorter than
// the byte array it decodes into (reflect's SetLen on an array), and an
// item written by another client must not crash its reader.
func SafeDecode(dec *attributevalue.Decoder, av types.AttributeValue, out any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("attributevalue panicked decoding into %T: %v (a binary value of another length than the byte array it is read into?)", out, r)
		}
	}()
	return dec.Decode(av, out)
}

// SafeEncode is enc.Encode(in), with a panic inside attributevalue turned
// into an error: it panics reading an unexported embedded field whose type
// has methods (reflect's Interface on an unexported field). A value holding
// a nil member (a marshaler's (*types.AttributeValueMemberS)(nil)), which
// every later reader would crash on, is an error too.
func SafeEncode(enc *attributevalue.Encoder, in any) (av types.AttributeValue, err error) {
	defer func() {
		if r := recover(); r != nil {
			av, err = nil, fmt.Errorf("attributevalue panicked encoding %T: %v (an unexported embedded field whose type has methods? export the type or give the field a name)", in, r)
		}
	}()
	av, err = enc.Encode(in)
	if err == nil {
		if t := nilMember(av); t != "" {
			return nil, fmt.Errorf("encoding %T gave a nil %s (a MarshalDynamoDBAttributeValue returning a nil pointer?): return a value, or &types.AttributeValueMemberNULL{Value: true}", in, t)
		}
	}
	return av, err
}

// nilMember returns the type of a nil pointer member in av (av itself, or
// in a map or list of it), "" when there is none.
func nilMember(av types.AttributeValue) string {
	switch v := av.(type) {
	case nil:
		return ""
	case *types.AttributeValueMemberM:
		if v != nil {
			for _, e := range v.Value {
				if t := nilMember(e); t != "" {
					return t
				}
			}
			return ""
		}
	case *types.AttributeValueMemberL:
		if v != nil {
			for _, e := range v.Value {
				if t := nilMember(e); t != "" {
					return t
				}
			}
			return ""
		}
	}
	if rv := reflect.ValueOf(av); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return fmt.Sprintf("%T", av)
	}
	return ""
}
