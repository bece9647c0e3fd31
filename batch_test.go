package dynamo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// batchDB is the fake DynamoDB of the batch tests: table Books with key
// attributes keys (hash, then range), which refuses what DynamoDB refuses
// (too many keys or writes in a request, a key twice in one request) so
// that the tests see the requests the mapper sends are valid.
func batchDB(keys ...string) *fakeDB {
	keys = append(keys, "")
	return (&fakeDB{}).table("Books", keys[0], keys[1])
}

// batchEvent is an unversioned type with a range key.
type batchEvent struct {
	Stream string `dynamo:"stream,hash"`
	Seq    int64  `dynamo:"seq,range"`
	Body   string `dynamo:"body"`
}

func batchISBN(i int) string { return fmt.Sprintf("isbn-%03d", i) }

// Batch load of 250 keys with a few missing: three requests of at most 100
// distinct keys, results typed and in the order of the keys, missing keys
// absent (BatchLoad) or flagged (BatchLoadIndexed).
func TestBatchLoad250KeysSomeMissing(t *testing.T) {
	c := batchDB("ISBN")
	missing := map[int]bool{3: true, 99: true, 100: true, 171: true, 249: true}
	for i := range 250 {
		if !missing[i] {
			c.put("Books", map[string]types.AttributeValue{"ISBN": str(batchISBN(i)), "title": str("T" + strconv.Itoa(i)), "version": n("7")})
		}
	}
	books := newBooks(t, c)
	keys := make([]Book, 250)
	for i := range keys {
		keys[i] = Book{ISBN: batchISBN(249 - i), Title: "ignored"} // reverse order
	}
	before := slices.Clone(keys)
	got, err := books.BatchLoad(context.Background(), keys)
	if err != nil {
		t.Fatal(err)
	}
	var want []Book
	for _, k := range keys {
		if i, _ := strconv.Atoi(strings.TrimPrefix(k.ISBN, "isbn-")); !missing[i] {
			want = append(want, Book{ISBN: k.ISBN, Title: "T" + strconv.Itoa(i), Version: 7})
		}
	}
	if len(got) != 245 || !reflect.DeepEqual(got, want) {
		t.Errorf("BatchLoad returned %d items, want 245 in the order of the keys; first %+v", len(got), got[:2])
	}
	if !reflect.DeepEqual(keys, before) {
		t.Error("keys modified")
	}
	var sizes []int
	for _, in := range c.batchGets() {
		ka := in.RequestItems["Books"]
		sizes = append(sizes, len(ka.Keys))
		if ka.ConsistentRead != nil || len(ka.Keys[0]) != 1 {
			t.Errorf("request: ConsistentRead %v, key %v", ka.ConsistentRead, ka.Keys[0])
		}
	}
	if !slices.Equal(sizes, []int{100, 100, 50}) {
		t.Errorf("request sizes %v, want [100 100 50]", sizes)
	}

	items, found, err := books.BatchLoadIndexed(context.Background(), keys, ConsistentRead())
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 250 || len(found) != 250 {
		t.Fatalf("BatchLoadIndexed: %d items, %d flags", len(items), len(found))
	}
	for i, k := range keys {
		n, _ := strconv.Atoi(strings.TrimPrefix(k.ISBN, "isbn-"))
		switch {
		case missing[n] && (found[i] || !reflect.DeepEqual(items[i], Book{})):
			t.Errorf("keys[%d] %s is missing, got found=%v %+v", i, k.ISBN, found[i], items[i])
		case !missing[n] && (!found[i] || items[i].ISBN != k.ISBN || items[i].Version != 7):
			t.Errorf("keys[%d] %s: found=%v %+v", i, k.ISBN, found[i], items[i])
		}
	}
	if ka := c.batchGets()[len(c.batchGets())-1].RequestItems["Books"]; !aws.ToBool(ka.ConsistentRead) {
		t.Error("ConsistentRead not sent")
	}
}

// A key given twice is sent once (DynamoDB refuses duplicates in a request)
// and its item returned at each position, as separate values.
func TestBatchLoadDuplicateKeys(t *testing.T) {
	c := batchDB("stream", "seq")
	c.put("Books", map[string]types.AttributeValue{"stream": str("s"), "seq": n("1"), "body": str("one")})
	c.put("Books", map[string]types.AttributeValue{"stream": str("s"), "seq": n("2"), "body": str("two")})
	events := NewTableMust[*batchEvent](t, NewMapper(c))
	keys := []*batchEvent{{Stream: "s", Seq: 2}, {Stream: "s", Seq: 1}, {Stream: "s", Seq: 2}, {Stream: "s", Seq: 3}}
	got, err := events.BatchLoad(context.Background(), keys)
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, e := range got {
		bodies = append(bodies, e.Body)
	}
	if !slices.Equal(bodies, []string{"two", "one", "two"}) {
		t.Errorf("bodies %v, want [two one two]", bodies)
	}
	if got[0] == got[2] {
		t.Error("the item of a repeated key is shared between positions")
	}
	if len(c.batchGets()) != 1 || len(c.batchGets()[0].RequestItems[events.Name()].Keys) != 3 {
		t.Errorf("sent %d requests; first with %d keys, want 1 with 3", len(c.batchGets()), len(c.batchGets()[0].RequestItems[events.Name()].Keys))
	}
	items, found, err := events.BatchLoadIndexed(context.Background(), keys)
	if err != nil || !slices.Equal(found, []bool{true, true, true, false}) || items[3] != nil || items[0] == items[2] {
		t.Errorf("BatchLoadIndexed: found %v, items %v, %v", found, items, err)
	}
}

// Unprocessed keys are sent again, only they, until none are left.
func TestBatchLoadRetriesUnprocessedKeys(t *testing.T) {
	c := batchDB("ISBN")
	for i := range 10 {
		c.put("Books", map[string]types.AttributeValue{"ISBN": str(batchISBN(i)), "version": n("1")})
	}
	c.unprocessedGet = func(call int, keys []map[string]types.AttributeValue) []map[string]types.AttributeValue {
		if call <= 2 {
			return keys[len(keys)/2:] // half left over, twice
		}
		return nil
	}
	books := newBooks(t, c)
	var keys []Book
	for i := range 10 {
		keys = append(keys, Book{ISBN: batchISBN(i)})
	}
	got, err := books.BatchLoad(context.Background(), keys, ConsistentRead())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 {
		t.Fatalf("got %d items, want 10", len(got))
	}
	for i, b := range got {
		if b.ISBN != batchISBN(i) {
			t.Errorf("got[%d] = %s, want %s", i, b.ISBN, batchISBN(i))
		}
	}
	var sizes []int
	for _, in := range c.batchGets() {
		sizes = append(sizes, len(in.RequestItems["Books"].Keys))
		if !aws.ToBool(in.RequestItems["Books"].ConsistentRead) {
			t.Error("a retry dropped ConsistentRead")
		}
	}
	if !slices.Equal(sizes, []int{10, 5, 3}) {
		t.Errorf("request sizes %v, want [10 5 3]", sizes)
	}
}

// Retries stop when ctx is done, and after the policy's attempts.
func TestBatchLoadRetriesStop(t *testing.T) {
	c := batchDB("ISBN")
	c.put("Books", map[string]types.AttributeValue{"ISBN": str("a"), "version": n("1")})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.unprocessedGet = func(call int, keys []map[string]types.AttributeValue) []map[string]types.AttributeValue {
		if call == 2 {
			cancel()
		}
		return keys // never any progress
	}
	books := newBooks(t, c)
	_, err := books.BatchLoad(ctx, []Book{{ISBN: "a"}, {ISBN: "b"}})
	if !errors.Is(err, context.Canceled) || len(c.batchGets()) != 2 {
		t.Fatalf("err = %v after %d requests; want context.Canceled after 2", err, len(c.batchGets()))
	}
	if !strings.Contains(err.Error(), `BatchLoad from table "Books"`) {
		t.Errorf("error %q does not name the call and table", err)
	}

	c.forget()
	_, err = books.batchGet(context.Background(), "BatchLoad", []Book{{ISBN: "a"}}, readOptions{}, RetryPolicy{MaxAttempts: 3})
	if !errors.Is(err, errUnprocessed) || len(c.batchGets()) != 3 || !strings.Contains(err.Error(), "1 key still unprocessed after 3 BatchGetItem requests") {
		t.Errorf("err = %v after %d requests; want unprocessed after 3", err, len(c.batchGets()))
	}
}

func TestBatchLoadRefusesBadKeys(t *testing.T) {
	c := batchDB("ISBN")
	books := newBooks(t, c)
	ptrs := NewTableMust[*Book](t, NewMapper(c))
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"unset key", func() error { _, err := books.BatchLoad(ctx, []Book{{ISBN: "a"}, {}}); return err }, "keys[1]"},
		{"nil key", func() error { _, err := ptrs.BatchLoad(ctx, []*Book{{ISBN: "a"}, nil}); return err }, "keys[1] is a nil *dynamo.Book"},
		{"indexed", func() error { _, _, err := books.BatchLoadIndexed(ctx, []Book{{}}); return err }, "BatchLoadIndexed keys[0]"},
	} {
		err := tc.call()
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrInvalidInput mentioning %q", tc.name, err, tc.want)
		}
	}
	if len(c.batchGets()) != 0 {
		t.Errorf("%d requests sent for bad input", len(c.batchGets()))
	}
	got, err := books.BatchLoad(ctx, nil)
	if err != nil || len(got) != 0 || len(c.batchGets()) != 0 {
		t.Errorf("BatchLoad of no keys: %v %v, %d requests", got, err, len(c.batchGets()))
	}
}

// Versioned batch writes are refused, before anything is sent, with a
// message that says why and what to use instead — unless the caller asks
// for SaveClobber.
func TestBatchWriteRefusesVersioned(t *testing.T) {
	c := batchDB("ISBN")
	books := newBooks(t, c)
	ctx := context.Background()
	items := []Book{{ISBN: "a", Version: 1}, {ISBN: "b"}}
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"BatchSave", func() error { return books.BatchSave(ctx, items) }},
		{"BatchSave with a retry policy", func() error { return books.BatchSave(ctx, items, WithRetry(RetryPolicy{MaxAttempts: 2})) }},
		{"BatchDelete", func() error { return books.BatchDelete(ctx, items) }},
		{"BatchSave empty", func() error { return books.BatchSave(ctx, nil) }},
	} {
		err := tc.call()
		if !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("%s: err = %v, want ErrInvalidInput", tc.name, err)
		}
		for _, part := range []string{`table "Books"`, "dynamo.Book is versioned (field Version)", "a batch write cannot check",
			"WriteTx with Table.Tx", "pass SaveClobber"} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("%s: error %q does not mention %q", tc.name, err, part)
			}
		}
	}
	if len(c.batchWrites()) != 0 {
		t.Fatalf("%d requests sent", len(c.batchWrites()))
	}
}

// BatchSave with SaveClobber writes each item whole with version held+1, in
// requests of 25, without modifying the caller's items.
func TestBatchSaveClobber(t *testing.T) {
	c := batchDB("ISBN")
	books := NewTableMust[*Book](t, NewMapper(c))
	var items []*Book
	for i := range 60 {
		items = append(items, &Book{ISBN: batchISBN(i), Title: "t", Version: int64(i % 3)})
	}
	before := make([]Book, len(items))
	for i, b := range items {
		before[i] = *b
	}
	if err := books.BatchSave(context.Background(), items, WithSaveBehavior(SaveClobber)); err != nil {
		t.Fatal(err)
	}
	for i, b := range items {
		if !reflect.DeepEqual(*b, before[i]) {
			t.Fatalf("items[%d] modified: %+v", i, *b)
		}
	}
	var sizes []int
	for _, in := range c.batchWrites() {
		sizes = append(sizes, len(in.RequestItems["Books"]))
	}
	if !slices.Equal(sizes, []int{25, 25, 10}) {
		t.Errorf("request sizes %v, want [25 25 10]", sizes)
	}
	if len(c.items("Books")) != 60 {
		t.Fatalf("%d items stored, want 60", len(c.items("Books")))
	}
	for i := range 60 {
		it := c.item("Books", map[string]types.AttributeValue{"ISBN": str(batchISBN(i))})
		if got, want := it["version"].(*types.AttributeValueMemberN).Value, strconv.Itoa(i%3+1); got != want {
			t.Errorf("%s stored with version %s, want %s", batchISBN(i), got, want)
		}
		if _, tok := it[DefaultWriteTokenAttribute]; tok || len(it) != 4 { // ISBN, title, note (NULL), version
			t.Errorf("%s stored as %v", batchISBN(i), it)
		}
	}
	// SaveClobber deletes versioned items without a check.
	if err := books.BatchDelete(context.Background(), items[:30], WithSaveBehavior(SaveClobber)); err != nil {
		t.Fatal(err)
	}
	if len(c.items("Books")) != 30 {
		t.Errorf("%d items left after deleting 30 of 60", len(c.items("Books")))
	}
	last := c.batchWrites()[len(c.batchWrites())-1].RequestItems["Books"][0]
	if last.DeleteRequest == nil || len(last.DeleteRequest.Key) != 1 {
		t.Errorf("delete request %+v, want a key alone", last)
	}
}

// Unversioned types need no option; SaveUpdate, SavePut and SaveClobber all
// put whole items.
func TestBatchSaveUnversioned(t *testing.T) {
	c := batchDB("stream", "seq")
	events := NewTableMust[batchEvent](t, NewMapper(c))
	var items []batchEvent
	for i := range 30 {
		items = append(items, batchEvent{Stream: "s", Seq: int64(i), Body: "b"})
	}
	ctx := context.Background()
	for _, opts := range [][]BatchWriteOption{nil, {Clobber()}} {
		if err := events.BatchSave(ctx, items, opts...); err != nil {
			t.Fatalf("%v: %v", opts, err)
		}
	}
	if len(c.items("Books")) != 30 || len(c.batchWrites()) != 4 {
		t.Fatalf("%d items stored in %d requests", len(c.items("Books")), len(c.batchWrites()))
	}
	if err := events.BatchDelete(ctx, items); err != nil {
		t.Fatal(err)
	}
	if len(c.items("Books")) != 0 {
		t.Errorf("%d items left after BatchDelete", len(c.items("Books")))
	}
}

func TestBatchWriteRefusesBadInput(t *testing.T) {
	c := batchDB("stream", "seq")
	events := NewTableMust[batchEvent](t, NewMapper(c))
	ptrs := NewTableMust[*batchEvent](t, NewMapper(c))
	ctx := context.Background()
	ok := []batchEvent{{Stream: "s", Seq: 1}, {Stream: "s", Seq: 2}}
	big := batchEvent{Stream: "s", Seq: 3, Body: strings.Repeat("x", 401*1024)}
	for _, tc := range []struct {
		name string
		err  error
		want []string
	}{
		{"negative retry", events.BatchSave(ctx, ok, WithRetry(RetryPolicy{MaxAttempts: -1})), []string{"BatchSave option WithRetry", "negative", "use 0 for the default"}},
		{"backoff max below base", events.BatchDelete(ctx, ok, WithRetry(RetryPolicy{BackoffBase: 2 * time.Second, BackoffMax: time.Second})), []string{"BatchDelete option WithRetry", "BackoffMax 1s is below BackoffBase 2s"}},
		{"unset key", events.BatchSave(ctx, append(ok, batchEvent{Seq: 9})), []string{"hash key stream", "is an empty string", "BatchSave items[2]"}},
		{"unset key on delete", events.BatchDelete(ctx, []batchEvent{{Seq: 9}}), []string{"hash key stream", "BatchDelete items[0]"}},
		{"nil item", ptrs.BatchSave(ctx, []*batchEvent{{Stream: "s", Seq: 1}, nil}), []string{"items[1] is a nil *dynamo.batchEvent"}},
		{"nil item on delete", ptrs.BatchDelete(ctx, []*batchEvent{nil}), []string{"items[0] is a nil"}},
		{"too large", events.BatchSave(ctx, append(ok, big)), []string{"items[2]", `{seq: 3, stream: "s"}`, "over DynamoDB's 400 KB limit"}},
		{"duplicate key", events.BatchSave(ctx, append(ok, ok[0])), []string{"items[0] and items[2] have the same key {seq: 1, stream: \"s\"}", "pass each key once"}},
		{"duplicate key on delete", events.BatchDelete(ctx, append(ok, ok[1])), []string{"BatchDelete", "items[1] and items[2]"}},
	} {
		if !errors.Is(tc.err, ErrInvalidInput) {
			t.Errorf("%s: err = %v, want ErrInvalidInput", tc.name, tc.err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(tc.err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", tc.name, tc.err, w)
			}
		}
	}
	if len(c.batchWrites()) != 0 {
		t.Errorf("%d requests sent for bad input", len(c.batchWrites()))
	}
}

// Unprocessed items are sent again, only they, with the requests the mapper
// built; the error after giving up says which items were written.
func TestBatchWriteRetriesUnprocessedItems(t *testing.T) {
	c := batchDB("stream", "seq")
	events := NewTableMust[batchEvent](t, NewMapper(c))
	var items []batchEvent
	for i := range 30 {
		items = append(items, batchEvent{Stream: "s", Seq: int64(i)})
	}
	c.unprocessedWrite = func(call int, reqs []types.WriteRequest) []types.WriteRequest {
		if call == 1 || call == 2 {
			return reqs[:len(reqs)/2+1] // most of the first chunk, twice
		}
		return nil
	}
	if err := events.BatchSave(context.Background(), items); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, in := range c.batchWrites() {
		sizes = append(sizes, len(in.RequestItems[events.Name()]))
	}
	if !slices.Equal(sizes, []int{25, 13, 7, 5}) || len(c.items("Books")) != 30 {
		t.Errorf("request sizes %v, %d stored; want [25 13 7 5], 30", sizes, len(c.items("Books")))
	}

	// Never any progress on the second chunk: give up after 3 attempts.
	c = batchDB("stream", "seq")
	events = NewTableMust[batchEvent](t, NewMapper(c))
	c.unprocessedWrite = func(call int, reqs []types.WriteRequest) []types.WriteRequest {
		if call == 1 {
			return reqs[20:] // 20 of the first 25 written; the rest never
		}
		return reqs
	}
	err := events.BatchSave(context.Background(), items, WithRetry(RetryPolicy{MaxAttempts: 3, BackoffBase: time.Nanosecond, BackoffMax: time.Nanosecond}))
	var be *BatchWriteError
	if !errors.As(err, &be) || !errors.Is(err, errUnprocessed) {
		t.Fatalf("err = %v, want a *BatchWriteError for unprocessed items", err)
	}
	wantUnwritten := []int{20, 21, 22, 23, 24, 25, 26, 27, 28, 29}
	if be.Written != 20 || !slices.Equal(be.Unwritten, wantUnwritten) || len(c.batchWrites()) != 3 || len(c.items("Books")) != 20 {
		t.Errorf("Written %d, Unwritten %v after %d requests, %d stored; want 20, %v, 3, 20", be.Written, be.Unwritten, len(c.batchWrites()), len(c.items("Books")), wantUnwritten)
	}
	if len(be.UnwrittenKeys) != 10 || formatKey(be.UnwrittenKeys[0]) != `{seq: 20, stream: "s"}` {
		t.Errorf("UnwrittenKeys %v", be.UnwrittenKeys)
	}
	for _, part := range []string{`BatchSave to table "Books"`, "20 of 30 items written", `not written: {seq: 20, stream: "s"}`, "and 5 more",
		"5 items still unprocessed after 3 BatchWriteItem requests"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not mention %q", err, part)
		}
	}
}

// Retries stop when ctx is done; a failed request stops the batch; either
// way the error says what was written.
func TestBatchWriteStops(t *testing.T) {
	var items []batchEvent
	for i := range 60 {
		items = append(items, batchEvent{Stream: "s", Seq: int64(i)})
	}

	c := batchDB("stream", "seq")
	events := NewTableMust[batchEvent](t, NewMapper(c))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.unprocessedWrite = func(call int, reqs []types.WriteRequest) []types.WriteRequest {
		if call >= 2 {
			cancel()
			return reqs
		}
		return nil
	}
	err := events.BatchDelete(ctx, items)
	var be *BatchWriteError
	if !errors.As(err, &be) || !errors.Is(err, context.Canceled) || len(c.batchWrites()) != 2 {
		t.Fatalf("err = %v after %d requests; want a *BatchWriteError wrapping context.Canceled after 2", err, len(c.batchWrites()))
	}
	if be.Op != "BatchDelete" || be.Written != 25 || len(be.Unwritten) != 35 || be.Unwritten[0] != 25 || be.Unwritten[34] != 59 {
		t.Errorf("Op %s, Written %d, Unwritten %v", be.Op, be.Written, be.Unwritten)
	}

	c = batchDB("stream", "seq")
	events = NewTableMust[batchEvent](t, NewMapper(c))
	boom := errors.New("boom")
	c.hook(&fakeHook{op: "BatchWriteItem", fail: func(call int) error {
		if call == 2 {
			return boom
		}
		return nil
	}})
	err = events.BatchSave(context.Background(), items)
	if !errors.As(err, &be) || !errors.Is(err, boom) || len(c.batchWrites()) != 2 {
		t.Fatalf("err = %v after %d requests; want a *BatchWriteError wrapping boom after 2", err, len(c.batchWrites()))
	}
	if be.Written != 25 || be.Written+len(be.Unwritten) != 60 || be.Unwritten[0] != 25 || len(c.items("Books")) != 25 {
		t.Errorf("Written %d, Unwritten %v, %d stored", be.Written, be.Unwritten, len(c.items("Books")))
	}
	if !strings.Contains(err.Error(), "25 of 60 items written") || !strings.HasSuffix(err.Error(), ": boom") {
		t.Errorf("error %q", err)
	}
}

func TestKeyID(t *testing.T) {
	p := NewTableMust[batchEvent](t, NewMapper(&fakeDB{noStore: true})).p
	id := func(hash types.AttributeValue, rng types.AttributeValue) keyID {
		return keyIDOf(p, map[string]types.AttributeValue{"stream": hash, "seq": rng})
	}
	if id(str("a"), n("1")) != id(str("a"), n("1.00")) {
		t.Error("equal numbers give different IDs")
	}
	distinct := []keyID{
		id(str("a"), n("1")), id(str("a"), n("10")), id(str("a1"), n("0")), id(str("a"), str("1")),
		id(&types.AttributeValueMemberB{Value: []byte("a")}, n("1")), id(str("a:"), n("1")), id(str("a"), nil),
	}
	for i := range distinct {
		for j := i + 1; j < len(distinct); j++ {
			if distinct[i] == distinct[j] {
				t.Errorf("IDs %d and %d collide: %+v", i, j, distinct[i])
			}
		}
	}
}

// A batch write given several options it cannot honour is refused, before
// any request, with an error naming each of them, so that one fix is enough.
func TestBatchWriteNamesEveryOptionItRefuses(t *testing.T) {
	db := &fakeDB{noStore: true}
	books := newBooks(t, db)
	refused := []string{"If", "MustExist", "WithSaveBehavior(SavePut)"}
	opts := []BatchWriteOption{WithSaveBehavior(SaveClobber), If(expression.Name("title").AttributeExists()), MustExist(), WithSaveBehavior(SavePut)}
	for _, op := range []string{"BatchSave", "BatchDelete"} {
		var err error
		if op == "BatchSave" {
			err = books.BatchSave(context.Background(), []Book{{ISBN: "1"}}, opts...)
		} else {
			err = books.BatchDelete(context.Background(), []Book{{ISBN: "1"}}, opts...)
		}
		if !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("%s: %v, want ErrInvalidInput", op, err)
		}
		for _, name := range refused {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("%s: %v: does not name %s", op, err, name)
			}
		}
	}
	if n := db.count(""); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}
