package av

import (
	"bytes"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Equal compares two attribute values as DynamoDB's = does: numbers by
// value ("1" and "1.0"), sets without regard to order, lists element by
// element, maps entry by entry; NULL equals NULL.
func Equal(a, b types.AttributeValue) bool {
	switch x := a.(type) {
	case *types.AttributeValueMemberS:
		y, ok := b.(*types.AttributeValueMemberS)
		return ok && x.Value == y.Value
	case *types.AttributeValueMemberN:
		y, ok := b.(*types.AttributeValueMemberN)
		return ok && NumberEqual(x.Value, y.Value)
	case *types.AttributeValueMemberB:
		y, ok := b.(*types.AttributeValueMemberB)
		return ok && bytes.Equal(x.Value, y.Value)
	case *types.AttributeValueMemberBOOL:
		y, ok := b.(*types.AttributeValueMemberBOOL)
		return ok && x.Value == y.Value
	case *types.AttributeValueMemberNULL:
		_, ok := b.(*types.AttributeValueMemberNULL)
		return ok
	case *types.AttributeValueMemberSS:
		y, ok := b.(*types.AttributeValueMemberSS)
		return ok && sameSet(x.Value, y.Value, func(p, q string) bool { return p == q })
	case *types.AttributeValueMemberNS:
		y, ok := b.(*types.AttributeValueMemberNS)
		return ok && sameSet(x.Value, y.Value, NumberEqual)
	case *types.AttributeValueMemberBS:
		y, ok := b.(*types.AttributeValueMemberBS)
		return ok && sameSet(x.Value, y.Value, bytes.Equal)
	case *types.AttributeValueMemberL:
		y, ok := b.(*types.AttributeValueMemberL)
		return ok && slices.EqualFunc(x.Value, y.Value, Equal)
	case *types.AttributeValueMemberM:
		y, ok := b.(*types.AttributeValueMemberM)
		return ok && maps.EqualFunc(x.Value, y.Value, Equal)
	}
	return false
}

// sameSet reports whether two sets (no duplicates within either) hold the
// same elements.
func sameSet[E any](a, b []E, eq func(E, E) bool) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.ContainsFunc(b, func(y E) bool { return eq(x, y) }) {
			return false
		}
	}
	return true
}

// MaxItemSize is DynamoDB's item size limit.
const MaxItemSize = 400 * 1024

// ItemSize is the size DynamoDB counts for an item (its 400 KB limit):
// attribute names plus values (Size). Checked byte for byte against
// DynamoDB Local (the root package's TestItemSizeBoundary).
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for k, v := range item {
		n += len(k) + Size(v)
	}
	return n
}

// Size is the size DynamoDB counts for an attribute value: strings and
// binaries their bytes, numbers as NumberSize says, booleans and nulls one
// byte, sets the sum of their elements, maps and lists 3 bytes plus, per
// element, one byte, the element and (maps) its name.
func Size(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return NumberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		return sum(v.Value, func(s string) int { return len(s) })
	case *types.AttributeValueMemberNS:
		return sum(v.Value, NumberSize)
	case *types.AttributeValueMemberBS:
		return sum(v.Value, func(b []byte) int { return len(b) })
	case *types.AttributeValueMemberL:
		return 3 + sum(v.Value, func(e types.AttributeValue) int { return 1 + Size(e) })
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + Size(e)
		}
		return n
	}
	return 0
}

// sum adds size(e) over the elements of s.
func sum[E any](s []E, size func(E) int) int {
	n := 0
	for _, e := range s {
		n += size(e)
	}
	return n
}

// Clone returns a deep copy of v: its maps, lists, sets and byte slices
// are new, so that the copy shares no memory a caller may change with v
// (strings are immutable and shared). nil for nil.
func Clone(v types.AttributeValue) types.AttributeValue {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return &types.AttributeValueMemberS{Value: x.Value}
	case *types.AttributeValueMemberN:
		return &types.AttributeValueMemberN{Value: x.Value}
	case *types.AttributeValueMemberB:
		return &types.AttributeValueMemberB{Value: bytes.Clone(x.Value)}
	case *types.AttributeValueMemberSS:
		return &types.AttributeValueMemberSS{Value: slices.Clone(x.Value)}
	case *types.AttributeValueMemberNS:
		return &types.AttributeValueMemberNS{Value: slices.Clone(x.Value)}
	case *types.AttributeValueMemberBS:
		bs := make([][]byte, len(x.Value))
		for i, b := range x.Value {
			bs[i] = bytes.Clone(b)
		}
		if x.Value == nil {
			bs = nil
		}
		return &types.AttributeValueMemberBS{Value: bs}
	case *types.AttributeValueMemberBOOL:
		return &types.AttributeValueMemberBOOL{Value: x.Value}
	case *types.AttributeValueMemberNULL:
		return &types.AttributeValueMemberNULL{Value: x.Value}
	case *types.AttributeValueMemberL:
		var l []types.AttributeValue
		if x.Value != nil {
			l = make([]types.AttributeValue, len(x.Value))
			for i, e := range x.Value {
				l[i] = Clone(e)
			}
		}
		return &types.AttributeValueMemberL{Value: l}
	case *types.AttributeValueMemberM:
		return &types.AttributeValueMemberM{Value: CloneItem(x.Value)}
	}
	return v // nil, or a kind this package does not know (immutable to it)
}

// CloneItem returns a deep copy of item (Clone of each value); nil for nil.
func CloneItem(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	if item == nil {
		return nil
	}
	out := make(map[string]types.AttributeValue, len(item))
	for k, e := range item {
		out[k] = Clone(e)
	}
	return out
}
