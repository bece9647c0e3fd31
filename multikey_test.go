package dynamo

import (
	"context"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/av"
)

// mkOrder is keyed for the tenant + status and customer + date patterns:
// ByTenantStatus has two partition attributes and two sort attributes,
// the second of them the table's own hash key.
type mkOrder struct {
	ID       string  `dynamo:"id,hash" index:"ByTenantStatus,range,2"`
	Tenant   string  `dynamo:"tenant" index:"ByTenantStatus,hash,1 ByCustomer,hash"`
	Region   string  `dynamo:"region" index:"ByTenantStatus,hash,2"`
	Status   string  `dynamo:"status" index:"ByTenantStatus,range,1"`
	Day      int     `dynamo:"day" index:"ByCustomer,range,1"`
	Customer *string `dynamo:"customer,omitempty" index:"ByCustomer,range,2"`
	Note     string  `dynamo:"note"`
}

// The tags' order, not the fields', is the key's: CreateTableInput lists
// the HASH attributes first in their order, then the RANGE ones, and
// defines each attribute once (id is the table's key and an index's).
func TestMultiAttrIndexKeySchemaInTagOrder(t *testing.T) {
	in := mustInput[mkOrder](t)
	ks := map[string]string{}
	for _, g := range in.GlobalSecondaryIndexes {
		var parts []string
		for _, k := range g.KeySchema {
			parts = append(parts, string(k.KeyType)+" "+aws.ToString(k.AttributeName))
		}
		ks[aws.ToString(g.IndexName)] = strings.Join(parts, ", ")
	}
	want := map[string]string{
		"ByTenantStatus": "HASH tenant, HASH region, RANGE status, RANGE id",
		"ByCustomer":     "HASH tenant, RANGE day, RANGE customer",
	}
	if !reflect.DeepEqual(ks, want) {
		t.Errorf("key schemas = %v, want %v", ks, want)
	}
	var defs []string
	for _, d := range in.AttributeDefinitions {
		defs = append(defs, aws.ToString(d.AttributeName)+":"+string(d.AttributeType))
	}
	slices.Sort(defs)
	if w := []string{"customer:S", "day:N", "id:S", "region:S", "status:S", "tenant:S"}; !slices.Equal(defs, w) {
		t.Errorf("attribute definitions = %v, want %v", defs, w)
	}
}

// A key of several attributes is numbered 1 to n per role, at most 4,
// and only in a global index: each break of the rule is a schema error
// naming the field and the fix.
func TestMultiAttrIndexTagErrors(t *testing.T) {
	type five struct {
		ID string `dynamo:"id,hash"`
		A  string `index:"ByX,hash,1"`
		B  string `index:"ByX,hash,2"`
		C  string `index:"ByX,hash,3"`
		D  string `index:"ByX,hash,4"`
		E  string `index:"ByX,hash,5"`
	}
	type unnumbered struct {
		ID string `dynamo:"id,hash"`
		A  string `index:"ByX,hash"`
		B  string `index:"ByX,range,1"`
		C  string `index:"ByX,range"`
	}
	type oneUnnumbered struct {
		ID string `dynamo:"id,hash"`
		A  string `index:"ByX,hash,1"`
		B  string `index:"ByX,hash"`
	}
	type repeated struct {
		ID string `dynamo:"id,hash"`
		A  string `index:"ByX,hash"`
		B  string `index:"ByX,range,1"`
		C  string `index:"ByX,range,1"`
	}
	type gap struct {
		ID string `dynamo:"id,hash"`
		A  string `index:"ByX,hash,1"`
		B  string `index:"ByX,hash,3"`
	}
	type aloneSecond struct {
		ID string `dynamo:"id,hash"`
		A  string `index:"ByX,hash,2"`
	}
	type localNumbered struct {
		ID string `dynamo:"id,hash"`
		R  string `dynamo:"r,range"`
		A  string `localIndex:"ByX,range,1"`
	}
	type localTwo struct {
		ID string `dynamo:"id,hash"`
		R  string `dynamo:"r,range"`
		A  string `localIndex:"ByX,range"`
		B  string `localIndex:"ByX,range"`
	}
	type rangesOnly struct {
		ID string `dynamo:"id,hash"`
		A  string `index:"ByX,range,1"`
		B  string `index:"ByX,range,2"`
	}
	tests := []struct {
		typ   reflect.Type
		field string
		want  string
	}{
		{reflect.TypeFor[five](), "E", `index "ByX" has 5 hash key attributes: DynamoDB takes at most 4`},
		{reflect.TypeFor[unnumbered](), "C", `range key of index "ByX" without a number while B has one: number every attribute of the key, e.g. ` + "`index:\"ByX,range,2\"`"},
		{reflect.TypeFor[oneUnnumbered](), "B", `hash key of index "ByX" without a number while A has one`},
		{reflect.TypeFor[repeated](), "C", `range key of index "ByX" numbered 1, as is B: number the attributes 1 to 2, once each`},
		{reflect.TypeFor[gap](), "B", `hash key of index "ByX" numbered 3, but the key has 2 attributes: number them 1 to 2`},
		{reflect.TypeFor[aloneSecond](), "A", `hash key of index "ByX" numbered 2, but the key has 1 attribute: number it 1, or leave the number out`},
		{reflect.TypeFor[localNumbered](), "A", `local index "ByX" with a numbered key: only a global index has keys of several attributes`},
		{reflect.TypeFor[localTwo](), "B", `second range key of local index "ByX" (the first is A): a local index has one`},
		{reflect.TypeFor[rangesOnly](), "A", `index "ByX" has a range key but no hash key`},
	}
	for _, tc := range tests {
		_, err := schemaFor(tc.typ)
		var se *SchemaError
		if !errors.As(err, &se) || !errors.Is(err, ErrInvalidSchema) {
			t.Errorf("%s: err = %v, want a *SchemaError", tc.typ, err)
			continue
		}
		if se.Field != tc.field || !strings.Contains(se.Reason, tc.want) {
			t.Errorf("%s: got %q (field %s), want field %s and %q", tc.typ, err, se.Field, tc.field, tc.want)
		}
		if len(se.Reason) > 160 {
			t.Errorf("%s: reason of %d characters: %s", tc.typ, len(se.Reason), se.Reason)
		}
	}
}

// Key conditions that break DynamoDB's rule for a multi-attribute key are
// refused before anything is sent, naming the fix.
func TestMultiAttrIndexQueryRefusedBeforeSending(t *testing.T) {
	k := expression.Key
	v := expression.Value
	tenant, region := k("tenant").Equal(v("t1")), k("region").Equal(v("eu"))
	query := func(kc expression.KeyConditionBuilder) func(ctx context.Context, c Client) error {
		return func(ctx context.Context, c Client) error {
			_, _, err := qcTable[mkOrder](t, c).QueryPage(ctx, kc, Index("ByTenantStatus"))
			return err
		}
	}
	qcRefused(t, []qcRefusedCase{
		{"a partition attribute missing", query(tenant), []string{
			`does not fix the partition attribute "region"`, `add expression.Key("region").Equal`}},
		{"a partition attribute missing, sort used", query(region.And(k("status").Equal(v("open")))), []string{
			`does not fix the partition attribute "tenant"`}},
		{"a partition attribute with a range", query(tenant.And(k("region").BeginsWith("e"))), []string{
			`applies begins_with to the partition key "region"`, `use expression.Key("region").Equal`}},
		{"the first sort attribute skipped", query(tenant.And(region).And(k("id").Equal(v("o1")))), []string{
			`skips the sort attribute "status" before "id"`, `add a condition on "status"`}},
		// The SDK's builder refuses a range left of an And itself; written
		// last, it reaches the mapper's check.
		{"a range before the last sort attribute used", query(tenant.And(region).And(k("id").Equal(v("o1"))).And(k("status").GreaterThan(v("a")))), []string{
			`applies > to the sort attribute "status", then names "id"`, `use Equal on "status"`}},
		{"an attribute of no key of the index", query(tenant.And(region).And(k("note").Equal(v("x")))), []string{
			`names "note", which is not a key of index "ByTenantStatus" (partition attributes "tenant", "region", sort attributes "status", "id")`, `name every partition attribute`}},
		{"a value of the wrong type", query(tenant.And(region).And(k("status").Equal(v(3)))), []string{
			`compares the sort key "status", a string (S), with a number (N) value`}},
	})
}

// mkQueryDB returns a fake holding the table mkOrder's tags create, with
// four orders of tenant t1 in eu and one elsewhere.
func mkQueryDB(t *testing.T) (*fakeDB, *Table[mkOrder]) {
	t.Helper()
	db := &fakeDB{}
	tb := newTestTable[mkOrder](t, db, "Orders")
	if err := tb.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	cust := "c9"
	for _, o := range []mkOrder{
		{ID: "o1", Tenant: "t1", Region: "eu", Status: "open", Day: 3},
		{ID: "o2", Tenant: "t1", Region: "eu", Status: "open", Day: 1, Customer: &cust},
		{ID: "o3", Tenant: "t1", Region: "eu", Status: "paid", Day: 2},
		{ID: "o4", Tenant: "t1", Region: "eu", Status: "shipped", Day: 5},
		{ID: "o5", Tenant: "t1", Region: "us", Status: "open", Day: 4},
	} {
		if _, err := tb.Save(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	return db, tb
}

func mkIDs(items []mkOrder) string {
	var ids []string
	for _, o := range items {
		ids = append(ids, o.ID)
	}
	return strings.Join(ids, " ")
}

// Valid key conditions are sent as built, and the fake answers them as
// DynamoDB would: every partition attribute fixed, sort attributes left to
// right, a range on the last one used.
func TestMultiAttrIndexQueryAcceptedAndSentUnchanged(t *testing.T) {
	k := expression.Key
	v := expression.Value
	part := k("tenant").Equal(v("t1")).And(k("region").Equal(v("eu")))
	tests := []struct {
		name string
		kc   expression.KeyConditionBuilder
		want string
	}{
		{"partition only", part, "o1 o2 o3 o4"},
		{"first sort attribute equal", part.And(k("status").Equal(v("open"))), "o1 o2"},
		{"range on the first sort attribute", part.And(k("status").GreaterThan(v("open"))), "o3 o4"},
		{"begins_with on the first", part.And(k("status").BeginsWith("p")), "o3"},
		{"equal, then a range on the second", part.And(k("status").Equal(v("open"))).And(k("id").Between(v("o2"), v("o9"))), "o2"},
		{"both equal", part.And(k("status").Equal(v("open"))).And(k("id").Equal(v("o1"))), "o1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db, tb := mkQueryDB(t)
			items, _, err := tb.QueryPage(t.Context(), tc.kc, Index("ByTenantStatus"))
			if err != nil {
				t.Fatal(err)
			}
			if got := mkIDs(items); got != tc.want {
				t.Errorf("items %q, want %q", got, tc.want)
			}
			e, err := expression.NewBuilder().WithKeyCondition(tc.kc).Build()
			if err != nil {
				t.Fatal(err)
			}
			qs := db.queries()
			if len(qs) != 1 || aws.ToString(qs[0].KeyConditionExpression) != aws.ToString(e.KeyCondition()) ||
				!reflect.DeepEqual(qs[0].ExpressionAttributeNames, e.Names()) || aws.ToString(qs[0].IndexName) != "ByTenantStatus" {
				t.Errorf("sent %+v, want the key condition %q with names %v", qs, aws.ToString(e.KeyCondition()), e.Names())
			}
		})
	}
}

// A cursor of a multi-attribute index carries all its key attributes and
// the table's, resumes where the page stopped, and is refused for a
// query of another partition.
func TestMultiAttrIndexCursorCarriesEveryKeyAttribute(t *testing.T) {
	_, tb := mkQueryDB(t)
	part := expression.Key("tenant").Equal(expression.Value("t1")).And(expression.Key("region").Equal(expression.Value("eu")))
	items, cur, err := tb.QueryPage(t.Context(), part, Index("ByTenantStatus"), Limit(2))
	if err != nil || mkIDs(items) != "o1 o2" || cur == "" {
		t.Fatalf("page 1 = %q, %q, %v", mkIDs(items), cur, err)
	}
	p, err := decodeCursor(cur)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range p.Key {
		names = append(names, n)
	}
	slices.Sort(names)
	if w := []string{"id", "region", "status", "tenant"}; !slices.Equal(names, w) {
		t.Errorf("cursor key attributes %v, want %v", names, w)
	}
	items, cur, err = tb.QueryPage(t.Context(), part, Index("ByTenantStatus"), StartAfter(cur))
	if err != nil || mkIDs(items) != "o3 o4" || cur != "" {
		t.Errorf("page 2 = %q, %q, %v", mkIDs(items), cur, err)
	}
	_, c2, _ := tb.QueryPage(t.Context(), part, Index("ByTenantStatus"), Limit(1))
	other := expression.Key("tenant").Equal(expression.Value("t1")).And(expression.Key("region").Equal(expression.Value("us")))
	if _, _, err := tb.QueryPage(t.Context(), other, Index("ByTenantStatus"), StartAfter(c2)); !errors.Is(err, ErrInvalidInput) ||
		!strings.Contains(err.Error(), "it is in the partition region = ") {
		t.Errorf("cursor of another partition: %v", err)
	}
	// A cursor lacking one of the index's attributes is refused.
	delete(p.Key, "region")
	bad, err := encodeCursor(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tb.QueryPage(t.Context(), part, Index("ByTenantStatus"), StartAfter(bad)); !errors.Is(err, ErrInvalidInput) ||
		!strings.Contains(err.Error(), `lacks the key attribute "region"`) {
		t.Errorf("cursor without region: %v", err)
	}
}

// Writes check every attribute of a multi-attribute key as they check a
// single one: an empty string is refused before sending, an attribute left
// out (omitempty, nil) leaves the item out of the index.
func TestMultiAttrIndexKeyValuesCheckedOnWrite(t *testing.T) {
	db, tb := mkQueryDB(t)
	sent := db.count("")
	_, err := tb.Save(t.Context(), mkOrder{ID: "o6", Tenant: "t1", Region: "", Status: "open"})
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), `index "ByTenantStatus" hash key region`) ||
		!strings.Contains(err.Error(), "empty string") {
		t.Errorf("empty region: %v", err)
	}
	if db.count("") != sent {
		t.Errorf("a request was sent for the refused write")
	}
	// o1 has no customer: it is in ByTenantStatus, not in ByCustomer.
	items, _, err := tb.QueryPage(t.Context(), expression.Key("tenant").Equal(expression.Value("t1")), Index("ByCustomer"))
	if err != nil || mkIDs(items) != "o2" {
		t.Errorf("ByCustomer = %q, %v; want o2 only", mkIDs(items), err)
	}
}

// The fake's rule for key conditions, checked against the service
// documentation's rules for multi-attribute keys: for each rule, one
// condition it accepts and one it refuses.
func TestFakeMultiAttrKeyConditionRule(t *testing.T) {
	hashes, rngs := []string{"h1", "h2"}, []string{"r1", "r2", "r3"}
	names := map[string]string{"#h1": "h1", "#h2": "h2", "#r1": "r1", "#r2": "r2", "#r3": "r3"}
	tests := []struct {
		rule, expr string
		ok         bool
	}{
		{"equality on every partition attribute", "#h1 = :a AND #h2 = :b", true},
		{"equality on every partition attribute", "#h1 = :a", false},
		{"equality on every partition attribute", "#h1 = :a AND #h2 > :b", false},
		{"sort attributes left to right", "#h1 = :a AND #h2 = :b AND #r1 = :c AND #r2 = :d", true},
		{"sort attributes left to right", "#h1 = :a AND #h2 = :b AND #r2 = :d", false},
		{"sort attributes left to right", "#h1 = :a AND #h2 = :b AND #r1 = :c AND #r3 = :d", false},
		{"only the last sort attribute used takes a range", "#h1 = :a AND #h2 = :b AND #r1 = :c AND #r2 BETWEEN :d AND :e", true},
		{"only the last sort attribute used takes a range", "#h1 = :a AND #h2 = :b AND begins_with(#r1, :c)", true},
		{"only the last sort attribute used takes a range", "#h1 = :a AND #h2 = :b AND #r1 < :c AND #r2 = :d", false},
		{"only the last sort attribute used takes a range", "#h1 = :a AND #h2 = :b AND begins_with(#r1, :c) AND #r2 = :d", false},
		{"one condition per attribute", "#h1 = :a AND #h2 = :b AND #r1 > :c AND #r1 < :d", false},
	}
	for _, tc := range tests {
		err := fakeKeyConditionRule(tc.expr, names, hashes, rngs)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %q: err = %v, want accepted %v", tc.rule, tc.expr, err, tc.ok)
		}
	}
}

// Against a server that has multi-attribute keys (DynamoDB, or DynamoDB
// Local 3.3 or later named by DYNAMODB_ENDPOINT), the table mkOrder's
// tags create is queried as the fake answers. DynamoDB Local 1.25.1, the
// one the tests start, predates the feature: the test then says it did
// not run.
func TestMultiAttrIndexOnServer(t *testing.T) {
	if os.Getenv("DYNAMODB_ENDPOINT") == "" {
		const why = "did not run: multi-attribute index keys need DynamoDB Local 3.3 or later; set DYNAMODB_ENDPOINT to one"
		if testing.Short() {
			t.Skip(why)
		}
		t.Log(why)
		return
	}
	c := dynamotest.Client(t)
	tb := newTestTable[mkOrder](t, c, "mk43"+strings.ToLower(strings.ReplaceAll(t.Name(), "/", "")))
	_, _ = c.DeleteTable(t.Context(), &dynamodb.DeleteTableInput{TableName: aws.String(tb.name)})
	err := tb.CreateTable(t.Context())
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "ValidationException" && strings.Contains(ae.ErrorMessage(), "Key Schema") {
		t.Logf("did not run: the server at DYNAMODB_ENDPOINT refuses a multi-attribute key schema (it predates them): %v", err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(tb.name)})
	})
	for _, o := range []mkOrder{
		{ID: "o1", Tenant: "t1", Region: "eu", Status: "open", Day: 3},
		{ID: "o2", Tenant: "t1", Region: "eu", Status: "open", Day: 1},
		{ID: "o3", Tenant: "t1", Region: "eu", Status: "paid", Day: 2},
		{ID: "o5", Tenant: "t1", Region: "us", Status: "open", Day: 4},
	} {
		if _, err := tb.Save(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	part := expression.Key("tenant").Equal(expression.Value("t1")).And(expression.Key("region").Equal(expression.Value("eu")))
	for _, q := range []struct {
		kc   expression.KeyConditionBuilder
		want string
	}{
		{part, "o1 o2 o3"},
		{part.And(expression.Key("status").Equal(expression.Value("open"))).And(expression.Key("id").GreaterThan(expression.Value("o1"))), "o2"},
	} {
		items, _, err := tb.QueryPage(t.Context(), q.kc, Index("ByTenantStatus"))
		if err != nil || mkIDs(items) != q.want {
			t.Errorf("query = %q, %v; want %q", mkIDs(items), err, q.want)
		}
	}
}

// mkShopOrder and mkShopCustomer share one table (single-table design).
// ByTenantKind is keyed by tenant and the entity attribute, then status and
// the table's sort key; ByTenantDay by tenant and region, then day: its key
// does not hold the entity attribute.
type mkShopOrder struct {
	PK      string `dynamo:"pk,hash"`
	SK      string `dynamo:"sk,range" index:"ByTenantKind,range,2"`
	Kind    string `dynamo:"kind,entity=order" index:"ByTenantKind,hash,2"`
	Tenant  string `dynamo:"tenant" index:"ByTenantKind,hash,1 ByTenantDay,hash,1"`
	Region  string `dynamo:"region" index:"ByTenantDay,hash,2"`
	Status  string `dynamo:"status" index:"ByTenantKind,range,1"`
	Day     int    `dynamo:"day" index:"ByTenantDay,range"`
	N       int    `dynamo:"n"`
	Version int64  `dynamo:"v,version"`
}

type mkShopCustomer struct {
	PK      string `dynamo:"pk,hash"`
	SK      string `dynamo:"sk,range" index:"ByTenantKind,range,2"`
	Kind    string `dynamo:"kind,entity=customer" index:"ByTenantKind,hash,2"`
	Tenant  string `dynamo:"tenant" index:"ByTenantKind,hash,1 ByTenantDay,hash,1"`
	Region  string `dynamo:"region" index:"ByTenantDay,hash,2"`
	Status  string `dynamo:"status" index:"ByTenantKind,range,1"`
	Day     int    `dynamo:"day" index:"ByTenantDay,range"`
	Name    string `dynamo:"name"`
	Version int64  `dynamo:"v,version"`
}

// mkShop returns the fake holding the table mkShopOrder's tags create,
// with two orders and a customer of tenant t1 in eu.
func mkShop(t *testing.T) (*fakeDB, *Table[mkShopOrder], *Table[mkShopCustomer]) {
	t.Helper()
	db := &fakeDB{}
	orders := newTestTable[mkShopOrder](t, db, "Shop")
	if err := orders.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	customers, err := NewTable[mkShopCustomer](orders.Mapper(), "Shop")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []mkShopOrder{
		{PK: "T#t1", SK: "O#1", Tenant: "t1", Region: "eu", Status: "open", Day: 3},
		{PK: "T#t1", SK: "O#2", Tenant: "t1", Region: "eu", Status: "paid", Day: 1},
	} {
		if _, err := orders.Save(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := customers.Save(t.Context(), mkShopCustomer{PK: "T#t1", SK: "C#ada", Tenant: "t1", Region: "eu", Status: "active", Day: 2, Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	return db, orders, customers
}

// An entity type's multi-attribute index keys are created in tag order,
// the entity attribute among them defined as a string; a projection that
// leaves the entity attribute out of an index not keyed by it is refused
// (DynamoDB would refuse the entity filter of every read there).
func TestEntityMultiAttrIndexCreateTable(t *testing.T) {
	in := mustInput[mkShopOrder](t, WithProjection("ByTenantKind", types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}))
	ks := map[string]string{}
	for _, g := range in.GlobalSecondaryIndexes {
		var parts []string
		for _, k := range g.KeySchema {
			parts = append(parts, string(k.KeyType)+" "+aws.ToString(k.AttributeName))
		}
		ks[aws.ToString(g.IndexName)] = strings.Join(parts, ", ") + " " + string(g.Projection.ProjectionType)
	}
	want := map[string]string{
		"ByTenantKind": "HASH tenant, HASH kind, RANGE status, RANGE sk KEYS_ONLY",
		"ByTenantDay":  "HASH tenant, HASH region, RANGE day ALL",
	}
	if !reflect.DeepEqual(ks, want) {
		t.Errorf("indexes = %v, want %v", ks, want)
	}
	var defs []string
	for _, d := range in.AttributeDefinitions {
		defs = append(defs, aws.ToString(d.AttributeName)+":"+string(d.AttributeType))
	}
	slices.Sort(defs)
	if w := []string{"day:N", "kind:S", "pk:S", "region:S", "sk:S", "status:S", "tenant:S"}; !slices.Equal(defs, w) {
		t.Errorf("attribute definitions = %v, want %v", defs, w)
	}
	tb := newTestTable[mkShopOrder](t, &fakeDB{noStore: true}, "Shop")
	for _, p := range []types.Projection{{ProjectionType: types.ProjectionTypeKeysOnly}, {ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"n"}}} {
		_, err := tb.CreateTableInput(WithProjection("ByTenantDay", p))
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), `leaves out the entity attribute "kind"`) {
			t.Errorf("ByTenantDay %s: %v; want refused naming kind", p.ProjectionType, err)
		}
	}
	if _, err := tb.CreateTableInput(WithProjection("ByTenantDay", types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"kind"}})); err != nil {
		t.Errorf("ByTenantDay INCLUDE kind: %v", err)
	}
}

// Every write of an entity type checks each attribute of a multi-attribute
// index key before sending; the entity attribute, stamped by the write,
// needs no value from the caller.
func TestEntityMultiAttrIndexKeysCheckedOnWrite(t *testing.T) {
	db, orders, _ := mkShop(t)
	ctx := t.Context()
	if it := db.item("Shop", map[string]types.AttributeValue{"pk": str("T#t1"), "sk": str("O#1")}); !av.Equal(it["kind"], str("order")) {
		t.Fatalf("stored kind %v; want order", it["kind"])
	}
	bad := mkShopOrder{PK: "T#t1", SK: "O#9", Tenant: "t1", Region: "eu"} // status empty
	writes := func() int {
		return db.count("PutItem") + db.count("UpdateItem") + db.count("TransactWriteItems") + db.count("BatchWriteItem")
	}
	sent := writes()
	for name, call := range map[string]func() error{
		"Save": func() error { _, err := orders.Save(ctx, bad); return err },
		"Update": func() error {
			_, err := orders.Update(ctx, mkShopOrder{PK: "T#t1", SK: "O#1"}, func(o mkShopOrder) (mkShopOrder, error) { o.Status = ""; return o, nil })
			return err
		},
		"WriteTx":   func() error { return orders.Mapper().WriteTx(ctx, []TxOp{orders.TxSave(bad)}) },
		"BatchSave": func() error { return orders.BatchSave(ctx, []mkShopOrder{bad}, WithSaveBehavior(SaveClobber)) },
		"Transact": func() error {
			return orders.Mapper().Transact(ctx, func(tx *Tx) error { _, err := orders.In(tx).Save(bad); return err })
		},
	} {
		if err := call(); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), `index "ByTenantKind" range key status`) {
			t.Errorf("%s: %v; want ErrInvalidInput naming status of ByTenantKind", name, err)
		}
	}
	if _, err := orders.Save(ctx, mkShopOrder{PK: "T#t1", SK: "O#9", Tenant: "", Region: "eu", Status: "open"}); !errors.Is(err, ErrInvalidInput) ||
		!strings.Contains(err.Error(), "hash key tenant") {
		t.Errorf("Save with tenant empty: %v; want ErrInvalidInput naming tenant", err)
	}
	if got := writes(); got != sent {
		t.Errorf("%d writes sent for refused writes", got-sent)
	}
}

// A Query of an entity type through an index keyed by its entity attribute
// reads its own items by the key condition (DynamoDB refuses a filter on a
// key attribute): the condition must fix the attribute to the entity's
// name, or the Query is refused before sending, naming the fix. Through
// an index not keyed by it, the entity filter is sent as for the table.
// Entities reads the items of every member through either.
func TestEntityMultiAttrIndexQuery(t *testing.T) {
	db, orders, customers := mkShop(t)
	ctx := t.Context()
	k, v := expression.Key, expression.Value
	tenant := k("tenant").Equal(v("t1"))
	items, _, err := orders.QueryPage(ctx, tenant.And(k("kind").Equal(v("order"))), Index("ByTenantKind"))
	if err != nil || len(items) != 2 || items[0].SK != "O#1" || items[1].SK != "O#2" {
		t.Fatalf("orders by ByTenantKind = %+v, %v; want O#1 O#2", items, err)
	}
	if q := db.queries(); q[len(q)-1].FilterExpression != nil {
		t.Errorf("sent the filter %q on a key attribute of the index", aws.ToString(q[len(q)-1].FilterExpression))
	}
	sent := len(db.queries())
	for _, tc := range []struct {
		kc   expression.KeyConditionBuilder
		want string
	}{
		{tenant.And(k("kind").Equal(v("customer"))), `selects entity "customer"`},
		{tenant, `does not fix the partition attribute "kind"`}, // the left-to-right rule's own check
	} {
		_, _, err := orders.QueryPage(ctx, tc.kc, Index("ByTenantKind"))
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("QueryPage: %v; want ErrInvalidInput saying %s", err, tc.want)
		}
	}
	if len(db.queries()) != sent {
		t.Errorf("a refused query was sent")
	}
	byDay := tenant.And(k("region").Equal(v("eu")))
	items, _, err = orders.QueryPage(ctx, byDay, Index("ByTenantDay"))
	if err != nil || len(items) != 2 || items[0].SK != "O#2" || items[1].SK != "O#1" {
		t.Errorf("orders by ByTenantDay = %+v, %v; want O#2 O#1 (by day), no customer", items, err)
	}
	cs, _, err := customers.QueryPage(ctx, tenant.And(k("kind").Equal(v("customer"))).And(k("status").Equal(v("active"))), Index("ByTenantKind"))
	if err != nil || len(cs) != 1 || cs[0].Name != "Ada" {
		t.Errorf("customers by ByTenantKind = %+v, %v; want Ada", cs, err)
	}
	var scanned []string
	for o, err := range orders.Scan(ctx, Index("ByTenantKind")) {
		if err != nil {
			t.Fatal(err)
		}
		scanned = append(scanned, o.SK)
	}
	if slices.Sort(scanned); strings.Join(scanned, " ") != "O#1 O#2" {
		t.Errorf("Scan of ByTenantKind = %v; want the orders only", scanned)
	}
	shop, err := NewEntities(Member(orders), Member(customers))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for x, err := range shop.Query(ctx, byDay, Index("ByTenantDay")) {
		if err != nil {
			t.Fatal(err)
		}
		switch x := x.(type) {
		case mkShopOrder:
			got = append(got, "order "+x.SK)
		case mkShopCustomer:
			got = append(got, "customer "+x.Name)
		default:
			t.Errorf("yielded %T", x)
		}
	}
	if w := "order O#2|customer Ada|order O#1"; strings.Join(got, "|") != w {
		t.Errorf("Entities.Query = %q; want %q", strings.Join(got, "|"), w)
	}
}

// mkKindSorted's entity attribute is the first sort attribute of ByTenant:
// a Query that leaves it open, or gives it a range, cannot keep to the
// type's items and is refused before sending; fixing it lets the next
// sort attribute take a range.
type mkKindSorted struct {
	PK     string `dynamo:"pk,hash"`
	Tenant string `dynamo:"tenant" index:"ByTenant,hash"`
	Kind   string `dynamo:"kind,entity=order" index:"ByTenant,range,1"`
	Day    int    `dynamo:"day" index:"ByTenant,range,2"`
}

func TestEntityAsSortKeyAttributeMustBeFixed(t *testing.T) {
	db := &fakeDB{}
	tb := newTestTable[mkKindSorted](t, db, "Sorted")
	if err := tb.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, o := range []mkKindSorted{{PK: "1", Tenant: "t1", Day: 1}, {PK: "2", Tenant: "t1", Day: 5}} {
		if _, err := tb.Save(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	k, v := expression.Key, expression.Value
	tenant := k("tenant").Equal(v("t1"))
	for _, kc := range []expression.KeyConditionBuilder{tenant, tenant.And(k("kind").BeginsWith("o"))} {
		if _, _, err := tb.QueryPage(t.Context(), kc, Index("ByTenant")); !errors.Is(err, ErrInvalidInput) ||
			!strings.Contains(err.Error(), `the entity attribute "kind" is a key of the index`) {
			t.Errorf("QueryPage: %v; want refused naming kind", err)
		}
	}
	if n := len(db.queries()); n != 0 {
		t.Errorf("%d queries sent; want none", n)
	}
	items, _, err := tb.QueryPage(t.Context(), tenant.And(k("kind").Equal(v("order"))).And(k("day").GreaterThan(v(2))), Index("ByTenant"))
	if err != nil || len(items) != 1 || items[0].PK != "2" {
		t.Errorf("QueryPage = %+v, %v; want item 2", items, err)
	}
}
