package dynamo

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

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

// storedVersion reads the version attribute of a stored item as DynamoDB
// compares it, numerically: every spelling of a whole number ("2", "2.0",
// "20e-1") is that version. A whole number beyond int64 (a uint64 version
// past MaxInt64, say) is a version all the same: ok is true, v is
// math.MaxInt64 (math.MinInt64 below) and big is true, so that it is
// reported as the version it is, never as "no version". A number that is
// not whole, another type, NULL or no attribute is no version.
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
	return wholeNumber(n.Value)
}

// wholeNumber reads s, a number in DynamoDB's notation with a fraction or
// an exponent ("2.0", "0.2e1"), as storedVersion does. It never builds the
// number: an exponent of any size costs nothing.
func wholeNumber(s string) (v int64, ok, big bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	digits := func(s string) int {
		i := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i
	}
	i := digits(s)
	intPart, frac := s[:i], ""
	s = s[i:]
	if s != "" && s[0] == '.' {
		i = digits(s[1:])
		frac, s = s[1:1+i], s[1+i:]
	}
	if intPart == "" && frac == "" {
		return 0, false, false
	}
	exp := 0 // saturated at ±maxExp: beyond it only the sign matters
	const maxExp = 1 << 30
	if s != "" && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		expNeg := false
		if s != "" && (s[0] == '+' || s[0] == '-') {
			expNeg, s = s[0] == '-', s[1:]
		}
		i = digits(s)
		if i == 0 {
			return 0, false, false
		}
		for _, c := range s[:i] {
			if exp = exp*10 + int(c-'0'); exp > maxExp {
				exp = maxExp
			}
		}
		if expNeg {
			exp = -exp
		}
		s = s[i:]
	}
	if s != "" {
		return 0, false, false
	}
	// The value is mant × 10^exp, mant without leading or trailing zeros.
	mant := strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	trimmed := strings.TrimRight(mant, "0")
	exp += len(mant) - len(trimmed)
	mant = trimmed
	switch {
	case mant == "":
		return 0, true, false
	case exp < 0:
		return 0, false, false // a fraction remains
	case len(mant)+exp > 19:
		return wholeBeyond(neg)
	}
	u, err := strconv.ParseUint(mant, 10, 64) // at most 19 digits: fits
	if err != nil {
		return 0, false, false
	}
	for range exp {
		if u > math.MaxUint64/10 {
			return wholeBeyond(neg)
		}
		u *= 10
	}
	switch {
	case !neg && u <= math.MaxInt64:
		return int64(u), true, false
	case neg && u <= 1<<63:
		return -int64(u-1) - 1, true, false
	}
	return wholeBeyond(neg)
}

func wholeBeyond(neg bool) (v int64, ok, big bool) {
	if neg {
		return math.MinInt64, true, true
	}
	return math.MaxInt64, true, true
}

// wrongVersion describes the version attribute of item when no version of
// s can be read from it, as the errors of every call over such an item say
// it (a write's ConditionError, a read's decoding error): what names what
// is stored ("the stored v is a string (S), not a number (N)"), fix what
// to store instead. ok is false when the stored version is one s holds, or
// NULL, or absent (or s has no version).
func (s *schema) wrongVersion(item map[string]types.AttributeValue) (what, fix string, ok bool) {
	if s.version < 0 {
		return "", "", false
	}
	f := &s.fields[s.version]
	stored, has := item[f.name]
	if !has || isNull(stored) {
		return "", "", false
	}
	const remedy = " there (or remove the attribute, which makes the item unsaved) with a write of your own, such as an UpdateItem outside this type"
	num, isN := stored.(*types.AttributeValueMemberN)
	if !isN {
		return fmt.Sprintf("the stored %s is a %s, not a number (N)", f.name, avKind(stored)), "store a number" + remedy, true
	}
	v, whole, big := storedVersion(item, f.name)
	if !whole {
		return fmt.Sprintf("the stored %s is %s, not a whole number", f.name, num.Value), "store a whole number" + remedy, true
	}
	t := f.typ
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var fits bool
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		hi := int64(math.MaxInt64 >> (64 - t.Bits()))
		fits = !big && v >= -hi-1 && v <= hi
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		fits = v >= 0 && uint64(v) <= uint64(math.MaxUint64)>>(64-t.Bits())
		if big && v > 0 {
			// Past MaxInt64: a uint64 holds it up to MaxUint64.
			_, err := strconv.ParseUint(num.Value, 10, t.Bits())
			fits = err == nil
		}
	default:
		return "", "", false
	}
	if !fits {
		return fmt.Sprintf("the stored %s is %s, beyond what %s's version (%s) holds", f.name, num.Value, s.typ, t), "store a number the version holds" + remedy, true
	}
	if _, err := strconv.ParseInt(num.Value, 10, 64); err != nil && !big {
		// DynamoDB itself stores 2.0 as 2: the item came another way.
		return fmt.Sprintf("the stored %s is %s, version %d spelled in a way the decoder does not read (DynamoDB stores it as %d)", f.name, num.Value, v, v), "store it as " + strconv.FormatInt(v, 10) + remedy, true
	}
	return "", "", false
}
