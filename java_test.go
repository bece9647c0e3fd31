package dynamo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/schema"
)

type javaDoc struct {
	Name  string    `dynamo:"name"`
	Flag  bool      `dynamo:"flag,javabool"`
	When  time.Time `dynamo:"when,javadate"`
	Flags []bool    `dynamo:"flags,javabool"`
}

type javaEmbedded struct {
	Active bool `dynamo:"active,javabool"`
}

type javaItem struct {
	javaEmbedded
	ID     string              `dynamo:"id,hash"`
	B      bool                `dynamo:"b,javabool"`
	PB     *bool               `dynamo:"pb,javabool"`
	NilB   *bool               `dynamo:"nilb,javabool"`
	D      time.Time           `dynamo:"d,javadate"`
	PD     *time.Time          `dynamo:"pd,javadate"`
	Plain  bool                `dynamo:"plain"`
	PlainT time.Time           `dynamo:"plaint"`
	Doc    javaDoc             `dynamo:"doc"`
	Docs   []javaDoc           `dynamo:"docs"`
	ByName map[string]*javaDoc `dynamo:"byname"`
	MB     map[string]bool     `dynamo:"mb,javabool"`
	Dates  []time.Time         `dynamo:"dates,javadate"`
	V      int64               `dynamo:"v,version"`
}

// javaNode is recursive: the conversion tree refers to itself.
type javaNode struct {
	ID   string      `dynamo:"id,hash"`
	Flag bool        `dynamo:"flag,javabool"`
	Kids []javaNode  `dynamo:"kids"`
	Next *javaNode   `dynamo:"next"`
	Tags map[int]int `dynamo:"tags"`
}

// javaLoop is recursive and has nothing to convert.
type javaLoop struct {
	ID   string              `dynamo:"id,hash"`
	Self *javaLoop           `dynamo:"self"`
	All  map[string]javaLoop `dynamo:"all"`
}

func javaTestTable[T any](t *testing.T) *Table[T] {
	t.Helper()
	tb, err := NewTable[T](NewMapper(&fakeDB{noStore: true}), "java")
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func sampleJavaItem() javaItem {
	paris := time.FixedZone("CET", 3600)
	tr, fa := true, false
	d := time.Date(2023, 11, 14, 23, 13, 20, 123456789, paris) // 22:13:20.123456789Z
	pd := time.Date(1999, 12, 31, 23, 59, 59, 999000000, time.UTC)
	doc := javaDoc{Name: "n", Flag: true, When: time.Date(2020, 2, 29, 12, 0, 0, 0, time.UTC), Flags: []bool{true, false}}
	return javaItem{
		javaEmbedded: javaEmbedded{Active: true},
		ID:           "x", B: true, PB: &fa, D: d, PD: &pd, Plain: true, PlainT: d,
		Doc:    doc,
		Docs:   []javaDoc{doc, {Name: "m"}},
		ByName: map[string]*javaDoc{"k": &doc, "nil": nil},
		MB:     map[string]bool{"t": tr, "f": fa},
		Dates:  []time.Time{d, pd},
		V:      3,
	}
}

func avM(kv map[string]types.AttributeValue) *types.AttributeValueMemberM {
	return &types.AttributeValueMemberM{Value: kv}
}
func avL(vs ...types.AttributeValue) *types.AttributeValueMemberL {
	return &types.AttributeValueMemberL{Value: vs}
}

var avNull = &types.AttributeValueMemberNULL{Value: true}

// javaStoredItem is sampleJavaItem as DynamoDBMapper stores it.
func javaStoredItem() map[string]types.AttributeValue {
	doc := func() types.AttributeValue {
		return avM(map[string]types.AttributeValue{"name": str("n"), "flag": n("1"), "when": str("2020-02-29T12:00:00.000Z"), "flags": avL(n("1"), n("0"))})
	}
	return map[string]types.AttributeValue{
		"active": n("1"),
		"id":     str("x"),
		"b":      n("1"),
		"pb":     n("0"),
		"nilb":   avNull,
		"d":      str("2023-11-14T22:13:20.123Z"),
		"pd":     str("1999-12-31T23:59:59.999Z"),
		"plain":  &types.AttributeValueMemberBOOL{Value: true},
		"plaint": str("2023-11-14T23:13:20.123456789+01:00"),
		"doc":    doc(),
		"docs":   avL(doc(), avM(map[string]types.AttributeValue{"name": str("m"), "flag": n("0"), "when": str("0001-01-01T00:00:00.000Z"), "flags": avNull})),
		"byname": avM(map[string]types.AttributeValue{"k": doc(), "nil": avNull}),
		"mb":     avM(map[string]types.AttributeValue{"t": n("1"), "f": n("0")}),
		"dates":  avL(str("2023-11-14T22:13:20.123Z"), str("1999-12-31T23:59:59.999Z")),
		"v":      n("3"),
	}
}

func TestJavaEncode(t *testing.T) {
	tb := javaTestTable[javaItem](t)
	item := sampleJavaItem()
	got, err := tb.encode(&item)
	if err != nil {
		t.Fatal(err)
	}
	want := javaStoredItem()
	if !reflect.DeepEqual(got, want) {
		for k := range want {
			if !reflect.DeepEqual(got[k], want[k]) {
				t.Errorf("attribute %s = %s, want %s", k, avString(got[k]), avString(want[k]))
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("unexpected attribute %s = %s", k, avString(got[k]))
			}
		}
	}
	if item.D.Location().String() != "CET" || item.D.Nanosecond() != 123456789 {
		t.Errorf("encode modified the item: %v", item.D)
	}
}

// avString renders an attribute value for messages.
func avString(av types.AttributeValue) string {
	var v any
	if err := attributevalue.Unmarshal(av, &v); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%T %v", av, v)
}

func TestJavaDecode(t *testing.T) {
	tb := javaTestTable[javaItem](t)
	stored := javaStoredItem()
	before := javaStoredItem()
	sub := stored["doc"].(*types.AttributeValueMemberM)
	subFlag := sub.Value["flag"]

	got, err := tb.decode(stored)
	if err != nil {
		t.Fatal(err)
	}
	want := sampleJavaItem()
	want.D = want.D.UTC().Truncate(time.Millisecond)
	want.Dates[0] = want.D
	want.Docs[1].When = time.Time{}
	checkJavaItem(t, got, want)

	if !reflect.DeepEqual(stored, before) {
		t.Error("decode modified the stored item")
	}
	if stored["doc"] != sub || sub.Value["flag"] != subFlag {
		t.Error("decode replaced values inside the stored item")
	}

	// The Go default encodings (BOOL, RFC 3339 with any precision) decode too.
	stored["b"] = &types.AttributeValueMemberBOOL{Value: true}
	stored["d"] = str("2023-11-14T23:13:20.123+01:00")
	stored["mb"] = avM(map[string]types.AttributeValue{"t": &types.AttributeValueMemberBOOL{Value: true}, "f": n("0.0")})
	got, err = tb.decode(stored)
	if err != nil {
		t.Fatal(err)
	}
	if !got.B || !got.D.Equal(want.D) || !reflect.DeepEqual(got.MB, want.MB) {
		t.Errorf("decode of Go encodings: b=%v d=%v mb=%v", got.B, got.D, got.MB)
	}
}

func checkJavaItem(t *testing.T, got, want javaItem) {
	t.Helper()
	if got.javaEmbedded != want.javaEmbedded {
		t.Errorf("javaEmbedded = %+v, want %+v", got.javaEmbedded, want.javaEmbedded)
	}
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := 0; i < gv.NumField(); i++ {
		if !gv.Type().Field(i).IsExported() {
			continue
		}
		g, w := gv.Field(i).Interface(), wv.Field(i).Interface()
		if gt, ok := g.(time.Time); ok {
			if !gt.Equal(w.(time.Time)) {
				t.Errorf("%s = %v, want %v", gv.Type().Field(i).Name, g, w)
			}
			continue
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s = %#v, want %#v", gv.Type().Field(i).Name, g, w)
		}
	}
}

func TestJavaRoundTrip(t *testing.T) {
	tb := javaTestTable[*javaItem](t)
	item := sampleJavaItem()
	enc, err := tb.encode(&item)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tb.decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	want := sampleJavaItem()
	want.D = want.D.UTC().Truncate(time.Millisecond)
	want.Dates[0] = want.D
	checkJavaItem(t, *got, want)
}

// TestJavaBoolReadsEverySpelling: a javabool attribute is true when the
// stored number equals 1 and false when it equals 0 as DynamoDB compares
// numbers ("1.0", "10e-1", "-0", "0e5"); a number that only rounds to 1 or
// 0 as a float64 (1.00000000000000000001, 1e-400) or that DynamoDB does not
// read as a number (0x1p0, Inf) is neither.
func TestJavaBoolReadsEverySpelling(t *testing.T) {
	for _, tc := range []struct {
		n    string
		want bool
	}{{"1", true}, {"1.0", true}, {"10e-1", true}, {"+1", true}, {"0", false}, {"-0", false}, {"0.000", false}, {"0e5", false}} {
		if got, err := schema.ParseJavaBool(tc.n); err != nil || got != tc.want {
			t.Errorf("parseJavaBool(%q) = %v, %v; want %v", tc.n, got, err, tc.want)
		}
	}
	for _, s := range []string{"1.00000000000000000001", "1e-400", "0x1p0", "0x0p0", "Inf", "2", "0.5", "", "1e"} {
		if got, err := schema.ParseJavaBool(s); err == nil {
			t.Errorf("parseJavaBool(%q) = %v, nil; want an error (neither 1 nor 0)", s, got)
		}
	}
}

// A javabool attribute holding a number other than 1 or 0, at the top
// level or inside documents, fails to decode with an error naming the
// attribute and the rule.
func TestJavaBoolDecodeErrors(t *testing.T) {
	tb := javaTestTable[javaItem](t)
	for attr, av := range map[string]types.AttributeValue{
		"b":   n("2"),
		"doc": avM(map[string]types.AttributeValue{"flags": avL(n("1"), n("-1"))}),
		"mb":  avM(map[string]types.AttributeValue{"x": n("0.5")}),
	} {
		item := javaStoredItem()
		item[attr] = av
		_, err := tb.decode(item)
		if err == nil || !strings.Contains(err.Error(), "neither 1 (true) nor 0 (false)") || !strings.Contains(err.Error(), `"`+attr+`"`) {
			t.Errorf("%s: error = %v, want one naming the attribute and the rule", attr, err)
		}
	}
}

func TestJavaConversionsOnlyWhereNeeded(t *testing.T) {
	for _, tc := range []struct {
		typ       reflect.Type
		enc, dec  int
		converted []string
	}{
		{reflect.TypeFor[Book](), 0, 0, nil},
		{reflect.TypeFor[javaLoop](), 0, 0, nil},
		{reflect.TypeFor[javaItem](), 11, 8, []string{"active", "b", "pb", "nilb", "d", "pd", "doc", "docs", "byname", "mb", "dates"}},
		{reflect.TypeFor[javaNode](), 3, 3, []string{"flag", "kids", "next"}},
		{reflect.TypeFor[struct {
			ID string    `dynamo:"id,hash"`
			At time.Time `dynamo:"at,javadate"`
		}](), 1, 0, []string{"at"}},
	} {
		sc, err := schemaFor(tc.typ)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, i := range sc.JavaFields {
			names = append(names, sc.Fields[i].Name)
		}
		if len(sc.JavaFields) != tc.enc || len(sc.JavaDecFields) != tc.dec || !reflect.DeepEqual(names, tc.converted) {
			t.Errorf("%s: converted %v (%d to decode), want %v (%d)", tc.typ, names, len(sc.JavaDecFields), tc.converted, tc.dec)
		}
	}
}

func TestJavaRecursiveType(t *testing.T) {
	tb := javaTestTable[javaNode](t)
	item := javaNode{ID: "r", Flag: true, Kids: []javaNode{{Flag: true, Kids: []javaNode{{Flag: false}}}}, Next: &javaNode{Flag: true}}
	enc, err := tb.encode(&item)
	if err != nil {
		t.Fatal(err)
	}
	kid := enc["kids"].(*types.AttributeValueMemberL).Value[0].(*types.AttributeValueMemberM).Value
	grandkid := kid["kids"].(*types.AttributeValueMemberL).Value[0].(*types.AttributeValueMemberM).Value
	next := enc["next"].(*types.AttributeValueMemberM).Value
	for what, av := range map[string]types.AttributeValue{"flag": enc["flag"], "kid": kid["flag"], "grandkid": grandkid["flag"], "next": next["flag"]} {
		if _, ok := av.(*types.AttributeValueMemberN); !ok {
			t.Errorf("%s flag encoded as %T, want N", what, av)
		}
	}
	got, err := tb.decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, item) {
		t.Errorf("round trip = %+v, want %+v", got, item)
	}
}

type customBool bool

func (customBool) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return &types.AttributeValueMemberS{Value: "yes"}, nil
}

func TestJavaSchemaErrors(t *testing.T) {
	type boolOnString struct {
		ID string `dynamo:"id,hash"`
		B  string `dynamo:"b,javabool"`
	}
	type dateOnInt struct {
		ID string `dynamo:"id,hash"`
		D  int64  `dynamo:"d,javadate"`
	}
	type boolOnCustom struct {
		ID string     `dynamo:"id,hash"`
		B  customBool `dynamo:"b,javabool"`
	}
	type nestedBad struct {
		N int `dynamo:"n,javabool"`
	}
	type nestedErr struct {
		ID   string      `dynamo:"id,hash"`
		Docs []nestedBad `dynamo:"docs"`
	}
	type nestedTypo struct {
		F bool `dynamo:"f,javabol"`
	}
	type nestedTypoErr struct {
		ID  string                 `dynamo:"id,hash"`
		Doc map[string]*nestedTypo `dynamo:"doc"`
	}
	type dateSet struct {
		ID string      `dynamo:"id,hash"`
		D  []time.Time `dynamo:"d,javadate,set"`
	}
	m := NewMapper(&fakeDB{noStore: true})
	for _, tc := range []struct {
		name  string
		table func() error
		field string
		fix   string
	}{
		{"javabool on string", func() error { _, err := NewTable[boolOnString](m, "t"); return err }, "B", "use bool or *bool"},
		{"javadate on int", func() error { _, err := NewTable[dateOnInt](m, "t"); return err }, "D", "use time.Time or *time.Time"},
		{"javabool on a custom encoding", func() error { _, err := NewTable[boolOnCustom](m, "t"); return err }, "B", "use bool or *bool"},
		{"nested javabool on int", func() error { _, err := NewTable[nestedErr](m, "t"); return err }, "Docs[].N", "use bool or *bool"},
		{"nested typo", func() error { _, err := NewTable[nestedTypoErr](m, "t"); return err }, "Doc[].F", `unknown option "javabol"`},
		{"javadate set", func() error { _, err := NewTable[dateSet](m, "t"); return err }, "D", "use a list"},
	} {
		err := tc.table()
		var se *SchemaError
		if !errors.As(err, &se) || !errors.Is(err, ErrInvalidSchema) {
			t.Errorf("%s: error = %v, want a *SchemaError", tc.name, err)
			continue
		}
		if se.Field != tc.field || !strings.Contains(err.Error(), tc.fix) {
			t.Errorf("%s: error = %q (field %q), want field %q and fix %q", tc.name, err, se.Field, tc.field, tc.fix)
		}
	}
}

func TestJavaDateNeedsRFC3339Encoder(t *testing.T) {
	mp := NewMapper(&fakeDB{noStore: true}, WithEncoderOptions(func(o *attributevalue.EncoderOptions) {
		o.EncodeTime = func(t time.Time) (types.AttributeValue, error) { return n("1"), nil }
	}))
	tb, err := NewTable[javaDoc2](mp, "t")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tb.encode(&javaDoc2{ID: "a", At: time.Now()})
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "EncodeTime") {
		t.Errorf("error = %v, want ErrInvalidInput naming EncodeTime", err)
	}
}

type javaDoc2 struct {
	ID string    `dynamo:"id,hash"`
	At time.Time `dynamo:"at,javadate"`
}

// TestJavaLoadSaveThroughClient checks the request and response paths: Load
// and Current decode Java items (N bools, N version, unmodeled and NULL
// attributes) without modifying the SDK's maps, and Save sends N bools.
func TestJavaLoadSaveThroughClient(t *testing.T) {
	stored := javaStoredItem()
	stored["javaOnly"] = str("kept") // an attribute the struct does not model
	stored["plaint"] = avNull        // NULL into a non-pointer time
	stored["v"] = n("9007199254740993")
	before := javaStoredItem()
	before["javaOnly"], before["plaint"], before["v"] = str("kept"), avNull, n("9007199254740993")
	c := &fakeDB{noStore: true,
		onGet: func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
			return &dynamodb.GetItemOutput{Item: stored}, nil
		},
		onUpd: func(int, *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
			return nil, &types.ConditionalCheckFailedException{Item: stored}
		},
	}
	tb, err := NewTable[javaItem](NewMapper(c), "java")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tb.Load(context.Background(), javaItem{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if !got.B || got.PB == nil || *got.PB || !got.Doc.Flag || got.V != 9007199254740993 || !got.PlainT.IsZero() {
		t.Errorf("Load = %+v", got)
	}
	if !reflect.DeepEqual(stored, before) {
		t.Error("Load modified the SDK's item")
	}

	item := sampleJavaItem()
	_, err = tb.Save(context.Background(), item)
	if !errors.Is(err, ErrVersionConflict) {
		t.Fatalf("Save = %v, want a conflict", err)
	}
	var ce *ConditionError
	if !errors.As(err, &ce) {
		t.Fatalf("Save = %v, want a *ConditionError", err)
	}
	var viaDecode javaItem
	if derr := ce.Decode(&viaDecode); derr != nil || !viaDecode.B || !viaDecode.MB["t"] {
		t.Errorf("ConditionError.Decode = %+v, %v", viaDecode, derr)
	}
	cur, err := tb.Current(err)
	if err != nil || !cur.Doc.Flags[0] || cur.V != 9007199254740993 {
		t.Errorf("Current = %+v, %v", cur, err)
	}
	if !reflect.DeepEqual(stored, before) {
		t.Error("Current modified the SDK's item")
	}
	vals := c.upds()[0].ExpressionAttributeValues
	sc := tb.p.S
	for attr, want := range map[string]types.AttributeValue{
		"b": n("1"), "pb": n("0"), "active": n("1"), "plain": &types.AttributeValueMemberBOOL{Value: true},
		"d": str("2023-11-14T22:13:20.123Z"),
	} {
		if got := vals[sc.Fields[sc.ByName[attr]].ValuePH]; !reflect.DeepEqual(got, want) {
			t.Errorf("UpdateItem value of %s = %s, want %s", attr, avString(got), avString(want))
		}
	}
}

func TestJavaQueryDecoder(t *testing.T) {
	tb := javaTestTable[javaItem](t)
	d := itemDecoder[javaItem]{t: tb}
	stored := javaStoredItem()
	page, err := d.decodePage([]map[string]types.AttributeValue{stored, stored})
	if err != nil || len(page) != 2 || !page[1].Doc.Flag || !page[0].MB["t"] {
		t.Fatalf("decodePage = %+v, %v", page, err)
	}
	bad := javaStoredItem()
	bad["b"] = n("7")
	if page, errs := d.decodePage([]map[string]types.AttributeValue{stored, bad}); len(page) != 1 || len(errs) != 1 || errs[0].before != 1 || !strings.Contains(errs[0].err.Error(), "item key {id: \"x\"}") {
		t.Errorf("decodePage of a bad item: %+v, %v", page, errs)
	}
}

// TestOmitEmptyZeroTime: a zero time.Time tagged omitempty is left out of
// the item, javadate or not, at the top level and in documents; untagged or
// non-zero ones are written.
func TestOmitEmptyZeroTime(t *testing.T) {
	type doc struct {
		At   time.Time `dynamo:"at,omitempty"`
		JAt  time.Time `dynamo:"jat,javadate,omitempty"`
		Kept time.Time `dynamo:"kept"`
	}
	type item struct {
		ID    string     `dynamo:"id,hash"`
		At    time.Time  `dynamo:"at,omitempty"`
		JAt   time.Time  `dynamo:"jat,javadate,omitempty"`
		UAt   time.Time  `dynamo:"uat,unixtime,omitempty"`
		PAt   *time.Time `dynamo:"pat,omitempty"`
		Kept  time.Time  `dynamo:"kept"`
		JKept time.Time  `dynamo:"jkept,javadate"`
		Doc   doc        `dynamo:"doc"`
		Docs  []doc      `dynamo:"docs"`
	}
	tb := javaTestTable[item](t)
	it := item{ID: "x", Docs: []doc{{}}}
	got, err := tb.encode(&it)
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"at", "jat", "uat", "pat"} {
		if av, ok := got[gone]; ok {
			t.Errorf("%s = %s, want it left out", gone, avString(av))
		}
	}
	if got["kept"] == nil || got["jkept"] == nil {
		t.Errorf("untagged zero times left out: %v", got)
	}
	for _, d := range []types.AttributeValue{got["doc"], got["docs"].(*types.AttributeValueMemberL).Value[0]} {
		m := d.(*types.AttributeValueMemberM).Value
		if _, ok := m["at"]; ok {
			t.Errorf("nested at written: %s", avString(d))
		}
		if _, ok := m["jat"]; ok {
			t.Errorf("nested jat written: %s", avString(d))
		}
		if _, ok := m["kept"]; !ok {
			t.Errorf("nested kept left out: %s", avString(d))
		}
	}
	// Non-zero times are written, javadate ones in Java's layout.
	when := time.Date(2001, 2, 3, 4, 5, 6, 7e6, time.UTC)
	it = item{ID: "x", At: when, JAt: when, UAt: when, Doc: doc{At: when, JAt: when}}
	got, err = tb.encode(&it)
	if err != nil {
		t.Fatal(err)
	}
	if avString(got["jat"]) != avString(str("2001-02-03T04:05:06.007Z")) || got["at"] == nil || got["uat"] == nil ||
		len(got["doc"].(*types.AttributeValueMemberM).Value) != 3 {
		t.Errorf("non-zero times: %v", got)
	}
	// The zero time's second under unixtime is left out too; decoding an
	// item without them gives zero times.
	back, err := tb.decode(map[string]types.AttributeValue{"id": str("x")})
	if err != nil || !back.At.IsZero() || !back.JAt.IsZero() || !back.UAt.IsZero() {
		t.Errorf("decode = %+v, %v", back, err)
	}
}

// TestAnyNumbersExact: numbers in interface-typed fields keep their digits
// through a load and a save.
func TestAnyNumbersExact(t *testing.T) {
	type item struct {
		ID   string         `dynamo:"id,hash"`
		Any  any            `dynamo:"any"`
		Map  map[string]any `dynamo:"map"`
		List []any          `dynamo:"list"`
	}
	stored := map[string]types.AttributeValue{
		"id":   str("x"),
		"any":  n("9223372036854775807"),
		"map":  avM(map[string]types.AttributeValue{"max": n("9223372036854775807"), "big": n("123456789012345678901234567890.5"), "deep": avL(n("-9223372036854775808"))}),
		"list": avL(n("0.1"), n("1e3"), str("s")),
	}
	tb := javaTestTable[item](t)
	got, err := tb.decode(stored)
	if err != nil {
		t.Fatal(err)
	}
	if got.Any != attributevalue.Number("9223372036854775807") {
		t.Errorf("Any = %#v", got.Any)
	}
	back, err := tb.encode(&got)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, stored) {
		t.Errorf("round trip:\n got %v\nwant %v", back, stored)
	}
	// WithDecoderOptions can still ask for float64.
	tf, err := NewTable[item](NewMapper(&fakeDB{noStore: true}, WithDecoderOptions(func(o *attributevalue.DecoderOptions) { o.UseNumber = false })), "java")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tf.decode(stored); err != nil || got.Any != float64(9223372036854775807) {
		t.Errorf("UseNumber off: %#v, %v", got.Any, err)
	}
}

type b2JDKey struct {
	P  string    `dynamo:"p,hash"`
	At time.Time `dynamo:"at,range,javadate"`
}

// A javadate sort key is stored as "2006-01-02T15:04:05.000Z" (UTC,
// milliseconds); a Query key condition on it with a time.Time value is sent
// in that form too (JavaDate(t)), as Filter and If values are, so `at = t`
// matches and `at > t` compares strings of one format.
func TestJavaDateKeyConditionConverted(t *testing.T) {
	K, V := expression.Key, expression.Value
	cl := (&fakeDB{}).table("T", "p", "at")
	tb, err := NewTable[b2JDKey](NewMapper(cl), "T")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2024, 1, 2, 3, 4, 5, 120e6, time.FixedZone("X", 3600))
	want := JavaDate(at).(*types.AttributeValueMemberS).Value
	for name, kc := range map[string]expression.KeyConditionBuilder{
		"=": K("p").Equal(V("a")).And(K("at").Equal(V(at))),
		">": K("p").Equal(V("a")).And(K("at").GreaterThan(V(at))),
	} {
		_, _, err = tb.QueryPage(t.Context(), kc)
		if err != nil {
			t.Logf("%s: refused: %v", name, err) // refusing with a hint would also do
			continue
		}
		qs := cl.queries()
		q := qs[len(qs)-1]
		for ph, v := range q.ExpressionAttributeValues {
			if s, ok := v.(*types.AttributeValueMemberS); ok && s.Value != "a" && s.Value != want {
				t.Errorf("key condition %s: %s sent as %q, but the item stores at as %q", *q.KeyConditionExpression, ph, s.Value, want)
			}
		}
	}
}

// A cursor on a javadate sort key is checked against the key condition's
// converted value: the cursor's sort key "2024-01-02T02:05:05.000Z" (as
// stored) is after 03:04:05+01:00 (02:04:05Z), and is accepted.
func TestJavaDateCursorAccepted(t *testing.T) {
	K, V := expression.Key, expression.Value
	cl := (&fakeDB{}).table("T", "p", "at")
	tb, err := NewTable[b2JDKey](NewMapper(cl), "T")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600))
	c := qcCursor(t, plan.Position{Key: map[string]types.AttributeValue{"p": qcS("a"), "at": JavaDate(at.Add(time.Minute))}})
	if _, _, err := tb.QueryPage(t.Context(), K("p").Equal(V("a")).And(K("at").GreaterThan(V(at))), StartAfter(c)); err != nil {
		t.Errorf("a cursor one minute after the bound, for at > bound: %v", err)
	}
}

// javaTagged is a nested struct whose fields are named and converted only
// by reading its tags the way the codec does (codec.ReadTags, LayoutOf).
type javaTagged struct {
	// An empty dynamo tag is not read: dynamodbav names it and makes it
	// javabool.
	Flag bool `dynamodbav:"flag,javabool" dynamo:""`
	// The options of both tags apply; the dynamo tag names it.
	On bool `dynamodbav:",javabool" dynamo:"on"`
	// Its Plain is hidden by the outer Plain (shallower): the javabool on
	// the hidden one converts nothing.
	javaShadowed
	Plain bool `dynamo:"plain"`
}

type javaShadowed struct {
	Plain bool `dynamo:"plain,javabool"`
}

type javaTaggedItem struct {
	ID  string     `dynamo:"id,hash"`
	Doc javaTagged `dynamo:"doc"`
}

// A javabool or javadate field of a nested struct is found, named and
// converted by the codec's reading of its tags, as a top-level field is:
// `dynamodbav` names a field whose `dynamo` tag is empty, the options of
// both tags apply, and a field hidden by a shallower one of the same name
// converts nothing. Encoding gives what DynamoDBMapper stores, and what it
// stores decodes.
func TestJavaNestedFieldsReadAsEncoded(t *testing.T) {
	tb := javaTestTable[javaTaggedItem](t)
	item := javaTaggedItem{ID: "a", Doc: javaTagged{Flag: true, On: true, Plain: true}}
	got, err := tb.encode(&item)
	if err != nil {
		t.Fatal(err)
	}
	want := avM(map[string]types.AttributeValue{"flag": n("1"), "on": n("1"), "plain": &types.AttributeValueMemberBOOL{Value: true}})
	if !reflect.DeepEqual(got["doc"], want) {
		t.Errorf("doc encoded as %s, want %s", avString(got["doc"]), avString(want))
	}
	// The names are attributevalue's (TagKey "dynamo"); only the values
	// of javabool fields differ.
	plain, err := attributevalue.NewEncoder(func(o *attributevalue.EncoderOptions) { o.TagKey = TagKey }).Encode(item.Doc)
	if err != nil {
		t.Fatal(err)
	}
	if wantAV := avM(map[string]types.AttributeValue{"flag": &types.AttributeValueMemberBOOL{Value: true}, "on": &types.AttributeValueMemberBOOL{Value: true},
		"plain": &types.AttributeValueMemberBOOL{Value: true}}); !reflect.DeepEqual(plain, wantAV) {
		t.Errorf("attributevalue encodes doc as %s, want %s", avString(plain), avString(wantAV))
	}
	stored := map[string]types.AttributeValue{"id": str("a"),
		"doc": avM(map[string]types.AttributeValue{"flag": n("1"), "on": n("0"), "plain": &types.AttributeValueMemberBOOL{Value: true}})}
	back, err := tb.decode(stored)
	if err != nil {
		t.Fatalf("decode of %s: %v", avString(stored["doc"]), err)
	}
	if w := (javaTagged{Flag: true, Plain: true}); back.Doc != w {
		t.Errorf("decoded doc = %+v, want %+v", back.Doc, w)
	}

	// A nested field's tags are refused where a top-level field's are:
	// here the `dynamo` tag without a name would silently rename it "X".
	type nestedRenamed struct {
		X string `dynamodbav:"x" dynamo:",omitempty"`
	}
	type top struct {
		ID string `dynamo:"id,hash"`
		X  string `dynamodbav:"x" dynamo:",omitempty"`
	}
	type nested struct {
		ID  string        `dynamo:"id,hash"`
		Doc nestedRenamed `dynamo:"doc"`
	}
	m := NewMapper(&fakeDB{noStore: true})
	_, topErr := NewTable[top](m, "t")
	_, nestedErr := NewTable[nested](m, "t")
	if topErr == nil || nestedErr == nil || !strings.Contains(nestedErr.Error(), "write `dynamo:\"x,omitempty\"`") {
		t.Errorf("top-level tags: %v; the same tags nested: %v; want both refused", topErr, nestedErr)
	}
}
