package plan

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/errs"
	"github.com/ddbkit/dynamo/internal/schema"
)

// CheckEntityKeyTerm refuses the key condition kc (nil: one the mapper
// cannot read) of a Query op on table's index, keyed by the entity
// attribute of s, unless it fixes that attribute to s's entity name with
// Equal: in place of the filter a Query of an entity type adds elsewhere
// (DynamoDB refuses a filter on a key attribute of what it queries).
func CheckEntityKeyTerm(s *schema.Schema, op, table, index string, kc *KeyCond) error {
	attr := s.Fields[s.Entity].Name
	var term *KeyTerm
	if kc != nil {
		for i := range kc.Terms {
			if kc.Terms[i].Name == attr {
				term = &kc.Terms[i]
			}
		}
	}
	if term != nil && term.Op == "=" && len(term.Values) == 1 {
		v, ok := term.Values[0].(*types.AttributeValueMemberS)
		if ok && v.Value == s.EntityName {
			return nil
		}
		if ok {
			return fmt.Errorf("%w: %s on table %q index %q: the key condition selects entity %q (%s = %q), not %s's %q: query it through its own Table, or Entities.Query",
				errs.ErrInvalidInput, op, table, index, v.Value, attr, v.Value, s.Type, s.EntityName)
		}
	}
	return fmt.Errorf("%w: %s on table %q index %q: the entity attribute %q is a key of the index, which a Query cannot filter on: add expression.Key(%q).Equal(expression.Value(%q))",
		errs.ErrInvalidInput, op, table, index, attr, attr, s.EntityName)
}
