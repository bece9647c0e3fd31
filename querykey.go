package dynamo

import (
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/schema"
)

// keyRules is what the key checks of internal/plan read of t.
func (t *table) keyRules() plan.KeyRules {
	return plan.KeyRules{Table: t.name, S: t.p.S, Enc: t.avEnc}
}

// listingKey returns the key fields of the table or of index, in key
// order, and whether they are known (plan.KeyRules.ListingKey).
func (t *table) listingKey(index string) (hash, rng []int, known bool) {
	return t.keyRules().ListingKey(index)
}

// keyKind tells the DynamoDB type ('S', 'N' or 'B') the mapper writes for
// key field f; 0 when it cannot be told without a value.
func (t *table) keyKind(f *schema.Field) byte { return t.p.S.KeyKind(f, t.avEnc) }
