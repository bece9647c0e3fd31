package av

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Equal is DynamoDB's =: another spelling of a number, a set in another
// order, a list or map of such values are equal; Equal is symmetric and
// agrees with NumberEqual; sizes add up as ItemSize says and do not depend
// on a number's spelling beyond its value.
func FuzzValues(f *testing.F) {
	f.Add("1", "2.50", "k")
	f.Add("-0", "1e2", "")
	f.Add("x", "1", "a")
	f.Fuzz(func(t *testing.T, a, b, k string) {
		n := func(s string) types.AttributeValue { return &types.AttributeValueMemberN{Value: s} }
		if Equal(n(a), n(b)) != NumberEqual(a, b) || Equal(n(a), n(b)) != Equal(n(b), n(a)) {
			t.Fatalf("Equal(N %q, N %q) disagrees with NumberEqual or is not symmetric", a, b)
		}
		ca, cb := Canonical(a), Canonical(b)
		if !Equal(n(a), n(ca)) {
			t.Fatalf("%q is not equal to its canonical form %q", a, ca)
		}
		if _, _, exp, ok := Scan(a); ok && exp >= MinExp && exp <= MaxExp && NumberSize(a) != NumberSize(ca) {
			t.Fatalf("NumberSize(%q) = %d, NumberSize(%q) = %d", a, NumberSize(a), ca, NumberSize(ca))
		}
		if !NumberEqual(a, b) {
			ns1 := &types.AttributeValueMemberNS{Value: []string{a, b}}
			ns2 := &types.AttributeValueMemberNS{Value: []string{cb, ca}}
			if !Equal(ns1, ns2) {
				t.Fatalf("sets {%q, %q} and {%q, %q} differ", a, b, cb, ca)
			}
		}
		l1 := &types.AttributeValueMemberL{Value: []types.AttributeValue{n(a), &types.AttributeValueMemberS{Value: b}}}
		l2 := &types.AttributeValueMemberL{Value: []types.AttributeValue{n(ca), &types.AttributeValueMemberS{Value: b}}}
		m1 := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{k: l1}}
		m2 := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{k: l2}}
		if !Equal(m1, m2) || Equal(m1, l1) {
			t.Fatalf("maps of lists holding %q and %q", a, ca)
		}
		item := map[string]types.AttributeValue{k: m1, k + "x": n(a)}
		want := len(k) + 3 + 1 + len(k) + (3 + 1 + NumberSize(a) + 1 + len(b)) + len(k) + 1 + NumberSize(a)
		if got := ItemSize(item); got != want {
			t.Fatalf("ItemSize = %d, want %d", got, want)
		}
	})
}
