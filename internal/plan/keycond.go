package plan

import (
	"slices"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/condexpr"
)

// KeyTerm is one comparison of a Query's key condition: name op values.
type KeyTerm struct {
	Name   string
	Op     string // "=", "<", "<=", ">", ">=", "BETWEEN" or "begins_with"
	Values []types.AttributeValue
}

// KeyCond is a Query's key condition, as the checks before sending see it.
type KeyCond struct {
	Terms []KeyTerm
	// Hash and Rng are the terms on the partition and sort key attributes
	// of what the query reads (table or index), in key order: Hash one per
	// partition attribute, Rng those of the sort attributes the condition
	// uses (a prefix of the sort key, only its last one not "="). Both are
	// empty when the index is not declared in T's tags (its keys are not
	// known).
	Hash, Rng []*KeyTerm
	// slots backs Hash and Rng for keys of up to len(slots) attributes
	// (keySlots), so that placing the terms allocates nothing.
	slots [4]*KeyTerm
}

// keySlots returns empty slots for the terms on nh partition and nr sort
// attributes: in kc.slots (cleared of an earlier placing) when they fit,
// else new.
func (kc *KeyCond) keySlots(nh, nr int) (hash, rng []*KeyTerm) {
	all := kc.slots[:]
	if nh+nr > len(all) {
		all = make([]*KeyTerm, nh+nr)
	}
	clear(all)
	return all[:nh:nh], all[nh : nh+nr : nh+nr]
}

// ParseKeyCondition reads a key condition expression (condexpr.Parse):
// "#0 = :0", "#0 BETWEEN :0 AND :1", "begins_with (#0, :0)", and
// "(c) AND (c)…" of them, as the expression package builds them. ok is
// false for any other form, which the checks then leave to DynamoDB.
func ParseKeyCondition(s string, names map[string]string, values map[string]types.AttributeValue) (terms []KeyTerm, ok bool) {
	p, err := condexpr.Parse(s)
	if err != nil || !p.Conjunction {
		return nil, false
	}
	for _, g := range p.Groups {
		var kt KeyTerm
		switch {
		case g.Fn == "begins_with" && len(g.Operands) == 2:
			kt.Op = g.Fn
		case g.Fn == "" && slices.Contains([]string{"=", "<", "<=", ">", ">=", "BETWEEN"}, g.Op):
			kt.Op = g.Op
		default:
			return nil, false
		}
		key := g.Operands[0].Path
		if key == nil || len(key.Segs) != 1 {
			return nil, false
		}
		if kt.Name, ok = names[key.Segs[0].Text]; !ok {
			return nil, false
		}
		for _, op := range g.Operands[1:] {
			v, ok := values[op.Value]
			if op.Value == "" || !ok {
				return nil, false
			}
			kt.Values = append(kt.Values, v)
		}
		terms = append(terms, kt)
	}
	return terms, len(terms) > 0
}

// KindOf returns 'S', 'N' or 'B' for a key value, 0 for any other type.
func KindOf(av types.AttributeValue) byte {
	switch av.(type) {
	case *types.AttributeValueMemberS:
		return 'S'
	case *types.AttributeValueMemberN:
		return 'N'
	case *types.AttributeValueMemberB:
		return 'B'
	}
	return 0
}

func KindName(k byte) string {
	switch k {
	case 'S':
		return "string (S)"
	case 'N':
		return "number (N)"
	case 'B':
		return "binary (B)"
	}
	return "non-scalar"
}

// CheckKeyTermValues checks the names and values of a key condition's
// terms, whatever the keys: valid UTF-8, numbers DynamoDB stores, scalar
// key values, none empty, BETWEEN's bounds in order. fail makes the error.
func CheckKeyTermValues(terms []KeyTerm, fail func(format string, args ...any) error) error {
	for _, kt := range terms {
		if !utf8.ValidString(kt.Name) {
			return fail("the key condition names %q, which is not valid UTF-8: name a key attribute", kt.Name)
		}
		for _, v := range kt.Values {
			switch a := v.(type) {
			case *types.AttributeValueMemberS:
				if !utf8.ValidString(a.Value) {
					return fail("the key condition's value for %q, %.40q, is not valid UTF-8, which DynamoDB would silently replace (and match another key): pass valid UTF-8 text", kt.Name, a.Value)
				}
			case *types.AttributeValueMemberN:
				if err := CheckNumber(a.Value); err != nil {
					return fail("the key condition's value for %q: %v", kt.Name, err)
				}
			case *types.AttributeValueMemberB:
			default:
				return fail("the key condition compares %q with a %T: key values are strings, numbers or binary", kt.Name, v)
			}
			if keyValueEmpty(v) {
				return fail("the key condition's value for %q is empty, which no key can be: leave out the condition on %q to read all of its values", kt.Name, kt.Name)
			}
		}
		if kt.Op == "BETWEEN" && CompareKeyValues(kt.Values[0], kt.Values[1]) == 1 {
			return fail("the key condition has %q BETWEEN %s AND %s: the lower bound comes first", kt.Name, ShortScalar(kt.Values[0]), ShortScalar(kt.Values[1]))
		}
	}
	return nil
}

func keyValueEmpty(av types.AttributeValue) bool {
	switch a := av.(type) {
	case *types.AttributeValueMemberS:
		return a.Value == ""
	case *types.AttributeValueMemberB:
		return len(a.Value) == 0
	}
	return false
}
