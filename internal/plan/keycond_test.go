package plan

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// parseKeyCondition reads every form the expression package builds; if a
// new SDK changes them, this test says so (the checks would be skipped).
func TestParseKeyConditionForms(t *testing.T) {
	K, V := expression.Key, expression.Value
	cases := []struct {
		kc   expression.KeyConditionBuilder
		want string // name op, …
	}{
		{K("p").Equal(V("a")), "p ="},
		{K("p").Equal(V("a")).And(K("n").LessThan(V(1))), "p =, n <"},
		{K("p").Equal(V("a")).And(K("n").LessThanEqual(V(1))), "p =, n <="},
		{K("p").Equal(V("a")).And(K("n").GreaterThan(V(1))), "p =, n >"},
		{K("p").Equal(V("a")).And(K("n").GreaterThanEqual(V(1))), "p =, n >="},
		{K("p").Equal(V("a")).And(K("n").Between(V(1), V(2))), "p =, n BETWEEN"},
		{K("p").Equal(V("a")).And(K("n").BeginsWith("x")), "p =, n begins_with"},
		{K("n").BeginsWith("x"), "n begins_with"},
		{expression.KeyAnd(K("a").Equal(V(1)), K("b").Equal(V(2)), K("c").Between(V(1), V(2))), "a =, b =, c BETWEEN"},
		{K("a (b)").Equal(V(") AND (")).And(K("b, c").BeginsWith(", ")), "a (b) =, b, c begins_with"},
	}
	for _, tc := range cases {
		e, err := expression.NewBuilder().WithKeyCondition(tc.kc).Build()
		if err != nil {
			t.Fatal(err)
		}
		terms, ok := ParseKeyCondition(*e.KeyCondition(), e.Names(), e.Values())
		if !ok {
			t.Errorf("%q not understood", *e.KeyCondition())
			continue
		}
		var got []string
		for _, kt := range terms {
			got = append(got, kt.Name+" "+kt.Op)
			if n := map[string]int{"BETWEEN": 2}[kt.Op]; len(kt.Values) != max(n, 1) {
				t.Errorf("%q: %s has %d values", *e.KeyCondition(), kt.Name, len(kt.Values))
			}
		}
		if g := strings.Join(got, ", "); g != tc.want {
			t.Errorf("%q read as %q, want %q", *e.KeyCondition(), g, tc.want)
		}
	}
}

// Numbers compare by value, whatever their notation.
func TestCompareKeyNumbers(t *testing.T) {
	ordered := [][]string{
		{"-9.9999999999999999999999999999999999999e125"},
		{"-1500", "-1.5e3", "-0001500.000", "-15E+2"},
		{"-1e-130", "-0.0000000001e-120"},
		{"0", "-0", "0e999999", "0.000", "-0.0e-5"},
		{"1e-130"},
		{"0.05", ".05", "5e-2", "0.5E-1", "500e-4"},
		{"1", "1.0", "1e0", "0.1e1", "10e-1", "01"},
		{"12345678901234567890123456789012345678"},
		{"12345678901234567890123456789012345679"},
		{"9.9999999999999999999999999999999999999e125"},
	}
	for i, group := range ordered {
		for _, a := range group {
			if err := CheckNumber(a); err != nil {
				t.Fatal(err)
			}
			for j, other := range ordered {
				for _, b := range other {
					want := 0
					if i < j {
						want = -1
					} else if i > j {
						want = 1
					}
					if got := CompareKeyValues(qcN(a), qcN(b)); got != want {
						t.Errorf("compare(%s, %s) = %d, want %d", a, b, got, want)
					}
				}
			}
		}
	}
	if CompareKeyValues(qcN("1"), qcS("1")) != 2 || CompareKeyValues(qcB(1), qcS("\x01")) != 2 {
		t.Error("values of different types compare as ordered")
	}
}

func qcS(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func qcN(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
func qcB(v ...byte) types.AttributeValue {
	return &types.AttributeValueMemberB{Value: v}
}
