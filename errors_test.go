package dynamo

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestConditionFailureClassifiesByStoredVersion: a failed write is a
// version conflict when the stored version is not the one held (absent,
// another number, beyond int64), and a failed If condition when it is; a
// write that checked no version (SaveClobber) can only fail a condition;
// an item of another entity is never a conflict to reload.
func TestConditionFailureClassifiesByStoredVersion(t *testing.T) {
	books, err := NewTable[Book](NewMapper(silentDB()), "Books")
	if err != nil {
		t.Fatal(err)
	}
	key := map[string]types.AttributeValue{"ISBN": &types.AttributeValueMemberS{Value: "1"}}
	stored := func(v string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"ISBN": key["ISBN"], "version": &types.AttributeValueMemberN{Value: v}}
	}
	for _, c := range []struct {
		name    string
		held    int64
		checked bool
		old     map[string]types.AttributeValue
		want    error
		exists  bool
		found   int64
		msg     string
	}{
		{"held version stored", 3, true, stored("3"), ErrConditionFailed, true, 3, "held version 3, found 3"},
		{"another version stored", 3, true, stored("5"), ErrVersionConflict, true, 5, "held version 3, found 5"},
		{"item absent", 3, true, nil, ErrVersionConflict, false, 0, "held version 3, item does not exist"},
		{"unsaved over a stored version", 0, true, stored("2"), ErrVersionConflict, true, 2, "held version 0 (unsaved), found 2"},
		{"unsaved over a stored 0", 0, true, stored("0"), ErrConditionFailed, true, 0, "found 0"},
		{"beyond int64", 3, true, stored("9223372036854775808"), ErrVersionConflict, true, 1<<63 - 1,
			"found 9223372036854775808 (beyond int64"},
		{"beyond int64, held its nearest int64", 1<<63 - 1, true, stored("9223372036854775808"), ErrVersionConflict, true, 1<<63 - 1,
			"held version 9223372036854775807, found 9223372036854775808"},
		{"exists without a version", 3, true, map[string]types.AttributeValue{"ISBN": key["ISBN"]}, ErrVersionConflict, true, 0,
			"item exists without version"},
		{"SaveClobber: no version checked", 0, false, stored("5"), ErrConditionFailed, true, 5, ": stored version 5"},
	} {
		ce := books.p.conditionFailure("Books", key, c.held, c.checked, c.old, nil, nil)
		if ce.Err != c.want || ce.Exists != c.exists || ce.FoundVersion != c.found || !errors.Is(ce, c.want) {
			t.Errorf("%s: Err %v, Exists %v, FoundVersion %d; want %v, %v, %d", c.name, ce.Err, ce.Exists, ce.FoundVersion, c.want, c.exists, c.found)
		}
		if !strings.Contains(ce.Error(), c.msg) {
			t.Errorf("%s: message %q does not say %q", c.name, ce.Error(), c.msg)
		}
	}

	// An item of another entity: a failed condition naming it, whatever
	// the versions.
	orders, err := NewTable[shopOrder](NewMapper(silentDB()), "Shop")
	if err != nil {
		t.Fatal(err)
	}
	okey := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "c1"}, "sk": &types.AttributeValueMemberS{Value: "x"}}
	old := map[string]types.AttributeValue{"pk": okey["pk"], "sk": okey["sk"], "kind": &types.AttributeValueMemberS{Value: "customer"},
		"v": &types.AttributeValueMemberN{Value: "7"}}
	ce := orders.p.conditionFailure("Shop", okey, 3, true, old, nil, nil)
	if ce.Err != ErrConditionFailed || !strings.Contains(ce.Error(), `entity "customer", not "order"`) {
		t.Errorf("other entity: Err %v, message %q; want ErrConditionFailed naming both entities", ce.Err, ce.Error())
	}
}

// TestConditionErrorMessageAndUnwrap: the message says what was held and
// found and how to fix it; a failed If names the condition; an unknown
// outcome says so and unwraps to ErrUnknownOutcome as well as the
// sentinel and DynamoDB's error.
func TestConditionErrorMessageAndUnwrap(t *testing.T) {
	cause := errors.New("ConditionalCheckFailedException")
	key := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "k"}, "n": &types.AttributeValueMemberN{Value: "2"}}
	conflict := &ConditionError{Err: ErrVersionConflict, Table: "T", Key: key, HeldVersion: 3, Exists: true, HasVersion: true,
		FoundVersion: 4, Cause: cause, versionAttr: "v", checked: true}
	want := `dynamo: version conflict on table "T" key {id: "k", n: 2}: held v 3, found 4 (reload the item, or use Table.Current(err)`
	if got := conflict.Error(); !strings.HasPrefix(got, want) {
		t.Errorf("conflict: %q, want it to start %q", got, want)
	}
	if !errors.Is(conflict, ErrVersionConflict) || !errors.Is(conflict, cause) || errors.Is(conflict, ErrUnknownOutcome) {
		t.Errorf("conflict unwraps to the wrong errors: %v", conflict.Unwrap())
	}

	failed := &ConditionError{Err: ErrConditionFailed, Table: "T", Key: key, Exists: true, Condition: `size(#name) > 3`}
	if got, want := failed.Error(), `dynamo: condition failed on table "T" key {id: "k", n: 2}; the If condition failed: size(#name) > 3`; got != want {
		t.Errorf("failed If: %q, want %q", got, want)
	}
	failed.reason = "the item was created at another time"
	if got := failed.Error(); !strings.HasSuffix(got, "; the item was created at another time") || strings.Contains(got, "size(") {
		t.Errorf("a condition the mapper added: %q, want its reason instead of the If condition", got)
	}

	unknown := *conflict
	unknown.unknown = true
	if got := unknown.Error(); !strings.Contains(got, "may have been applied") || !strings.Contains(got, ErrUnknownOutcome.Error()) ||
		strings.Contains(got, "Table.Update does this for you") {
		t.Errorf("unknown outcome: %q, want it to say the write may have been applied and not to advise a blind retry", got)
	}
	if !errors.Is(&unknown, ErrUnknownOutcome) || !errors.Is(&unknown, ErrVersionConflict) || !errors.Is(&unknown, cause) {
		t.Errorf("unknown outcome unwraps to %v, want ErrVersionConflict, ErrUnknownOutcome and the cause", unknown.Unwrap())
	}
}

// TestConditionErrorDecodeOfAbsentItem: Decode of a failure that found no
// item is ErrNotFound naming the table and key, and calls no decoder.
func TestConditionErrorDecodeOfAbsentItem(t *testing.T) {
	ce := &ConditionError{Err: ErrVersionConflict, Table: "T", Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "k"}},
		decode: func(map[string]types.AttributeValue, any) error {
			t.Error("decoder called for an absent item")
			return nil
		}}
	var out Book
	err := ce.Decode(&out)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `table "T" key {id: "k"}`) {
		t.Errorf("Decode of an absent item: %v, want ErrNotFound naming the table and key", err)
	}
}

// TestSchemaErrorNamesStructAndField: the message names the struct, the
// field when there is one, and the reason; it is ErrInvalidSchema.
func TestSchemaErrorNamesStructAndField(t *testing.T) {
	for _, c := range []struct {
		e    SchemaError
		want string
	}{
		{SchemaError{Struct: "main.Book", Field: "ISBN", Reason: "two hash keys"}, "dynamo: struct main.Book field ISBN: two hash keys"},
		{SchemaError{Struct: "main.Book", Reason: "no hash key"}, "dynamo: struct main.Book: no hash key"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
		if !errors.Is(&c.e, ErrInvalidSchema) {
			t.Errorf("%v is not ErrInvalidSchema", &c.e)
		}
	}
}

// TestFormatKeySortedAndTyped: a key in a message lists its attributes
// sorted by name, strings quoted, numbers bare, binary as base64, and an
// unset attribute as <unset>.
func TestFormatKeySortedAndTyped(t *testing.T) {
	key := map[string]types.AttributeValue{
		"z": &types.AttributeValueMemberS{Value: `a"b`},
		"a": &types.AttributeValueMemberN{Value: "-1.5"},
		"m": &types.AttributeValueMemberB{Value: []byte{0xff, 0}},
		"b": &types.AttributeValueMemberBOOL{Value: true},
		"n": &types.AttributeValueMemberNULL{Value: true},
		"u": nil,
	}
	if got, want := formatKey(key), `{a: -1.5, b: true, m: b64:/wA=, n: NULL, u: <unset>, z: "a\"b"}`; got != want {
		t.Errorf("formatKey = %s, want %s", got, want)
	}
}

// TestWronglyTypedStoredVersionIsNamed: over a version attribute another
// writer stored as something other than a number (a string "3", a bool),
// every write of a versioned type fails its version condition — SaveClobber
// and Add, which check no version, as well as Save, Delete and a
// transaction member. The error must say what is stored and how to fix it,
// and must not call it a conflict that reloading resolves (the item does
// not even load); nothing stored changes.
func TestWronglyTypedStoredVersionIsNamed(t *testing.T) {
	for _, stored := range []types.AttributeValue{str("3"), &types.AttributeValueMemberBOOL{Value: true}} {
		db := (&fakeDB{}).table("t", "id", "")
		item := map[string]types.AttributeValue{"id": str("k"), "n": n("5"), "v": stored}
		db.put("t", maps.Clone(item))
		tb, err := NewTable[counter](NewMapper(db), "t")
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		_, clobber := tb.Save(ctx, counter{ID: "k", N: 1}, WithSaveBehavior(SaveClobber))
		_, add := tb.Add(ctx, counter{ID: "k"}, Increment("n", 1))
		_, save0 := tb.Save(ctx, counter{ID: "k", N: 1})
		_, save3 := tb.Save(ctx, counter{ID: "k", N: 1, Version: 3})
		del := tb.Delete(ctx, counter{ID: "k", Version: 3})
		tx := tb.Mapper().WriteTx(ctx, []TxOp{tb.TxSave(counter{ID: "k", N: 1, Version: 3})})
		for call, err := range map[string]error{"SaveClobber": clobber, "Add": add, "Save unsaved": save0, "Save version 3": save3, "Delete": del, "TxSave": tx} {
			msg := fmt.Sprint(err)
			if !errors.Is(err, ErrConditionFailed) || errors.Is(err, ErrVersionConflict) ||
				!strings.Contains(msg, "not a number") || !strings.Contains(msg, avKind(stored)) || !strings.Contains(msg, "store a number") {
				t.Errorf("%s over a version stored as a %s: %v; want ErrConditionFailed (not a conflict) naming the stored %s and the fix", call, avKind(stored), err, avKind(stored))
			}
		}
		if got := db.item("t", map[string]types.AttributeValue{"id": str("k")}); !reflect.DeepEqual(got, item) {
			t.Errorf("over a version stored as a %s: stored %v, want it unchanged %v", avKind(stored), got, item)
		}
	}
}

// TestFractionalStoredVersionIsNamed: over a version attribute another
// writer stored as a number that is not a whole one (1.5), a write whose
// version condition fails (Save, Delete, a transaction member) fails with
// ErrConditionFailed, not a conflict (the item does not load), and the
// error names the stored number as not a whole number with the fix —
// rather than calling a number (N) "not a number (N)".
func TestFractionalStoredVersionIsNamed(t *testing.T) {
	db := (&fakeDB{}).table("t", "id", "")
	item := map[string]types.AttributeValue{"id": str("k"), "n": n("5"), "v": n("1.5")}
	db.put("t", maps.Clone(item))
	tb, err := NewTable[counter](NewMapper(db), "t")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	_, save0 := tb.Save(ctx, counter{ID: "k", N: 1})
	_, save1 := tb.Save(ctx, counter{ID: "k", N: 1, Version: 1})
	del := tb.Delete(ctx, counter{ID: "k", Version: 1})
	tx := tb.Mapper().WriteTx(ctx, []TxOp{tb.TxSave(counter{ID: "k", N: 1, Version: 1})})
	for call, err := range map[string]error{"Save unsaved": save0, "Save version 1": save1, "Delete": del, "TxSave": tx} {
		msg := fmt.Sprint(err)
		if !errors.Is(err, ErrConditionFailed) || errors.Is(err, ErrVersionConflict) ||
			strings.Contains(msg, "not a number") || !strings.Contains(msg, "1.5") || !strings.Contains(msg, "not a whole number") || !strings.Contains(msg, "store a whole number") {
			t.Errorf("%s over a version stored as 1.5: %v; want ErrConditionFailed (not a conflict) naming 1.5 as not a whole number, and the fix", call, err)
		}
	}
	if got := db.item("t", map[string]types.AttributeValue{"id": str("k")}); !reflect.DeepEqual(got, item) {
		t.Errorf("stored %v, want it unchanged %v", got, item)
	}
}
