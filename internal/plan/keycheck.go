package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/errs"
	"github.com/ddbkit/dynamo/internal/schema"
)

// KeyRules is what the checks of a listing's keys read: the table's name
// (for messages), T's schema, and the mapper's encoder (for the stored type
// of a key field with a custom encoding). Errors wrap ErrInvalidInput.
type KeyRules struct {
	Table string
	S     *schema.Schema
	Enc   schema.Encoder
}

// ListingKey returns the key fields (indexes into s.fields) of the table
// or of index, in key order (rng empty when none), and whether they are
// known: an index the tags do not declare has keys the mapper does not
// know. The slices are shared, not copies: callers only read them.
func (r KeyRules) ListingKey(index string) (hash, rng []int, known bool) {
	s := r.S
	if index == "" {
		if s.Range < 0 {
			return oneField(s.Hash), nil, true
		}
		return oneField(s.Hash), oneField(s.Range), true
	}
	for _, x := range s.Indexes {
		if x.Name == index {
			return x.Hash, x.Range, true
		}
	}
	return nil, nil, false
}

// fieldSeq holds 0, 1, 2, …, so that oneField's slices need no allocation
// (a Query checks its table's key on every call).
var fieldSeq = func() (a [64]int) {
	for i := range a {
		a[i] = i
	}
	return a
}()

// oneField returns []int{i}, shared (from fieldSeq) for most i: read only.
// Its capacity is 1, so an append copies rather than writes into fieldSeq.
func oneField(i int) []int {
	if 0 <= i && i < len(fieldSeq) {
		return fieldSeq[i : i+1 : i+1]
	}
	return []int{i}
}

// whereName names what a listing reads, for messages.
func whereName(index string) string {
	if index == "" {
		return "the table itself"
	}
	return "index " + strconv.Quote(index)
}

// CheckKeyCondition checks a Query's key condition before anything is
// sent: every value a string of valid UTF-8, a number DynamoDB stores, or
// binary; and, when the keys of what the query reads are known, only key
// attributes named, each once, the partition key fixed with Equal, values
// of the keys' types. A condition this package cannot read is left to
// DynamoDB (nil, nil).
func (r KeyRules) CheckKeyCondition(op, index, keyExpr string, names map[string]string, values map[string]types.AttributeValue) (*KeyCond, error) {
	on := ""
	if index != "" {
		on = " index " + strconv.Quote(index)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s on table %q%s: %s", errs.ErrInvalidInput, op, r.Table, on, fmt.Sprintf(format, args...))
	}
	terms, ok := ParseKeyCondition(keyExpr, names, values)
	if !ok {
		return nil, nil
	}
	if err := CheckKeyTermValues(terms, fail); err != nil {
		return nil, err
	}
	kc := &KeyCond{Terms: terms}
	hash, rng, known := r.ListingKey(index)
	if !known {
		return kc, nil
	}
	if err := r.placeKeyTerms(kc, index, hash, rng, fail); err != nil {
		return nil, err
	}
	if err := r.checkKeyTermKinds(kc, hash, rng, fail); err != nil {
		return nil, err
	}
	return kc, nil
}

// placeKeyTerms sets kc.Hash and kc.Rng to the terms on the fields hash
// and rng, the keys of index in key order, refusing a term on another
// attribute, two on one key attribute, a partition attribute not fixed
// with Equal, and for a key of several sort attributes a skipped one or a
// range before the last one used (DynamoDB matches them left to right).
func (r KeyRules) placeKeyTerms(kc *KeyCond, index string, hash, rng []int, fail func(format string, args ...any) error) error {
	name := func(i int) string { return r.S.Fields[i].Name }
	keys := func() string { // for messages only
		hashNames, rngNames := r.fieldNames(hash), r.fieldNames(rng)
		h, r := "partition key "+quoteList(hashNames), "sort key "+quoteList(rngNames)
		if len(hashNames) > 1 {
			h = "partition attributes " + quoteList(hashNames)
		}
		if len(rngNames) > 1 {
			r = "sort attributes " + quoteList(rngNames)
		}
		if len(rngNames) == 0 {
			return h
		}
		return h + ", " + r
	}
	hts, rts := kc.keySlots(len(hash), len(rng))
	for i := range kc.Terms {
		kt := &kc.Terms[i]
		var slot **KeyTerm
		if j := r.fieldIndex(hash, kt.Name); j >= 0 {
			slot = &hts[j]
		} else if j := r.fieldIndex(rng, kt.Name); j >= 0 {
			slot = &rts[j]
		} else {
			return fail("the key condition names %q, which is not a key of %s (%s)%s",
				kt.Name, whereName(index), keys(), r.keyHint(kt.Name, index, r.fieldNames(hash), r.fieldNames(rng)))
		}
		if *slot != nil {
			return fail("the key condition names %q twice: give one condition per key attribute (use Between for a range)", kt.Name)
		}
		*slot = kt
	}
	multi := len(hash) > 1 || len(rng) > 1
	for j, h := range hts {
		n := name(hash[j])
		switch {
		case h == nil && !multi:
			return fail("the key condition does not fix the partition key %q (%s): a query reads one partition; start it with expression.Key(%q).Equal(expression.Value(v))",
				n, keys(), n)
		case h == nil:
			return fail("the key condition does not fix the partition attribute %q: each needs Equal; add expression.Key(%q).Equal(expression.Value(v))",
				n, n)
		case h.Op != "=":
			return fail("the key condition applies %s to the partition key %q: a query reads one partition; use expression.Key(%q).Equal(expression.Value(v)), and Scan with a Filter to read several",
				h.Op, n, n)
		}
	}
	used := 0 // the sort attributes the condition uses: rts[:used]
	for j, rt := range rts {
		if rt != nil {
			used = j + 1
		}
	}
	for j, rt := range rts[:used] {
		switch {
		case rt == nil:
			return fail("the key condition skips the sort attribute %q before %q: they go left to right (%s); add a condition on %q or drop the later ones",
				name(rng[j]), name(rng[used-1]), quoteList(r.fieldNames(rng)), name(rng[j]))
		case j < used-1 && rt.Op != "=":
			return fail("the key condition applies %s to the sort attribute %q, then names %q: only the last one used may take a range; use Equal on %q or drop the later ones",
				rt.Op, name(rng[j]), name(rng[j+1]), name(rng[j]))
		}
	}
	kc.Hash, kc.Rng = hts, rts[:used]
	return nil
}

// fieldIndex returns the position in fields of the field named name, or -1.
func (r KeyRules) fieldIndex(fields []int, name string) int {
	for j, i := range fields {
		if r.S.Fields[i].Name == name {
			return j
		}
	}
	return -1
}

// fieldNames returns the attribute names of fields.
func (r KeyRules) fieldNames(fields []int) []string {
	names := make([]string, len(fields))
	for j, i := range fields {
		names[j] = r.S.Fields[i].Name
	}
	return names
}

// checkKeyTermKinds checks that kc's terms compare the keys (fields hash
// and rng, in key order) with values of the keys' types, and begins_with
// only strings and binary.
func (r KeyRules) checkKeyTermKinds(kc *KeyCond, hash, rng []int, fail func(format string, args ...any) error) error {
	s := r.S
	for _, x := range [...]struct {
		kts    []*KeyTerm
		fields []int
		who    string
		limit  int // DynamoDB's, for a key of this role (table or index)
	}{{kc.Hash, hash, "partition", schema.MaxPartitionKeyLen}, {kc.Rng, rng, "sort", schema.MaxSortKeyLen}} {
		for j, kt := range x.kts {
			if kt == nil {
				continue
			}
			want := r.S.KeyKind(&s.Fields[x.fields[j]], r.Enc)
			if kt.Op == "begins_with" && want == 'N' {
				return fail("begins_with on the number sort key %q: DynamoDB applies begins_with to strings and binary only; use Between for a range of numbers", kt.Name)
			}
			for _, v := range kt.Values {
				if got := KindOf(v); want != 0 && got != want {
					return fail("the key condition compares the %s key %q, a %s, with a %s value %s: pass a value of the key's type (expression.Value uses the default attributevalue encoding; pass a types.AttributeValue to choose it)",
						x.who, kt.Name, KindName(want), KindName(got), ShortScalar(v))
				}
				// DynamoDB refuses a key value over its role's limit, even a
				// sort key value that only bounds a range ("Aggregated size of
				// all range keys has exceeded the size limit of 1024 bytes").
				// DynamoDB Local answers a partition value over 2048 bytes with
				// no items instead (TestQueryKeyValueOverLimitOnDynamoDBLocal).
				if what, _ := schema.KeyValueFault(v, x.limit, false); what != "" {
					return fail("the key condition's value for the %s key %q %s, which DynamoDB refuses in a key condition: compare with a value of at most %d bytes (no stored key is longer)", x.who, kt.Name, what, x.limit)
				}
			}
		}
	}
	return nil
}

// keyHint suggests the right attribute for name, which is not a key of
// what the query reads (whose key attributes are hashNames and rngNames).
func (r KeyRules) keyHint(name, index string, hashNames, rngNames []string) string {
	for _, k := range slices.Concat(hashNames, rngNames) {
		if strings.EqualFold(name, k) {
			return fmt.Sprintf(": did you mean %q? (attribute names are case-sensitive)", k)
		}
	}
	s := r.S
	if index != "" && name == s.Fields[s.Hash].Name {
		return ": it is the table's partition key; leave out Index to query the table"
	}
	for _, x := range s.Indexes {
		if !x.Local && x.Name != index && slices.ContainsFunc(x.Hash, func(i int) bool { return s.Fields[i].Name == name }) {
			what := "the partition key"
			if len(x.Hash) > 1 {
				what = "a partition attribute"
			}
			return fmt.Sprintf(": it is %s of index %q; add Index(%q) to query by it", what, x.Name, x.Name)
		}
	}
	switch {
	case len(hashNames) > 1 || len(rngNames) > 1:
		return ": name every partition attribute, then sort attributes in order"
	case len(rngNames) == 0:
		return fmt.Sprintf(": name the partition key %q", hashNames[0])
	}
	return fmt.Sprintf(": name the partition key %q, and optionally the sort key %q", hashNames[0], rngNames[0])
}

// CheckExprText refuses attribute names and string values that are not
// valid UTF-8 anywhere in a query's or scan's expressions (the filter's
// included): the SDK would replace the invalid bytes with U+FFFD and the
// request would compare with another value than the caller's. It refuses
// too whatever checkCondValues refuses in an If condition.
func (r KeyRules) CheckExprText(op string, e expression.Expression) error {
	for _, n := range e.Names() {
		if !utf8.ValidString(n) {
			return fmt.Errorf("%w: %s on table %q: attribute name %q is not valid UTF-8: name attributes with valid UTF-8 text", errs.ErrInvalidInput, op, r.Table, n)
		}
	}
	for _, v := range e.Values() {
		if err := checkExprValue(v); err != nil {
			return fmt.Errorf("%w: %s on table %q: a Filter value %v: pass valid UTF-8 text and numbers DynamoDB stores",
				errs.ErrInvalidInput, op, r.Table, err)
		}
		if p := schema.BadSetValue(v); p != "" {
			return fmt.Errorf("%w: %s on table %q: a Filter value %s", errs.ErrInvalidInput, op, r.Table, p)
		}
	}
	// The rest of what an If condition's names and values are refused
	// for (checkCondValues): names and map keys over 65535 bytes or empty,
	// values nesting deeper than DynamoDB's limit.
	if err := schema.CheckCondValues(e.Names(), e.Values()); err != nil {
		return fmt.Errorf("%w: %s on table %q: in its expressions, %w", errs.ErrInvalidInput, op, r.Table, err)
	}
	return nil
}

// checkExprValue finds in av a string (value, map key or set element) that
// is not valid UTF-8, which DynamoDB would silently replace, or a number
// DynamoDB refuses, and says where.
func checkExprValue(av types.AttributeValue) error {
	switch a := av.(type) {
	case *types.AttributeValueMemberS:
		if !utf8.ValidString(a.Value) {
			return fmt.Errorf("holds the string %.40q, which is not valid UTF-8", a.Value)
		}
	case *types.AttributeValueMemberN:
		return CheckNumber(a.Value)
	case *types.AttributeValueMemberSS:
		for _, s := range a.Value {
			if !utf8.ValidString(s) {
				return fmt.Errorf("holds the set element %.40q, which is not valid UTF-8", s)
			}
		}
	case *types.AttributeValueMemberNS:
		for _, s := range a.Value {
			if err := CheckNumber(s); err != nil {
				return fmt.Errorf("holds a set element: %v", err)
			}
		}
	case *types.AttributeValueMemberL:
		for i, v := range a.Value {
			if err := checkExprValue(v); err != nil {
				return fmt.Errorf("[%d] %v", i, err)
			}
		}
	case *types.AttributeValueMemberM:
		for k, v := range a.Value {
			if !utf8.ValidString(k) {
				return fmt.Errorf("holds the map key %.40q, which is not valid UTF-8", k)
			}
			if err := checkExprValue(v); err != nil {
				return fmt.Errorf("[%q] %v", k, err)
			}
		}
	}
	return nil
}
