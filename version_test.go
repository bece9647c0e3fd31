package dynamo

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/itemstate"
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/schema"
)

func TestParseVersionSettings(t *testing.T) {
	good := []struct {
		tag         string
		start, step int64
		clock       bool
	}{
		{"v,version,versionstart=100", 100, 0, false},
		{"v,version,versionstep=5", 0, 5, false},
		{"v,version,versionstart=1,versionstep=1", 1, 1, false},
		{"v,versionstart=clock,version", 0, 0, true},
		{"v,version,versionstart=clock,versionstep=2", 0, 2, true},
		{"v,version,versionstart=9223372036854775807", 9223372036854775807, 0, false},
	}
	for _, tc := range good {
		o, err := schema.ParseTag(tc.tag)
		if err != nil {
			t.Errorf("parseTag(%q): %v", tc.tag, err)
			continue
		}
		if o.VersionStart != tc.start || o.VersionStep != tc.step || o.VersionClock != tc.clock || !o.Version {
			t.Errorf("parseTag(%q) = %+v", tc.tag, o)
		}
	}
	bad := []struct{ tag, want string }{
		{"v,version,versionstart=0", "version 0 means unsaved"},
		{"v,version,versionstep=0", "version 0 means unsaved"},
		{"v,version,versionstart=-1", "not a whole number"},
		{"v,version,versionstep=+1", "not a whole number"},
		{"v,version,versionstart=", "no value"},
		{"v,version,versionstart=010", "leading zero"},
		{"v,version,versionstart=1e3", "not a whole number"},
		{"v,version,versionstart= 5", "not a whole number"},
		{"v,version,versionstep=clock", "not a whole number"},
		{"v,version,versionstart=9223372036854775808", "over 9223372036854775807"},
		{"v,version,versionstart=1,versionstart=2", "repeated"},
		{"v,version,versionstart=clock,versionstart=5", "repeated"},
		{"v,versionstart=5", "without version"},
		{"v,versionstep=5", "without version"},
		{"v,version,versionstart", "unknown option"},
		{"v,version,VersionStart=5", "unknown option"},
		{"v,version,versionstart=5=6", "not a whole number"},
	}
	for _, tc := range bad {
		_, err := schema.ParseTag(tc.tag)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseTag(%q) = %v, want an error saying %q", tc.tag, err, tc.want)
		}
	}
}

func TestVersionSettingsSchema(t *testing.T) {
	type step8 struct {
		ID string `dynamo:"id,hash"`
		V  int8   `dynamo:"v,version,versionstep=200"`
	}
	type start16 struct {
		ID string `dynamo:"id,hash"`
		V  uint16 `dynamo:"v,version,versionstart=65536"`
	}
	type clock32 struct {
		ID string `dynamo:"id,hash"`
		V  *int32 `dynamo:"v,version,versionstart=clock"`
	}
	type ok64 struct {
		ID string  `dynamo:"id,hash"`
		V  *uint64 `dynamo:"v,version,versionstart=clock,versionstep=1000"`
	}
	m := NewMapper(&fakeDB{noStore: true})
	for _, tc := range []struct {
		err  error
		want string
	}{
		{tableErr[step8](m), "versionstep=200 does not fit the version's type int8 (at most 127)"},
		{tableErr[start16](m), "versionstart=65536 does not fit the version's type uint16 (at most 65535)"},
		{tableErr[clock32](m), "versionstart=clock on a version of type *int32"},
		{tableErr[ok64](m), ""},
	} {
		switch {
		case tc.want == "" && tc.err != nil:
			t.Errorf("unexpected error: %v", tc.err)
		case tc.want != "" && (!errors.Is(tc.err, ErrInvalidSchema) || !strings.Contains(tc.err.Error(), tc.want)):
			t.Errorf("error %v, want ErrInvalidSchema saying %q", tc.err, tc.want)
		}
	}
}

func tableErr[T any](m *Mapper) error {
	_, err := NewTable[T](m, "t")
	return err
}

type stepItem struct {
	ID   string `dynamo:"id,hash"`
	Name string `dynamo:"name"`
	V    int64  `dynamo:"v,version,versionstart=100,versionstep=10"`
}

type clockItem struct {
	ID   string `dynamo:"id,hash"`
	Name string `dynamo:"name"`
	V    int64  `dynamo:"v,version,versionstart=clock"`
}

type plainItem struct {
	ID   string `dynamo:"id,hash"`
	Name string `dynamo:"name"`
	V    int64  `dynamo:"v,version"`
}

func idTable[T any](t *testing.T, opts ...Option) (*Table[T], *clock.Fake) {
	t.Helper()
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "", "id", types.ScalarAttributeTypeS, "", "")
	fc := clock.NewFake(time.UnixMilli(1_700_000_000_000))
	tb, err := NewTable[T](NewMapper(c, append([]Option{WithClock(fc)}, opts...)...), name)
	if err != nil {
		t.Fatal(err)
	}
	return tb, fc
}

// Every call writes by the versionstart and versionstep settings; unsaved
// stays zero.
func TestVersionSettingsCalls(t *testing.T) {
	tb, _ := idTable[stepItem](t)
	ctx := t.Context()
	want := func(what string, got, v int64) {
		t.Helper()
		if got != v {
			t.Fatalf("%s: version %d, want %d", what, got, v)
		}
	}
	stored := func(id string) int64 {
		t.Helper()
		it, err := tb.Load(ctx, stepItem{ID: id}, ConsistentRead())
		if err != nil {
			t.Fatal(err)
		}
		return it.V
	}
	for _, b := range []SaveBehavior{SaveUpdate, SaveUpdateSkipNulls, SavePut, SaveClobber, SaveAppendSet} {
		id := "save-" + b.String()
		s1, err := tb.Save(ctx, stepItem{ID: id, Name: "a"}, WithSaveBehavior(b))
		if err != nil {
			t.Fatalf("%v: %v", b, err)
		}
		want(b.String()+" first", s1.V, 100)
		want(b.String()+" first stored", stored(id), 100)
		s2, err := tb.Save(ctx, s1, WithSaveBehavior(b))
		if err != nil {
			t.Fatalf("%v: %v", b, err)
		}
		want(b.String()+" second", s2.V, 110)
		want(b.String()+" second stored", stored(id), 110)
		if b != SaveClobber {
			_, err := tb.Save(ctx, s1, WithSaveBehavior(b))
			var ce *ConditionError
			if !errors.Is(err, ErrVersionConflict) || !errors.As(err, &ce) || ce.HeldVersion != 100 || ce.FoundVersion != 110 {
				t.Fatalf("%v: stale save = %v, want a conflict holding 100, found 110", b, err)
			}
			// Saving an unsaved copy over an existing item conflicts too.
			if _, err := tb.Save(ctx, stepItem{ID: id}, WithSaveBehavior(b)); !errors.Is(err, ErrVersionConflict) {
				t.Fatalf("%v: unsaved over existing = %v, want a conflict", b, err)
			}
		}
		if err := tb.Delete(ctx, s1); !errors.Is(err, ErrVersionConflict) {
			t.Fatalf("stale delete = %v, want a conflict", err)
		}
		if err := tb.Delete(ctx, s2); err != nil {
			t.Fatal(err)
		}
	}

	// Update creates at the first version and advances by the step.
	u, err := tb.Update(ctx, stepItem{ID: "upd"}, func(c stepItem) (stepItem, error) { c.Name += "x"; return c, nil })
	if err != nil {
		t.Fatal(err)
	}
	want("Update create", u.V, 100)
	u, err = tb.Update(ctx, stepItem{ID: "upd"}, func(c stepItem) (stepItem, error) { c.Name += "x"; return c, nil })
	if err != nil {
		t.Fatal(err)
	}
	want("Update", u.V, 110)

	// Transactions.
	txa, txb := tb.TxSave(stepItem{ID: "tx-a", Name: "a"}), tb.TxSave(u)
	if err := tb.Mapper().WriteTx(ctx, []TxOp{txa, txb}); err != nil {
		t.Fatal(err)
	}
	want("TxSave create", txa.Saved().V, 100)
	want("TxSave create stored", stored("tx-a"), 100)
	want("TxSave", txb.Saved().V, 120)
	want("TxSave stored", stored("upd"), 120)
	err = tb.Mapper().WriteTx(ctx, []TxOp{tb.TxCheck(u), tb.TxDelete(txa.Saved())})
	if !errors.Is(err, ErrVersionConflict) {
		t.Fatalf("TxCheck of a stale copy = %v, want a conflict", err)
	}
	put := tb.TxSave(txa.Saved(), WithSaveBehavior(SavePut))
	if err := tb.Mapper().WriteTx(ctx, []TxOp{tb.TxCheck(txb.Saved()), put}); err != nil {
		t.Fatal(err)
	}
	want("TxSave SavePut", put.Saved().V, 110)
	if err := tb.Mapper().WriteTx(ctx, []TxOp{tb.TxDelete(put.Saved())}); err != nil {
		t.Fatal(err)
	}

	// BatchSave with SaveClobber writes the first version for unsaved items
	// and held+step for the others.
	if err := tb.BatchSave(ctx, []stepItem{{ID: "b1"}, {ID: "b2", V: 130}}, Clobber()); err != nil {
		t.Fatal(err)
	}
	want("BatchSave unsaved", stored("b1"), 100)
	want("BatchSave held", stored("b2"), 140)
}

// With the default settings a copy loaded before a delete saves over the
// item created afterwards (the hazard doc.go describes, as in
// DynamoDBMapper); with versionstart=clock it conflicts instead.
func TestVersionClockRecreate(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		tb, _ := idTable[plainItem](t)
		ctx := t.Context()
		old, err := tb.Save(ctx, plainItem{ID: "k", Name: "first"})
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.Delete(ctx, old); err != nil {
			t.Fatal(err)
		}
		if _, err := tb.Save(ctx, plainItem{ID: "k", Name: "second"}); err != nil {
			t.Fatal(err)
		}
		old.Name = "stale"
		if _, err := tb.Save(ctx, old); err != nil {
			t.Fatalf("the hazard is gone (update doc.go): %v", err)
		}
	})
	t.Run("clock", func(t *testing.T) {
		tb, fc := idTable[clockItem](t)
		ctx := t.Context()
		old, err := tb.Save(ctx, clockItem{ID: "k", Name: "first"})
		if err != nil {
			t.Fatal(err)
		}
		if want := fc.Now().UnixMilli(); old.V != want {
			t.Fatalf("first version %d, want the clock's %d", old.V, want)
		}
		next, err := tb.Save(ctx, old)
		if err != nil || next.V != old.V+1 {
			t.Fatalf("second save = %d, %v; want %d", next.V, err, old.V+1)
		}
		if err := tb.Delete(ctx, next); err != nil {
			t.Fatal(err)
		}
		// The first incarnation lived 10 ms and was written twice: its
		// versions stay below the clock.
		fc.Advance(10 * time.Millisecond)
		recreated, err := tb.Save(ctx, clockItem{ID: "k", Name: "second"})
		if err != nil {
			t.Fatal(err)
		}
		for _, stale := range []clockItem{old, next} {
			stale.Name = "stale"
			if _, err := tb.Save(ctx, stale); !errors.Is(err, ErrVersionConflict) {
				t.Fatalf("stale save holding %d = %v, want a conflict", stale.V, err)
			}
			if _, err := tb.Save(ctx, stale, WithSaveBehavior(SavePut)); !errors.Is(err, ErrVersionConflict) {
				t.Fatalf("stale SavePut holding %d = %v, want a conflict", stale.V, err)
			}
			if err := tb.Delete(ctx, stale); !errors.Is(err, ErrVersionConflict) {
				t.Fatalf("stale delete holding %d = %v, want a conflict", stale.V, err)
			}
			if err := tb.Mapper().WriteTx(ctx, []TxOp{tb.TxSave(stale)}); !errors.Is(err, ErrVersionConflict) {
				t.Fatalf("stale TxSave holding %d = %v, want a conflict", stale.V, err)
			}
		}
		got, err := tb.Load(ctx, clockItem{ID: "k"}, ConsistentRead())
		if err != nil || got != recreated {
			t.Fatalf("stored %+v, %v; want the re-created %+v", got, err, recreated)
		}
		// SaveClobber on a missing item starts from the clock too.
		fc.Advance(time.Second)
		cl, err := tb.Save(ctx, clockItem{ID: "c"}, WithSaveBehavior(SaveClobber))
		if err != nil || cl.V != fc.Now().UnixMilli() {
			t.Fatalf("SaveClobber of a missing item = %d, %v; want %d", cl.V, err, fc.Now().UnixMilli())
		}
	})
}

// A lost answer to a create with a custom start is settled by the token:
// success, written once, at the first version.
func TestVersionSettingsLostAnswer(t *testing.T) {
	d := dynamotest.NewDropper("UpdateItem")
	c := d.Client(t)
	name := dynamotest.KeyTable(t, c, "", "id", types.ScalarAttributeTypeS, "", "")
	tb, err := NewTable[stepItem](NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	d.Arm(1)
	s, err := tb.Save(ctx, stepItem{ID: "k", Name: "a"})
	if err != nil || s.V != 100 || d.Dropped() != 1 {
		t.Fatalf("Save = %+v, %v (dropped %d); want version 100", s, err, d.Dropped())
	}
	d.Arm(1)
	s, err = tb.Save(ctx, s)
	if err != nil || s.V != 110 {
		t.Fatalf("Save = %+v, %v; want version 110", s, err)
	}
	// A lost SaveClobber answer: the token proves it applied, once.
	d.Arm(1)
	s, err = tb.Save(ctx, s, WithSaveBehavior(SaveClobber))
	if err != nil || s.V != 120 {
		t.Fatalf("SaveClobber = %+v, %v; want version 120", s, err)
	}
}

// A step that would pass the field's largest value is refused before
// sending, and SaveClobber's condition stops short of it.
func TestVersionStepOverflow(t *testing.T) {
	type small struct {
		ID string `dynamo:"id,hash"`
		V  int8   `dynamo:"v,version,versionstart=100,versionstep=10"`
	}
	tb, _ := idTable[small](t)
	ctx := t.Context()
	s, err := tb.Save(ctx, small{ID: "k"})
	if err != nil {
		t.Fatal(err)
	}
	s, err = tb.Save(ctx, s) // 110
	if err != nil {
		t.Fatal(err)
	}
	s, err = tb.Save(ctx, s) // 120
	if err != nil || s.V != 120 {
		t.Fatal(s, err)
	}
	if _, err := tb.Save(ctx, s); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "no room") {
		t.Fatalf("Save holding 120 of int8 step 10 = %v, want ErrInvalidInput", err)
	}
	_, err = tb.Save(ctx, small{ID: "k"}, WithSaveBehavior(SaveClobber))
	if !errors.Is(err, ErrConditionFailed) || !strings.Contains(err.Error(), "advances by 10") {
		t.Fatalf("SaveClobber at 120 of int8 step 10 = %v, want a condition failure naming the step", err)
	}
}

type stepCounter struct {
	ID string `dynamo:"id,hash"`
	N  int64  `dynamo:"n"`
	V  int64  `dynamo:"v,version,versionstart=100,versionstep=10"`
}

// On DynamoDB Local: the writes that advance the stored version without
// reading it (SaveClobber, Add) write the first version over every stored
// state that holds no version — absent, no attribute, NULL, and 0, which
// means unsaved — and the stored version plus the step over one that holds
// a version, whatever the settings. (0 + step was stored over a version 0
// with versionstart ≠ versionstep.)
func TestVersionSettingsOverForeignStates(t *testing.T) {
	tb, _ := idTable[stepCounter](t)
	c := tb.Mapper().Client()
	ctx := t.Context()
	schema := itemstate.Schema{Version: "v", Token: DefaultWriteTokenAttribute, Attrs: map[string]types.AttributeValue{"n": plan.NumberAV(5)}}
	for _, st := range itemstate.States(schema) {
		want := int64(100) // no version stored: the first
		switch st.Kind {
		case itemstate.ForeignToken, itemstate.NumberSpelling:
			want = 11 // version 1 stored
		}
		for _, call := range []string{"Add", "SaveClobber"} {
			id := call + " " + st.String()
			if err := itemstate.Put(ctx, c, tb.Name(), map[string]types.AttributeValue{"id": str(id)}, st); err != nil {
				t.Fatal(err)
			}
			var got stepCounter
			var err error
			if call == "Add" {
				got, err = tb.Add(ctx, stepCounter{ID: id}, Increment("n", 1))
			} else {
				got, err = tb.Save(ctx, stepCounter{ID: id, N: 9}, WithSaveBehavior(SaveClobber))
			}
			if err != nil || got.V != want {
				t.Errorf("%s over %s = version %d, %v; want %d", call, st, got.V, err, want)
			}
			if stored, err := tb.Load(ctx, stepCounter{ID: id}, ConsistentRead()); err != nil || stored.V != want {
				t.Errorf("%s over %s: stored version %d, %v; want %d", call, st, stored.V, err, want)
			}
		}
	}
}

// clockCounter has a version that starts at the clock (milliseconds) and
// a uint field, for the first version written over a stored 0.
type clockCounter struct {
	ID string `dynamo:"id,hash"`
	N  int64  `dynamo:"n"`
	V  uint64 `dynamo:"v,version,versionstart=clock,versionstep=1000"`
}

// TestFirstVersionOverEverySpellingOfZero pins that SaveClobber and Add
// write the first version (versionstart) over a stored version 0 however
// DynamoDB was given it ("0.0", "0E5", "-0", "000"), for an int64 field
// with versionstart=100 and a uint64 field with versionstart=clock; and
// that a version stored as a string (another writer's, not a number) is
// left as it is, the call failing, rather than written over.
func TestFirstVersionOverEverySpellingOfZero(t *testing.T) {
	tb, fc := idTable[stepCounter](t)
	ctb, err := NewTable[clockCounter](tb.Mapper(), tb.Name())
	if err != nil {
		t.Fatal(err)
	}
	c := tb.Mapper().Client()
	ctx := t.Context()
	put := func(id string, v types.AttributeValue) {
		t.Helper()
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tb.Name()), Item: map[string]types.AttributeValue{
			"id": str(id), "n": plan.NumberAV(5), "v": v}}); err != nil {
			t.Fatalf("put %s: %v", id, err)
		}
	}
	clockFirst := uint64(fc.Now().UnixMilli())
	for _, zero := range []string{"0", "0.0", "0E5", "-0", "000", "0e-3"} {
		for _, call := range []string{"Add", "SaveClobber", "clock Add", "clock SaveClobber"} {
			id := call + " " + zero
			put(id, &types.AttributeValueMemberN{Value: zero})
			var got, want uint64
			switch call {
			case "Add":
				r, err := tb.Add(ctx, stepCounter{ID: id}, Increment("n", 1))
				got, want = uint64(r.V), 100
				if err != nil {
					t.Errorf("%s: %v", id, err)
				}
			case "SaveClobber":
				r, err := tb.Save(ctx, stepCounter{ID: id, N: 9}, WithSaveBehavior(SaveClobber))
				got, want = uint64(r.V), 100
				if err != nil {
					t.Errorf("%s: %v", id, err)
				}
			case "clock Add":
				r, err := ctb.Add(ctx, clockCounter{ID: id}, Increment("n", 1))
				got, want = r.V, clockFirst
				if err != nil {
					t.Errorf("%s: %v", id, err)
				}
			case "clock SaveClobber":
				r, err := ctb.Save(ctx, clockCounter{ID: id, N: 9}, WithSaveBehavior(SaveClobber))
				got, want = r.V, clockFirst
				if err != nil {
					t.Errorf("%s: %v", id, err)
				}
			}
			stored, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tb.Name()), Key: map[string]types.AttributeValue{"id": str(id)}, ConsistentRead: aws.Bool(true)})
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s over stored %q: version %d, want %d (stored %v)", call, zero, got, want, stored.Item["v"])
			}
		}
	}
	for _, call := range []string{"Add", "SaveClobber"} {
		id := call + " string version"
		put(id, str("0"))
		var err error
		if call == "Add" {
			_, err = tb.Add(ctx, stepCounter{ID: id}, Increment("n", 1))
		} else {
			_, err = tb.Save(ctx, stepCounter{ID: id, N: 9}, WithSaveBehavior(SaveClobber))
		}
		if err == nil || errors.Is(err, ErrUnknownOutcome) {
			t.Errorf("%s over a version stored as a string: %v, want a failure", call, err)
		} else {
			t.Logf("%s over a version stored as a string: %v", call, err)
		}
		stored, gerr := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tb.Name()), Key: map[string]types.AttributeValue{"id": str(id)}, ConsistentRead: aws.Bool(true)})
		if gerr != nil {
			t.Fatal(gerr)
		}
		if s, ok := stored.Item["v"].(*types.AttributeValueMemberS); !ok || s.Value != "0" {
			t.Errorf("%s over a version stored as a string: stored %v", call, stored.Item)
		}
	}
}

// On DynamoDB Local: a version another client stored in any spelling of a
// whole number ("20e-1", "+2", "0.2e1", "2.000", "1e0000000000001" for 10)
// is that version to every call: Load reads it, Save of the copy loaded and
// Save with ChangedFrom of a read spelled so write the next version, Update
// reads and advances it; a stale copy still conflicts.
func TestVersionsStoredInOtherSpellingsOnDynamoDBLocal(t *testing.T) {
	tb, _ := idTable[plainItem](t)
	c := tb.Mapper().Client()
	ctx := t.Context()
	for _, tc := range []struct {
		stored string
		v      int64
	}{{"20e-1", 2}, {"+2", 2}, {"0.2e1", 2}, {"2.000", 2}, {"1e0000000000001", 10}, {"-0.0e99999999", 0}} {
		for _, call := range []string{"Save", "ChangedFrom", "Update"} {
			if tc.v == 0 && call == "ChangedFrom" {
				continue // version zero is unsaved: ChangedFrom is refused
			}
			id := call + " " + tc.stored
			raw := map[string]types.AttributeValue{"id": str(id), "name": str("a"), "v": n(tc.stored)}
			if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tb.Name()), Item: raw}); err != nil {
				t.Fatal(err)
			}
			got, err := tb.Load(ctx, plainItem{ID: id}, ConsistentRead())
			if err != nil || got.V != tc.v {
				t.Fatalf("%s: Load = %+v, %v; want version %d", id, got, err, tc.v)
			}
			var saved plainItem
			switch call {
			case "Save":
				got.Name = "b"
				saved, err = tb.Save(ctx, got)
			case "ChangedFrom":
				got.Name = "b"
				saved, err = tb.Save(ctx, got, ChangedFrom(raw))
			case "Update":
				saved, err = tb.Update(ctx, plainItem{ID: id}, func(p plainItem) (plainItem, error) { p.Name = "b"; return p, nil })
			}
			if err != nil || saved.V <= tc.v || saved.Name != "b" {
				t.Errorf("%s over the stored %q: %+v, %v; want a version past %d", call, tc.stored, saved, err, tc.v)
				continue
			}
			if _, err := tb.Save(ctx, got); !errors.Is(err, ErrVersionConflict) {
				t.Errorf("%s: a stale copy at version %d saved over %d: %v", id, got.V, saved.V, err)
			}
		}
	}
}

// negCounter is a versioned counter whose int8 version holds negative
// numbers, as another writer may store them.
type negCounter struct {
	ID string `dynamo:"id,hash"`
	N  int64  `dynamo:"n"`
	V  int8   `dynamo:"v,version"`
}

// A negative stored version (another writer's) is no version this type
// writes: every write of the item fails and leaves it as stored. Save,
// Update and Delete of the loaded item refuse it (the version held is
// negative); SaveClobber and Add, which advance the stored version without
// reading it, fail too — with ErrConditionFailed naming the negative
// version — instead of storing -1+1 = 0, which every later write takes for
// an unsaved item, or -5+1, which the returned copy then holds and no Save
// takes.
func TestNegativeStoredVersionRefusedByClobberAndAdd(t *testing.T) {
	tb, _ := idTable[negCounter](t)
	c := tb.Mapper().Client()
	ctx := t.Context()
	for _, stored := range []string{"-1", "-5", "-128"} {
		for _, call := range []string{"Add", "SaveClobber", "Save", "Update"} {
			id := call + " " + stored
			if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tb.Name()), Item: map[string]types.AttributeValue{
				"id": str(id), "v": n(stored), "n": n("1")}}); err != nil {
				t.Fatal(err)
			}
			var err error
			switch call {
			case "Add":
				_, err = tb.Add(ctx, negCounter{ID: id}, Increment("n", 1))
				if !errors.Is(err, ErrConditionFailed) || !strings.Contains(fmt.Sprint(err), "negative") {
					t.Errorf("%s over stored version %s: %v; want ErrConditionFailed saying the version is negative", call, stored, err)
				}
			case "SaveClobber":
				_, err = tb.Save(ctx, negCounter{ID: id, N: 9}, WithSaveBehavior(SaveClobber))
				if !errors.Is(err, ErrConditionFailed) || !strings.Contains(fmt.Sprint(err), "negative") {
					t.Errorf("%s over stored version %s: %v; want ErrConditionFailed saying the version is negative", call, stored, err)
				}
			case "Save":
				cur, lerr := tb.Load(ctx, negCounter{ID: id}, ConsistentRead())
				if lerr != nil {
					t.Fatal(lerr)
				}
				_, err = tb.Save(ctx, cur)
			case "Update":
				_, err = tb.Update(ctx, negCounter{ID: id}, func(cur negCounter) (negCounter, error) { cur.N++; return cur, nil })
			}
			if err == nil {
				t.Errorf("%s over stored version %s succeeded", call, stored)
			}
			got, gerr := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tb.Name()), ConsistentRead: aws.Bool(true),
				Key: map[string]types.AttributeValue{"id": str(id)}})
			if gerr != nil || !av.Equal(got.Item["v"], n(stored)) || !av.Equal(got.Item["n"], n("1")) {
				t.Errorf("%s over stored version %s: stored item now %v, %v; want it left as stored", call, stored, got.Item, gerr)
			}
		}
	}
}

// An item whose version no write takes — here a uint64 version beyond
// int64, stored by another writer — loads, and every write of the copy is
// refused before sending with one message that names the field and the
// way out, which works: a Delete with SaveClobber of a copy at version 0.
func TestHeldVersionNoWriteTakesNamesTheFix(t *testing.T) {
	type wide struct {
		ID string `dynamo:"id,hash"`
		V  uint64 `dynamo:"v,version"`
	}
	db := (&fakeDB{}).table("wide", "id", "")
	db.put("wide", map[string]types.AttributeValue{"id": str("k"), "v": n("18446744073709551615")})
	m := NewMapper(db)
	tb, err := NewTable[wide](m, "wide")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	got, err := tb.Load(ctx, wide{ID: "k"})
	if err != nil || got.V != math.MaxUint64 {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	sent := len(db.ops())
	for name, write := range map[string]func() error{
		"Save":   func() error { _, err := tb.Save(ctx, got); return err },
		"Delete": func() error { return tb.Delete(ctx, got) },
		"WriteTx": func() error {
			return m.WriteTx(ctx, []TxOp{tb.TxSave(got)})
		},
	} {
		err := write()
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "version field ") || !strings.Contains(err.Error(), "Delete with SaveClobber at version 0") {
			t.Errorf("%s: %v; want ErrInvalidInput naming the field and the fix", name, err)
		}
	}
	if len(db.ops()) != sent {
		t.Errorf("sent %v, want nothing", db.ops()[sent:])
	}
	got.V = 0
	if err := tb.Delete(ctx, got, WithSaveBehavior(SaveClobber)); err != nil {
		t.Fatalf("the way out: %v", err)
	}
	if _, err := tb.Load(ctx, wide{ID: "k"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("after the delete: %v, want ErrNotFound", err)
	}
}
