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
	"unicode/utf16"
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
// (parseCursorJSON reads it). Key values use DynamoDB's own JSON notation:
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
// The check is strict: besides malformed base64 or JSON, it refuses
// duplicated fields, unknown fields (names are case-sensitive), null where a
// value belongs, strings that are not valid UTF-8 (or hold an escaped lone
// surrogate), key values of another type than S, N or B, and numbers
// DynamoDB would refuse (more than 38 significant digits, or a magnitude
// outside 1E-130 to 9.9999999999999999999999999999999999999E+125). A cursor
// it accepts stands for exactly one position.
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
	s := t.p.s
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

// parseCursorJSON reads the JSON inside a cursor. It is stricter than
// encoding/json, which would take a duplicated field's last value, match
// field names regardless of case, read null as "absent" and replace invalid
// UTF-8 with U+FFFD: here each of them is refused, so that a cursor means
// one position or none.
func parseCursorJSON(raw []byte) (position, error) {
	p := &cursorParser{b: raw}
	var pos position
	haveV, haveK := false, false
	err := p.object("the cursor", func(name string) error {
		var err error
		switch name {
		case "v":
			var v int
			if v, err = p.integer("the format version"); err == nil && v != cursorVersion {
				err = fmt.Errorf("format version %d, this release reads version %d", v, cursorVersion)
			}
			haveV = true
		case "i":
			if pos.index, err = p.str("the index name"); err == nil {
				if err = schema.CheckIndexName(pos.index); err != nil {
					err = fmt.Errorf("index name: %v", err)
				}
			}
		case "g":
			err = p.segment(&pos)
		case "k":
			pos.key, err = p.key()
			haveK = true
		default:
			err = fmt.Errorf("unknown field %.40q (a cursor has v, i, g and k)", name)
		}
		return err
	})
	if err != nil {
		return position{}, cursorError("%v", err)
	}
	if p.ws(); p.i != len(p.b) {
		return position{}, cursorError("data after the JSON inside")
	}
	if !haveV {
		return position{}, cursorError("format version 0, this release reads version %d", cursorVersion)
	}
	if !haveK {
		return position{}, cursorError("0 key attributes, want 1 to %d", maxKeyAttrs)
	}
	return pos, nil
}

// cursorParser is a strict reader of the small JSON documents inside
// cursors.
type cursorParser struct {
	b []byte
	i int
}

func (p *cursorParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *cursorParser) peek() byte {
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// unexpected describes what stands at the current offset instead of want.
func (p *cursorParser) unexpected(want string) error {
	switch {
	case p.i >= len(p.b):
		return fmt.Errorf("bad JSON inside (it ends where %s should be)", want)
	case bytes.HasPrefix(p.b[p.i:], []byte("null")):
		return fmt.Errorf("bad JSON inside (null at offset %d, where %s should be)", p.i, want)
	}
	return fmt.Errorf("bad JSON inside (%q at offset %d, where %s should be)", p.b[p.i], p.i, want)
}

func (p *cursorParser) expect(c byte, want string) error {
	if p.peek() != c {
		return p.unexpected(want)
	}
	p.i++
	return nil
}

// object reads a JSON object, calling member for each field name with the
// parser at the field's value; a field name may appear only once.
func (p *cursorParser) object(what string, member func(name string) error) error {
	if err := p.expect('{', what+" (an object)"); err != nil {
		return err
	}
	if p.peek() == '}' {
		p.i++
		return nil
	}
	var seen []string // a handful at most: maxKeyAttrs is checked by the caller as it goes
	for {
		name, err := p.str("a field name in " + what)
		if err != nil {
			return err
		}
		if slices.Contains(seen, name) {
			return fmt.Errorf("field %.40q twice in %s", name, what)
		}
		seen = append(seen, name)
		if err := p.expect(':', "':'"); err != nil {
			return err
		}
		if err := member(name); err != nil {
			return err
		}
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			return nil
		default:
			return p.unexpected("',' or '}' in " + what)
		}
	}
}

// str reads a JSON string. Invalid UTF-8, control characters and escaped
// lone surrogates are refused, not replaced.
func (p *cursorParser) str(what string) (string, error) {
	if p.peek() != '"' {
		return "", p.unexpected(what + " (a string)")
	}
	p.i++
	start := p.i
	var buf []byte // nil until the first escape
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			var s string
			if buf == nil {
				s = string(p.b[start:p.i])
			} else {
				s = string(buf)
			}
			p.i++
			if !utf8.ValidString(s) {
				return "", fmt.Errorf("%s is not valid UTF-8", what)
			}
			return s, nil
		case c < 0x20:
			return "", fmt.Errorf("bad JSON inside (control character %#x in %s)", c, what)
		case c == '\\':
			if buf == nil {
				buf = append(make([]byte, 0, 2*(p.i-start)+8), p.b[start:p.i]...)
			}
			p.i++
			if p.i >= len(p.b) {
				return "", p.unexpected("an escape in " + what)
			}
			e := p.b[p.i]
			p.i++
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", fmt.Errorf("bad JSON inside (bad \\u escape in %s)", what)
				}
				if utf16.IsSurrogate(r) {
					var r2 rune
					if r < 0xdc00 && p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
						p.i += 2
						r2, ok = p.hex4()
					}
					if r = utf16.DecodeRune(r, r2); !ok || r == utf8.RuneError {
						return "", fmt.Errorf("%s holds a lone UTF-16 surrogate, which is not valid UTF-8", what)
					}
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", fmt.Errorf("bad JSON inside (unknown escape \\%c in %s)", e, what)
			}
		default:
			if buf != nil {
				buf = append(buf, c)
			}
			p.i++
		}
	}
	return "", p.unexpected("the end of " + what)
}

func (p *cursorParser) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}

// integer reads a small JSON integer (at most 9 digits).
func (p *cursorParser) integer(what string) (int, error) {
	p.ws()
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	ds := p.i
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		p.i++
	}
	digits := p.b[ds:p.i]
	switch {
	case len(digits) == 0:
		p.i = start
		return 0, p.unexpected(what + " (an integer)")
	case len(digits) > 1 && digits[0] == '0':
		return 0, fmt.Errorf("bad JSON inside (%s has a leading zero)", what)
	case p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E'):
		return 0, fmt.Errorf("%s is not an integer", what)
	case len(digits) > 9:
		return 0, fmt.Errorf("%s %.20s… is out of range", what, p.b[start:p.i])
	}
	n, _ := strconv.Atoi(string(p.b[start:p.i]))
	return n, nil
}

// segment reads "g": [segment, total].
func (p *cursorParser) segment(pos *position) error {
	if err := p.expect('[', "the segment field (an array)"); err != nil {
		return err
	}
	var g []int
	for p.peek() != ']' || len(g) == 0 {
		if len(g) > 0 {
			if err := p.expect(',', "',' or ']' in the segment field"); err != nil {
				return err
			}
		}
		n, err := p.integer("a segment number")
		if err != nil {
			return err
		}
		if g = append(g, n); len(g) > 2 {
			return errors.New("segment field has more than 2 numbers")
		}
	}
	p.i++ // ']'
	if len(g) != 2 {
		return fmt.Errorf("segment field has %d numbers, not 2", len(g))
	}
	pos.segment, pos.total = g[0], g[1]
	return checkSegment(pos.segment, pos.total)
}

// key reads "k": the key attributes in DynamoDB's JSON notation.
func (p *cursorParser) key() (map[string]types.AttributeValue, error) {
	key := make(map[string]types.AttributeValue, 2)
	err := p.object("the key", func(name string) error {
		if len(key) == maxKeyAttrs {
			return fmt.Errorf("%d key attributes, want 1 to %d", len(key)+1, maxKeyAttrs)
		}
		if name == "" || len(name) > maxKeyNameLen {
			return fmt.Errorf("key attribute name of %d bytes, want 1 to %d", len(name), maxKeyNameLen)
		}
		av, err := p.keyValue(fmt.Sprintf("key attribute %.40q", name))
		if err != nil {
			return err
		}
		key[name] = av
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(key) == 0 {
		return nil, fmt.Errorf("0 key attributes, want 1 to %d", maxKeyAttrs)
	}
	return key, nil
}

// keyValue reads {"S": "..."}, {"N": "..."} or {"B": "<base64>"}.
func (p *cursorParser) keyValue(what string) (types.AttributeValue, error) {
	var av types.AttributeValue
	tags := 0
	err := p.object(what, func(tag string) error {
		if tag != "S" && tag != "N" && tag != "B" {
			return fmt.Errorf("%s: type tag %.10q, want exactly one of S, N, B (keys are strings, numbers or binary)", what, tag)
		}
		v, err := p.str(what + "'s " + tag + " value")
		if err != nil {
			return err
		}
		if tags++; tags > 1 {
			return fmt.Errorf("%s: %d type tags, want exactly one of S, N, B", what, tags)
		}
		switch tag {
		case "S":
			if v == "" {
				return fmt.Errorf("%s: empty string, which no key can be", what)
			}
			av = &types.AttributeValueMemberS{Value: v}
		case "N":
			if err := checkNumber(v); err != nil {
				return fmt.Errorf("%s: %v", what, err)
			}
			av = &types.AttributeValueMemberN{Value: v}
		case "B":
			b, err := base64.StdEncoding.Strict().DecodeString(v)
			switch {
			case err != nil:
				return fmt.Errorf("%s: binary value is not base64 (%v)", what, err)
			case len(b) == 0:
				return fmt.Errorf("%s: empty binary value, which no key can be", what)
			}
			av = &types.AttributeValueMemberB{Value: b}
		}
		return nil
	})
	if err == nil && tags == 0 {
		err = fmt.Errorf("%s: 0 type tags, want exactly one of S, N, B", what)
	}
	return av, err
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
