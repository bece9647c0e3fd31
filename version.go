package dynamo

import (
	"fmt"
	"math"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/plan"
)

// Versions: the refusal of a held version no write takes, and SaveBehavior.
// Which stored versions a held one accepts and reading a stored version are
// internal/plan's (storedversion.go); write tokens are in token.go,
// ConditionError's construction in errors.go.

// heldVersionError is the error of a write of an item (key) whose version
// field holds a version no write takes: negative, or beyond int64 (a uint64
// field; schema.versionOf). Every write (Save, Delete, transactions)
// refuses it with this one message.
func (t *table) heldVersionError(key map[string]types.AttributeValue) error {
	s := t.p.S
	return fmt.Errorf("%w: table %q key %s: version field %s.%s holds a version no write takes (negative, or over %d): repair it, or Delete with SaveClobber at version 0",
		ErrInvalidInput, t.name, formatKey(key), s.Type, s.Fields[s.Version].GoName, int64(math.MaxInt64))
}

// SaveBehavior selects how Save writes an item. The zero value is SaveUpdate.
// (Defined in internal/plan, whose update and put expressions depend on it.)
type SaveBehavior = plan.SaveBehavior

const (
	// SaveUpdate (the default) writes with UpdateItem: modeled attributes are
	// set, nil and omitted ones removed; attributes the struct does not model
	// are kept. The version is checked and incremented.
	SaveUpdate = plan.SaveUpdate
	// SaveUpdateSkipNulls writes with UpdateItem like SaveUpdate, but nil and
	// omitted attributes are left as they are. The returned copy is the whole
	// item as stored after the write.
	SaveUpdateSkipNulls = plan.SaveUpdateSkipNulls
	// SavePut writes with PutItem: the whole item is replaced, including
	// attributes the struct does not model. The version is still checked.
	SavePut = plan.SavePut
	// SaveClobber writes like SaveUpdate without a version condition. The
	// version is incremented by DynamoDB (ADD), so it never moves backwards:
	// whoever holds an older version conflicts afterwards. The returned copy
	// carries the version DynamoDB wrote. On Delete and BatchDelete,
	// SaveClobber deletes without a condition.
	//
	// BatchSave, which cannot increment inside DynamoDB, writes each item
	// with the version after the one it holds (held + the versionstep; for
	// an unsaved item the first version), with no check: Java
	// DynamoDBMapper's CLOBBER. Unlike Save's, it can move a stored version
	// backwards (an item stored at version 5 and saved holding 2 is stored
	// at 3), after which holders of the overwritten versions may save over
	// it without a conflict: use it for loading data nobody else writes
	// concurrently. (Java's batchSave skips the version check silently;
	// BatchSave asks for this option.)
	SaveClobber = plan.SaveClobber
	// SaveAppendSet is SaveUpdateSkipNulls, except that set attributes (SS,
	// NS, BS) are added to the stored sets instead of replacing them.
	SaveAppendSet = plan.SaveAppendSet
)
