package schema

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/codec"
)

// Values compared with attributes of text types (codec.IsText): the item
// holds the text MarshalText returns, a string (S), but expression.Value
// encodes the Go value with attributevalue's defaults, which know nothing of
// MarshalText: a uuid-style [16]byte is a binary (B), a netip.Addr an empty
// map (its fields are unexported). The functions here work on types and
// attribute values only, with no I/O; rewriteCond (condvalues.go) applies
// them to conditions, filters and key conditions, and plan.SetElems (Add's
// operands) to the elements of a set of a text type.

// holdsTextCache maps a reflect.Type to whether a text type lies in it
// (holdsText); immutable entries.
var holdsTextCache sync.Map

// holdsText reports whether values of t are, or contain, values of a text
// type that the mapper stores as strings: t itself, through pointers, as
// elements of slices, arrays and maps, or as fields of nested structs
// (codec.ReachOf, cached per type). Types with their own DynamoDB encoding
// are not looked into.
func HoldsText(t reflect.Type) bool {
	if v, ok := holdsTextCache.Load(t); ok {
		return v.(bool)
	}
	r := codec.ReachOf(t).Text != nil
	holdsTextCache.Store(t, r)
	return r
}

// textStep returns the type of the part of a value of type t that one path
// step reaches: a list element (index) or a map entry or nested struct
// attribute (name); nil when there is no such part or it cannot be told.
func textStep(t reflect.Type, index bool, name string) reflect.Type {
	t = DerefType(t)
	if t.Kind() == reflect.Pointer || codec.IsText(t) || HasCustomMarshaler(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if index && t.Elem().Kind() != reflect.Uint8 {
			return t.Elem()
		}
	case reflect.Map:
		if !index { // any key: a text type's text, a number's digits
			return t.Elem()
		}
	case reflect.Struct:
		if !index && t != TimeType {
			for _, f := range codec.Fields(t) {
				if f.Name == name {
					return f.Type
				}
			}
		}
	}
	return nil
}

// textCondValue returns av, a value compared (by fn: "" for =, <>, <, <=,
// >, >=, BETWEEN and IN; "contains" or "begins_with") with an attribute
// whose values are of Go type t, as the attribute stores the text types in
// it: a new value, or av itself when nothing changes. It never modifies av.
// Lists, maps and documents are followed by t's element and field types.
func TextCondValue(t reflect.Type, fn string, av types.AttributeValue) (types.AttributeValue, error) {
	t = DerefType(t)
	if t.Kind() == reflect.Pointer {
		return av, nil
	}
	if codec.IsText(t) {
		return textScalar(t, av)
	}
	if _, null := av.(*types.AttributeValueMemberNULL); null || HasCustomMarshaler(t) || !HoldsText(t) {
		return av, nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if fn == "contains" {
			return TextCondValue(t.Elem(), "", av) // an element of the list or set
		}
		l, ok := av.(*types.AttributeValueMemberL)
		if !ok {
			return av, nil
		}
		out := make([]types.AttributeValue, len(l.Value))
		for i, e := range l.Value {
			ne, err := TextCondValue(t.Elem(), "", e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = ne
		}
		return &types.AttributeValueMemberL{Value: out}, nil
	case reflect.Map:
		m, ok := av.(*types.AttributeValueMemberM)
		if !ok {
			return av, nil
		}
		out := make(map[string]types.AttributeValue, len(m.Value))
		for k, e := range m.Value {
			ne, err := TextCondValue(t.Elem(), "", e)
			if err != nil {
				return nil, fmt.Errorf("[%q]: %w", k, err)
			}
			out[k] = ne
		}
		return &types.AttributeValueMemberM{Value: out}, nil
	case reflect.Struct:
		m, ok := av.(*types.AttributeValueMemberM)
		if !ok {
			return av, nil
		}
		var out map[string]types.AttributeValue
		for _, f := range codec.Fields(t) {
			e, ok := m.Value[f.Name]
			if !ok || !HoldsText(f.Type) {
				continue
			}
			ne, err := TextCondValue(f.Type, "", e)
			if err != nil {
				return nil, fmt.Errorf(".%s: %w", f.Name, err)
			}
			if out == nil {
				out = make(map[string]types.AttributeValue, len(m.Value))
				for k, v := range m.Value {
					out[k] = v
				}
			}
			out[f.Name] = ne
		}
		if out == nil {
			return av, nil
		}
		return &types.AttributeValueMemberM{Value: out}, nil
	}
	return av, nil
}

// textScalar returns av, a value compared with an attribute holding values
// of the text type t, as the attribute holds it: an S (or NULL) as it is; a
// B, N or BOOL — what expression.Value makes of a value of t whose kind is
// a byte array or slice, a number or a bool — turned back into a value of t
// and encoded with MarshalText; an N for a type of another kind is read by
// t's UnmarshalText (big.Int takes a number's text). Anything else is an
// error naming the fix.
func textScalar(t reflect.Type, av types.AttributeValue) (types.AttributeValue, error) {
	v := reflect.New(t).Elem()
	switch a := av.(type) {
	case *types.AttributeValueMemberS, *types.AttributeValueMemberNULL:
		return av, nil
	case *types.AttributeValueMemberB:
		switch {
		case t.Kind() == reflect.Array && t.Elem().Kind() == reflect.Uint8:
			if len(a.Value) != t.Len() {
				return nil, textValueError(t, fmt.Sprintf("a binary (B) of %d bytes (it holds %d)", len(a.Value), t.Len()))
			}
			copyBytes(v, a.Value)
		case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
			b := reflect.MakeSlice(t, len(a.Value), len(a.Value))
			copyBytes(b, a.Value)
			v.Set(b)
		default:
			return nil, textValueError(t, "a binary (B)")
		}
	case *types.AttributeValueMemberN:
		if k := t.Kind(); k >= reflect.Int && k <= reflect.Float64 && k != reflect.Uintptr {
			if err := setTextNumber(v, a.Value); err != nil {
				return nil, textValueError(t, fmt.Sprintf("the number %.40q (%v)", a.Value, err))
			}
			break
		}
		// A type such as big.Int reads a number's text itself.
		p := reflect.New(t)
		if err := p.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(a.Value)); err != nil {
			return nil, textValueError(t, fmt.Sprintf("the number %.40q, which %s.UnmarshalText does not take (%v)", a.Value, t, err))
		}
		v = p.Elem()
	case *types.AttributeValueMemberBOOL:
		if t.Kind() != reflect.Bool {
			return nil, textValueError(t, "a bool (BOOL)")
		}
		v.SetBool(a.Value)
	default:
		return nil, textValueError(t, "a "+AVKind(av))
	}
	text, err := MarshalText(v)
	if err != nil {
		return nil, err
	}
	return &types.AttributeValueMemberS{Value: text}, nil
}

// copyBytes copies b into dst, an array or slice of a uint8 kind as long as
// b (reflect.Copy takes only elements of the same type: not a named byte).
func copyBytes(dst reflect.Value, b []byte) {
	if dst.Type().Elem() == reflect.TypeFor[byte]() {
		reflect.Copy(dst, reflect.ValueOf(b))
		return
	}
	for i, x := range b {
		dst.Index(i).SetUint(uint64(x))
	}
}

// setTextNumber sets v, of a number kind, to the number s.
func setTextNumber(v reflect.Value, s string) error {
	switch {
	case v.CanInt():
		x, err := strconv.ParseInt(s, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("not an integer a %s holds", v.Type())
		}
		v.SetInt(x)
	case v.CanUint():
		x, err := strconv.ParseUint(s, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("not an integer a %s holds", v.Type())
		}
		v.SetUint(x)
	case v.CanFloat():
		x, err := strconv.ParseFloat(s, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("not a number a %s holds", v.Type())
		}
		v.SetFloat(x)
	default:
		return fmt.Errorf("a %s is not a number", v.Type())
	}
	return nil
}

// marshalText returns the text of v, a value of a text type, as it is
// stored: MarshalText's output, which must be valid UTF-8.
func MarshalText(v reflect.Value) (string, error) {
	p := reflect.New(v.Type()) // through a pointer: pointer-receiver MarshalText too
	p.Elem().Set(v)
	b, err := p.Interface().(encoding.TextMarshaler).MarshalText()
	if err != nil {
		return "", fmt.Errorf("%s.MarshalText: %w", v.Type(), err)
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("%s.MarshalText returned %.40q, which is not valid UTF-8: DynamoDB strings are UTF-8", v.Type(), b)
	}
	return string(b), nil
}

func textValueError(t reflect.Type, got string) error {
	return fmt.Errorf("a %s attribute holds its MarshalText string, never %s: compare with that text, e.g. expression.Value(v.String())", t, got)
}
