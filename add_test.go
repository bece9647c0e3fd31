package dynamo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
	avs "github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/itemstate"
	"github.com/ddbkit/dynamo/internal/plan"
)

type counterItem struct {
	ID       string    `dynamo:"id,hash"`
	Views    int64     `dynamo:"views"`
	Small    int8      `dynamo:"small"`
	Score    float64   `dynamo:"score"`
	Tags     []string  `dynamo:"tags,set,omitempty"`
	Nums     []int     `dynamo:"nums,numberset,omitempty"`
	List     []string  `dynamo:"list"`
	Name     string    `dynamo:"name"`
	Created  time.Time `dynamo:"created,created"`
	Modified time.Time `dynamo:"modified,modified"`
	V        int64     `dynamo:"v,version"`
}

// Add refuses a Delta it cannot apply — an unknown or wrong field, an
// increment that is no number DynamoDB stores or that the field cannot
// hold, an empty Delta — with ErrInvalidInput, sending nothing.
func TestAddRefused(t *testing.T) {
	st := &fakeDB{noStore: true}
	tb, err := NewTable[counterItem](NewMapper(st), "c")
	if err != nil {
		t.Fatal(err)
	}
	k := counterItem{ID: "k"}
	for _, tc := range []struct {
		d    Delta
		opts []WriteOption
		want string
	}{
		{Delta{}, nil, "empty Delta"},
		{Increment("nope", 1), nil, "not an attribute of"},
		{Increment("Views", 1), nil, `field Views is stored as "views"`},
		{Increment("id", 1), nil, "is a key"},
		{Increment("v", 1), nil, "is the version"},
		{Increment("modified", 1), nil, "created or modified time"},
		{Increment("name", 1), nil, "not a number"},
		{Increment("views", 1.5), nil, "not a whole number"},
		{Increment("views", "1"), nil, "pass an integer"},
		{Increment("views", nil), nil, "pass a number"},
		{Increment("score", math.NaN()), nil, "no NaN"},
		{Increment("views", attributevalue.Number("x")), nil, "not a number"},
		{Increment("views", attributevalue.Number("1e1001000")), nil, "outside DynamoDB's range"},
		{Increment("score", attributevalue.Number("1e1001000")), nil, "outside DynamoDB's range"},
		{Increment("score", 1e200), nil, "outside DynamoDB's range"},
		{Increment("score", attributevalue.Number("1.23456789012345678901234567890123456789")), nil, "39 significant digits"},
		{Increment("small", 300), nil, "beyond what field Small (int8) holds"},
		{Increment("views", 1).Increment("views", 2), nil, "changed twice"},
		{AddToSet("list", []string{"a"}), nil, "not stored as a set"},
		{AddToSet("tags", []int{1}), nil, "is a int, but field Tags is a set of strings"},
		{AddToSet("tags", []string{}), nil, "no elements"},
		{AddToSet("tags", "a"), nil, "pass a slice of strings"},
		{DeleteFromSet("nums", []string{"1"}), nil, "set of numbers"},
		{AddToSet("tags", []string{"\xff"}), nil, "not valid UTF-8"},
		{Increment("views", 1), []WriteOption{WithSaveBehavior(SavePut)}, "remove WithSaveBehavior"},
	} {
		_, err := tb.Add(t.Context(), k, tc.d, tc.opts...)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%+v) = %v, want ErrInvalidInput saying %q", tc.d, err, tc.want)
		}
	}
	if _, err := tb.Add(t.Context(), counterItem{}, Increment("views", 1)); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Add without a key = %v", err)
	}
	if n := len(st.upds()) + len(st.gets()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
	// Reuse: a Delta's methods never change it.
	d := Increment("views", 1)
	d2 := d.Increment("score", 2)
	if len(d.ops) != 1 || len(d2.ops) != 2 {
		t.Fatal("Delta shared its list")
	}
}

func TestAdd(t *testing.T) {
	tb, fc := idTable[counterItem](t)
	ctx := t.Context()
	t0 := fc.Now()
	got, err := tb.Add(ctx, counterItem{ID: "k", Name: "ignored"}, Increment("views", 1).Increment("score", 0.5).AddToSet("tags", []string{"a", "b", "a"}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Views != 1 || got.Score != 0.5 || !slices.Equal(sorted(got.Tags), []string{"a", "b"}) || got.V != 1 || got.Name != "" ||
		!got.Created.Equal(t0) || !got.Modified.Equal(t0) {
		t.Fatalf("Add to a missing item = %+v", got)
	}
	held := got
	fc.Advance(time.Second)
	got, err = tb.Add(ctx, counterItem{ID: "k"}, Increment("views", 41).DeleteFromSet("tags", []string{"a"}).AddToSet("nums", []int{7}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Views != 42 || !slices.Equal(got.Tags, []string{"b"}) || !slices.Equal(got.Nums, []int{7}) || got.V != 2 ||
		!got.Created.Equal(t0) || !got.Modified.Equal(fc.Now()) {
		t.Fatalf("second Add = %+v", got)
	}
	loaded, err := tb.Load(ctx, counterItem{ID: "k"}, ConsistentRead())
	if err != nil || loaded.Views != 42 || loaded.V != 2 {
		t.Fatalf("stored %+v, %v", loaded, err)
	}
	// Whoever holds the copy from before the Add conflicts.
	held.Name = "stale"
	if _, err := tb.Save(ctx, held); !errors.Is(err, ErrVersionConflict) {
		t.Fatalf("Save of a copy read before Add = %v, want a conflict", err)
	}
	if err := tb.Delete(ctx, held); !errors.Is(err, ErrVersionConflict) {
		t.Fatalf("Delete of a copy read before Add = %v, want a conflict", err)
	}

	// Concurrent Adds all count, none conflicts.
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := tb.Add(ctx, counterItem{ID: "k"}, Increment("views", 1)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	loaded, _ = tb.Load(ctx, counterItem{ID: "k"}, ConsistentRead())
	if loaded.Views != 50 || loaded.V != 10 {
		t.Fatalf("after 8 concurrent Adds: views %d version %d, want 50 and 10", loaded.Views, loaded.V)
	}

	// An int8 counter stops at what the field holds.
	if _, err := tb.Add(ctx, counterItem{ID: "k"}, Increment("small", 100)); err != nil {
		t.Fatal(err)
	}
	_, err = tb.Add(ctx, counterItem{ID: "k"}, Increment("small", 100))
	if !errors.Is(err, ErrConditionFailed) || !strings.Contains(err.Error(), "would pass what field Small (int8) holds") {
		t.Fatalf("int8 past 127 = %v, want ErrConditionFailed naming the field", err)
	}
	if _, err := tb.Add(ctx, counterItem{ID: "k"}, Increment("small", -228)); err != nil { // 100-228 = -128
		t.Fatal(err)
	}
	if _, err := tb.Add(ctx, counterItem{ID: "k"}, Increment("small", -1)); !errors.Is(err, ErrConditionFailed) {
		t.Fatalf("int8 below -128 = %v, want ErrConditionFailed", err)
	}

	// An unsigned counter never goes below 0, also from a missing attribute.
	type ucount struct {
		ID string `dynamo:"id,hash"`
		U  uint8  `dynamo:"u"`
	}
	ut, err := NewTable[ucount](tb.Mapper(), tb.Name())
	if err != nil {
		t.Fatal(err)
	}
	_, err = ut.Add(ctx, ucount{ID: "u"}, Increment("u", -1))
	if !errors.Is(err, ErrConditionFailed) || !strings.Contains(err.Error(), "u is missing (0), and adding -1") {
		t.Fatalf("uint8 below 0 from a missing attribute = %v, want ErrConditionFailed", err)
	}
	if u, err := ut.Add(ctx, ucount{ID: "u"}, Increment("u", 255)); err != nil || u.U != 255 {
		t.Fatalf("uint8 to 255 = %+v, %v", u, err)
	}

	// If conditions: require the item to exist.
	exists := If(expression.AttributeExists(expression.Name("id")))
	if _, err := tb.Add(ctx, counterItem{ID: "missing"}, Increment("views", 1), exists); !errors.Is(err, ErrConditionFailed) {
		t.Fatalf("Add with an If that fails = %v", err)
	}
	if _, err := tb.Load(ctx, counterItem{ID: "missing"}, ConsistentRead()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a refused Add created the item: %v", err)
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// Add honours the version settings.
func TestAddVersionSettings(t *testing.T) {
	type stepCounter struct {
		ID string `dynamo:"id,hash"`
		N  int    `dynamo:"n"`
		V  int64  `dynamo:"v,version,versionstart=100,versionstep=10"`
	}
	tb, _ := idTable[stepCounter](t)
	ctx := t.Context()
	a, err := tb.Add(ctx, stepCounter{ID: "k"}, Increment("n", 1))
	if err != nil || a.V != 100 || a.N != 1 {
		t.Fatalf("Add to a missing item = %+v, %v; want version 100", a, err)
	}
	b, err := tb.Add(ctx, stepCounter{ID: "k"}, Increment("n", 1))
	if err != nil || b.V != 110 || b.N != 2 {
		t.Fatalf("Add = %+v, %v; want version 110", b, err)
	}
}

// A lost answer is settled by the Add's own token: applied once, reported
// once; when someone else wrote in between, ErrUnknownOutcome — never a
// second ADD.
func TestAddLostAnswer(t *testing.T) {
	d := dynamotest.NewDropper("UpdateItem")
	c := d.Client(t)
	name := dynamotest.KeyTable(t, c, "", "id", types.ScalarAttributeTypeS, "", "")
	tb, err := NewTable[counterItem](NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewTable[counterItem](NewMapper(dynamotest.Client(t)), name)
	ctx := t.Context()
	d.Arm(1)
	got, err := tb.Add(ctx, counterItem{ID: "k"}, Increment("views", 5))
	if err != nil || got.Views != 5 || d.Dropped() != 1 || d.Sent() != 1 {
		t.Fatalf("Add with a lost answer = %+v, %v (dropped %d, sent %d); want views 5, sent once", got, err, d.Dropped(), d.Sent())
	}
	d.ArmThen(func() {
		if _, err := other.Add(ctx, counterItem{ID: "k"}, Increment("views", 100)); err != nil {
			t.Error(err)
		}
	})
	_, err = tb.Add(ctx, counterItem{ID: "k"}, Increment("views", 1))
	if !errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("Add whose answer was lost and the item written since = %v, want ErrUnknownOutcome", err)
	}
	if cur, cerr := tb.Current(err); cerr != nil || cur.Views != 106 {
		t.Fatalf("Current = %+v, %v; want the item read, views 106", cur, cerr)
	}
	loaded, _ := tb.Load(ctx, counterItem{ID: "k"}, ConsistentRead())
	if loaded.Views != 106 {
		t.Fatalf("views %d, want 106: each Add applied exactly once", loaded.Views)
	}

	// A type without a version carries no token: a lost answer is unknown.
	type plainCounter struct {
		ID string `dynamo:"id,hash"`
		N  int    `dynamo:"n"`
	}
	pt, _ := NewTable[plainCounter](NewMapper(c), name)
	d.Arm(1)
	if _, err := pt.Add(ctx, plainCounter{ID: "p"}, Increment("n", 1)); !errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("unversioned Add with a lost answer = %v, want ErrUnknownOutcome", err)
	}
	p, _ := pt.Load(ctx, plainCounter{ID: "p"}, ConsistentRead())
	if p.N != 1 {
		t.Fatalf("n = %d, want 1 (sent once)", p.N)
	}
}

// A float32 counter stops where float32 ends, as integer counters stop at
// their type's range: the Add past it fails with ErrConditionFailed naming
// the field, nothing is applied, and the item still loads.
func TestAddFloat32OverflowRefused(t *testing.T) {
	type fcount struct {
		ID string  `dynamo:"id,hash"`
		F  float32 `dynamo:"f"`
		G  float64 `dynamo:"g"`
	}
	tb, _ := idTable[fcount](t)
	ctx := t.Context()
	if _, err := tb.Add(ctx, fcount{ID: "k"}, Increment("f", 3e38)); err != nil {
		t.Fatal(err)
	}
	_, err := tb.Add(ctx, fcount{ID: "k"}, Increment("f", 3e38))
	if !errors.Is(err, ErrConditionFailed) || !strings.Contains(err.Error(), "would pass what field F (float32) holds") {
		t.Fatalf("float32 past its range = %v, want ErrConditionFailed naming the field", err)
	}
	if _, err := tb.Add(ctx, fcount{ID: "k"}, Increment("f", -6.5e38)); !errors.Is(err, ErrConditionFailed) {
		t.Fatalf("float32 below its range = %v, want ErrConditionFailed", err)
	}
	got, err := tb.Load(ctx, fcount{ID: "k"}, ConsistentRead())
	if err != nil || got.F != 3e38 {
		t.Fatalf("Load after refused Adds = %+v, %v; want f 3e38", got, err)
	}
	if _, err := tb.Add(ctx, fcount{ID: "new"}, Increment("f", 1e39)); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("Increment of a float32 by 1e39 = %v, want ErrInvalidInput", err)
	}
	if got, err := tb.Add(ctx, fcount{ID: "k"}, Increment("f", -1e37).Increment("g", 1e100)); err != nil || got.F != 2.9e38 || got.G != 1e100 {
		t.Fatalf("Adds within range = %+v, %v", got, err)
	}
}

// Add keeps every numeric kind exactly within its range: on each integer
// kind, a counter reaches its max from max-1 and its min from min+1, an
// Increment by max or min of a missing one is taken, and one step past is
// refused (ErrConditionFailed, nothing applied), as is an Increment by
// max+1 or min-1 (ErrInvalidInput). A float32 reaches ±math.MaxFloat32 —
// from zero, and from the float32 before it by one unit — and the next unit
// (infinity as a float32) is refused; a float64 takes no ±MaxFloat64 or
// infinity, which DynamoDB cannot store.
func TestAddAtEveryNumericKindsLimits(t *testing.T) {
	type kinds struct {
		ID  string  `dynamo:"id,hash"`
		I8  int8    `dynamo:"i8"`
		I16 int16   `dynamo:"i16"`
		I32 int32   `dynamo:"i32"`
		I64 int64   `dynamo:"i64"`
		I   int     `dynamo:"i"`
		U8  uint8   `dynamo:"u8"`
		U16 uint16  `dynamo:"u16"`
		U32 uint32  `dynamo:"u32"`
		U64 uint64  `dynamo:"u64"`
		U   uint    `dynamo:"u"`
		F32 float32 `dynamo:"f32"`
		F64 float64 `dynamo:"f64"`
	}
	tb, _ := idTable[kinds](t)
	ctx := t.Context()
	key := 0
	fresh := func() kinds { key++; return kinds{ID: strconv.Itoa(key)} }
	// add increments attr of k by n and checks the outcome: want the
	// field's value after it, or the error it must be (nothing applied).
	add := func(k kinds, attr, goName string, n any, want string, wantErr error) {
		t.Helper()
		before, lerr := tb.Load(ctx, k, ConsistentRead())
		got, err := tb.Add(ctx, k, Increment(attr, n))
		if wantErr != nil {
			if !errors.Is(err, wantErr) {
				t.Errorf("%s += %v = %v; want %v", attr, n, err, wantErr)
			}
			after, aerr := tb.Load(ctx, k, ConsistentRead())
			if (lerr == nil) != (aerr == nil) || after != before {
				t.Errorf("%s += %v refused, yet the item changed: %+v (%v) -> %+v (%v)", attr, n, before, lerr, after, aerr)
			}
			return
		}
		if err != nil {
			t.Errorf("%s += %v = %v; want %s", attr, n, err, want)
			return
		}
		if v := fmt.Sprint(reflect.ValueOf(got).FieldByName(goName).Interface()); v != want {
			t.Errorf("%s += %v gave %s; want %s", attr, n, v, want)
		}
	}
	num := func(b *big.Int) attributevalue.Number { return attributevalue.Number(b.String()) }
	one := big.NewInt(1)
	for _, c := range []struct {
		attr, goName string
		typ          reflect.Type
	}{
		{"i8", "I8", reflect.TypeFor[int8]()}, {"i16", "I16", reflect.TypeFor[int16]()}, {"i32", "I32", reflect.TypeFor[int32]()},
		{"i64", "I64", reflect.TypeFor[int64]()}, {"i", "I", reflect.TypeFor[int]()},
		{"u8", "U8", reflect.TypeFor[uint8]()}, {"u16", "U16", reflect.TypeFor[uint16]()}, {"u32", "U32", reflect.TypeFor[uint32]()},
		{"u64", "U64", reflect.TypeFor[uint64]()}, {"u", "U", reflect.TypeFor[uint]()},
	} {
		bits := uint(c.typ.Size() * 8)
		lo, hi := new(big.Int), new(big.Int).Sub(new(big.Int).Lsh(one, bits), one)
		if c.typ.Kind() < reflect.Uint {
			hi.Rsh(hi, 1)
			lo.Neg(hi).Sub(lo, one)
		}
		sub := func(a, b *big.Int) *big.Int { return new(big.Int).Sub(a, b) }
		plus := func(a, b *big.Int) *big.Int { return new(big.Int).Add(a, b) }
		k := fresh() // missing + max, then one past
		add(k, c.attr, c.goName, num(hi), hi.String(), nil)
		add(k, c.attr, c.goName, 1, "", ErrConditionFailed)
		k = fresh() // max-1, +1 reaches max, +1 is refused
		add(k, c.attr, c.goName, num(sub(hi, one)), sub(hi, one).String(), nil)
		add(k, c.attr, c.goName, 1, hi.String(), nil)
		add(k, c.attr, c.goName, 1, "", ErrConditionFailed)
		width := plus(sub(hi, lo), one) // more than any stored value can take
		add(fresh(), c.attr, c.goName, num(width), "", ErrInvalidInput)
		add(fresh(), c.attr, c.goName, num(new(big.Int).Neg(width)), "", ErrInvalidInput)
		k = fresh() // the min side
		if lo.Sign() == 0 {
			add(fresh(), c.attr, c.goName, num(plus(hi, one)), "", ErrInvalidInput)
			add(k, c.attr, c.goName, -1, "", ErrConditionFailed) // missing counts as 0
			add(k, c.attr, c.goName, 1, "1", nil)
			add(k, c.attr, c.goName, -1, "0", nil)
			add(k, c.attr, c.goName, -1, "", ErrConditionFailed)
		} else {
			add(k, c.attr, c.goName, num(lo), lo.String(), nil)
			add(k, c.attr, c.goName, -1, "", ErrConditionFailed)
			k = fresh()
			add(k, c.attr, c.goName, num(plus(lo, one)), plus(lo, one).String(), nil)
			add(k, c.attr, c.goName, -1, lo.String(), nil)
			add(k, c.attr, c.goName, -1, "", ErrConditionFailed)
			// max+1 and min-1 leave no missing counter in range, yet
			// take min to 0 and 1 to min.
			add(fresh(), c.attr, c.goName, num(plus(hi, one)), "", ErrConditionFailed)
			add(fresh(), c.attr, c.goName, num(sub(lo, one)), "", ErrConditionFailed)
			k = fresh()
			add(k, c.attr, c.goName, num(lo), lo.String(), nil)
			add(k, c.attr, c.goName, num(plus(hi, one)), "0", nil)
			k = fresh()
			add(k, c.attr, c.goName, 1, "1", nil)
			add(k, c.attr, c.goName, num(sub(lo, one)), lo.String(), nil)
		}
	}

	// float32: the last unit below math.MaxFloat32 is 2^104.
	maxF, below, unit := float32(math.MaxFloat32), math.Nextafter32(math.MaxFloat32, 0), float32(math.Ldexp(1, 104))
	for _, sign := range []float32{1, -1} {
		k := fresh()
		add(k, "f32", "F32", sign*maxF, fmt.Sprint(sign*maxF), nil)
		add(k, "f32", "F32", sign*unit, "", ErrConditionFailed)
		k = fresh()
		add(k, "f32", "F32", sign*below, fmt.Sprint(sign*below), nil)
		add(k, "f32", "F32", sign*unit, fmt.Sprint(sign*maxF), nil)
		add(k, "f32", "F32", sign*unit, "", ErrConditionFailed)
		add(fresh(), "f32", "F32", float64(sign)*2*math.MaxFloat32, "", ErrConditionFailed)
		add(fresh(), "f32", "F32", float64(sign)*1e39, "", ErrInvalidInput)
	}
	for _, n := range []float64{math.MaxFloat64, -math.MaxFloat64, math.Inf(1), math.Inf(-1)} {
		add(fresh(), "f64", "F64", n, "", ErrInvalidInput)
	}
	k := fresh()
	add(k, "f64", "F64", 1e125, "1e+125", nil)
	add(k, "f64", "F64", -2e125, "-1e+125", nil)
}

// A set or counter stored as NULL — SavePut writes a nil set or a nil
// *int64 as NULL, as documented, and items written by older versions or
// other clients hold it too — is added to as if it were missing: a number
// counts from 0, elements are added to the empty set, and deleting from it
// leaves it empty. Versioned and unversioned types alike.
func TestAddToStoredNull(t *testing.T) {
	type nullable struct {
		ID    string   `dynamo:"id,hash"`
		Count *int64   `dynamo:"count"`
		Score *float64 `dynamo:"score"`
		Tags  []string `dynamo:"tags,set"`
		Gone  []string `dynamo:"gone,set"`
		V     int64    `dynamo:"v,version"`
	}
	tb, _ := idTable[nullable](t)
	ctx := t.Context()
	if _, err := tb.Save(ctx, nullable{ID: "k"}, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	raw, err := tb.Mapper().client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tb.Name()), Key: map[string]types.AttributeValue{"id": str("k")}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"count", "score", "tags", "gone"} {
		if !isNull(raw.Item[a]) {
			t.Fatalf("SavePut stored %s as %#v, want NULL (the case under test)", a, raw.Item[a])
		}
	}
	got, err := tb.Add(ctx, nullable{ID: "k"}, Increment("count", 2).Increment("score", 0.5).AddToSet("tags", []string{"a"}).DeleteFromSet("gone", []string{"x"}))
	if err != nil {
		t.Fatalf("Add to NULL attributes = %v", err)
	}
	if got.Count == nil || *got.Count != 2 || got.Score == nil || *got.Score != 0.5 || !slices.Equal(got.Tags, []string{"a"}) || len(got.Gone) != 0 || got.V != 2 {
		t.Fatalf("Add to NULL attributes = %+v, want count 2, score 0.5, tags [a], gone empty, version 2", got)
	}
	got, err = tb.Add(ctx, nullable{ID: "k"}, Increment("count", 1).AddToSet("tags", []string{"b"}))
	if err != nil || *got.Count != 3 || !slices.Equal(sorted(got.Tags), []string{"a", "b"}) || got.V != 3 {
		t.Fatalf("second Add = %+v, %v; want count 3, tags [a b], version 3", got, err)
	}

	type plainNullable struct {
		ID    string   `dynamo:"id,hash"`
		Count *uint8   `dynamo:"count"`
		Tags  []string `dynamo:"tags,set"`
	}
	pt, _ := NewTable[plainNullable](tb.Mapper(), tb.Name())
	if _, err := pt.Save(ctx, plainNullable{ID: "p"}, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	p, err := pt.Add(ctx, plainNullable{ID: "p"}, Increment("count", 7).AddToSet("tags", []string{"a"}))
	if err != nil || p.Count == nil || *p.Count != 7 || !slices.Equal(p.Tags, []string{"a"}) {
		t.Fatalf("unversioned Add to NULL attributes = %+v, %v; want count 7, tags [a]", p, err)
	}
	// From NULL as from missing: a uint8 counter does not go below 0.
	if _, err := pt.Save(ctx, plainNullable{ID: "q"}, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	if _, err := pt.Add(ctx, plainNullable{ID: "q"}, Increment("count", -1)); !errors.Is(err, ErrConditionFailed) {
		t.Fatalf("uint8 below 0 from NULL = %v, want ErrConditionFailed", err)
	}
}

// The requests of an Add to attributes stored as NULL: the first guards
// every ADD or DELETE whose condition does not already fail on NULL (a
// bound's comparison does) with NOT attribute_type(…, NULL), so that a
// NULL fails the condition, with the stored item, instead of the whole
// request; the second, knowing which attributes hold NULL, SETs them to
// the change (counting from 0, from the empty set), on condition that they
// still hold NULL.
func TestAddToStoredNullRequests(t *testing.T) {
	null := &types.AttributeValueMemberNULL{Value: true}
	st := &fakeDB{noStore: true}
	st.onUpd = func(_ int, in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		if len(st.upds()) == 1 {
			return nil, &types.ConditionalCheckFailedException{Item: map[string]types.AttributeValue{"id": str("k"), "views": null, "tags": null, "score": n("1"), "v": n("1")}}
		}
		return &dynamodb.UpdateItemOutput{Attributes: map[string]types.AttributeValue{"id": str("k"), "views": n("1"), "v": n("2")}}, nil
	}
	tb, err := NewTable[counterItem](NewMapper(st, WithWriteTokenAttribute("")), "c")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tb.Add(t.Context(), counterItem{ID: "k"}, Increment("views", 1).AddToSet("tags", []string{"a"}).Increment("score", 2).DeleteFromSet("nums", []int{1}))
	if err != nil || got.Views != 1 {
		t.Fatalf("Add = %+v, %v", got, err)
	}
	if len(st.upds()) != 2 {
		t.Fatalf("%d UpdateItem requests, want 2", len(st.upds()))
	}
	for i, want := range []struct{ update, cond string }{
		{
			"SET #a9 = :a9, #a8 = if_not_exists(#a8, :a8) ADD #a1 :d1, #a4 :d4, #a3 :d3, #a10 :v1 DELETE #a5 :d5",
			"((((attribute_not_exists(#a1) OR #a1 <= :x1) AND (NOT attribute_type(#a4, :onull))) AND (NOT attribute_type(#a3, :onull))) AND (NOT attribute_type(#a5, :onull))) AND (attribute_not_exists(#a10) OR (#a10 >= :vz AND #a10 < :vm))",
		},
		{
			"SET #a1 = :d1, #a4 = :d4, #a9 = :a9, #a8 = if_not_exists(#a8, :a8) ADD #a3 :d3, #a10 :v1 DELETE #a5 :d5",
			"((((attribute_type(#a1, :onull)) AND (attribute_type(#a4, :onull))) AND (NOT attribute_type(#a3, :onull))) AND (NOT attribute_type(#a5, :onull))) AND (attribute_not_exists(#a10) OR (#a10 >= :vz AND #a10 < :vm))",
		},
	} {
		in := st.upds()[i]
		if u, c := aws.ToString(in.UpdateExpression), aws.ToString(in.ConditionExpression); u != want.update || c != want.cond {
			t.Errorf("request %d:\n update %q\n cond   %q\nwant\n update %q\n cond   %q", i+1, u, c, want.update, want.cond)
		}
		if nt, ok := in.ExpressionAttributeValues[":onull"].(*types.AttributeValueMemberS); !ok || nt.Value != "NULL" {
			t.Errorf("request %d: :onull = %#v", i+1, in.ExpressionAttributeValues[":onull"])
		}
	}
}

// With MustExist, Add of a missing key is refused in DynamoDB (a condition
// that the hash key exists, in the same request) with an error satisfying
// errors.Is(err, ErrNotFound); nothing is created. The fake store
// evaluates the condition the request carries on the empty table.
func TestAddMustExistRefusesMissingItem(t *testing.T) {
	c := (&fakeDB{}).table("c", "id", "")
	var cond string
	c.hook(&fakeHook{op: "UpdateItem", after: func(_ int, in, _ any, _ error) {
		up := in.(*dynamodb.UpdateItemInput)
		cond = aws.ToString(up.ConditionExpression)
		for k, v := range up.ExpressionAttributeNames {
			cond = strings.ReplaceAll(cond, k, v)
		}
	}})
	tb, err := NewTable[counterItem](NewMapper(c), "c")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tb.Add(t.Context(), counterItem{ID: "k"}, Increment("views", -1), MustExist())
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Add with MustExist of a missing item: %v; want ErrNotFound", err)
	}
	if !strings.Contains(cond, "attribute_exists (id)") && !strings.Contains(cond, "attribute_exists(id)") {
		t.Errorf("condition %q does not require the hash key to exist", cond)
	}
	if items := c.items("c"); len(items) != 0 {
		t.Errorf("stored %v: Add with MustExist created the item", items)
	}
}

// On DynamoDB Local: Add and Update with MustExist create nothing on a
// missing key (ErrNotFound), work on an existing one, and a lost answer of
// an Add with MustExist is settled as applied once; an Update function that
// returns ErrNoChange leaves the stored version as it is.
func TestMustExistAndNoChangeOnDynamoDBLocal(t *testing.T) {
	d := dynamotest.NewDropper("UpdateItem")
	c := d.Client(t)
	name := dynamotest.KeyTable(t, c, "", "id", types.ScalarAttributeTypeS, "", "")
	tb, err := NewTable[counterItem](NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := tb.Add(ctx, counterItem{ID: "k"}, Increment("views", -1), MustExist()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Add with MustExist of a missing key: %v; want ErrNotFound", err)
	}
	if _, err := tb.Update(ctx, counterItem{ID: "k"}, func(c counterItem) (counterItem, error) { return c, nil }, MustExist()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Update with MustExist of a missing key: %v; want ErrNotFound", err)
	}
	if _, err := tb.Load(ctx, counterItem{ID: "k"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after refused calls: Load = %v; want ErrNotFound (nothing created)", err)
	}
	if _, err := tb.Save(ctx, counterItem{ID: "k", Views: 10}); err != nil {
		t.Fatal(err)
	}
	d.Arm(1)
	got, err := tb.Add(ctx, counterItem{ID: "k"}, Increment("views", -1), MustExist())
	if err != nil || got.Views != 9 || got.V != 2 {
		t.Fatalf("Add with MustExist, answer lost: %+v, %v; want views 9 at v2 (applied once)", got, err)
	}
	got, err = tb.Update(ctx, counterItem{ID: "k"}, func(c counterItem) (counterItem, error) { return c, ErrNoChange }, MustExist())
	if err != nil || got.Views != 9 || got.V != 2 {
		t.Fatalf("Update with ErrNoChange: %+v, %v; want views 9 at v2", got, err)
	}
	if cur, err := tb.Load(ctx, counterItem{ID: "k"}, ConsistentRead()); err != nil || cur.V != 2 {
		t.Fatalf("stored %+v, %v; want v2: no write", cur, err)
	}
}

// On DynamoDB Local: Add counts from every item state another writer may
// leave (internal/itemstate) — a NULL version among them, which ADD refuses
// and a comparison is false on: the version is then set to the first one.
// A SaveClobber, which also writes no version condition, does the same.
func TestAddOverForeignStates(t *testing.T) {
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "addforeign", "id", types.ScalarAttributeTypeS, "", "")
	tb, err := NewTable[counter](NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	schema := itemstate.Schema{Version: "v", Token: DefaultWriteTokenAttribute, Attrs: map[string]types.AttributeValue{"n": plan.NumberAV(5)}}
	for _, st := range itemstate.States(schema) {
		want := int64(6)
		if !st.Present() {
			want = 1
		}
		id := "add " + st.String()
		if err := itemstate.Put(ctx, c, name, map[string]types.AttributeValue{"id": str(id)}, st); err != nil {
			t.Fatal(err)
		}
		got, err := tb.Add(ctx, counter{ID: id}, Increment("n", 1))
		if err != nil || got.N != want || got.Version < 1 {
			t.Errorf("Add over %s = %+v, %v; want n %d and a version", st, got, err, want)
		}

		id = "clobber " + st.String()
		if err := itemstate.Put(ctx, c, name, map[string]types.AttributeValue{"id": str(id)}, st); err != nil {
			t.Fatal(err)
		}
		got, err = tb.Save(ctx, counter{ID: id, N: 9}, WithSaveBehavior(SaveClobber))
		if err != nil || got.N != 9 || got.Version < 1 {
			t.Errorf("SaveClobber over %s = %+v, %v; want n 9 and a version", st, got, err)
		}
	}
}

// On DynamoDB Local: an Add that would grow the stored item past 400 KB —
// which only DynamoDB can tell, as Add does not read the item — is refused
// with an error wrapping ErrInvalidInput that names the limit, and nothing
// is written (found by the attack session: the bare ValidationException
// matched no sentinel).
func TestAddPastItemSizeLimitIsInvalidInput(t *testing.T) {
	type big struct {
		ID   string   `dynamo:"id,hash"`
		Body string   `dynamo:"body"`
		Tags []string `dynamo:"tags,set,omitempty"`
		V    int64    `dynamo:"v,version"`
	}
	tb, _ := idTable[big](t)
	ctx := t.Context()
	saved, err := tb.Save(ctx, big{ID: "a", Body: strings.Repeat("y", 400*1024-400)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tb.Add(ctx, big{ID: "a"}, AddToSet("tags", []string{strings.Repeat("z", 1000)}))
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "400 KB") {
		t.Fatalf("Add past 400 KB = %v; want ErrInvalidInput naming the limit", err)
	}
	got, err := tb.Load(ctx, big{ID: "a"}, ConsistentRead())
	if err != nil || got.V != saved.V || len(got.Tags) != 0 {
		t.Errorf("after the refused Add: %d tags, version %d, %v; want the item unchanged at version %d", len(got.Tags), got.V, err, saved.V)
	}
}

// On DynamoDB Local: a float64 counter holds every number DynamoDB stores,
// so Add sends its increment unchecked; where the sum is no number DynamoDB
// stores (39 significant digits: 38 digits plus 0.5; a magnitude past
// 9.99…E+125) DynamoDB refuses the UpdateItem. Add then fails, the item is
// left as it was, and the error is no false conflict or unknown outcome:
// it says the sum needs more than DynamoDB's 38 digits.
func TestAddPastDynamoDBsNumbersFailsAndKeepsTheItem(t *testing.T) {
	type fcount struct {
		ID string  `dynamo:"id,hash"`
		G  float64 `dynamo:"g"`
		V  int64   `dynamo:"v,version"`
	}
	tb, _ := idTable[fcount](t)
	c := tb.Mapper().Client()
	ctx := t.Context()
	for _, tc := range []struct{ stored, by string }{
		{"12345678901234567890123456789012345678", "0.5"},
		{"9.9999999999999999999999999999999999999E+125", "1e125"},
		{"-9.9999999999999999999999999999999999999E+125", "-1e125"},
		{"1e-130", "1"},
	} {
		id := tc.stored + "+" + tc.by
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tb.Name()), Item: map[string]types.AttributeValue{
			"id": str(id), "g": n(tc.stored), "v": n("1")}}); err != nil {
			t.Fatal(err)
		}
		_, err := tb.Add(ctx, fcount{ID: id}, Increment("g", attributevalue.Number(tc.by)))
		if err == nil || errors.Is(err, ErrConditionFailed) || errors.Is(err, ErrUnknownOutcome) || !strings.Contains(err.Error(), "38") {
			t.Errorf("Add of %s to %s = %v; want DynamoDB's refusal naming its 38 digits", tc.by, tc.stored, err)
		}
		raw, gerr := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tb.Name()), Key: map[string]types.AttributeValue{"id": str(id)}, ConsistentRead: aws.Bool(true)})
		if gerr != nil {
			t.Fatal(gerr)
		}
		if g := raw.Item["g"].(*types.AttributeValueMemberN).Value; !avs.NumberEqual(g, tc.stored) || raw.Item["v"].(*types.AttributeValueMemberN).Value != "1" {
			t.Errorf("after the refused Add of %s: stored %v", id, raw.Item)
		}
		t.Logf("Add of %s to %s: %v", tc.by, tc.stored, err)
	}
}

type setKinds struct {
	ID    string    `dynamo:"id,hash"`
	Ints  []int     `dynamo:"ints,numberset,omitempty"`
	Small []int8    `dynamo:"small,numberset,omitempty"`
	Us    []uint    `dynamo:"us,set,omitempty"`
	F32   []float32 `dynamo:"f32,numberset,omitempty"`
	F64   []float64 `dynamo:"f64,numberset,omitempty"`
	V     int64     `dynamo:"v,version"`
}

// AddToSet and DeleteFromSet refuse, before sending anything, an element
// the field's element type cannot hold (a fraction for integers, a value
// out of the type's range, a negative for unsigned): written, it would
// leave an item that no longer loads.
func TestAddToSetElementTheFieldCannotHoldRefused(t *testing.T) {
	st := &fakeDB{noStore: true}
	tb, err := NewTable[setKinds](NewMapper(st), "s")
	if err != nil {
		t.Fatal(err)
	}
	k := setKinds{ID: "k"}
	for _, tc := range []struct {
		d    Delta
		want string
	}{
		{AddToSet("ints", []float64{1.5}), "element [0] is 1.5, not a whole number: field Ints is a set of int"},
		{AddToSet("small", []int{1, 300}), "element [1] is 300, beyond what a int8 holds"},
		{AddToSet("small", []uint64{math.MaxUint64}), "beyond what a int8 holds"},
		{AddToSet("us", []int{-1}), "element [0] is -1, below zero"},
		{AddToSet("us", []float64{-2}), "below zero"},
		{AddToSet("ints", []float64{1e19}), "beyond what a int holds"},
		{AddToSet("f32", []float64{1e300}), "beyond what a float32 holds"},
		{AddToSet("f64", []float64{math.Inf(1)}), "no NaN or infinity"},
		{DeleteFromSet("ints", []float32{0.5}), "not a whole number"},
	} {
		_, err := tb.Add(t.Context(), k, tc.d)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%+v) = %v, want ErrInvalidInput saying %q", tc.d, err, tc.want)
		}
	}
	if n := len(st.upds()) + len(st.gets()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

// An element given to AddToSet and DeleteFromSet is the element a Save of
// the field holding it stores: converted to the field's element type
// (whole floats into integers; a float32 field's elements as float32s,
// written as the field writes them), so adding one the set holds adds
// nothing and deleting it deletes it.
func TestAddToSetElementsAreTheFieldsOwn(t *testing.T) {
	tb, _ := idTable[setKinds](t)
	ctx := t.Context()
	k := setKinds{ID: "k"}
	if _, err := tb.Save(ctx, setKinds{ID: "k", F32: []float32{0.1}, Ints: []int{2}, F64: []float64{float64(float32(0.1))}}); err != nil {
		t.Fatal(err)
	}
	got, err := tb.Add(ctx, k, AddToSet("f32", []float32{0.1}).AddToSet("ints", []float64{2, 3}).AddToSet("f64", []float32{0.1}))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.F32, []float32{0.1}) || !slices.Equal(slices.Sorted(slices.Values(got.Ints)), []int{2, 3}) || len(got.F64) != 1 {
		t.Fatalf("AddToSet of elements the sets hold = %+v, want f32 [0.1], ints [2 3], one f64", got)
	}
	got, err = tb.Add(ctx, k, DeleteFromSet("f32", []float64{0.1}).DeleteFromSet("ints", []float32{2}).DeleteFromSet("f64", []float32{0.1}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.F32) != 0 || !slices.Equal(got.Ints, []int{3}) || len(got.F64) != 0 {
		t.Fatalf("DeleteFromSet of elements the sets hold = %+v, want f32 and f64 empty, ints [3]", got)
	}
}

// binSet has a set of binary values.
type binSet struct {
	ID   string   `dynamo:"id,hash"`
	Bins [][]byte `dynamo:"bins,set,omitempty"`
	V    int64    `dynamo:"v,version"`
}

// An empty []byte is an element a binary set holds (Save stores it):
// AddToSet adds it and DeleteFromSet deletes it, as any other element.
func TestAddToSetEmptyBinaryElement(t *testing.T) {
	tb, _ := idTable[binSet](t)
	ctx := t.Context()
	k := binSet{ID: "k"}
	if _, err := tb.Save(ctx, binSet{ID: "k", Bins: [][]byte{{1}}}); err != nil {
		t.Fatal(err)
	}
	got, err := tb.Add(ctx, k, AddToSet("bins", [][]byte{{}}))
	if err != nil || len(got.Bins) != 2 {
		t.Fatalf("AddToSet of an empty binary element = %+v, %v; want 2 elements, nil", got, err)
	}
	got, err = tb.Add(ctx, k, DeleteFromSet("bins", [][]byte{{}}))
	if err != nil || len(got.Bins) != 1 || !bytes.Equal(got.Bins[0], []byte{1}) {
		t.Fatalf("DeleteFromSet of the empty binary element = %+v, %v; want [[1]], nil", got, err)
	}
}

// A nil []byte is no element of a set (Save refuses a field holding one):
// AddToSet and DeleteFromSet refuse it with ErrInvalidInput before sending
// anything, as they refuse other elements the field cannot hold.
func TestAddToSetNilBinaryElementRefused(t *testing.T) {
	st := &fakeDB{noStore: true}
	tb := newTestTable[binSet](t, st, "s")
	for _, d := range []Delta{AddToSet("bins", [][]byte{{1}, nil}), DeleteFromSet("bins", [][]byte{nil})} {
		if _, err := tb.Add(t.Context(), binSet{ID: "k"}, d); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "is nil") {
			t.Errorf("Add(%+v) = %v, want ErrInvalidInput saying the element is nil", d, err)
		}
	}
	if n := len(st.upds()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

// addIdxKey's partition key is also the sort key of index byG, where
// DynamoDB allows 1024 bytes, not 2048.
type addIdxKey struct {
	ID string `dynamo:"id,hash" index:"byG,range"`
	G  string `dynamo:"g,omitempty" index:"byG,hash"`
	N  int    `dynamo:"n"`
}

// addIdxEntity's entity name (1025 bytes) is the sort key of index byE.
type addIdxEntity struct {
	ID string `dynamo:"id,hash"`
	G  string `dynamo:"g,omitempty" index:"byE,hash"`
	E  string `dynamo:"e,entity=eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee" index:"byE,range"`
	N  int    `dynamo:"n"`
}

// addIdxSet's index key is a []byte tagged numberset, which a Save stores
// as one binary value (B) and an AddToSet would make a number set.
type addIdxSet struct {
	ID   string `dynamo:"id,hash"`
	Code []byte `dynamo:"code,numberset,omitempty" index:"byCode,hash"`
}

// Add refuses, before sending anything, an index key that every other
// write refuses (checkItemKeys): the key over an index's limit for it (the
// table's partition key as an index's sort key: 1024 bytes), an entity
// name over it, a set as an index key. Sent, a set there fails on DynamoDB
// Local with a ValidationException naming no field ("Invalid attribute
// value type"); a 1025- or 2000-byte key there, the index's partition key
// absent, is stored by DynamoDB Local, making an item that no Save can
// write back. Add's own key is checked as every write's is (checkKey):
// unset, empty, over 2048 bytes.
func TestAddRefusesIndexKeysEveryWriteRefuses(t *testing.T) {
	st := &fakeDB{noStore: true}
	ctx := t.Context()
	long := strings.Repeat("i", 1025)
	keyTb := newTestTable[addIdxKey](t, st, "k")
	for _, tc := range []struct {
		name string
		err  func() error
		want []string
	}{
		{"key as an index sort key", func() error { _, err := keyTb.Add(ctx, addIdxKey{ID: long}, Increment("n", 1)); return err },
			[]string{`index "byG" range key id`, "1025 bytes, over DynamoDB's 1024"}},
		{"Save of that key (the rule Add follows)", func() error { _, err := keyTb.Save(ctx, addIdxKey{ID: long}); return err },
			[]string{`index "byG" range key id`, "1025 bytes"}},
		{"entity name as an index sort key", func() error {
			_, err := newTestTable[addIdxEntity](t, st, "e").Add(ctx, addIdxEntity{ID: "k"}, Increment("n", 1))
			return err
		}, []string{`index "byE" range key e`, "1025 bytes"}},
		{"set as an index key", func() error {
			_, err := newTestTable[addIdxSet](t, st, "s").Add(ctx, addIdxSet{ID: "k"}, AddToSet("code", []int{1}))
			return err
		}, []string{`"code"`}},
		{"key unset", func() error { _, err := keyTb.Add(ctx, addIdxKey{}, Increment("n", 1)); return err },
			[]string{"hash key id", "is an empty string"}},
		{"key over 2048 bytes", func() error {
			_, err := keyTb.Add(ctx, addIdxKey{ID: strings.Repeat("i", 2049)}, Increment("n", 1))
			return err
		}, []string{"hash key id", "2049 bytes, over DynamoDB's 2048"}},
	} {
		err := tc.err()
		if !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: err = %v, want ErrInvalidInput", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", tc.name, err, w)
			}
		}
	}
	if n := len(st.upds()) + len(st.puts()) + len(st.gets()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
	// At the limit, Add writes (the check is not stricter than DynamoDB).
	if _, err := newTestTable[addIdxKey](t, (&fakeDB{}).table("k", "id", ""), "k").Add(ctx, addIdxKey{ID: long[1:]}, Increment("n", 1)); err != nil {
		t.Fatalf("Add of a 1024-byte key: %v", err)
	}
}

// numSets has number sets of the Go types that hold a number as its text,
// and a []byte tagged numberset and a text type tagged stringset, which
// Save stores as one value (B; its text, S).
type numSets struct {
	ID string                  `dynamo:"id,hash"`
	AN []attributevalue.Number `dynamo:"an,numberset,omitempty"`
	JN []json.Number           `dynamo:"jn,numberset,omitempty"`
	F  []float32               `dynamo:"f,numberset,omitempty"`
	U8 []uint8                 `dynamo:"u8,numberset,omitempty"`
	TL textList                `dynamo:"tl,stringset,omitempty"`
	V  int64                   `dynamo:"v,version"`
}

// textList is a list stored as its text ("a,b"), one string.
type textList []string

func (l textList) MarshalText() ([]byte, error) { return []byte(strings.Join(l, ",")), nil }
func (l *textList) UnmarshalText(b []byte) error {
	*l = strings.Split(string(b), ",")
	return nil
}

// AddToSet and DeleteFromSet take elements of a number set's own element
// type when it holds numbers as text (attributevalue.Number, json.Number),
// and such numbers for a set of Go numbers (converted as a Go number is):
// adding one the set holds (in any spelling) adds nothing, deleting it
// deletes it.
func TestAddToSetNumbersAsText(t *testing.T) {
	tb, _ := idTable[numSets](t)
	ctx := t.Context()
	k := numSets{ID: "k"}
	if _, err := tb.Save(ctx, numSets{ID: "k", AN: []attributevalue.Number{"1.5"}, JN: []json.Number{"2"}, F: []float32{0.1}}); err != nil {
		t.Fatal(err)
	}
	got, err := tb.Add(ctx, k, AddToSet("an", []attributevalue.Number{"2.50", "15e-1"}).AddToSet("jn", []json.Number{"7", "2.0"}).AddToSet("f", []json.Number{"0.1", "2"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.AN) != 2 || len(got.JN) != 2 || len(got.F) != 2 {
		t.Fatalf("AddToSet of numbers as text = %+v, want two elements in each set", got)
	}
	got, err = tb.Add(ctx, k, DeleteFromSet("an", []attributevalue.Number{"1.50"}).DeleteFromSet("jn", []json.Number{"7"}).DeleteFromSet("f", []attributevalue.Number{"2", "0.1"}))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.AN, []attributevalue.Number{"2.5"}) || !slices.Equal(got.JN, []json.Number{"2"}) || len(got.F) != 0 {
		t.Fatalf("DeleteFromSet of numbers as text = %+v, want an [2.5], jn [2], f empty", got)
	}
}

// AddToSet and DeleteFromSet refuse, before sending anything, a number as
// text that DynamoDB would refuse or the field cannot hold, and any change
// of a []byte tagged numberset or of a text type tagged stringset: Save
// stores them as one value (a B, as attributevalue does; the text, an S),
// so an ADD of a set fails on DynamoDB ("An operand in the update
// expression has an incorrect data type", seen on DynamoDB Local for both)
// or, on an item without the attribute, stores a set of another type than
// the next Save writes (and one DynamoDB refuses in an index key).
func TestAddToSetNumbersAsTextRefused(t *testing.T) {
	st := &fakeDB{noStore: true}
	tb := newTestTable[numSets](t, st, "s")
	for _, tc := range []struct {
		d    Delta
		want string
	}{
		{AddToSet("jn", []json.Number{"abc"}), `element [0] (a json.Number) is "abc", not a number DynamoDB reads`},
		{AddToSet("an", []attributevalue.Number{"1", "1e200"}), "element [1] (a attributevalue.Number) is the number 1e200, outside DynamoDB's range"},
		{DeleteFromSet("jn", []json.Number{""}), "element [0]"},
		{AddToSet("f", []json.Number{"1e100"}), "beyond what a float32 holds"},
		{AddToSet("u8", []uint8{3}), "stored as one binary value (B)"},
		{AddToSet("u8", []int{3}), "stored as one binary value (B)"},
		{DeleteFromSet("u8", []int{3}), "stored as one binary value (B)"},
		{AddToSet("tl", []string{"c"}), "stored as its text, one string (S)"},
	} {
		_, err := tb.Add(t.Context(), numSets{ID: "k"}, tc.d)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%+v) = %v, want ErrInvalidInput saying %q", tc.d, err, tc.want)
		}
	}
	if n := len(st.upds()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}
