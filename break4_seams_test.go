package dynamo

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
)

// An Add that creates an item of an entity type must stamp the entity
// attribute, as a Save would: otherwise the item it creates is of no
// entity, the type's own Load does not find it and its next Add fails the
// entity condition.
func TestBreak4AddEntityStamps(t *testing.T) {
	_, orders, _, _ := shopTables(t)
	ctx := t.Context()
	got, err := orders.Add(ctx, shopOrder{PK: "C#1", SK: "O#1"}, Increment("total", 5))
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != "order" || got.Total != 5 {
		t.Fatalf("Add returned %+v, want kind order, total 5", got)
	}
	if _, err := orders.Add(ctx, shopOrder{PK: "C#1", SK: "O#1"}, Increment("total", 2)); err != nil {
		t.Fatalf("second Add: %v", err)
	}
	o, err := orders.Load(ctx, shopOrder{PK: "C#1", SK: "O#1"})
	if err != nil {
		t.Fatalf("Load after Add: %v", err)
	}
	if o.Total != 7 || o.Version != 2 {
		t.Fatalf("Load = %+v, want total 7 version 2", o)
	}
}

// Add never writes over another entity's item.
func TestBreak4AddOtherEntity(t *testing.T) {
	customers, orders, _, _ := shopTables(t)
	ctx := t.Context()
	if _, err := customers.Save(ctx, shopCustomer{PK: "C#1", SK: "X", Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	_, err := orders.Add(ctx, shopOrder{PK: "C#1", SK: "X"}, Increment("total", 5))
	if !errors.Is(err, ErrConditionFailed) {
		t.Fatalf("Add over a customer: %v, want ErrConditionFailed", err)
	}
}

// A Transact function that finds another entity's item at a key (Load:
// ErrNotFound) and saves or deletes its own type there must fail with
// ErrConditionFailed after one run, never write over the other item, nor
// run again and again.
func TestBreak4TransactOverOtherEntity(t *testing.T) {
	customers, orders, _, _ := shopTables(t)
	ctx := t.Context()
	if _, err := customers.Save(ctx, shopCustomer{PK: "C#1", SK: "X", Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	errTooMany := errors.New("function ran too often")
	for _, del := range []bool{false, true} {
		runs := 0
		err := orders.m.Transact(ctx, func(tx *Txn) error {
			if runs++; runs > 5 {
				return errTooMany
			}
			if _, err := orders.In(tx).Load(shopOrder{PK: "C#1", SK: "X"}); !errors.Is(err, ErrNotFound) {
				t.Errorf("Load of a customer as an order: %v, want ErrNotFound", err)
			}
			if del {
				return orders.In(tx).Delete(shopOrder{PK: "C#1", SK: "X"})
			}
			_, err := orders.In(tx).Save(shopOrder{PK: "C#1", SK: "X", Total: 1})
			return err
		})
		if !errors.Is(err, ErrConditionFailed) || runs != 1 {
			t.Errorf("delete=%v: Transact over a customer: %v after %d runs, want ErrConditionFailed after 1", del, err, runs)
		}
		c, err := customers.Load(ctx, shopCustomer{PK: "C#1", SK: "X"})
		if err != nil || c.Name != "Ada" {
			t.Fatalf("delete=%v: the customer is now %+v, %v", del, c, err)
		}
	}
}

// The copy a write returns is what a Load returns afterwards: an entity
// type's copy carries its entity name, from Save, Update (also a combined
// write's earlier copies) and Transact.
func TestBreak4SavedCopyHasEntity(t *testing.T) {
	_, orders, _, _ := shopTables(t)
	ctx := t.Context()
	s, err := orders.Save(ctx, shopOrder{PK: "C#1", SK: "O#1", Total: 1})
	if err != nil {
		t.Fatal(err)
	}
	l, err := orders.Load(ctx, shopOrder{PK: "C#1", SK: "O#1"})
	if err != nil {
		t.Fatal(err)
	}
	if s != l {
		t.Errorf("Save returned %+v, Load %+v", s, l)
	}
	u, err := orders.Update(ctx, shopOrder{PK: "C#1", SK: "O#2"}, func(o shopOrder) (shopOrder, error) { o.Total++; return o, nil })
	if err != nil || u.Kind != "order" {
		t.Errorf("Update returned %+v, %v; want kind order", u, err)
	}
	var tx shopOrder
	err = orders.m.Transact(ctx, func(txn *Txn) error {
		var err error
		tx, err = orders.In(txn).Save(shopOrder{PK: "C#1", SK: "O#3"})
		return err
	})
	if err != nil || tx.Kind != "order" {
		t.Errorf("Transact Save returned %+v, %v; want kind order", tx, err)
	}
}

// Items read with Prefetch are pinned at commit by their write token, as
// items read with Load are: the read must take the token although the
// type's reads project its attributes only. Otherwise every commit that
// wrote or checked a prefetched item conflicts once (a second run, a wasted
// TransactWriteItems).
func TestBreak4PrefetchThenSaveRunsOnce(t *testing.T) {
	customers, orders, _, _ := shopTables(t)
	ctx := t.Context()
	if _, err := orders.Save(ctx, shopOrder{PK: "C#1", SK: "O#1", Total: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := customers.Save(ctx, shopCustomer{PK: "C#1", SK: "A", Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	runs := 0
	err := orders.m.Transact(ctx, func(tx *Txn) error {
		runs++
		g, gc := orders.TxGet(shopOrder{PK: "C#1", SK: "O#1"}), customers.TxGet(shopCustomer{PK: "C#1", SK: "A"})
		if err := tx.Prefetch(g, gc); err != nil {
			return err
		}
		o, ok := g.Item()
		if !ok {
			return errors.New("order not found")
		}
		o.Total++
		_, err := orders.In(tx).Save(o) // the customer is read, not written: checked
		return err
	})
	if err != nil || runs != 1 {
		t.Fatalf("Transact = %v after %d runs, want success after 1", err, runs)
	}
}

// A lost answer of an Add that created an entity type's item is settled by
// its write token: the Add returns the item, stamped with the entity, and
// counted once.
func TestBreak4AddEntityLostAnswer(t *testing.T) {
	d := dynamotest.NewDropper("UpdateItem")
	c := d.Client(t)
	name := dynamotest.KeyTable(t, c, "shop", "pk", types.ScalarAttributeTypeS, "sk", types.ScalarAttributeTypeS)
	orders, err := NewTable[shopOrder](NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	d.Arm(1)
	got, err := orders.Add(ctx, shopOrder{PK: "C#1", SK: "O#1"}, Increment("total", 5))
	if err != nil || got.Total != 5 || got.Kind != "order" || d.Dropped() != 1 || d.Sent() != 1 {
		t.Fatalf("Add with a lost answer = %+v, %v (dropped %d, sent %d)", got, err, d.Dropped(), d.Sent())
	}
	o, err := orders.Load(ctx, shopOrder{PK: "C#1", SK: "O#1"}, ConsistentRead())
	if err != nil || o.Total != 5 || o.Version != 1 {
		t.Fatalf("Load = %+v, %v; want total 5 version 1", o, err)
	}
}
