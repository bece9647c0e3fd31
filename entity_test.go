package dynamo

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/itemstate"
	"github.com/ddbkit/dynamo/internal/schema"
)

type shopCustomer struct {
	PK      string `dynamo:"pk,hash"`
	SK      string `dynamo:"sk,range"`
	Kind    string `dynamo:"kind,entity=customer"`
	Name    string `dynamo:"name"`
	Version int64  `dynamo:"v,version"`
}

type shopOrder struct {
	PK      string `dynamo:"pk,hash"`
	SK      string `dynamo:"sk,range"`
	Kind    string `dynamo:"kind,entity=order"`
	Status  string `dynamo:"status"`
	Total   int    `dynamo:"total"`
	Version int64  `dynamo:"v,version"`
}

// legacyNote has no entity attribute: its items are told apart by key prefix.
type legacyNote struct {
	PK   string `dynamo:"pk,hash"`
	SK   string `dynamo:"sk,range"`
	Text string `dynamo:"text"`
}

func shopTables(t *testing.T) (*Table[shopCustomer], *Table[shopOrder], *Table[legacyNote], *dynamodb.Client) {
	t.Helper()
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "shop", "pk", types.ScalarAttributeTypeS, "sk", types.ScalarAttributeTypeS)
	m := NewMapper(c)
	customers, err := NewTable[shopCustomer](m, name)
	if err != nil {
		t.Fatal(err)
	}
	orders, err := NewTable[shopOrder](m, name)
	if err != nil {
		t.Fatal(err)
	}
	notes, err := NewTable[legacyNote](m, name)
	if err != nil {
		t.Fatal(err)
	}
	return customers, orders, notes, c
}

// One Query over a partition yields each item as its own type; a typed
// Table reads only its entity; items without the attribute are told apart
// by a key prefix; an item nobody claims is an UnknownItem.
func TestEntitiesQuery(t *testing.T) {
	customers, orders, notes, c := shopTables(t)
	ctx := t.Context()
	if _, err := customers.Save(ctx, shopCustomer{PK: "C#1", SK: "A", Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []shopOrder{{PK: "C#1", SK: "O#1", Status: "open", Total: 5}, {PK: "C#1", SK: "O#2", Status: "paid", Total: 7}} {
		if _, err := orders.Save(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, sk := range []string{"NOTE#1", "ZZZ"} { // written by an older program: no kind attribute
		_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(orders.Name()), Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "C#1"}, "sk": &types.AttributeValueMemberS{Value: sk}, "text": &types.AttributeValueMemberS{Value: "hi"}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	shop, err := NewEntities(Member(customers), Member(orders), Member(notes, KeyPrefix("sk", "NOTE#")))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for v, err := range shop.Query(ctx, expression.Key("pk").Equal(expression.Value("C#1"))) {
		if err != nil {
			t.Fatal(err)
		}
		switch v := v.(type) {
		case shopCustomer:
			got = append(got, "customer "+v.Name+" "+v.Kind)
		case shopOrder:
			got = append(got, "order "+v.SK+" "+v.Status)
		case legacyNote:
			got = append(got, "note "+v.SK)
		case UnknownItem:
			got = append(got, "unknown "+v["sk"].(*types.AttributeValueMemberS).Value)
		default:
			t.Fatalf("yielded %T", v)
		}
	}
	want := "customer Ada customer|note NOTE#1|order O#1 open|order O#2 paid|unknown ZZZ"
	if strings.Join(got, "|") != want {
		t.Errorf("yielded %q, want %q", strings.Join(got, "|"), want)
	}
	var only []string
	for o, err := range orders.Query(ctx, expression.Key("pk").Equal(expression.Value("C#1"))) {
		if err != nil {
			t.Fatal(err)
		}
		only = append(only, o.SK)
	}
	if strings.Join(only, ",") != "O#1,O#2" {
		t.Errorf("orders.Query yielded %v, want only the orders", only)
	}
	page, _, err := orders.QueryPage(ctx, expression.Key("pk").Equal(expression.Value("C#1")), Limit(1))
	if err != nil || len(page) != 1 || page[0].SK != "O#1" {
		t.Errorf("QueryPage with Limit 1: %+v, %v", page, err)
	}
}

// A write of one entity type never lands on another's item at the same key,
// and reads do not take another entity's item for theirs.
func TestEntityWritesNeverCross(t *testing.T) {
	customers, orders, _, _ := shopTables(t)
	ctx := t.Context()
	if _, err := customers.Save(ctx, shopCustomer{PK: "C#1", SK: "X", Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	key := shopOrder{PK: "C#1", SK: "X"}
	if _, err := orders.Load(ctx, key); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `entity "customer"`) {
		t.Errorf("Load of a customer's key as an order: %v; want ErrNotFound naming the entity", err)
	}
	if _, err := orders.Save(ctx, shopOrder{PK: "C#1", SK: "X", Status: "open"}); err == nil {
		t.Error("Save of an order over a customer succeeded")
	}
	if _, err := orders.Save(ctx, shopOrder{PK: "C#1", SK: "X", Status: "open"}, WithSaveBehavior(SaveClobber)); err == nil {
		t.Error("SaveClobber of an order over a customer succeeded")
	}
	if _, err := orders.Save(ctx, shopOrder{PK: "C#1", SK: "X", Status: "open"}, WithSaveBehavior(SavePut)); err == nil {
		t.Error("SavePut of an order over a customer succeeded")
	}
	if err := orders.Delete(ctx, shopOrder{PK: "C#1", SK: "X", Version: 1}); err == nil {
		t.Error("Delete of a customer through the orders table succeeded")
	}
	if _, err := orders.Update(ctx, key, func(o shopOrder) (shopOrder, error) { o.Status = "x"; return o, nil }); !errors.Is(err, ErrConditionFailed) {
		t.Errorf("Update of a customer's key as an order: %v; want ErrConditionFailed", err)
	}
	if err := orders.Mapper().WriteTx(ctx, []TxOp{orders.TxSave(shopOrder{PK: "C#1", SK: "X"})}); err == nil {
		t.Error("a transaction saved an order over a customer")
	}
	g := orders.TxGet(key)
	if err := orders.Mapper().ReadTx(ctx, []TxGetOp{g}); err != nil {
		t.Fatal(err)
	}
	if _, found := g.Item(); found {
		t.Error("TxGet found a customer as an order")
	}
	if got, err := orders.BatchLoad(ctx, []shopOrder{key}, ConsistentRead()); err != nil || len(got) != 0 {
		t.Errorf("BatchLoad of a customer's key as an order: %+v, %v; want nothing found", got, err)
	}
	got, err := customers.Load(ctx, shopCustomer{PK: "C#1", SK: "X"}, ConsistentRead())
	if err != nil || got.Name != "Ada" || got.Version != 1 || got.Kind != "customer" {
		t.Errorf("the customer is %+v, %v; want it untouched", got, err)
	}
	if _, err := orders.Save(ctx, shopOrder{PK: "C#1", SK: "Y", Kind: "customer"}); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), `entity "order"`) {
		t.Errorf("an order whose Kind says customer: %v; want ErrInvalidInput", err)
	}
	if err := orders.BatchSave(ctx, []shopOrder{{PK: "C#1", SK: "Z"}}); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "SaveClobber") {
		t.Errorf("BatchSave of an entity type: %v; want ErrInvalidInput naming Clobber", err)
	}
}

func TestNewEntitiesRefuses(t *testing.T) {
	m := NewMapper(&fakeDB{noStore: true})
	customers := NewTableMust[shopCustomer](t, m)
	notes := NewTableMust[legacyNote](t, m)
	other, _ := NewTable[shopOrder](m, "Other")
	twin, _ := NewTable[shopCustomer](m, "Books")
	for _, tc := range []struct {
		members []EntityMember
		want    string
	}{
		{nil, "no members"},
		{[]EntityMember{Member(customers), Member(notes)}, "legacyNote has no entity attribute"},
		{[]EntityMember{Member(customers), Member(other)}, "members share one table"},
		{[]EntityMember{Member(customers), Member(twin)}, `both entity "customer"`},
	} {
		if _, err := NewEntities(tc.members...); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewEntities: %v; want ErrInvalidInput saying %q", err, tc.want)
		}
	}
	for _, tag := range []string{"kind,entity=", "kind,entity=a,entity=b", "kind,hash,entity=a", "kind,entity=\xff"} {
		if _, err := schema.ParseTag(tag); err == nil {
			t.Errorf("parseTag(%q) accepted", tag)
		}
	}
	type badKind struct {
		ID   string `dynamo:"id,hash"`
		Kind int    `dynamo:"kind,entity=x"`
	}
	if _, err := NewTable[badKind](m, "T"); err == nil || !strings.Contains(err.Error(), "use a string field") {
		t.Errorf("an int entity field: %v", err)
	}
}

// Transact does not take another entity's item for its type, and its
// writes carry the entity condition too.
func TestTransactEntities(t *testing.T) {
	customers, orders, _, _ := shopTables(t)
	ctx := t.Context()
	if _, err := customers.Save(ctx, shopCustomer{PK: "C#1", SK: "X", Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	err := orders.Mapper().Transact(ctx, func(tx *Tx) error {
		_, err := orders.In(tx).Load(shopOrder{PK: "C#1", SK: "X"})
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("Load of a customer's key as an order in a transaction: %v; want ErrNotFound", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = orders.Mapper().Transact(ctx, func(tx *Tx) error {
		_, err := orders.In(tx).Save(shopOrder{PK: "C#1", SK: "X", Status: "open"})
		return err
	}, WithRetry(RetryPolicy{MaxAttempts: 2}))
	if err == nil {
		t.Error("a transaction saved an order over a customer")
	}
	got, err := customers.Load(ctx, shopCustomer{PK: "C#1", SK: "X"}, ConsistentRead())
	if err != nil || got.Name != "Ada" {
		t.Errorf("the customer is %+v, %v; want it untouched", got, err)
	}
}

// A write refused because the key holds another entity type's item says so:
// an error wrapping ErrConditionFailed that names the other entity, with no
// If condition shown (the caller gave none); and Table.Current does not
// decode the other type's item as the caller's type (ErrNotFound, as Load
// says).
func TestWriteOverOtherEntityNamesIt(t *testing.T) {
	var theirs map[string]types.AttributeValue
	for _, st := range itemstate.States(itemstate.Schema{Version: "v", Entity: "kind", Name: "order"}) {
		if st.Kind == itemstate.OtherEntity {
			theirs = st.Item(map[string]types.AttributeValue{"pk": str("p"), "sk": str("s")})
		}
	}
	c := &fakeDB{noStore: true, onUpd: func(int, *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) { return nil, ccf(theirs) }}
	orders, err := NewTable[shopOrder](NewMapper(c), "shop")
	if err != nil {
		t.Fatal(err)
	}
	for _, held := range []int64{0, 1} {
		_, err = orders.Save(context.Background(), shopOrder{PK: "p", SK: "s", Status: "new", Version: held})
		var ce *ConditionError
		if !errors.As(err, &ce) || !errors.Is(err, ErrConditionFailed) {
			t.Fatalf("held %d: Save over another entity's item: %v, want a *ConditionError wrapping ErrConditionFailed", held, err)
		}
		if msg := err.Error(); !strings.Contains(msg, `entity "other-order"`) || strings.Contains(msg, "If condition") {
			t.Errorf("held %d: message %q: want it to name entity \"other-order\" and no If condition", held, msg)
		}
		if ce.Condition != "" {
			t.Errorf("held %d: Condition = %q, want \"\" (no If given)", held, ce.Condition)
		}
		if got, err := orders.Current(err); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "other-order") {
			t.Errorf("held %d: Current decoded the other entity's item as %+v, %v; want ErrNotFound naming it", held, got, err)
		}
	}
	// With an If, Condition shows the caller's condition alone.
	_, err = orders.Save(context.Background(), shopOrder{PK: "p", SK: "s"}, If(expression.Name("status").Equal(expression.Value("new"))))
	var ce *ConditionError
	if !errors.As(err, &ce) || strings.Contains(ce.Condition, "kind") || !strings.Contains(ce.Condition, "status") {
		t.Errorf("Condition = %q, want the If condition alone", ce.Condition)
	}
}

// An Add that creates an item of an entity type must stamp the entity
// attribute, as a Save would: otherwise the item it creates is of no
// entity, the type's own Load does not find it and its next Add fails the
// entity condition.
func TestAddStampsEntity(t *testing.T) {
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
func TestAddNeverWritesOverOtherEntity(t *testing.T) {
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
func TestTransactOverOtherEntityFailsOnce(t *testing.T) {
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
func TestSavedCopyHasEntity(t *testing.T) {
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
func TestPrefetchThenSaveRunsOnce(t *testing.T) {
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
func TestAddEntityLostAnswerSettled(t *testing.T) {
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

// A nil MatchFunc, an empty KeyPrefix attribute, a KeyPrefix that can never
// match (invalid UTF-8) and a nil Table are refused by NewEntities, before
// anything is sent, instead of panicking in the middle of a Query.
func TestNewEntitiesRefusesBadMatches(t *testing.T) {
	m := NewMapper(&fakeDB{noStore: true})
	customers := NewTableMust[shopCustomer](t, m)
	notes := NewTableMust[legacyNote](t, m)
	for name, mem := range map[string]func() EntityMember{
		"MatchFunc(nil)":        func() EntityMember { return Member(notes, MatchFunc(nil)) },
		"KeyPrefix empty attr":  func() EntityMember { return Member(notes, KeyPrefix("", "NOTE#")) },
		"KeyPrefix bad UTF-8":   func() EntityMember { return Member(notes, KeyPrefix("sk", "\xffNOTE")) },
		"KeyPrefix bad UTF-8 a": func() EntityMember { return Member(notes, KeyPrefix("s\xff", "NOTE")) },
		"nil table":             func() EntityMember { return Member[legacyNote](nil, KeyPrefix("sk", "NOTE#")) },
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", name, r)
				}
			}()
			if _, err := NewEntities(Member(customers), mem()); !errors.Is(err, ErrInvalidInput) {
				t.Errorf("%s: NewEntities: %v; want ErrInvalidInput", name, err)
			}
		}()
	}
}

// The zero Entities (an exported struct) yields an error, not a panic.
func TestZeroEntitiesIsAnError(t *testing.T) {
	var e Entities
	for name, seq := range map[string]func(){
		"Query": func() {
			for _, err := range e.Query(context.Background(), expression.Key("pk").Equal(expression.Value("x"))) {
				if !errors.Is(err, ErrInvalidInput) {
					t.Errorf("Query: %v; want ErrInvalidInput", err)
				}
			}
		},
		"Scan": func() {
			for _, err := range e.Scan(context.Background()) {
				if !errors.Is(err, ErrInvalidInput) {
					t.Errorf("Scan: %v; want ErrInvalidInput", err)
				}
			}
		},
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", name, r)
				}
			}()
			seq()
		}()
	}
}

// ConditionError.Decode into the written type refuses another entity's
// item as Table.Current does (ErrNotFound naming both entities), instead
// of decoding a customer into an order; into another type (a map, say) it
// still decodes the item as stored.
func TestConditionErrorDecodeRefusesAnotherEntitysItem(t *testing.T) {
	customers, orders, _, _ := shopTables(t)
	ctx := context.Background()
	if _, err := customers.Save(ctx, shopCustomer{PK: "p", SK: "s", Name: "ann"}); err != nil {
		t.Fatal(err)
	}
	_, err := orders.Save(ctx, shopOrder{PK: "p", SK: "s", Status: "new", Version: 1})
	var ce *ConditionError
	if !errors.As(err, &ce) {
		t.Fatalf("Save of an order over a customer = %v; want a *ConditionError", err)
	}
	if _, cerr := orders.Current(err); !errors.Is(cerr, ErrNotFound) {
		t.Fatalf("Current = %v; want ErrNotFound", cerr)
	}
	var o shopOrder
	if derr := ce.Decode(&o); !errors.Is(derr, ErrNotFound) || !strings.Contains(derr.Error(), `"customer"`) {
		t.Errorf("Decode(*shopOrder) = %+v, %v; want ErrNotFound naming entity \"customer\", as Current", o, derr)
	}
	var po *shopOrder
	if derr := ce.Decode(&po); !errors.Is(derr, ErrNotFound) {
		t.Errorf("Decode(**shopOrder) = %+v, %v; want ErrNotFound", po, derr)
	}
	var m map[string]any
	if derr := ce.Decode(&m); derr != nil || m["kind"] != "customer" {
		t.Errorf("Decode(*map) = %v, %v; want the item as stored", m, derr)
	}
}
