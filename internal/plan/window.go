package plan

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/schema"
)

// The window of idempotency keys an item holds (the root's IdempotencyKey):
// its attribute, a list of strings, newest last, of at most WindowSize keys.
const (
	WindowAttr = "ddbkit_idem"
	WindowSize = 64
)

// The placeholders of the window: its name, the window written and the
// window the write expects stored.
const (
	windowNamePH = "#ik"
	windowNewPH  = ":ik"
	windowOldPH  = ":iko"
)

// StoredWindow returns the window attribute of item as stored (nil: none).
func StoredWindow(item map[string]types.AttributeValue) types.AttributeValue {
	a := item[WindowAttr]
	if isNull(a) {
		return nil
	}
	return a
}

// SameWindow reports whether two stored items hold the same window.
func SameWindow(a, b map[string]types.AttributeValue) bool {
	wa, wb := StoredWindow(a), StoredWindow(b)
	return wa == nil && wb == nil || wa != nil && wb != nil && av.Equal(wa, wb)
}

// WindowWrite is what a write does to the window: it expects Old stored (nil:
// no window) and stores Next.
type WindowWrite struct {
	Old, Next types.AttributeValue
	// Pinned: the write's other conditions pin the stored window to the one read
	// (the root's putWindow); it adds no condition of its own.
	Pinned bool
}

// NewWindowWrite returns the write recording key in the window keys, stored
// as old: key appended, the oldest dropped beyond WindowSize.
func NewWindowWrite(old types.AttributeValue, keys []string, key string) *WindowWrite {
	keys = append(slices.Clip(keys), key)
	if n := len(keys) - WindowSize; n > 0 {
		keys = keys[n:]
	}
	l := make([]types.AttributeValue, len(keys))
	for i, k := range keys {
		l[i] = &types.AttributeValueMemberS{Value: k}
	}
	return &WindowWrite{Old: old, Next: &types.AttributeValueMemberL{Value: l}}
}

// Cond is the write's condition on the stored window ("" when pinned).
func (w *WindowWrite) Cond() string {
	switch {
	case w.Pinned:
		return ""
	case w.Old == nil:
		return "attribute_not_exists(" + windowNamePH + ")"
	}
	return windowNamePH + " = " + windowOldPH
}

// Expr adds the window's condition, names and values to a write's.
func (w *WindowWrite) Expr(cond string, names map[string]string, values map[string]types.AttributeValue) (string, map[string]string, map[string]types.AttributeValue) {
	if w.Pinned {
		return cond, names, values
	}
	n := make(map[string]string, len(names)+1)
	for k, v := range names {
		n[k] = v
	}
	n[windowNamePH] = WindowAttr
	if w.Old != nil {
		if values == nil {
			values = make(map[string]types.AttributeValue, 2)
		}
		values[windowOldPH] = w.Old
	}
	return JoinConds(cond, w.Cond()), n, values
}

// Update adds the window to an UpdateItem: SET, under its condition.
func (w *WindowWrite) Update(up *UpdateParts) {
	up.Cond, up.Names, up.Values = w.Expr(up.Cond, up.Names, up.Values)
	if up.Values == nil {
		up.Values = make(map[string]types.AttributeValue, 1)
	}
	up.Values[windowNewPH] = w.Next
	set := windowNamePH + " = " + windowNewPH
	switch u := up.Update; {
	case strings.HasPrefix(u, "SET "):
		up.Update = "SET " + set + ", " + u[len("SET "):]
	case u == "":
		up.Update = "SET " + set
	default:
		up.Update = "SET " + set + " " + u
	}
}

// Put adds the window to a PutItem's item, under its condition.
func (w *WindowWrite) Put(item map[string]types.AttributeValue, pc *PutParts) {
	pc.Cond, pc.Names, pc.Values = w.Expr(pc.Cond, pc.Names, pc.Values)
	if w.Next != nil {
		item[WindowAttr] = w.Next
	}
}

// MaxKeyLen is the longest idempotency key a keyed write takes, in bytes:
// a full window is at most about 8.5 KB of the item's 400 KB.
const MaxKeyLen = 128

// CheckWindowKey says what is wrong with recording key in the window of
// an item of s, whose write token is the attribute tokenAttr: the reason
// and the fix, "" when nothing is.
func CheckWindowKey(s *schema.Schema, tokenAttr, key string) string {
	switch {
	case key == "":
		return "the key is empty: pass the caller's id of the change (an event id, a request id)"
	case len(key) > MaxKeyLen:
		return fmt.Sprintf("the key is %d bytes, over the %d bytes (MaxIdempotencyKeyLen) an item's window keeps per key: pass a shorter id (a SHA-256 of a longer one in hex is 64)", len(key), MaxKeyLen)
	case !utf8.ValidString(key):
		return "the key is not valid UTF-8, which DynamoDB strings must be: pass text (hex or base64 of bytes)"
	case tokenAttr == WindowAttr:
		return fmt.Sprintf("the write token attribute is %q, where the window of keys lives: pick another with WithWriteTokenAttribute", WindowAttr)
	}
	if i, ok := s.ByName[WindowAttr]; ok {
		return fmt.Sprintf("%s field %s is stored as %q, where the window of keys lives: rename the attribute", s.Type, s.Fields[i].GoName, WindowAttr)
	}
	return ""
}

// WindowKeys returns the keys of the window stored in item (nil: none, or
// a missing item); ok false when an attribute of that name is no window.
func WindowKeys(item map[string]types.AttributeValue) (keys []string, ok bool) {
	a, found := item[WindowAttr]
	if !found || isNull(a) {
		return nil, true
	}
	l, isList := a.(*types.AttributeValueMemberL)
	if !isList {
		return nil, false
	}
	keys = make([]string, len(l.Value))
	for i, e := range l.Value {
		s, isS := e.(*types.AttributeValueMemberS)
		if !isS {
			return nil, false
		}
		keys[i] = s.Value
	}
	return keys, true
}
