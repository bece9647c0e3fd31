package integration

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// batchEvent is an unversioned type with a range key.
type batchEvent struct {
	Stream string   `dynamo:"stream,hash"`
	Seq    int      `dynamo:"seq,range"`
	Body   string   `dynamo:"body"`
	Tags   []string `dynamo:"tags,set,omitempty"`
}

func batchEventsTable(t *testing.T) (*dynamo.Table[batchEvent], string) {
	t.Helper()
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "events", "stream", types.ScalarAttributeTypeS, "seq", types.ScalarAttributeTypeN)
	tb, err := dynamo.NewTable[batchEvent](dynamo.NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	return tb, name
}

func batchItemCount(t *testing.T, table string) int {
	t.Helper()
	out, err := dynamotest.Client(t).Scan(ctx(t), &dynamodb.ScanInput{TableName: aws.String(table), Select: types.SelectCount})
	if err != nil {
		t.Fatal(err)
	}
	return int(out.Count)
}

func batchISBN(i int) string { return fmt.Sprintf("isbn-%03d", i) }

// Batch load of 250 keys with a few missing: typed results in the order of
// the keys, the missing ones absent (BatchLoad) or flagged (BatchLoadIndexed).
func TestBatchLoad250KeysSomeMissing(t *testing.T) {
	books, name := booksTable(t, dynamotest.Client(t))
	c := ctx(t)
	missing := map[int]bool{0: true, 42: true, 100: true, 199: true, 249: true}
	var stored []Book
	for i := range 250 {
		if !missing[i] {
			stored = append(stored, Book{ISBN: batchISBN(i), Title: "T" + strconv.Itoa(i), Authors: []string{"a" + strconv.Itoa(i)}, Version: int64(i % 3)})
		}
	}
	if err := books.BatchSave(c, stored, dynamo.WithSaveBehavior(dynamo.SaveClobber)); err != nil {
		t.Fatal(err)
	}
	for i := range stored {
		stored[i].Version++ // stored versions 1 to 3
	}
	if n := batchItemCount(t, name); n != 245 {
		t.Fatalf("%d items stored, want 245", n)
	}
	want := map[string]Book{}
	for _, b := range stored {
		want[b.ISBN] = b
	}
	order := rand.New(rand.NewPCG(1, 2)).Perm(250)
	keys := make([]Book, 250)
	for i, n := range order {
		keys[i] = Book{ISBN: batchISBN(n)}
	}

	got, err := books.BatchLoad(c, keys, dynamo.ConsistentRead())
	if err != nil {
		t.Fatal(err)
	}
	var wantList []Book
	for _, k := range keys {
		if b, ok := want[k.ISBN]; ok {
			wantList = append(wantList, b)
		}
	}
	if len(got) != 245 || !reflect.DeepEqual(got, wantList) {
		t.Fatalf("BatchLoad returned %d items, want the 245 stored ones in the order of the keys", len(got))
	}

	items, found, err := books.BatchLoadIndexed(c, keys)
	if err != nil {
		t.Fatal(err)
	}
	var absent []int
	for i, k := range keys {
		if !found[i] {
			absent = append(absent, order[i])
			if !reflect.DeepEqual(items[i], Book{}) {
				t.Errorf("missing key %s has item %+v", k.ISBN, items[i])
			}
			continue
		}
		if !reflect.DeepEqual(items[i], want[k.ISBN]) {
			t.Errorf("keys[%d] %s: %+v, want %+v", i, k.ISBN, items[i], want[k.ISBN])
		}
	}
	slices.Sort(absent)
	if !slices.Equal(absent, []int{0, 42, 100, 199, 249}) {
		t.Errorf("reported missing %v, want [0 42 100 199 249]", absent)
	}
}

// DynamoDB refuses a key twice in one BatchGetItem; BatchLoad sends it once
// and returns its item at each position, also across chunk boundaries.
func TestBatchLoadDuplicateKeys(t *testing.T) {
	events, name := batchEventsTable(t)
	c := ctx(t)
	var items []batchEvent
	for i := range 120 {
		items = append(items, batchEvent{Stream: "s", Seq: i, Body: "b" + strconv.Itoa(i)})
	}
	if err := events.BatchSave(c, items); err != nil {
		t.Fatal(err)
	}

	// The fact the mapper works around.
	key := map[string]types.AttributeValue{"stream": &types.AttributeValueMemberS{Value: "s"}, "seq": &types.AttributeValueMemberN{Value: "1"}}
	_, err := dynamotest.Client(t).BatchGetItem(c, &dynamodb.BatchGetItemInput{
		RequestItems: map[string]types.KeysAndAttributes{name: {Keys: []map[string]types.AttributeValue{key, key}}},
	})
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "ValidationException" {
		t.Fatalf("BatchGetItem with a duplicate key: %v, want a ValidationException", err)
	}
	mustContain(t, err, "duplicates")

	var keys []batchEvent
	for i := range 150 { // 0..119 exist; 120..149 do not; every key twice, 100 apart
		keys = append(keys, batchEvent{Stream: "s", Seq: i % 130})
	}
	got, err := events.BatchLoad(c, keys)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int
	for _, e := range got {
		if e.Body != "b"+strconv.Itoa(e.Seq) {
			t.Errorf("item %+v", e)
		}
		seqs = append(seqs, e.Seq)
	}
	var want []int
	for _, k := range keys {
		if k.Seq < 120 {
			want = append(want, k.Seq)
		}
	}
	if !slices.Equal(seqs, want) {
		t.Errorf("loaded seqs %v\nwant %v", seqs, want)
	}
}

// A versioned BatchSave or BatchDelete is refused with a message that says
// why and what to use instead, and nothing is written.
func TestBatchWriteOfVersionedRefused(t *testing.T) {
	books, name := booksTable(t, dynamotest.Client(t))
	c := ctx(t)
	stored, err := books.Save(c, Book{ISBN: "kept", Title: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	var items []Book
	for i := range 30 {
		items = append(items, Book{ISBN: batchISBN(i), Title: "t"})
	}
	err = books.BatchSave(c, items)
	if !errors.Is(err, dynamo.ErrInvalidInput) {
		t.Fatalf("BatchSave of a versioned type: %v, want ErrInvalidInput", err)
	}
	mustContain(t, err, "BatchSave", fmt.Sprintf("table %q", name), "integration.Book is versioned (field Version)",
		"a batch write cannot check", "WriteTx with Table.TxSave", "or Save;", "pass SaveClobber")
	t.Log(err)
	stale := stored
	stale.Title = "stale"
	err = books.BatchDelete(c, []Book{stale})
	mustContain(t, err, "BatchDelete", "a batch write cannot check", "or Delete;")
	if n := batchItemCount(t, name); n != 1 {
		t.Errorf("%d items in the table, want only the one saved before", n)
	}
	if got, err := books.Load(c, Book{ISBN: "kept"}, dynamo.ConsistentRead()); err != nil || got.Title != "v1" {
		t.Errorf("kept item: %+v %v", got, err)
	}
}

// With SaveClobber a versioned BatchSave writes 60 whole items at held+1 —
// Java's CLOBBER, which can move a stored version backwards — and
// BatchDelete deletes them unconditionally.
func TestBatchSaveClobber(t *testing.T) {
	books, name := booksTable(t, dynamotest.Client(t))
	c := ctx(t)
	// One item is already at version 3; the batch holds version 1 of it.
	v := Book{ISBN: batchISBN(0), Title: "stored"}
	for range 3 {
		var err error
		if v, err = books.Save(c, v); err != nil {
			t.Fatal(err)
		}
	}
	var items []Book
	for i := range 60 {
		items = append(items, Book{ISBN: batchISBN(i), Title: "batch", Version: int64(i % 2)})
	}
	clobber := dynamo.WithSaveBehavior(dynamo.SaveClobber)
	if err := books.BatchSave(c, items, clobber); err != nil {
		t.Fatal(err)
	}
	if n := batchItemCount(t, name); n != 60 {
		t.Fatalf("%d items, want 60", n)
	}
	for i, b := range items {
		if b.Version != int64(i%2) {
			t.Fatalf("items[%d] modified: version %d", i, b.Version)
		}
	}
	keys := make([]Book, 60)
	for i := range keys {
		keys[i] = Book{ISBN: batchISBN(i)}
	}
	got, err := books.BatchLoad(c, keys, dynamo.ConsistentRead())
	if err != nil || len(got) != 60 {
		t.Fatalf("BatchLoad: %d items, %v", len(got), err)
	}
	for i, b := range got {
		if b.Title != "batch" || b.Version != int64(i%2+1) {
			t.Errorf("%s stored as %+v, want title batch, version %d", b.ISBN, b, i%2+1)
		}
	}
	if got[0].Version != 1 {
		t.Errorf("stored version 3 became %d, want 1 (held 0 + 1: batch clobber moves versions backwards, as documented)", got[0].Version)
	}
	if _, ok := raw(t, name, batchISBN(0))["ddbkit_wt"]; ok {
		t.Error("the write token of the earlier Save survived a whole-item put")
	}
	// The batch's copies are now current and save normally.
	if _, err := books.Save(c, got[5]); err != nil {
		t.Errorf("Save of a batch-loaded item: %v", err)
	}
	if err := books.BatchDelete(c, got, clobber); err != nil { // got[5] is stale now: no check
		t.Fatal(err)
	}
	if n := batchItemCount(t, name); n != 0 {
		t.Errorf("%d items left after BatchDelete", n)
	}
}

// An unversioned type needs no option: 60 items saved, loaded, deleted.
func TestBatchUnversioned(t *testing.T) {
	events, name := batchEventsTable(t)
	c := ctx(t)
	var items []batchEvent
	for i := range 60 {
		items = append(items, batchEvent{Stream: "s" + strconv.Itoa(i%4), Seq: i, Body: "b", Tags: []string{"x", "y"}})
	}
	if err := events.BatchSave(c, items); err != nil {
		t.Fatal(err)
	}
	if n := batchItemCount(t, name); n != 60 {
		t.Fatalf("%d items, want 60", n)
	}
	got, err := events.BatchLoad(c, items)
	if err != nil || !reflect.DeepEqual(got, items) {
		t.Fatalf("BatchLoad: %d items, %v; want the 60 saved", len(got), err)
	}
	// A second BatchSave replaces whole items.
	for i := range items {
		items[i].Tags = nil
		items[i].Body = "again"
	}
	if err := events.BatchSave(c, items); err != nil {
		t.Fatal(err)
	}
	got, _ = events.BatchLoad(c, items[:1])
	if len(got) != 1 || got[0].Body != "again" || got[0].Tags != nil {
		t.Errorf("after the second BatchSave: %+v", got)
	}
	if err := events.BatchDelete(c, items); err != nil {
		t.Fatal(err)
	}
	if n := batchItemCount(t, name); n != 0 {
		t.Errorf("%d items left after BatchDelete", n)
	}
	err = events.BatchSave(c, []batchEvent{items[0], items[1], items[0]})
	mustContain(t, err, "items[0] and items[2] have the same key")
	if n := batchItemCount(t, name); n != 0 {
		t.Errorf("a refused BatchSave wrote %d items", n)
	}
}
