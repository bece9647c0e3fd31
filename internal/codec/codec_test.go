package codec

import (
	"maps"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// tagValues are the values a field's `dynamodbav` and `dynamo` tags take in
// the tests of the tag rule: absent, empty, "-" (alone or with options), a
// name, options without a name, and both.
var tagValues = []*string{nil, ptr(""), ptr("-"), ptr("-,omitempty"), ptr("title"), ptr(",omitempty"), ptr("title,omitempty"), ptr("name"), ptr("Title")}

func ptr(s string) *string { return &s }

// tagged returns struct{ ID string; Title string `tags` } with the given
// `dynamodbav` and `dynamo` tags (nil: absent).
func tagged(av, dy *string) reflect.Type {
	var tag string
	if av != nil {
		tag = AVTagKey + ":" + strconv.Quote(*av)
	}
	if dy != nil {
		if tag != "" {
			tag += " "
		}
		tag += TagKey + ":" + strconv.Quote(*dy)
	}
	return reflect.StructOf([]reflect.StructField{
		{Name: "ID", Type: reflect.TypeFor[string]()},
		{Name: "Title", Type: reflect.TypeFor[string](), Tag: reflect.StructTag(tag)},
	})
}

// The codec's list of fields names every field as attributevalue (TagKey
// "dynamo") does, for every combination of `dynamodbav` and `dynamo` tags:
// an empty or absent tag leaves the name to the other, a non-empty `dynamo`
// replaces the name (or "-") of `dynamodbav`, and "-" with options skips.
func TestLayoutNamesFieldsAsAttributevalue(t *testing.T) {
	enc := attributevalue.NewEncoder(func(o *attributevalue.EncoderOptions) { o.TagKey = TagKey })
	for _, av := range tagValues {
		for _, dy := range tagValues {
			typ := tagged(av, dy)
			v := reflect.New(typ).Elem()
			v.Field(0).SetString("a")
			v.Field(1).SetString("b")
			item, err := enc.Encode(v.Interface())
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Sorted(maps.Keys(item.(*types.AttributeValueMemberM).Value))
			var got []string
			for _, f := range LayoutOf(typ).Fields {
				got = append(got, f.Name)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s: fields %v, attributevalue stores %v", typ.Field(1).Tag, got, want)
			}
		}
	}
}

// The layout of embedded structs: flattened fields follow their Embedded
// entry with Go paths and index paths from the top struct, a field reached
// through an embedded pointer says so, the shallower of two fields named
// alike wins, a tie at one depth leaves both out, and unexported and
// skipped fields are listed but not attributes.
func TestLayoutFlattensEmbeddedStructs(t *testing.T) {
	type Inner struct {
		X string `dynamo:"x"`
		Y string
	}
	type Twin struct {
		X string `dynamo:"x"`
	}
	type Outer struct {
		Inner
		*Twin
		Y    string
		S    string `dynamodbav:"-"`
		note string //lint:ignore U1000 listed as Unexported
	}
	l := LayoutOf(reflect.TypeFor[Outer]())
	type row struct {
		goName, name string
		index        []int
		viaPtr       bool
		state        FieldState
	}
	want := []row{
		{"Inner", "Inner", []int{0}, false, Embedded},
		{"Inner.X", "x", []int{0, 0}, false, Shadowed},
		{"Inner.Y", "Y", []int{0, 1}, false, Shadowed},
		{"Twin", "Twin", []int{1}, false, Embedded},
		{"Twin.X", "x", []int{1, 0}, true, Shadowed},
		{"Y", "Y", []int{2}, false, Visible},
		{"S", "S", []int{3}, false, Skipped},
		{"note", "note", []int{4}, false, Unexported},
	}
	var got []row
	for _, f := range l.All {
		got = append(got, row{f.GoName, f.Name, f.Index, f.ViaPtr, f.State})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("All =\n%v\nwant\n%v", got, want)
	}
	if len(l.Fields) != 1 || l.Fields[0].Name != "Y" || l.Opaque {
		t.Errorf("Fields = %v, Opaque %v; want only Y", l.Fields, l.Opaque)
	}
	if LayoutOf(reflect.TypeFor[Outer]()) != l {
		t.Error("layout computed twice for one type; want the cached one")
	}
}

type nilAVMarshaler string

func (nilAVMarshaler) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return (*types.AttributeValueMemberS)(nil), nil
}

// TestSafeEncodeRefusesNilMember: a marshaler returning a nil pointer
// member (here a nil *types.AttributeValueMemberS) is an encoding error,
// not a value every later reader (the checks, Clone) crashes on — at the
// top, in a map and in a list.
func TestSafeEncodeRefusesNilMember(t *testing.T) {
	type rec struct {
		A nilAVMarshaler
	}
	enc := attributevalue.NewEncoder()
	for _, in := range []any{nilAVMarshaler("x"), rec{A: "x"}, []nilAVMarshaler{"x"}} {
		if av, err := SafeEncode(enc, in); err == nil {
			t.Errorf("SafeEncode(%#v) = %#v; want an error", in, av)
		}
	}
	if _, err := SafeEncode(enc, rec{}); err == nil {
		t.Errorf("SafeEncode of a struct with a nil-returning marshaler field: no error")
	}
	if av, err := SafeEncode(enc, map[string]any{"a": []any{"b", nil}}); err != nil {
		t.Errorf("SafeEncode of a plain value: %v (%#v)", err, av)
	}
}

// An item holding both "title" and "Title" (another writer's spelling)
// decodes the attribute named exactly as the field into it, every time:
// a name that differs only in case is matched only when the exact one is
// absent, whatever order the item's map yields them in. attributevalue
// takes whichever comes last, so reads of the whole item (Update,
// Transact, ConditionError) disagreed with each other and with the
// projected reads, which ask for "title" alone.
func TestDecodePrefersTheExactNameOverAnotherCase(t *testing.T) {
	type item struct {
		Title string `dynamo:"title"`
		Inner struct {
			Name string `dynamo:"name"`
		} `dynamo:"inner"`
	}
	c := For(reflect.TypeFor[item]())
	dec := attributevalue.NewDecoder(func(o *attributevalue.DecoderOptions) { o.TagKey = TagKey })
	raw := map[string]types.AttributeValue{
		"title": &types.AttributeValueMemberS{Value: "exact"},
		"Title": &types.AttributeValueMemberS{Value: "folded"},
		"TITLE": &types.AttributeValueMemberS{Value: "folded too"},
		"inner": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"Name": &types.AttributeValueMemberS{Value: "folded"},
			"name": &types.AttributeValueMemberS{Value: "exact"},
		}},
	}
	for range 200 {
		var v item
		if err := c.Decode(raw, unsafe.Pointer(&v), dec); err != nil {
			t.Fatal(err)
		}
		if v.Title != "exact" || v.Inner.Name != "exact" {
			t.Fatalf("decoded %+v; want the attributes named exactly (\"exact\") every time", v)
		}
	}
	// Without the exact name, a name differing in case is still taken, as
	// attributevalue takes it.
	var v item
	if err := c.Decode(map[string]types.AttributeValue{"TITLE": &types.AttributeValueMemberS{Value: "folded"}}, unsafe.Pointer(&v), dec); err != nil || v.Title != "folded" {
		t.Fatalf("decoded %+v, %v; want Title \"folded\"", v, err)
	}
}
