package dynamo

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/plan"
)

// qsStr has a string sort key, qsBin a binary one.
type qsStr struct {
	P string `dynamo:"p,hash"`
	S string `dynamo:"s,range"`
}

type qsBin struct {
	P string `dynamo:"p,hash"`
	B []byte `dynamo:"b,range"`
}

func qcS(v string) types.AttributeValue     { return &types.AttributeValueMemberS{Value: v} }
func qcN(v string) types.AttributeValue     { return &types.AttributeValueMemberN{Value: v} }
func qcNS(v ...string) types.AttributeValue { return &types.AttributeValueMemberNS{Value: v} }
func qcB(v ...byte) types.AttributeValue {
	return &types.AttributeValueMemberB{Value: v}
}

// qcRefusedCase is a call that must fail with ErrInvalidInput, mentioning
// want, before any request is sent.
type qcRefusedCase struct {
	name string
	call func(ctx context.Context, c Client) error
	want []string
}

func qcRefused(t *testing.T, cases []qcRefusedCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeDB{} // nothing may be sent
			err := tc.call(t.Context(), c)
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("err = %v, want ErrInvalidInput", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.Count(err.Error(), "dynamo:") != 1 {
				t.Errorf("error %q: want one \"dynamo:\" prefix", err)
			}
			if n := c.count(""); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

func qcTable[T any](t *testing.T, c Client) *Table[T] {
	t.Helper()
	tb, err := NewTable[T](NewMapper(c), "Events")
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func qcCursor(t *testing.T, p plan.Position) Cursor {
	t.Helper()
	c, err := encodeCursor(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// qcRawCursor makes a cursor of any JSON, as a client could forge one.
func qcRawCursor(json string) Cursor {
	return Cursor(base64.RawURLEncoding.EncodeToString([]byte(json)))
}

// A key condition that DynamoDB would refuse with a 400 — a name that is
// not a key, no partition key, values of the wrong type, out of range or
// not valid UTF-8 — is refused before sending, naming the attribute.
func TestQueryKeyConditionRefused(t *testing.T) {
	K, V := expression.Key, expression.Value
	items := func(kc expression.KeyConditionBuilder, opts ...QueryOption) func(context.Context, Client) error {
		return func(ctx context.Context, c Client) error {
			_, err := collect2(qcTable[qsItem](t, c).Query(ctx, kc, opts...))
			return err
		}
	}
	strs := func(kc expression.KeyConditionBuilder, opts ...QueryOption) func(context.Context, Client) error {
		return func(ctx context.Context, c Client) error {
			_, _, err := qcTable[qsStr](t, c).QueryPage(ctx, kc, opts...)
			return err
		}
	}
	indexed := func(kc expression.KeyConditionBuilder, opts ...QueryOption) func(context.Context, Client) error {
		return func(ctx context.Context, c Client) error {
			_, err := collect2(qcTable[qsIndexed](t, c).Query(ctx, kc, opts...))
			return err
		}
	}
	bins := func(kc expression.KeyConditionBuilder) func(context.Context, Client) error {
		return func(ctx context.Context, c Client) error {
			_, _, err := qcTable[qsBin](t, c).QueryPage(ctx, kc)
			return err
		}
	}
	pa := K("p").Equal(V("a"))
	qcRefused(t, []qcRefusedCase{
		{"name in another case", items(K("P").Equal(V("a"))), []string{`names "P"`, `did you mean "p"?`}},
		{"sort key in another case", items(pa.And(K("N").Equal(V(1)))), []string{`names "N"`, `did you mean "n"?`}},
		{"not a key", items(K("body").Equal(V("a"))), []string{`names "body"`, "not a key of the table itself", `partition key "p", sort key "n"`}},
		{"no partition key", items(K("n").Equal(V(1))), []string{`does not fix the partition key "p"`}},
		{"partition key not by Equal", items(K("p").GreaterThan(V("a"))), []string{`applies > to the partition key "p"`}},
		{"partition key twice", items(expression.KeyAnd(pa, K("p").Equal(V("b")))), []string{`names "p" twice`}},
		{"partition value not UTF-8", items(K("p").Equal(V("k\xff"))), []string{`value for "p"`, "not valid UTF-8"}},
		{"partition value empty", items(K("p").Equal(V(""))), []string{`value for "p" is empty`}},
		{"begins_with empty", strs(pa.And(K("s").BeginsWith(""))), []string{`value for "s" is empty`}},
		{"between empty", strs(pa.And(K("s").Between(V(""), V("z")))), []string{`value for "s" is empty`}},
		{"empty binary", bins(pa.And(K("b").LessThan(V([]byte{})))), []string{`value for "b" is empty`}},
		{"between reversed", items(pa.And(K("n").Between(V(10), V(9.5)))), []string{`"n" BETWEEN 10 AND 9.5: the lower bound comes first`}},
		{"between reversed strings", strs(pa.And(K("s").Between(V("b"), V("a")))), []string{`the lower bound comes first`}},
		{"partition value of another type", items(K("p").Equal(V(7))), []string{`partition key "p", a string (S), with a number (N) value 7`}},
		{"sort value of another type", items(pa.And(K("n").Equal(V("1")))), []string{`sort key "n", a number (N), with a string (S) value "1"`}},
		{"sort value out of range", items(pa.And(K("n").GreaterThan(V(1e200)))), []string{`value for "n"`, "outside DynamoDB's range"}},
		{"sort value too precise", items(pa.And(K("n").LessThan(V(qcN("1.00000000000000000000000000000000000001"))))), []string{`value for "n"`, "39 significant digits"}},
		{"sort value not a number", items(pa.And(K("n").LessThan(V(qcN("1x"))))), []string{`value for "n"`, "not a number"}},
		{"bool value", items(K("p").Equal(V(true))), []string{`compares "p" with a *types.AttributeValueMemberBOOL`}},
		{"begins_with on a number", items(pa.And(K("n").BeginsWith("1"))), []string{`begins_with on the number sort key "n"`}},
		{"begins_with not UTF-8", strs(pa.And(K("s").BeginsWith("x\xfe"))), []string{`value for "s"`, "not valid UTF-8"}},
		{"between bound not UTF-8", strs(pa.And(K("s").Between(V("a"), V("b\xc0")))), []string{`value for "s"`, "not valid UTF-8"}},
		{"sort value over 1024 bytes", strs(pa.And(K("s").GreaterThan(V(strings.Repeat("s", 1025))))), []string{`value for the sort key "s" is 1025 bytes, over DynamoDB's 1024`, "at most 1024 bytes"}},
		{"begins_with over 1024 bytes", strs(pa.And(K("s").BeginsWith(strings.Repeat("s", 1025)))), []string{`sort key "s" is 1025 bytes`}},
		{"between bound over 1024 bytes", bins(pa.And(K("b").Between(V([]byte{1}), V(bytes.Repeat([]byte{2}, 1025))))), []string{`sort key "b" is 1025 bytes`}},
		{"partition value over 2048 bytes", strs(K("p").Equal(V(strings.Repeat("p", 2049)))), []string{`value for the partition key "p" is 2049 bytes, over DynamoDB's 2048`, "at most 2048 bytes"}},
		{"partition value over 2048 bytes of UTF-8", items(K("p").Equal(V(strings.Repeat("€", 683)))), []string{`partition key "p" is 2049 bytes`}},
		{"index partition value over 2048 bytes", indexed(K("owner").Equal(V(strings.Repeat("o", 2049))), Index("byOwner")), []string{`value for the partition key "owner" is 2049 bytes`, "at most 2048 bytes"}},
		{"comparison not UTF-8", strs(pa.And(K("s").LessThanEqual(V("\xed\xa0\x80")))), []string{`value for "s"`, "not valid UTF-8"}},
		{"binary sort key with a string", bins(pa.And(K("b").GreaterThan(V("x")))), []string{`sort key "b", a binary (B), with a string (S)`}},
		{"key name not UTF-8", items(K("p\xff").Equal(V("a"))), []string{"not valid UTF-8"}},
		{"table key on an index", indexed(pa, Index("byOwner")), []string{`names "p", which is not a key of index "byOwner"`, `partition key "owner", sort key "at"`, "leave out Index"}},
		{"index key on the table", indexed(K("owner").Equal(V("ann"))), []string{`names "owner"`, `partition key of index "byOwner"; add Index("byOwner")`}},
		{"index sort key of another type", indexed(K("owner").Equal(V("ann")).And(K("at").Equal(V("5"))), Index("byOwner")), []string{`sort key "at", a number (N)`}},
		{"local index sort key", indexed(pa.And(K("n").Equal(V(1))), Index("byAt")), []string{`names "n", which is not a key of index "byAt"`}},
		{"filter value not UTF-8", items(pa, Filter(expression.Name("body").Equal(V("x\xff")))), []string{"Filter value", "not valid UTF-8"}},
		{"filter value deep not UTF-8", items(pa, Filter(expression.Name("body").Equal(V(map[string]any{"k": []string{"ok", "\xff"}})))), []string{"Filter value", `["k"] [1] holds the string "\xff"`}},
		{"filter number out of range", items(pa, Filter(expression.Name("v").LessThan(V(1e300)))), []string{"Filter value", "outside DynamoDB's range"}},
		{"filter number set too precise", items(pa, Filter(expression.Name("v").In(V(qcNS("1", "1.00000000000000000000000000000000000001"))))), []string{"Filter value", "39 significant digits"}},
		{"filter name not UTF-8", func(ctx context.Context, c Client) error {
			_, _, err := qcTable[qsItem](t, c).ScanPage(ctx, Filter(expression.Name("b\xffody").Equal(V("x"))))
			return err
		}, []string{"attribute name", "not valid UTF-8"}},
		{"scan filter value not UTF-8", func(ctx context.Context, c Client) error {
			_, err := collect2(qcTable[qsItem](t, c).Scan(ctx, Filter(expression.Name("body").BeginsWith("\xff"))))
			return err
		}, []string{"Filter value", "not valid UTF-8"}},
	})
}

// A key condition's partition value is refused over DynamoDB's 2048 bytes,
// on the table and on an index, and sent up to them: on DynamoDB Local a
// query at exactly 2048 bytes finds the item stored under that key, one at
// 2049 fails with ErrInvalidInput. Sent, DynamoDB Local answers a partition
// value of 2049 or 5000 bytes with no items and no error (seen on the
// table and on a global index), where DynamoDB refuses any key value over
// its limit with a ValidationException: the caller would read "no items".
func TestQueryKeyValueOverLimitOnDynamoDBLocal(t *testing.T) {
	c := dynamotest.Client(t)
	ctx := t.Context()
	tb := createdTable[qsIndexed](t, c)
	p, owner := strings.Repeat("p", 2048), strings.Repeat("€", 682)+"oo" // 2048 bytes
	if _, err := tb.Save(ctx, qsIndexed{P: p, N: 1, Owner: owner, At: 1}); err != nil {
		t.Fatal(err)
	}
	K, V := expression.Key, expression.Value
	for _, tc := range []struct {
		name       string
		key, value string
		index      string
	}{{"table", "p", p, ""}, {"index", "owner", owner, "byOwner"}} {
		var opts []QueryOption
		if tc.index != "" {
			opts = append(opts, Index(tc.index))
		}
		items, _, err := tb.QueryPage(ctx, K(tc.key).Equal(V(tc.value)), opts...)
		if err != nil || len(items) != 1 || items[0].P != p {
			t.Errorf("%s: query at 2048 bytes = %d items, %v; want the item, nil", tc.name, len(items), err)
		}
		_, _, err = tb.QueryPage(ctx, K(tc.key).Equal(V(tc.value+"x")), opts...)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "2049 bytes") {
			t.Errorf("%s: query at 2049 bytes = %v, want ErrInvalidInput saying 2049 bytes", tc.name, err)
		}
	}
}

// A cursor that does not fit the table, the index or the query — another
// partition, a sort key the condition does not select, an attribute of the
// wrong type, a number out of range, a missing or extra attribute, a string
// that is not valid UTF-8 — is refused before sending.
func TestQueryCursorRefused(t *testing.T) {
	K, V := expression.Key, expression.Value
	pa := K("p").Equal(V("a"))
	items := func(kc expression.KeyConditionBuilder, c Cursor, opts ...QueryOption) func(context.Context, Client) error {
		return func(ctx context.Context, cl Client) error {
			_, err := collect2(qcTable[qsItem](t, cl).Query(ctx, kc, append(opts, StartAfter(c))...))
			return err
		}
	}
	scan := func(c Cursor) func(context.Context, Client) error {
		return func(ctx context.Context, cl Client) error {
			_, _, err := qcTable[qsItem](t, cl).ScanPage(ctx, StartAfter(c))
			return err
		}
	}
	strs := func(kc expression.KeyConditionBuilder, c Cursor) func(context.Context, Client) error {
		return func(ctx context.Context, cl Client) error {
			_, _, err := qcTable[qsStr](t, cl).QueryPage(ctx, kc, StartAfter(c))
			return err
		}
	}
	bins := func(kc expression.KeyConditionBuilder, c Cursor) func(context.Context, Client) error {
		return func(ctx context.Context, cl Client) error {
			_, _, err := qcTable[qsBin](t, cl).QueryPage(ctx, kc, StartAfter(c))
			return err
		}
	}
	indexed := func(kc expression.KeyConditionBuilder, c Cursor, index string) func(context.Context, Client) error {
		return func(ctx context.Context, cl Client) error {
			_, _, err := qcTable[qsIndexed](t, cl).QueryPage(ctx, kc, Index(index), StartAfter(c))
			return err
		}
	}
	key := func(kv ...any) map[string]types.AttributeValue {
		m := map[string]types.AttributeValue{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1].(types.AttributeValue)
		}
		return m
	}
	cur := func(kv ...any) Cursor { return qcCursor(t, plan.Position{Key: key(kv...)}) }
	idx := func(index string, kv ...any) Cursor { return qcCursor(t, plan.Position{Index: index, Key: key(kv...)}) }
	owner := K("owner").Equal(V("ann"))
	qcRefused(t, []qcRefusedCase{
		{"another partition", items(pa, cur("p", qcS("b"), "n", qcN("1"))), []string{`in the partition p = "b", this query reads p = "a"`}},
		{"partition of another type", items(pa, cur("p", qcN("1"), "n", qcN("1"))), []string{`"p" is a number (N), but the table stores it as a string (S)`}},
		{"sort key of another type", items(pa, cur("p", qcS("a"), "n", qcS("1"))), []string{`"n" is a string (S), but the table stores it as a number (N)`}},
		{"scan cursor of another type", scan(cur("p", qcB(1), "n", qcN("1"))), []string{`"p" is a binary (B)`}},
		{"missing sort key", items(pa, cur("p", qcS("a"))), []string{`lacks the key attribute "n"`}},
		{"extra attribute", items(pa, cur("p", qcS("a"), "n", qcN("1"), "x", qcS("y"))), []string{`the table's key is "p", "n"`}},
		{"number out of range", items(pa, cur("p", qcS("a"), "n", qcN("1e126"))), []string{"outside DynamoDB's range"}},
		{"number too precise", items(pa, cur("p", qcS("a"), "n", qcN("-1234567890123456789012345678901234567.89"))), []string{"39 significant digits"}},
		{"null number", items(pa, qcRawCursor(`{"v":1,"k":{"n":{"N":null},"p":{"S":"a"}}}`)), []string{"null"}},
		{"null beside a number", items(pa, qcRawCursor(`{"v":1,"k":{"n":{"N":"1","S":null},"p":{"S":"a"}}}`)), []string{"null"}},
		{"duplicate key attribute", items(pa, qcRawCursor(`{"v":1,"k":{"n":{"N":"1"},"n":{"N":"2"},"p":{"S":"a"}}}`)), []string{"not as this package writes it"}},
		{"unknown field", items(pa, qcRawCursor(`{"v":1,"k":{"n":{"N":"1"},"p":{"S":"a"}},"x":0}`)), []string{"not as this package writes it", `"x\":0}`}},
		{"string not UTF-8", items(pa, qcRawCursor("{\"v\":1,\"k\":{\"n\":{\"N\":\"1\"},\"p\":{\"S\":\"a\xff\"}}}")), []string{"not valid UTF-8"}},
		{"sort key below the range", items(pa.And(K("n").GreaterThan(V(5))), cur("p", qcS("a"), "n", qcN("3"))), []string{"sort key n = 3 is not one the query's key condition selects (n > 5)"}},
		{"sort key not equal", items(pa.And(K("n").Equal(V(5))), cur("p", qcS("a"), "n", qcN("5.5"))), []string{"(n = 5)"}},
		{"sort key past between", items(pa.And(K("n").Between(V(1), V(5))), cur("p", qcS("a"), "n", qcN("50e-1"+"1"))), []string{"n BETWEEN 1 AND 5"}},
		{"string sort key without the prefix", strs(pa.And(K("s").BeginsWith("ab")), cur("p", qcS("a"), "s", qcS("ac"))), []string{`begins_with(s, "ab")`}},
		{"string sort key above", strs(pa.And(K("s").LessThanEqual(V("m"))), cur("p", qcS("a"), "s", qcS("n"))), []string{`s <= "m"`}},
		{"binary sort key without the prefix", bins(pa.And(K("b").BeginsWith(string([]byte{1, 2}))), cur("p", qcS("a"), "b", qcB(1, 3))), []string{`sort key "b", a binary (B), with a string (S)`}},
		{"binary sort key of another type", bins(pa, cur("p", qcS("a"), "b", qcS("x"))), []string{`"b" is a string (S), but the table stores it as a binary (B)`}},
		{"index cursor of another partition", indexed(owner, idx("byOwner", "p", qcS("a"), "n", qcN("1"), "owner", qcS("bob"), "at", qcN("2")), "byOwner"),
			[]string{`in the partition owner = "bob", this query reads owner = "ann"`}},
		{"index cursor of another type", indexed(owner, idx("byOwner", "p", qcS("a"), "n", qcN("1"), "owner", qcS("ann"), "at", qcS("2")), "byOwner"),
			[]string{`"at" is a string (S)`}},
		{"index cursor missing the index key", indexed(owner, idx("byOwner", "p", qcS("a"), "n", qcN("1"), "owner", qcS("ann")), "byOwner"),
			[]string{`lacks the key attribute "at"`}},
		{"index cursor missing the table key", indexed(owner, idx("byOwner", "p", qcS("a"), "owner", qcS("ann"), "at", qcN("2")), "byOwner"),
			[]string{`lacks the key attribute "n"`}},
		{"local index cursor of another partition", indexed(pa, idx("byAt", "p", qcS("b"), "n", qcN("1"), "at", qcN("2")), "byAt"),
			[]string{`in the partition p = "b"`}},
		{"local index sort key outside", indexed(pa.And(K("at").LessThan(V(2))), idx("byAt", "p", qcS("a"), "n", qcN("1"), "at", qcN("2")), "byAt"),
			[]string{"at = 2 is not one", "(at < 2)"}},
	})
}

// Cursors that fit are sent as they are, and DynamoDB (the fake, which
// refuses a start key the key condition does not select) takes them: the
// same partition written another way (1 and 1.0 are one number), a sort
// key the condition selects, any partition for a scan, and an index the
// tags do not declare (whose keys the mapper does not know).
func TestQueryCursorFits(t *testing.T) {
	K, V := expression.Key, expression.Value
	type numKey struct {
		P int     `dynamo:"p,hash"`
		N float64 `dynamo:"n,range"`
	}
	cases := []struct {
		name     string
		hash, rg string // the table's key
		call     func(ctx context.Context, c Client) error
	}{
		{"number partition written another way", "p", "n", func(ctx context.Context, c Client) error {
			cur := qcCursor(t, plan.Position{Key: map[string]types.AttributeValue{"p": qcN("1.0"), "n": qcN("-0.5e1")}})
			_, _, err := qcTable[numKey](t, c).QueryPage(ctx, K("p").Equal(V(1)).And(K("n").Between(V(-5), V(0))), StartAfter(cur))
			return err
		}},
		{"zero with an exponent", "p", "n", func(ctx context.Context, c Client) error {
			cur := qcCursor(t, plan.Position{Key: map[string]types.AttributeValue{"p": qcN("0e999"), "n": qcN("1e-130")}})
			_, _, err := qcTable[numKey](t, c).QueryPage(ctx, K("p").Equal(V(0)).And(K("n").GreaterThan(V(0))), StartAfter(cur))
			return err
		}},
		{"begins_with", "p", "s", func(ctx context.Context, c Client) error {
			cur := qcCursor(t, plan.Position{Key: map[string]types.AttributeValue{"p": qcS("a"), "s": qcS("abc")}})
			_, _, err := qcTable[qsStr](t, c).QueryPage(ctx, K("p").Equal(V("a")).And(K("s").BeginsWith("ab")), StartAfter(cur))
			return err
		}},
		{"binary range", "p", "b", func(ctx context.Context, c Client) error {
			cur := qcCursor(t, plan.Position{Key: map[string]types.AttributeValue{"p": qcS("a"), "b": qcB(1, 2, 3)}})
			_, _, err := qcTable[qsBin](t, c).QueryPage(ctx, K("p").Equal(V("a")).And(K("b").Between(V([]byte{1, 2}), V([]byte{1, 2, 3}))), StartAfter(cur))
			return err
		}},
		{"scan of another partition", "p", "n", func(ctx context.Context, c Client) error {
			cur := qcCursor(t, plan.Position{Key: map[string]types.AttributeValue{"p": qcS("zzz"), "n": qcN("9")}})
			_, _, err := qcTable[qsItem](t, c).ScanPage(ctx, StartAfter(cur))
			return err
		}},
		{"undeclared index", "p", "n", func(ctx context.Context, c Client) error {
			cur := qcCursor(t, plan.Position{Index: "byOther", Key: map[string]types.AttributeValue{"p": qcS("a"), "n": qcN("1"), "x": qcS("q")}})
			_, _, err := qcTable[qsItem](t, c).QueryPage(ctx, K("x").Equal(V("q")), Index("byOther"), StartAfter(cur))
			return err
		}},
		{"between bounds", "p", "n", func(ctx context.Context, c Client) error {
			cur := qcCursor(t, plan.Position{Key: map[string]types.AttributeValue{"p": qcS("a"), "n": qcN("5")}})
			_, _, err := qcTable[qsItem](t, c).QueryPage(ctx, K("p").Equal(V("a")).And(K("n").Between(V(1), V(5))), StartAfter(cur), Descending())
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := (&fakeDB{}).table("Events", tc.hash, tc.rg).index("Events", "byOther", "x", "", true)
			if err := tc.call(t.Context(), c); err != nil {
				t.Fatal(err)
			}
			qs, ss := c.queries(), c.scans()
			if len(qs)+len(ss) != 1 {
				t.Fatalf("%d requests, want 1", len(qs)+len(ss))
			}
			start := map[string]types.AttributeValue(nil)
			if len(qs) == 1 {
				start = qs[0].ExclusiveStartKey
			} else {
				start = ss[0].ExclusiveStartKey
			}
			if len(start) == 0 {
				t.Error("no ExclusiveStartKey sent")
			}
		})
	}
}

// FuzzQueryKeyCondition: whatever values a key condition holds, the query
// is refused with ErrInvalidInput before sending, or sent with exactly
// those values; never a panic.
func FuzzQueryKeyCondition(f *testing.F) {
	for _, s := range [][3]string{
		{"a", "1", ""}, {"a\xff", "1", ""}, {"", "1", ""}, {"a", "1e126", ""}, {"a", "-1e-130", "x"},
		{"a", "1.00000000000000000000000000000000000001", ""}, {"\xed\xa0\x80", "0e99999999", ""},
		{"a", "1", "\xff"}, {"a", "NaN", ""}, {"é", "00000000000000000000000000000000000000000000000001", "ok"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, part, num, filter string) {
		c := qsDB()
		tb := qcTable[qsItem](t, c)
		kc := expression.Key("p").Equal(expression.Value(part)).
			And(expression.Key("n").GreaterThan(expression.Value(qcN(num))))
		var opts []QueryOption
		if filter != "" {
			opts = append(opts, Filter(expression.Name("body").Equal(expression.Value(filter))))
		}
		_, _, err := tb.QueryPage(t.Context(), kc, opts...)
		qs := c.queries()
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) || len(qs) != 0 {
				t.Fatalf("%q, %q, %q: %v after %d requests", part, num, filter, err, len(qs))
			}
			return
		}
		if !utf8.ValidString(part) || part == "" || !utf8.ValidString(filter) || plan.CheckNumber(num) != nil {
			t.Fatalf("%q, %q, %q sent", part, num, filter)
		}
		sent := map[string]bool{}
		for _, v := range qs[0].ExpressionAttributeValues {
			sent[plan.ShortScalar(v)] = true
		}
		for _, v := range []types.AttributeValue{qcS(part), qcN(num)} {
			if !sent[plan.ShortScalar(v)] {
				t.Fatalf("value %s not sent as it was: %v", plan.ShortScalar(v), sent)
			}
		}
	})
}

// A Query's or Scan's expressions are refused, before sending, for what an
// If condition's are (checkCondValues): a Filter value nesting deeper than
// DynamoDB's 32 levels, a map key or attribute name over 65535 bytes —
// which DynamoDB refuses with a ValidationException ("Nesting Levels have
// exceeded", "Attribute name is too large", seen on DynamoDB Local), and
// which Save with If refused already.
func TestFilterRefusedForWhatIfIsRefused(t *testing.T) {
	var deep any = "x"
	for range 33 {
		deep = []any{deep}
	}
	long := strings.Repeat("k", 65536)
	for name, c := range map[string]struct {
		f    expression.ConditionBuilder
		want string
	}{
		"nesting 33 levels":      {expression.Name("body").Equal(expression.Value(deep)), "deeper than DynamoDB's 32 levels"},
		"map key of 65536 bytes": {expression.Name("body").Equal(expression.Value(map[string]any{long: 1})), "65536 bytes"},
		"name of 65536 bytes":    {expression.Name(long).Equal(expression.Value("x")), "65536 bytes"},
	} {
		db := silentDB()
		tb := qcTable[qsItem](t, db)
		_, _, err := tb.ScanPage(context.Background(), Filter(c.f))
		wantInvalid(t, "Scan filter "+name, err, c.want)
		_, err = collect2(tb.Query(context.Background(), expression.Key("p").Equal(expression.Value("a")), Filter(c.f)))
		wantInvalid(t, "Query filter "+name, err, c.want)
		if n := db.count(""); n != 0 {
			t.Errorf("%s: %d requests sent", name, n)
		}
	}
}
