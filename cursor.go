package dynamo

import (
	"fmt"

	"github.com/ddbkit/dynamo/internal/plan"
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
// table on index (segment of total) and to the query's key condition kc
// (nil for a scan), as DynamoDB checks an ExclusiveStartKey
// (plan.KeyRules.CheckPosition).
func (t *table) checkPosition(p plan.Position, index string, segment, total int, kc *plan.KeyCond) error {
	return t.keyRules().CheckPosition(p, index, segment, total, kc)
}

// encodeCursor returns the cursor for p; p.key comes from DynamoDB.
func encodeCursor(p plan.Position) (Cursor, error) {
	s, err := plan.EncodePosition(p)
	return Cursor(s), err
}

// decodeCursor parses and checks a non-empty cursor.
func decodeCursor(c Cursor) (plan.Position, error) { return plan.DecodePosition(string(c)) }
