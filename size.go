package dynamo

import (
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	avs "github.com/ddbkit/dynamo/internal/av"
)

// DynamoDB's item size limit.
const maxItemSize = avs.MaxItemSize

// writtenSize is the size DynamoDB will count for item once written with
// version next and the write token token (nil: none): the version attribute
// as encoded (the version held) is counted as next, the token attribute as
// the token. put says whether item is written whole (PutItem); an
// UpdateItem removes (or leaves alone) the attributes that are NULL instead
// of storing them, so they do not count.
func (t *table) writtenSize(item map[string]types.AttributeValue, next int64, token []byte, put bool) int {
	s := t.p.S
	var version, tokenAttr string
	if s.Version >= 0 {
		version = s.Fields[s.Version].Name
	}
	if token != nil {
		tokenAttr = t.p.TokenAttr
	}
	n := 0
	for k, v := range item {
		switch {
		case k == version || k == tokenAttr && k != "":
			// counted below as written
		case !put && isNull(v):
			// removed or left alone by UpdateItem, not stored
		default:
			n += len(k) + avs.Size(v)
		}
	}
	if version != "" {
		n += len(version) + avs.NumberSize(strconv.FormatInt(next, 10))
	}
	if tokenAttr != "" {
		n += len(tokenAttr) + len(token)
	}
	return n
}

// sizeOf is writtenSize, from the sizes the codec counted while encoding
// item when it did (sz.ok): the same count without walking the item again.
func (t *table) sizeOf(item map[string]types.AttributeValue, sz itemSizes, next int64, token []byte, put bool) int {
	if !sz.ok {
		return t.writtenSize(item, next, token, put)
	}
	s := t.p.S
	n := sz.total
	if !put {
		n -= sz.nulls
	}
	if s.Version >= 0 {
		name := s.Fields[s.Version].Name
		if v, ok := item[name]; ok && (put || !isNull(v)) {
			n -= len(name) + avs.Size(v) // counted below as written
		}
		n += len(name) + avs.NumberSize(strconv.FormatInt(next, 10))
	}
	if token != nil && t.p.TokenAttr != "" {
		// The codec's item never holds the token attribute: NewTable
		// refuses a field of its name on a versioned type.
		n += len(t.p.TokenAttr) + len(token)
	}
	return n
}

func isNull(av types.AttributeValue) bool {
	_, null := av.(*types.AttributeValueMemberNULL)
	return null
}

// isZero reports whether v is the number 0, however spelled ("0", "-0",
// "0.0", "0E5").
func isZero(v types.AttributeValue) bool {
	n, ok := v.(*types.AttributeValueMemberN)
	return ok && avs.NumberEqual(n.Value, "0")
}
