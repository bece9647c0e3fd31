package dynamo

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/plan"
)

// Write tokens: the random token a versioned write stores with the item, by
// which a write whose response was lost is recognised as applied.

// newToken returns a fresh random write token. It only needs to be unique,
// not secret: the runtime's ChaCha8 generator suffices.
// Its first byte is never txTokenMark, which marks the tokens transactions
// derive from a request token (plan.TxWriteToken): those repeat when a
// transaction is sent again with the same request token after DynamoDB
// forgot it (10 minutes), so they prove nothing about an incarnation.
func newToken() []byte {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	if b[0] == plan.TxTokenMark {
		b[0] = 1
	}
	return b[:]
}

// isOwnWrite reports whether a stored item carries the token of our write,
// i.e. the write was applied although its response was lost.
func isOwnWrite(item map[string]types.AttributeValue, attr string, token []byte) bool {
	if token == nil || item == nil {
		return false
	}
	b, ok := item[attr].(*types.AttributeValueMemberB)
	return ok && bytes.Equal(b.Value, token)
}
