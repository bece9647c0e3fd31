//lint:file-ignore ST1005 the messages start with the root's call, Increment, as users write it

package plan

import (
	"bytes"
	"encoding"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/codec"
	"github.com/ddbkit/dynamo/internal/schema"
)

// AddNumber checks that n may be added to field f and returns it as a
// DynamoDB number, with the bound that keeps an integer or float32 field's
// result within its Go type, so that the item always loads (nil for
// float64, which holds every number DynamoDB stores).
func AddNumber(f *schema.Field, n any) (types.AttributeValue, *AddBound, error) {
	ft := schema.DerefType(f.Type)
	switch {
	case codec.IsText(ft):
		return nil, nil, fmt.Errorf("field %s (%s) is stored as text (the string its MarshalText returns), not a number: Increment adds to numbers (N); use Table.Update to change it", f.GoName, f.Type)
	case f.Opts.AsString || f.Custom || f.Opts.JavaBool:
		return nil, nil, fmt.Errorf("field %s is not stored as a number: Increment adds to numbers (N)", f.GoName)
	case ft.Kind() >= reflect.Int && ft.Kind() <= reflect.Float64 && ft.Kind() != reflect.Uintptr:
	default:
		return nil, nil, fmt.Errorf("field %s is of type %s, not a number: Increment adds to integer and floating-point fields", f.GoName, f.Type)
	}
	var text string
	rv := reflect.ValueOf(n)
	switch {
	case n == nil:
		return nil, nil, fmt.Errorf("Increment by nil: pass a number")
	case rv.Type() == reflect.TypeFor[attributevalue.Number]():
		text = rv.String()
		if _, _, _, ok := av.Scan(text); !ok {
			return nil, nil, fmt.Errorf("Increment by %q, which is not a number", text)
		}
	case rv.CanInt():
		text = strconv.FormatInt(rv.Int(), 10)
	case rv.CanUint():
		text = strconv.FormatUint(rv.Uint(), 10)
	case rv.CanFloat():
		x := rv.Float()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, nil, fmt.Errorf("Increment by %v: DynamoDB stores no NaN or infinity", x)
		}
		text = strconv.FormatFloat(x, 'g', -1, 64)
	default:
		return nil, nil, fmt.Errorf("Increment by a %T: pass an integer or a floating-point number", n)
	}
	if p := av.Problem(text); p != "" {
		return nil, nil, fmt.Errorf("Increment by %s: the value %s; pass a number DynamoDB stores (at most %d significant digits)", av.Short(text), p, av.MaxDigits)
	}
	num := &types.AttributeValueMemberN{Value: text}
	lo, hi := intRange(ft)
	if lo == nil {
		return num, nil, nil // float64 holds every number DynamoDB stores
	}
	var by *big.Rat
	b := &AddBound{f: f, n: text}
	if ft.Kind() == reflect.Float32 {
		by, _ = av.Rat(text) // Problem passed: math/big builds it
	} else {
		i, ok := av.Int(text)
		if !ok {
			return nil, nil, fmt.Errorf("Increment by %s, not a whole number, of the integer field %s (%s): add whole numbers, or make the field a float64", text, f.GoName, f.Type)
		}
		by, b.n = new(big.Rat).SetInt(i), i.String()
	}
	b.FromZero = by.Cmp(new(big.Rat).SetInt(lo)) >= 0 && by.Cmp(new(big.Rat).SetInt(hi)) <= 0
	if by.Sign() >= 0 {
		b.lim, b.max = limit(new(big.Rat).Sub(new(big.Rat).SetInt(hi), by), false), true
	} else {
		b.lim = limit(new(big.Rat).Sub(new(big.Rat).SetInt(lo), by), true)
	}
	if b.max && b.lim.Cmp(lo) < 0 || !b.max && b.lim.Cmp(hi) > 0 {
		return nil, nil, fmt.Errorf("Increment by %s is beyond what field %s (%s) holds", text, f.GoName, f.Type)
	}
	return num, b, nil
}

// limit returns the bound r of an Add's condition as a number DynamoDB
// takes (an integer of at most 38 significant digits), rounded up for a
// lower bound and down for an upper one, so that the condition never lets
// a result out of range (a float32 counter within a few units of 3.4E38
// stops a little early). Integer fields' bounds are exact.
func limit(r *big.Rat, up bool) *big.Int {
	i := new(big.Int).Div(r.Num(), r.Denom()) // floor (Euclidean, positive divisor)
	if up && !r.IsInt() {
		i.Add(i, big.NewInt(1))
	}
	if d := len(new(big.Int).Abs(i).String()); d > av.MaxDigits {
		q := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d-av.MaxDigits)), nil)
		m := new(big.Int).Mod(i, q)
		i.Sub(i, m) // floor to a multiple of q
		if up && m.Sign() != 0 {
			i.Add(i, q)
		}
	}
	return i
}

// intRange returns the smallest and largest values of integer type t; for
// float32, the largest number that loads into one (float32Max) and its
// negation; nil for float64, which holds every number DynamoDB stores.
func intRange(t reflect.Type) (*big.Int, *big.Int) {
	switch t.Kind() {
	case reflect.Float64:
		return nil, nil
	case reflect.Float32:
		return new(big.Int).Neg(float32Max), new(big.Int).Set(float32Max)
	}
	bits := uint(t.Size() * 8)
	one := big.NewInt(1)
	if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
		return big.NewInt(0), new(big.Int).Sub(new(big.Int).Lsh(one, bits), one)
	}
	hi := new(big.Int).Sub(new(big.Int).Lsh(one, bits-1), one)
	return new(big.Int).Neg(new(big.Int).Add(hi, one)), hi
}

// float32Max is the largest number that loads into a float32: a stored
// number is parsed as a float64 (rounded to the nearest, ties to even) and
// refused when that is beyond math.MaxFloat32, so every number up to
// halfway to the float64 after math.MaxFloat32 loads — as math.MaxFloat32.
// The bound is not math.MaxFloat32 itself: Go writes a float32 counter at
// its maximum as 3.4028234663852886e+38, its shortest float64 form, which
// is a little above it.
var float32Max = func() *big.Int {
	lo, _ := new(big.Float).SetFloat64(math.MaxFloat32).Int(nil)
	hi, _ := new(big.Float).SetFloat64(math.Nextafter(math.MaxFloat32, math.Inf(1))).Int(nil)
	mid := lo.Add(lo, hi)
	return mid.Rsh(mid, 1) // even: both are multiples of 2^75
}()

// SetElems checks that elems may be added to or deleted from the set field
// f and returns them as a DynamoDB set of the field's kind.
func SetElems(f *schema.Field, elems any) (types.AttributeValue, error) {
	kind := f.StoredSetKind()
	ft := schema.DerefType(f.Type)
	if kind == 0 && schema.OneValueWhateverSet(ft) && (f.SetKind != 0 || f.Opts.StringSet || f.Opts.NumberSet || f.Opts.BinarySet) {
		as := "one binary value (B)"
		if codec.IsText(ft) {
			as = "its text, one string (S)"
		}
		return nil, fmt.Errorf("field %s (%s) is stored as %s, not as a set, whatever its set option: make it a slice of numbers, strings or [][]byte, or change it with Update", f.GoName, f.Type, as)
	}
	var textElem reflect.Type // the field's elements are of this text type, stored as their text
	if (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array) && !codec.IsText(ft) && codec.IsText(schema.DerefType(ft.Elem())) &&
		(f.SetKind != 0 || f.Opts.StringSet) {
		kind, textElem = 'S', schema.DerefType(ft.Elem())
	}
	if kind == 0 {
		return nil, fmt.Errorf("field %s (%s) is not stored as a set: tag it `set` (or stringset, numberset, binaryset) to add elements, or use Table.Update to change a list", f.GoName, f.Type)
	}
	what := map[byte]string{'S': "strings", 'N': "numbers", 'B': "[]byte values"}[kind]
	if textElem != nil {
		what = fmt.Sprintf("%s values (stored as their text) or strings", textElem)
	}
	rv, err := setElemsArg(elems, kind, what)
	if err != nil {
		return nil, err
	}
	numElem := numberElem(f, kind)
	out := make([]string, 0, rv.Len())
	var bs [][]byte
	for j := 0; j < rv.Len(); j++ {
		e := rv.Index(j)
		for e.Kind() == reflect.Pointer || e.Kind() == reflect.Interface {
			if e.IsNil() {
				return nil, fmt.Errorf("element [%d] is nil, which a set cannot hold", j)
			}
			e = e.Elem()
		}
		switch {
		case kind == 'S' && codec.IsText(e.Type()):
			text, err := schema.MarshalText(e)
			if err != nil {
				return nil, fmt.Errorf("element [%d]: %w", j, err)
			}
			if err := textHeld(textElem, text); err != nil {
				return nil, fmt.Errorf("element [%d] (a %s) %w", j, e.Type(), err)
			}
			out = append(out, text)
		case kind == 'S' && e.Kind() == reflect.String:
			if err := textHeld(textElem, e.String()); err != nil {
				return nil, fmt.Errorf("element [%d] %w", j, err)
			}
			out = append(out, e.String())
		case kind == 'N' && (e.CanInt() || e.CanUint() || e.CanFloat() || schema.NumberLike(e.Type())):
			text, err := setNumberElem(f, e, numElem, what)
			if err != nil {
				return nil, fmt.Errorf("element [%d] %w", j, err)
			}
			out = append(out, text)
		case kind == 'B' && e.Kind() == reflect.Slice && e.Type().Elem().Kind() == reflect.Uint8:
			if e.IsNil() {
				return nil, fmt.Errorf("element [%d] is nil, which a set cannot hold (an empty []byte{} is an element)", j)
			}
			bs = append(bs, bytes.Clone(e.Bytes())) // an empty element stays empty, not nil (no element)
		default:
			return nil, fmt.Errorf("element [%d] is a %s, but field %s is a set of %s", j, e.Type(), f.GoName, what)
		}
	}
	switch kind {
	case 'S':
		return &types.AttributeValueMemberSS{Value: out}, nil
	case 'N':
		return &types.AttributeValueMemberNS{Value: out}, nil
	}
	return &types.AttributeValueMemberBS{Value: bs}, nil
}

// setElemsArg returns elems, given for a set of kind holding what, as a
// reflect.Value: a non-empty slice or array of elements, not one value.
func setElemsArg(elems any, kind byte, what string) (reflect.Value, error) {
	rv := reflect.ValueOf(elems)
	if elems == nil || rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array || rv.Type() == schema.ByteSliceType && kind != 'B' {
		return rv, fmt.Errorf("elements given as %T: pass a slice of %s", elems, what)
	}
	if codec.IsText(rv.Type()) { // one value, such as a [16]byte UUID
		return rv, fmt.Errorf("elements given as one %s: pass a slice, []%s{v}", rv.Type(), rv.Type())
	}
	if rv.Type() == schema.ByteSliceType { // one binary value
		return rv, fmt.Errorf("elements given as one []byte: pass a [][]byte")
	}
	if rv.Len() == 0 {
		return rv, fmt.Errorf("no elements: DynamoDB has no empty sets; pass at least one")
	}
	return rv, nil
}

// setNumberElem returns number e as field f's set stores it: converted to
// its element type numElem (nil: numbers as text), refused when it holds no
// such number. what names the field's elements, for the message.
func setNumberElem(f *schema.Field, e reflect.Value, numElem reflect.Type, what string) (string, error) {
	if schema.NumberLike(e.Type()) { // attributevalue.Number, json.Number: a number as text
		text := e.String()
		if p := av.Problem(text); p != "" {
			return "", fmt.Errorf("(a %s) %s: pass numbers DynamoDB stores (at most %d significant digits)", e.Type(), p, av.MaxDigits)
		}
		if numElem == nil { // the field's elements are numbers as text too
			return text, nil
		}
		e = goNumber(text) // converted to the field's Go numbers as one is
	}
	text, err := setNumber(e, numElem)
	if err != nil {
		held := what
		if numElem != nil {
			held = numElem.String()
		}
		return "", fmt.Errorf("%w: field %s is a set of %s; pass elements it holds", err, f.GoName, held)
	}
	return text, nil
}

// goNumber returns text, a number DynamoDB stores (av.Problem passed), as
// a Go number: an int64 or a uint64 when it is one written as an integer,
// else the nearest float64.
func goNumber(text string) reflect.Value {
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		return reflect.ValueOf(i)
	}
	if u, err := strconv.ParseUint(text, 10, 64); err == nil {
		return reflect.ValueOf(u)
	}
	x, _ := strconv.ParseFloat(text, 64) // within ±1E126: finite
	return reflect.ValueOf(x)
}

// numberElem returns the element type of f, a field stored as a set of
// the kind given, when it is a Go number (else nil): an element is stored
// as the field would store it (converted to that type), and one it cannot
// hold is refused — stored, it would make the item fail to load.
func numberElem(f *schema.Field, kind byte) reflect.Type {
	if ft := schema.DerefType(f.Type); kind == 'N' && (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array) {
		if et := schema.DerefType(ft.Elem()); et.Kind() >= reflect.Int && et.Kind() <= reflect.Float64 && et.Kind() != reflect.Uintptr {
			return et
		}
	}
	return nil
}

// textHeld returns an error unless the set of elements of the text type
// elem can hold text: elem's UnmarshalText takes it (stored, text that it
// refuses would make the item fail to load). Nil when elem is nil (the
// field's elements are strings).
func textHeld(elem reflect.Type, text string) error {
	if elem == nil {
		return nil
	}
	if err := reflect.New(elem).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(text)); err != nil {
		return fmt.Errorf("%.40q is no %s: %s.UnmarshalText: %v; pass values of the field's type (or their text)", text, elem, elem, err)
	}
	return nil
}

// setNumber returns the number e (of an integer or float kind) as a set
// of elements of type elem stores it: converted to elem, as assigning it to
// the field would (a float32 is written as its shortest float32 text: the
// value the codec writes for the field, which DynamoDB compares by value),
// or an error saying why elem cannot hold it.
// With elem nil (the field's elements are not Go numbers) e is written as
// it is.
func setNumber(e reflect.Value, elem reflect.Type) (string, error) {
	if e.CanFloat() {
		x := e.Float()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", fmt.Errorf("is %v: DynamoDB stores no NaN or infinity", x)
		}
	}
	if elem == nil {
		elem = e.Type()
	}
	z := reflect.New(elem).Elem()
	switch {
	case z.CanFloat():
		bits := elem.Bits()
		var x float64
		switch {
		case e.CanFloat():
			x = e.Float()
		case e.CanInt():
			x = float64(e.Int())
		default:
			x = float64(e.Uint())
		}
		if z.OverflowFloat(x) {
			return "", fmt.Errorf("is %v, beyond what a %s holds", e, elem)
		}
		if bits == 32 {
			x = float64(float32(x))
		}
		return strconv.FormatFloat(x, 'g', -1, bits), nil
	case z.CanInt():
		return setInt(e, elem, z)
	default: // unsigned
		return setUint(e, elem, z)
	}
}

// setInt is setNumber for an element type of a signed integer kind (z, its
// zero value).
func setInt(e reflect.Value, elem reflect.Type, z reflect.Value) (string, error) {
	var i int64
	switch {
	case e.CanInt():
		i = e.Int()
	case e.CanUint():
		if e.Uint() > math.MaxInt64 {
			return "", fmt.Errorf("is %v, beyond what a %s holds", e, elem)
		}
		i = int64(e.Uint())
	default:
		x := e.Float()
		if x != math.Trunc(x) {
			return "", fmt.Errorf("is %v, not a whole number", e)
		}
		if x < -(1<<63) || x >= 1<<63 {
			return "", fmt.Errorf("is %v, beyond what a %s holds", e, elem)
		}
		i = int64(x)
	}
	if z.OverflowInt(i) {
		return "", fmt.Errorf("is %v, beyond what a %s holds", e, elem)
	}
	return strconv.FormatInt(i, 10), nil
}

// setUint is setNumber for an element type of an unsigned integer kind (z,
// its zero value).
func setUint(e reflect.Value, elem reflect.Type, z reflect.Value) (string, error) {
	var u uint64
	switch {
	case e.CanUint():
		u = e.Uint()
	case e.CanInt():
		if e.Int() < 0 {
			return "", fmt.Errorf("is %v, below zero", e)
		}
		u = uint64(e.Int())
	default:
		x := e.Float()
		if x != math.Trunc(x) {
			return "", fmt.Errorf("is %v, not a whole number", e)
		}
		if x < 0 {
			return "", fmt.Errorf("is %v, below zero", e)
		}
		if x >= 1<<64 {
			return "", fmt.Errorf("is %v, beyond what a %s holds", e, elem)
		}
		u = uint64(x)
	}
	if z.OverflowUint(u) {
		return "", fmt.Errorf("is %v, beyond what a %s holds", e, elem)
	}
	return strconv.FormatUint(u, 10), nil
}

// BoundsFailure explains a failed Add whose stored item old leaves no room
// for one of the bounded changes (integer and float32 fields); "" when none
// is out of room.
func BoundsFailure(bounds []AddBound, old map[string]types.AttributeValue) string {
	for _, b := range bounds {
		text := "missing (0)"
		cur := new(big.Rat)
		if n, ok := old[b.f.Name].(*types.AttributeValueMemberN); ok {
			r, ok := av.Rat(n.Value)
			if !ok {
				continue
			}
			cur, text = r, n.Value
		} else if b.FromZero {
			continue
		}
		if c := cur.Cmp(new(big.Rat).SetInt(b.lim)); b.max && c <= 0 || !b.max && c >= 0 {
			continue
		}
		return fmt.Sprintf("%s is %s, and adding %s would pass what field %s (%s) holds: widen the field", b.f.Name, text, b.n, b.f.GoName, b.f.Type)
	}
	return ""
}

// AddBound is the guard of an integer or float32 field's result: the
// stored value must stay within [min, max] after n is added.
type AddBound struct {
	f   *schema.Field
	n   string   // the number added, for messages
	lim *big.Int // the value the stored one is compared with
	max bool     // the bound is an upper one
	// FromZero: n itself is in range, so a missing attribute (0) may take it.
	FromZero bool
}

// Cond returns the condition that the stored value leaves the result of
// the Add in range, and writes its value to eb.
func (b *AddBound) Cond(eb *ExprBuilder) string {
	f := b.f
	bph := ":x" + f.ValuePH[2:]
	eb.Values[bph] = &types.AttributeValueMemberN{Value: b.lim.String()}
	cmp := " <= "
	if !b.max {
		cmp = " >= "
	}
	c := f.NamePH + cmp + bph
	if b.FromZero {
		// A missing attribute counts from 0, which n leaves in range.
		c = "attribute_not_exists(" + f.NamePH + ") OR " + c
	}
	return c
}
