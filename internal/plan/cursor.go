package plan

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/errs"
	"github.com/ddbkit/dynamo/internal/schema"
)

// cursorVersion is the format of the JSON inside a Cursor.
const cursorVersion = 1

// MaxCursorLen bounds the cursors ParseCursor accepts. Key values are at most
// 2048 bytes (partition) and 1024 bytes (sort), names at most 255 bytes, a
// position has at most maxKeyAttrs of them (table and index keys), and JSON
// escaping can multiply a byte by six: the longest cursor this package
// makes is about 144 KiB.
const MaxCursorLen = 256 << 10

// Limits DynamoDB puts on what a cursor may hold.
const (
	maxKeyAttrs      = 2 + 2*schema.MaxKeyAttrs // table hash and range, index hash and range attributes
	maxKeyNameLen    = 255
	MaxTotalSegments = 1_000_000
	cursorFixAdvice  = "pass back a cursor exactly as QueryPage or ScanPage returned it"
)

// Position is the decoded form of a Cursor.
type Position struct {
	Index   string // "" for the base table
	Segment int    // scan segment, meaningful when total > 0
	Total   int    // total scan segments; 0 when not a segment scan
	Key     map[string]types.AttributeValue
}

// cursorDoc is the JSON inside a Cursor, as encodePosition writes it
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

// cursorError is the error of a cursor that does not parse.
func cursorError(format string, args ...any) error {
	return fmt.Errorf("%w: malformed cursor: %s: %s", errs.ErrInvalidInput, fmt.Sprintf(format, args...), cursorFixAdvice)
}

// DecodePosition parses and checks a non-empty cursor.
func DecodePosition(c string) (Position, error) {
	if len(c) > MaxCursorLen {
		return Position{}, cursorError("%d bytes long, more than any cursor (%d)", len(c), MaxCursorLen)
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err != nil {
		return Position{}, cursorError("not base64url text (%v)", err)
	}
	return parseCursorJSON(raw)
}

// EncodePosition returns the cursor for p; p.key comes from DynamoDB.
func EncodePosition(p Position) (string, error) {
	doc := cursorDoc{V: cursorVersion, I: p.Index, K: make(map[string]cursorKeyValue, len(p.Key))}
	if p.Total > 0 {
		doc.G = []int{p.Segment, p.Total}
	}
	for name, av := range p.Key {
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
	return base64.RawURLEncoding.EncodeToString(raw), nil
}

// CheckSegment applies DynamoDB's rules for a scan segment.
func CheckSegment(segment, total int) error {
	if total < 1 || total > MaxTotalSegments {
		return fmt.Errorf("%d total segments; DynamoDB takes 1 to %d", total, MaxTotalSegments)
	}
	if segment < 0 || segment >= total {
		return fmt.Errorf("segment %d of %d; segments are numbered 0 to %d", segment, total, total-1)
	}
	return nil
}

// CompareKeyValues orders key values of one type as DynamoDB does: strings
// and binary by their bytes, numbers by value. Values of different types
// (which the checks before it refuse) compare unequal.
func CompareKeyValues(a, b types.AttributeValue) int {
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

// KeyTermHolds reports whether the key value v satisfies the term.
func KeyTermHolds(kt *KeyTerm, v types.AttributeValue) bool {
	c := CompareKeyValues(v, kt.Values[0])
	if c == 2 {
		return false
	}
	switch kt.Op {
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
		hi := CompareKeyValues(v, kt.Values[1])
		return c >= 0 && hi != 2 && hi <= 0
	case "begins_with":
		switch x := v.(type) {
		case *types.AttributeValueMemberS:
			return strings.HasPrefix(x.Value, kt.Values[0].(*types.AttributeValueMemberS).Value)
		case *types.AttributeValueMemberB:
			return bytes.HasPrefix(x.Value, kt.Values[0].(*types.AttributeValueMemberB).Value)
		}
	}
	return false
}

func FormatKeyTerm(kt *KeyTerm) string {
	switch kt.Op {
	case "BETWEEN":
		return fmt.Sprintf("%s BETWEEN %s AND %s", kt.Name, ShortScalar(kt.Values[0]), ShortScalar(kt.Values[1]))
	case "begins_with":
		return fmt.Sprintf("begins_with(%s, %s)", kt.Name, ShortScalar(kt.Values[0]))
	}
	return fmt.Sprintf("%s %s %s", kt.Name, kt.Op, ShortScalar(kt.Values[0]))
}

// parseCursorJSON reads the JSON inside a cursor with encoding/json and
// takes it only if re-encoding what it read gives back raw byte for byte:
// the text encodePosition writes for that position. That refuses what
// encoding/json alone would let through — a duplicated field (it keeps the
// last), a field name in another case, null, unknown fields, invalid UTF-8
// (it substitutes U+FFFD) — and any other spelling (whitespace, escapes,
// member order), so that a cursor means one position or none. What it
// holds is checked next: version, index name, segment, key attributes.
func parseCursorJSON(raw []byte) (Position, error) {
	if !utf8.Valid(raw) {
		return Position{}, cursorError("the JSON inside is not valid UTF-8")
	}
	var doc cursorDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Position{}, cursorError("bad JSON inside (%v)", err)
	}
	if again, err := json.Marshal(doc); err != nil || !bytes.Equal(again, raw) {
		i := 0
		for i < len(raw) && i < len(again) && raw[i] == again[i] {
			i++
		}
		return Position{}, cursorError("the JSON inside is not as this package writes it, from offset %d: %.24q", i, raw[i:])
	}
	pos, err := doc.position()
	if err != nil {
		return Position{}, cursorError("%v", err)
	}
	return pos, nil
}

// position checks what a cursor's JSON holds and returns it.
func (d *cursorDoc) position() (Position, error) {
	if d.V != cursorVersion {
		return Position{}, fmt.Errorf("format version %d, this release reads version %d", d.V, cursorVersion)
	}
	pos := Position{Index: d.I}
	if d.I != "" {
		if err := schema.CheckIndexName(d.I); err != nil {
			return Position{}, fmt.Errorf("index name: %v", err)
		}
	}
	if d.G != nil {
		if len(d.G) != 2 {
			return Position{}, fmt.Errorf("segment field has %d numbers, not 2", len(d.G))
		}
		pos.Segment, pos.Total = d.G[0], d.G[1]
		if err := CheckSegment(pos.Segment, pos.Total); err != nil {
			return Position{}, err
		}
	}
	if len(d.K) == 0 || len(d.K) > maxKeyAttrs {
		return Position{}, fmt.Errorf("%d key attributes, want 1 to %d", len(d.K), maxKeyAttrs)
	}
	pos.Key = make(map[string]types.AttributeValue, len(d.K))
	for _, name := range slices.Sorted(maps.Keys(d.K)) {
		if name == "" || len(name) > maxKeyNameLen {
			return Position{}, fmt.Errorf("key attribute name of %d bytes, want 1 to %d", len(name), maxKeyNameLen)
		}
		v, err := d.K[name].attributeValue()
		if err != nil {
			return Position{}, fmt.Errorf("key attribute %.40q: %v", name, err)
		}
		pos.Key[name] = v
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
		if err := CheckNumber(*v.N); err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberN{Value: *v.N}, nil
	}
	return &types.AttributeValueMemberB{Value: v.B}, nil // not empty: json.Marshal omits an empty B
}

// CheckNumber accepts the numbers DynamoDB stores (the rule is
// av.Problem's): its notation, at most 38 significant digits (leading and
// trailing zeros do not count), and a magnitude DynamoDB can hold.
func CheckNumber(s string) error {
	if p := av.Problem(s); p != "" {
		return errors.New("the value " + p)
	}
	return nil
}

// ShortScalar renders a key value for a message, cut to a readable length
// (a forged cursor's value can be long).
func ShortScalar(av types.AttributeValue) string {
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
