package plan

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/errs"
	"github.com/ddbkit/dynamo/internal/schema"
)

type entityOrder struct {
	PK   string `dynamo:"pk,hash"`
	Kind string `dynamo:"kind,entity=order"`
}

// A Query of an index keyed by the entity attribute is taken only when its
// key condition fixes that attribute to the type's entity name.
func TestCheckEntityKeyTermWantsTheEntityFixed(t *testing.T) {
	s, err := schema.For(reflect.TypeFor[entityOrder]())
	if err != nil {
		t.Fatal(err)
	}
	term := func(op, v string) *KeyCond {
		return &KeyCond{Terms: []KeyTerm{{Name: "kind", Op: op, Values: []types.AttributeValue{&types.AttributeValueMemberS{Value: v}}}}}
	}
	if err := CheckEntityKeyTerm(s, "Query", "T", "byKind", term("=", "order")); err != nil {
		t.Errorf("kind = order: %v", err)
	}
	for name, c := range map[string]struct {
		kc   *KeyCond
		want string
	}{
		"unread":       {nil, "a Query cannot filter on"},
		"other entity": {term("=", "invoice"), `selects entity "invoice"`},
		"a range":      {term("begins_with", "order"), "a Query cannot filter on"},
	} {
		err := CheckEntityKeyTerm(s, "Query", "T", "byKind", c.kc)
		if !errors.Is(err, errs.ErrInvalidInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want ErrInvalidInput saying %q", name, err, c.want)
		}
	}
}
