package dynamo

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/schema"
)

// seenNames makes db record the attribute names of the items its reads
// return; the function returned gives them.
func seenNames(db *fakeDB) func() map[string]bool {
	var mu sync.Mutex
	names := map[string]bool{}
	see := func(items ...map[string]types.AttributeValue) {
		mu.Lock()
		defer mu.Unlock()
		for _, it := range items {
			for k := range it {
				names[k] = true
			}
		}
	}
	db.hook(&fakeHook{after: func(_ int, _, out any, err error) {
		if err != nil {
			return
		}
		switch o := out.(type) {
		case *dynamodb.GetItemOutput:
			see(o.Item)
		case *dynamodb.QueryOutput:
			see(o.Items...)
		case *dynamodb.ScanOutput:
			see(o.Items...)
		case *dynamodb.BatchGetItemOutput:
			for _, items := range o.Responses {
				see(items...)
			}
		case *dynamodb.TransactGetItemsOutput:
			for _, r := range o.Responses {
				see(r.Item)
			}
		}
	}})
	return func() map[string]bool {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(names)
	}
}

// profileSummary models two attributes of an item that has more (a big
// "body" among them).
type profileSummary struct {
	ID      string `dynamo:"id,hash"`
	Name    string `dynamo:"name"`
	Version int64  `dynamo:"v,version"`
}

// A narrow type reads only the attributes it models (Load, Query, Scan,
// BatchLoad, TxGet), and its SaveUpdate keeps the others — while the
// version is still checked.
func TestNarrowTypeIsAProjection(t *testing.T) {
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "proj", "id", types.ScalarAttributeTypeS, "", "")
	ctx := t.Context()
	_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: "p1"}, "name": &types.AttributeValueMemberS{Value: "Ada"},
		"v": &types.AttributeValueMemberN{Value: "1"}, "body": &types.AttributeValueMemberS{Value: strings.Repeat("x", 100_000)},
		"other.attr": &types.AttributeValueMemberN{Value: "7"}}})
	if err != nil {
		t.Fatal(err)
	}
	sc := &fakeDB{backend: c}
	seen := seenNames(sc)
	tb, err := NewTable[profileSummary](NewMapper(sc), name)
	if err != nil {
		t.Fatal(err)
	}
	key := profileSummary{ID: "p1"}
	got, err := tb.Load(ctx, key, ConsistentRead())
	if err != nil || got.Name != "Ada" || got.Version != 1 {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	for _, err := range tb.Query(ctx, expression.Key("id").Equal(expression.Value("p1"))) {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, err := range tb.Scan(ctx) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tb.BatchLoad(ctx, []profileSummary{key}); err != nil {
		t.Fatal(err)
	}
	g := tb.TxGet(key)
	if err := tb.Mapper().ReadTx(ctx, []TxGetOp{g}); err != nil {
		t.Fatal(err)
	}
	if names := slicesSorted(seen()); !slices.Equal(names, []string{"id", "name", "v"}) {
		t.Errorf("reads returned attributes %v, want only the modeled id, name, v", names)
	}
	got.Name = "Ada L."
	if _, err := tb.Save(ctx, got); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Save(ctx, got); err == nil { // stale: holds 1, stored 2
		t.Error("a stale summary saved without a conflict")
	}
	raw, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(name), Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "p1"}}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := raw.Item["body"].(*types.AttributeValueMemberS); !ok || len(b.Value) != 100_000 || raw.Item["other.attr"] == nil {
		t.Errorf("the save of the summary lost the attributes it does not model: %v", slicesSorted(mapKeys(raw.Item)))
	}
}

func mapKeys(m map[string]types.AttributeValue) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

func slicesSorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// The reads of a versioned type ask for its write token with the attributes
// it models: an item as they return it (the backfill keeps a scan's items
// so) names the state a write pins, and ChangedFrom of it writes — left
// out, the item looks as if no mapper wrote it, and the write is refused
// as over an item deleted and created again.
func TestReadsTakeTheWriteToken(t *testing.T) {
	db := (&fakeDB{}).table("Books", "ISBN", "")
	b := newBooks(t, db)
	saved, err := b.Save(t.Context(), Book{ISBN: "1", Title: "T"})
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]types.AttributeValue
	db.hook(&fakeHook{op: "Scan", after: func(_ int, _, out any, err error) {
		if err == nil && len(out.(*dynamodb.ScanOutput).Items) == 1 {
			raw = out.(*dynamodb.ScanOutput).Items[0]
		}
	}})
	for _, err := range b.Scan(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if raw[DefaultWriteTokenAttribute] == nil {
		t.Fatalf("the scan returned %v, without the write token", slicesSorted(mapKeys(raw)))
	}
	saved.Title = "U"
	if _, err := b.Save(t.Context(), saved, ChangedFrom(raw)); err != nil {
		t.Errorf("Save with ChangedFrom of the item scanned = %v; want it written", err)
	}
}

// A type whose projection fits DynamoDB's 4 KB limit for an expression
// only without the write token reads whole items: the limit is checked on
// the expression sent, token included, never on a shorter one. (601 fields:
// their placeholders take 4 095 bytes, 4 100 with ", #wt".)
func TestProjectionWithTheTokenKeepsTheLimit(t *testing.T) {
	fields := []reflect.StructField{
		{Name: "ID", Type: reflect.TypeFor[string](), Tag: `dynamo:"id,hash"`},
		{Name: "Version", Type: reflect.TypeFor[int64](), Tag: `dynamo:"version,version"`},
	}
	for i := len(fields); i < 601; i++ {
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: reflect.TypeFor[string](), Tag: reflect.StructTag(fmt.Sprintf(`dynamo:"f%d"`, i))})
	}
	s, err := schema.Build(reflect.StructOf(fields))
	if err != nil {
		t.Fatal(err)
	}
	if proj, _ := s.Projection(plan.TokenNamePH, ""); proj == "" || len(proj) > schema.MaxExprLen {
		t.Fatalf("without the token: a projection of %d bytes; want one of at most %d (the case this test is built on)", len(proj), schema.MaxExprLen)
	}
	if proj, names := s.Projection(plan.TokenNamePH, "ddbkit_wt"); proj != "" || names != nil {
		t.Errorf("with the token: a projection of %d bytes; want none (whole items): over DynamoDB's limit of %d", len(proj), schema.MaxExprLen)
	}
	if p := plan.NewPlan(s, "ddbkit_wt"); p.Proj != "" {
		t.Errorf("the plan's projection is %d bytes; want none (whole items)", len(p.Proj))
	}
}

// wideProfile is a profile as its owning service models it: every
// attribute, written through the mapper (so with a write token).
type wideProfile struct {
	ID      string            `dynamo:"id,hash"`
	Name    string            `dynamo:"name"`
	Body    string            `dynamo:"body"`
	Tags    []string          `dynamo:"tags,set,omitempty"`
	Extra   map[string]string `dynamo:"extra"`
	Version int64             `dynamo:"v,version"`
}

// profileBase is embedded by narrowProfile: its fields are attributes of
// the narrow type.
type profileBase struct {
	ID   string `dynamo:"id,hash"`
	Name string `dynamo:"name"`
}

// narrowProfile models the name alone (through an embedded struct), and a
// field that is no attribute.
type narrowProfile struct {
	profileBase
	Scratch string `dynamo:"-"`
	Version int64  `dynamo:"v,version"`
}

// selfDecoding decodes itself: its reads take whole items.
type selfDecoding struct {
	ID      string   `dynamo:"id,hash"`
	Version int64    `dynamo:"v,version"`
	Attrs   []string `dynamo:"-"`
}

func (s *selfDecoding) UnmarshalDynamoDBAttributeValue(v types.AttributeValue) error {
	m, ok := v.(*types.AttributeValueMemberM)
	if !ok {
		return fmt.Errorf("not a map: %T", v)
	}
	s.Attrs = slicesSorted(mapKeys(m.Value))
	if id, ok := m.Value["id"].(*types.AttributeValueMemberS); ok {
		s.ID = id.Value
	}
	return attributevalue.Unmarshal(m.Value["v"], &s.Version)
}

// On DynamoDB Local, with write tokens on and off: a narrow type (an
// embedded struct, a `dynamo:"-"` field) reads an item a wide type wrote
// through the mapper, saves it (Save of the copy loaded, Save with
// ChangedFrom of the item read, Update) and keeps every attribute it does
// not model; each write passes the version and token checks (no false
// conflict over the wide type's token), a stale narrow copy still conflicts,
// and the wide type then reads both its attributes and the narrow change.
// A type that decodes itself reads whole items.
func TestNarrowTypeSavesOverAWideTypesItem(t *testing.T) {
	for _, token := range []string{DefaultWriteTokenAttribute, ""} {
		t.Run("token="+token, func(t *testing.T) {
			c := dynamotest.Client(t)
			name := dynamotest.KeyTable(t, c, "narrow", "id", types.ScalarAttributeTypeS, "", "")
			ctx := t.Context()
			m := NewMapper(c, WithWriteTokenAttribute(token))
			wide, err := NewTable[wideProfile](m, name)
			if err != nil {
				t.Fatal(err)
			}
			narrow, err := NewTable[narrowProfile](m, name)
			if err != nil {
				t.Fatal(err)
			}
			self, err := NewTable[selfDecoding](m, name)
			if err != nil {
				t.Fatal(err)
			}
			for _, call := range []string{"Save", "ChangedFrom", "Update"} {
				id := "p-" + call
				w, err := wide.Save(ctx, wideProfile{ID: id, Name: "Ada", Body: "long", Tags: []string{"x"}, Extra: map[string]string{"k": "v"}})
				if err != nil {
					t.Fatal(err)
				}
				key := narrowProfile{profileBase: profileBase{ID: id}}
				got, err := narrow.Load(ctx, key, ConsistentRead())
				if err != nil || got.Name != "Ada" || got.Version != w.Version {
					t.Fatalf("narrow Load = %+v, %v", got, err)
				}
				got.Name, got.Scratch = "Ada L.", "not stored"
				var saved narrowProfile
				switch call {
				case "Save":
					saved, err = narrow.Save(ctx, got)
				case "ChangedFrom":
					raw, gerr := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(name), Key: map[string]types.AttributeValue{"id": str(id)}, ConsistentRead: aws.Bool(true)})
					if gerr != nil {
						t.Fatal(gerr)
					}
					saved, err = narrow.Save(ctx, got, ChangedFrom(raw.Item))
				case "Update":
					saved, err = narrow.Update(ctx, key, func(p narrowProfile) (narrowProfile, error) { p.Name = "Ada L."; return p, nil })
				}
				if err != nil || saved.Version <= w.Version {
					t.Fatalf("narrow %s over the wide item = %+v, %v; want it written", call, saved, err)
				}
				if _, err := narrow.Save(ctx, got); !errors.Is(err, ErrVersionConflict) {
					t.Errorf("a stale narrow copy saved: %v", err)
				}
				back, err := wide.Load(ctx, wideProfile{ID: id}, ConsistentRead())
				if err != nil || back.Name != "Ada L." || back.Body != "long" || !slices.Equal(back.Tags, []string{"x"}) || back.Extra["k"] != "v" || back.Version != saved.Version {
					t.Errorf("the wide type reads %+v, %v after the narrow %s", back, err, call)
				}
				raw, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(name), Key: map[string]types.AttributeValue{"id": str(id)}, ConsistentRead: aws.Bool(true)})
				if err != nil {
					t.Fatal(err)
				}
				if raw.Item["Scratch"] != nil || raw.Item["scratch"] != nil {
					t.Errorf("the dynamo:\"-\" field was stored: %v", slicesSorted(mapKeys(raw.Item)))
				}
				sd, err := self.Load(ctx, selfDecoding{ID: id}, ConsistentRead())
				if err != nil || !slices.Contains(sd.Attrs, "body") || !slices.Contains(sd.Attrs, "extra") || token != "" && !slices.Contains(sd.Attrs, token) {
					t.Errorf("a type decoding itself read %v, %v; want the whole item", sd.Attrs, err)
				}
			}
		})
	}
}
