package plan

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/errs"
	"github.com/ddbkit/dynamo/internal/schema"
)

// CheckPosition checks that a decoded cursor belongs to a listing of this
// table on index (and scan segment, when total > 0) and, for a query, to
// its key condition kc (nil for a scan): the key attributes DynamoDB's
// LastEvaluatedKey holds there, each of the type the table stores, the
// partition the query reads, and a sort key the condition selects. What
// DynamoDB would refuse with a ValidationException is refused here, before
// anything is sent.
func (r KeyRules) CheckPosition(p Position, index string, segment, total int, kc *KeyCond) error {
	if err := r.checkListing(p, index, segment, total); err != nil {
		return err
	}
	if err := r.checkPositionKey(p, index); err != nil {
		return err
	}
	return r.checkPositionInQuery(p, kc)
}

// badCursor is the error of a cursor that does not belong to the call.
func (r KeyRules) badCursor(format string, args ...any) error {
	return fmt.Errorf("%w: cursor for table %q: %s: pass a cursor back to the same query or scan it came from",
		errs.ErrInvalidInput, r.Table, fmt.Sprintf(format, args...))
}

// checkListing checks that p was made reading index, and by a scan of the
// same segment (when total > 0) or of none.
func (r KeyRules) checkListing(p Position, index string, segment, total int) error {
	if p.Index != index {
		return r.badCursor("it was made reading %s, this call reads %s", whereName(p.Index), whereName(index))
	}
	switch {
	case p.Total == 0 && total > 0:
		return r.badCursor("it was made by a scan of the whole table, this call scans segment %d of %d", segment, total)
	case p.Total > 0 && total == 0:
		return r.badCursor("it was made by a scan of segment %d of %d, this call reads everything", p.Segment, p.Total)
	case p.Segment != segment || p.Total != total:
		return r.badCursor("it was made by a scan of segment %d of %d, this call scans segment %d of %d", p.Segment, p.Total, segment, total)
	}
	return nil
}

// checkPositionKey checks the key p holds, read on index: the key
// attributes, the types T's fields give them, and DynamoDB's limits on
// their sizes.
func (r KeyRules) checkPositionKey(p Position, index string) error {
	// A position in the table holds the table's key; in an index, the
	// table's key and the index's. The index's key is known when T's tags
	// declare the index; otherwise only the table's part is checked.
	s := r.S
	fields := []int{s.Hash}
	if s.Range >= 0 {
		fields = append(fields, s.Range)
	}
	what := "the table's key"
	ihash, irng, exact := r.ListingKey(index)
	if index != "" && exact {
		for _, i := range slices.Concat(ihash, irng) {
			if !slices.Contains(fields, i) {
				fields = append(fields, i)
			}
		}
		what = "the table's key and the index's"
	}
	names := make([]string, len(fields))
	for j, i := range fields {
		names[j] = s.Fields[i].Name
	}
	for _, n := range names {
		if _, ok := p.Key[n]; !ok {
			return r.badCursor("it lacks the key attribute %q (it holds %s)", n, keyNameList(p.Key))
		}
	}
	if exact && len(p.Key) != len(names) {
		return r.badCursor("it holds %s, but %s is %s", keyNameList(p.Key), what, quoteList(names))
	}
	// Types: of every attribute T models (beyond the known keys, those of an
	// index the tags do not declare, which DynamoDB stores as T's field is
	// written or not at all).
	for _, n := range slices.Sorted(maps.Keys(p.Key)) {
		i, ok := s.ByName[n]
		if !ok || !slices.Contains(names, n) && schema.CheckKeyType(&s.Fields[i]) != nil {
			continue // not modeled, or of a Go type no key can have
		}
		if want, got := r.S.KeyKind(&s.Fields[i], r.Enc), KindOf(p.Key[n]); want != 0 && got != want {
			return r.badCursor("its key attribute %q is a %s, but the table stores it as a %s", n, KindName(got), KindName(want))
		}
	}
	// DynamoDB's key size limits: 2048 bytes for a partition key, 1024 for
	// a sort key (of the table or of the index).
	for n, v := range p.Key {
		limit := schema.MaxPartitionKeyLen
		if (s.Range >= 0 && n == s.Fields[s.Range].Name) || (exact && slices.ContainsFunc(irng, func(i int) bool { return n == s.Fields[i].Name })) {
			limit = schema.MaxSortKeyLen
		}
		if what, _ := schema.KeyValueFault(v, limit, false); what != "" {
			return r.badCursor("its key attribute %q %s", n, what)
		}
	}
	return nil
}

// checkPositionInQuery checks that p lies in what the query's key
// condition kc selects: its partition, and a sort key the condition holds
// for. A scan (kc nil) selects every position.
func (r KeyRules) checkPositionInQuery(p Position, kc *KeyCond) error {
	if kc == nil {
		return nil
	}
	for _, h := range kc.Hash {
		if h != nil && CompareKeyValues(p.Key[h.Name], h.Values[0]) != 0 {
			return r.badCursor("it is in the partition %s = %s, this query reads %s = %s",
				h.Name, ShortScalar(p.Key[h.Name]), h.Name, ShortScalar(h.Values[0]))
		}
	}
	for _, kt := range kc.Rng {
		if kt != nil && !KeyTermHolds(kt, p.Key[kt.Name]) {
			return r.badCursor("its sort key %s = %s is not one the query's key condition selects (%s)",
				kt.Name, ShortScalar(p.Key[kt.Name]), FormatKeyTerm(kt))
		}
	}
	return nil
}

func keyNameList(key map[string]types.AttributeValue) string {
	return quoteList(slices.Sorted(maps.Keys(key)))
}

// quoteList quotes names and joins them with commas, for messages.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
