package dynamo

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/errs"
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/schema"
)

// Sentinel errors. Match them with errors.Is; the errors returned carry more
// detail (see ConditionError and SchemaError).
var (
	// ErrNotFound is returned by Load when no item has the key.
	ErrNotFound = errs.ErrNotFound
	// ErrVersionConflict means the stored version is not the one the caller
	// holds: someone else wrote (or deleted) the item since it was read.
	ErrVersionConflict = errs.ErrVersionConflict
	// ErrConditionFailed means a condition given with If failed while the
	// version matched.
	ErrConditionFailed = errs.ErrConditionFailed
	// ErrUnknownOutcome means a write may or may not have been applied: an
	// attempt got no answer (or a 5xx one, or the context ended while it was
	// under way), and what the mapper could find out afterwards does not
	// settle it. The mapper never sends such a write again blindly — a
	// resend could apply it twice (on an item deleted and created again in
	// the meantime) or overwrite a write acknowledged to someone else — it
	// reads the item instead: the write's own token there means it was
	// applied (a success); the exact state the write was computed from
	// (Table.Update knows it) means it was not, and it is sent again; anything
	// else is this error. When the item could be read, the error is a
	// *ConditionError carrying it (for versioned types it also satisfies
	// ErrVersionConflict): look there for the change before making it again
	// (Table.Current(err)). Table.Update returns it rather than calling its
	// function again, which could apply the change twice. Save, Delete,
	// Update and WriteTx document when they return it.
	ErrUnknownOutcome = errs.ErrUnknownOutcome
	// ErrInvalidInput means a request was refused before it was sent: an unset
	// key, an empty string key, an item over 400 KB, a nil item, and the like.
	ErrInvalidInput = errs.ErrInvalidInput
	// ErrInvalidSchema means a struct's tags do not describe a usable table.
	ErrInvalidSchema = errs.ErrInvalidSchema
	// ErrReplicatedConflict means DynamoDB refused a write to a strongly
	// consistent global table (MRSC) because a write from another Region
	// to the same item was under way (ReplicatedWriteConflictException,
	// which the error wraps). The write was not applied. Table.Update reads
	// the item again and calls its function again, as after a version
	// conflict; Save, Delete and Add return it: send the write again, or
	// reload first. Details: docs/limitations.md#global-tables.
	ErrReplicatedConflict = errs.ErrReplicatedConflict
)

// ConditionError is the error of a write whose condition failed. It wraps
// ErrVersionConflict or ErrConditionFailed (see Err) and the SDK's
// ConditionalCheckFailedException, and carries the item as it was when the
// write failed, so the caller can decode it (Table.Current, Decode) without
// another read.
type ConditionError struct {
	// Err is ErrVersionConflict or ErrConditionFailed.
	Err error
	// Table is the table written to.
	Table string
	// Key is the primary key of the item written (the error's own copy:
	// the key map a Table sends may be sent again by later calls).
	Key map[string]types.AttributeValue
	// HeldVersion is the version the caller held; 0 means unsaved. It is 0 for
	// types without a version attribute.
	HeldVersion int64
	// Exists reports whether the item existed when the write was evaluated.
	Exists bool
	// FoundVersion is the stored version when Exists and the item has one.
	FoundVersion int64
	// HasVersion reports whether the stored item has a version attribute.
	HasVersion bool
	// Item is the stored item (ReturnValuesOnConditionCheckFailure=ALL_OLD),
	// nil when it does not exist.
	Item map[string]types.AttributeValue
	// Cause is the error returned by DynamoDB.
	Cause error
	// Condition is the write's If condition, with its names and values
	// written in (values as they were sent, e.g. a javabool's true as 1);
	// "" when the write had none. The message names it when the version
	// matched (ErrConditionFailed), so it is the condition that failed.
	Condition string

	versionAttr string
	checked     bool // the write checked the version (not SaveClobber)
	decode      func(map[string]types.AttributeValue, any) error
	// s is the schema of the type written (nil in errors made by hand):
	// Decode into that type refuses another entity's item.
	s *schema.Schema
	// unknown: an earlier attempt of the write may have been applied (see
	// ErrUnknownOutcome).
	unknown bool
	// foundText is the stored version as stored when it is beyond int64
	// (FoundVersion then holds the nearest int64).
	foundText string
	// full says why a SaveClobber's version cannot advance, "" otherwise.
	full string
	// reason says why a condition the mapper added failed (a creation
	// time, an Add's bound); "" when none did.
	reason string
	// wrongVersion is the stored version when it is not a number (nor
	// NULL): another writer's string, bool, ...
	wrongVersion types.AttributeValue
}

func (e *ConditionError) Error() string {
	s := e.describe()
	if e.unknown {
		return s + " — and the write may have been applied: an attempt's response was lost, " +
			"and the item as read afterwards neither carries the write nor is the state it was made from (" +
			ErrUnknownOutcome.Error() + "; look for the change in the stored item, Table.Current(err), before making it again)"
	}
	if e.Err == ErrVersionConflict {
		s += " (reload the item, or use Table.Current(err), and apply the change again; Table.Update does this for you)"
	}
	return s
}

// describe is Error without the advice.
func (e *ConditionError) describe() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	b.WriteString(" on table ")
	b.WriteString(strconv.Quote(e.Table))
	b.WriteString(" key ")
	b.WriteString(formatKey(e.Key))
	if e.versionAttr != "" && !e.checked {
		// SaveClobber: no version held; say what is stored.
		switch {
		case !e.Exists:
			b.WriteString(": item does not exist")
		case e.HasVersion:
			b.WriteString(": stored " + e.versionAttr + " " + e.found())
			if e.full != "" {
				b.WriteString("; " + e.full)
			}
		case e.wrongVersion != nil:
			b.WriteString(": stored " + e.versionAttr + " " + schema.FormatAV(e.wrongVersion, 40))
		}
	} else if e.versionAttr != "" {
		b.WriteString(": held ")
		b.WriteString(e.versionAttr)
		b.WriteByte(' ')
		if e.HeldVersion == 0 {
			b.WriteString("0 (unsaved)")
		} else {
			b.WriteString(strconv.FormatInt(e.HeldVersion, 10))
		}
		b.WriteString(", ")
		switch {
		case !e.Exists:
			b.WriteString("item does not exist")
		case e.wrongVersion != nil:
			b.WriteString("found " + schema.FormatAV(e.wrongVersion, 40))
		case !e.HasVersion:
			b.WriteString("item exists without " + e.versionAttr)
		default:
			b.WriteString("found " + e.found())
		}
	}
	if e.reason != "" {
		b.WriteString("; ")
		b.WriteString(e.reason)
	} else if e.Err == ErrConditionFailed && e.Condition != "" {
		b.WriteString("; the If condition failed: ")
		b.WriteString(e.Condition)
	}
	return b.String()
}

// found renders the stored version.
func (e *ConditionError) found() string {
	if e.foundText != "" {
		return e.foundText + " (beyond int64: no Go version field can hold it)"
	}
	return strconv.FormatInt(e.FoundVersion, 10)
}

// Unwrap returns the sentinel (and ErrUnknownOutcome when the write may
// have been applied) and the SDK's error.
func (e *ConditionError) Unwrap() []error {
	errs := []error{e.Err}
	if e.unknown {
		errs = append(errs, ErrUnknownOutcome)
	}
	if e.Cause != nil {
		errs = append(errs, e.Cause)
	}
	return errs
}

// Decode decodes the item carried by the error into out (a pointer), with the
// table's decoder options. It returns an error wrapping ErrNotFound when the
// item did not exist, or when out is the written type (a *T, or a **T) and
// the item is another entity type's, as Table.Current does.
func (e *ConditionError) Decode(out any) error {
	if e.Item == nil {
		return fmt.Errorf("%w: table %q key %s no longer exists", ErrNotFound, e.Table, formatKey(e.Key))
	}
	if e.s != nil && e.s.Entity >= 0 {
		if rt := reflect.TypeOf(out); rt != nil && rt.Kind() == reflect.Pointer &&
			(rt.Elem() == e.s.Type || rt.Elem() == reflect.PointerTo(e.s.Type)) {
			if err := notOurs(e.s, e.Table, e.Key, e.Item); err != nil {
				return err
			}
		}
	}
	return e.decode(e.Item, out)
}

// SchemaError reports a struct whose tags do not describe a usable table. It
// wraps ErrInvalidSchema.
type SchemaError = errs.SchemaError

// formatKey renders a key for messages: {ISBN: "978-1", Part: 3}.
func formatKey(key map[string]types.AttributeValue) string {
	names := make([]string, 0, len(key))
	for k := range key {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k)
		b.WriteString(": ")
		b.WriteString(schema.FormatScalar(key[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// plural renders n and noun for messages, noun taking an s unless n is 1:
// "1 member", "3 members".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func asConditionError(err error) (*ConditionError, bool) {
	var ce *ConditionError
	ok := errors.As(err, &ce)
	return ce, ok
}

// conditionFailure builds the ConditionError for a write by a caller
// holding held (0 for unversioned types) whose condition failed with the
// stored item old (nil: absent). checkedVersion is false for writes that
// carried no version condition (SaveClobber), which can only fail a user's
// condition.
func conditionFailure(p *plan.Plan, table string, key map[string]types.AttributeValue, held int64, checkedVersion bool,
	old map[string]types.AttributeValue, cause error, decode func(map[string]types.AttributeValue, any) error) *ConditionError {
	ce := &ConditionError{
		Err: ErrConditionFailed, Table: table, Key: maps.Clone(key), HeldVersion: held,
		Exists: old != nil, Item: old, Cause: cause, decode: decode, s: p.S,
	}
	if other, ok := p.S.OtherEntity(old); ok {
		// Whatever the versions, no write of this type lands there: not a
		// conflict that reloading resolves, nor a failed If.
		defer func() {
			ce.Err = ErrConditionFailed
			ce.reason = fmt.Sprintf("the key holds an item of entity %s, not %q: a %s never writes over another entity's item", other, p.S.EntityName, p.S.Type)
		}()
	}
	if p.S.Version < 0 {
		return ce
	}
	ce.versionAttr, ce.checked = p.S.Fields[p.S.Version].Name, checkedVersion
	var big bool
	ce.FoundVersion, ce.HasVersion, big = plan.StoredVersion(old, ce.versionAttr)
	if big {
		ce.foundText = old[ce.versionAttr].(*types.AttributeValueMemberN).Value
	}
	if checkedVersion && (big || !plan.VersionHeld(held, ce.Exists, ce.HasVersion, ce.FoundVersion)) {
		ce.Err = ErrVersionConflict
	}
	if what, fix, wrong := plan.WrongVersion(p.S, old); wrong && !ce.HasVersion {
		// Another writer stored the version as a string, a bool, ...:
		// every write of this type compares or adds numbers there, so
		// none lands, and reloading does not help (nor does the item
		// load): not a conflict, and the error names the fix.
		ce.Err, ce.wrongVersion = ErrConditionFailed, old[ce.versionAttr]
		if _, isN := ce.wrongVersion.(*types.AttributeValueMemberN); isN {
			// A number that is not a whole one (1.5): no version
			// condition holds on it, yet SaveClobber and Add land (no
			// condition tells a whole number), and their result does
			// not load either.
			ce.reason = fmt.Sprintf("%s: no version condition of a %s holds on it, nor does the item load (and a SaveClobber or Add lands on it, keeping it so): %s", what, p.S.Type, fix)
		} else {
			ce.reason = fmt.Sprintf("%s, and no write of a %s lands on it (each compares or adds numbers there), nor does the item load: %s", what, p.S.Type, fix)
		}
	}
	return ce
}

// PageDecodeError is the error of QueryPage and ScanPage when items of the
// page read do not decode into T (another writer stored a field with
// another type, say). The page's other items are returned with it, and the
// cursor after the page, so that a caller can report the failed items by
// their keys and read on; a caller that stops at any error loses nothing
// either. It unwraps to each item's error.
type PageDecodeError struct {
	// Table is the table read.
	Table string
	// Failed are the items that did not decode, in the order read.
	Failed []*ItemDecodeError
}

func (e *PageDecodeError) Error() string {
	s := e.Failed[0].Error()
	if n := len(e.Failed); n > 1 {
		s += fmt.Sprintf(" (and %d more items of the page)", n-1)
	}
	return s + "; the page's other items were returned with this error, and the cursor after the page: fix or remove the item, or skip it and read on"
}

// count returns the number of items e reports (0 for nil).
func (e *PageDecodeError) count() int {
	if e == nil {
		return 0
	}
	return len(e.Failed)
}

// orNil returns e as an error: nil when e is nil.
func (e *PageDecodeError) orNil() error {
	if e == nil {
		return nil
	}
	return e
}

// Unwrap returns the error of each item.
func (e *PageDecodeError) Unwrap() []error {
	errs := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		errs[i] = f
	}
	return errs
}

// ItemDecodeError is an item read that did not decode into T: in a
// PageDecodeError, or yielded in the item's place by Query, Scan and
// ParallelScan, which go on with the other items.
type ItemDecodeError struct {
	// Key is the item's primary key.
	Key map[string]types.AttributeValue
	// Item is the item as read.
	Item map[string]types.AttributeValue
	// Err is the decoding error; its message names the table and the key.
	Err error

	decode func(map[string]types.AttributeValue, any) error
}

func (e *ItemDecodeError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *ItemDecodeError) Unwrap() error { return e.Err }

// DecodeKey decodes the item's primary key alone into out (a pointer to
// the table's T, or to a struct with the same key fields): a T naming the
// item, its other fields zero.
func (e *ItemDecodeError) DecodeKey(out any) error {
	return e.decode(e.Key, out)
}
