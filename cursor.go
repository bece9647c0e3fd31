package dynamo

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/schema"
)

// Cursor is a position in the results of a Query or Scan: the key of the
// last item a page returned (DynamoDB's LastEvaluatedKey). QueryPage and
// ScanPage return one; StartAfter resumes after it. The empty Cursor means
// "no position": from the start, or, returned by a page, that there are no
// more results.
//
// A Cursor is opaque, URL-safe text (unpadded base64url of a small JSON
// document holding the key attributes with their DynamoDB types and, when
// there is one, the index name and scan segment), so it can be handed to an
// API client as a page token and taken back. It holds the key values of an
// item and nothing else: no table name, no credentials, nothing that is
// not already in the item. It is not signed either: a client can forge a
// cursor that names another key (which only moves its starting point), so
// do not treat it as an authorization decision. Check cursors from outside
// with ParseCursor; StartAfter checks them again against the table.
type Cursor string

// ParseCursor checks that s is a cursor QueryPage or ScanPage made and
// returns it: for page tokens from outside, so that a malformed, truncated or
// unknown one is an error wrapping ErrInvalidInput, answered before anything
// is sent. It takes only the exact text this package writes, so a cursor it
// accepts stands for one position; the empty string is refused (pass no
// StartAfter to start). It checks the form only; StartAfter checks the fit
// with the query. It costs a few microseconds. Rules:
// docs/calls.md#parsecursor.
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return "", fmt.Errorf("%w: empty cursor: leave StartAfter out to start from the beginning", ErrInvalidInput)
	}
	if _, err := decodeCursor(Cursor(s)); err != nil {
		return "", err
	}
	return Cursor(s), nil
}

// checkPosition checks that a decoded cursor belongs to a listing of this
// table on index (and scan segment, when total > 0) and, for a query, to
// its key condition kc (nil for a scan): the key attributes DynamoDB's
// LastEvaluatedKey holds there, each of the type the table stores, the
// partition the query reads, and a sort key the condition selects. What
// DynamoDB would refuse with a ValidationException is refused here, before
// anything is sent.
func (t *table) checkPosition(p plan.Position, index string, segment, total int, kc *plan.KeyCond) error {
	if err := t.checkListing(p, index, segment, total); err != nil {
		return err
	}
	if err := t.checkPositionKey(p, index); err != nil {
		return err
	}
	return t.checkPositionInQuery(p, kc)
}

// badCursor is the error of a cursor that does not belong to the call.
func (t *table) badCursor(format string, args ...any) error {
	return fmt.Errorf("%w: cursor for table %q: %s: pass a cursor back to the same query or scan it came from",
		ErrInvalidInput, t.name, fmt.Sprintf(format, args...))
}

// checkListing checks that p was made reading index, and by a scan of the
// same segment (when total > 0) or of none.
func (t *table) checkListing(p plan.Position, index string, segment, total int) error {
	if p.Index != index {
		return t.badCursor("it was made reading %s, this call reads %s", whereName(p.Index), whereName(index))
	}
	switch {
	case p.Total == 0 && total > 0:
		return t.badCursor("it was made by a scan of the whole table, this call scans segment %d of %d", segment, total)
	case p.Total > 0 && total == 0:
		return t.badCursor("it was made by a scan of segment %d of %d, this call reads everything", p.Segment, p.Total)
	case p.Segment != segment || p.Total != total:
		return t.badCursor("it was made by a scan of segment %d of %d, this call scans segment %d of %d", p.Segment, p.Total, segment, total)
	}
	return nil
}

// checkPositionKey checks the key p holds, read on index: the key
// attributes, the types T's fields give them, and DynamoDB's limits on
// their sizes.
func (t *table) checkPositionKey(p plan.Position, index string) error {
	// A position in the table holds the table's key; in an index, the
	// table's key and the index's. The index's key is known when T's tags
	// declare the index; otherwise only the table's part is checked.
	s := t.p.S
	fields := []int{s.Hash}
	if s.Range >= 0 {
		fields = append(fields, s.Range)
	}
	what := "the table's key"
	ihash, irng, exact := t.listingKey(index)
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
			return t.badCursor("it lacks the key attribute %q (it holds %s)", n, keyNameList(p.Key))
		}
	}
	if exact && len(p.Key) != len(names) {
		return t.badCursor("it holds %s, but %s is %s", keyNameList(p.Key), what, quoteList(names))
	}
	// Types: of every attribute T models (beyond the known keys, those of an
	// index the tags do not declare, which DynamoDB stores as T's field is
	// written or not at all).
	for _, n := range slices.Sorted(maps.Keys(p.Key)) {
		i, ok := s.ByName[n]
		if !ok || !slices.Contains(names, n) && schema.CheckKeyType(&s.Fields[i]) != nil {
			continue // not modeled, or of a Go type no key can have
		}
		if want, got := t.keyKind(&s.Fields[i]), plan.KindOf(p.Key[n]); want != 0 && got != want {
			return t.badCursor("its key attribute %q is a %s, but the table stores it as a %s", n, plan.KindName(got), plan.KindName(want))
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
			return t.badCursor("its key attribute %q %s", n, what)
		}
	}
	return nil
}

// checkPositionInQuery checks that p lies in what the query's key
// condition kc selects: its partition, and a sort key the condition holds
// for. A scan (kc nil) selects every position.
func (t *table) checkPositionInQuery(p plan.Position, kc *plan.KeyCond) error {
	if kc == nil {
		return nil
	}
	for _, h := range kc.Hash {
		if h != nil && plan.CompareKeyValues(p.Key[h.Name], h.Values[0]) != 0 {
			return t.badCursor("it is in the partition %s = %s, this query reads %s = %s",
				h.Name, plan.ShortScalar(p.Key[h.Name]), h.Name, plan.ShortScalar(h.Values[0]))
		}
	}
	for _, r := range kc.Rng {
		if r != nil && !plan.KeyTermHolds(r, p.Key[r.Name]) {
			return t.badCursor("its sort key %s = %s is not one the query's key condition selects (%s)",
				r.Name, plan.ShortScalar(p.Key[r.Name]), plan.FormatKeyTerm(r))
		}
	}
	return nil
}

func keyNameList(key map[string]types.AttributeValue) string {
	return quoteList(slices.Sorted(maps.Keys(key)))
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// encodeCursor returns the cursor for p; p.key comes from DynamoDB.
func encodeCursor(p plan.Position) (Cursor, error) {
	s, err := plan.EncodePosition(p)
	return Cursor(s), err
}

// decodeCursor parses and checks a non-empty cursor.
func decodeCursor(c Cursor) (plan.Position, error) { return plan.DecodePosition(string(c)) }
