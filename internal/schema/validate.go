package schema

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/ddbkit/dynamo/internal/errs"
)

// The checks of the encoder's front door: what the caller passes is refused
// before anything is sent when DynamoDB, the SDK or the encoder would
// otherwise refuse it late, alter it silently or crash on it.
//
//   - On the Go value, before encoding (checkGo): a value that refers to
//     itself or nests deeper than DynamoDB allows (attributevalue's encoder
//     recurses without a bound and dies of a stack overflow), and func, chan
//     and unsafe.Pointer values, which the encoder drops silently. Walked only
//     for types whose shape allows these (walkType, computed once per type):
//     interfaces, recursive types, funcs, chans, or a static nesting deeper
//     than DynamoDB's limit.
//   - On the encoded item (checkEncoded): strings, names and set elements
//     that are not valid UTF-8 (the SDK's JSON encoder replaces bad bytes
//     with U+FFFD, so two keys would address one item, and the stored copy
//     would differ from the returned one), empty attribute names, nesting
//     deeper than 32 levels, and duplicate set elements (dropped, numbers
//     compared by value, so 0 and -0 are one element).
//
// This file holds what both report with: badValue, and the naming of the
// field an encoder error comes from. The checks are in checkgo.go and
// checkitem.go; item sizes in the root's size.go.

// maxNesting is DynamoDB's nesting limit as its server counts it (checked
// against DynamoDB Local): the item is level 1 and every map or list one
// level more, so an attribute may hold 31 maps or lists inside one another.
const maxNesting = 32

// maxHops bounds a chain of pointers and interfaces with no map, list or
// struct between them; only a value that refers to itself gets near it.
const maxHops = 64

// badValue describes a value refused by a check: what is wrong with it, the
// fix, and where it is (path, innermost last; built while unwinding).
type badValue struct {
	What, fix string
	path      []string // reversed: innermost first
	addrs     []uintptr
}

func (b *badValue) push(seg string) *badValue {
	b.path = append(b.path, seg)
	return b
}

// where renders the path, outermost first: `["k"][3].name`; the path of a
// value that refers to itself is cut after 8 steps.
func (b *badValue) Where() string {
	var sb strings.Builder
	for i, n := len(b.path)-1, 0; i >= 0; i, n = i-1, n+1 {
		if n == 8 {
			sb.WriteString("...")
			break
		}
		sb.WriteString(b.path[i])
	}
	return sb.String()
}

// cyclic reports whether the pointers, maps and slices on the path of a
// too deep value repeat: the value refers to itself.
func (b *badValue) cyclic() bool {
	seen := make(map[uintptr]bool, len(b.addrs))
	for _, a := range b.addrs {
		if seen[a] {
			return true
		}
		seen[a] = true
	}
	return false
}

func keySeg(name string) string { return "[" + strconv.Quote(name) + "]" }
func idxSeg(i int) string       { return "[" + strconv.Itoa(i) + "]" }

// fieldOf returns the Go field name and attribute of top-level attribute
// name, for messages.
func (s *Schema) fieldOf(name string) string {
	if i, ok := s.ByName[name]; ok {
		return fmt.Sprintf("field %s.%s (attribute %q)", s.Type, s.Fields[i].GoName, name)
	}
	return fmt.Sprintf("attribute %q of %s", name, s.Type)
}

// invalidValue turns a badValue found under the top-level attribute attr of
// an item of table into an error wrapping ErrInvalidInput.
func (s *Schema) invalidValue(table, attr string, b *badValue) error {
	where := s.fieldOf(attr)
	if p := b.Where(); p != "" {
		where += " at " + p
	}
	return fmt.Errorf("%w: table %q: %s %s: %s", errs.ErrInvalidInput, table, where, b.What, b.fix)
}

// nilSetElem returns, for an encoder error, the name of the top-level set
// field (stringset, numberset, binaryset or [][]byte) of struct value v that
// holds a nil element, which attributevalue refuses without naming the field;
// "" when there is none.
func (s *Schema) nilSetElem(v reflect.Value) string {
	for i := range s.Fields {
		f := &s.Fields[i]
		if !f.Opts.StringSet && !f.Opts.NumberSet && !f.Opts.BinarySet && DerefType(f.Type) != reflect.TypeFor[[][]byte]() {
			continue
		}
		fv, ok := FieldValue(v, f)
		for ok && fv.Kind() == reflect.Pointer {
			if fv.IsNil() {
				ok = false
				break
			}
			fv = fv.Elem()
		}
		if !ok || fv.Kind() != reflect.Slice && fv.Kind() != reflect.Array {
			continue
		}
		for j := 0; j < fv.Len(); j++ {
			switch e := fv.Index(j); e.Kind() {
			case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map:
				if e.IsNil() {
					return fmt.Sprintf(" (field %s.%s, attribute %q, holds a nil element at [%d]: sets cannot hold nil; remove it, or use a list)",
						s.Type, f.GoName, f.Name, j)
				}
			}
		}
	}
	return ""
}

// failingField returns, for an encoder error, " (field F, attribute "a")"
// naming the first top-level field of struct value v that fails to encode
// on its own; "" when none does. Only called on the error path.
func (s *Schema) FailingField(enc *attributevalue.Encoder, v reflect.Value) string {
	if hint := s.nilSetElem(v); hint != "" {
		return hint
	}
	for i := range s.Fields {
		f := &s.Fields[i]
		fv, ok := FieldValue(v, f)
		if !ok || !fv.CanInterface() {
			continue
		}
		if _, err := enc.Encode(fv.Interface()); err != nil {
			return fmt.Sprintf(" (field %s.%s, attribute %q)", s.Type, f.GoName, f.Name)
		}
	}
	return ""
}
