package dynamo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
)

// Version math and the classification of failed conditions. Pure functions,
// unit-tested without a network.

// versionHeld reports whether the version condition of a caller holding
// held is satisfied by a stored item as described: unsaved (0) requires no
// stored version or a stored 0 (Java's DynamoDBMapper CLOBBER, holding -1,
// stores 0, and backfills seed it), any other value requires that exact
// stored version.
func versionHeld(held int64, exists, hasVersion bool, found int64) bool {
	if held == 0 {
		return !exists || !hasVersion || found == 0
	}
	return exists && hasVersion && found == held
}

// storedVersion reads the version attribute of a stored item. A number that
// is an integer beyond int64 (a uint64 version past MaxInt64, say) is a
// version all the same: ok is true, v is math.MaxInt64 and big is true, so
// that it is reported as the version it is, never as "no version".
func storedVersion(item map[string]types.AttributeValue, attr string) (v int64, ok, big bool) {
	n, isN := item[attr].(*types.AttributeValueMemberN)
	if !isN {
		return 0, false, false
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err == nil {
		return v, true, false
	}
	if errors.Is(err, strconv.ErrRange) {
		if n.Value[0] == '-' {
			return math.MinInt64, true, true
		}
		return math.MaxInt64, true, true
	}
	return 0, false, false
}

// newToken returns a fresh random write token. It only needs to be unique,
// not secret: the runtime's ChaCha8 generator suffices.
// Its first byte is never txTokenMark, which marks the tokens transactions
// derive from a request token (txWriteToken): those repeat when a
// transaction is sent again with the same request token after DynamoDB
// forgot it (10 minutes), so they prove nothing about an incarnation.
func newToken() []byte {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	if b[0] == txTokenMark {
		b[0] = 1
	}
	return b[:]
}

// txTokenMark is the first byte of a token derived from a request token.
const txTokenMark = 0

// uniqueToken reports whether a stored write token is one that never
// repeats (not derived from a transaction's request token).
func uniqueToken(b []byte) bool { return len(b) > 0 && b[0] != txTokenMark }

// isOwnWrite reports whether a stored item carries the token of our write,
// i.e. the write was applied although its response was lost.
func isOwnWrite(item map[string]types.AttributeValue, attr string, token []byte) bool {
	if token == nil || item == nil {
		return false
	}
	b, ok := item[attr].(*types.AttributeValueMemberB)
	return ok && bytes.Equal(b.Value, token)
}

func asConditionError(err error) (*ConditionError, bool) {
	var ce *ConditionError
	ok := errors.As(err, &ce)
	return ce, ok
}

// conditionFailure builds the ConditionError for a write by a caller
// holding held (0 for unversioned types) whose condition failed with the
// stored item old (nil: absent). checkedVersion is false for writes that
// carried no version condition (SaveClobber), which can only fail a user's
// condition.
func (p *plan) conditionFailure(table string, key map[string]types.AttributeValue, held int64, checkedVersion bool,
	old map[string]types.AttributeValue, cause error, decode func(map[string]types.AttributeValue, any) error) *ConditionError {
	ce := &ConditionError{
		Err: ErrConditionFailed, Table: table, Key: key, HeldVersion: held,
		Exists: old != nil, Item: old, Cause: cause, decode: decode,
	}
	if other, ok := p.s.otherEntity(old); ok {
		// Whatever the versions, no write of this type lands there: not a
		// conflict that reloading resolves, nor a failed If.
		defer func() {
			ce.Err = ErrConditionFailed
			ce.reason = fmt.Sprintf("the key holds an item of entity %s, not %q: a %s never writes over another entity's item", other, p.s.entityName, p.s.typ)
		}()
	}
	if p.s.version < 0 {
		return ce
	}
	ce.versionAttr, ce.checked = p.s.fields[p.s.version].name, checkedVersion
	var big bool
	ce.FoundVersion, ce.HasVersion, big = storedVersion(old, ce.versionAttr)
	if big {
		ce.foundText = old[ce.versionAttr].(*types.AttributeValueMemberN).Value
	}
	if checkedVersion && (big || !versionHeld(held, ce.Exists, ce.HasVersion, ce.FoundVersion)) {
		ce.Err = ErrVersionConflict
	}
	return ce
}

// DynamoDB's item size limit.
const maxItemSize = av.MaxItemSize
