package dynamo

import (
	"errors"
	"testing"
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
