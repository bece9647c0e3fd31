package dynamo

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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
	maxNumberLen     = 128 // 38 significant digits, sign, exponent and zeros
	cursorFixAdvice  = "pass back a cursor exactly as QueryPage or ScanPage returned it"
)

// position is the decoded form of a Cursor.
type position struct {
	index   string // "" for the base table
	segment int    // scan segment, meaningful when total > 0
	total   int    // total scan segments; 0 when not a segment scan
	key     map[string]types.AttributeValue
}

// cursorDoc is the JSON inside a Cursor. Key values use DynamoDB's own JSON
// notation: {"S": "x"}, {"N": "12"}, {"B": "<base64>"}.
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
// ParseCursor checks the cursor's form only. Whether it belongs to the table
// and index it is used with is checked by StartAfter, when the query or scan
// is prepared.
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
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var doc cursorDoc
	if err := dec.Decode(&doc); err != nil {
		return position{}, cursorError("bad JSON inside (%v)", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return position{}, cursorError("data after the JSON inside")
	}
	if doc.V != cursorVersion {
		return position{}, cursorError("format version %d, this release reads version %d", doc.V, cursorVersion)
	}
	p := position{index: doc.I}
	if doc.I != "" {
		if err := checkIndexName(doc.I); err != nil {
			return position{}, cursorError("index name: %v", err)
		}
	}
	if doc.G != nil {
		if len(doc.G) != 2 {
			return position{}, cursorError("segment field has %d numbers, not 2", len(doc.G))
		}
		p.segment, p.total = doc.G[0], doc.G[1]
		if err := checkSegment(p.segment, p.total); err != nil {
			return position{}, cursorError("%v", err)
		}
	}
	if len(doc.K) == 0 || len(doc.K) > maxKeyAttrs {
		return position{}, cursorError("%d key attributes, want 1 to %d", len(doc.K), maxKeyAttrs)
	}
	p.key = make(map[string]types.AttributeValue, len(doc.K))
	for name, v := range doc.K {
		if name == "" || len(name) > maxKeyNameLen {
			return position{}, cursorError("key attribute name of %d bytes, want 1 to %d", len(name), maxKeyNameLen)
		}
		av, err := v.attributeValue()
		if err != nil {
			return position{}, cursorError("key attribute %q: %v", name, err)
		}
		p.key[name] = av
	}
	return p, nil
}

func (v cursorKeyValue) attributeValue() (types.AttributeValue, error) {
	n := 0
	for _, set := range [...]bool{v.S != nil, v.N != nil, v.B != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("%d type tags, want exactly one of S, N, B", n)
	}
	switch {
	case v.S != nil:
		if *v.S == "" {
			return nil, errors.New("empty string, which no key can be")
		}
		return &types.AttributeValueMemberS{Value: *v.S}, nil
	case v.N != nil:
		if !validNumber(*v.N) {
			return nil, fmt.Errorf("%.40q is not a number", *v.N)
		}
		return &types.AttributeValueMemberN{Value: *v.N}, nil
	default:
		if len(v.B) == 0 {
			return nil, errors.New("empty binary value, which no key can be")
		}
		return &types.AttributeValueMemberB{Value: v.B}, nil
	}
}

// encodeCursor returns the cursor for p; p.key comes from DynamoDB.
func encodeCursor(p position) (Cursor, error) {
	doc := cursorDoc{V: cursorVersion, I: p.index, K: make(map[string]cursorKeyValue, len(p.key))}
	if p.total > 0 {
		doc.G = []int{p.segment, p.total}
	}
	for name, av := range p.key {
		var v cursorKeyValue
		switch a := av.(type) {
		case *types.AttributeValueMemberS:
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

// validNumber reports whether s is a number in DynamoDB's notation:
// -?(digits[.digits]|.digits)([eE][+-]?digits)?
func validNumber(s string) bool {
	if s == "" || len(s) > maxNumberLen {
		return false
	}
	i := 0
	if s[i] == '-' {
		i++
	}
	digits := func() int {
		start := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i - start
	}
	n := digits()
	if i < len(s) && s[i] == '.' {
		i++
		n += digits()
	}
	if n == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
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
// table on index (and scan segment, when total > 0).
func (t *Table[T]) checkPosition(p position, index string, segment, total int) error {
	where := func(idx string) string {
		if idx == "" {
			return "the table itself"
		}
		return "index " + strconv.Quote(idx)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: cursor for table %q: %s: pass a cursor back to the same query or scan it came from",
			ErrInvalidInput, t.name, fmt.Sprintf(format, args...))
	}
	if p.index != index {
		return fail("it was made reading %s, this call reads %s", where(p.index), where(index))
	}
	switch {
	case p.total == 0 && total > 0:
		return fail("it was made by a scan of the whole table, this call scans segment %d of %d", segment, total)
	case p.total > 0 && total == 0:
		return fail("it was made by a scan of segment %d of %d, this call reads everything", p.segment, p.total)
	case p.segment != segment || p.total != total:
		return fail("it was made by a scan of segment %d of %d, this call scans segment %d of %d", p.segment, p.total, segment, total)
	}
	// A position in the table holds the table's key; in an index, the
	// table's key and the index's. The index's key is known when T's tags
	// declare the index; otherwise only the table's part is checked.
	names := []string{t.p.keyNames[0]}
	if t.p.hasRangeKey {
		names = append(names, t.p.keyNames[1])
	}
	what, exact := "the table's key", index == ""
	if !exact {
		s := t.p.s
		for _, x := range s.indexes {
			if x.name != index {
				continue
			}
			for _, i := range [2]int{x.hash, x.rng} {
				if i >= 0 && !slices.Contains(names, s.fields[i].name) {
					names = append(names, s.fields[i].name)
				}
			}
			what, exact = "the table's key and the index's", true
		}
	}
	for _, n := range names {
		if _, ok := p.key[n]; !ok {
			return fail("it lacks the key attribute %q (it holds %s)", n, keyNameList(p.key))
		}
	}
	if exact && len(p.key) != len(names) {
		return fail("it holds %s, but %s is %s", keyNameList(p.key), what, quoteList(names))
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
