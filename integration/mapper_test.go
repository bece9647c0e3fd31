package integration

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

type Book struct {
	ISBN    string   `dynamo:"ISBN,hash"`
	Title   string   `dynamo:"title"`
	Authors []string `dynamo:"authors,set,omitempty"`
	Note    *string  `dynamo:"note"`
	Version int64    `dynamo:"version,version"`
}

func booksTable(t *testing.T, c dynamo.Client) (*dynamo.Table[Book], string) {
	t.Helper()
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "books", "ISBN", types.ScalarAttributeTypeS, "", "")
	tb, err := dynamo.NewTable[Book](dynamo.NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	return tb, name
}

func raw(t *testing.T, table, isbn string) map[string]types.AttributeValue {
	t.Helper()
	out, err := dynamotest.Client(t).GetItem(ctx(t), &dynamodb.GetItemInput{
		TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"ISBN": &types.AttributeValueMemberS{Value: isbn}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

func storedVersion(t *testing.T, table, isbn string) string {
	t.Helper()
	v, ok := raw(t, table, isbn)["version"].(*types.AttributeValueMemberN)
	if !ok {
		return "<none>"
	}
	return v.Value
}

// Two clients load version 2; the first saves (3); the second's save is a
// conflict that names table, key and versions and carries version 3.
func TestTwoWritersConflict(t *testing.T) {
	books, name := booksTable(t, dynamotest.Client(t))
	other, _ := dynamo.NewTable[Book](dynamo.NewMapper(dynamotest.Client(t)), name)
	c := ctx(t)
	b, err := books.Save(c, Book{ISBN: "1", Title: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	b.Title = "v2"
	if _, err = books.Save(c, b); err != nil {
		t.Fatal(err)
	}
	first, err := books.Load(c, Book{ISBN: "1"}, dynamo.ConsistentRead())
	if err != nil {
		t.Fatal(err)
	}
	second, err := other.Load(c, Book{ISBN: "1"}, dynamo.ConsistentRead())
	if err != nil || first.Version != 2 || second.Version != 2 {
		t.Fatalf("loads: %+v %+v %v", first, second, err)
	}
	first.Title = "first"
	saved, err := books.Save(c, first)
	if err != nil || saved.Version != 3 {
		t.Fatalf("first save: %+v %v", saved, err)
	}
	second.Title = "second"
	_, err = other.Save(c, second)
	if !errors.Is(err, dynamo.ErrVersionConflict) {
		t.Fatalf("second save: %v, want a version conflict", err)
	}
	mustContain(t, err, "dynamo: version conflict", fmt.Sprintf("table %q", name), `key {ISBN: "1"}`, "held version 2", "found 3")
	cur, err2 := other.Current(err)
	if err2 != nil || cur.Version != 3 || cur.Title != "first" {
		t.Errorf("Current = %+v, %v; want the first writer's version 3", cur, err2)
	}
	if storedVersion(t, name, "1") != "3" {
		t.Errorf("stored version %s, want 3", storedVersion(t, name, "1"))
	}
}

func TestSaveVersionOfMissingItemConflicts(t *testing.T) {
	books, name := booksTable(t, dynamotest.Client(t))
	_, err := books.Save(ctx(t), Book{ISBN: "404", Title: "ghost", Version: 5})
	if !errors.Is(err, dynamo.ErrVersionConflict) {
		t.Fatalf("err = %v", err)
	}
	mustContain(t, err, "held version 5", "item does not exist")
	if _, cerr := books.Current(err); !errors.Is(cerr, dynamo.ErrNotFound) {
		t.Errorf("Current: %v, want ErrNotFound", cerr)
	}
	if raw(t, name, "404") != nil {
		t.Error("the failed save created the item")
	}
}

func TestSaveUnsavedOverExistingConflicts(t *testing.T) {
	books, _ := booksTable(t, dynamotest.Client(t))
	if _, err := books.Save(ctx(t), Book{ISBN: "1", Title: "a"}); err != nil {
		t.Fatal(err)
	}
	_, err := books.Save(ctx(t), Book{ISBN: "1", Title: "b"}) // same unsaved input again
	if !errors.Is(err, dynamo.ErrVersionConflict) {
		t.Fatalf("err = %v", err)
	}
	mustContain(t, err, "held version 0 (unsaved)", "found 1")
}

// SaveClobber writes without a version check, incrementing in DynamoDB: the
// stored version never moves backwards and older holders conflict.
func TestClobberIncrements(t *testing.T) {
	books, name := booksTable(t, dynamotest.Client(t))
	c := ctx(t)
	v1, _ := books.Save(c, Book{ISBN: "1", Title: "a"})
	v2, _ := books.Save(c, v1)
	v3, err := books.Save(c, v2)
	if err != nil || v3.Version != 3 {
		t.Fatalf("setup: %+v %v", v3, err)
	}
	stale := v1 // holds version 1
	stale.Title = "clobbered"
	got, err := books.Save(c, stale, dynamo.WithSaveBehavior(dynamo.SaveClobber))
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 4 || got.Title != "clobbered" || storedVersion(t, name, "1") != "4" {
		t.Errorf("clobber returned %+v, stored version %s; want 4 (Java's CLOBBER would write 2)", got, storedVersion(t, name, "1"))
	}
	if _, err := books.Save(c, v3); !errors.Is(err, dynamo.ErrVersionConflict) {
		t.Errorf("holder of version 3 after clobber: %v, want a conflict", err)
	}
	// Clobber of a missing item creates it at version 1.
	fresh, err := books.Save(c, Book{ISBN: "2", Version: 9}, dynamo.WithSaveBehavior(dynamo.SaveClobber))
	if err != nil || fresh.Version != 1 {
		t.Errorf("clobber of a missing item: %+v %v", fresh, err)
	}
}

// The caller's value is never modified: not after Save, Delete or a failed Save.
func TestInputUntouched(t *testing.T) {
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "books", "ISBN", types.ScalarAttributeTypeS, "", "")
	books, err := dynamo.NewTable[*Book](dynamo.NewMapper(dynamotest.Client(t)), name)
	if err != nil {
		t.Fatal(err)
	}
	c := ctx(t)
	note := "n"
	in := &Book{ISBN: "1", Title: "t", Authors: []string{"x", "y"}, Note: &note}
	snapshot := *in
	snapshot.Authors = slices.Clone(in.Authors)
	check := func(step string) {
		t.Helper()
		if !reflect.DeepEqual(*in, snapshot) || *in.Note != "n" {
			t.Fatalf("after %s the input is %+v, want %+v", step, *in, snapshot)
		}
	}
	saved, err := books.Save(c, in)
	if err != nil || saved == in || saved.Version != 1 {
		t.Fatalf("Save: %+v %v", saved, err)
	}
	check("Save")
	if _, err := books.Save(c, in); !errors.Is(err, dynamo.ErrVersionConflict) {
		t.Fatalf("second Save of the same input: %v", err)
	}
	check("a failed Save")
	opts := []dynamo.WriteOption{dynamo.If(expression.Name("title").Equal(expression.Value("t")))}
	optsCopy := slices.Clone(opts)
	if _, err := books.Save(c, saved, opts...); err != nil {
		t.Fatal(err)
	}
	if len(opts) != len(optsCopy) {
		t.Error("options slice modified")
	}
	if err := books.Delete(c, in); !errors.Is(err, dynamo.ErrVersionConflict) {
		t.Fatalf("Delete with the unsaved input: %v", err)
	}
	check("Delete")
}

func TestSaveBehaviors(t *testing.T) {
	books, name := booksTable(t, dynamotest.Client(t))
	c := ctx(t)
	// An attribute the struct does not model, written by someone else.
	addExtra := func() {
		_, err := dynamotest.Client(t).UpdateItem(c, &dynamodb.UpdateItemInput{
			TableName: aws.String(name), Key: map[string]types.AttributeValue{"ISBN": &types.AttributeValueMemberS{Value: "1"}},
			UpdateExpression:          aws.String("SET extra = :e"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":e": &types.AttributeValueMemberS{Value: "kept?"}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	note := "note"
	v, err := books.Save(c, Book{ISBN: "1", Title: "a", Authors: []string{"x"}, Note: &note})
	if err != nil {
		t.Fatal(err)
	}
	addExtra()

	// SaveUpdate: nil attributes removed, unmodeled kept.
	v.Note = nil
	if v, err = books.Save(c, v); err != nil {
		t.Fatal(err)
	}
	item := raw(t, name, "1")
	if item["note"] != nil || item["extra"] == nil {
		t.Errorf("SaveUpdate: note %v extra %v; want note removed, extra kept", item["note"], item["extra"])
	}

	// SaveUpdateSkipNulls: nil attributes left alone; returns the stored item.
	if _, err := dynamotest.Client(t).UpdateItem(c, &dynamodb.UpdateItemInput{
		TableName: aws.String(name), Key: map[string]types.AttributeValue{"ISBN": &types.AttributeValueMemberS{Value: "1"}},
		UpdateExpression:          aws.String("SET note = :n"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberS{Value: "server"}},
	}); err != nil {
		t.Fatal(err)
	}
	v.Title = "b"
	v, err = books.Save(c, v, dynamo.WithSaveBehavior(dynamo.SaveUpdateSkipNulls))
	if err != nil {
		t.Fatal(err)
	}
	if v.Note == nil || *v.Note != "server" || v.Title != "b" || v.Version != 3 {
		t.Errorf("SaveUpdateSkipNulls returned %+v, want note kept from the server", v)
	}

	// SaveAppendSet: sets are added to.
	v.Authors = []string{"y"}
	v, err = books.Save(c, v, dynamo.WithSaveBehavior(dynamo.SaveAppendSet))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(v.Authors)
	if !slices.Equal(v.Authors, []string{"x", "y"}) || v.Version != 4 {
		t.Errorf("SaveAppendSet returned %+v, want authors x,y", v)
	}

	// SavePut: the whole item replaced, version still checked.
	v.Note = nil
	v, err = books.Save(c, v, dynamo.WithSaveBehavior(dynamo.SavePut))
	if err != nil || v.Version != 5 {
		t.Fatalf("SavePut: %+v %v", v, err)
	}
	item = raw(t, name, "1")
	if item["extra"] != nil {
		t.Errorf("SavePut kept the unmodeled attribute: %v", item)
	}
	stale := v
	stale.Version = 4
	if _, err := books.Save(c, stale, dynamo.WithSaveBehavior(dynamo.SavePut)); !errors.Is(err, dynamo.ErrVersionConflict) {
		t.Errorf("stale SavePut: %v", err)
	}
}

func TestIfConditions(t *testing.T) {
	books, _ := booksTable(t, dynamotest.Client(t))
	c := ctx(t)
	v, _ := books.Save(c, Book{ISBN: "1", Title: "a"})
	titleIs := func(s string) dynamo.WriteOption {
		return dynamo.If(expression.Name("title").Equal(expression.Value(s)))
	}
	v.Title = "b"
	_, err := books.Save(c, v, titleIs("zzz"))
	if !errors.Is(err, dynamo.ErrConditionFailed) || errors.Is(err, dynamo.ErrVersionConflict) {
		t.Fatalf("failed If with a matching version: %v, want ErrConditionFailed only", err)
	}
	cur, _ := books.Current(err)
	if cur.Title != "a" {
		t.Errorf("Current = %+v", cur)
	}
	if v, err = books.Save(c, v, titleIs("a"), dynamo.If(expression.Name("version").Equal(expression.Value(1)))); err != nil {
		t.Fatalf("two passing Ifs: %v", err)
	}
	stale := v
	stale.Version = 1
	if _, err := books.Save(c, stale, titleIs("b")); !errors.Is(err, dynamo.ErrVersionConflict) {
		t.Errorf("stale version with a passing If: %v, want a conflict", err)
	}
	if err := books.Delete(c, v, titleIs("nope")); !errors.Is(err, dynamo.ErrConditionFailed) {
		t.Errorf("Delete with a failing If: %v", err)
	}
}

func TestLoadAndDelete(t *testing.T) {
	books, name := booksTable(t, dynamotest.Client(t))
	c := ctx(t)
	_, err := books.Load(c, Book{ISBN: "nope"})
	if !errors.Is(err, dynamo.ErrNotFound) {
		t.Fatalf("Load of a missing item: %v", err)
	}
	mustContain(t, err, name, `{ISBN: "nope"}`)
	v1, _ := books.Save(c, Book{ISBN: "1", Title: "a", Authors: []string{"b", "a"}})
	got, err := books.Load(c, Book{ISBN: "1"}, dynamo.ConsistentRead())
	if err != nil || got.Title != "a" || got.Version != 1 || len(got.Authors) != 2 {
		t.Fatalf("Load = %+v %v", got, err)
	}
	if _, ok := raw(t, name, "1")["authors"].(*types.AttributeValueMemberSS); !ok {
		t.Error("`set` field not stored as a string set")
	}
	v2, _ := books.Save(c, v1)
	if err := books.Delete(c, v1); !errors.Is(err, dynamo.ErrVersionConflict) {
		t.Errorf("stale Delete: %v", err)
	}
	if err := books.Delete(c, v2); err != nil {
		t.Errorf("Delete: %v", err)
	}
	if raw(t, name, "1") != nil {
		t.Error("item still there")
	}
	v, _ := books.Save(c, Book{ISBN: "2"})
	v.Version = 77
	if err := books.Delete(c, v, dynamo.WithSaveBehavior(dynamo.SaveClobber)); err != nil || raw(t, name, "2") != nil {
		t.Errorf("clobber Delete: %v", err)
	}
}

// A write DynamoDB applied whose response was lost, retried by the SDK,
// returns success — for each save behaviour and for Delete.
func TestLostResponseIsNotAConflict(t *testing.T) {
	for _, b := range []dynamo.SaveBehavior{dynamo.SaveUpdate, dynamo.SaveUpdateSkipNulls, dynamo.SavePut, dynamo.SaveClobber, dynamo.SaveAppendSet} {
		t.Run(b.String(), func(t *testing.T) {
			op := "UpdateItem"
			if b == dynamo.SavePut {
				op = "PutItem"
			}
			client, drop := dropClient(t, op)
			books, name := booksTable(t, client)
			c := ctx(t)
			v, err := books.Save(c, Book{ISBN: "1", Title: "a", Authors: []string{"x"}})
			if err != nil {
				t.Fatal(err)
			}
			v.Title = "b"
			drop.Arm(1)
			before := drop.Sent()
			saved, err := books.Save(c, v, dynamo.WithSaveBehavior(b))
			// One write: its lost answer is settled by a read that finds
			// the write's token, never by sending it again.
			if drop.Dropped() != 1 || drop.Sent()-before != 1 {
				t.Fatalf("transport dropped %d responses over %d writes; want exactly 1 drop and no resend", drop.Dropped(), drop.Sent()-before)
			}
			if err != nil {
				t.Fatalf("Save after a lost response: %v, want success", err)
			}
			if saved.Version != 2 || saved.Title != "b" || storedVersion(t, name, "1") != "2" {
				t.Errorf("saved %+v, stored version %s; want 2 written once", saved, storedVersion(t, name, "1"))
			}
		})
	}
	t.Run("Delete", func(t *testing.T) {
		client, drop := dropClient(t, "DeleteItem")
		books, name := booksTable(t, client)
		v, err := books.Save(ctx(t), Book{ISBN: "1"})
		if err != nil {
			t.Fatal(err)
		}
		drop.Arm(1)
		// Gone afterwards, but "gone" could be someone else's delete of an
		// item at another version: ErrUnknownOutcome, never a resend.
		if err := books.Delete(ctx(t), v); !errors.Is(err, dynamo.ErrUnknownOutcome) || drop.Dropped() != 1 || drop.Sent() != 1 {
			t.Fatalf("Delete after a lost response: %v (%d dropped of %d)", err, drop.Dropped(), drop.Sent())
		}
		if raw(t, name, "1") != nil {
			t.Error("item not deleted")
		}
	})
	t.Run("tokens off: unknown outcome, never a resend", func(t *testing.T) {
		client, drop := dropClient(t, "UpdateItem")
		name := dynamotest.KeyTable(t, dynamotest.Client(t), "books", "ISBN", types.ScalarAttributeTypeS, "", "")
		books, _ := dynamo.NewTable[Book](dynamo.NewMapper(client, dynamo.WithWriteTokenAttribute("")), name)
		v, _ := books.Save(ctx(t), Book{ISBN: "1"})
		drop.Arm(1)
		if _, err := books.Save(ctx(t), v); !errors.Is(err, dynamo.ErrUnknownOutcome) || !errors.Is(err, dynamo.ErrVersionConflict) {
			t.Fatalf("without tokens: %v, want ErrUnknownOutcome (nothing tells the write applied; tokens do)", err)
		}
		if raw(t, name, "1")[dynamo.DefaultWriteTokenAttribute] != nil {
			t.Error("token stored although turned off")
		}
	})
}

type Counter struct {
	ID      string `dynamo:"id,hash"`
	N       int    `dynamo:"n"`
	Version int64  `dynamo:"v,version"`
}

// 16 goroutines each Update one counter 200 times through one Table: no
// update lost, no error.
func TestConcurrentUpdates(t *testing.T) {
	testConcurrentUpdates(t, 1, 16, 200)
}

// The same across 4 "processes" (a Mapper and Table each) of 4 goroutines:
// here the version check, not the Table's queue, keeps the updates apart.
func TestConcurrentUpdatesAcrossProcesses(t *testing.T) {
	testConcurrentUpdates(t, 4, 4, 50)
}

func testConcurrentUpdates(t *testing.T, processes, workers, each int) {
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "counter", "id", types.ScalarAttributeTypeS, "", "")
	tables := make([]*dynamo.Table[Counter], processes)
	for i := range tables {
		var err error
		if tables[i], err = dynamo.NewTable[Counter](dynamo.NewMapper(dynamotest.Client(t)), name); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, processes*workers)
	for i := range processes * workers {
		counters := tables[i%processes]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				_, err := counters.Update(ctx(t), Counter{ID: "c"}, func(c Counter) (Counter, error) {
					c.N++
					return c, nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	total := processes * workers * each
	got, err := tables[0].Load(ctx(t), Counter{ID: "c"}, dynamo.ConsistentRead())
	if err != nil || got.N != total || got.Version != int64(total) {
		t.Fatalf("counter = %+v %v, want n = version = %d", got, err, total)
	}
}
