package dynamo

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/schema"
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
		ce := conditionFailure(books.p, "Books", key, c.held, c.checked, c.old, nil, nil)
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
	ce := conditionFailure(orders.p, "Shop", okey, 3, true, old, nil, nil)
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
				!strings.Contains(msg, "not a number") || !strings.Contains(msg, schema.AVKind(stored)) || !strings.Contains(msg, "store a number") {
				t.Errorf("%s over a version stored as a %s: %v; want ErrConditionFailed (not a conflict) naming the stored %s and the fix", call, schema.AVKind(stored), err, schema.AVKind(stored))
			}
		}
		if got := db.item("t", map[string]types.AttributeValue{"id": str("k")}); !reflect.DeepEqual(got, item) {
			t.Errorf("over a version stored as a %s: stored %v, want it unchanged %v", schema.AVKind(stored), got, item)
		}
	}
}

// TestWronglyStoredVersionIsNamedByReads: over a version attribute another
// writer stored as something the type's version cannot hold — a string
// "3", a bool, a number that is not whole (1.5), a whole number beyond
// int64 — every read that decodes the item fails as the writes do (see
// TestWronglyTypedStoredVersionIsNamed): naming the attribute, what is
// stored and the fix, wrapping the decoder's error. Load, Update (its
// function never called), a Transact read, ReadTx, BatchLoad, and the
// Query, Scan and ParallelScan iterators and pages (there as the item's
// *ItemDecodeError) share the one rule.
func TestWronglyStoredVersionIsNamedByReads(t *testing.T) {
	for _, tc := range []struct {
		stored types.AttributeValue
		says   []string
	}{
		{str("3"), []string{"stored v is a string (S), not a number (N)", "store a number there"}},
		{&types.AttributeValueMemberBOOL{Value: true}, []string{"stored v is a bool (BOOL), not a number (N)", "store a number there"}},
		{n("1.5"), []string{"stored v is 1.5, not a whole number", "store a whole number there"}},
		{n("99999999999999999999"), []string{"stored v is 99999999999999999999", "(int64) holds", "store a number the version holds there"}},
	} {
		db := (&fakeDB{}).table("t", "id", "")
		db.put("t", map[string]types.AttributeValue{"id": str("k"), "n": n("5"), "v": tc.stored})
		tb, err := NewTable[counter](NewMapper(db), "t")
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		errs := map[string]error{}
		_, errs["Load"] = tb.Load(ctx, counter{ID: "k"})
		called := false
		_, errs["Update"] = tb.Update(ctx, counter{ID: "k"}, func(c counter) (counter, error) { called = true; return c, nil })
		if called {
			t.Errorf("over a version stored as %s: Update called its function", schema.FormatScalar(tc.stored))
		}
		errs["Transact"] = tb.Mapper().Transact(ctx, func(tx *Tx) error { _, err := tb.In(tx).Load(counter{ID: "k"}); return err })
		errs["ReadTx"] = tb.Mapper().ReadTx(ctx, []TxGetOp{tb.TxGet(counter{ID: "k"})})
		_, errs["BatchLoad"] = tb.BatchLoad(ctx, []counter{{ID: "k"}})
		_, _, errs["ScanPage"] = tb.ScanPage(ctx)
		_, _, errs["QueryPage"] = tb.QueryPage(ctx, expression.Key("id").Equal(expression.Value("k")))
		for name, seq := range map[string]func(func(counter, error) bool){
			"Scan":         tb.Scan(ctx),
			"Query":        tb.Query(ctx, expression.Key("id").Equal(expression.Value("k"))),
			"ParallelScan": tb.ParallelScan(ctx, 2),
		} {
			for _, err := range seq {
				if err != nil {
					errs[name] = err
				}
			}
		}
		for call, err := range errs {
			msg := fmt.Sprint(err)
			ok := err != nil && !errors.Is(err, ErrNotFound) && strings.Contains(msg, "decode item of table")
			for _, s := range tc.says {
				ok = ok && strings.Contains(msg, s)
			}
			if !ok {
				t.Errorf("%s over a version stored as %s: %v; want the decoder's error naming the stored v and the fix (%q)", call, schema.FormatScalar(tc.stored), err, tc.says)
			}
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

// TestStoredVersionAttacksOnReads pins what reads do over odd stored
// versions: NULL is version zero (the item loads, no hint); a version a
// narrow field cannot hold (300 in an int8, -1 or 2^64 in a uint64) is
// named with the field's type and the fix, while 2^64-1 in a uint64 loads;
// 2.0, which DynamoDB would have stored as 2, is named as a spelling the
// decoder does not read, with the spelling to store.
func TestStoredVersionAttacksOnReads(t *testing.T) {
	type int8Version struct {
		ID string `dynamo:"id,hash"`
		V  int8   `dynamo:"v,version"`
	}
	type uintVersion struct {
		ID string  `dynamo:"id,hash"`
		V  *uint64 `dynamo:"v,version"`
	}
	ctx := t.Context()
	load := func(tc string, stored types.AttributeValue, u bool) error {
		db := (&fakeDB{}).table("t", "id", "")
		db.put("t", map[string]types.AttributeValue{"id": str("k"), "v": stored})
		if u {
			tb, err := NewTable[uintVersion](NewMapper(db), "t")
			if err != nil {
				t.Fatal(err)
			}
			_, err = tb.Load(ctx, uintVersion{ID: "k"})
			return err
		}
		tb, err := NewTable[int8Version](NewMapper(db), "t")
		if err != nil {
			t.Fatal(err)
		}
		got, err := tb.Load(ctx, int8Version{ID: "k"})
		if err == nil && tc == "NULL" && got.V != 0 {
			t.Errorf("NULL: version %d, want 0", got.V)
		}
		return err
	}
	for _, tc := range []struct {
		name   string
		stored types.AttributeValue
		uint   bool
		says   []string // nil: loads
	}{
		{"NULL", &types.AttributeValueMemberNULL{Value: true}, false, nil},
		{"127 in int8", n("127"), false, nil},
		{"-128 in int8", n("-128"), false, nil},
		{"300 in int8", n("300"), false, []string{"stored v is 300, beyond what", "(int8) holds", "store a number the version holds"}},
		{"-129 in int8", n("-129"), false, []string{"stored v is -129, beyond what", "(int8) holds"}},
		{"2^64-1 in uint64", n("18446744073709551615"), true, nil},
		{"2^64 in uint64", n("18446744073709551616"), true, []string{"stored v is 18446744073709551616, beyond what", "(uint64) holds"}},
		{"-1 in uint64", n("-1"), true, []string{"stored v is -1, beyond what", "(uint64) holds"}},
		{"2.0 in int8", n("2.0"), false, []string{"stored v is 2.0, version 2 spelled", "store it as 2"}},
		{"1.8e19 in uint64", n("1.8e19"), true, []string{"stored v is 1.8e19, version 18000000000000000000 spelled", "store it as 18000000000000000000"}},
		{"1.9e19 in uint64", n("1.9e19"), true, []string{"stored v is 1.9e19, beyond what", "(uint64) holds"}},
		{"1e999999999999 in int8", n("1e999999999999"), false, []string{"stored v is \"1e999999999999\", not a number DynamoDB reads", "store a whole number there"}},
		{"1e126 in int8", n("1e126"), false, []string{"stored v is the number 1e126, outside DynamoDB's range", "store a whole number there"}},
		{"a list in uint64", &types.AttributeValueMemberL{}, true, []string{"stored v is a list (L), not a number (N)", "store a number there"}},
	} {
		err := load(tc.name, tc.stored, tc.uint)
		if tc.says == nil {
			if err != nil {
				t.Errorf("%s: %v, want it to load", tc.name, err)
			}
			continue
		}
		ok := err != nil
		for _, s := range tc.says {
			ok = ok && strings.Contains(err.Error(), s)
		}
		if !ok {
			t.Errorf("%s: %v; want it named (%q)", tc.name, err, tc.says)
		}
	}
	// Spellings the decoder reads (+2, 002) are never blamed, whatever
	// else of the item fails to decode.
	tb, err := NewTable[int8Version](NewMapper(&fakeDB{}), "t")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"+2", "002", "-0", "2"} {
		if what, _, wrong := plan.WrongVersion(tb.p.S, map[string]types.AttributeValue{"v": n(v)}); wrong {
			t.Errorf("version stored as %s: named as %q, want it not blamed", v, what)
		}
	}
}
