package dynamo

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

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
	// carries the version DynamoDB wrote. On Delete, SaveClobber deletes
	// without a condition.
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
	return "SaveBehavior(" + itoa(int64(b)) + ")"
}

// ReadOption configures Load.
type ReadOption func(*readOptions)

type readOptions struct {
	consistent bool
}

// applyReadOptions returns the read options opts select. The options are
// unknown functions, so what they are applied to escapes to the heap: a call
// without options skips this and allocates nothing for them.
func applyReadOptions(opts []ReadOption) readOptions {
	ro := new(readOptions)
	for _, fn := range opts {
		if fn != nil {
			fn(ro)
		}
	}
	return *ro
}

// ConsistentRead makes Load read with strong consistency (twice the read
// capacity of the default eventually consistent read).
func ConsistentRead() ReadOption {
	return func(o *readOptions) { o.consistent = true }
}

// WriteOption configures Save, Delete and Update, and the members of a
// write transaction (Table.TxSave, TxDelete, TxCheck): WithSaveBehavior and
// If. Retries are not a WriteOption: Save and Delete send one write, and
// Update takes its RetryPolicy from the mapper (WithRetry).
type WriteOption func(*writeOptions)

type writeOptions struct {
	behavior SaveBehavior
	conds    []expression.ConditionBuilder
	// step is how many saves' worth a save advances the version, 0 meaning
	// 1: Update's combined write of n changes advances it by n (one step
	// per change). now, when not zero, is the time the save is made at
	// (clock versions), so that Update's copies agree with its write.
	step int64
	now  time.Time
	// mustExist: Update and Add fail with ErrNotFound on a missing item
	// (MustExist).
	mustExist bool
}

// applyWriteOptions returns the defaults with opts applied; see
// applyReadOptions for why it is a separate function.
func applyWriteOptions(opts []WriteOption) writeOptions {
	wo := new(writeOptions)
	for _, fn := range opts {
		if fn != nil {
			fn(wo)
		}
	}
	return *wo
}

// WithSaveBehavior selects how the item is written (default SaveUpdate). On
// Delete only SaveClobber has an effect: it deletes without a version check.
func WithSaveBehavior(b SaveBehavior) WriteOption {
	return func(o *writeOptions) { o.behavior = b }
}

// If adds a condition that must hold for the write to happen. It is ANDed
// with the version condition; several If options are ANDed together. A write
// refused by it (while the version matched) fails with ErrConditionFailed.
//
// Values in cond are marshaled by the expression package with the default
// attributevalue options, not the mapper's: pass types.AttributeValue values
// where that matters. Values compared with a javabool or javadate attribute
// (by =, <>, <, <=, >, >=, BETWEEN, IN, contains or begins_with, also at a
// path inside a document) are sent as that attribute is stored, so
// expression.Name("paid").Equal(expression.Value(true)) compares with the
// number 1; a value that cannot be converted (a string compared with a
// javabool attribute, say) is an error wrapping ErrInvalidInput before
// anything is sent, and dynamo.JavaBool and dynamo.JavaDate give the stored
// form by hand.
//
// Likewise for attributes of text types (types with MarshalText and
// UnmarshalText, such as a uuid-style [16]byte, netip.Addr or net.IP, which
// the mapper stores as the string MarshalText returns): a string is sent as
// it is, a value of a byte-array or []byte text type (which
// expression.Value makes a binary) as its MarshalText string, so
// expression.Name("owner").Equal(expression.Value(id)) matches. A value
// expression.Value cannot encode faithfully — a netip.Addr, whose fields are
// unexported, becomes an empty map — is refused with ErrInvalidInput: pass
// its text, expression.Value(addr.String()). DynamoDB orders these
// attributes by their text ("99" >= "100" for a big.Int), so an ordering
// comparison (<, <=, >, >=, BETWEEN) of one with anything but a string is
// refused with ErrInvalidInput (see "Text types" in the package doc).
//
// expression.Name splits a name at its dots into a path. When the type has
// a top-level attribute named "a.b" and none named "a",
// expression.Name("a.b") is taken to mean that attribute; otherwise (or to
// be explicit) use expression.NameNoDotSplit("a.b").
//
// When the write fails because of cond, the error's message (and
// ConditionError.Condition) shows the condition with its names and values.
func If(cond expression.ConditionBuilder) WriteOption {
	return func(o *writeOptions) { o.conds = append(o.conds, cond) }
}

// MustExist makes Update and Add require that the item exists: when the key
// holds no item, Update fails without calling its function, and Add without
// creating one, with an error satisfying errors.Is(err, ErrNotFound). Add
// checks it in DynamoDB, in the same request (a condition that the item's
// hash key exists), so that a concurrent Delete cannot slip in between; a
// refused Add's error also carries the *ConditionError. Without it, both
// create a missing item (Update calls its function with a T holding only
// the key and version zero).
func MustExist() WriteOption {
	return func(o *writeOptions) { o.mustExist = true }
}
