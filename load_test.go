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
)

// Load reads the item with the key of the value it is given and returns it
// decoded: eventually consistent unless ConsistentRead is passed; a missing
// item is ErrNotFound naming the table and the key; a value whose key is
// empty is refused with ErrInvalidInput before any request.
func TestLoadReadsTheKeyAsked(t *testing.T) {
	db := (&fakeDB{}).table("Books", "ISBN", "")
	db.put("Books", map[string]types.AttributeValue{"ISBN": str("1"), "title": str("Dune"), "version": n("3")})
	books := newBooks(t, db)
	ctx := context.Background()

	got, err := books.Load(ctx, Book{ISBN: "1", Title: "ignored"})
	if err != nil || got.ISBN != "1" || got.Title != "Dune" || got.Version != 3 {
		t.Fatalf("Load = %+v, %v; want the stored item at version 3", got, err)
	}
	if gets := db.gets(); len(gets) != 1 || aws.ToBool(gets[0].ConsistentRead) || aws.ToString(gets[0].TableName) != "Books" {
		t.Fatalf("Load sent %d GetItems; want one, eventually consistent, of table Books", len(gets))
	}
	if _, err := books.Load(ctx, Book{ISBN: "1"}, ConsistentRead()); err != nil || !aws.ToBool(db.gets()[1].ConsistentRead) {
		t.Errorf("Load with ConsistentRead: %v; want a strongly consistent GetItem", err)
	}

	_, err = books.Load(ctx, Book{ISBN: "2"})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "Books") || !strings.Contains(err.Error(), `"2"`) {
		t.Errorf("Load of a missing item = %v; want ErrNotFound naming table Books and key \"2\"", err)
	}

	sent := db.count("GetItem")
	if _, err := books.Load(ctx, Book{}); !errors.Is(err, ErrInvalidInput) || db.count("GetItem") != sent {
		t.Errorf("Load of an empty key = %v after %d requests; want ErrInvalidInput and none", err, db.count("GetItem")-sent)
	}
}

// foreignItem is a versioned type whose items another client writes.
type foreignItem struct {
	PK      string `dynamo:"pk,hash"`
	Title   string `dynamo:"title"`
	N       int    `dynamo:"n"`
	Version int64  `dynamo:"v,version"`
}

// readEveryWay reads the item at key pk through every call that decodes a
// stored item of t — Load (eventually and strongly consistent), Query,
// QueryPage, Scan, BatchLoad, ReadTx, a Transact Load, Current of a stale
// Save's conflict, and the value Update hands its function — and returns
// each call's result by the call's name.
func readEveryWay(t *testing.T, tb *Table[foreignItem], pk string) (map[string]foreignItem, map[string]error) {
	t.Helper()
	ctx := context.Background()
	vals, errs := map[string]foreignItem{}, map[string]error{}
	note := func(path string, v foreignItem, err error) {
		if err != nil {
			errs[path] = err
		} else {
			vals[path] = v
		}
	}
	key := foreignItem{PK: pk}
	v, err := tb.Load(ctx, key)
	note("Load", v, err)
	v, err = tb.Load(ctx, key, ConsistentRead())
	note("Load(ConsistentRead)", v, err)
	kc := expression.Key("pk").Equal(expression.Value(pk))
	for v, err := range tb.Query(ctx, kc) {
		note("Query", v, err)
	}
	page, _, err := tb.QueryPage(ctx, kc)
	if len(page) == 1 {
		v = page[0]
	}
	note("QueryPage", v, err)
	for v, err := range tb.Scan(ctx, Filter(expression.Name("pk").Equal(expression.Value(pk)))) {
		note("Scan", v, err)
	}
	got, err := tb.BatchLoad(ctx, []foreignItem{key})
	if len(got) == 1 {
		v = got[0]
	}
	note("BatchLoad", v, err)
	g := tb.TxGet(key)
	err = tb.Mapper().ReadTx(ctx, []TxGetOp{g})
	v, _ = g.Item()
	note("ReadTx", v, err)
	err = tb.Mapper().Transact(ctx, func(tx *Tx) error {
		v, err = tb.In(tx).Load(key)
		return err
	})
	note("Transact Load", v, err)
	_, err = tb.Save(ctx, foreignItem{PK: pk, Version: 99}) // stale: carries the item
	if _, ok := asConditionError(err); !ok {
		t.Fatalf("Save at version 99 = %v; want a *ConditionError carrying the item", err)
	}
	v, err = tb.Current(err)
	note("Current", v, err)
	called := false
	_, err = tb.Update(ctx, key, func(cur foreignItem) (foreignItem, error) {
		v, called = cur, true
		return cur, ErrNoChange
	})
	if called {
		err = nil
	}
	note("Update function", v, err)
	return vals, errs
}

// putRaw stores item as another client would, with a PutItem of its own.
func putRaw(t *testing.T, c *dynamodb.Client, table string, item map[string]types.AttributeValue) {
	t.Helper()
	if _, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
		t.Fatal(err)
	}
}

// An item another client stored with an attribute of the wrong type (a
// string where T has an int) fails every read with the same kind of
// error, naming the table, the item's key and the attribute: Load,
// ReadTx, a Transact Load, Current and Update named neither the key nor
// the attribute ("cannot unmarshal string into Go value type int"), while
// Query and BatchLoad named the key only.
func TestDecodeErrorNamesTableKeyAndAttributeOnEveryRead(t *testing.T) {
	c := dynamotest.Client(t)
	tb := createdTable[foreignItem](t, c)
	putRaw(t, c, tb.Name(), map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "k1"}, "v": &types.AttributeValueMemberN{Value: "1"},
		"title": &types.AttributeValueMemberS{Value: "t"}, "n": &types.AttributeValueMemberS{Value: "seven"},
	})
	vals, errs := readEveryWay(t, tb, "k1")
	if len(vals) > 0 {
		t.Errorf("decoded %v; want every read to fail", vals)
	}
	for path, err := range errs {
		for _, want := range []string{`table "` + tb.Name() + `"`, `{pk: "k1"}`, `attribute "n"`, "cannot unmarshal string into Go value type int"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v\nwant it to name %s", path, err, want)
			}
		}
	}
	if len(errs) != 10 {
		t.Errorf("%d reads failed; want 10", len(errs))
	}
}

// An item holding both "title" and "Title" (another writer's spelling)
// reads the same through every call: the attribute named exactly as the
// field, as the reads that ask for the type's attributes by name get it.
// Reads of the whole item (Transact, Current, Update) took whichever of
// the two the decoder met last — a different value from one call to the
// next — and an Update of another field then wrote "Title"'s value over
// "title".
func TestEveryReadTakesTheAttributeNamedExactly(t *testing.T) {
	c := dynamotest.Client(t)
	tb := createdTable[foreignItem](t, c)
	putRaw(t, c, tb.Name(), map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "k1"}, "v": &types.AttributeValueMemberN{Value: "1"},
		"title": &types.AttributeValueMemberS{Value: "exact"}, "Title": &types.AttributeValueMemberS{Value: "other case"},
	})
	for range 8 {
		vals, errs := readEveryWay(t, tb, "k1")
		if len(errs) > 0 {
			t.Fatalf("reads failed: %v", errs)
		}
		for path, v := range vals {
			if v.Title != "exact" {
				t.Fatalf("%s read Title %q; want \"exact\", the attribute named exactly", path, v.Title)
			}
		}
	}
	if _, err := tb.Update(context.Background(), foreignItem{PK: "k1"}, func(v foreignItem) (foreignItem, error) {
		v.N++
		return v, nil
	}); err != nil {
		t.Fatal(err)
	}
	out, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(tb.Name()),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "k1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := out.Item["title"].(*types.AttributeValueMemberS); !ok || s.Value != "exact" {
		t.Errorf("after an Update of n, title is %v; want \"exact\" as stored", out.Item["title"])
	}
}
