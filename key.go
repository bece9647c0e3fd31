package dynamo

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/plan"
)

// Item identity, defined once: batches (duplicate keys), transactions (two
// members on one item) and Table.Update's queue (one turn per item) all
// tell items apart with keyID, as DynamoDB does.

// keyID identifies the primary key of an item the way DynamoDB does:
// numbers are compared by value, so "1" and "1.0" are the same key. It is
// comparable and built without allocating for string and integer keys.
type keyID struct {
	hashType, rangeType byte // 'S', 'N', 'B'; 0 for anything else
	hash, rng           string
}

// keyID returns the keyID of item (a key or a whole item).
func keyIDOf(p *plan.Plan, item map[string]types.AttributeValue) keyID {
	var id keyID
	id.hashType, id.hash = keyPart(item[p.KeyNames[0]])
	if p.HasRangeKey {
		id.rangeType, id.rng = keyPart(item[p.KeyNames[1]])
	}
	return id
}

func keyPart(a types.AttributeValue) (byte, string) {
	switch v := a.(type) {
	case *types.AttributeValueMemberS:
		return 'S', v.Value
	case *types.AttributeValueMemberN:
		return 'N', av.Canonical(v.Value)
	case *types.AttributeValueMemberB:
		return 'B', string(v.Value)
	}
	return 0, ""
}
