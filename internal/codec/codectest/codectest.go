// Package codectest builds Go values and attribute values from fuzz input,
// for the differential tests of the compiled codec (internal/codec) and of
// the mapper's encoding, and holds UUID, the text type the tests of the
// codec, the mapper and the integration suite share.
package codectest

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

var timeType = reflect.TypeFor[time.Time]()

// Gen reads fuzz input.
type Gen struct {
	Data  []byte
	depth int
}

// Fill sets v (settable) from the input.
func (g *Gen) Fill(v reflect.Value) { g.fill(v) }

// AV returns a random attribute value.
func (g *Gen) AV() types.AttributeValue { return g.av(0) }

// Name returns an attribute name, mostly one of names.
func (g *Gen) Name(names []string) string {
	c := g.byte()
	if c%8 == 7 || len(names) == 0 {
		return g.str()
	}
	return names[int(c)%len(names)]
}

// Byte returns the next input byte (0 when none is left).
func (g *Gen) Byte() byte { return g.byte() }

// Left reports how many input bytes are left.
func (g *Gen) Left() int { return len(g.Data) }

// MyTime is convertible to time.Time without being one.
type MyTime time.Time

// Inner is what interface values may hold besides scalars, maps and lists.
type Inner struct {
	A string `dynamo:"a"`
}

// Marsh has a custom encoding: interface values may hold a *Marsh.
type Marsh struct{ V string }

// MarshalDynamoDBAttributeValue stores "m:" and V.
func (m Marsh) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return &types.AttributeValueMemberS{Value: "m:" + m.V}, nil
}

func (g *Gen) byte() byte {
	if len(g.Data) == 0 {
		return 0
	}
	c := g.Data[0]
	g.Data = g.Data[1:]
	return c
}

func (g *Gen) str() string {
	c := g.byte()
	n := min(int(c&0x0f), len(g.Data))
	b := []byte(string(g.Data[:n]))
	g.Data = g.Data[n:]
	switch c >> 6 {
	case 0: // letters
		for i := range b {
			b[i] = 'a' + b[i]%26
		}
	case 1: // few letters: collisions (set duplicates, map keys)
		for i := range b {
			b[i] = 'a' + b[i]%3
		}
		if len(b) > 1 {
			b = b[:1]
		}
	}
	return string(b)
}

var floats = []float64{0, math.Copysign(0, -1), 1, -1, 1.5, 100, 1e21, 1e-7, math.NaN(), math.Inf(1), math.Inf(-1),
	1e300, 1e-300, 1e125, 1e126, 1e-129, 1e-131, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64, math.MaxFloat32, 3.4e39}

var ints = []int64{0, 1, -1, 127, -128, 255, 256, 32767, -32768, 1 << 31, -1 << 31, math.MaxInt64, math.MinInt64, 42}

var locs = []*time.Location{time.UTC, time.FixedZone("X", 3600), time.FixedZone("Y", -5*3600-30*60), time.FixedZone("Z", 37)}

func (g *Gen) time() time.Time {
	c := g.byte()
	if c%5 == 0 {
		return time.Time{}
	}
	sec := int64(g.byte())<<24 | int64(g.byte())<<16 | int64(g.byte())<<8 | int64(g.byte())
	if c&0x80 != 0 {
		sec = -sec * 1000
	}
	ns := int64(0)
	if c&0x40 != 0 {
		ns = int64(g.byte()) * 1000003
	}
	return time.Unix(sec, ns).In(locs[int(c>>2)%len(locs)])
}

// fill sets v (settable) from the input.
func (g *Gen) fill(v reflect.Value) {
	g.depth++
	defer func() { g.depth-- }()
	if g.depth > 8 {
		return
	}
	t := v.Type()
	if t == timeType {
		v.Set(reflect.ValueOf(g.time()))
		return
	}
	if t == reflect.TypeFor[MyTime]() {
		v.Set(reflect.ValueOf(MyTime(g.time())))
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		g.fillContainer(v)
	case reflect.Interface:
		g.fillInterface(v)
	case reflect.Func:
		if g.byte()%4 == 1 {
			v.Set(reflect.ValueOf(func() {}))
		}
	case reflect.Struct:
		g.fillStruct(v)
	default:
		g.fillScalar(v)
	}
}

// fillScalar fills v, of a string, bool or number kind.
func (g *Gen) fillScalar(v reflect.Value) {
	t := v.Type()
	switch t.Kind() {
	case reflect.String:
		switch {
		case t == reflect.TypeFor[json.Number]() || t == reflect.TypeFor[attributevalue.Number]():
			c := g.byte()
			if c%3 == 0 {
				v.SetString(g.str())
			} else {
				v.SetString(strconv.FormatInt(ints[int(c)%len(ints)], 10))
			}
		default:
			v.SetString(g.str())
		}
	case reflect.Bool:
		v.SetBool(g.byte()&1 == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i := ints[int(g.byte())%len(ints)]
		if !v.OverflowInt(i) {
			v.SetInt(i)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := uint64(ints[int(g.byte())%len(ints)])
		if !v.OverflowUint(u) {
			v.SetUint(u)
		}
	case reflect.Float32, reflect.Float64:
		f := floats[int(g.byte())%len(floats)]
		if t.Kind() == reflect.Float32 {
			f = float64(float32(f))
		}
		v.SetFloat(f)
	case reflect.Complex64, reflect.Complex128:
		v.SetComplex(complex(float64(g.byte()), 0))
	}
}

// fillContainer fills v, a pointer, slice, array or map, and what it holds.
func (g *Gen) fillContainer(v reflect.Value) {
	t := v.Type()
	switch t.Kind() {
	case reflect.Pointer:
		if g.byte()%3 == 0 {
			return
		}
		p := reflect.New(t.Elem())
		g.fill(p.Elem())
		v.Set(p)
	case reflect.Slice:
		c := g.byte()
		if c%4 == 0 {
			return
		}
		n := int(c>>2) % 4
		s := reflect.MakeSlice(t, n, n)
		for i := 0; i < n; i++ {
			g.fill(s.Index(i))
		}
		v.Set(s)
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			g.fill(v.Index(i))
		}
	case reflect.Map:
		c := g.byte()
		if c%4 == 0 {
			return
		}
		n := int(c>>2) % 4
		m := reflect.MakeMap(t)
		for i := 0; i < n; i++ {
			k := reflect.New(t.Key()).Elem()
			g.fill(k)
			e := reflect.New(t.Elem()).Elem()
			g.fill(e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	}
}

// fillInterface sets v, an interface, to one of a few dynamic values (or
// leaves it nil).
func (g *Gen) fillInterface(v reflect.Value) {
	switch g.byte() % 7 {
	case 1:
		v.Set(reflect.ValueOf(g.str()))
	case 2:
		v.Set(reflect.ValueOf(floats[int(g.byte())%len(floats)]))
	case 3:
		v.Set(reflect.ValueOf(map[string]any{g.str(): g.str()}))
	case 4:
		v.Set(reflect.ValueOf([]any{g.str(), attributevalue.Number("12")}))
	case 5:
		v.Set(reflect.ValueOf(Inner{A: g.str()}))
	case 6:
		v.Set(reflect.ValueOf(&Marsh{V: g.str()}))
	}
}

// fillStruct fills v's exported fields (and those of unexported embedded
// structs); a one-string-field struct sometimes gets the value its
// marshaler fails on.
func (g *Gen) fillStruct(v reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		fv := v.Field(i)
		if !sf.IsExported() {
			if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
				// unexported embedded struct: fill its exported fields
				fv = reflect.NewAt(sf.Type, fv.Addr().UnsafePointer()).Elem()
				g.fill(fv)
			}
			continue
		}
		g.fill(fv)
	}
	if t.NumField() == 1 && t.Field(0).Name == "V" && t.Field(0).Type.Kind() == reflect.String && g.byte()%9 == 1 {
		v.Field(0).SetString("fail") // a marshaler that fails
	}
}

// ---- random attribute values, for decoding ----

func (g *Gen) av(depth int) types.AttributeValue {
	c := g.byte()
	if depth > 3 {
		c %= 5
	}
	switch c % 12 {
	case 0:
		return &types.AttributeValueMemberS{Value: g.str()}
	case 1:
		n := []string{"0", "1", "-1", "300", "1.5", "-0", "1e3", "NaN", "9223372036854775808", "abc", "1700000000", "3.5e38", "1e400"}
		return &types.AttributeValueMemberN{Value: n[int(g.byte())%len(n)]}
	case 2:
		return &types.AttributeValueMemberBOOL{Value: g.byte()&1 == 1}
	case 3:
		return &types.AttributeValueMemberNULL{Value: true}
	case 4:
		b := []byte(g.str())
		return &types.AttributeValueMemberB{Value: b}
	case 5:
		s := []string{"2024-03-14T15:09:26.5Z", "2024-03-14T15:09:26+01:00", "bad"}
		return &types.AttributeValueMemberS{Value: s[int(g.byte())%len(s)]}
	case 6:
		return &types.AttributeValueMemberSS{Value: []string{g.str(), g.str()}}
	case 7:
		return &types.AttributeValueMemberNS{Value: []string{"1", "2.5", "-3"}[:int(g.byte())%4]}
	case 8:
		return &types.AttributeValueMemberBS{Value: [][]byte{[]byte(g.str())}}
	case 9:
		n := int(g.byte()) % 3
		l := make([]types.AttributeValue, n)
		for i := range l {
			l[i] = g.av(depth + 1)
		}
		return &types.AttributeValueMemberL{Value: l}
	default:
		n := int(g.byte()) % 3
		m := map[string]types.AttributeValue{}
		for i := 0; i < n; i++ {
			m[g.Name(nil)] = g.av(depth + 1)
		}
		return &types.AttributeValueMemberM{Value: m}
	}
}
