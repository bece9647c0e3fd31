package dynamo

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

type Book struct {
	ISBN    string   `dynamo:"ISBN,hash"`
	Title   string   `dynamo:"title"`
	Authors []string `dynamo:"authors,set,omitempty"`
	Note    *string  `dynamo:"note"`
	Version int64    `dynamo:"version,version"`
	Skip    string   `dynamo:"-"`
	private int      //lint:ignore U1000 unexported fields must be ignored by the schema
}

type Audit struct {
	CreatedBy string `dynamo:"created_by"`
}

type Order struct {
	Audit
	Customer string    `dynamo:"customer,hash"`
	ID       int64     `dynamo:"id,range"`
	Expires  time.Time `dynamo:"expires,ttl,unixtime"`
	V        *uint32   `dynamo:"v,version"`
}

func TestSchemaParsesTags(t *testing.T) {
	s, err := schemaFor(reflect.TypeFor[Book]())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range s.Fields {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "ISBN,title,authors,note,version" {
		t.Errorf("fields = %s", got)
	}
	if s.Fields[s.Hash].Name != "ISBN" || s.Range != -1 || s.Fields[s.Version].Name != "version" {
		t.Errorf("hash/range/version = %d/%d/%d", s.Hash, s.Range, s.Version)
	}
	if s.Fields[2].SetKind != 'S' {
		t.Errorf("authors setKind = %q", s.Fields[2].SetKind)
	}
	s2, _ := schemaFor(reflect.TypeFor[Book]())
	if s2 != s {
		t.Error("schema parsed twice for one type; want the cached one")
	}

	o, err := schemaFor(reflect.TypeFor[Order]())
	if err != nil {
		t.Fatal(err)
	}
	if o.Fields[0].Name != "created_by" || o.Fields[0].GoName != "Audit.CreatedBy" {
		t.Errorf("embedded field = %+v", o.Fields[0])
	}
	if o.Fields[o.Range].Name != "id" || o.Fields[o.TTL].Name != "expires" || o.Fields[o.Version].Name != "v" {
		t.Errorf("order schema = %+v", o)
	}
}

func TestSchemaErrors(t *testing.T) {
	type noHash struct {
		A string `dynamo:"a"`
	}
	type twoHash struct {
		A string `dynamo:"a,hash"`
		B string `dynamo:"b,hash"`
	}
	type twoVersions struct {
		A string `dynamo:"a,hash"`
		V int    `dynamo:"v,version"`
		W int    `dynamo:"w,version"`
	}
	type stringVersion struct {
		A string `dynamo:"a,hash"`
		V string `dynamo:"v,version"`
	}
	type dupName struct {
		A string `dynamo:"a,hash"`
		B string `dynamo:"x"`
		C string `dynamo:"x"`
	}
	type unknownOpt struct {
		A string `dynamo:"a,hash,sparse"`
	}
	type boolKey struct {
		A bool `dynamo:"a,hash"`
	}
	type ttlTime struct {
		A string    `dynamo:"a,hash"`
		T time.Time `dynamo:"t,ttl"`
	}
	type setOnString struct {
		A string `dynamo:"a,hash"`
		S string `dynamo:"s,set"`
	}
	type tokenClash struct {
		A string `dynamo:"a,hash"`
		V int    `dynamo:"v,version"`
		W string `dynamo:"ddbkit_wt"`
	}
	m := NewMapper(&fakeDB{noStore: true})
	tests := []struct {
		name  string
		table func() error
		field string
		fix   string
	}{
		{"no hash", func() error { _, err := NewTable[noHash](m, "t"); return err }, "", "tag one field"},
		{"two hash", func() error { _, err := NewTable[twoHash](m, "t"); return err }, "B", "exactly one"},
		{"two versions", func() error { _, err := NewTable[twoVersions](m, "t"); return err }, "W", "at most one"},
		{"string version", func() error { _, err := NewTable[stringVersion](m, "t"); return err }, "V", "use an integer type"},
		{"duplicate name", func() error { _, err := NewTable[dupName](m, "t"); return err }, "C", "another name"},
		{"unknown option", func() error { _, err := NewTable[unknownOpt](m, "t"); return err }, "A", "use one of"},
		{"bool key", func() error { _, err := NewTable[*boolKey](m, "t"); return err }, "A", "strings, numbers or []byte"},
		{"ttl without unixtime", func() error { _, err := NewTable[ttlTime](m, "t"); return err }, "T", "unixtime"},
		{"set on string", func() error { _, err := NewTable[setOnString](m, "t"); return err }, "S", "use a slice"},
		{"token clash", func() error { _, err := NewTable[tokenClash](m, "t"); return err }, "W", "WithWriteTokenAttribute"},
		{"not a struct", func() error { _, err := NewTable[int](m, "t"); return err }, "", "structs"},
		// Written but never read back: attributevalue cannot allocate the
		// unexported type when decoding (found by the attack session).
		{"embedded pointer to unexported", func() error { _, err := NewTable[embedsHiddenPtr](m, "t"); return err }, "hiddenEmbedded", "embed it by value"},
	}
	for _, tc := range tests {
		err := tc.table()
		var se *SchemaError
		if !errors.As(err, &se) || !errors.Is(err, ErrInvalidSchema) {
			t.Errorf("%s: error = %v, want a *SchemaError", tc.name, err)
			continue
		}
		if se.Field != tc.field || se.Struct == "" || !strings.Contains(err.Error(), tc.fix) {
			t.Errorf("%s: error = %q (field %q), want field %q and fix %q", tc.name, err, se.Field, tc.field, tc.fix)
		}
	}
	if _, err := NewTable[Book](nil, "t"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("nil mapper: %v", err)
	}
	if _, err := NewTable[Book](m, ""); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("empty name: %v", err)
	}
}

// A dynamo tag on an unexported field is a schema error, not silently
// ignored.
func TestUnexportedTaggedField(t *testing.T) {
	type hidden struct {
		ID   string `dynamo:"id,hash"`
		note string `dynamo:"note"`
		skip string `dynamo:"-"`
		free string
	}
	_, err := NewTable[hidden](NewMapper(&fakeDB{noStore: true}), "T")
	var se *SchemaError
	if !errors.As(err, &se) || se.Field != "note" || !strings.Contains(err.Error(), "export it (Note)") {
		t.Fatalf("NewTable = %v; want a SchemaError on field note saying to export it", err)
	}
	type fine struct {
		ID   string `dynamo:"id,hash"`
		skip string `dynamo:"-"`
		free string
	}
	if _, err := NewTable[fine](NewMapper(&fakeDB{noStore: true}), "T"); err != nil {
		t.Fatalf("untagged or skipped unexported fields: %v", err)
	}
	_ = hidden{note: "", skip: "", free: ""}
	_ = fine{skip: "", free: ""}
}

// A field's attribute name is read from its tags by one rule everywhere
// (attributevalue's with TagKey "dynamo"): an empty `dynamo` tag leaves the
// name to `dynamodbav`, for the schema as for the encoder, so Save writes
// the value under that name and removes no other attribute, and Load reads
// it back.
func TestDynamodbavNameWithEmptyDynamoTagIsStored(t *testing.T) {
	type doc struct {
		ID    string `dynamo:"id,hash"`
		Title string `dynamodbav:"title" dynamo:""`
		V     int64  `dynamo:"v,version"`
	}
	c := &fakeDB{noStore: true,
		onUpd: func(_ int, in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
			return &dynamodb.UpdateItemOutput{Attributes: map[string]types.AttributeValue{"id": str("a"), "v": n("1")}}, nil
		},
		onGet: func(_ int, in *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
			return &dynamodb.GetItemOutput{Item: map[string]types.AttributeValue{"id": str("a"), "title": str("Go"), "v": n("1")}}, nil
		},
	}
	docs := NewTableMust[doc](t, NewMapper(c))
	if _, err := docs.Save(context.Background(), doc{ID: "a", Title: "Go"}); err != nil {
		t.Fatal(err)
	}
	written := map[string]types.AttributeValue{} // attribute name → value written
	var removed []string
	for _, in := range c.puts() {
		maps.Copy(written, in.Item)
	}
	for _, in := range c.upds() {
		expr := aws.ToString(in.UpdateExpression)
		for ph, name := range in.ExpressionAttributeNames {
			if v, ok := in.ExpressionAttributeValues[":"+ph[1:]]; ok && strings.Contains(expr, ph+" = :"+ph[1:]) {
				written[name] = v
			}
			if _, rm, ok := strings.Cut(expr, "REMOVE "); ok && strings.Contains(rm, ph) {
				removed = append(removed, name)
			}
		}
	}
	if !reflect.DeepEqual(written["title"], str("Go")) {
		t.Errorf("Save wrote %v; want title = Go", written)
	}
	if _, ok := written["Title"]; ok || len(removed) > 0 {
		t.Errorf("Save wrote %v and removed %v; want nothing under Title and nothing removed", written, removed)
	}
	got, err := docs.Load(context.Background(), doc{ID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "Go" {
		t.Errorf("Load = %+v; want Title Go read from attribute title", got)
	}
}

// A refusal of contradicting options quotes the tag they were read from,
// `dynamodbav` as well as `dynamo`.
func TestTagErrorQuotesTheTagRead(t *testing.T) {
	type both struct {
		ID string    `dynamo:"id,hash"`
		B  time.Time `dynamodbav:"b,javabool,javadate"`
	}
	_, err := NewTable[both](NewMapper(&fakeDB{noStore: true}), "t")
	if err == nil || !strings.Contains(err.Error(), `tag "b,javabool,javadate" has both javabool and javadate`) {
		t.Errorf("err = %v, want it to quote the dynamodbav tag", err)
	}
}

type hiddenEmbedded struct {
	Flag bool   `dynamo:"flag"`
	Name string `dynamo:"name"`
}

type embedsHiddenPtr struct {
	ID string `dynamo:"id,hash"`
	*hiddenEmbedded
}
