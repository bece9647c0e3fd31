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

// storedNullVersion reports, for err, the certain failure of a write
// without a version condition (SaveClobber, Table.Add) carrying the stored
// item, whether that item's version is NULL (another writer's), which
// advanceVersion handles with nullVersion; known is false for any other
// error (an unknown outcome among them) and for an unversioned type.
func (p *plan) storedNullVersion(err error) (null, known bool) {
	var ce *ConditionError
	if p.s.version < 0 || !errors.As(err, &ce) || ce.Item == nil || errors.Is(err, ErrUnknownOutcome) {
		return false, false
	}
	return isNull(ce.Item[p.s.fields[p.s.version].name]), true
}

// maxNullAttempts bounds the requests of one Add or SaveClobber: each after
// the first is sent because another writer stored or replaced a NULL
// meanwhile (a changed attribute's, the version's).
const maxNullAttempts = 4
