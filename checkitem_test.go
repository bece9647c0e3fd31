package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
	avs "github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/schema"
)

// TestEncodedSetsDropDuplicatesByValue: checkEncoded drops the later
// duplicates of a string, number or binary set, at the top level and
// inside maps and lists, keeping the first of each in order; numbers are
// compared by value (1, 1.0 and 1E0 are one). Sets above the pairwise
// comparison's size are deduplicated alike, and validAV, the compiled
// encoder's check, refuses exactly the values checkEncoded would change.
func TestEncodedSetsDropDuplicatesByValue(t *testing.T) {
	tb, err := NewTable[Book](NewMapper(silentDB()), "Books")
	if err != nil {
		t.Fatal(err)
	}
	ns := func(v ...string) types.AttributeValue { return &types.AttributeValueMemberNS{Value: v} }
	ss := func(v ...string) types.AttributeValue { return &types.AttributeValueMemberSS{Value: v} }
	big := make([]string, 0, 41)
	bigWant := make([]string, 0, 40)
	for i := range 40 {
		big = append(big, fmt.Sprint(i))
		bigWant = append(bigWant, fmt.Sprint(i))
	}
	big = append(big[:20:20], append([]string{"7.0"}, big[20:]...)...)
	item := map[string]types.AttributeValue{
		"n":   ns("1", "2", "1.0", "1E0", "-0", "0"),
		"s":   ss("b", "a", "b"),
		"b":   &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2}, {1}}},
		"m":   &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"in": ss("x", "x")}},
		"l":   &types.AttributeValueMemberL{Value: []types.AttributeValue{ns("5", "05")}},
		"big": ns(big...),
		"ok":  ss("a", "b"),
	}
	want := map[string]types.AttributeValue{
		"n":   ns("1", "2", "-0"),
		"s":   ss("b", "a"),
		"b":   &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2}}},
		"m":   &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"in": ss("x")}},
		"l":   &types.AttributeValueMemberL{Value: []types.AttributeValue{ns("5")}},
		"big": ns(bigWant...),
		"ok":  ss("a", "b"),
	}
	for k, v := range item {
		if got := schema.ValidAV(v, 1); got != (k == "ok") {
			t.Errorf("validAV(%s) = %v, want %v", k, got, k == "ok")
		}
	}
	if err := tb.p.S.CheckEncoded("Books", item); err != nil {
		t.Fatal(err)
	}
	for k := range want {
		if !reflect.DeepEqual(item[k], want[k]) {
			t.Errorf("%s = %v, want %v", k, item[k], want[k])
		}
		if !schema.ValidAV(item[k], 1) {
			t.Errorf("validAV(%s) false after checkEncoded", k)
		}
	}
}

// TestEncodedItemRefusals: checkEncoded refuses, with ErrInvalidInput
// naming the field and the path inside it, what DynamoDB would refuse or
// the SDK would change: empty or non-UTF-8 names and map keys, strings
// that are not UTF-8, numbers DynamoDB cannot store, and more than 31 maps
// or lists inside one another (the item is level 1; 31 pass).
func TestEncodedItemRefusals(t *testing.T) {
	tb, err := NewTable[Book](NewMapper(silentDB()), "Books")
	if err != nil {
		t.Fatal(err)
	}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	m := func(k string, v types.AttributeValue) types.AttributeValue {
		return &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{k: v}}
	}
	l := func(v ...types.AttributeValue) types.AttributeValue { return &types.AttributeValueMemberL{Value: v} }
	nested := func(n int) types.AttributeValue {
		var v types.AttributeValue = s("x")
		for range n {
			v = l(v)
		}
		return v
	}
	for _, c := range []struct {
		name string
		item map[string]types.AttributeValue
		want []string // "" : accepted
	}{
		{"empty name", map[string]types.AttributeValue{"": s("x")}, []string{"empty attribute name"}},
		{"name not UTF-8", map[string]types.AttributeValue{"a\xff": s("x")}, []string{`"a\xff"`, "not valid UTF-8"}},
		{"string not UTF-8", map[string]types.AttributeValue{"title": l(s("ok"), m("k", s("\xfe")))},
			[]string{"Book.Title", `at [1]["k"]`, "not valid UTF-8"}},
		{"empty map key", map[string]types.AttributeValue{"title": m("a", m("", s("x")))}, []string{`at ["a"]`, "empty map key"}},
		{"map key not UTF-8", map[string]types.AttributeValue{"title": m("\xc3", s("x"))}, []string{"map key", "not valid UTF-8"}},
		{"set element not UTF-8", map[string]types.AttributeValue{"x": &types.AttributeValueMemberSS{Value: []string{"a", "\xff"}}},
			[]string{`attribute "x"`, "at [1]"}},
		{"number in a set", map[string]types.AttributeValue{"x": &types.AttributeValueMemberNS{Value: []string{"1", "1e200"}}},
			[]string{"at [1]", "38 significant digits"}},
		{"number", map[string]types.AttributeValue{"x": &types.AttributeValueMemberN{Value: "NaN"}}, []string{"38 significant digits"}},
		{"31 lists inside one another", map[string]types.AttributeValue{"x": nested(31)}, nil},
		{"32 lists inside one another", map[string]types.AttributeValue{"x": nested(32)}, []string{"deeper than DynamoDB's 32 levels"}},
	} {
		err := tb.p.S.CheckEncoded("Books", c.item)
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v, want it accepted", c.name, err)
			}
			continue
		}
		wantInvalid(t, c.name, err, append(c.want, `table "Books"`)...)
	}
}

// TestCondValuesCheckedAsItems: the names and values of an If condition
// are checked as an item's are — names valid UTF-8, values' strings and
// numbers, their depth, named by their path — and nothing in them is
// changed (a set with duplicates, which DynamoDB refuses in an expression
// value, is refused and left as it is, not deduplicated).
func TestCondValuesCheckedAsItems(t *testing.T) {
	dup := &types.AttributeValueMemberSS{Value: []string{"a", "a"}}
	if err := schema.CheckCondValues(map[string]string{"#n": "name"}, map[string]types.AttributeValue{":v": dup}); err == nil || !strings.Contains(err.Error(), "element twice") || len(dup.Value) != 2 {
		t.Errorf("a set with duplicates: %v, %v; want it refused and left unchanged", err, dup.Value)
	}
	if err := schema.CheckCondValues(map[string]string{"#n": "n\xffame"}, nil); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("name not UTF-8: %v", err)
	}
	bad := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"a": &types.AttributeValueMemberL{
		Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "ok"}, &types.AttributeValueMemberN{Value: "1e-131"}}}}}
	err := schema.CheckCondValues(nil, map[string]types.AttributeValue{":v": bad})
	if err == nil || !strings.HasPrefix(err.Error(), `a value at ["a"][1] `) {
		t.Errorf("bad number deep in a value: %v, want it named by its path", err)
	}
}

// TestIfBadNumberRefused: numbers DynamoDB refuses (NaN, ±Inf, 1e200) in
// an If condition are refused with ErrInvalidInput and nothing is sent, as
// they are in a Filter or a key condition (checkCondValues checks numbers
// too).
func TestIfBadNumberRefused(t *testing.T) {
	N, V := expression.Name, expression.Value
	for name, f := range map[string]expression.ConditionBuilder{
		"NaN":         N("body").Equal(V(math.NaN())),
		"+Inf":        N("body").LessThan(V(math.Inf(1))),
		"1e200":       N("body").LessThan(V(1e200)),
		"NaN in list": N("body").Equal(V([]any{math.NaN()})),
	} {
		c := silentDB()
		tb, err := NewTable[qsItem](NewMapper(c), "T")
		if err != nil {
			t.Fatal(err)
		}
		_, err = tb.Save(context.Background(), qsItem{P: "a", N: 1}, If(f))
		if !errors.Is(err, ErrInvalidInput) || c.count("") != 0 {
			t.Errorf("Save with If %s: sent %d requests, err = %v; want ErrInvalidInput before sending", name, c.count(""), err)
		}
		err = tb.Delete(context.Background(), qsItem{P: "a", N: 1, Version: 1}, If(f))
		if !errors.Is(err, ErrInvalidInput) {
			t.Errorf("Delete with If %s: err = %v; want ErrInvalidInput before sending", name, err)
		}
	}
}

// TestNumberRuleIsDynamoDBs: DynamoDB Local stores exactly the numbers
// av.Problem passes, and stores each as the number av.Canonical writes.
// Exponents are read as Java's BigDecimal reads them (leading zeros free,
// the exponent and the scale within int32), so a zero with an exponent of
// 8 to 10 digits is a number and "1e0000000000001" is 10.
func TestNumberRuleIsDynamoDBs(t *testing.T) {
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "numbers", "id", types.ScalarAttributeTypeS, "", "")
	ctx := t.Context()
	for _, s := range []string{"0", "+1", "-0", ".5", "5.", "1E+5", "1e-130", "9.9999999999999999999999999999999999999E+125",
		"0e99999999", "-0e99999999", "0.0e-99999999", "0e2147483647", "0.0e2147483647", "00e0002147483647", "1e0000000000001",
		"0e2147483648", "0e-2147483648", "0.00e-2147483647", "0e999999999999", "1e126", "1e-131", "1e9999999", "1e-99999999",
		"123456789012345678901234567890123456789", "1e", "x", "-", "NaN", "0x10"} {
		key := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "k"}}
		_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name,
			Item: map[string]types.AttributeValue{"id": key["id"], "n": &types.AttributeValueMemberN{Value: s}}})
		if p := avs.Problem(s); (err == nil) != (p == "") {
			t.Errorf("%q: DynamoDB Local says %v; av.Problem says %q", s, err, p)
			continue
		}
		if err != nil {
			continue
		}
		out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: &name, Key: key, ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		if got := out.Item["n"].(*types.AttributeValueMemberN).Value; got != avs.Canonical(s) {
			t.Errorf("%q: DynamoDB Local stores %q; av.Canonical writes %q", s, got, avs.Canonical(s))
		}
	}
}

// A set given as a condition's or a filter's value is refused with
// ErrInvalidInput before anything is sent when DynamoDB would refuse it:
// an element twice (numbers compared by value: "1" and "1.0", "0" and "-0"),
// or no element at all. DynamoDB Local refuses each (checked here first);
// the mapper sent them, and the caller got DynamoDB's ValidationException.
func TestSetValuesDynamoDBRefusesAreRefusedBeforeSending(t *testing.T) {
	cnt := dynamotest.NewCounter(nil)
	c := cnt.Client(t)
	name := dynamotest.KeyTable(t, c, "setvals", "id", types.ScalarAttributeTypeS, "", "")
	ctx := t.Context()
	tb, err := NewTable[plainItem](NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []types.AttributeValue{
		&types.AttributeValueMemberNS{Value: []string{"1", "1.0"}},
		&types.AttributeValueMemberNS{Value: []string{"0", "-0"}},
		&types.AttributeValueMemberNS{Value: []string{"10", "2", "1e1"}},
		&types.AttributeValueMemberSS{Value: []string{"a", "a"}},
		&types.AttributeValueMemberBS{Value: [][]byte{[]byte("b"), []byte("b")}},
		&types.AttributeValueMemberNS{Value: []string{}},
		&types.AttributeValueMemberSS{Value: []string{}},
		&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberNS{Value: []string{"5", "5e0"}}}},
		&types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberSS{}}},
	} {
		what := fmt.Sprintf("%T %v", v, v)
		if _, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: &name, FilterExpression: aws.String("x = :v"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": v}}); err == nil {
			t.Errorf("%s: DynamoDB Local takes it (the case this test is built on)", what)
			continue
		}
		before := cnt.Count()
		for _, err := range tb.Scan(ctx, Filter(expression.Name("x").Equal(expression.Value(v)))) {
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("Scan with a Filter on %s = %v; want ErrInvalidInput", what, err)
			}
			break
		}
		if _, err := tb.Save(ctx, plainItem{ID: "a"}, If(expression.Name("x").NotEqual(expression.Value(v)))); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("Save If x <> %s = %v; want ErrInvalidInput", what, err)
		}
		if n := cnt.Count() - before; n != 0 {
			t.Errorf("%s: %d requests sent; want none", what, n)
		}
	}
}

// sharedAV is a type whose MarshalDynamoDBAttributeValue returns a value it
// keeps: the mapper must not change it.
type sharedAV struct{ av types.AttributeValue }

func (s sharedAV) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) { return s.av, nil }
func (s *sharedAV) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	s.av = av
	return nil
}

// Dropping a duplicate set element inside a map or list the caller's own
// marshaler returned leaves the caller's map and list as they were: the
// copy sent holds the set without the duplicate.
func TestDuplicatesDroppedLeaveTheMarshalersValueAlone(t *testing.T) {
	type doc struct {
		ID  string   `dynamo:"id,hash"`
		Doc sharedAV `dynamo:"doc"`
		V   int64    `dynamo:"v,version"`
	}
	st := &fakeDB{}
	tb, err := NewTable[doc](NewMapper(st), "d")
	if err != nil {
		t.Fatal(err)
	}
	l := []types.AttributeValue{&types.AttributeValueMemberNS{Value: []string{"2", "2.0"}}}
	m := map[string]types.AttributeValue{
		"n": &types.AttributeValueMemberNS{Value: []string{"1", "1.0"}},
		"l": &types.AttributeValueMemberL{Value: l},
	}
	if _, err := tb.Save(t.Context(), doc{ID: "a", Doc: sharedAV{av: &types.AttributeValueMemberM{Value: m}}}); err != nil {
		t.Fatal(err)
	}
	if n := len(m["n"].(*types.AttributeValueMemberNS).Value); n != 2 {
		t.Errorf("Save changed the map the marshaler returned: its set has %d elements, want 2", n)
	}
	if n := len(l[0].(*types.AttributeValueMemberNS).Value); n != 2 {
		t.Errorf("Save changed the list the marshaler returned: its set has %d elements, want 2", n)
	}
	sent := st.upds()[0].ExpressionAttributeValues
	found := 0
	for _, v := range sent {
		if mv, ok := v.(*types.AttributeValueMemberM); ok {
			found++
			if n := len(mv.Value["n"].(*types.AttributeValueMemberNS).Value); n != 1 {
				t.Errorf("sent set with %d elements, want the duplicate dropped", n)
			}
		}
	}
	if found != 1 {
		t.Fatalf("sent %d maps, want the doc", found)
	}
}

type longNames struct {
	ID  string            `dynamo:"id,hash"`
	V   int64             `dynamo:"v,version"`
	SM  map[string]string `dynamo:"sm"`
	IM  map[string]int    `dynamo:"im"`
	Any any               `dynamo:"any"`
}

// An attribute name or map key DynamoDB refuses — over 65535 bytes
// ("Attribute name is too large, must be less than 65536 bytes" for a
// PutItem; an UpdateItem's values answer only "ExpressionAttributeValues
// contains invalid value", seen on DynamoDB Local) — is refused before
// sending by every write, with ErrInvalidInput naming the field; a key of
// 65535 bytes is stored.
func TestLongMapKeyRefusedOnEveryWrite(t *testing.T) {
	ctx := context.Background()
	c := dynamotest.Client(t)
	tb := createdTable[longNames](t, c)
	long, most := strings.Repeat("k", 65536), strings.Repeat("k", 65535)
	items := map[string]func(k string) longNames{
		"map[string]string": func(k string) longNames { return longNames{SM: map[string]string{k: "x"}} },
		"map[string]int":    func(k string) longNames { return longNames{IM: map[string]int{k: 1}} },
		"nested in any":     func(k string) longNames { return longNames{Any: []any{map[string]any{k: true}}} },
	}
	writes := itemWrites(ctx, tb)
	writes["Update"] = func(it longNames) error {
		_, err := tb.Update(ctx, longNames{ID: it.ID}, func(cur longNames) (longNames, error) { it.V = cur.V; return it, nil })
		return err
	}
	for iname, mk := range items {
		for wname, write := range writes {
			it := mk(long)
			it.ID = iname + " " + wname
			if err := write(it); !errors.Is(err, ErrInvalidInput) || !strings.Contains(fmt.Sprint(err), "65535") {
				t.Errorf("%s of a %s with a 65536-byte key: %v; want ErrInvalidInput saying DynamoDB's limit", wname, iname, err)
			}
			it = mk(most)
			it.ID = iname + " " + wname
			if err := write(it); err != nil {
				t.Errorf("%s of a %s with a 65535-byte key: %v; want it stored", wname, iname, err)
			}
		}
	}
}
