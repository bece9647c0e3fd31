package plan

import (
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/schema"
)

// Reading stored versions: which stored versions a caller's held version
// accepts, the version a stored item holds as DynamoDB compares it, and
// what is wrong with one no version of the type can be read from.

// VersionHeld reports whether the version condition of a caller holding
// held is satisfied by a stored item as described: unsaved (0) requires no
// stored version or a stored 0 (Java's DynamoDBMapper CLOBBER, holding -1,
// stores 0, and backfills seed it), any other value requires that exact
// stored version.
func VersionHeld(held int64, exists, hasVersion bool, found int64) bool {
	if held == 0 {
		return !exists || !hasVersion || found == 0
	}
	return exists && hasVersion && found == held
}

// StoredVersion reads the version attribute of a stored item as DynamoDB
// compares it, numerically: every spelling of a whole number ("2", "2.0",
// "20e-1") is that version. A whole number beyond int64 (a uint64 version
// past MaxInt64, say) is a version all the same: ok is true, v is
// math.MaxInt64 (math.MinInt64 below) and big is true, so that it is
// reported as the version it is, never as "no version". A number that is
// not whole, one DynamoDB cannot store (av.Problem), another type, NULL or
// no attribute is no version.
func StoredVersion(item map[string]types.AttributeValue, attr string) (v int64, ok, big bool) {
	n, isN := item[attr].(*types.AttributeValueMemberN)
	if !isN {
		return 0, false, false
	}
	if v, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
		return v, true, false
	}
	return wholeNumber(n.Value)
}

// wholeNumber reads s, a number spelled otherwise than as an int64 ("2.0",
// "0.2e1", "9223372036854775808"), as StoredVersion does. The number rule is
// internal/av's: a number DynamoDB cannot store (av.Problem: more than 38
// significant digits, a magnitude out of its range, an exponent Scan does
// not read) is no version, and within the range building it is cheap.
func wholeNumber(s string) (v int64, ok, big bool) {
	if av.Problem(s) != "" {
		return 0, false, false
	}
	i, whole := av.Int(s)
	switch {
	case !whole:
		return 0, false, false
	case i.IsInt64():
		return i.Int64(), true, false
	case i.Sign() < 0:
		return math.MinInt64, true, true
	}
	return math.MaxInt64, true, true
}

// WrongVersion describes the version attribute of item when no version of
// s can be read from it, as the errors of every call over such an item say
// it (a write's ConditionError, a read's decoding error): what names what
// is stored ("the stored v is a string (S), not a number (N)"), fix what
// to store instead. ok is false when the stored version is one s holds, or
// NULL, or absent (or s has no version).
func WrongVersion(s *schema.Schema, item map[string]types.AttributeValue) (what, fix string, ok bool) {
	if s.Version < 0 {
		return "", "", false
	}
	f := &s.Fields[s.Version]
	stored, has := item[f.Name]
	if !has || isNull(stored) {
		return "", "", false
	}
	const remedy = " there (or remove the attribute, which makes the item unsaved) with a write of your own, such as an UpdateItem outside this type"
	num, isN := stored.(*types.AttributeValueMemberN)
	if !isN {
		return fmt.Sprintf("the stored %s is a %s, not a number (N)", f.Name, schema.AVKind(stored)), "store a number" + remedy, true
	}
	v, whole, big := StoredVersion(item, f.Name)
	if p := av.Problem(num.Value); p != "" {
		return fmt.Sprintf("the stored %s %s", f.Name, p), "store a whole number" + remedy, true
	}
	if !whole {
		return fmt.Sprintf("the stored %s is %s, not a whole number", f.Name, num.Value), "store a whole number" + remedy, true
	}
	t := f.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var fits, unsigned bool
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		hi := int64(math.MaxInt64 >> (64 - t.Bits()))
		fits = !big && v >= -hi-1 && v <= hi
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		unsigned = true
		fits = v >= 0 && uint64(v) <= uint64(math.MaxUint64)>>(64-t.Bits())
		if big && v > 0 {
			// Past MaxInt64: a uint64 holds it up to MaxUint64.
			i, _ := av.Int(num.Value)
			fits = i.BitLen() <= t.Bits()
		}
	default:
		return "", "", false
	}
	if !fits {
		return fmt.Sprintf("the stored %s is %s, beyond what %s's version (%s) holds", f.Name, num.Value, s.Type, t), "store a number the version holds" + remedy, true
	}
	if !decoderReads(num.Value, unsigned) {
		// DynamoDB itself stores 2.0 as 2: the item came another way.
		c := av.Canonical(num.Value)
		return fmt.Sprintf("the stored %s is %s, version %s spelled in a way the decoder does not read (DynamoDB stores it as %s)", f.Name, num.Value, c, c), "store it as " + c + remedy, true
	}
	return "", "", false
}

// decoderReads reports whether the decoder reads the whole number s into
// a version field (unsigned or not) as spelled: it reads integers as
// strconv does, so "002" is read, "2.0" and "2e0" are not, and "+2" and
// "-0" are read into a signed field only (ParseUint takes no sign).
func decoderReads(s string, unsigned bool) bool {
	if unsigned {
		_, err := strconv.ParseUint(s, 10, 64)
		return err == nil
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}
