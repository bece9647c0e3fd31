package dynamo

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
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

// cursorVersion is the format of the JSON inside a Cursor.
const cursorVersion = 1

// maxCursorLen bounds the cursors ParseCursor accepts. Key values are at most
// 2048 bytes (partition) and 1024 bytes (sort), names at most 255 bytes, a
// position has at most four of them (table and index keys), and JSON
// escaping can multiply a byte by six: no cursor this package makes comes
// near it.
const maxCursorLen = 128 << 10

// Limits DynamoDB puts on what a cursor may hold.
const (
	maxKeyAttrs      = 4 // table hash and range, index hash and range
	maxKeyNameLen    = 255
	maxTotalSegments = 1_000_000
	cursorFixAdvice  = "pass back a cursor exactly as QueryPage or ScanPage returned it"
)

// position is the decoded form of a Cursor.
type position struct {
	index   string // "" for the base table
	segment int    // scan segment, meaningful when total > 0
	total   int    // total scan segments; 0 when not a segment scan
	key     map[string]types.AttributeValue
}

// cursorDoc is the JSON inside a Cursor, as encodeCursor writes it
// (parseCursorJSON reads it back, and takes only what re-encodes to the
// same bytes). Key values use DynamoDB's own JSON notation:
// {"S": "x"}, {"N": "12"}, {"B": "<base64>"}.
type cursorDoc struct {
	V int                       `json:"v"`
	I string                    `json:"i,omitempty"`
	G []int                     `json:"g,omitempty"` // [segment, total]
	K map[string]cursorKeyValue `json:"k"`
}

type cursorKeyValue struct {
	S *string `json:"S,omitempty"`
	N *string `json:"N,omitempty"`
	B []byte  `json:"B,omitempty"`
}

// ParseCursor checks that s is a cursor this package made (QueryPage or
// ScanPage) and returns it as a Cursor. It is for input from outside, such
// as an API client's page token: a malformed, truncated or unknown token is
// an error wrapping ErrInvalidInput that says what is wrong, so it can be
// answered with a client error before anything is sent. The empty string is
// refused; to start from the beginning, pass no StartAfter (or the empty
// Cursor, which StartAfter takes as "from the start").
//
// The check is strict: it takes only the exact text this package writes
// for a position (no other spelling of the same JSON: whitespace, escapes,
// member order, duplicated or unknown fields, null), and then refuses key
// values of another type than S, N or B and numbers DynamoDB would refuse
// (more than 38 significant digits, or a magnitude outside 1E-130 to
// 9.9999999999999999999999999999999999999E+125). A cursor it accepts
// stands for exactly one position. It costs a few microseconds.
//
// ParseCursor checks the cursor's form only. Whether it fits the table,
// index, partition and key condition it is used with is checked by
// StartAfter, when the query or scan is prepared.
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return "", fmt.Errorf("%w: empty cursor: leave StartAfter out to start from the beginning", ErrInvalidInput)
	}
	if _, err := decodeCursor(Cursor(s)); err != nil {
		return "", err
	}
	return Cursor(s), nil
}

// cursorError is the error of a cursor that does not parse.
func cursorError(format string, args ...any) error {
	return fmt.Errorf("%w: malformed cursor: %s: %s", ErrInvalidInput, fmt.Sprintf(format, args...), cursorFixAdvice)
}

// decodeCursor parses and checks a non-empty cursor.
func decodeCursor(c Cursor) (position, error) {
	if len(c) > maxCursorLen {
		return position{}, cursorError("%d bytes long, more than any cursor (%d)", len(c), maxCursorLen)
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(string(c))
	if err != nil {
		return position{}, cursorError("not base64url text (%v)", err)
	}
	return parseCursorJSON(raw)
}

// encodeCursor returns the cursor for p; p.key comes from DynamoDB.
func encodeCursor(p position) (Cursor, error) {
	doc := cursorDoc{V: cursorVersion, I: p.index, K: make(map[string]cursorKeyValue, len(p.key))}
	if p.total > 0 {
		doc.G = []int{p.segment, p.total}
	}
	for name, av := range p.key {
		if !utf8.ValidString(name) {
			return "", fmt.Errorf("dynamo: position key attribute name %q is not valid UTF-8", name)
		}
		var v cursorKeyValue
		switch a := av.(type) {
		case *types.AttributeValueMemberS:
			if !utf8.ValidString(a.Value) {
				return "", fmt.Errorf("dynamo: position key attribute %q: string %q is not valid UTF-8", name, a.Value)
			}
			v.S = &a.Value
		case *types.AttributeValueMemberN:
			v.N = &a.Value
		case *types.AttributeValueMemberB:
			v.B = a.Value
		default:
			return "", fmt.Errorf("dynamo: position key attribute %q is a %T; keys are strings, numbers or binary", name, av)
		}
		doc.K[name] = v
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("dynamo: encode position: %w", err)
	}
	return Cursor(base64.RawURLEncoding.EncodeToString(raw)), nil
}

// checkSegment applies DynamoDB's rules for a scan segment.
func checkSegment(segment, total int) error {
	if total < 1 || total > maxTotalSegments {
		return fmt.Errorf("%d total segments; DynamoDB takes 1 to %d", total, maxTotalSegments)
	}
	if segment < 0 || segment >= total {
		return fmt.Errorf("segment %d of %d; segments are numbered 0 to %d", segment, total, total-1)
	}
	return nil
}

// checkPosition checks that a decoded cursor belongs to a listing of this
// table on index (and scan segment, when total > 0) and, for a query, to
// its key condition kc (nil for a scan): the key attributes DynamoDB's
// LastEvaluatedKey holds there, each of the type the table stores, the
// partition the query reads, and a sort key the condition selects. What
// DynamoDB would refuse with a ValidationException is refused here, before
// anything is sent.
func (t *Table[T]) checkPosition(p position, index string, segment, total int, kc *keyCond) error {
	if err := t.checkListing(p, index, segment, total); err != nil {
		return err
	}
	if err := t.checkPositionKey(p, index); err != nil {
		return err
	}
	return t.checkPositionInQuery(p, kc)
}

// badCursor is the error of a cursor that does not belong to the call.
func (t *Table[T]) badCursor(format string, args ...any) error {
	return fmt.Errorf("%w: cursor for table %q: %s: pass a cursor back to the same query or scan it came from",
		ErrInvalidInput, t.name, fmt.Sprintf(format, args...))
}

// checkListing checks that p was made reading index, and by a scan of the
// same segment (when total > 0) or of none.
func (t *Table[T]) checkListing(p position, index string, segment, total int) error {
	if p.index != index {
		return t.badCursor("it was made reading %s, this call reads %s", whereName(p.index), whereName(index))
	}
	switch {
	case p.total == 0 && total > 0:
		return t.badCursor("it was made by a scan of the whole table, this call scans segment %d of %d", segment, total)
	case p.total > 0 && total == 0:
		return t.badCursor("it was made by a scan of segment %d of %d, this call reads everything", p.segment, p.total)
	case p.segment != segment || p.total != total:
		return t.badCursor("it was made by a scan of segment %d of %d, this call scans segment %d of %d", p.segment, p.total, segment, total)
	}
	return nil
}

// checkPositionKey checks the key p holds, read on index: the key
// attributes, the types T's fields give them, and DynamoDB's limits on
// their sizes.
func (t *Table[T]) checkPositionKey(p position, index string) error {
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
		for _, i := range [2]int{ihash, irng} {
			if i >= 0 && !slices.Contains(fields, i) {
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
		if _, ok := p.key[n]; !ok {
			return t.badCursor("it lacks the key attribute %q (it holds %s)", n, keyNameList(p.key))
		}
	}
	if exact && len(p.key) != len(names) {
		return t.badCursor("it holds %s, but %s is %s", keyNameList(p.key), what, quoteList(names))
	}
	// Types: of every attribute T models (beyond the known keys, those of an
	// index the tags do not declare, which DynamoDB stores as T's field is
	// written or not at all).
	for _, n := range slices.Sorted(maps.Keys(p.key)) {
		i, ok := s.ByName[n]
		if !ok || !slices.Contains(names, n) && schema.CheckKeyType(&s.Fields[i]) != nil {
			continue // not modeled, or of a Go type no key can have
		}
		if want, got := t.keyKind(&s.Fields[i]), kindOf(p.key[n]); want != 0 && got != want {
			return t.badCursor("its key attribute %q is a %s, but the table stores it as a %s", n, kindName(got), kindName(want))
		}
	}
	// DynamoDB's key size limits: 2048 bytes for a partition key, 1024 for
	// a sort key (of the table or of the index).
	for n, v := range p.key {
		limit := maxPartitionKeyLen
		if (s.Range >= 0 && n == s.Fields[s.Range].Name) || (exact && irng >= 0 && n == s.Fields[irng].Name) {
			limit = maxSortKeyLen
		}
		if what, _ := keyValueFault(v, limit, false); what != "" {
			return t.badCursor("its key attribute %q %s", n, what)
		}
	}
	return nil
}

// checkPositionInQuery checks that p lies in what the query's key
// condition kc selects: its partition, and a sort key the condition holds
// for. A scan (kc nil) selects every position.
func (t *Table[T]) checkPositionInQuery(p position, kc *keyCond) error {
	if kc == nil {
		return nil
	}
	if h := kc.hash; h != nil && compareKeyValues(p.key[h.name], h.values[0]) != 0 {
		return t.badCursor("it is in the partition %s = %s, this query reads %s = %s",
			h.name, shortScalar(p.key[h.name]), h.name, shortScalar(h.values[0]))
	}
	if r := kc.rng; r != nil && !keyTermHolds(r, p.key[r.name]) {
		return t.badCursor("its sort key %s = %s is not one the query's key condition selects (%s)",
			r.name, shortScalar(p.key[r.name]), formatKeyTerm(r))
	}
	return nil
}

// compareKeyValues orders key values of one type as DynamoDB does: strings
// and binary by their bytes, numbers by value. Values of different types
// (which the checks before it refuse) compare unequal.
func compareKeyValues(a, b types.AttributeValue) int {
	switch x := a.(type) {
	case *types.AttributeValueMemberS:
		if y, ok := b.(*types.AttributeValueMemberS); ok {
			return strings.Compare(x.Value, y.Value)
		}
	case *types.AttributeValueMemberB:
		if y, ok := b.(*types.AttributeValueMemberB); ok {
			return bytes.Compare(x.Value, y.Value)
		}
	case *types.AttributeValueMemberN:
		if y, ok := b.(*types.AttributeValueMemberN); ok {
			return av.NumberCompare(x.Value, y.Value)
		}
	}
	return 2
}

// keyTermHolds reports whether the key value v satisfies the term.
func keyTermHolds(kt *keyTerm, v types.AttributeValue) bool {
	c := compareKeyValues(v, kt.values[0])
	if c == 2 {
		return false
	}
	switch kt.op {
	case "=":
		return c == 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	case "BETWEEN":
		hi := compareKeyValues(v, kt.values[1])
		return c >= 0 && hi != 2 && hi <= 0
	case "begins_with":
		switch x := v.(type) {
		case *types.AttributeValueMemberS:
			return strings.HasPrefix(x.Value, kt.values[0].(*types.AttributeValueMemberS).Value)
		case *types.AttributeValueMemberB:
			return bytes.HasPrefix(x.Value, kt.values[0].(*types.AttributeValueMemberB).Value)
		}
	}
	return false
}

func formatKeyTerm(kt *keyTerm) string {
	switch kt.op {
	case "BETWEEN":
		return fmt.Sprintf("%s BETWEEN %s AND %s", kt.name, shortScalar(kt.values[0]), shortScalar(kt.values[1]))
	case "begins_with":
		return fmt.Sprintf("begins_with(%s, %s)", kt.name, shortScalar(kt.values[0]))
	}
	return fmt.Sprintf("%s %s %s", kt.name, kt.op, shortScalar(kt.values[0]))
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

// parseCursorJSON reads the JSON inside a cursor with encoding/json and
// takes it only if re-encoding what it read gives back raw byte for byte:
// the text encodeCursor writes for that position. That refuses what
// encoding/json alone would let through — a duplicated field (it keeps the
// last), a field name in another case, null, unknown fields, invalid UTF-8
// (it substitutes U+FFFD) — and any other spelling (whitespace, escapes,
// member order), so that a cursor means one position or none. What it
// holds is checked next: version, index name, segment, key attributes.
func parseCursorJSON(raw []byte) (position, error) {
	if !utf8.Valid(raw) {
		return position{}, cursorError("the JSON inside is not valid UTF-8")
	}
	var doc cursorDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return position{}, cursorError("bad JSON inside (%v)", err)
	}
	if again, err := json.Marshal(doc); err != nil || !bytes.Equal(again, raw) {
		i := 0
		for i < len(raw) && i < len(again) && raw[i] == again[i] {
			i++
		}
		return position{}, cursorError("the JSON inside is not as this package writes it, from offset %d: %.24q", i, raw[i:])
	}
	pos, err := doc.position()
	if err != nil {
		return position{}, cursorError("%v", err)
	}
	return pos, nil
}

// position checks what a cursor's JSON holds and returns it.
func (d *cursorDoc) position() (position, error) {
	if d.V != cursorVersion {
		return position{}, fmt.Errorf("format version %d, this release reads version %d", d.V, cursorVersion)
	}
	pos := position{index: d.I}
	if d.I != "" {
		if err := schema.CheckIndexName(d.I); err != nil {
			return position{}, fmt.Errorf("index name: %v", err)
		}
	}
	if d.G != nil {
		if len(d.G) != 2 {
			return position{}, fmt.Errorf("segment field has %d numbers, not 2", len(d.G))
		}
		pos.segment, pos.total = d.G[0], d.G[1]
		if err := checkSegment(pos.segment, pos.total); err != nil {
			return position{}, err
		}
	}
	if len(d.K) == 0 || len(d.K) > maxKeyAttrs {
		return position{}, fmt.Errorf("%d key attributes, want 1 to %d", len(d.K), maxKeyAttrs)
	}
	pos.key = make(map[string]types.AttributeValue, len(d.K))
	for _, name := range slices.Sorted(maps.Keys(d.K)) {
		if name == "" || len(name) > maxKeyNameLen {
			return position{}, fmt.Errorf("key attribute name of %d bytes, want 1 to %d", len(name), maxKeyNameLen)
		}
		v, err := d.K[name].attributeValue()
		if err != nil {
			return position{}, fmt.Errorf("key attribute %.40q: %v", name, err)
		}
		pos.key[name] = v
	}
	return pos, nil
}

// attributeValue returns the key value {"S": "..."}, {"N": "..."} or
// {"B": "<base64>"}.
func (v cursorKeyValue) attributeValue() (types.AttributeValue, error) {
	tags := 0
	for _, set := range [...]bool{v.S != nil, v.N != nil, v.B != nil} {
		if set {
			tags++
		}
	}
	if tags != 1 {
		return nil, fmt.Errorf("%d type tags, want exactly one of S, N, B", tags)
	}
	switch {
	case v.S != nil && *v.S == "":
		return nil, errors.New("empty string, which no key can be")
	case v.S != nil:
		return &types.AttributeValueMemberS{Value: *v.S}, nil
	case v.N != nil:
		if err := checkNumber(*v.N); err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberN{Value: *v.N}, nil
	}
	return &types.AttributeValueMemberB{Value: v.B}, nil // not empty: json.Marshal omits an empty B
}

// checkNumber accepts the numbers DynamoDB stores (the rule is
// av.Problem's): its notation, at most 38 significant digits (leading and
// trailing zeros do not count), and a magnitude DynamoDB can hold.
func checkNumber(s string) error {
	if p := av.Problem(s); p != "" {
		return errors.New("the value " + p)
	}
	return nil
}

// shortScalar renders a key value for a message, cut to a readable length
// (a forged cursor's value can be long).
func shortScalar(av types.AttributeValue) string {
	s := schema.FormatScalar(av)
	if len(s) > 64 {
		cut := 60
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
