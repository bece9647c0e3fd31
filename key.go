package dynamo

import (
	"math/big"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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
func (p *plan) keyID(item map[string]types.AttributeValue) keyID {
	var id keyID
	id.hashType, id.hash = keyPart(item[p.keyNames[0]])
	if p.hasRangeKey {
		id.rangeType, id.rng = keyPart(item[p.keyNames[1]])
	}
	return id
}

func keyPart(av types.AttributeValue) (byte, string) {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return 'S', v.Value
	case *types.AttributeValueMemberN:
		return 'N', canonNumber(v.Value)
	case *types.AttributeValueMemberB:
		return 'B', string(v.Value)
	}
	return 0, ""
}

// canonNumber returns a canonical form of a DynamoDB number: equal numbers
// give equal strings. Plain integers (what the encoder writes for Go
// integers) are returned as they are.
func canonNumber(s string) string {
	plain := len(s) > 0
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		switch {
		case c == '-' && i == 0 && len(s) > 1:
		case c >= '1' && c <= '9':
		case c == '0':
			// a leading zero ("0", "-0", "01") is not canonical, except "0"
			plain = s == "0" || (i > 0 && !(i == 1 && s[0] == '-'))
		default:
			plain = false
		}
	}
	if plain {
		return s
	}
	// Refuse exponents far outside DynamoDB's range (1E-130 to 1E126)
	// rather than let big.Rat build a huge power of ten.
	if e := strings.IndexAny(s, "eE"); e >= 0 {
		if x, err := strconv.Atoi(s[e+1:]); err != nil || x > 400 || x < -400 {
			return s
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return s
	}
	return r.RatString()
}
