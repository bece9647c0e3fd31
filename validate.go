package dynamo

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	avs "github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/codec"
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
	what, fix string
	path      []string // reversed: innermost first
	addrs     []uintptr
}

func (b *badValue) push(seg string) *badValue {
	b.path = append(b.path, seg)
	return b
}

// where renders the path, outermost first: `["k"][3].name`; the path of a
// value that refers to itself is cut after 8 steps.
func (b *badValue) where() string {
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
func (s *schema) fieldOf(name string) string {
	if i, ok := s.byName[name]; ok {
		return fmt.Sprintf("field %s.%s (attribute %q)", s.typ, s.fields[i].goName, name)
	}
	return fmt.Sprintf("attribute %q of %s", name, s.typ)
}

// invalidValue turns a badValue found under the top-level attribute attr of
// an item of table into an error wrapping ErrInvalidInput.
func (s *schema) invalidValue(table, attr string, b *badValue) error {
	where := s.fieldOf(attr)
	if p := b.where(); p != "" {
		where += " at " + p
	}
	return fmt.Errorf("%w: table %q: %s %s: %s", ErrInvalidInput, table, where, b.what, b.fix)
}

// ---- Go value checks (before encoding) ----

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
	if t == timeType || hasOwnEncoding(t) {
		return true
	}
	if t.Kind() == reflect.Struct && t.ConvertibleTo(timeType) {
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
		if f := t.Field(i); f.IsExported() || f.Anonymous && !opaqueStruct(derefType(f.Type)) {
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
	if hasCustomMarshaler(t) || t == timeType {
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
		what: fmt.Sprintf("holds a %s in an interface value, where the encoder would store an empty map and the value would be lost", t),
		fix:  fmt.Sprintf("declare the field (or element) as %s, which the mapper stores as text, or store its String()", t),
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
func (s *schema) checkGo(table string, v reflect.Value) error {
	if !s.walk {
		return nil
	}
	w := goWalker{left: maxWalk}
	for i := range s.fields {
		f := &s.fields[i]
		if !f.walk {
			continue
		}
		fv, ok := fieldValue(v, f)
		if !ok {
			continue
		}
		if b := w.value(fv, 1, 0, true); b != nil {
			return s.invalidGo(table, f, b)
		}
	}
	return nil
}

func (s *schema) invalidGo(table string, f *field, b *badValue) error {
	where := fmt.Sprintf("field %s.%s (attribute %q)", s.typ, f.goName, f.name)
	if p := b.where(); p != "" {
		where += " at " + p
	}
	if b.fix == "" { // too deep: tell a cycle from a deep value
		if b.cyclic() {
			b.what = "refers to itself (a cycle of pointers, maps, slices or interfaces)"
			b.fix = "DynamoDB stores trees, not graphs: break the cycle (e.g. store an ID instead of the pointer) or tag the field `dynamo:\"-\"`"
		} else {
			b.what = fmt.Sprintf("nests deeper than DynamoDB's %d levels of maps and lists", maxNesting)
			b.fix = "flatten the value or store it encoded (e.g. as JSON in a []byte)"
		}
	}
	return fmt.Errorf("%w: table %q: %s %s: %s", ErrInvalidInput, table, where, b.what, b.fix)
}

// tooDeep is the badValue for a value past the nesting or pointer limit;
// invalidGo words it once the path (and its addresses) is known.
func tooDeep() *badValue { return &badValue{} }

// maxWalk bounds the values checkGo visits in one item. A value shared by
// several pointers is encoded once per pointer, so a small value whose
// pointers branch and meet again (a DAG) can encode to billions of values;
// far fewer already exceed DynamoDB's 400 KB.
const maxWalk = 4 * maxItemSize

// goWalker walks one item; left is what remains of maxWalk.
type goWalker struct{ left int }

// value checks v, a value at nesting level (the item is level 1) after hops
// pointers and interfaces. static reports whether v is a struct field whose
// type is its declared type (nil funcs there are dropped by the encoder like
// any omitted field and come back nil, so they are allowed).
func (w *goWalker) value(v reflect.Value, level, hops int, static bool) *badValue {
	if w.left--; w.left < 0 {
		return &badValue{what: fmt.Sprintf("holds more than %d values (a value reached through several pointers counts once per pointer)", maxWalk),
			fix: "DynamoDB items are at most 400 KB: store large or shared data elsewhere and keep a reference"}
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
			what: fmt.Sprintf("holds a %s value, which the encoder would drop while the returned copy keeps it", v.Type()),
			fix:  "DynamoDB cannot store functions or channels: remove the value, or tag the field `dynamo:\"-\"`",
		}
	case reflect.Struct:
		t := v.Type()
		if isLeafType(t) {
			return nil
		}
		if opaqueStruct(t) {
			return &badValue{
				what: fmt.Sprintf("holds a %s, whose fields are all unexported: the encoder would store an empty map and the value would be lost", t),
				fix:  "store it in a form DynamoDB keeps, e.g. a string (big.Int's String/SetString) or a type with a MarshalDynamoDBAttributeValue method",
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
	case reflect.Map:
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
	case reflect.Slice, reflect.Array:
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
	return nil
}

// ---- encoded item checks ----

// checkEncoded checks the encoded item of table: names and strings valid
// UTF-8, no empty names, nesting within DynamoDB's limit; it drops duplicate
// set elements, comparing numbers by value.
func (s *schema) checkEncoded(table string, item map[string]types.AttributeValue) error {
	for k, v := range item {
		if k == "" || !utf8.ValidString(k) {
			b := badName(k)
			return fmt.Errorf("%w: table %q: %s: %s", ErrInvalidInput, table, b.what, b.fix)
		}
		nv, b := checkAV(v, 1)
		if b != nil {
			return s.invalidValue(table, k, b)
		}
		if nv != nil {
			item[k] = nv
		}
	}
	return nil
}

func badName(k string) *badValue {
	if k == "" {
		return &badValue{what: "an empty attribute name", fix: "DynamoDB refuses empty names: give the map key or attribute a name"}
	}
	return &badValue{what: fmt.Sprintf("attribute name %s is not valid UTF-8", strconv.Quote(k)),
		fix: "DynamoDB names are UTF-8 and the SDK would replace the bad bytes with U+FFFD: use valid UTF-8 names (binary data belongs in []byte values)"}
}

func badString(s string) *badValue {
	return &badValue{
		what: fmt.Sprintf("is a string that is not valid UTF-8 (%s)", strconv.Quote(truncate(s, 40))),
		fix:  "the SDK would replace the bad bytes with U+FFFD, so the stored value (and any key) would differ from yours: use []byte for binary data",
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// checkAV checks av at nesting level level (its container's level) and
// returns a replacement when a set had duplicates to drop, else nil.
func checkAV(av types.AttributeValue, level int) (types.AttributeValue, *badValue) {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		if !utf8.ValidString(v.Value) {
			return nil, badString(v.Value)
		}
	case *types.AttributeValueMemberN:
		if b := checkItemNumber(v.Value); b != nil {
			return nil, b
		}
	case *types.AttributeValueMemberSS:
		for i, e := range v.Value {
			if !utf8.ValidString(e) {
				return nil, badString(e).push(idxSeg(i))
			}
		}
		if ss, dup := dedupe(v.Value, func(s string) string { return s }); dup {
			return &types.AttributeValueMemberSS{Value: ss}, nil
		}
	case *types.AttributeValueMemberNS:
		for i, e := range v.Value {
			if b := checkItemNumber(e); b != nil {
				return nil, b.push(idxSeg(i))
			}
		}
		if ns, dup := dedupe(v.Value, avs.Canonical); dup {
			return &types.AttributeValueMemberNS{Value: ns}, nil
		}
	case *types.AttributeValueMemberBS:
		if bs, dup := dedupe(v.Value, func(b []byte) string { return string(b) }); dup {
			return &types.AttributeValueMemberBS{Value: bs}, nil
		}
	case *types.AttributeValueMemberM:
		if level++; level > maxNesting {
			return nil, tooDeepEncoded()
		}
		for k, e := range v.Value {
			if k == "" || !utf8.ValidString(k) {
				return nil, badMapKey(k)
			}
			ne, b := checkAV(e, level)
			if b != nil {
				return nil, b.push(keySeg(k))
			}
			if ne != nil {
				v.Value[k] = ne
			}
		}
	case *types.AttributeValueMemberL:
		if level++; level > maxNesting {
			return nil, tooDeepEncoded()
		}
		for i, e := range v.Value {
			ne, b := checkAV(e, level)
			if b != nil {
				return nil, b.push(idxSeg(i))
			}
			if ne != nil {
				v.Value[i] = ne
			}
		}
	}
	return nil, nil
}

// validAV is the compiled encoder's check (codec.Check) of a value it does
// not check itself: av, at nesting level level, passes checkEncoded
// unchanged — valid strings, names and numbers, nesting within the limit, no
// duplicate set elements.
func validAV(av types.AttributeValue, level int) bool {
	return checkAVReadOnly(av, level) == nil && !hasDupes(av)
}

// hasDupes reports whether a set in av holds an element twice (as checkAV
// compares them).
func hasDupes(av types.AttributeValue) bool {
	switch v := av.(type) {
	case *types.AttributeValueMemberSS:
		_, dup := dedupe(v.Value, func(s string) string { return s })
		return dup
	case *types.AttributeValueMemberNS:
		_, dup := dedupe(v.Value, avs.Canonical)
		return dup
	case *types.AttributeValueMemberBS:
		_, dup := dedupe(v.Value, func(b []byte) string { return string(b) })
		return dup
	case *types.AttributeValueMemberM:
		for _, e := range v.Value {
			if hasDupes(e) {
				return true
			}
		}
	case *types.AttributeValueMemberL:
		for _, e := range v.Value {
			if hasDupes(e) {
				return true
			}
		}
	}
	return false
}

// checkCondValues checks the names and values of a compiled If condition
// like an item's: valid UTF-8, within the nesting limit. It changes nothing.
// Its callers wrap the error in ErrInvalidInput.
func checkCondValues(names map[string]string, values map[string]types.AttributeValue) error {
	for _, n := range names {
		if !utf8.ValidString(n) {
			b := badName(n)
			return fmt.Errorf("%s: %s", b.what, b.fix)
		}
	}
	for _, v := range values {
		if b := checkAVReadOnly(v, 1); b != nil {
			if p := b.where(); p != "" {
				b.what = "at " + p + " " + b.what
			}
			return fmt.Errorf("a value %s: %s", b.what, b.fix)
		}
	}
	return nil
}

// checkAVReadOnly is checkAV without dropping duplicate set elements: the
// strings, numbers, names and depth of av are checked, nothing is changed.
func checkAVReadOnly(av types.AttributeValue, level int) *badValue {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		if !utf8.ValidString(v.Value) {
			return badString(v.Value)
		}
	case *types.AttributeValueMemberN:
		return checkItemNumber(v.Value)
	case *types.AttributeValueMemberNS:
		for i, e := range v.Value {
			if b := checkItemNumber(e); b != nil {
				return b.push(idxSeg(i))
			}
		}
	case *types.AttributeValueMemberSS:
		for i, e := range v.Value {
			if !utf8.ValidString(e) {
				return badString(e).push(idxSeg(i))
			}
		}
	case *types.AttributeValueMemberM:
		if level++; level > maxNesting {
			return tooDeepEncoded()
		}
		for k, e := range v.Value {
			if k == "" || !utf8.ValidString(k) {
				return badMapKey(k)
			}
			if b := checkAVReadOnly(e, level); b != nil {
				return b.push(keySeg(k))
			}
		}
	case *types.AttributeValueMemberL:
		if level++; level > maxNesting {
			return tooDeepEncoded()
		}
		for i, e := range v.Value {
			if b := checkAVReadOnly(e, level); b != nil {
				return b.push(idxSeg(i))
			}
		}
	}
	return nil
}

func tooDeepEncoded() *badValue {
	return &badValue{what: fmt.Sprintf("nests deeper than DynamoDB's %d levels of maps and lists", maxNesting),
		fix: "flatten the value or store it encoded (e.g. as JSON in a []byte)"}
}

func badMapKey(k string) *badValue {
	if k == "" {
		return &badValue{what: "holds an empty map key", fix: "DynamoDB refuses empty attribute names: give every map entry a non-empty key"}
	}
	return &badValue{what: fmt.Sprintf("holds a map key %s that is not valid UTF-8", strconv.Quote(k)),
		fix: "the SDK would replace the bad bytes with U+FFFD: use valid UTF-8 keys"}
}

// dedupe returns elems without later duplicates (by key) and true, or elems
// and false when there are none. Small sets are compared pairwise, without
// allocating.
func dedupe[E any](elems []E, key func(E) string) ([]E, bool) {
	n := len(elems)
	if n < 2 {
		return elems, false
	}
	dup := false
	if n <= 16 {
	outer:
		for i := 1; i < n; i++ {
			ki := key(elems[i])
			for j := 0; j < i; j++ {
				if key(elems[j]) == ki {
					dup = true
					break outer
				}
			}
		}
	} else {
		seen := make(map[string]struct{}, n)
		for _, e := range elems {
			k := key(e)
			if _, ok := seen[k]; ok {
				dup = true
				break
			}
			seen[k] = struct{}{}
		}
	}
	if !dup {
		return elems, false
	}
	seen := make(map[string]struct{}, n)
	out := make([]E, 0, n)
	for _, e := range elems {
		k := key(e)
		if _, ok := seen[k]; ok {
			continue
		}
		seen[k] = struct{}{}
		out = append(out, e)
	}
	return out, true
}

// checkItemNumber refuses what DynamoDB would refuse as a number (the rule
// is av.Problem's).
func checkItemNumber(s string) *badValue {
	if p := avs.Problem(s); p != "" {
		return &badValue{what: p, fix: "DynamoDB numbers have up to 38 significant digits and magnitudes from 1E-130 to 9.99E+125: store other values as strings"}
	}
	return nil
}

// nilSetElem returns, for an encoder error, the name of the top-level set
// field (stringset, numberset, binaryset or [][]byte) of struct value v that
// holds a nil element, which attributevalue refuses without naming the field;
// "" when there is none.
func (s *schema) nilSetElem(v reflect.Value) string {
	for i := range s.fields {
		f := &s.fields[i]
		if !f.opts.stringSet && !f.opts.numberSet && !f.opts.binarySet && derefType(f.typ) != reflect.TypeFor[[][]byte]() {
			continue
		}
		fv, ok := fieldValue(v, f)
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
					return fmt.Sprintf(" (field %s.%s, attribute %q, holds a nil element at [%d], which a DynamoDB set cannot hold: remove it, or use a list to keep nils)",
						s.typ, f.goName, f.name, j)
				}
			}
		}
	}
	return ""
}

// writtenSize is the size DynamoDB will count for item once written with
// version next and the write token token (nil: none): the version attribute
// as encoded (the version held) is counted as next, the token attribute as
// the token. put says whether item is written whole (PutItem); an
// UpdateItem removes (or leaves alone) the attributes that are NULL instead
// of storing them, so they do not count.
func (t *Table[T]) writtenSize(item map[string]types.AttributeValue, next int64, token []byte, put bool) int {
	s := t.p.s
	var version, tokenAttr string
	if s.version >= 0 {
		version = s.fields[s.version].name
	}
	if token != nil {
		tokenAttr = t.p.tokenAttr
	}
	n := 0
	for k, v := range item {
		switch {
		case k == version || k == tokenAttr && k != "":
			// counted below as written
		case !put && isNull(v):
			// removed or left alone by UpdateItem, not stored
		default:
			n += len(k) + avs.Size(v)
		}
	}
	if version != "" {
		n += len(version) + avs.NumberSize(strconv.FormatInt(next, 10))
	}
	if tokenAttr != "" {
		n += len(tokenAttr) + len(token)
	}
	return n
}

// sizeOf is writtenSize, from the sizes the codec counted while encoding
// item when it did (sz.ok): the same count without walking the item again.
func (t *Table[T]) sizeOf(item map[string]types.AttributeValue, sz itemSizes, next int64, token []byte, put bool) int {
	if !sz.ok {
		return t.writtenSize(item, next, token, put)
	}
	s := t.p.s
	n := sz.total
	if !put {
		n -= sz.nulls
	}
	if s.version >= 0 {
		name := s.fields[s.version].name
		if v, ok := item[name]; ok && (put || !isNull(v)) {
			n -= len(name) + avs.Size(v) // counted below as written
		}
		n += len(name) + avs.NumberSize(strconv.FormatInt(next, 10))
	}
	if token != nil && t.p.tokenAttr != "" {
		// The codec's item never holds the token attribute: NewTable
		// refuses a field of its name on a versioned type.
		n += len(t.p.tokenAttr) + len(token)
	}
	return n
}

func isNull(av types.AttributeValue) bool {
	_, null := av.(*types.AttributeValueMemberNULL)
	return null
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

// failingField returns, for an encoder error, " (field F, attribute "a")"
// naming the first top-level field of struct value v that fails to encode
// on its own; "" when none does. Only called on the error path.
func (s *schema) failingField(enc *attributevalue.Encoder, v reflect.Value) string {
	if hint := s.nilSetElem(v); hint != "" {
		return hint
	}
	for i := range s.fields {
		f := &s.fields[i]
		fv, ok := fieldValue(v, f)
		if !ok || !fv.CanInterface() {
			continue
		}
		if _, err := enc.Encode(fv.Interface()); err != nil {
			return fmt.Sprintf(" (field %s.%s, attribute %q)", s.typ, f.goName, f.name)
		}
	}
	return ""
}
