package dynamo

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/schema"
)

type stampItem struct {
	ID       string    `dynamo:"id,hash"`
	Name     string    `dynamo:"name"`
	Tags     []string  `dynamo:"tags,set,omitempty"`
	Created  time.Time `dynamo:"created,created"`
	Modified time.Time `dynamo:"modified,modified"`
	V        int64     `dynamo:"v,version"`
}

type stampEncodings struct {
	ID      string     `dynamo:"id,hash"`
	CMs     int64      `dynamo:"c,created"`
	MUnix   *time.Time `dynamo:"m,modified,unixtime"`
	Unused  string     `dynamo:"unused,omitempty"`
	Version uint64     `dynamo:"v,version"`
}

type stampJava struct {
	ID       string     `dynamo:"id,hash"`
	Created  *time.Time `dynamo:"created,created,javadate"`
	Modified uint64     `dynamo:"modified,modified"`
}

func TestTimestampTags(t *testing.T) {
	for _, tc := range []struct{ tag, want string }{
		{"c,created,modified", "both created and modified"},
		{"c,created,hash", "key"},
		{"c,modified,version", "version"},
		{"c,created,ttl", "expire"},
		{"c,modified,stringset", "set option"},
		{"c,created,string", "remove \"string\""},
		{"c,created,created", "repeated"},
	} {
		if _, err := schema.ParseTag(tc.tag); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseTag(%q) = %v, want an error saying %q", tc.tag, err, tc.want)
		}
	}
	type str struct {
		ID string `dynamo:"id,hash"`
		C  string `dynamo:"c,created"`
	}
	type i32 struct {
		ID string `dynamo:"id,hash"`
		M  int32  `dynamo:"m,modified"`
	}
	type two struct {
		ID string    `dynamo:"id,hash"`
		A  time.Time `dynamo:"a,created"`
		B  time.Time `dynamo:"b,created"`
	}
	type intUnix struct {
		ID string `dynamo:"id,hash"`
		M  int64  `dynamo:"m,modified,unixtime"`
	}
	type Inner struct {
		M time.Time `dynamo:"m,modified"`
	}
	type viaPtr struct {
		ID string `dynamo:"id,hash"`
		*Inner
	}
	m := NewMapper(&fakeDB{noStore: true})
	for _, tc := range []struct {
		err  error
		want string
	}{
		{tableErr[str](m), "created attribute of type string: use time.Time"},
		{tableErr[i32](m), "modified attribute of type int32"},
		{tableErr[two](m), "second created attribute"},
		{tableErr[intUnix](m), "an integer modified time is Unix milliseconds"},
		{tableErr[viaPtr](m), "inside an embedded pointer"},
		{tableErr[stampEncodings](m), ""},
		{tableErr[stampJava](m), ""},
	} {
		switch {
		case tc.want == "" && tc.err != nil:
			t.Errorf("unexpected error: %v", tc.err)
		case tc.want != "" && (!errors.Is(tc.err, ErrInvalidSchema) || !strings.Contains(tc.err.Error(), tc.want)):
			t.Errorf("error %v, want ErrInvalidSchema saying %q", tc.err, tc.want)
		}
	}
}

func TestTimestamps(t *testing.T) {
	tb, fc := idTable[stampItem](t)
	ctx := t.Context()
	t0 := fc.Now().UTC()
	load := func(id string) stampItem {
		t.Helper()
		it, err := tb.Load(ctx, stampItem{ID: id}, ConsistentRead())
		if err != nil {
			t.Fatal(err)
		}
		return it
	}
	check := func(what string, it stampItem, created, modified time.Time) {
		t.Helper()
		if !it.Created.Equal(created) || !it.Modified.Equal(modified) {
			t.Fatalf("%s: created %v modified %v, want %v and %v", what, it.Created, it.Modified, created, modified)
		}
	}
	for _, b := range []SaveBehavior{SaveUpdate, SaveUpdateSkipNulls, SavePut, SaveClobber, SaveAppendSet} {
		fc.Advance(time.Second)
		tc := fc.Now()
		id := "k-" + b.String()
		in := stampItem{ID: id, Name: "a"}
		s1, err := tb.Save(ctx, in, WithSaveBehavior(b))
		if err != nil {
			t.Fatalf("%v: %v", b, err)
		}
		if !in.Created.IsZero() || !in.Modified.IsZero() {
			t.Fatalf("%v: the caller's item was modified: %+v", b, in)
		}
		check(b.String()+" create", s1, tc, tc)
		check(b.String()+" create, loaded", load(id), tc, tc)

		fc.Advance(time.Second)
		tm := fc.Now()
		s2, err := tb.Save(ctx, s1, WithSaveBehavior(b))
		if err != nil {
			t.Fatalf("%v: %v", b, err)
		}
		check(b.String()+" second", s2, tc, tm)
		check(b.String()+" second, loaded", load(id), tc, tm)

		// A copy whose creation time is zero or altered: update behaviours
		// keep the stored one and return it; SavePut refuses to replace it.
		for _, c := range []time.Time{{}, t0.Add(-time.Hour)} {
			fc.Advance(time.Second)
			tm = fc.Now()
			odd := s2
			odd.Created = c
			s3, err := tb.Save(ctx, odd, WithSaveBehavior(b))
			if b == SavePut {
				var ce *ConditionError
				if !errors.Is(err, ErrConditionFailed) || !errors.As(err, &ce) || !strings.Contains(err.Error(), "stored creation time created is") {
					t.Fatalf("SavePut with creation time %v = %v, want ErrConditionFailed naming the stored creation time", c, err)
				}
				check("SavePut refused, loaded", load(id), tc, s2.Modified)
				continue
			}
			if err != nil {
				t.Fatalf("%v: %v", b, err)
			}
			check(b.String()+" with an odd creation time", s3, tc, tm)
			check(b.String()+" with an odd creation time, loaded", load(id), tc, tm)
			s2 = s3
		}
	}

	// Update creates with both times, then keeps the creation time.
	fc.Advance(time.Second)
	tc := fc.Now()
	u, err := tb.Update(ctx, stampItem{ID: "upd"}, func(c stampItem) (stampItem, error) { c.Name = "u"; return c, nil })
	if err != nil {
		t.Fatal(err)
	}
	check("Update create", u, tc, tc)
	fc.Advance(time.Second)
	u, err = tb.Update(ctx, stampItem{ID: "upd"}, func(c stampItem) (stampItem, error) {
		c.Name = "v"
		c.Created = time.Time{} // ignored: the stored one is kept
		return c, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check("Update", u, tc, fc.Now())
	check("Update, loaded", load("upd"), tc, fc.Now())

	// Importing: a new item holding a creation time keeps it.
	old := t0.Add(-24 * time.Hour)
	imp, err := tb.Save(ctx, stampItem{ID: "imp", Created: old})
	if err != nil {
		t.Fatal(err)
	}
	check("import", imp, old, fc.Now())
	check("import, loaded", load("imp"), old, fc.Now())
}

func TestTimestampsTx(t *testing.T) {
	tb, fc := idTable[stampItem](t)
	ctx := t.Context()
	tc := fc.Now()
	a := tb.TxSave(stampItem{ID: "a"})
	p := tb.TxSave(stampItem{ID: "p"}, WithSaveBehavior(SavePut))
	if err := tb.Mapper().WriteTx(ctx, []TxOp{a, p}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []stampItem{a.Saved(), p.Saved()} {
		if !s.Created.Equal(tc) || !s.Modified.Equal(tc) {
			t.Fatalf("TxSave create: %+v, want both times %v", s, tc)
		}
	}
	fc.Advance(time.Minute)
	a2, p2 := tb.TxSave(a.Saved()), tb.TxSave(p.Saved(), WithSaveBehavior(SavePut))
	if err := tb.Mapper().WriteTx(ctx, []TxOp{a2, p2}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []stampItem{a2.Saved(), p2.Saved()} {
		if !s.Created.Equal(tc) || !s.Modified.Equal(fc.Now()) {
			t.Fatalf("TxSave: %+v, want created %v modified %v", s, tc, fc.Now())
		}
		got, err := tb.Load(ctx, s, ConsistentRead())
		if err != nil || !got.Created.Equal(tc) || !got.Modified.Equal(fc.Now()) {
			t.Fatalf("stored %+v, %v", got, err)
		}
	}
	// A transaction returns no values: a member whose creation time is not
	// the stored one fails instead of returning a wrong copy.
	zero := a2.Saved()
	zero.Created = time.Time{}
	err := tb.Mapper().WriteTx(ctx, []TxOp{tb.TxSave(zero)})
	var te *TxError
	if !errors.As(err, &te) || len(te.Failures) != 1 || !errors.Is(te.Failures[0].Err, ErrConditionFailed) ||
		!strings.Contains(te.Failures[0].Err.Error(), "stored creation time") {
		t.Fatalf("TxSave with a zero creation time = %v, want a member failure naming the creation time", err)
	}
}

func TestTimestampEncodings(t *testing.T) {
	tb, fc := idTable[stampEncodings](t)
	ctx := t.Context()
	fc.Advance(1234567 * time.Microsecond) // not on a second or a millisecond
	in := &stampEncodings{ID: "k"}
	s, err := tb.Save(ctx, *in)
	if err != nil {
		t.Fatal(err)
	}
	if in.MUnix != nil {
		t.Fatal("the caller's pointer was set")
	}
	if s.CMs != fc.Now().UnixMilli() || s.MUnix == nil || !s.MUnix.Equal(fc.Now().Truncate(time.Second)) {
		t.Fatalf("saved %d %v, want %d and %v", s.CMs, s.MUnix, fc.Now().UnixMilli(), fc.Now().Truncate(time.Second))
	}
	got, err := tb.Load(ctx, stampEncodings{ID: "k"}, ConsistentRead())
	if err != nil || got.CMs != s.CMs || !got.MUnix.Equal(*s.MUnix) {
		t.Fatalf("loaded %+v, %v; want %+v", got, err, s)
	}
	raw, _ := tb.readRaw(ctx, tb.pickKey(map[string]types.AttributeValue{"id": str("k")}))
	if _, ok := raw["m"].(*types.AttributeValueMemberN); !ok {
		t.Fatalf("unixtime stored as %T, want N", raw["m"])
	}

	tj, fj := idTable[stampJava](t)
	fj.Advance(1234567 * time.Microsecond)
	sj, err := tj.Save(ctx, stampJava{ID: "k"})
	if err != nil {
		t.Fatal(err)
	}
	gj, err := tj.Load(ctx, stampJava{ID: "k"}, ConsistentRead())
	if err != nil || !gj.Created.Equal(*sj.Created) || !sj.Created.Equal(fj.Now().Truncate(time.Millisecond)) || gj.Modified != uint64(fj.Now().UnixMilli()) {
		t.Fatalf("javadate: saved %v loaded %+v, %v", sj.Created, gj, err)
	}
	// Unversioned: the creation time is kept all the same.
	fj.Advance(time.Hour)
	sj2, err := tj.Save(ctx, stampJava{ID: "k"})
	if err != nil || !sj2.Created.Equal(*sj.Created) || sj2.Modified != uint64(fj.Now().UnixMilli()) {
		t.Fatalf("second save: %+v, %v; want the first creation time kept", sj2, err)
	}
}

// A lost answer to a create is settled by the token: success, and the copy
// carries the times stored.
func TestTimestampsLostAnswer(t *testing.T) {
	d := dynamotest.NewDropper("UpdateItem")
	c := d.Client(t)
	name := dynamotest.KeyTable(t, c, "", "id", types.ScalarAttributeTypeS, "", "")
	tb, err := NewTable[stampItem](NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	s, err := tb.Save(ctx, stampItem{ID: "k"})
	if err != nil {
		t.Fatal(err)
	}
	d.Arm(1)
	s.Created = time.Time{}
	s2, err := tb.Save(ctx, s)
	if err != nil || d.Dropped() != 1 {
		t.Fatal(err, d.Dropped())
	}
	got, _ := tb.Load(ctx, s, ConsistentRead())
	if !s2.Created.Equal(got.Created) || got.Created.IsZero() || !s2.Modified.Equal(got.Modified) {
		t.Fatalf("saved %+v, stored %+v", s2, got)
	}
}

func TestTimestampsBatch(t *testing.T) {
	tb, fc := idTable[stampItem](t)
	ctx := t.Context()
	if err := tb.BatchSave(ctx, []stampItem{{ID: "a"}, {ID: "b", Created: time.Unix(5, 0)}}, Clobber()); err != nil {
		t.Fatal(err)
	}
	a, _ := tb.Load(ctx, stampItem{ID: "a"}, ConsistentRead())
	b, _ := tb.Load(ctx, stampItem{ID: "b"}, ConsistentRead())
	if !a.Created.Equal(fc.Now()) || !a.Modified.Equal(fc.Now()) || !b.Created.Equal(time.Unix(5, 0)) || !b.Modified.Equal(fc.Now()) {
		t.Fatalf("stored %+v and %+v", a, b)
	}
}

// WriteTx's recipe for an unknown outcome — send the same members again
// with the same request token — works for types with timestamps and
// clock-started versions: the resend carries the first attempt's times, so
// DynamoDB recognises it instead of refusing another transaction under a
// used token.
func TestTimestampsTxResend(t *testing.T) {
	type both struct {
		ID       string    `dynamo:"id,hash"`
		Modified time.Time `dynamo:"modified,modified"`
		V        int64     `dynamo:"v,version,versionstart=clock"`
	}
	tb, fc := idTable[both](t)
	ctx := t.Context()
	op := tb.TxSave(both{ID: "k"})
	token := WithRequestToken(hex.EncodeToString(newToken()))
	if err := tb.Mapper().WriteTx(ctx, []TxOp{op}, token); err != nil {
		t.Fatal(err)
	}
	first := op.Saved()
	fc.Advance(time.Second)
	if err := tb.Mapper().WriteTx(ctx, []TxOp{op}, token); err != nil {
		t.Fatalf("the same members resent with the same token = %v, want the applied transaction recognised", err)
	}
	if op.Saved() != first {
		t.Fatalf("resend saved %+v, want %+v", op.Saved(), first)
	}
	// Another token is another transaction: fresh times (and a conflict,
	// the item being no longer unsaved).
	err := tb.Mapper().WriteTx(ctx, []TxOp{op}, WithRequestToken(hex.EncodeToString(newToken())))
	if !errors.Is(err, ErrVersionConflict) {
		t.Fatalf("a new transaction creating the item again = %v, want a conflict", err)
	}
}

// stampUnix has unixtime timestamps, which the decoder reads as time.Unix
// makes them (in time.Local).
type stampUnix struct {
	ID string     `dynamo:"id,hash"`
	V  int64      `dynamo:"v,version"`
	C  *time.Time `dynamo:"c,created,unixtime"`
	M  time.Time  `dynamo:"m,modified,unixtime"`
	N  int        `dynamo:"n"`
}

// The copy every write returns holds its unixtime timestamps as a load
// returns them — the same instant in the same time.Location, so that the
// saved copy equals the loaded one field for field (reflect.DeepEqual,
// ==) — whether the write learnt them from DynamoDB (SaveUpdate's
// ALL_NEW) or stamped them itself (SavePut, transactions).
func TestUnixtimeStampsReturnedAsLoaded(t *testing.T) {
	tb, fc := idTable[stampUnix](t)
	ctx := t.Context()
	m := tb.Mapper()
	writes := map[string]func(stampUnix) (stampUnix, error){
		"SaveUpdate": func(x stampUnix) (stampUnix, error) { return tb.Save(ctx, x) },
		"SavePut":    func(x stampUnix) (stampUnix, error) { return tb.Save(ctx, x, WithSaveBehavior(SavePut)) },
		"TxSave": func(x stampUnix) (stampUnix, error) {
			s := tb.TxSave(x)
			err := m.WriteTx(ctx, []TxOp{s})
			return s.Saved(), err
		},
		"Transact": func(x stampUnix) (stampUnix, error) {
			var out stampUnix
			err := m.Transact(ctx, func(tx *Tx) error { var err error; out, err = tb.In(tx).Save(x); return err })
			return out, err
		},
		"Update": func(x stampUnix) (stampUnix, error) {
			return tb.Update(ctx, stampUnix{ID: x.ID}, func(cur stampUnix) (stampUnix, error) { cur.N++; return cur, nil })
		},
	}
	for name, write := range writes {
		x := stampUnix{ID: name}
		for round := range 2 { // creating the item, then saving the loaded copy
			fc.Advance(1500 * time.Millisecond)
			got, err := write(x)
			if err != nil {
				t.Fatalf("%s (write %d): %v", name, round+1, err)
			}
			loaded, err := tb.Load(ctx, stampUnix{ID: name}, ConsistentRead())
			if err != nil {
				t.Fatal(err)
			}
			if got.M != loaded.M || got.C == nil || loaded.C == nil || *got.C != *loaded.C {
				t.Errorf("%s (write %d): returned created %v modified %v (%v), loaded %v and %v (%v): want them alike",
					name, round+1, got.C, got.M, got.M.Location(), loaded.C, loaded.M, loaded.M.Location())
			}
			x = loaded
		}
	}
}
