package dynamo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
)

// meter is a usage counter with a version; plainMeter one without.
type meter struct {
	ID      string   `dynamo:"id,hash"`
	Count   int64    `dynamo:"count"`
	Tags    []string `dynamo:"tags,set,omitempty"`
	Note    string   `dynamo:"note,omitempty"`
	Version int64    `dynamo:"version,version"`
}

type plainMeter struct {
	ID    string `dynamo:"id,hash"`
	Count int64  `dynamo:"count"`
	Note  string `dynamo:"note,omitempty"`
}

// meterView is another type over the same table: a second Table value that
// models fewer attributes.
type meterView struct {
	ID      string `dynamo:"id,hash"`
	Note    string `dynamo:"note,omitempty"`
	Version int64  `dynamo:"version,version"`
}

func meterTable(t *testing.T) (c *dynamodb.Client, name string) {
	t.Helper()
	c = dynamotest.Client(t)
	return c, dynamotest.KeyTable(t, c, "idem", "id", types.ScalarAttributeTypeS, "", "")
}

// incr is an Update function adding one.
func incr[T interface{ meter | plainMeter }](calls *int) func(T) (T, error) {
	return func(m T) (T, error) {
		*calls++
		switch p := any(&m).(type) {
		case *meter:
			p.Count++
		case *plainMeter:
			p.Count++
		}
		return m, nil
	}
}

func storedWindowKeys(t *testing.T, c Client, name, id string) []string {
	t.Helper()
	out, err := c.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: &name, ConsistentRead: new(bool),
		Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id}}})
	if err != nil {
		t.Fatal(err)
	}
	l, _ := out.Item[IdempotencyAttribute].(*types.AttributeValueMemberL)
	var keys []string
	if l != nil {
		for _, e := range l.Value {
			keys = append(keys, e.(*types.AttributeValueMemberS).Value)
		}
	}
	return keys
}

func TestIdempotentUpdateAndAddApplyOnceAndReturnWhatTheFirstStored(t *testing.T) {
	c, name := meterTable(t)
	ctx := t.Context()
	a, b := newTestTable[meter](t, c, name), newTestTable[meter](t, c, name) // b: another process
	calls := 0
	first, err := a.Update(ctx, meter{ID: "u"}, incr[meter](&calls), IdempotencyKey("ev-1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range []*Table[meter]{a, b} {
		again, err := tb.Update(ctx, meter{ID: "u"}, incr[meter](&calls), IdempotencyKey("ev-1"))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again, first) {
			t.Errorf("second run returned %+v, the first stored %+v", again, first)
		}
	}
	if calls != 1 || first.Count != 1 || first.Version != 1 {
		t.Errorf("function called %d times, stored %+v; want once, count 1 at version 1", calls, first)
	}

	firstAdd, err := a.Add(ctx, meter{ID: "u"}, Increment("count", 10), IdempotencyKey("ev-2"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range []*Table[meter]{a, b, newTestTable[meter](t, c, name)} {
		again, err := tb.Add(ctx, meter{ID: "u"}, Increment("count", 10), IdempotencyKey("ev-2"))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again, firstAdd) {
			t.Errorf("second Add returned %+v, the first stored %+v", again, firstAdd)
		}
	}
	got, _ := a.Load(ctx, meter{ID: "u"}, ConsistentRead())
	if got.Count != 11 || got.Version != 2 {
		t.Errorf("stored %+v; want count 11 (1 + 10, once each) at version 2", got)
	}
	if keys := storedWindowKeys(t, c, name, "u"); !reflect.DeepEqual(keys, []string{"ev-1", "ev-2"}) {
		t.Errorf("window %q; want [ev-1 ev-2]", keys)
	}
	// An Update keyed like an earlier Add: the key names the change, whatever the call.
	if _, err := b.Update(ctx, meter{ID: "u"}, incr[meter](&calls), IdempotencyKey("ev-2")); err != nil || calls != 1 {
		t.Errorf("Update with the key of an applied Add: %v, function called %d times; want nil, once in all", err, calls)
	}
}

func TestIdempotentWritesOfUnversionedTypesApplyOnce(t *testing.T) {
	c, name := meterTable(t)
	ctx := t.Context()
	tb := newTestTable[plainMeter](t, c, name)
	calls := 0
	for range 3 {
		if _, err := tb.Update(ctx, plainMeter{ID: "p"}, incr[plainMeter](&calls), IdempotencyKey("a")); err != nil {
			t.Fatal(err)
		}
		if _, err := tb.Add(ctx, plainMeter{ID: "p"}, Increment("count", 5), IdempotencyKey("b")); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := tb.Load(ctx, plainMeter{ID: "p"}, ConsistentRead())
	if got.Count != 6 || calls != 1 {
		t.Errorf("count %d, function called %d times; want 6 and once", got.Count, calls)
	}
}

// A lost answer: the write applied, its answer lost. The call succeeds
// (settled by the write token or the window) or says ErrUnknownOutcome;
// either way a re-run with the key applies nothing more.
//
// The fake, not DynamoDB Local behind it: a lost answer is the transport's,
// which the fake plays (a backend's client would have seen the answer).
func TestIdempotentRetryAfterLostAnswerAppliesOnce(t *testing.T) {
	const name = "M"
	ctx := t.Context()
	for _, op := range []string{"Update", "Add", "UpdateUnversioned", "AddUnversioned"} {
		t.Run(op, func(t *testing.T) {
			db := (&fakeDB{}).table(name, "id", "")
			db.lose("UpdateItem", 1, errors.New("connection reset after the write"))
			id := "lost-" + op
			vt, pt := newTestTable[meter](t, db, name), newTestTable[plainMeter](t, db, name)
			calls := 0
			run := func() (int64, error) {
				switch op {
				case "Update":
					m, err := vt.Update(ctx, meter{ID: id}, incr[meter](&calls), IdempotencyKey("k"))
					return m.Count, err
				case "Add":
					m, err := vt.Add(ctx, meter{ID: id}, Increment("count", 1), IdempotencyKey("k"))
					return m.Count, err
				case "UpdateUnversioned":
					m, err := pt.Update(ctx, plainMeter{ID: id}, incr[plainMeter](&calls), IdempotencyKey("k"))
					return m.Count, err
				}
				m, err := pt.Add(ctx, plainMeter{ID: id}, Increment("count", 1), IdempotencyKey("k"))
				return m.Count, err
			}
			n, err := run()
			if err != nil && !errors.Is(err, ErrUnknownOutcome) {
				t.Fatalf("first run: %v", err)
			}
			if err == nil && n != 1 {
				t.Errorf("first run returned count %d, want 1", n)
			}
			for range 2 {
				if n, err = run(); err != nil || n != 1 {
					t.Errorf("re-run: count %d, %v; want 1, nil", n, err)
				}
			}
			got, _ := pt.Load(ctx, plainMeter{ID: id}, ConsistentRead())
			if got.Count != 1 || calls > 1 {
				t.Errorf("stored count %d, function called %d times; want 1 and at most once", got.Count, calls)
			}
		})
	}
}

// A cancelled ctx: before sending, nothing is written; cancelled while the
// write is in flight (applied, the caller gone), a re-run applies nothing.
func TestIdempotentRetryAfterCancelledContextAppliesOnce(t *testing.T) {
	db := (&fakeDB{}).table("M", "id", "")
	tb := newTestTable[meter](t, db, "M")
	done, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := tb.Add(done, meter{ID: "c"}, Increment("count", 1), IdempotencyKey("k")); !errors.Is(err, context.Canceled) {
		t.Errorf("Add with a cancelled ctx: %v; want context.Canceled", err)
	}
	if _, err := tb.Update(done, meter{ID: "c"}, incr[meter](new(int)), IdempotencyKey("k")); !errors.Is(err, context.Canceled) {
		t.Errorf("Update with a cancelled ctx: %v; want context.Canceled", err)
	}
	if n := db.count("UpdateItem") + db.count("PutItem"); n != 0 {
		t.Errorf("%d writes sent with a cancelled ctx", n)
	}
	for _, op := range []string{"Add", "Update"} {
		ctx, cancel := context.WithCancel(t.Context())
		db.hook(&fakeHook{op: "UpdateItem", n: db.count("UpdateItem") + 1, after: func(int, any, any, error) { cancel() }, lost: context.Canceled})
		var err error
		if op == "Add" {
			_, err = tb.Add(ctx, meter{ID: "c"}, Increment("count", 1), IdempotencyKey("k-"+op))
		} else {
			_, err = tb.Update(ctx, meter{ID: "c"}, incr[meter](new(int)), IdempotencyKey("k-"+op))
		}
		if err == nil {
			t.Errorf("%s whose ctx ended in flight returned nil", op)
		}
		for range 2 {
			if op == "Add" {
				_, err = tb.Add(t.Context(), meter{ID: "c"}, Increment("count", 1), IdempotencyKey("k-"+op))
			} else {
				_, err = tb.Update(t.Context(), meter{ID: "c"}, incr[meter](new(int)), IdempotencyKey("k-"+op))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	got, _ := tb.Load(t.Context(), meter{ID: "c"}, ConsistentRead())
	if got.Count != 2 {
		t.Errorf("count %d; want 2 (each keyed change once)", got.Count)
	}
}

func TestIdempotencyKeyRefusedBeforeSending(t *testing.T) {
	db := &fakeDB{}
	db.table("T", "id", "")
	tb := newTestTable[meter](t, db, "T")
	ctx := t.Context()
	fn := incr[meter](new(int))
	type clash struct {
		ID   string `dynamo:"id,hash"`
		Idem string `dynamo:"ddbkit_idem"`
	}
	ct := newTestTable[clash](t, db, "T")
	tt, err := NewTable[meter](NewMapper(db, WithWriteTokenAttribute(IdempotencyAttribute)), "T")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("k", MaxIdempotencyKeyLen+1)
	for name, c := range map[string]struct {
		call func() error
		want string
	}{
		"empty": {func() error {
			_, err := tb.Add(ctx, meter{ID: "x"}, Increment("count", 1), IdempotencyKey(""))
			return err
		}, "the key is empty"},
		"too long": {func() error { _, err := tb.Update(ctx, meter{ID: "x"}, fn, IdempotencyKey(long)); return err }, "over the 128 bytes (MaxIdempotencyKeyLen)"},
		"not UTF-8": {func() error {
			_, err := tb.Add(ctx, meter{ID: "x"}, Increment("count", 1), IdempotencyKey("\xff"))
			return err
		}, "not valid UTF-8"},
		"modeled": {func() error {
			_, err := ct.Update(ctx, clash{ID: "x"}, func(c clash) (clash, error) { return c, nil }, IdempotencyKey("k"))
			return err
		}, "field Idem is stored as \"ddbkit_idem\""},
		"token there": {func() error {
			_, err := tt.Add(ctx, meter{ID: "x"}, Increment("count", 1), IdempotencyKey("k"))
			return err
		}, "pick another with WithWriteTokenAttribute"},
		"Save":      {func() error { _, err := tb.Save(ctx, meter{ID: "x"}, IdempotencyKey("k")); return err }, "Save on table \"T\" with IdempotencyKey: only Update (without GuardedBy) and Add"},
		"Delete":    {func() error { return tb.Delete(ctx, meter{ID: "x"}, IdempotencyKey("k")) }, "remove IdempotencyKey"},
		"TxSave":    {func() error { return tb.Mapper().WriteTx(ctx, []TxOp{tb.TxSave(meter{ID: "x"}, IdempotencyKey("k"))}) }, "remove IdempotencyKey"},
		"BatchSave": {func() error { return tb.BatchSave(ctx, []meter{{ID: "x"}}, IdempotencyKey("k")) }, "remove IdempotencyKey"},
		"GuardedBy": {func() error {
			_, err := tb.Update(ctx, meter{ID: "x"}, fn, IdempotencyKey("k"), GuardedBy(tb.TxCheck(meter{ID: "y"})))
			return err
		}, "Update with GuardedBy on table \"T\" with IdempotencyKey"},
		"nil function": {func() error { _, err := tb.Update(ctx, meter{ID: "x"}, nil, IdempotencyKey("k")); return err }, "nil function"},
	} {
		err := c.call()
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want ErrInvalidInput saying %q", name, err, c.want)
		}
	}
	if ops := db.ops(); len(ops) != 0 {
		t.Errorf("sent %v; want nothing", ops)
	}
}

func TestIdempotencyWindowKeepsTheLastKeys(t *testing.T) {
	c, name := meterTable(t)
	ctx := t.Context()
	tb := newTestTable[meter](t, c, name)
	for i := range IdempotencyWindow + 1 {
		if _, err := tb.Add(ctx, meter{ID: "w"}, Increment("count", 1), IdempotencyKey(fmt.Sprint("k", i))); err != nil {
			t.Fatal(err)
		}
	}
	keys := storedWindowKeys(t, c, name, "w")
	if len(keys) != IdempotencyWindow || keys[0] != "k1" || keys[len(keys)-1] != fmt.Sprint("k", IdempotencyWindow) {
		t.Fatalf("window of %d keys from %q to %q; want %d, k1 to k%d", len(keys), keys[0], keys[len(keys)-1], IdempotencyWindow, IdempotencyWindow)
	}
	// k1 is remembered; k0, beyond the window, is applied again (documented).
	for _, k := range []string{"k1", "k0"} {
		if _, err := tb.Add(ctx, meter{ID: "w"}, Increment("count", 1), IdempotencyKey(k)); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := tb.Load(ctx, meter{ID: "w"}, ConsistentRead())
	if want := int64(IdempotencyWindow + 2); got.Count != want {
		t.Errorf("count %d; want %d", got.Count, want)
	}
}

// Every write of this library between a keyed change and its re-run: the
// re-run finds its key (applies nothing) after each write that keeps the
// window, and applies again after the three that end it (Delete, and the
// whole-item puts of a batch and of a transaction), as docs/idempotency.md says.
func TestWindowThroughEveryOtherWrite(t *testing.T) {
	c, name := meterTable(t)
	ctx := t.Context()
	tb := newTestTable[meter](t, c, name)
	view := newTestTable[meterView](t, c, name)
	other := newTestTable[meter](t, c, name) // a second Table value of the same type
	keeps := map[string]func(m meter) error{
		"Save":          func(m meter) error { m.Note = "s"; _, err := tb.Save(ctx, m); return err },
		"SaveSkipNulls": func(m meter) error { _, err := tb.Save(ctx, m, WithSaveBehavior(SaveUpdateSkipNulls)); return err },
		"SaveAppendSet": func(m meter) error {
			m.Tags = []string{"t"}
			_, err := tb.Save(ctx, m, WithSaveBehavior(SaveAppendSet))
			return err
		},
		"SaveClobber": func(m meter) error { _, err := tb.Save(ctx, m, WithSaveBehavior(SaveClobber)); return err },
		"SavePut":     func(m meter) error { m.Note = "p"; _, err := tb.Save(ctx, m, WithSaveBehavior(SavePut)); return err },
		"Update": func(m meter) error {
			_, err := other.Update(ctx, m, func(m meter) (meter, error) { m.Note = "u"; return m, nil })
			return err
		},
		"UpdatePut": func(m meter) error {
			_, err := other.Update(ctx, m, func(m meter) (meter, error) { m.Note = "up"; return m, nil }, WithSaveBehavior(SavePut))
			return err
		},
		"Add":    func(m meter) error { _, err := other.Add(ctx, m, Increment("count", 100)); return err },
		"TxSave": func(m meter) error { m.Note = "tx"; return tb.Mapper().WriteTx(ctx, []TxOp{tb.TxSave(m)}) },
		"View Save": func(m meter) error {
			_, err := view.Save(ctx, meterView{ID: m.ID, Note: "v", Version: m.Version})
			return err
		},
		"View SavePut": func(m meter) error {
			_, err := view.Save(ctx, meterView{ID: m.ID, Version: m.Version}, WithSaveBehavior(SavePut))
			return err
		},
		"Transact": func(m meter) error {
			return tb.Mapper().Transact(ctx, func(tx *Tx) error {
				cur, err := tb.In(tx).Load(m)
				if err != nil {
					return err
				}
				cur.Note = "t"
				_, err = tb.In(tx).Save(cur)
				return err
			})
		},
	}
	ends := map[string]func(m meter) error{
		"Delete":      func(m meter) error { return tb.Delete(ctx, m) },
		"BatchSave":   func(m meter) error { return tb.BatchSave(ctx, []meter{m}, WithSaveBehavior(SaveClobber)) },
		"TxSave put":  func(m meter) error { return tb.Mapper().WriteTx(ctx, []TxOp{tb.TxSave(m, WithSaveBehavior(SavePut))}) },
		"BatchDelete": func(m meter) error { return tb.BatchDelete(ctx, []meter{m}, WithSaveBehavior(SaveClobber)) },
	}
	run := func(t *testing.T, id string, write func(meter) error, keeps bool) {
		for _, keyed := range []string{"Add", "Update"} {
			key := id + "-" + keyed
			change := func() (meter, error) {
				if keyed == "Add" {
					return tb.Add(ctx, meter{ID: key}, Increment("count", 1), IdempotencyKey("ev"))
				}
				return tb.Update(ctx, meter{ID: key}, incr[meter](new(int)), IdempotencyKey("ev"))
			}
			first, err := change()
			if err != nil {
				t.Fatal(err)
			}
			if err := write(first); err != nil {
				t.Fatalf("the write between: %v", err)
			}
			before, _ := tb.Load(ctx, meter{ID: key}, ConsistentRead())
			again, err := change()
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case keeps && again.Count != before.Count:
				t.Errorf("%s re-run after the write: count %d, was %d: applied twice", keyed, again.Count, before.Count)
			case !keeps && again.Count != before.Count+1:
				t.Errorf("%s re-run after the write that ends the window: count %d, was %d; want it applied again (documented)", keyed, again.Count, before.Count)
			}
		}
	}
	for name, write := range keeps {
		t.Run("keeps/"+name, func(t *testing.T) { run(t, strings.ReplaceAll(name, " ", ""), write, true) })
	}
	for name, write := range ends {
		t.Run("ends/"+name, func(t *testing.T) { run(t, strings.ReplaceAll(name, " ", ""), write, false) })
	}
}

// Keyed and unkeyed Updates and Adds of one item from many goroutines over
// two Tables: the unkeyed Updates are combined (internal/gate) beside the keyed
// ones; every keyed change, each sent twice, counts once, every unkeyed one once.
func TestKeyedChangesBesideCombinedUpdates(t *testing.T) {
	c, name := meterTable(t)
	ctx := t.Context()
	tables := []*Table[meter]{newTestTable[meter](t, c, name), newTestTable[meter](t, c, name)}
	const workers, each = 6, 8
	var wg sync.WaitGroup
	errs := make(chan error, workers*each*3)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tb := tables[w%2]
			for i := range each {
				key := IdempotencyKey(fmt.Sprintf("w%d-%d", w, i))
				for range 2 { // the same keyed change twice, through either Table
					var err error
					if i%2 == 0 {
						_, err = tables[(w+i)%2].Add(ctx, meter{ID: "hot"}, Increment("count", 1), key)
					} else {
						_, err = tables[(w+i)%2].Update(ctx, meter{ID: "hot"}, incr[meter](new(int)), key)
					}
					if err != nil {
						errs <- err
					}
				}
				if _, err := tb.Update(ctx, meter{ID: "hot"}, func(m meter) (meter, error) { m.Count += 1000; return m, nil }); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, _ := tables[0].Load(ctx, meter{ID: "hot"}, ConsistentRead())
	if want := int64(workers * each * 1001); got.Count != want {
		t.Errorf("count %d; want %d (each keyed change once, each unkeyed once)", got.Count, want)
	}
}

// Update's If still fails as an If with a key; MustExist still refuses a
// missing item; ErrNoChange records nothing.
func TestIdempotentUpdateKeepsUpdatesRules(t *testing.T) {
	c, name := meterTable(t)
	ctx := t.Context()
	tb := newTestTable[meter](t, c, name)
	if _, err := tb.Update(ctx, meter{ID: "r"}, incr[meter](new(int)), IdempotencyKey("k"), MustExist()); !errors.Is(err, ErrNotFound) {
		t.Errorf("MustExist on a missing item: %v; want ErrNotFound", err)
	}
	if _, err := tb.Add(ctx, meter{ID: "r"}, Increment("count", 1), IdempotencyKey("k"), MustExist()); !errors.Is(err, ErrNotFound) {
		t.Errorf("Add MustExist on a missing item: %v; want ErrNotFound", err)
	}
	if _, err := tb.Save(ctx, meter{ID: "r"}); err != nil {
		t.Fatal(err)
	}
	cond := If(expression.Name("note").Equal(expression.Value("never")))
	if _, err := tb.Update(ctx, meter{ID: "r"}, incr[meter](new(int)), IdempotencyKey("k"), cond); !errors.Is(err, ErrConditionFailed) {
		t.Errorf("failing If: %v; want ErrConditionFailed", err)
	}
	if _, err := tb.Add(ctx, meter{ID: "r"}, Increment("count", 1), IdempotencyKey("k"), cond); !errors.Is(err, ErrConditionFailed) {
		t.Errorf("Add failing If: %v; want ErrConditionFailed", err)
	}
	noChange := func(m meter) (meter, error) { return m, ErrNoChange }
	if _, err := tb.Update(ctx, meter{ID: "r"}, noChange, IdempotencyKey("k")); err != nil {
		t.Fatal(err)
	}
	if keys := storedWindowKeys(t, c, name, "r"); len(keys) != 0 {
		t.Errorf("window %q after refused and unchanged runs; want none", keys)
	}
	calls := 0
	if m, err := tb.Update(ctx, meter{ID: "r"}, incr[meter](&calls), IdempotencyKey("k")); err != nil || m.Count != 1 || calls != 1 {
		t.Errorf("the key applied after them: %+v, %v, %d calls", m, err, calls)
	}
}

// Two instances (Tables over one table) sending the same keyed change at
// once, Adds and Updates mixed: it is applied once, and every run returns
// an item holding it.
func TestSameKeyFromTwoInstancesAtOnceAppliesOnce(t *testing.T) {
	c, name := meterTable(t)
	ctx := t.Context()
	tables := []*Table[meter]{newTestTable[meter](t, c, name), newTestTable[meter](t, c, name)}
	const runs = 8
	var wg sync.WaitGroup
	got := make([]meter, runs)
	errs := make([]error, runs)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				got[i], errs[i] = tables[i%2].Add(ctx, meter{ID: "same"}, Increment("count", 1), IdempotencyKey("ev"))
			} else {
				got[i], errs[i] = tables[i%2].Update(ctx, meter{ID: "same"}, incr[meter](new(int)), IdempotencyKey("ev"))
			}
		}()
	}
	wg.Wait()
	for i := range runs {
		if errs[i] != nil || got[i].Count != 1 {
			t.Errorf("run %d: %+v, %v; want count 1, nil", i, got[i], errs[i])
		}
	}
}

// A keyed Update whose function fails writes nothing and records nothing:
// the key is free, and a run whose function succeeds applies it.
func TestIdempotentUpdateWhoseFunctionFailsRecordsNothing(t *testing.T) {
	db := (&fakeDB{}).table("M", "id", "")
	tb := newTestTable[meter](t, db, "M")
	ctx := t.Context()
	boom := errors.New("boom")
	if _, err := tb.Update(ctx, meter{ID: "f"}, func(m meter) (meter, error) { return m, boom }, IdempotencyKey("k")); !errors.Is(err, boom) {
		t.Fatalf("err = %v; want the function's", err)
	}
	if n := db.count("UpdateItem") + db.count("PutItem"); n != 0 {
		t.Errorf("%d writes sent after the function failed", n)
	}
	calls := 0
	for range 2 {
		if m, err := tb.Update(ctx, meter{ID: "f"}, incr[meter](&calls), IdempotencyKey("k")); err != nil || m.Count != 1 {
			t.Fatalf("re-run: %+v, %v; want count 1", m, err)
		}
	}
	if calls != 1 {
		t.Errorf("function called %d times; want once", calls)
	}
}

// A type modelling ddbkit_idem itself refuses keyed calls (above), and its
// SavePut writes the field as any other: no window condition, no resend.
func TestTypeModellingTheWindowAttributePutsItAsAField(t *testing.T) {
	type clash struct {
		ID      string   `dynamo:"id,hash"`
		Idem    []string `dynamo:"ddbkit_idem"`
		Version int64    `dynamo:"version,version"`
	}
	db := (&fakeDB{}).table("M", "id", "")
	ct := newTestTable[clash](t, db, "M")
	ctx := t.Context()
	saved, err := ct.Save(ctx, clash{ID: "x", Idem: []string{"mine"}}, WithSaveBehavior(SavePut))
	if err != nil {
		t.Fatal(err)
	}
	saved.Idem = []string{"other"}
	if _, err := ct.Save(ctx, saved, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	for _, put := range db.puts() {
		if strings.Contains(aws.ToString(put.ConditionExpression), "#ik") {
			t.Errorf("put conditioned on the window: %q", aws.ToString(put.ConditionExpression))
		}
	}
	if n := len(db.puts()); n != 2 {
		t.Errorf("%d puts; want 2", n)
	}
	if got, err := ct.Load(ctx, clash{ID: "x"}); err != nil || !reflect.DeepEqual(got.Idem, []string{"other"}) {
		t.Errorf("stored %+v, %v; want the field as saved", got, err)
	}
}
