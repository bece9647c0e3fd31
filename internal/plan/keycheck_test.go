package plan

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/errs"
	"github.com/ddbkit/dynamo/internal/schema"
)

type kcEvent struct {
	P     string `dynamo:"p,hash"`
	N     int    `dynamo:"n,range"`
	Owner string `dynamo:"owner" index:"byOwner,hash"`
}

func kcRules(t *testing.T) KeyRules {
	t.Helper()
	s, err := schema.For(reflect.TypeFor[kcEvent]())
	if err != nil {
		t.Fatal(err)
	}
	return KeyRules{Table: "Events", S: s, Enc: attributevalue.NewEncoder()}
}

// The key checks refuse, naming the fix, what DynamoDB would refuse.
func TestKeyRulesRefuseBadKeyConditions(t *testing.T) {
	K, V := expression.Key, expression.Value
	r := kcRules(t)
	for _, tc := range []struct {
		index string
		kc    expression.KeyConditionBuilder
		want  string // "" accepted
	}{
		{"", K("p").Equal(V("a")).And(K("n").Between(V(1), V(2))), ""},
		{"", K("n").Equal(V(1)), `does not fix the partition key "p"`},
		{"", K("P").Equal(V("a")), `did you mean "p"?`},
		{"", K("owner").Equal(V("a")), `add Index("byOwner")`},
		{"", K("p").Equal(V(1)), `compares the partition key "p", a string (S), with a number (N) value 1`},
		{"", K("p").Equal(V("a")).And(K("n").BeginsWith("1")), "begins_with on the number sort key"},
		{"byOwner", K("p").Equal(V("a")), "it is the table's partition key; leave out Index"},
		{"byOwner", K("owner").Equal(V("a")), ""},
	} {
		e, err := expression.NewBuilder().WithKeyCondition(tc.kc).Build()
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.CheckKeyCondition("Query", tc.index, *e.KeyCondition(), e.Names(), e.Values())
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", *e.KeyCondition(), err)
		case tc.want != "" && (!errors.Is(err, errs.ErrInvalidInput) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", *e.KeyCondition(), err, tc.want)
		}
	}
}

// A cursor position is checked against the listing, the key schema and
// the key condition.
func TestKeyRulesCheckPositions(t *testing.T) {
	r := kcRules(t)
	S := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	N := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	kc := &KeyCond{Hash: []*KeyTerm{{Name: "p", Op: "=", Values: []types.AttributeValue{S("a")}}}}
	for _, tc := range []struct {
		p     Position
		index string
		want  string
	}{
		{Position{Key: map[string]types.AttributeValue{"p": S("a"), "n": N("1")}}, "", ""},
		{Position{Key: map[string]types.AttributeValue{"p": S("a")}}, "", `lacks the key attribute "n"`},
		{Position{Key: map[string]types.AttributeValue{"p": S("a"), "n": S("1")}}, "", `"n" is a string (S), but the table stores it as a number (N)`},
		{Position{Key: map[string]types.AttributeValue{"p": S("b"), "n": N("1")}}, "", "in the partition p = \"b\""},
		{Position{Index: "byOwner", Key: map[string]types.AttributeValue{"p": S("a"), "n": N("1")}}, "", "made reading index \"byOwner\""},
	} {
		err := r.CheckPosition(tc.p, tc.index, 0, 0, kc)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.p, err)
		case tc.want != "" && (!errors.Is(err, errs.ErrInvalidInput) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want %q", tc.p, err, tc.want)
		}
	}
}
