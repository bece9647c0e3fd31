package schema

import (
	"fmt"
	"reflect"
	"sync"

	avs "github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/codec"
	"github.com/ddbkit/dynamo/internal/errs"
)

// Go value checks, before encoding (checkGo): see validate.go.

// typeWalk says how checkGo treats values of one type; computed once per
// type (walkInfo).
type typeWalk struct {
	walk   bool // values of the type may hold what checkGo looks for
	height int  // levels of maps, lists and structs a value can nest (non-recursive types)
	fields []walkField
}

// walkField is a struct field checkGo visits: one the codec encodes
// (codec.LayoutOf: embedded structs flattened, skipped and hidden fields
// left out), of a type worth walking.
type walkField struct {
	index []int
	name  string // attribute name, for messages
}

var walkCache sync.Map // reflect.Type → *typeWalk

var noWalk = &typeWalk{}

// walkInfo returns how checkGo treats values of type t.
func walkInfo(t reflect.Type) *typeWalk {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return noWalk
	}
	if w, ok := walkCache.Load(t); ok {
		return w.(*typeWalk)
	}
	w := buildWalk(t, map[reflect.Type]bool{})
	actual, _ := walkCache.LoadOrStore(t, w)
	return actual.(*typeWalk)
}

// isLeafType reports whether the encoder turns values of t into a scalar
// without looking inside (times, custom marshalers, text types, byte
// slices).
func isLeafType(t reflect.Type) bool {
	if t == TimeType || hasOwnEncoding(t) {
		return true
	}
	if t.Kind() == reflect.Struct && t.ConvertibleTo(TimeType) {
		return true
	}
	return (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && t.Elem().Kind() == reflect.Uint8
}

// opaqueStruct reports whether t is a struct (not a leaf type) with fields
// but none the encoder sees — big.Int, big.Float, sync.Mutex: it would be
// stored as an empty map and its value lost.
func opaqueStruct(t reflect.Type) bool {
	return !isLeafType(t) && hidden(t)
}

// hidden reports whether t is a struct with fields but none the encoder
// sees, leaf or not.
func hidden(t reflect.Type) bool {
	if t.Kind() != reflect.Struct || t.NumField() == 0 {
		return false
	}
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() || f.Anonymous && !opaqueStruct(DerefType(f.Type)) {
			return false
		}
	}
	return true
}

var hiddenTextCache sync.Map // reflect.Type → reflect.Type (nil: none); immutable values

// hiddenTextIn returns a text type whose fields are all unexported that
// values of t can hold outside interfaces (which the walk visits itself),
// or nil.
func hiddenTextIn(t reflect.Type) reflect.Type {
	if r, ok := hiddenTextCache.Load(t); ok {
		h, _ := r.(reflect.Type)
		return h
	}
	h := findHiddenText(t, map[reflect.Type]bool{})
	hiddenTextCache.Store(t, h)
	return h
}

func findHiddenText(t reflect.Type, seen map[reflect.Type]bool) reflect.Type {
	if seen[t] {
		return nil
	}
	seen[t] = true
	if codec.IsText(t) {
		if hidden(t) {
			return t
		}
		return nil
	}
	if HasCustomMarshaler(t) || t == TimeType {
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return findHiddenText(t.Elem(), seen)
	case reflect.Struct:
		// What attributevalue stores of t: its encoded fields, and the
		// structs it flattens (an embedded text type leaves nothing).
		for _, f := range codec.LayoutOf(t).All {
			if f.State != codec.Visible && f.State != codec.Embedded {
				continue
			}
			if h := findHiddenText(f.Type, seen); h != nil {
				return h
			}
		}
	}
	return nil
}

// lostInInterface is the badValue for a text type whose fields are all
// unexported (netip.Addr, big.Int) held in an interface value: the mapper
// stores text types as text where the Go type says so, but what an
// interface holds goes to attributevalue, which would store an empty map.
func lostInInterface(t reflect.Type) *badValue {
	return &badValue{
		What: fmt.Sprintf("holds a %s in an interface value, which the encoder stores as an empty map", t),
		fix:  fmt.Sprintf("declare it as %s (stored as text) or store its String()", t),
	}
}

// buildWalk computes the typeWalk of t; onPath holds the types being
// computed above it, to find recursive types.
func buildWalk(t reflect.Type, onPath map[reflect.Type]bool) *typeWalk {
	if w, ok := walkCache.Load(t); ok {
		return w.(*typeWalk)
	}
	if onPath[t] {
		return &typeWalk{walk: true} // recursive: values may refer to themselves
	}
	if isLeafType(t) {
		return noWalk
	}
	onPath[t] = true
	defer delete(onPath, t)
	w := &typeWalk{}
	switch t.Kind() {
	case reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		w.walk = true
	case reflect.Pointer:
		e := buildWalk(t.Elem(), onPath)
		w.walk, w.height = e.walk, e.height
	case reflect.Slice, reflect.Array, reflect.Map:
		e := buildWalk(t.Elem(), onPath)
		w.walk, w.height = e.walk, e.height+1
	case reflect.Struct:
		if opaqueStruct(t) {
			w.walk = true // its values are refused (goWalker.value)
			break
		}
		w.height = 1
		w.collect(t, onPath)
	default:
		return noWalk
	}
	if w.height > maxNesting {
		w.walk = true
	}
	if !w.walk {
		w.fields = nil
	}
	// A result computed while an enclosing type is still open depends on it
	// only through a recursion, which sets walk: either way it is final.
	walkCache.Store(t, w)
	return w
}

// collect adds to w the fields of struct t the codec encodes
// (codec.LayoutOf), named as it names them.
func (w *typeWalk) collect(t reflect.Type, onPath map[reflect.Type]bool) {
	for _, f := range codec.LayoutOf(t).Fields {
		fw := buildWalk(f.Type, onPath)
		if fw.height+1 > w.height {
			w.height = fw.height + 1
		}
		if fw.walk {
			w.walk = true
			w.fields = append(w.fields, walkField{index: f.Index, name: f.Name})
		}
	}
}

// checkGo walks the struct value v (of the schema's type) as the encoder
// will, and refuses values that refer to themselves, nest deeper than
// DynamoDB allows, or hold func, chan or unsafe.Pointer values. It returns
// nil at once for types that cannot hold any of these.
func (s *Schema) CheckGo(table string, v reflect.Value) error {
	if !s.Walk {
		return nil
	}
	w := goWalker{left: maxWalk}
	for i := range s.Fields {
		f := &s.Fields[i]
		if !f.walk {
			continue
		}
		fv, ok := FieldValue(v, f)
		if !ok {
			continue
		}
		if b := w.value(fv, 1, 0, true); b != nil {
			return s.invalidGo(table, f, b)
		}
	}
	return nil
}

func (s *Schema) invalidGo(table string, f *Field, b *badValue) error {
	where := fmt.Sprintf("field %s.%s (attribute %q)", s.Type, f.GoName, f.Name)
	if p := b.Where(); p != "" {
		where += " at " + p
	}
	if b.fix == "" { // too deep: tell a cycle from a deep value
		if b.cyclic() {
			b.What = "refers to itself (a cycle)"
			b.fix = "break the cycle (store an ID, not the pointer) or tag the field `dynamo:\"-\"`"
		} else {
			b.What = fmt.Sprintf("nests deeper than DynamoDB's %d levels of maps and lists", maxNesting)
			b.fix = "flatten it or store it encoded (JSON in a []byte)"
		}
	}
	return fmt.Errorf("%w: table %q: %s %s: %s", errs.ErrInvalidInput, table, where, b.What, b.fix)
}

// tooDeep is the badValue for a value past the nesting or pointer limit;
// invalidGo words it once the path (and its addresses) is known.
func tooDeep() *badValue { return &badValue{} }

// maxWalk bounds the values checkGo visits in one item. A value shared by
// several pointers is encoded once per pointer, so a small value whose
// pointers branch and meet again (a DAG) can encode to billions of values;
// far fewer already exceed DynamoDB's 400 KB.
const maxWalk = 4 * avs.MaxItemSize

// goWalker walks one item; left is what remains of maxWalk.
type goWalker struct{ left int }

// value checks v, a value at nesting level (the item is level 1) after hops
// pointers and interfaces. static reports whether v is a struct field whose
// type is its declared type (nil funcs there are dropped by the encoder like
// any omitted field and come back nil, so they are allowed).
func (w *goWalker) value(v reflect.Value, level, hops int, static bool) *badValue {
	if w.left--; w.left < 0 {
		return &badValue{What: fmt.Sprintf("holds more than %d values (one per pointer to a shared value)", maxWalk),
			fix: "items are at most 400 KB: keep large or shared data elsewhere"}
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return nil
		}
		if hops++; hops > maxHops {
			return tooDeep()
		}
		if h := hiddenTextIn(v.Elem().Type()); h != nil {
			return lostInInterface(h)
		}
		return w.value(v.Elem(), level, hops, false)
	case reflect.Pointer:
		if v.IsNil() || isLeafType(v.Type().Elem()) {
			return nil
		}
		if hops++; hops > maxHops {
			return tooDeep()
		}
		if b := w.value(v.Elem(), level, hops, false); b != nil {
			b.addrs = append(b.addrs, v.Pointer())
			return b
		}
		return nil
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if static && v.IsNil() {
			return nil
		}
		return &badValue{
			What: fmt.Sprintf("holds a %s value, which DynamoDB cannot store", v.Type()),
			fix:  "remove it, or tag the field `dynamo:\"-\"`",
		}
	case reflect.Struct:
		return w.structValue(v, level)
	case reflect.Map:
		return w.mapValue(v, level)
	case reflect.Slice, reflect.Array:
		return w.listValue(v, level)
	}
	return nil
}

// structValue checks the struct v at nesting level, field by field, when
// its type can hold what the encoded check cannot see (walkInfo).
func (w *goWalker) structValue(v reflect.Value, level int) *badValue {
	t := v.Type()
	if isLeafType(t) {
		return nil
	}
	if opaqueStruct(t) {
		return &badValue{
			What: fmt.Sprintf("holds a %s, whose fields are all unexported (stored as an empty map)", t),
			fix:  "store it as a string (e.g. big.Int's String) or give it a MarshalDynamoDBAttributeValue method",
		}
	}
	tw := walkInfo(t)
	if !tw.walk {
		return nil // finite; the encoded check counts its depth
	}
	if level++; level > maxNesting {
		return tooDeep()
	}
	for _, f := range tw.fields {
		fv, ok := fieldByIndex(v, f.index)
		if !ok {
			continue
		}
		if b := w.value(fv, level, 0, true); b != nil {
			return b.push("." + f.name)
		}
	}
	return nil
}

// mapValue checks the map v at nesting level, value by value, when its
// type can hold what the encoded check cannot see.
func (w *goWalker) mapValue(v reflect.Value, level int) *badValue {
	if v.IsNil() {
		return nil
	}
	if !walkInfo(v.Type()).walk {
		return nil // finite; the encoded check counts its depth
	}
	if level++; level > maxNesting {
		b := tooDeep()
		b.addrs = append(b.addrs, v.Pointer())
		return b
	}
	it := v.MapRange()
	for it.Next() {
		if b := w.value(it.Value(), level, 0, false); b != nil {
			b.addrs = append(b.addrs, v.Pointer())
			k := it.Key()
			if k.Kind() == reflect.String {
				return b.push(keySeg(k.String()))
			}
			return b.push("[" + fmt.Sprint(k) + "]")
		}
	}
	return nil
}

// listValue checks the slice or array v at nesting level, element by
// element, when its type can hold what the encoded check cannot see.
func (w *goWalker) listValue(v reflect.Value, level int) *badValue {
	if v.Kind() == reflect.Slice && v.IsNil() {
		return nil
	}
	if !walkInfo(v.Type()).walk {
		return nil // finite; the encoded check counts its depth
	}
	if level++; level > maxNesting {
		b := tooDeep()
		if v.Kind() == reflect.Slice {
			b.addrs = append(b.addrs, v.Pointer()^uintptr(v.Len())<<1)
		}
		return b
	}
	for i := 0; i < v.Len(); i++ {
		if b := w.value(v.Index(i), level, 0, false); b != nil {
			if v.Kind() == reflect.Slice {
				b.addrs = append(b.addrs, v.Pointer()^uintptr(v.Len())<<1)
			}
			return b.push(idxSeg(i))
		}
	}
	return nil
}
