package dynamo

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Decode decodes item, an item of t's table as DynamoDB stores it (a stream
// image, an export line), into a new T with t's codec, as Load decodes what
// it reads. An item of another entity than T's is refused with an error
// wrapping ErrNotFound; one that does not decode is an error naming the
// table, the item's key and the attribute. item is not modified. It sends
// nothing.
func (t *Table[T]) Decode(item map[string]types.AttributeValue) (T, error) {
	if err := notOurs(t.p.S, t.name, t.pickKey(item), item); err != nil {
		var zero T
		return zero, err
	}
	return t.decode(item)
}

// Attributes names the attributes T's tags give a role: the table's keys,
// the version, the TTL attribute and the entity attribute ("" for a role
// no field has), and the entity name T's items hold there.
type Attributes struct {
	Hash, Range, Version, TTL, Entity string
	EntityName                        string
}

// Attributes returns the attributes of T's roles. It sends nothing.
func (t *table) Attributes() Attributes {
	s := t.p.S
	name := func(i int) string {
		if i < 0 {
			return ""
		}
		return s.Fields[i].Name
	}
	return Attributes{Hash: name(s.Hash), Range: name(s.Range), Version: name(s.Version),
		TTL: name(s.TTL), Entity: name(s.Entity), EntityName: s.EntityName}
}
