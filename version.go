package dynamo

import (
	"errors"
	"math"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Version math: which stored versions a caller's held version accepts, and
// reading the stored version. Pure functions, unit-tested without a
// network. Write tokens are in token.go, ConditionError's construction in
// errors.go.

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
