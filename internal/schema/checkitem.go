package schema

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	avs "github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/codec"
	"github.com/ddbkit/dynamo/internal/errs"
)

// Checks of the encoded item (checkEncoded) and of condition values: see
// validate.go.

// checkEncoded checks the encoded item of table: names and strings valid
// UTF-8, no empty names, nesting within DynamoDB's limit; it drops duplicate
// set elements, comparing numbers by value.
func (s *Schema) CheckEncoded(table string, item map[string]types.AttributeValue) error {
	for k, v := range item {
		if !codec.ValidName(k) {
			b := badName(k)
			return fmt.Errorf("%w: table %q: %s: %s", errs.ErrInvalidInput, table, b.What, b.fix)
		}
		nv, b := checkAV(v, 1)
		if b != nil {
			return s.invalidValue(table, k, b)
		}
		if nv != nil {
			item[k] = nv
		}
	}
	return nil
}

func badName(k string) *badValue {
	if k == "" {
		return &badValue{What: "an empty attribute name", fix: "give the map key or attribute a name"}
	}
	if len(k) > codec.MaxNameLen {
		return &badValue{What: fmt.Sprintf("attribute name %s is %d bytes", strconv.Quote(Truncate(k, 40)), len(k)), fix: nameTooLong}
	}
	return &badValue{What: fmt.Sprintf("attribute name %s is not valid UTF-8", strconv.Quote(k)),
		fix: "the SDK would store U+FFFD instead of the bad bytes: use valid UTF-8 names (binary data goes in []byte values)"}
}

func badString(s string) *badValue {
	return &badValue{
		What: fmt.Sprintf("is a string that is not valid UTF-8 (%s)", strconv.Quote(Truncate(s, 40))),
		fix:  "the SDK would store U+FFFD instead of the bad bytes: use []byte for binary data",
	}
}

func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// checkAV checks av at nesting level level (its container's level) and
// returns a replacement when a set had duplicates to drop (a map or list
// holding one: a new one), else nil. It changes nothing of av.
func checkAV(av types.AttributeValue, level int) (types.AttributeValue, *badValue) {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		if !utf8.ValidString(v.Value) {
			return nil, badString(v.Value)
		}
	case *types.AttributeValueMemberN:
		if b := CheckItemNumber(v.Value); b != nil {
			return nil, b
		}
	case *types.AttributeValueMemberSS:
		for i, e := range v.Value {
			if !utf8.ValidString(e) {
				return nil, badString(e).push(idxSeg(i))
			}
		}
		if ss, dup := dedupe(v.Value, func(s string) string { return s }); dup {
			return &types.AttributeValueMemberSS{Value: ss}, nil
		}
	case *types.AttributeValueMemberNS:
		for i, e := range v.Value {
			if b := CheckItemNumber(e); b != nil {
				return nil, b.push(idxSeg(i))
			}
		}
		if ns, dup := dedupe(v.Value, avs.Canonical); dup {
			return &types.AttributeValueMemberNS{Value: ns}, nil
		}
	case *types.AttributeValueMemberBS:
		if bs, dup := dedupe(v.Value, func(b []byte) string { return string(b) }); dup {
			return &types.AttributeValueMemberBS{Value: bs}, nil
		}
	case *types.AttributeValueMemberM:
		if level++; level > maxNesting {
			return nil, tooDeepEncoded()
		}
		// A replacement goes into a copy: the map may be a value the
		// caller's own MarshalDynamoDBAttributeValue returned (and keeps).
		var out map[string]types.AttributeValue
		for k, e := range v.Value {
			if !codec.ValidName(k) {
				return nil, badMapKey(k)
			}
			ne, b := checkAV(e, level)
			if b != nil {
				return nil, b.push(keySeg(k))
			}
			if ne != nil {
				if out == nil {
					out = maps.Clone(v.Value)
				}
				out[k] = ne
			}
		}
		if out != nil {
			return &types.AttributeValueMemberM{Value: out}, nil
		}
	case *types.AttributeValueMemberL:
		if level++; level > maxNesting {
			return nil, tooDeepEncoded()
		}
		var out []types.AttributeValue // a copy, as for a map
		for i, e := range v.Value {
			ne, b := checkAV(e, level)
			if b != nil {
				return nil, b.push(idxSeg(i))
			}
			if ne != nil {
				if out == nil {
					out = slices.Clone(v.Value)
				}
				out[i] = ne
			}
		}
		if out != nil {
			return &types.AttributeValueMemberL{Value: out}, nil
		}
	}
	return nil, nil
}

// validAV is the compiled encoder's check (codec.Check) of a value it does
// not check itself: av, at nesting level level, passes checkEncoded
// unchanged — valid strings, names and numbers, nesting within the limit, no
// duplicate set elements.
func ValidAV(av types.AttributeValue, level int) bool {
	return CheckAVReadOnly(av, level) == nil && !hasDupes(av)
}

// badSetValue says why DynamoDB would refuse av, a value sent with an
// expression (a condition's, a filter's), for a set in it: a set with no
// element, or with an element twice (numbers compared by value, as hasDupes
// does: "1" and "1.0"); "" when it has none. Items are not checked so:
// checkAV drops their duplicates and the encoder writes no empty set.
func BadSetValue(av types.AttributeValue) string {
	switch v := av.(type) {
	case *types.AttributeValueMemberSS, *types.AttributeValueMemberNS, *types.AttributeValueMemberBS:
		if setLen(v) == 0 {
			return "holds an empty set, which DynamoDB refuses: give at least one element, or leave the comparison out"
		}
		if hasDupes(v) {
			return "holds a set with an element twice (1 and 1.0 are one number), which DynamoDB refuses: pass each element once"
		}
	case *types.AttributeValueMemberM:
		for _, e := range v.Value {
			if p := BadSetValue(e); p != "" {
				return p
			}
		}
	case *types.AttributeValueMemberL:
		for _, e := range v.Value {
			if p := BadSetValue(e); p != "" {
				return p
			}
		}
	}
	return ""
}

// setLen is the number of elements of the set av (SS, NS or BS).
func setLen(av types.AttributeValue) int {
	switch v := av.(type) {
	case *types.AttributeValueMemberSS:
		return len(v.Value)
	case *types.AttributeValueMemberNS:
		return len(v.Value)
	case *types.AttributeValueMemberBS:
		return len(v.Value)
	}
	return 0
}

// hasDupes reports whether a set in av holds an element twice (as checkAV
// compares them).
func hasDupes(av types.AttributeValue) bool {
	switch v := av.(type) {
	case *types.AttributeValueMemberSS:
		_, dup := dedupe(v.Value, func(s string) string { return s })
		return dup
	case *types.AttributeValueMemberNS:
		_, dup := dedupe(v.Value, avs.Canonical)
		return dup
	case *types.AttributeValueMemberBS:
		_, dup := dedupe(v.Value, func(b []byte) string { return string(b) })
		return dup
	case *types.AttributeValueMemberM:
		for _, e := range v.Value {
			if hasDupes(e) {
				return true
			}
		}
	case *types.AttributeValueMemberL:
		for _, e := range v.Value {
			if hasDupes(e) {
				return true
			}
		}
	}
	return false
}

// checkCondValues checks the names and values of a compiled If condition
// like an item's: valid UTF-8, within the nesting limit; and sets DynamoDB
// takes (badSetValue). It changes nothing.
// Its callers wrap the error in ErrInvalidInput.
func CheckCondValues(names map[string]string, values map[string]types.AttributeValue) error {
	for _, n := range names {
		if !codec.ValidName(n) {
			b := badName(n)
			return fmt.Errorf("%s: %s", b.What, b.fix)
		}
	}
	for _, v := range values {
		if b := CheckAVReadOnly(v, 1); b != nil {
			if p := b.Where(); p != "" {
				b.What = "at " + p + " " + b.What
			}
			return fmt.Errorf("a value %s: %s", b.What, b.fix)
		}
		if p := BadSetValue(v); p != "" {
			return fmt.Errorf("a value %s", p)
		}
	}
	return nil
}

// checkAVReadOnly is checkAV without dropping duplicate set elements: the
// strings, numbers, names and depth of av are checked, nothing is changed.
func CheckAVReadOnly(av types.AttributeValue, level int) *badValue {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		if !utf8.ValidString(v.Value) {
			return badString(v.Value)
		}
	case *types.AttributeValueMemberN:
		return CheckItemNumber(v.Value)
	case *types.AttributeValueMemberNS:
		for i, e := range v.Value {
			if b := CheckItemNumber(e); b != nil {
				return b.push(idxSeg(i))
			}
		}
	case *types.AttributeValueMemberSS:
		for i, e := range v.Value {
			if !utf8.ValidString(e) {
				return badString(e).push(idxSeg(i))
			}
		}
	case *types.AttributeValueMemberM:
		if level++; level > maxNesting {
			return tooDeepEncoded()
		}
		for k, e := range v.Value {
			if !codec.ValidName(k) {
				return badMapKey(k)
			}
			if b := CheckAVReadOnly(e, level); b != nil {
				return b.push(keySeg(k))
			}
		}
	case *types.AttributeValueMemberL:
		if level++; level > maxNesting {
			return tooDeepEncoded()
		}
		for i, e := range v.Value {
			if b := CheckAVReadOnly(e, level); b != nil {
				return b.push(idxSeg(i))
			}
		}
	}
	return nil
}

func tooDeepEncoded() *badValue {
	return &badValue{What: fmt.Sprintf("nests deeper than DynamoDB's %d levels of maps and lists", maxNesting),
		fix: "flatten it or store it encoded (JSON in a []byte)"}
}

// nameTooLong is the fix for a name or map key over codec.MaxNameLen.
const nameTooLong = "DynamoDB refuses names and map keys over 65535 bytes: shorten it (long data goes in a value)"

func badMapKey(k string) *badValue {
	if k == "" {
		return &badValue{What: "holds an empty map key", fix: "give every map entry a non-empty key"}
	}
	if len(k) > codec.MaxNameLen {
		return &badValue{What: fmt.Sprintf("holds a map key %s of %d bytes", strconv.Quote(Truncate(k, 40)), len(k)), fix: nameTooLong}
	}
	return &badValue{What: fmt.Sprintf("holds a map key %s that is not valid UTF-8", strconv.Quote(k)),
		fix: "the SDK would replace the bad bytes with U+FFFD: use valid UTF-8 keys"}
}

// dedupe returns elems without later duplicates (by key) and true, or elems
// and false when there are none. Small sets are compared pairwise, without
// allocating.
func dedupe[E any](elems []E, key func(E) string) ([]E, bool) {
	n := len(elems)
	if n < 2 {
		return elems, false
	}
	dup := false
	if n <= 16 {
	outer:
		for i := 1; i < n; i++ {
			ki := key(elems[i])
			for j := 0; j < i; j++ {
				if key(elems[j]) == ki {
					dup = true
					break outer
				}
			}
		}
	} else {
		seen := make(map[string]struct{}, n)
		for _, e := range elems {
			k := key(e)
			if _, ok := seen[k]; ok {
				dup = true
				break
			}
			seen[k] = struct{}{}
		}
	}
	if !dup {
		return elems, false
	}
	seen := make(map[string]struct{}, n)
	out := make([]E, 0, n)
	for _, e := range elems {
		k := key(e)
		if _, ok := seen[k]; ok {
			continue
		}
		seen[k] = struct{}{}
		out = append(out, e)
	}
	return out, true
}

// checkItemNumber refuses what DynamoDB would refuse as a number (the rule
// is av.Problem's).
func CheckItemNumber(s string) *badValue {
	if p := avs.Problem(s); p != "" {
		return &badValue{What: p, fix: "DynamoDB numbers have up to 38 significant digits and magnitudes from 1E-130 to 9.99E+125: store other values as strings"}
	}
	return nil
}
