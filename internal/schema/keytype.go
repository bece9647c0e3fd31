package schema

import (
	"fmt"
	"reflect"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/codec"
	"github.com/ddbkit/dynamo/internal/errs"
)

// DynamoDB's limits on the size of key values, of tables and indexes.
const (
	MaxPartitionKeyLen = 2048
	MaxSortKeyLen      = 1024
)

// SetIt is the fix of a key value that is unset or empty.
const SetIt = "set it before the call"

// Encoder encodes a Go value with the mapper's attributevalue encoder
// (*attributevalue.Encoder): what tells the key type of a custom encoding.
type Encoder interface {
	Encode(in any) (types.AttributeValue, error)
}

// KeyValueFault says what DynamoDB would refuse in v as a key value of at
// most limit bytes, and how to fix it; "" when v is fine. absentOK: v may be
// absent or NULL (an index key: the item is then left out of the index).
func KeyValueFault(v types.AttributeValue, limit int, absentOK bool) (what, fix string) {
	n := 0 // the bytes DynamoDB counts: a string's UTF-8, a binary's
	switch v := v.(type) {
	case nil, *types.AttributeValueMemberNULL:
		if !absentOK {
			return "is unset", SetIt
		}
	case *types.AttributeValueMemberS:
		if v.Value == "" {
			if absentOK {
				return "is an empty string, which DynamoDB refuses in an index key", "set it, or tag the field omitempty (or make it a pointer left nil) to leave the item out of the index"
			}
			return "is an empty string, which DynamoDB refuses as a key", SetIt
		}
		if !utf8.ValidString(v.Value) {
			// The SDK would send U+FFFD for each bad byte, so that
			// "k\xff" and "k\xfe" would address the same item.
			return fmt.Sprintf("%q is not valid UTF-8", Truncate(v.Value, 40)),
				"the SDK would replace the bad bytes with U+FFFD, so other keys would address the same item; use a []byte key for binary data"
		}
		n = len(v.Value)
	case *types.AttributeValueMemberB:
		if len(v.Value) == 0 {
			if absentOK {
				return "is empty, which DynamoDB refuses in an index key", "set it, or tag the field omitempty (or leave it nil) to leave the item out of the index"
			}
			return "is empty, which DynamoDB refuses as a key", SetIt
		}
		n = len(v.Value)
	case *types.AttributeValueMemberN:
	default:
		return fmt.Sprintf("encodes to %T; keys must be strings, numbers or binary", v), "give the field a string, number or []byte type (or a marshaler that returns one)"
	}
	if n > limit {
		return fmt.Sprintf("is %d bytes, over DynamoDB's %d for such a key", n, limit), "shorten it (store long values in another attribute, or a hash of them in the key)"
	}
	return "", ""
}

// KeyKind tells the DynamoDB type ('S', 'N' or 'B') the mapper writes for
// key field f of s; 0 when it cannot be told without a value. enc is the
// mapper's encoder, asked for custom encodings only.
func (s *Schema) KeyKind(f *Field, enc Encoder) byte {
	if f.Conv != nil {
		return 0
	}
	bt := DerefType(f.Type)
	if codec.IsText(bt) {
		return 'S' // the text MarshalText returns, whatever the type's kind
	}
	if !HasCustomMarshaler(bt) {
		switch bt.Kind() {
		case reflect.String:
			if NumberLike(bt) && !f.Opts.AsString {
				return 'N' // as fastKeyValue and the encoder write it
			}
			return 'S'
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
			if f.Opts.AsString {
				return 'S'
			}
			return 'N'
		}
	}
	at, err := s.KeyAttrType("", f, nil, enc)
	if err != nil {
		return 0
	}
	return at[0]
}

// KeyAttrType tells the DynamoDB type of key field f of s from its Go type,
// its tag options, override (WithKeyType's, by attribute name) and, for
// types with custom encodings, the mapper's encoder enc. table names the
// table in errors, which wrap ErrInvalidInput.
func (s *Schema) KeyAttrType(table string, f *Field, override map[string]types.ScalarAttributeType, enc Encoder) (types.ScalarAttributeType, error) {
	if at, ok := override[f.Name]; ok {
		switch at {
		case types.ScalarAttributeTypeS, types.ScalarAttributeTypeN, types.ScalarAttributeTypeB:
			return at, nil
		}
		return "", fmt.Errorf("%w: CreateTable %q: WithKeyType(%q, %q): key types are S, N or B", errs.ErrInvalidInput, table, f.Name, at)
	}
	bt := DerefType(f.Type)
	if codec.IsText(bt) {
		return types.ScalarAttributeTypeS, nil // stored as text (NewTable refuses types it could not store so)
	}
	if !HasCustomMarshaler(bt) {
		switch {
		case bt == TimeType && f.Opts.UnixTime:
			return types.ScalarAttributeTypeN, nil
		case bt.Kind() == reflect.Slice: // []byte; checkKeyType allows no other slice
			return types.ScalarAttributeTypeB, nil
		case f.Opts.AsString && bt.Kind() != reflect.String: // a number stored as a string
			return types.ScalarAttributeTypeS, nil
		}
	}
	// Encode the zero value with the mapper's encoder, which is what Save
	// does with the field (a pointer to it, so that a pointer-receiver
	// MarshalDynamoDBAttributeValue is found too): strings give S, numbers N,
	// time.Time S unless the encoder's EncodeTime says otherwise, a custom
	// encoding what it encodes to.
	av, err := enc.Encode(reflect.New(bt).Interface())
	if at, ok := scalarType(av); err == nil && ok {
		return at, nil
	}
	what := fmt.Sprintf("encodes its zero value to %T", av)
	if err != nil {
		what = fmt.Sprintf("fails to encode its zero value (%v)", err)
	}
	return "", fmt.Errorf("%w: CreateTable %q: key attribute %q (field %s.%s) is of type %s, which %s: name its type with dynamo.WithKeyType(%q, types.ScalarAttributeTypeS)",
		errs.ErrInvalidInput, table, f.Name, s.Type, f.GoName, f.Type, what, f.Name)
}

func scalarType(av types.AttributeValue) (types.ScalarAttributeType, bool) {
	switch av.(type) {
	case *types.AttributeValueMemberS:
		return types.ScalarAttributeTypeS, true
	case *types.AttributeValueMemberN:
		return types.ScalarAttributeTypeN, true
	case *types.AttributeValueMemberB:
		return types.ScalarAttributeTypeB, true
	}
	return "", false
}
