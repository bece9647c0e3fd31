package dynamo

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
)

type guardedItem struct {
	ID      string `dynamo:"id,hash"`
	N       int    `dynamo:"n"`
	Version int64  `dynamo:"v,version"`
}

// guardFence is the item a guard checks: a lease record, say.
type guardFence struct {
	ID    string `dynamo:"id,hash"`
	Owner string `dynamo:"owner"`
}

// guardTables returns a table of items and a table holding the fence "f"
// owned by "me", and a check that "me" still owns it.
func guardTables(t *testing.T) (*Table[guardedItem], *Table[guardFence], func() TxOp) {
	t.Helper()
	c := dynamotest.Client(t)
	m := NewMapper(c)
	items, err := NewTable[guardedItem](m, dynamotest.KeyTable(t, c, "guarded", "id", types.ScalarAttributeTypeS, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	fences, err := NewTable[guardFence](m, dynamotest.KeyTable(t, c, "fence", "id", types.ScalarAttributeTypeS, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fences.Save(t.Context(), guardFence{ID: "f", Owner: "me"}); err != nil {
		t.Fatal(err)
	}
	mine := func() TxOp {
		return fences.TxCheck(guardFence{ID: "f"}, WithSaveBehavior(SaveClobber), If(expression.Name("owner").Equal(expression.Value("me"))))
	}
	return items, fences, mine
}

// failedCheck reports whether err is the *TxError of a guarded write whose
// check (member index i, on the fence) failed — ErrConditionFailed, not
// a version conflict of the write.
func failedCheck(err error, i int) bool {
	var te *TxError
	if !errors.As(err, &te) || !errors.Is(err, ErrConditionFailed) || errors.Is(err, ErrVersionConflict) {
		return false
	}
	f := te.Failure(i)
	return f != nil && f.Kind == "TxCheck" && f.Code == TxCodeConditionFailed
}

// GuardedBy works in every call that takes it: while the check holds,
// Save, Delete, Update, WriteTx (as its option and as a member's) and
// Transact (as its option and a Save's) write; when it fails, each returns a
// *TxError naming the check, writes nothing and calls no function again;
// a failure of the write's own version check is the *ConditionError the
// unguarded call returns.
func TestGuardedByInEveryCall(t *testing.T) {
	items, fences, mine := guardTables(t)
	ctx := t.Context()

	a, err := items.Save(ctx, guardedItem{ID: "a"}, GuardedBy(mine()))
	if err != nil || a.Version != 1 {
		t.Fatalf("guarded Save while the check holds: %+v, %v", a, err)
	}
	_, err = items.Save(ctx, guardedItem{ID: "a"}, GuardedBy(mine()))
	var ce *ConditionError
	if !errors.As(err, &ce) || !errors.Is(err, ErrVersionConflict) || ce.FoundVersion != 1 {
		t.Errorf("guarded Save of a stale version: %v; want the *ConditionError of a version conflict", err)
	}
	calls := 0
	inc := func(g guardedItem) (guardedItem, error) { calls++; g.N++; return g, nil }
	if a, err = items.Update(ctx, guardedItem{ID: "a"}, inc, GuardedBy(mine())); err != nil || a.N != 1 || a.Version != 2 {
		t.Fatalf("guarded Update while the check holds: %+v, %v", a, err)
	}
	check := mine()
	b := items.TxSave(guardedItem{ID: "b"}, GuardedBy(check))
	if err := items.Mapper().WriteTx(ctx, []TxOp{b, items.TxCheck(a, GuardedBy(check))}, GuardedBy(check)); err != nil {
		t.Fatalf("WriteTx with GuardedBy (the same check twice, one member): %v", err)
	}
	err = items.Mapper().Transact(ctx, func(tx *Tx) error {
		g, err := items.In(tx).Load(guardedItem{ID: "b"})
		if err != nil {
			return err
		}
		g.N = 10
		_, err = items.In(tx).Save(g, GuardedBy(mine()))
		return err
	}, GuardedBy(mine()))
	if err == nil || !strings.Contains(err.Error(), "both on table") {
		// Two checks of one item are two members on it: refused.
		t.Errorf("Transact with two distinct checks of one item: %v; want refused", err)
	}
	err = items.Mapper().Transact(ctx, func(tx *Tx) error {
		g, err := items.In(tx).Load(guardedItem{ID: "b"})
		if err != nil {
			return err
		}
		g.N = 10
		_, err = items.In(tx).Save(g, GuardedBy(check))
		return err
	}, GuardedBy(check))
	if err != nil {
		t.Fatalf("guarded Transact while the check holds: %v", err)
	}

	// Someone else owns the fence now.
	if _, err := fences.Save(ctx, guardFence{ID: "f", Owner: "other"}, WithSaveBehavior(SaveClobber)); err != nil {
		t.Fatal(err)
	}
	before, _ := items.Load(ctx, guardedItem{ID: "a"}, ConsistentRead())
	_, err = items.Save(ctx, before, GuardedBy(mine()))
	if !failedCheck(err, 1) {
		t.Errorf("guarded Save after the check failed: %v", err)
	}
	calls = 0
	_, err = items.Update(ctx, guardedItem{ID: "a"}, inc, GuardedBy(mine()))
	if !failedCheck(err, 1) || calls != 1 {
		t.Errorf("guarded Update after the check failed: %v (fn called %d times, want 1)", err, calls)
	}
	if err := items.Delete(ctx, before, GuardedBy(mine())); !failedCheck(err, 1) {
		t.Errorf("guarded Delete after the check failed: %v", err)
	}
	err = items.Mapper().WriteTx(ctx, []TxOp{items.TxSave(before)}, GuardedBy(mine()))
	if !failedCheck(err, 1) {
		t.Errorf("WriteTx with GuardedBy after the check failed: %v", err)
	}
	runs := 0
	err = items.Mapper().Transact(ctx, func(tx *Tx) error {
		runs++
		g, err := items.In(tx).Load(guardedItem{ID: "a"})
		if err != nil {
			return err
		}
		g.N = 99
		_, err = items.In(tx).Save(g)
		return err
	}, GuardedBy(mine()))
	if !failedCheck(err, 1) || runs != 1 {
		t.Errorf("guarded Transact after the check failed: %v after %d runs, want 1", err, runs)
	}
	err = items.Mapper().WriteTx(ctx, []TxOp{items.TxSave(before, GuardedBy(mine()))})
	if !failedCheck(err, 1) {
		t.Errorf("WriteTx with a member's GuardedBy after the check failed: %v", err)
	}
	runs = 0
	err = items.Mapper().Transact(ctx, func(tx *Tx) error {
		runs++
		return items.In(tx).Delete(before, GuardedBy(mine())) // member 0; the check is member 1
	})
	if !failedCheck(err, 1) || runs != 1 {
		t.Errorf("Transact with a Delete's GuardedBy after the check failed: %v after %d runs, want 1", err, runs)
	}
	err = items.Mapper().Transact(ctx, func(tx *Tx) error {
		if _, err := fences.In(tx).Load(guardFence{ID: "f"}); err != nil {
			return err
		}
		_, err := items.In(tx).Save(before)
		return err
	}, GuardedBy(mine()))
	if !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Transact whose function read the checked item: %v; want ErrInvalidInput", err)
	}
	after, _ := items.Load(ctx, guardedItem{ID: "a"}, ConsistentRead())
	if after != before {
		t.Errorf("a refused guarded write landed: %+v, was %+v", after, before)
	}
	if err := items.Delete(ctx, before); err != nil {
		t.Errorf("unguarded Delete: %v", err)
	}
}

// What GuardedBy cannot do is refused before anything is sent, saying why:
// Add, save behaviours whose copy is the stored item, an op that is not a
// check, a check of the item written, a nil check.
func TestGuardedByRefusals(t *testing.T) {
	c := &fakeDB{noStore: true}
	m := NewMapper(c)
	items, err := NewTable[guardedItem](m, "items")
	if err != nil {
		t.Fatal(err)
	}
	check := items.TxCheck(guardedItem{ID: "f", Version: 1})
	ctx := t.Context()
	for name, err := range map[string]error{
		"Add": func() error {
			_, err := items.Add(ctx, guardedItem{ID: "a"}, Increment("n", 1), GuardedBy(check))
			return err
		}(),
		"SkipNulls": func() error {
			_, err := items.Save(ctx, guardedItem{ID: "a"}, GuardedBy(check), WithSaveBehavior(SaveUpdateSkipNulls))
			return err
		}(),
		"Clobber": func() error {
			_, err := items.Save(ctx, guardedItem{ID: "a"}, GuardedBy(check), WithSaveBehavior(SaveClobber))
			return err
		}(),
		"not check": func() error {
			_, err := items.Save(ctx, guardedItem{ID: "a"}, GuardedBy(items.TxSave(guardedItem{ID: "b"})))
			return err
		}(),
		"same item": func() error {
			_, err := items.Save(ctx, guardedItem{ID: "f", Version: 1}, GuardedBy(check))
			return err
		}(),
		"101 members": func() error { // 100 checks and the write: over DynamoDB's 100
			var checks []TxOp
			for i := range 100 {
				checks = append(checks, items.TxCheck(guardedItem{ID: "c" + strconv.Itoa(i), Version: 1}))
			}
			_, err := items.Save(ctx, guardedItem{ID: "a"}, GuardedBy(checks...))
			return err
		}(),
		"nil check":  items.Delete(ctx, guardedItem{ID: "a"}, GuardedBy(nil)),
		"WriteTx op": m.WriteTx(ctx, []TxOp{items.TxSave(guardedItem{ID: "f", Version: 1})}, GuardedBy(check)),
	} {
		if !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: %v; want ErrInvalidInput", name, err)
		}
	}
	if len(c.txWrites()) != 0 {
		t.Errorf("%d transactions sent, want none", len(c.txWrites()))
	}
}

// A transaction over DynamoDB's 100 members because of the GuardedBy checks
// added to it is refused before anything is sent, saying which members the
// checks are (by the name given with Named) and how far to split the rest.
func TestGuardChecksCountedInTransactionLimit(t *testing.T) {
	c := &fakeDB{noStore: true}
	books, shelves := txTables(t, c)
	var ops []TxOp
	for i := range MaxTxItems {
		ops = append(ops, books.TxSave(Book{ISBN: strconv.Itoa(i)}))
	}
	guard := GuardedBy(shelves.TxCheck(&Shelf{Room: "r", Number: 1})).Named("the fence")
	err := books.Mapper().WriteTx(t.Context(), ops, guard)
	for _, want := range []string{"WriteTx with 101 members", "100 ops and 1 GuardedBy check (the fence, member 101)", "at most 99 ops each"} {
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), want) {
			t.Errorf("WriteTx of 100 ops and a check = %v; want ErrInvalidInput saying %q", err, want)
		}
	}
	two := GuardedBy(shelves.TxCheck(&Shelf{Room: "r", Number: 1}), shelves.TxCheck(&Shelf{Room: "r", Number: 2}))
	err = books.Mapper().WriteTx(t.Context(), ops[:99], two)
	if want := "99 ops and 2 GuardedBy checks (members 100-101)"; !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "at most 98 ops") {
		t.Errorf("WriteTx of 99 ops and 2 checks = %v; want ErrInvalidInput saying %q and at most 98 ops", err, want)
	}
	if n := len(c.txWrites()); n != 0 {
		t.Errorf("%d transactions sent; want none", n)
	}
}
