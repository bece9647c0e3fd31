package dynamo

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/tabledef"
)

// Types for the table-creation tests.

type ctHashOnly struct {
	ID   string `dynamo:"id,hash"`
	Name string `dynamo:"name"`
}

type ctComposite struct {
	User string `dynamo:"user,hash"`
	At   int64  `dynamo:"at,range"`
}

// ctMovie has a composite key, two global indexes (one sharing a key with
// the table), a local index, a ttl and a version.
type ctMovie struct {
	Studio  string    `dynamo:"studio,hash"`
	Title   string    `dynamo:"title,range" index:"ByTitle,hash"`
	Year    int       `dynamo:"year" index:"ByTitle,range ByYear,hash" localIndex:"StudioYear,range"`
	Rating  float64   `dynamo:"rating,omitempty" index:"ByYear,range"`
	Expires time.Time `dynamo:"expires,ttl,unixtime"`
	Plot    string    `dynamo:"plot"`
	Version int64     `dynamo:"v,version"`
}

type ctID string

// ctNumKey encodes as a number, with a value receiver.
type ctNumKey struct{ n int }

func (k ctNumKey) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return &types.AttributeValueMemberN{Value: strconv.Itoa(k.n)}, nil
}

// ctBinKey encodes as binary, with a pointer receiver.
type ctBinKey struct{ b []byte }

func (k *ctBinKey) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return &types.AttributeValueMemberB{Value: append([]byte{0}, k.b...)}, nil
}

// ctOpaqueKey encodes its zero value as NULL: its key type cannot be told.
type ctOpaqueKey struct{ s *string }

func (k ctOpaqueKey) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	if k.s == nil {
		return &types.AttributeValueMemberNULL{Value: true}, nil
	}
	return &types.AttributeValueMemberS{Value: *k.s}, nil
}

type ctKeyTypes struct {
	S    string     `dynamo:"s,hash"`
	N    uint16     `dynamo:"n,range"`
	F    float32    `index:"F-index,hash"`
	B    []byte     `index:"B-index,hash"`
	NS   int64      `dynamo:"ns,string" index:"NS-index,hash"`
	T    time.Time  `index:"T-index,hash"`
	TU   *time.Time `dynamo:",unixtime" index:"TU-index,hash"`
	P    *string    `index:"P-index,hash"`
	PN   *int8      `index:"PN-index,hash"`
	ID   ctID       `index:"ID-index,hash"`
	Num  ctNumKey   `index:"Num-index,hash"`
	Bin  *ctBinKey  `index:"Bin-index,hash"`
	Skip int        // not a key: not defined
}

type ctOpaque struct {
	ID  string      `dynamo:"id,hash"`
	Key ctOpaqueKey `dynamo:"key" index:"ByKey,hash"`
}

func ks(hash, rng string) []types.KeySchemaElement {
	out := []types.KeySchemaElement{{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash}}
	if rng != "" {
		out = append(out, types.KeySchemaElement{AttributeName: aws.String(rng), KeyType: types.KeyTypeRange})
	}
	return out
}

func defs(nameTypes ...string) []types.AttributeDefinition {
	var out []types.AttributeDefinition
	for _, nt := range nameTypes {
		name, typ, _ := strings.Cut(nt, ":")
		out = append(out, types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: types.ScalarAttributeType(typ)})
	}
	return out
}

var projAll = &types.Projection{ProjectionType: types.ProjectionTypeAll}

func newTestTable[T any](t *testing.T, c Client, name string) *Table[T] {
	t.Helper()
	tb, err := NewTable[T](NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func mustInput[T any](t *testing.T, opts ...TableSpecOption) *dynamodb.CreateTableInput {
	t.Helper()
	in, err := newTestTable[T](t, &fakeDB{noStore: true}, "T").CreateTableInput(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// createdTable returns a Table of T on a new table of DynamoDB Local made
// from T's tags (CreateTableInput), deleted when the test ends.
func createdTable[T any](t *testing.T, c *dynamodb.Client) *Table[T] {
	t.Helper()
	return newTestTable[T](t, c, dynamotest.CreateTable(t, c, mustInput[T](t)))
}

// itemWrites returns, by name, a write of one item through each call that
// writes the whole item it is given: Save, Save with SavePut, BatchSave
// (with SaveClobber, as batches take versioned items) and WriteTx of a
// TxSave. A test adds the calls of its own (an Update, say).
func itemWrites[T any](ctx context.Context, tb *Table[T]) map[string]func(T) error {
	return map[string]func(T) error{
		"Save":      func(it T) error { _, err := tb.Save(ctx, it); return err },
		"SavePut":   func(it T) error { _, err := tb.Save(ctx, it, WithSaveBehavior(SavePut)); return err },
		"BatchSave": func(it T) error { return tb.BatchSave(ctx, []T{it}, WithSaveBehavior(SaveClobber)) },
		"TxSave":    func(it T) error { return tb.Mapper().WriteTx(ctx, []TxOp{tb.TxSave(it)}) },
	}
}

func checkInput(t *testing.T, got, want *dynamodb.CreateTableInput) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CreateTableInput:\n got %s\nwant %s", dumpInput(got), dumpInput(want))
	}
}

// dumpInput renders the parts of a request the tests look at.
func dumpInput(in *dynamodb.CreateTableInput) string {
	var b strings.Builder
	b.WriteString("table=" + aws.ToString(in.TableName) + " billing=" + string(in.BillingMode))
	if p := in.ProvisionedThroughput; p != nil {
		b.WriteString(" capacity=" + strconv.FormatInt(aws.ToInt64(p.ReadCapacityUnits), 10) + "/" + strconv.FormatInt(aws.ToInt64(p.WriteCapacityUnits), 10))
	}
	b.WriteString(" key=[" + tabledef.FormatKeySchema(in.KeySchema, tabledef.AttrTypes(in.AttributeDefinitions)) + "] defs=[")
	for _, d := range in.AttributeDefinitions {
		b.WriteString(aws.ToString(d.AttributeName) + ":" + string(d.AttributeType) + " ")
	}
	b.WriteString("]")
	for _, g := range in.GlobalSecondaryIndexes {
		b.WriteString(" gsi " + aws.ToString(g.IndexName) + "=[" + tabledef.FormatKeySchema(g.KeySchema, tabledef.AttrTypes(in.AttributeDefinitions)) + "]")
		if g.Projection != nil {
			b.WriteString(" " + string(g.Projection.ProjectionType) + strings.Join(g.Projection.NonKeyAttributes, ","))
		}
		if g.ProvisionedThroughput != nil {
			b.WriteString(" provisioned")
		}
	}
	for _, l := range in.LocalSecondaryIndexes {
		b.WriteString(" lsi " + aws.ToString(l.IndexName) + "=[" + tabledef.FormatKeySchema(l.KeySchema, tabledef.AttrTypes(in.AttributeDefinitions)) + "]")
		if l.Projection != nil {
			b.WriteString(" " + string(l.Projection.ProjectionType))
		}
	}
	return b.String()
}

func TestCreateTableInputHashOnly(t *testing.T) {
	checkInput(t, mustInput[ctHashOnly](t), &dynamodb.CreateTableInput{
		TableName:            aws.String("T"),
		BillingMode:          types.BillingModePayPerRequest,
		KeySchema:            ks("id", ""),
		AttributeDefinitions: defs("id:S"),
	})
}

func TestCreateTableInputHashRange(t *testing.T) {
	checkInput(t, mustInput[*ctComposite](t), &dynamodb.CreateTableInput{
		TableName:            aws.String("T"),
		BillingMode:          types.BillingModePayPerRequest,
		KeySchema:            ks("user", "at"),
		AttributeDefinitions: defs("user:S", "at:N"),
	})
}

// Global indexes with hash and range keys, one sharing an attribute with
// the table's key, and a local index: each key attribute defined once.
func TestCreateTableInputIndexes(t *testing.T) {
	checkInput(t, mustInput[ctMovie](t), &dynamodb.CreateTableInput{
		TableName:            aws.String("T"),
		BillingMode:          types.BillingModePayPerRequest,
		KeySchema:            ks("studio", "title"),
		AttributeDefinitions: defs("studio:S", "title:S", "year:N", "rating:N"),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			{IndexName: aws.String("ByTitle"), KeySchema: ks("title", "year"), Projection: projAll},
			{IndexName: aws.String("ByYear"), KeySchema: ks("year", "rating"), Projection: projAll},
		},
		LocalSecondaryIndexes: []types.LocalSecondaryIndex{
			{IndexName: aws.String("StudioYear"), KeySchema: ks("studio", "year"), Projection: projAll},
		},
	})
}

func TestCreateTableInputGSIHashOnly(t *testing.T) {
	type user struct {
		ID    string `dynamo:"id,hash"`
		Email string `dynamo:"email,omitempty" index:"ByEmail,hash"`
	}
	checkInput(t, mustInput[user](t), &dynamodb.CreateTableInput{
		TableName:            aws.String("T"),
		BillingMode:          types.BillingModePayPerRequest,
		KeySchema:            ks("id", ""),
		AttributeDefinitions: defs("id:S", "email:S"),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			{IndexName: aws.String("ByEmail"), KeySchema: ks("email", ""), Projection: projAll},
		},
	})
}

// The guregu/dynamo documentation's example struct, with "partition" and
// "sort" for hash and range.
func TestCreateTableInputGureguExample(t *testing.T) {
	type userAction struct {
		UserID string    `dynamo:"ID,hash" index:"Seq-ID-index,sort"`
		Time   time.Time `dynamo:",range"`
		Seq    int64     `localIndex:"ID-Seq-index,range" index:"Seq-ID-index,partition"`
		UUID   string    `index:"UUID-index,hash"`
	}
	checkInput(t, mustInput[userAction](t), &dynamodb.CreateTableInput{
		TableName:            aws.String("T"),
		BillingMode:          types.BillingModePayPerRequest,
		KeySchema:            ks("ID", "Time"),
		AttributeDefinitions: defs("ID:S", "Time:S", "Seq:N", "UUID:S"),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			{IndexName: aws.String("Seq-ID-index"), KeySchema: ks("Seq", "ID"), Projection: projAll},
			{IndexName: aws.String("UUID-index"), KeySchema: ks("UUID", ""), Projection: projAll},
		},
		LocalSecondaryIndexes: []types.LocalSecondaryIndex{
			{IndexName: aws.String("ID-Seq-index"), KeySchema: ks("ID", "Seq"), Projection: projAll},
		},
	})
}

func TestCreateTableInputProvisionedAndOptions(t *testing.T) {
	tags := map[string]string{"team": "books", "env": "test"}
	proj := types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"plot"}}
	in := mustInput[ctMovie](t,
		WithProvisioned(5, 2),
		WithProjection("ByYear", proj),
		WithProjection("StudioYear", types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}),
		WithStream(types.StreamViewTypeNewAndOldImages),
		WithTags(tags),
		WithTags(map[string]string{"owner": "me"}),
	)
	tp := func() *types.ProvisionedThroughput {
		return &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(5), WriteCapacityUnits: aws.Int64(2)}
	}
	checkInput(t, in, &dynamodb.CreateTableInput{
		TableName:             aws.String("T"),
		BillingMode:           types.BillingModeProvisioned,
		ProvisionedThroughput: tp(),
		KeySchema:             ks("studio", "title"),
		AttributeDefinitions:  defs("studio:S", "title:S", "year:N", "rating:N"),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			{IndexName: aws.String("ByTitle"), KeySchema: ks("title", "year"), Projection: projAll, ProvisionedThroughput: tp()},
			{IndexName: aws.String("ByYear"), KeySchema: ks("year", "rating"), ProvisionedThroughput: tp(),
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"plot"}}},
		},
		LocalSecondaryIndexes: []types.LocalSecondaryIndex{
			{IndexName: aws.String("StudioYear"), KeySchema: ks("studio", "year"),
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}},
		},
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
		Tags: []types.Tag{ // sorted by key
			{Key: aws.String("env"), Value: aws.String("test")},
			{Key: aws.String("owner"), Value: aws.String("me")},
			{Key: aws.String("team"), Value: aws.String("books")},
		},
	})
	// The caller's values are not shared with the request.
	in.GlobalSecondaryIndexes[1].Projection.NonKeyAttributes[0] = "changed"
	if proj.NonKeyAttributes[0] != "plot" {
		t.Error("the request shares the caller's NonKeyAttributes")
	}
	tags["team"] = "changed"
	if again := mustInput[ctMovie](t, WithTags(map[string]string{"a": "b"})); len(again.Tags) != 1 {
		t.Errorf("tags leak between calls: %v", again.Tags)
	}
}

// Options are applied at each call: one option value may be reused, and a
// change to the caller's map after WithTags does not reach the request.
func TestCreateTableOptionsCopied(t *testing.T) {
	tags := map[string]string{"k": "v"}
	opt := WithTags(tags)
	tags["k"] = "changed"
	for range 2 {
		in := mustInput[ctHashOnly](t, opt)
		if len(in.Tags) != 1 || aws.ToString(in.Tags[0].Value) != "v" {
			t.Errorf("Tags = %v", in.Tags)
		}
	}
}

func TestCreateTableInputKeyTypes(t *testing.T) {
	in := mustInput[ctKeyTypes](t)
	got := map[string]types.ScalarAttributeType{}
	for _, d := range in.AttributeDefinitions {
		name := aws.ToString(d.AttributeName)
		if _, dup := got[name]; dup {
			t.Errorf("attribute %s defined twice", name)
		}
		got[name] = d.AttributeType
	}
	want := map[string]types.ScalarAttributeType{
		"s": "S", "n": "N", "F": "N", "B": "B", "ns": "S", "T": "S", "TU": "N",
		"P": "S", "PN": "N", "ID": "S", "Num": "N", "Bin": "B",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("attribute types = %v\nwant %v", got, want)
	}
}

// The mapper's encoder decides how time.Time is stored, so it decides the
// key type too.
func TestCreateTableInputTimeFollowsEncoder(t *testing.T) {
	type event struct {
		At time.Time `dynamo:"at,hash"`
	}
	m := NewMapper(&fakeDB{noStore: true}, WithEncoderOptions(func(o *attributevalue.EncoderOptions) {
		o.EncodeTime = func(tm time.Time) (types.AttributeValue, error) {
			return &types.AttributeValueMemberN{Value: strconv.FormatInt(tm.UnixMilli(), 10)}, nil
		}
	}))
	tb, err := NewTable[event](m, "events")
	if err != nil {
		t.Fatal(err)
	}
	in, err := tb.CreateTableInput()
	if err != nil {
		t.Fatal(err)
	}
	if got := in.AttributeDefinitions[0].AttributeType; got != types.ScalarAttributeTypeN {
		t.Errorf("time key with EncodeTime to N: type %s", got)
	}
}

func TestCreateTableInputOpaqueKey(t *testing.T) {
	tb := newTestTable[ctOpaque](t, &fakeDB{noStore: true}, "T")
	_, err := tb.CreateTableInput()
	if !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("err = %v, want ErrInvalidInput", err)
	}
	for _, part := range []string{`"T"`, `"key"`, "ctOpaque.Key", "ctOpaqueKey", "AttributeValueMemberNULL", `WithKeyType("key"`} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not mention %s", err, part)
		}
	}
	in, err := tb.CreateTableInput(WithKeyType("key", types.ScalarAttributeTypeS))
	if err != nil {
		t.Fatal(err)
	}
	if got := in.AttributeDefinitions[1]; aws.ToString(got.AttributeName) != "key" || got.AttributeType != "S" {
		t.Errorf("definition = %s:%s", aws.ToString(got.AttributeName), got.AttributeType)
	}
}

func TestCreateTableInputBadOptions(t *testing.T) {
	tests := []struct {
		opt  TableSpecOption
		want string
	}{
		{WithProvisioned(0, 1), "WithProvisioned(0, 1)"},
		{WithProvisioned(1, -1), "at least 1"},
		{WithProjection("Nope", types.Projection{ProjectionType: types.ProjectionTypeAll}), "ByTitle, ByYear, StudioYear"},
		{WithProjection("ByYear", types.Projection{}), "use ALL, KEYS_ONLY or INCLUDE"},
		{WithProjection("ByYear", types.Projection{ProjectionType: types.ProjectionTypeInclude}), "needs NonKeyAttributes"},
		{WithProjection("ByYear", types.Projection{ProjectionType: types.ProjectionTypeAll, NonKeyAttributes: []string{"x"}}), "go with ProjectionType INCLUDE"},
		{WithStream("EVERYTHING"), "WithStream(\"EVERYTHING\")"},
		{WithTags(map[string]string{"": "x"}), "empty key"},
		{WithKeyType("plot", types.ScalarAttributeTypeS), "not a key attribute"},
		{WithKeyType("nope", types.ScalarAttributeTypeS), "not a key attribute"},
		{WithKeyType("year", "SS"), "key types are S, N or B"},
	}
	for _, tc := range tests {
		stub := &fakeDB{noStore: true}
		tb := newTestTable[ctMovie](t, stub, "Movies")
		_, err := tb.CreateTableInput(tc.opt)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"Movies"`) {
			t.Errorf("err = %v, want ErrInvalidInput naming the table and mentioning %q", err, tc.want)
		}
		if err := tb.CreateTable(t.Context(), tc.opt); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("CreateTable err = %v, want ErrInvalidInput", err)
		}
		if len(stub.ops()) != 0 {
			t.Errorf("requests sent for a bad option: %v", stub.ops())
		}
	}
	_, err := newTestTable[ctHashOnly](t, &fakeDB{noStore: true}, "T").CreateTableInput(WithProjection("X", types.Projection{}))
	if err == nil || !strings.Contains(err.Error(), "no `index` or `localIndex` tags") {
		t.Errorf("projection on a type without indexes: %v", err)
	}
}

// Bad index tags are schema errors naming the struct, the field and the fix.
func TestIndexTagSchemaErrors(t *testing.T) {
	type noHash struct {
		ID string `dynamo:"id,hash"`
		A  string `index:"ByA,range"`
	}
	type twoHash struct {
		ID string `dynamo:"id,hash"`
		A  string `index:"ByA,hash"`
		B  string `index:"ByA,hash"`
	}
	type twoRange struct {
		ID string `dynamo:"id,hash"`
		A  string `index:"ByA,hash"`
		B  string `index:"ByA,range"`
		C  int    `index:"ByA,range"`
	}
	type lsiHash struct {
		ID string `dynamo:"id,hash"`
		R  string `dynamo:"r,range"`
		A  string `localIndex:"ByA,hash"`
	}
	type lsiNoRange struct {
		ID string `dynamo:"id,hash"`
		A  string `localIndex:"ByA,range"`
	}
	type lsiTableRange struct {
		ID string `dynamo:"id,hash"`
		R  string `dynamo:"r,range" localIndex:"ByR,range"`
	}
	type boolKey struct {
		ID string `dynamo:"id,hash"`
		A  bool   `index:"ByA,hash"`
	}
	type structKey struct {
		ID string          `dynamo:"id,hash"`
		A  struct{ X int } `index:"ByA,hash"`
	}
	type globalAndLocal struct {
		ID string `dynamo:"id,hash"`
		R  string `dynamo:"r,range"`
		A  string `index:"ByA,hash"`
		B  string `localIndex:"ByA,range"`
	}
	type badName struct {
		ID string `dynamo:"id,hash"`
		A  string `index:"ByA!,hash"`
	}
	type shortName struct {
		ID string `dynamo:"id,hash"`
		A  string `localIndex:"ab,range"`
	}
	type noRole struct {
		ID string `dynamo:"id,hash"`
		A  string `index:"ByA"`
	}
	type skipped struct {
		ID string `dynamo:"id,hash"`
		A  string `dynamo:"-" index:"ByA,hash"`
	}
	type Embedded struct{ X string }
	type embeddedIdx struct {
		Embedded `index:"ByX,hash"`
		ID       string `dynamo:"id,hash"`
	}
	tests := []struct {
		typ   reflect.Type
		field string
		want  string
	}{
		{reflect.TypeFor[noHash](), "A", `index "ByA" has a range key but no hash key: tag the attribute that partitions it`},
		{reflect.TypeFor[twoHash](), "B", `second hash key of index "ByA" (the first is A)`},
		{reflect.TypeFor[twoRange](), "C", `second range key of index "ByA" (the first is B)`},
		{reflect.TypeFor[lsiHash](), "A", "a local index shares the table's hash key (ID)"},
		{reflect.TypeFor[lsiNoRange](), "A", `local index "ByA" on a table without a range key`},
		{reflect.TypeFor[lsiTableRange](), "R", "it would repeat the table"},
		{reflect.TypeFor[boolKey](), "A", "hash key of index \"ByA\": key of type bool"},
		{reflect.TypeFor[structKey](), "A", "keys must be strings, numbers or []byte"},
		{reflect.TypeFor[globalAndLocal](), "B", "both global (`index` tag) and local (`localIndex` tag)"},
		{reflect.TypeFor[badName](), "A", `contains "!"`},
		{reflect.TypeFor[shortName](), "A", "`localIndex` tag: index entry \"ab,range\""},
		{reflect.TypeFor[noRole](), "A", `has no key role: write "ByA,hash" or "ByA,range"`},
		{reflect.TypeFor[skipped](), "A", "leaves it out of the item"},
		{reflect.TypeFor[embeddedIdx](), "Embedded", "index tags on an embedded struct"},
	}
	for _, tc := range tests {
		_, err := schemaFor(tc.typ)
		var se *SchemaError
		if !errors.As(err, &se) || !errors.Is(err, ErrInvalidSchema) {
			t.Errorf("%s: err = %v, want a *SchemaError", tc.typ, err)
			continue
		}
		if se.Struct != tc.typ.String() || se.Field != tc.field || !strings.Contains(se.Reason, tc.want) {
			t.Errorf("%s: got %q (struct %s, field %s), want field %s and %q", tc.typ, err, se.Struct, se.Field, tc.field, tc.want)
		}
	}
}

func TestIndexesInSchema(t *testing.T) {
	s, err := schemaFor(reflect.TypeFor[ctMovie]())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range s.Indexes {
		r := "-"
		if len(x.Range) == 1 {
			r = s.Fields[x.Range[0]].Name
		}
		got = append(got, x.Name+":"+strconv.FormatBool(x.Local)+":"+s.Fields[x.Hash[0]].Name+":"+r)
	}
	want := "ByTitle:false:title:year ByYear:false:year:rating StudioYear:true:studio:year"
	if strings.Join(got, " ") != want {
		t.Errorf("indexes = %v, want %s", got, want)
	}
}

// describing answers DescribeTable call n with the description fn
// returns for n.
func describing(fn func(n int) (*types.TableDescription, error)) func(int, *dynamodb.DescribeTableInput) (*dynamodb.DescribeTableOutput, error) {
	return func(n int, _ *dynamodb.DescribeTableInput) (*dynamodb.DescribeTableOutput, error) {
		d, err := fn(n)
		if err != nil {
			return nil, err
		}
		return &dynamodb.DescribeTableOutput{Table: d}, nil
	}
}

var (
	errNotFound = &types.ResourceNotFoundException{Message: aws.String("Requested resource not found")}
	errInUse    = &types.ResourceInUseException{Message: aws.String("Table already exists")}
)

// describeAs returns the description DynamoDB would give of the table in.
func describeAs(in *dynamodb.CreateTableInput, status types.TableStatus, gsiStatus types.IndexStatus) *types.TableDescription {
	d := &types.TableDescription{TableName: in.TableName, TableStatus: status, KeySchema: in.KeySchema, AttributeDefinitions: in.AttributeDefinitions}
	for _, g := range in.GlobalSecondaryIndexes {
		d.GlobalSecondaryIndexes = append(d.GlobalSecondaryIndexes, types.GlobalSecondaryIndexDescription{IndexName: g.IndexName, KeySchema: g.KeySchema, IndexStatus: gsiStatus})
	}
	for _, l := range in.LocalSecondaryIndexes {
		d.LocalSecondaryIndexes = append(d.LocalSecondaryIndexes, types.LocalSecondaryIndexDescription{IndexName: l.IndexName, KeySchema: l.KeySchema})
	}
	return d
}

// CreateTable sends CreateTableInput's request, polls until the table and
// its indexes are ACTIVE (not found yet, CREATING, index CREATING), then
// enables TTL on the ttl attribute.
func TestCreateTableWaitsThenEnablesTTL(t *testing.T) {
	stub := &fakeDB{noStore: true}
	tb := newTestTable[ctMovie](t, stub, "Movies")
	want, _ := tb.CreateTableInput()
	stub.onDescribe = describing(func(n int) (*types.TableDescription, error) {
		switch n {
		case 1:
			return nil, errNotFound // DescribeTable is eventually consistent
		case 2:
			return describeAs(want, types.TableStatusCreating, types.IndexStatusCreating), nil
		case 3:
			return describeAs(want, types.TableStatusActive, types.IndexStatusCreating), nil
		}
		return describeAs(want, types.TableStatusActive, types.IndexStatusActive), nil
	})
	if err := tb.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(stub.ops(), " "); got != "CreateTable DescribeTable DescribeTable DescribeTable DescribeTable UpdateTimeToLive" {
		t.Errorf("calls = %s", got)
	}
	checkInput(t, stub.sent("")[0].(*dynamodb.CreateTableInput), want)
	ttl := stub.sent("")[len(stub.sent(""))-1].(*dynamodb.UpdateTimeToLiveInput)
	if aws.ToString(ttl.TableName) != "Movies" || aws.ToString(ttl.TimeToLiveSpecification.AttributeName) != "expires" || !aws.ToBool(ttl.TimeToLiveSpecification.Enabled) {
		t.Errorf("UpdateTimeToLive = %+v %+v", ttl, ttl.TimeToLiveSpecification)
	}
}

func TestCreateTableWithoutTTL(t *testing.T) {
	stub := &fakeDB{noStore: true}
	if err := newTestTable[ctHashOnly](t, stub, "T").CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(stub.ops(), " "); got != "CreateTable DescribeTable" {
		t.Errorf("calls = %s", got)
	}
}

func TestCreateTableExists(t *testing.T) {
	stub := &fakeDB{noStore: true, onCreate: func(int, *dynamodb.CreateTableInput) (*dynamodb.CreateTableOutput, error) { return nil, errInUse }}
	tb := newTestTable[ctMovie](t, stub, "Movies")
	err := tb.CreateTable(t.Context())
	var inUse *types.ResourceInUseException
	if !errors.Is(err, ErrTableExists) || !errors.As(err, &inUse) {
		t.Fatalf("err = %v, want ErrTableExists wrapping the SDK's error", err)
	}
	if !strings.Contains(err.Error(), `"Movies"`) || !strings.Contains(err.Error(), "IfNotExists") {
		t.Errorf("error %q does not name the table and the fix", err)
	}
	if got := strings.Join(stub.ops(), " "); got != "CreateTable" {
		t.Errorf("calls = %s", got)
	}
}

// IfNotExists accepts an existing table whose keys and indexes match, once
// it is ACTIVE, and leaves its TTL alone.
func TestCreateTableIfNotExists(t *testing.T) {
	stub := &fakeDB{noStore: true, onCreate: func(int, *dynamodb.CreateTableInput) (*dynamodb.CreateTableOutput, error) { return nil, errInUse }}
	tb := newTestTable[ctMovie](t, stub, "Movies")
	want, _ := tb.CreateTableInput()
	stub.onDescribe = describing(func(n int) (*types.TableDescription, error) {
		if n == 1 {
			return describeAs(want, types.TableStatusCreating, types.IndexStatusCreating), nil
		}
		d := describeAs(want, types.TableStatusActive, types.IndexStatusActive)
		// An index the tags do not declare is fine.
		d.GlobalSecondaryIndexes = append(d.GlobalSecondaryIndexes, types.GlobalSecondaryIndexDescription{IndexName: aws.String("Other"), IndexStatus: types.IndexStatusActive})
		return d, nil
	})
	if err := tb.CreateTable(t.Context(), IfNotExists()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(stub.ops(), " "); got != "CreateTable DescribeTable DescribeTable" {
		t.Errorf("calls = %s", got)
	}
}

func TestCreateTableIfNotExistsMismatch(t *testing.T) {
	want := mustInput[ctMovie](t)
	tests := []struct {
		name   string
		change func(d *types.TableDescription)
		msg    string
	}{
		{"other key", func(d *types.TableDescription) { d.KeySchema = ks("id", "") },
			`its key is HASH id () where the tags of dynamo.ctMovie say HASH studio (S), RANGE title (S)`},
		{"other key type", func(d *types.TableDescription) {
			d.AttributeDefinitions = defs("studio:S", "title:N", "year:N", "rating:N")
		},
			`its key is HASH studio (S), RANGE title (N) where`},
		{"missing index", func(d *types.TableDescription) { d.GlobalSecondaryIndexes = d.GlobalSecondaryIndexes[:1] },
			`global index ByYear is missing where the tags of dynamo.ctMovie say HASH year (N), RANGE rating (N)`},
		{"other index key", func(d *types.TableDescription) { d.LocalSecondaryIndexes[0].KeySchema = ks("studio", "rating") },
			`local index StudioYear is HASH studio (S), RANGE rating (N)`},
	}
	for _, tc := range tests {
		stub := &fakeDB{noStore: true, onCreate: func(int, *dynamodb.CreateTableInput) (*dynamodb.CreateTableOutput, error) { return nil, errInUse }}
		stub.onDescribe = describing(func(int) (*types.TableDescription, error) {
			d := describeAs(want, types.TableStatusActive, types.IndexStatusActive)
			tc.change(d)
			return d, nil
		})
		err := newTestTable[ctMovie](t, stub, "Movies").CreateTable(t.Context(), IfNotExists())
		if !errors.Is(err, ErrTableExists) || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), `"Movies"`) {
			t.Errorf("%s: err = %v, want ErrTableExists mentioning %q", tc.name, err, tc.msg)
		}
	}
}

func TestCreateTableIfNotExistsBeingDeleted(t *testing.T) {
	stub := &fakeDB{noStore: true, onCreate: func(int, *dynamodb.CreateTableInput) (*dynamodb.CreateTableOutput, error) { return nil, errInUse }}
	stub.onDescribe = describing(func(int) (*types.TableDescription, error) {
		return &types.TableDescription{TableStatus: types.TableStatusDeleting}, nil
	})
	err := newTestTable[ctHashOnly](t, stub, "T").CreateTable(t.Context(), IfNotExists())
	if err == nil || !strings.Contains(err.Error(), `table "T" has status DELETING`) {
		t.Errorf("err = %v", err)
	}
}

// ctx bounds the waiting: when it ends, CreateTable returns at once with an
// error naming the table and wrapping ctx's error.
func TestCreateTableContextEndsWhileWaiting(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stub := &fakeDB{noStore: true}
	stub.onDescribe = describing(func(n int) (*types.TableDescription, error) {
		if n == 2 {
			cancel()
		}
		return &types.TableDescription{TableStatus: types.TableStatusCreating}, nil
	})
	err := newTestTable[ctMovie](t, stub, "Movies").CreateTable(ctx)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), `table "Movies" is not ACTIVE (status CREATING)`) {
		t.Errorf("err = %v", err)
	}
	if strings.Contains(strings.Join(stub.ops(), " "), "UpdateTimeToLive") {
		t.Error("TTL enabled on a table that is not ACTIVE")
	}
}

func TestCreateTableErrors(t *testing.T) {
	boom := errors.New("boom")
	stub := &fakeDB{noStore: true, onCreate: func(int, *dynamodb.CreateTableInput) (*dynamodb.CreateTableOutput, error) { return nil, boom }}
	err := newTestTable[ctMovie](t, stub, "Movies").CreateTable(t.Context())
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), `CreateTable "Movies"`) {
		t.Errorf("create: %v", err)
	}

	stub = &fakeDB{noStore: true, onDescribe: describing(func(int) (*types.TableDescription, error) { return nil, boom })}
	err = newTestTable[ctMovie](t, stub, "Movies").CreateTable(t.Context())
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), `waiting for table "Movies"`) {
		t.Errorf("describe: %v", err)
	}

	stub = &fakeDB{noStore: true, onTTL: func(int, *dynamodb.UpdateTimeToLiveInput) (*dynamodb.UpdateTimeToLiveOutput, error) { return nil, boom }}
	err = newTestTable[ctMovie](t, stub, "Movies").CreateTable(t.Context())
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), `table "Movies" was created, but enabling TTL on attribute "expires" failed`) {
		t.Errorf("ttl: %v", err)
	}
}

func TestDeleteTable(t *testing.T) {
	stub := &fakeDB{noStore: true, onDescribe: describing(func(n int) (*types.TableDescription, error) {
		if n < 3 {
			return &types.TableDescription{TableStatus: types.TableStatusDeleting}, nil
		}
		return nil, errNotFound
	})}
	if err := newTestTable[ctMovie](t, stub, "Movies").DeleteTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(stub.ops(), " "); got != "DeleteTable DescribeTable DescribeTable DescribeTable" {
		t.Errorf("calls = %s", got)
	}
	if in := stub.sent("")[0].(*dynamodb.DeleteTableInput); aws.ToString(in.TableName) != "Movies" {
		t.Errorf("DeleteTable(%s)", aws.ToString(in.TableName))
	}
}

func TestDeleteTableMissing(t *testing.T) {
	stub := &fakeDB{noStore: true, onDropTable: func(int, *dynamodb.DeleteTableInput) (*dynamodb.DeleteTableOutput, error) { return nil, errNotFound }}
	err := newTestTable[ctMovie](t, stub, "Movies").DeleteTable(t.Context())
	var nf *types.ResourceNotFoundException
	if !errors.Is(err, ErrTableNotFound) || !errors.As(err, &nf) || !strings.Contains(err.Error(), `"Movies"`) {
		t.Errorf("err = %v", err)
	}
}

func TestDeleteTableContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stub := &fakeDB{noStore: true, onDescribe: describing(func(int) (*types.TableDescription, error) {
		cancel()
		return &types.TableDescription{TableStatus: types.TableStatusDeleting}, nil
	})}
	err := newTestTable[ctMovie](t, stub, "Movies").DeleteTable(ctx)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), `table "Movies" is being deleted but still exists`) {
		t.Errorf("err = %v", err)
	}
}
