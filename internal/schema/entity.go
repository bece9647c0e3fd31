package schema

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/errs"
)

// stampEntity stores the entity name in item, refusing a field that holds
// another name.
func (s *Schema) StampEntity(table string, item map[string]types.AttributeValue) error {
	f := &s.Fields[s.Entity]
	if av, ok := item[f.Name].(*types.AttributeValueMemberS); ok && av.Value != "" && av.Value != s.EntityName {
		return fmt.Errorf("%w: table %q: field %s.%s holds %q, but %s is entity %q (tag entity=%s): leave the field empty or set it to %q",
			errs.ErrInvalidInput, table, s.Type, f.GoName, av.Value, s.Type, s.EntityName, s.EntityName, s.EntityName)
	}
	item[f.Name] = &types.AttributeValueMemberS{Value: s.EntityName}
	return nil
}

// entityCond is the condition every write of an entity type carries: the
// key holds no item, or an item of this entity.
func (s *Schema) EntityCond() expression.ConditionBuilder {
	return expression.Name(s.Fields[s.Hash].Name).AttributeNotExists().
		Or(expression.Name(s.Fields[s.Entity].Name).Equal(expression.Value(s.EntityName)))
}

// otherEntity reports whether item (nil: none) is an item of another entity
// than the type's, and which (quoted, or "(none)" for an item without the
// attribute). Types without an entity accept every item.
func (s *Schema) OtherEntity(item map[string]types.AttributeValue) (string, bool) {
	if s.Entity < 0 || item == nil {
		return "", false
	}
	av, ok := item[s.Fields[s.Entity].Name].(*types.AttributeValueMemberS)
	if !ok {
		return "(none)", true
	}
	if av.Value != s.EntityName {
		return strconv.Quote(av.Value), true
	}
	return "", false
}

// entityFilter is the filter a Query or Scan of an entity type adds: only
// items of its entity.
func (s *Schema) EntityFilter() expression.ConditionBuilder {
	return expression.Name(s.Fields[s.Entity].Name).Equal(expression.Value(s.EntityName))
}
