package plan

import (
	"maps"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/schema"
)

// UserCond is the compiled form of the If options of one call.
type UserCond struct {
	Expr   string
	Names  map[string]string
	Values map[string]types.AttributeValue
	// ifs are the caller's If conditions when expr also holds an entity
	// type's entity condition (compileConds): String shows them alone.
	ifs    []expression.ConditionBuilder
	entity *schema.Schema
}

// CompileConds ANDs the If conditions of a call on a table of schema s into
// one expression, or returns nil when there are none. Values compared with
// javabool and javadate attributes are encoded as those attributes are
// stored, and expression.Name("a.b") names the attribute "a.b" where s has
// one and no "a" (see rewriteCond); a value it cannot convert is an error.
//
// An entity type's writes never land on (or delete) another entity type's
// item: its entity condition is ANDed in, compiled once per type
// (entityCondOf) when there are no If conditions.
func CompileConds(s *schema.Schema, conds []expression.ConditionBuilder) (*UserCond, error) {
	if s.Entity >= 0 {
		if len(conds) == 0 {
			return EntityCondOf(s)
		}
		uc, err := buildConds(s, append([]expression.ConditionBuilder{s.EntityCond()}, conds...))
		if uc != nil {
			uc.ifs, uc.entity = conds, s
		}
		return uc, err
	}
	return buildConds(s, conds)
}

// entityConds holds the entity condition of each entity type compiled
// (*schema → *userCond), shared read-only by every write of the type.
var entityConds sync.Map

// EntityCondOf returns the entity condition of s, an entity type, compiled
// on first use: later calls cost a map lookup.
func EntityCondOf(s *schema.Schema) (*UserCond, error) {
	if uc, ok := entityConds.Load(s); ok {
		return uc.(*UserCond), nil
	}
	uc, err := buildConds(s, []expression.ConditionBuilder{s.EntityCond()})
	if err != nil {
		return nil, err
	}
	uc.entity = s // the entity condition alone: no If to show (userCond.String)
	r, _ := entityConds.LoadOrStore(s, uc)
	return r.(*UserCond), nil
}

// buildConds ANDs conds into one expression; nil when there are none.
func buildConds(s *schema.Schema, conds []expression.ConditionBuilder) (*UserCond, error) {
	if len(conds) == 0 {
		return nil, nil
	}
	c := conds[0]
	if len(conds) > 1 {
		c = expression.And(conds[0], conds[1], conds[2:]...)
	}
	e, err := expression.NewBuilder().WithCondition(c).Build()
	if err != nil {
		return nil, err
	}
	values := e.Values()
	if err := schema.CheckCondValues(e.Names(), values); err != nil {
		return nil, err
	}
	cond, names, err := s.RewriteCond(*e.Condition(), e.Names(), values)
	if err != nil {
		return nil, err
	}
	return &UserCond{Expr: cond, Names: names, Values: values}, nil
}

// String renders the caller's If conditions with their names and values in
// place of the placeholders, for messages; "" for nil and for an entity
// type's entity condition alone (the caller gave no If).
func (uc *UserCond) String() string {
	switch {
	case uc == nil || uc.entity != nil && uc.ifs == nil:
		return ""
	case uc.ifs != nil:
		own, err := buildConds(uc.entity, uc.ifs)
		if err == nil {
			return own.String()
		}
	}
	return schema.ReadableCond(uc.Expr, uc.Names, uc.Values)
}

// versionCond returns the version condition for a caller holding held, and
// adds its value to values. bs (nil: none) is the stored item the write was
// computed from (heldAV).
func (p *Plan) versionCond(held int64, bs *Basis, values map[string]types.AttributeValue) string {
	values[heldVersionPH] = p.heldAV(held, bs)
	if held == 0 {
		values[NullTypePH] = NullTypeAV
		return p.condCreate
	}
	return p.condMatch
}

// JoinConds ANDs two condition expressions, either of which may be empty.
// The join of the version condition and the token's basis condition, the
// condition of every Update of an item this mapper wrote, is the plan's
// (condMatchToken): no allocation.
func (p *Plan) joinConds(a, b string) string {
	if b == tokenBasisCond && a == p.condMatch && p.condMatchToken != "" {
		return p.condMatchToken
	}
	return JoinConds(a, b)
}

// JoinConds ANDs two condition expressions, either of which may be empty.
func JoinConds(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return "(" + a + ") AND (" + b + ")"
}

// withNames returns base with extra added, copying only when there is
// something to add (neither is modified).
func withNames(base, extra map[string]string) map[string]string {
	if len(extra) == 0 {
		return base
	}
	out := make(map[string]string, len(base)+len(extra))
	maps.Copy(out, base)
	maps.Copy(out, extra)
	return out
}

// mergeNames returns base with the user's names added, copying only when
// there is something to add (base itself is never modified).
func mergeNames(base map[string]string, uc *UserCond) map[string]string {
	if uc == nil || len(uc.Names) == 0 {
		if len(base) == 0 {
			return nil
		}
		return base
	}
	out := make(map[string]string, len(base)+len(uc.Names))
	maps.Copy(out, base)
	maps.Copy(out, uc.Names)
	return out
}

func addValues(dst map[string]types.AttributeValue, uc *UserCond) map[string]types.AttributeValue {
	if uc != nil {
		maps.Copy(dst, uc.Values)
	}
	if len(dst) == 0 {
		return nil
	}
	return dst
}
