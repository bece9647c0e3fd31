package schema

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/codec"
)

// Java interop: the javabool and javadate tag options.
//
// attributevalue stores a bool as BOOL and a time.Time as an RFC 3339 string
// with nanoseconds. Java's DynamoDBMapper (SDK v1) stores a Boolean as the
// number 1 or 0 and a Date or Calendar as "2006-01-02T15:04:05.000Z" (UTC,
// milliseconds), at the top level of an item and inside documents, lists and
// maps alike. Fields tagged javabool or javadate are converted between the
// two: on encode by rewriting what attributevalue produced, on decode by
// rewriting a copy of the stored item before attributevalue reads it. Nested
// structs (documents, lists and maps of them) are followed, so a javabool
// field of a struct inside a slice is converted too.
//
// The same tree leaves out zero times of fields tagged omitempty (javadate
// or not): attributevalue never omits a struct, so a zero time.Time would be
// stored as year 1, where Java's null Date stores nothing.
//
// What needs converting depends only on the type, so it is worked out once per
// schema: a tree of javaConv values that mirrors the parts of the type that
// lead to a javabool or javadate field. Types without such fields have none,
// and encode and decode check a slice length and do nothing more.

// JavaDateLayout is the layout of the strings a javadate field is stored as:
// what DynamoDBMapper writes for java.util.Date and java.util.Calendar (ISO
// 8601, UTC, exactly three fractional digits). Java's v2 Enhanced Client reads
// it as a java.time.Instant.
const JavaDateLayout = "2006-01-02T15:04:05.000Z"

// convKind says what a javaConv does with the attribute value it is given.
type convKind uint8

const (
	convBool   convKind = iota + 1 // a bool: BOOL true/false ↔ N 1/0
	convDate                       // a time.Time: S in JavaDateLayout
	convList                       // a slice or array: elem converts each element of the L
	convMap                        // a map: elem converts each value of the M
	convStruct                     // a nested struct (M): fields convert its attributes by name
)

// javaConv converts the attribute value of one Go type. It is built once per
// schema and read-only afterwards. Struct conversions may refer to
// themselves (recursive types).
type javaConv struct {
	kind   convKind
	elem   *javaConv   // convList, convMap
	fields []javaField // convStruct
	// omitZero (convDate): the field is tagged omitempty, so a zero time is
	// left out of the item (attributevalue's omitempty never omits a
	// struct). plainTime (convDate): the field is not javadate, only
	// omitempty: its value is stored as attributevalue writes it.
	omitZero, plainTime bool
	// live reports whether a bool or date lies below: conversions without
	// are dropped from the tree. dec reports whether a bool lies below:
	// decoding rewrites only bools (the decoder already reads any RFC 3339
	// time, which includes JavaDateLayout).
	live, dec bool
}

// javaField is one attribute of a nested struct that needs converting.
type javaField struct {
	name string
	conv *javaConv
}

// convBuilder builds the conversions of one schema.
type convBuilder struct {
	structs map[reflect.Type]*javaConv // nested struct types, done or in progress
	all     []*javaConv                // every struct conversion, for settle
	fail    func(field, format string, args ...any) error
}

// buildJava works out the conversions of the schema's fields (javaFields,
// javaDecFields, field.conv), and checks that javabool and javadate are on
// fields of a type they apply to, also in nested structs.
func (s *Schema) buildJava(fail func(string, string, ...any) error) error {
	b := &convBuilder{structs: map[reflect.Type]*javaConv{}, fail: fail}
	convs := make([]*javaConv, len(s.Fields))
	for i := range s.Fields {
		f := &s.Fields[i]
		c, err := b.fieldConv(f.Type, f.Opts, f.GoName)
		if err != nil {
			return err
		}
		convs[i] = c
	}
	b.settle()
	for i, c := range convs {
		if c == nil {
			continue
		}
		if c.live, c.dec = c.status(); !c.live {
			continue
		}
		s.Fields[i].Conv = c
		s.JavaFields = append(s.JavaFields, i)
		if c.dec {
			s.JavaDecFields = append(s.JavaDecFields, i)
		}
	}
	return nil
}

// fieldConv returns the conversion of a field of type t tagged opts (nil when
// there is nothing to convert), path naming it in errors.
func (b *convBuilder) fieldConv(t reflect.Type, opts tagOptions, path string) (*javaConv, error) {
	switch {
	case opts.JavaBool:
		if c := leafConv(t, convBool); c != nil {
			return c, nil
		}
		return nil, b.fail(path, "javabool on a field of type %s: use bool or *bool (or a slice, array or map of them)", t)
	case opts.javaDate:
		if c := leafConv(t, convDate); c != nil {
			c.omitZero = opts.OmitEmpty && t == TimeType
			return c, nil
		}
		return nil, b.fail(path, "javadate on a field of type %s: use time.Time or *time.Time (or a slice, array or map of them)", t)
	case opts.OmitEmpty && t == TimeType:
		// A zero time.Time is not empty to attributevalue, which would
		// store year 0001; Java reads that back as a date, not null.
		return &javaConv{kind: convDate, omitZero: true, plainTime: true, live: true}, nil
	}
	return b.nested(t, path)
}

// leafConv returns the conversion of a field tagged javabool (kind convBool)
// or javadate (convDate) of type t, or nil when the option does not apply to
// t: t must be bool (time.Time), or a pointer, slice, array or map of one,
// without a custom encoding on the way.
func leafConv(t reflect.Type, kind convKind) *javaConv {
	if hasOwnEncoding(t) || elemCycle(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return leafConv(t.Elem(), kind)
	case reflect.Bool:
		if kind == convBool {
			return &javaConv{kind: convBool, live: true, dec: true}
		}
	case reflect.Struct:
		if kind == convDate && t == TimeType {
			return &javaConv{kind: convDate, live: true}
		}
	case reflect.Slice, reflect.Array:
		if e := leafConv(t.Elem(), kind); e != nil {
			return &javaConv{kind: convList, elem: e, live: true, dec: e.dec}
		}
	case reflect.Map:
		if e := leafConv(t.Elem(), kind); e != nil {
			return &javaConv{kind: convMap, elem: e, live: true, dec: e.dec}
		}
	}
	return nil
}

// nested returns the conversion of an untagged value of type t: the
// conversions of the javabool and javadate fields of the structs t holds
// (itself, through pointers, or as elements of slices, arrays and maps), or
// nil when t holds no struct. Types with a custom encoding are not followed.
func (b *convBuilder) nested(t reflect.Type, path string) (*javaConv, error) {
	if hasOwnEncoding(t) || elemCycle(t) {
		return nil, nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return b.nested(t.Elem(), path)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, nil // binary
		}
		e, err := b.nested(t.Elem(), path+"[]")
		if e == nil || err != nil {
			return nil, err
		}
		return &javaConv{kind: convList, elem: e}, nil
	case reflect.Map:
		e, err := b.nested(t.Elem(), path+"[]")
		if e == nil || err != nil {
			return nil, err
		}
		return &javaConv{kind: convMap, elem: e}, nil
	case reflect.Struct:
		if t == TimeType {
			return nil, nil
		}
		if c, ok := b.structs[t]; ok {
			return c, nil // done, or in progress (a recursive type): settle sorts it out
		}
		c := &javaConv{kind: convStruct}
		b.structs[t] = c
		b.all = append(b.all, c)
		if err := b.structFields(c, t, path); err != nil {
			return nil, err
		}
		return c, nil
	}
	return nil, nil
}

// structFields adds to c the conversions of the fields of the nested struct
// type t as the codec sees them (codec.LayoutOf: named by codec.ReadTags,
// embedded structs flattened, hidden and skipped fields left out). Their
// tags are read and checked as a table's fields' are (fieldTagOptions).
func (b *convBuilder) structFields(c *javaConv, t reflect.Type, path string) error {
	l := codec.LayoutOf(t)
	for i := range l.All {
		cf := &l.All[i]
		if cf.State == codec.Unexported {
			continue
		}
		fpath := path + "." + cf.GoName
		opts, err := fieldTagOptions(cf)
		if err != nil {
			return b.fail(fpath, "(in nested type %s): %v", t, err)
		}
		if cf.State != codec.Visible && cf.State != codec.Shadowed {
			continue
		}
		// A hidden field's options are checked too, but it is not stored:
		// it converts nothing.
		fc, err := b.fieldConv(cf.Type, opts, fpath)
		if err != nil {
			return err
		}
		if fc == nil || cf.State != codec.Visible {
			continue
		}
		c.fields = append(c.fields, javaField{name: cf.Name, conv: fc})
	}
	return nil
}

// settle works out live and dec for every conversion, recursive types
// included (to a fixed point), and drops the parts that convert nothing.
func (b *convBuilder) settle() {
	for changed := true; changed; {
		changed = false
		for _, c := range b.all {
			live, dec := c.live, c.dec
			for _, f := range c.fields {
				l, d := f.conv.status()
				live, dec = live || l, dec || d
			}
			if live != c.live || dec != c.dec {
				c.live, c.dec, changed = live, dec, true
			}
		}
	}
	for _, c := range b.all {
		c.fields = slices.DeleteFunc(c.fields, func(f javaField) bool {
			f.conv.live, f.conv.dec = f.conv.status()
			return !f.conv.live
		})
	}
}

// status reports whether a bool or date (live), and whether a bool (dec),
// lies below c, from the struct conversions' current state.
func (c *javaConv) status() (live, dec bool) {
	switch c.kind {
	case convBool:
		return true, true
	case convDate:
		return true, false
	case convList, convMap:
		l, d := c.elem.status()
		c.live, c.dec = l, d
		return l, d
	}
	return c.live, c.dec
}

// javaEncode rewrites, in place, the javabool and javadate attributes of an
// item attributevalue has just encoded. Rewriting in place is safe: every
// value on the way to a converted one was built by the encoder for this item
// from a Go bool, time, struct, slice or map (types with custom encodings are
// never followed), so nothing else refers to it.
func (s *Schema) JavaEncode(item map[string]types.AttributeValue) error {
	for _, i := range s.JavaFields {
		f := &s.Fields[i]
		av, ok := item[f.Name]
		if !ok {
			continue
		}
		nv, err := f.Conv.encode(av)
		if err != nil {
			return fmt.Errorf("attribute %q (field %s): %w", f.Name, f.GoName, err)
		}
		if nv == nil {
			delete(item, f.Name) // a zero time tagged omitempty
			continue
		}
		item[f.Name] = nv
	}
	return nil
}

// encode returns av converted (in place where it is a list or map), or nil
// when the attribute is to be left out (a zero time tagged omitempty).
func (c *javaConv) encode(av types.AttributeValue) (types.AttributeValue, error) {
	if c.kind == convDate && c.omitZero && isZeroTimeAV(av) {
		return nil, nil
	}
	switch c.kind {
	case convBool:
		if b, ok := av.(*types.AttributeValueMemberBOOL); ok {
			return JavaBoolAV(b.Value), nil
		}
	case convDate:
		if c.plainTime {
			return av, nil
		}
		s, ok := av.(*types.AttributeValueMemberS)
		if !ok {
			if _, null := av.(*types.AttributeValueMemberNULL); null {
				return av, nil
			}
			return nil, fmt.Errorf("javadate: the encoder made a %T of the time, not an RFC 3339 string: drop EncodeTime from the encoder options, or javadate", av)
		}
		t, err := time.Parse(time.RFC3339Nano, s.Value)
		if err != nil {
			return nil, fmt.Errorf("javadate: the encoder made %q of the time, not an RFC 3339 string: drop EncodeTime from the encoder options, or javadate", s.Value)
		}
		return &types.AttributeValueMemberS{Value: t.UTC().Format(JavaDateLayout)}, nil
	case convList:
		if l, ok := av.(*types.AttributeValueMemberL); ok {
			for i, e := range l.Value {
				ne, err := c.elem.encode(e)
				if err != nil {
					return nil, fmt.Errorf("[%d]: %w", i, err)
				}
				l.Value[i] = ne
			}
		}
	case convMap:
		if m, ok := av.(*types.AttributeValueMemberM); ok {
			for k, e := range m.Value {
				ne, err := c.elem.encode(e)
				if err != nil {
					return nil, fmt.Errorf("[%q]: %w", k, err)
				}
				m.Value[k] = ne
			}
		}
	case convStruct:
		if m, ok := av.(*types.AttributeValueMemberM); ok {
			for _, f := range c.fields {
				e, ok := m.Value[f.name]
				if !ok {
					continue
				}
				ne, err := f.conv.encode(e)
				if err != nil {
					return nil, fmt.Errorf(".%s: %w", f.name, err)
				}
				if ne == nil {
					delete(m.Value, f.name)
					continue
				}
				m.Value[f.name] = ne
			}
		}
	}
	return av, nil
}

// javaDecode returns item as the decoder must see it: item itself when
// nothing needs rewriting, else a copy in which the javabool attributes
// stored as numbers are BOOL. item, and every value in it, is left as it is:
// it may belong to the caller or to the SDK's response, and only the maps and
// lists on the way to a rewritten value are copied.
func (s *Schema) JavaDecode(item map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	out, copied := item, false
	for _, i := range s.JavaDecFields {
		f := &s.Fields[i]
		av, ok := item[f.Name]
		if !ok {
			continue
		}
		nv, err := f.Conv.decode(av)
		if err != nil {
			return nil, fmt.Errorf("attribute %q (field %s): %w", f.Name, f.GoName, err)
		}
		if nv == av {
			continue
		}
		if !copied {
			out, copied = maps.Clone(item), true
		}
		out[f.Name] = nv
	}
	return out, nil
}

// decode returns av with the bools below c that are stored as numbers made
// BOOL: av itself when there are none, else a new value (copy on write).
func (c *javaConv) decode(av types.AttributeValue) (types.AttributeValue, error) {
	switch c.kind {
	case convBool:
		n, ok := av.(*types.AttributeValueMemberN)
		if !ok {
			return av, nil // BOOL, NULL, or something the decoder will refuse
		}
		b, err := ParseJavaBool(n.Value)
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberBOOL{Value: b}, nil
	case convList:
		if l, ok := av.(*types.AttributeValueMemberL); ok {
			return c.decodeList(l)
		}
	case convMap:
		if m, ok := av.(*types.AttributeValueMemberM); ok {
			return c.decodeMap(m)
		}
	case convStruct:
		if m, ok := av.(*types.AttributeValueMemberM); ok {
			return c.decodeStruct(m)
		}
	}
	return av, nil // something the decoder will refuse, or NULL
}

// decodeList is decode of a list whose elements c.elem converts.
func (c *javaConv) decodeList(l *types.AttributeValueMemberL) (types.AttributeValue, error) {
	var out []types.AttributeValue
	for i, e := range l.Value {
		ne, err := c.elem.decode(e)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		if ne != e && out == nil {
			out = slices.Clone(l.Value)
		}
		if out != nil {
			out[i] = ne
		}
	}
	if out == nil {
		return l, nil
	}
	return &types.AttributeValueMemberL{Value: out}, nil
}

// decodeMap is decode of a map whose values c.elem converts.
func (c *javaConv) decodeMap(m *types.AttributeValueMemberM) (types.AttributeValue, error) {
	var out map[string]types.AttributeValue
	for k, e := range m.Value {
		ne, err := c.elem.decode(e)
		if err != nil {
			return nil, fmt.Errorf("[%q]: %w", k, err)
		}
		if ne == e {
			continue
		}
		if out == nil {
			out = maps.Clone(m.Value)
		}
		out[k] = ne
	}
	if out == nil {
		return m, nil
	}
	return &types.AttributeValueMemberM{Value: out}, nil
}

// decodeStruct is decode of a struct's map, whose fields c.fields convert.
func (c *javaConv) decodeStruct(m *types.AttributeValueMemberM) (types.AttributeValue, error) {
	var out map[string]types.AttributeValue
	for _, f := range c.fields {
		if !f.conv.dec {
			continue
		}
		e, ok := m.Value[f.name]
		if !ok {
			continue
		}
		ne, err := f.conv.decode(e)
		if err != nil {
			return nil, fmt.Errorf(".%s: %w", f.name, err)
		}
		if ne == e {
			continue
		}
		if out == nil {
			out = maps.Clone(m.Value)
		}
		out[f.name] = ne
	}
	if out == nil {
		return m, nil
	}
	return &types.AttributeValueMemberM{Value: out}, nil
}

// zeroUnix is the zero time.Time in Unix seconds, as the unixtime option
// stores it.
var zeroUnix = strconv.FormatInt(time.Time{}.Unix(), 10)

// isZeroTimeAV reports whether av is how attributevalue encodes the zero
// time.Time: an RFC 3339 string, or a number of Unix seconds (unixtime).
// Only the zero instant itself encodes to either (to the second, for
// unixtime, which drops fractions).
func isZeroTimeAV(av types.AttributeValue) bool {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		t, err := time.Parse(time.RFC3339Nano, v.Value)
		return err == nil && t.IsZero()
	case *types.AttributeValueMemberN:
		return v.Value == zeroUnix
	}
	return false
}

// javaBoolAV is a bool as DynamoDBMapper stores it.
func JavaBoolAV(b bool) *types.AttributeValueMemberN {
	if b {
		return &types.AttributeValueMemberN{Value: "1"}
	}
	return &types.AttributeValueMemberN{Value: "0"}
}

// parseJavaBool reads a bool DynamoDBMapper stored as a number: 1 is true, 0
// false (in any spelling DynamoDB allows, such as 1.0: equal by
// av.NumberEqual); any other number is an error rather than a guess.
func ParseJavaBool(n string) (bool, error) {
	switch {
	case av.NumberEqual(n, "1"):
		return true, nil
	case av.NumberEqual(n, "0"):
		return false, nil
	}
	return false, fmt.Errorf("javabool: the number %s is neither 1 (true) nor 0 (false)", n)
}

// elemCycle reports whether following the element types of t through
// pointers, slices, arrays and maps leads back to a type on the way without
// passing a struct (type P *P, type L []L, type M map[string]M): such a type
// holds no fields, and walking it by type would never end.
func elemCycle(t reflect.Type) bool {
	var seen []reflect.Type
	for {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		default:
			return false
		}
		for _, s := range seen {
			if s == t {
				return true
			}
		}
		seen = append(seen, t)
		t = t.Elem()
	}
}
