package plan

import "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

// SaveBehavior selects how Save writes an item. The zero value is SaveUpdate.
type SaveBehavior int

const (
	// SaveUpdate (the default) writes with UpdateItem: modeled attributes are
	// set, nil and omitted ones removed; attributes the struct does not model
	// are kept. The version is checked and incremented.
	SaveUpdate SaveBehavior = iota
	// SaveUpdateSkipNulls writes with UpdateItem like SaveUpdate, but nil and
	// omitted attributes are left as they are. The returned copy is the whole
	// item as stored after the write.
	SaveUpdateSkipNulls
	// SavePut writes with PutItem: the whole item is replaced, including
	// attributes the struct does not model. The version is still checked.
	SavePut
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
	SaveClobber
	// SaveAppendSet is SaveUpdateSkipNulls, except that set attributes (SS,
	// NS, BS) are added to the stored sets instead of replacing them.
	SaveAppendSet
)

func (b SaveBehavior) String() string {
	switch b {
	case SaveUpdate:
		return "SaveUpdate"
	case SaveUpdateSkipNulls:
		return "SaveUpdateSkipNulls"
	case SavePut:
		return "SavePut"
	case SaveClobber:
		return "SaveClobber"
	case SaveAppendSet:
		return "SaveAppendSet"
	}
	return "SaveBehavior(" + Itoa(int64(b)) + ")"
}

// TxTokenMark is the first byte of a token derived from a request token.
const TxTokenMark = 0

// UniqueToken reports whether a stored write token is one that never
// repeats (not derived from a transaction's request token).
func UniqueToken(b []byte) bool { return len(b) > 0 && b[0] != TxTokenMark }

func isNull(av types.AttributeValue) bool {
	_, null := av.(*types.AttributeValueMemberNULL)
	return null
}
