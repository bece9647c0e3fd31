package dynamo

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/condexpr"
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/schema"
)

var (
	cName  = expression.Name
	cValue = expression.Value
)

// condValuesFor compiles cond as an If condition of javaItem and returns
// the values sent, keyed by the attribute path they are compared with.
func compileFor[T any](t *testing.T, conds ...expression.ConditionBuilder) *plan.UserCond {
	t.Helper()
	tb := javaTestTable[T](t)
	uc, err := plan.CompileConds(tb.p.S, conds)
	if err != nil {
		t.Fatalf("compileConds: %v", err)
	}
	return uc
}

// TestCondJavaValues: values compared with javabool and javadate attributes
// (top level, nested, in lists and maps, by every comparison) are sent as
// those attributes are stored; other values are sent as they are.
func TestCondJavaValues(t *testing.T) {
	when := time.Date(2023, 11, 14, 23, 13, 20, 123456789, time.FixedZone("CET", 3600))
	javaWhen := str("2023-11-14T22:13:20.123Z")
	tr := &types.AttributeValueMemberBOOL{Value: true}
	for _, tc := range []struct {
		name string
		cond expression.ConditionBuilder
		want []types.AttributeValue // the values, in placeholder order
	}{
		{"equal bool", cName("b").Equal(cValue(true)), []types.AttributeValue{n("1")}},
		{"not equal false", cName("b").NotEqual(cValue(false)), []types.AttributeValue{n("0")}},
		{"embedded", cName("active").Equal(cValue(true)), []types.AttributeValue{n("1")}},
		{"pointer field", cName("pb").Equal(cValue(true)), []types.AttributeValue{n("1")}},
		{"already stored form", cName("b").Equal(cValue(JavaBool(true))), []types.AttributeValue{n("1")}},
		{"plain bool untouched", cName("plain").Equal(cValue(true)), []types.AttributeValue{tr}},
		{"plain time untouched", cName("plaint").Equal(cValue(when)), []types.AttributeValue{str(when.Format(time.RFC3339Nano))}},
		{"date", cName("d").LessThan(cValue(when)), []types.AttributeValue{javaWhen}},
		{"date reversed operands", cValue(when).LessThanEqual(cName("d")), []types.AttributeValue{javaWhen}},
		{"date as JavaDate", cName("d").Equal(cValue(JavaDate(when))), []types.AttributeValue{javaWhen}},
		{"between", cName("d").Between(cValue(when), cValue(when.Add(time.Hour))),
			[]types.AttributeValue{javaWhen, str("2023-11-14T23:13:20.123Z")}},
		{"in", cName("b").In(cValue(true), cValue(false)), []types.AttributeValue{n("1"), n("0")}},
		{"nested doc", cName("doc.flag").Equal(cValue(true)), []types.AttributeValue{n("1")}},
		{"nested date", cName("doc.when").GreaterThan(cValue(when)), []types.AttributeValue{javaWhen}},
		{"list of docs", cName("docs[1].flag").Equal(cValue(false)), []types.AttributeValue{n("0")}},
		{"list element", cName("doc.flags[0]").Equal(cValue(true)), []types.AttributeValue{n("1")}},
		{"whole list", cName("doc.flags").Equal(cValue([]bool{true, false})), []types.AttributeValue{avL(n("1"), n("0"))}},
		{"map of docs", cName("byname.k.flag").Equal(cValue(true)), []types.AttributeValue{n("1")}},
		{"map of bools", cName("mb.t").Equal(cValue(true)), []types.AttributeValue{n("1")}},
		{"contains list of dates", cName("dates").Contains(when.Format(time.RFC3339Nano)), []types.AttributeValue{javaWhen}},
		{"begins_with date prefix kept", cName("d").BeginsWith("2023-11"), []types.AttributeValue{str("2023-11")}},
		{"size untouched", cName("doc.flags").Size().Equal(cValue(2)), []types.AttributeValue{n("2")}},
		{"attribute_type untouched", cName("b").AttributeType(expression.Number), []types.AttributeValue{str("N")}},
		{"null untouched", cName("b").Equal(cValue(avNull)), []types.AttributeValue{avNull}},
		{"under not and or", expression.Not(expression.Or(cName("b").Equal(cValue(true)), cName("plain").Equal(cValue(true)))),
			[]types.AttributeValue{n("1"), tr}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			uc := compileFor[javaItem](t, tc.cond)
			for i, want := range tc.want {
				ph := ":" + plan.Itoa(int64(i))
				if got := uc.Values[ph]; !reflect.DeepEqual(got, want) {
					t.Errorf("%s (%s) = %s, want %s", ph, uc, avString(got), avString(want))
				}
			}
		})
	}
}

// TestCondJavaValueErrors: a value that cannot be stored the way the
// attribute is is refused, saying what to pass, before anything is sent.
func TestCondJavaValueErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cond expression.ConditionBuilder
		want string
	}{
		{"string for bool", cName("b").Equal(cValue("true")), "dynamo.JavaBool"},
		{"number 2 for bool", cName("b").Equal(cValue(2)), "1 (true) or 0 (false)"},
		{"number for date", cName("d").Equal(cValue(12)), "dynamo.JavaDate"},
		{"non-time string for date", cName("d").Equal(cValue("yesterday")), "dynamo.JavaDate"},
		{"bad list element", cName("dates").Equal(cValue([]string{"x"})), "[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeDB{noStore: true}
			tb, err := NewTable[javaItem](NewMapper(c), "java")
			if err != nil {
				t.Fatal(err)
			}
			_, err = tb.Save(context.Background(), sampleJavaItem(), If(tc.cond))
			if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Save = %v, want ErrInvalidInput saying %q", err, tc.want)
			}
			err = tb.Delete(context.Background(), sampleJavaItem(), If(tc.cond))
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("Delete = %v, want ErrInvalidInput", err)
			}
			for _, err := range tb.Scan(context.Background(), Filter(tc.cond)) {
				if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("Scan = %v, want ErrInvalidInput saying %q", err, tc.want)
				}
			}
			if len(c.upds())+len(c.puts())+len(c.dels())+len(c.scans()) > 0 {
				t.Error("a request was sent")
			}
		})
	}
}

// TestCondValueSharedAcrossAttributes: one value placeholder compared with a
// javabool attribute and another one cannot be converted for both.
func TestCondValueSharedAcrossAttributes(t *testing.T) {
	s := javaTestTable[javaItem](t).p.S
	values := map[string]types.AttributeValue{":0": &types.AttributeValueMemberBOOL{Value: true}}
	_, _, err := s.RewriteCond("#0 = :0 OR #1 = :0", map[string]string{"#0": "b", "#1": "plain"}, values)
	if err == nil || !strings.Contains(err.Error(), "separate expression.Value") {
		t.Errorf("rewriteCond = %v", err)
	}
	// Compared twice with the same attribute: fine.
	if _, _, err := s.RewriteCond("#0 = :0 OR #0 <> :0", map[string]string{"#0": "b"}, values); err != nil {
		t.Errorf("rewriteCond = %v", err)
	}
	// An expression it cannot read: refused only when it names a converted attribute.
	if _, _, err := s.RewriteCond("#0 = = :0", map[string]string{"#0": "b"}, values); err == nil {
		t.Error("unreadable expression on a javabool attribute accepted")
	}
	if e, _, err := s.RewriteCond("#0 = = :0", map[string]string{"#0": "plain"}, values); err != nil || e != "#0 = = :0" {
		t.Errorf("unreadable expression on a plain attribute = %q, %v", e, err)
	}
}

// TestCondValuesNotModified: the caller's attribute values are never
// modified, only replaced in the request's map.
func TestCondValuesNotModified(t *testing.T) {
	l := avL(&types.AttributeValueMemberBOOL{Value: true})
	uc := compileFor[javaItem](t, cName("doc.flags").Equal(cValue(l)))
	if _, ok := l.Value[0].(*types.AttributeValueMemberBOOL); !ok {
		t.Error("the caller's list was modified")
	}
	if !reflect.DeepEqual(uc.Values[":0"], avL(n("1"))) {
		t.Errorf("sent %s", avString(uc.Values[":0"]))
	}
}

type dotted struct {
	ID    string         `dynamo:"id,hash"`
	AB    int            `dynamo:"a.b"`
	XY    bool           `dynamo:"x.y,javabool"`
	C     map[string]int `dynamo:"c"`
	CD    int            `dynamo:"c.d"` // "c" exists too: c.d stays a path
	V     int64          `dynamo:"v,version"`
	Other int            `dynamo:"other"`
}

// TestCondDottedName: expression.Name("a.b") names the top-level attribute
// "a.b" when the type has one and no "a"; unused names are dropped.
func TestCondDottedName(t *testing.T) {
	uc := compileFor[dotted](t, expression.And(cName("a.b").Equal(cValue(1)), cName("x.y").Equal(cValue(true)),
		cName("c.d").Equal(cValue(2)), cName("a.b").GreaterThan(cName("other"))))
	if want := "(#dot0 = :0) AND (#dot1 = :1) AND (#4.#5 = :2) AND (#dot0 > #6)"; uc.Expr != want {
		t.Errorf("expr = %q, want %q", uc.Expr, want)
	}
	wantNames := map[string]string{"#dot0": "a.b", "#dot1": "x.y", "#4": "c", "#5": "d", "#6": "other"}
	if !reflect.DeepEqual(uc.Names, wantNames) {
		t.Errorf("names = %v, want %v", uc.Names, wantNames)
	}
	if !reflect.DeepEqual(uc.Values[":1"], n("1")) {
		t.Errorf(":1 = %s, want N 1 (x.y is javabool)", avString(uc.Values[":1"]))
	}
	// NameNoDotSplit needs no rewriting.
	uc = compileFor[dotted](t, expression.NameNoDotSplit("x.y").Equal(cValue(true)))
	if uc.Expr != "#0 = :0" || !reflect.DeepEqual(uc.Values[":0"], n("1")) {
		t.Errorf("NameNoDotSplit: %q %v", uc.Expr, uc.Values)
	}
	// A name used elsewhere is kept.
	s := javaTestTable[dotted](t).p.S
	e, names, err := s.RewriteCond("#0.#1 = :0", map[string]string{"#0": "a", "#1": "b"}, map[string]types.AttributeValue{":0": n("1")}, "#1 = :k")
	if err != nil || e != "#dot0 = :0" || !reflect.DeepEqual(names, map[string]string{"#dot0": "a.b", "#1": "b"}) {
		t.Errorf("rewriteCond = %q %v %v", e, names, err)
	}
}

// TestCondFilterRequest: Query and Scan send the converted filter, with the
// key condition's names kept.
func TestCondFilterRequest(t *testing.T) {
	c := &fakeDB{noStore: true}
	tb, err := NewTable[dotted](NewMapper(c), "t")
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range tb.Scan(context.Background(), Filter(cName("x.y").Equal(cValue(true)))) {
		t.Fatal(err)
	}
	in := c.scans()[0]
	filterNames := maps.Clone(in.ExpressionAttributeNames)
	maps.DeleteFunc(filterNames, func(ph, _ string) bool { return strings.HasPrefix(ph, "#p") || ph == plan.TokenNamePH }) // the projection's
	if aws := *in.FilterExpression; aws != "#dot0 = :0" || !reflect.DeepEqual(filterNames, map[string]string{"#dot0": "x.y"}) ||
		!reflect.DeepEqual(in.ExpressionAttributeValues[":0"], n("1")) {
		t.Errorf("scan sent %q %v %v", aws, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	}
}

// TestConditionErrorNamesCondition: a failed If (version matched) names the
// condition, with names and values written in.
func TestConditionErrorNamesCondition(t *testing.T) {
	stored := javaStoredItem()
	c := &fakeDB{noStore: true, onUpd: func(int, *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		return nil, &types.ConditionalCheckFailedException{Item: stored}
	}, onDel: func(int, *dynamodb.DeleteItemInput) (*dynamodb.DeleteItemOutput, error) {
		return nil, &types.ConditionalCheckFailedException{Item: stored}
	}}
	tb, err := NewTable[javaItem](NewMapper(c), "java")
	if err != nil {
		t.Fatal(err)
	}
	cond := If(expression.And(cName("b").Equal(cValue(false)), cName("doc.name").In(cValue("a"), cValue("b c"))))
	want := `held v 3, found 3; the If condition failed: (b = 0) AND (doc.name IN ("a", "b c"))`
	_, err = tb.Save(context.Background(), sampleJavaItem(), cond)
	var ce *ConditionError
	if !errors.As(err, &ce) || !errors.Is(err, ErrConditionFailed) || !strings.Contains(err.Error(), want) {
		t.Errorf("Save = %v, want it to say %q", err, want)
	}
	err = tb.Delete(context.Background(), sampleJavaItem(), cond)
	if !errors.Is(err, ErrConditionFailed) || !strings.Contains(err.Error(), want) {
		t.Errorf("Delete = %v, want it to say %q", err, want)
	}
	// A version conflict is about the version; the condition is not blamed.
	old := sampleJavaItem()
	old.V = 2
	_, err = tb.Save(context.Background(), old, cond)
	if !errors.Is(err, ErrVersionConflict) || strings.Contains(err.Error(), "If condition") {
		t.Errorf("Save = %v, want a conflict that does not blame the condition", err)
	}
}

func TestReadableCond(t *testing.T) {
	names := map[string]string{"#0": "a.b", "#1": "plain", "#2": ""}
	values := map[string]types.AttributeValue{
		":0": avM(map[string]types.AttributeValue{"z": n("1"), "a": avL(str("x"), &types.AttributeValueMemberBOOL{Value: true})}),
		":1": &types.AttributeValueMemberSS{Value: []string{"p", "q"}},
		":2": str(strings.Repeat("x", 100)),
	}
	got := schema.ReadableCond("#0 = :0 AND #1 IN (:1, :9) AND #2 = :2 AND #3 = #1", names, values)
	want := `"a.b" = {"a": ["x", true], "z": 1} AND plain IN (SS{"p", "q"}, :9) AND "" = "` + strings.Repeat("x", 59) + `… AND #3 = plain`
	if got != want {
		t.Errorf("readableCond =\n%s\nwant\n%s", got, want)
	}
	if got := schema.ReadableCond("#0 ! :0", names, values); got != "#0 ! :0" {
		t.Errorf("unreadable: %q", got)
	}
}

// FuzzParseCond: any string is parsed, rendered and rewritten without a
// panic; what the expression package writes always parses.
func FuzzParseCond(f *testing.F) {
	for _, s := range []string{
		"#0 = :0",
		"(#0.#1 = :0) AND (#2[2].#3 BETWEEN :1 AND :2) AND (#4 IN (:3, :4, :5)) AND (NOT (begins_with (#5, :6))) AND ((contains (#6, :7)) OR (size (#7) > :8) OR (attribute_type (#8, :9)) OR (attribute_exists (#9))) AND (#0 = #1) AND (#10 < :10)",
		"#0 <> :0 OR #0 <= :1",
		"attribute_not_exists (#0)",
		"((((#0 >= :0))))",
		"#0[1][2].#1 = :0",
		"NOT NOT #0 = :0",
		"#0 IN ()",
		"#0.",
	} {
		f.Add(s)
	}
	s := javaTestTableF[dotted](f)
	sj := javaTestTableF[javaItem](f)
	f.Fuzz(func(t *testing.T, expr string) {
		_, _ = condexpr.Parse(expr)
		names := map[string]string{"#0": "a", "#1": "b", "#2": "x", "#3": "y", "#4": "b", "#5": "doc", "#6": "flags", "#7": "d"}
		values := map[string]types.AttributeValue{":0": &types.AttributeValueMemberBOOL{Value: true}, ":1": str("2020-01-01T00:00:00Z"), ":2": n("1")}
		_ = schema.ReadableCond(expr, names, values)
		if r := schema.ReadableCond(expr, names, values); !utf8.ValidString(r) && utf8.ValidString(expr) {
			t.Fatalf("readableCond(%q) = %q, not UTF-8", expr, r)
		}
		for _, sc := range []*schema.Schema{s, sj} {
			e, nm, err := sc.RewriteCond(expr, maps2(names), maps2(values))
			if err != nil {
				continue
			}
			// Every name placeholder the result uses is defined.
			toks, terr := condexpr.Tokenize(e)
			if terr != nil && e != expr {
				t.Fatalf("rewriteCond(%q) = %q, unreadable", expr, e)
			}
			for _, tk := range toks {
				if _, ok := nm[tk.Text]; tk.Kind == condexpr.Name && !ok && names[tk.Text] != "" {
					t.Fatalf("rewriteCond(%q) = %q uses %s, not in %v", expr, e, tk.Text, nm)
				}
			}
		}
	})
}

func maps2[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func javaTestTableF[T any](f *testing.F) *schema.Schema {
	tb, err := NewTable[T](NewMapper(&fakeDB{noStore: true}), "f")
	if err != nil {
		f.Fatal(err)
	}
	return tb.p.S
}

// TestTxConditionErrorNamesCondition: in a transaction, a member whose If
// failed (version matched) names its condition, values as sent.
func TestTxConditionErrorNamesCondition(t *testing.T) {
	stored := javaStoredItem()
	var sent *dynamodb.TransactWriteItemsInput
	c := &fakeDB{noStore: true, onTxWrite: txErr(func(_ int, in *dynamodb.TransactWriteItemsInput) error {
		sent = in
		return txCanceled(txReason("None", nil), txReason("ConditionalCheckFailed", stored))
	})}
	tb, err := NewTable[javaItem](NewMapper(c), "java")
	if err != nil {
		t.Fatal(err)
	}
	other := sampleJavaItem()
	other.ID = "y"
	cond := If(cName("b").Equal(cValue(false)))
	err = tb.Mapper().WriteTx(context.Background(), []TxOp{tb.TxSave(other), tb.TxCheck(sampleJavaItem(), cond)})
	if !errors.Is(err, ErrConditionFailed) || !strings.Contains(err.Error(), "the If condition failed: b = 0") {
		t.Errorf("WriteTx = %v, want the failed condition named", err)
	}
	if got := sent.TransactItems[1].ConditionCheck.ExpressionAttributeValues[":0"]; !reflect.DeepEqual(got, n("0")) {
		t.Errorf("TxCheck sent %s for false, want N 0", avString(got))
	}
}

// plainB is javaItem's "b" stored as a plain BOOL.
type plainB struct {
	ID string `dynamo:"id,hash"`
	B  bool   `dynamo:"b"`
}

// TestIfCompiledPerSchema: an If option kept and passed to many writes is
// compiled once per table schema, and a table of another schema gets its
// own compilation (a javabool "b" compared as N 1, a plain one as BOOL),
// whichever wrote with the option last.
func TestIfCompiledPerSchema(t *testing.T) {
	opt := If(cName("b").Equal(cValue(true)))
	java, plain := javaTestTable[javaItem](t).p.S, javaTestTable[plainB](t).p.S
	compile := func(s *schema.Schema) *plan.UserCond {
		t.Helper()
		var wo writeOptions
		opt.applyWrite(&wo)
		uc, err := wo.compileIfs(s)
		if err != nil {
			t.Fatal(err)
		}
		return uc
	}
	first := compile(java)
	if again := compile(java); again != first {
		t.Error("the same option compiled again for the same schema")
	}
	for _, c := range []struct {
		s    *schema.Schema
		want types.AttributeValue
	}{{plain, &types.AttributeValueMemberBOOL{Value: true}}, {java, n("1")}, {plain, &types.AttributeValueMemberBOOL{Value: true}}} {
		if got := compile(c.s).Values[":0"]; !reflect.DeepEqual(got, c.want) {
			t.Errorf("sent %s, want %s", avString(got), avString(c.want))
		}
	}
}
