package dynamo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/plan"
)

func n(s string) *types.AttributeValueMemberN   { return &types.AttributeValueMemberN{Value: s} }
func str(s string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: s} }

func newBooks(t *testing.T, c Client, opts ...Option) *Table[Book] {
	t.Helper()
	tb, err := NewTable[Book](NewMapper(c, opts...), "Books")
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestSaveRequests(t *testing.T) {
	note := "n"
	tests := []struct {
		name     string
		item     Book
		behavior SaveBehavior
		update   string
		cond     string
		names    map[string]string
		values   map[string]types.AttributeValue // token omitted
		allNew   bool
	}{
		{
			name:   "update new item",
			item:   Book{ISBN: "1", Title: "T"},
			update: "SET #a1 = :a1, #a4 = :v1, #wt = :wt REMOVE #a2, #a3",
			cond:   "attribute_not_exists(#a4) OR attribute_type(#a4, :onull) OR #a4 = :v0",
			names:  map[string]string{"#a1": "title", "#a2": "authors", "#a3": "note", "#a4": "version", "#wt": "ddbkit_wt"},
			values: map[string]types.AttributeValue{":a1": str("T"), ":onull": str("NULL"), ":v0": n("0"), ":v1": n("1")},
		},
		{
			name:   "update held version",
			item:   Book{ISBN: "1", Title: "T", Note: &note, Authors: []string{"a", "b", "a"}, Version: 2},
			update: "SET #a1 = :a1, #a2 = :a2, #a3 = :a3, #a4 = :v1, #wt = :wt",
			cond:   "#a4 = :v0",
			names:  map[string]string{"#a1": "title", "#a2": "authors", "#a3": "note", "#a4": "version", "#wt": "ddbkit_wt"},
			values: map[string]types.AttributeValue{":a1": str("T"), ":a2": &types.AttributeValueMemberSS{Value: []string{"a", "b"}}, ":a3": str("n"), ":v0": n("2"), ":v1": n("3")},
		},
		{
			name:     "skip nulls",
			item:     Book{ISBN: "1", Title: "T", Version: 2},
			behavior: SaveUpdateSkipNulls,
			update:   "SET #a1 = :a1, #a4 = :v1, #wt = :wt",
			cond:     "#a4 = :v0",
			names:    map[string]string{"#a1": "title", "#a4": "version", "#wt": "ddbkit_wt"},
			values:   map[string]types.AttributeValue{":a1": str("T"), ":v0": n("2"), ":v1": n("3")},
			allNew:   true,
		},
		{
			name:     "append set",
			item:     Book{ISBN: "1", Title: "T", Authors: []string{"c"}, Version: 2},
			behavior: SaveAppendSet,
			update:   "SET #a1 = :a1, #a4 = :v1, #wt = :wt ADD #a2 :a2",
			cond:     "(NOT attribute_type(#a2, :onull)) AND (#a4 = :v0)", // ADD fails on NULL: storedNulls
			names:    map[string]string{"#a1": "title", "#a2": "authors", "#a4": "version", "#wt": "ddbkit_wt"},
			values:   map[string]types.AttributeValue{":a1": str("T"), ":a2": &types.AttributeValueMemberSS{Value: []string{"c"}}, ":onull": plan.NullTypeAV, ":v0": n("2"), ":v1": n("3")},
			allNew:   true,
		},
		{
			name:     "clobber",
			item:     Book{ISBN: "1", Title: "T", Version: 7},
			behavior: SaveClobber,
			update:   "SET #a1 = :a1, #wt = :wt REMOVE #a2, #a3 ADD #a4 :v1",
			cond:     "attribute_not_exists(#a4) OR (#a4 >= :vz AND #a4 < :vm)",
			names:    map[string]string{"#a1": "title", "#a2": "authors", "#a3": "note", "#a4": "version", "#wt": "ddbkit_wt"},
			values:   map[string]types.AttributeValue{":a1": str("T"), ":v1": n("1"), ":vm": n("9223372036854775807"), ":vz": n("0")},
			allNew:   true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeDB{noStore: true, onUpd: func(_ int, in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
				return &dynamodb.UpdateItemOutput{Attributes: map[string]types.AttributeValue{"ISBN": str("1"), "version": n("9")}}, nil
			}}
			books := newBooks(t, c)
			before := tc.item
			saved, err := books.Save(context.Background(), tc.item, WithSaveBehavior(tc.behavior))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(before, tc.item) {
				t.Errorf("input modified: %+v", tc.item)
			}
			if len(c.upds()) != 1 {
				t.Fatalf("%d UpdateItem calls", len(c.upds()))
			}
			in := c.upds()[0]
			if got := aws.ToString(in.UpdateExpression); got != tc.update {
				t.Errorf("update = %q\n want %q", got, tc.update)
			}
			if got := aws.ToString(in.ConditionExpression); got != tc.cond {
				t.Errorf("cond = %q, want %q", got, tc.cond)
			}
			if !reflect.DeepEqual(in.ExpressionAttributeNames, tc.names) {
				t.Errorf("names = %v, want %v", in.ExpressionAttributeNames, tc.names)
			}
			tok, ok := in.ExpressionAttributeValues[":wt"].(*types.AttributeValueMemberB)
			if !ok || len(tok.Value) != 16 {
				t.Errorf("token value = %#v", in.ExpressionAttributeValues[":wt"])
			}
			vals := map[string]types.AttributeValue{}
			for k, v := range in.ExpressionAttributeValues {
				if k != ":wt" {
					vals[k] = v
				}
			}
			if !reflect.DeepEqual(vals, tc.values) {
				t.Errorf("values = %#v\n want %#v", vals, tc.values)
			}
			if !reflect.DeepEqual(in.Key, map[string]types.AttributeValue{"ISBN": str("1")}) {
				t.Errorf("key = %#v", in.Key)
			}
			if in.ReturnValuesOnConditionCheckFailure != types.ReturnValuesOnConditionCheckFailureAllOld {
				t.Error("ALL_OLD not requested")
			}
			if (in.ReturnValues == types.ReturnValueAllNew) != tc.allNew {
				t.Errorf("ReturnValues = %q", in.ReturnValues)
			}
			if tc.allNew {
				if saved.Version != 9 {
					t.Errorf("saved version = %d, want the stored 9", saved.Version)
				}
			} else if saved.Version != tc.item.Version+1 || saved.Title != tc.item.Title {
				t.Errorf("saved = %+v", saved)
			}
		})
	}
}

func TestSavePutRequest(t *testing.T) {
	c := &fakeDB{noStore: true}
	books := newBooks(t, c)
	in := &Book{ISBN: "1", Title: "T", Version: 4}
	saved, err := NewTableMust[*Book](t, books.Mapper()).Save(context.Background(), in,
		WithSaveBehavior(SavePut), If(expression.Name("title").AttributeExists()))
	if err != nil {
		t.Fatal(err)
	}
	if in.Version != 4 || saved == in || saved.Version != 5 {
		t.Errorf("input %+v, saved %+v: want input untouched and a new copy at 5", in, saved)
	}
	put := c.puts()[0]
	// The version, the If, and the stored window of idempotency keys the
	// put carries over: none expected (putWindow).
	if got := aws.ToString(put.ConditionExpression); got != "((#a4 = :v0) AND (attribute_exists (#0))) AND (attribute_not_exists(#ik))" {
		t.Errorf("cond = %q", got)
	}
	want := map[string]string{"#a4": "version", "#0": "title", "#ik": IdempotencyAttribute}
	if !reflect.DeepEqual(put.ExpressionAttributeNames, want) {
		t.Errorf("names = %v", put.ExpressionAttributeNames)
	}
	if put.Item["version"].(*types.AttributeValueMemberN).Value != "5" || put.Item["ddbkit_wt"] == nil {
		t.Errorf("item = %#v", put.Item)
	}
	if _, ok := put.Item["note"].(*types.AttributeValueMemberNULL); !ok {
		t.Errorf("nil note = %#v, want NULL", put.Item["note"])
	}
	if !reflect.DeepEqual(put.ExpressionAttributeValues, map[string]types.AttributeValue{":v0": n("4")}) {
		t.Errorf("values = %#v", put.ExpressionAttributeValues)
	}
}

func NewTableMust[T any](t *testing.T, m *Mapper) *Table[T] {
	t.Helper()
	tb, err := NewTable[T](m, "Books")
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func ccf(item map[string]types.AttributeValue) error {
	return &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed"), Item: item}
}

func TestSaveConflicts(t *testing.T) {
	tests := []struct {
		name  string
		held  int64
		old   map[string]types.AttributeValue
		conds []WriteOption
		want  error
		msg   string
	}{
		{"stale", 2, map[string]types.AttributeValue{"ISBN": str("1"), "title": str("X"), "version": n("3")}, nil, ErrVersionConflict, `held version 2, found 3`},
		{"missing", 5, nil, nil, ErrVersionConflict, "held version 5, item does not exist"},
		{"exists on create", 0, map[string]types.AttributeValue{"ISBN": str("1"), "version": n("1")}, nil, ErrVersionConflict, "held version 0 (unsaved), found 1"},
		{"if failed", 3, map[string]types.AttributeValue{"ISBN": str("1"), "version": n("3")}, []WriteOption{If(expression.Name("title").Equal(expression.Value("x")))}, ErrConditionFailed, "held version 3, found 3"},
		// SaveClobber holds no version: the message says what is stored.
		{"clobber if failed", 0, map[string]types.AttributeValue{"ISBN": str("1"), "version": n("2")}, []WriteOption{WithSaveBehavior(SaveClobber), If(expression.Name("title").Equal(expression.Value("x")))}, ErrConditionFailed, `condition failed on table "Books" key {ISBN: "1"}: stored version 2`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeDB{noStore: true, onUpd: func(int, *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) { return nil, ccf(tc.old) }}
			books := newBooks(t, c)
			_, err := books.Save(context.Background(), Book{ISBN: "1", Version: tc.held}, tc.conds...)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			var ce *ConditionError
			if !errors.As(err, &ce) {
				t.Fatalf("err %T is not a *ConditionError", err)
			}
			var sdk *types.ConditionalCheckFailedException
			if !errors.As(err, &sdk) {
				t.Error("SDK error not wrapped")
			}
			for _, s := range []string{`table "Books"`, `{ISBN: "1"}`, tc.msg} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("message %q lacks %q", err, s)
				}
			}
			cur, cerr := books.Current(err)
			if tc.old == nil {
				if !errors.Is(cerr, ErrNotFound) {
					t.Errorf("Current of a missing item: %v", cerr)
				}
				return
			}
			if cerr != nil || cur.Version != ce.FoundVersion {
				t.Errorf("Current = %+v, %v", cur, cerr)
			}
		})
	}
}

func TestSaveOwnWriteAfterLostResponse(t *testing.T) {
	// The SDK's retry of an applied write fails its condition; the item it
	// reports carries our token.
	c := fakeDB{noStore: true}
	c.onUpd = func(_ int, in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		return nil, ccf(map[string]types.AttributeValue{
			"ISBN": str("1"), "version": n("3"), "ddbkit_wt": in.ExpressionAttributeValues[":wt"],
		})
	}
	books := newBooks(t, &c)
	saved, err := books.Save(context.Background(), Book{ISBN: "1", Version: 2})
	if err != nil || saved.Version != 3 {
		t.Fatalf("Save = %+v, %v; want success at version 3", saved, err)
	}
	// Someone else's token: a conflict.
	c.onUpd = func(_ int, in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		return nil, ccf(map[string]types.AttributeValue{
			"ISBN": str("1"), "version": n("3"), "ddbkit_wt": &types.AttributeValueMemberB{Value: make([]byte, 16)},
		})
	}
	if _, err := books.Save(context.Background(), Book{ISBN: "1", Version: 2}); !errors.Is(err, ErrVersionConflict) {
		t.Fatalf("err = %v, want a conflict", err)
	}
	// Tokens off: the same situation is (as in Java) a conflict.
	c.onUpd = func(_ int, in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		if _, ok := in.ExpressionAttributeNames["#wt"]; ok {
			t.Error("token sent although turned off")
		}
		return nil, ccf(map[string]types.AttributeValue{"ISBN": str("1"), "version": n("3")})
	}
	if _, err := newBooks(t, &c, WithWriteTokenAttribute("")).Save(context.Background(), Book{ISBN: "1", Version: 2}); !errors.Is(err, ErrVersionConflict) {
		t.Fatalf("err = %v, want a conflict", err)
	}
}

func TestBadInputRefusedBeforeSending(t *testing.T) {
	c := &fakeDB{noStore: true}
	books := newBooks(t, c)
	ptrBooks := NewTableMust[*Book](t, books.Mapper())
	ctx := context.Background()
	big := strings.Repeat("x", 401*1024)
	type keyed struct {
		ID  *string `dynamo:"id,hash"`
		Bin []byte  `dynamo:"bin,range"`
	}
	kt := NewTableMust[keyed](t, books.Mapper())
	id := "a"
	type indexed struct {
		ID    string `dynamo:"id,hash"`
		Sort  string `dynamo:"sort,range"`
		Email string `dynamo:"email" index:"ByEmail,hash"`
		Rank  []byte `dynamo:"rank" index:"ByEmail,range"`
		Where string `dynamo:"where,omitempty" localIndex:"ByWhere,range"`
		V     int64  `dynamo:"v,version"` // a Save encodes straight into its request (buildSaveValues)
	}
	it := NewTableMust[indexed](t, books.Mapper())
	long, longer := strings.Repeat("k", 2049), strings.Repeat("s", 1025)
	tests := []struct {
		name string
		call func() error
		msg  string
	}{
		{"empty hash on Save", func() error { _, err := books.Save(ctx, Book{}); return err }, "hash key ISBN (field dynamo.Book.ISBN) is an empty string"},
		{"empty hash on Load", func() error { _, err := books.Load(ctx, Book{}); return err }, "empty string"},
		{"empty hash on Delete", func() error { return books.Delete(ctx, Book{}) }, "empty string"},
		{"nil pointer item", func() error { _, err := ptrBooks.Save(ctx, nil); return err }, "nil *dynamo.Book"},
		{"nil pointer delete", func() error { return ptrBooks.Delete(ctx, nil) }, "nil *dynamo.Book"},
		{"too big", func() error { _, err := books.Save(ctx, Book{ISBN: "1", Title: big}); return err }, "over DynamoDB's 400 KB limit"},
		{"unset pointer key", func() error { _, err := kt.Save(ctx, keyed{Bin: []byte{1}}); return err }, "hash key id (field dynamo.keyed.ID) is unset"},
		{"empty binary key", func() error { _, err := kt.Load(ctx, keyed{ID: &id}); return err }, "range key bin"},
		{"bad behavior", func() error { _, err := books.Save(ctx, Book{ISBN: "1"}, WithSaveBehavior(42)); return err }, "with WithSaveBehavior(SaveBehavior(42)): a value that is no save behaviour"},
		{"nil update fn", func() error { _, err := books.Update(ctx, Book{ISBN: "1"}, nil); return err }, "nil function"},
		{"hash key over 2048 bytes on Save", func() error { _, err := books.Save(ctx, Book{ISBN: long}); return err }, "hash key ISBN (field dynamo.Book.ISBN) is 2049 bytes, over DynamoDB's 2048"},
		{"hash key over 2048 bytes on Load", func() error { _, err := books.Load(ctx, Book{ISBN: long}); return err }, "is 2049 bytes"},
		{"range key over 1024 bytes", func() error { _, err := it.Save(ctx, indexed{ID: "a", Sort: longer}); return err }, "range key sort (field dynamo.indexed.Sort) is 1025 bytes, over DynamoDB's 1024"},
		{"binary range key over 1024 bytes", func() error { return kt.Delete(ctx, keyed{ID: &id, Bin: []byte(longer)}) }, "range key bin (field dynamo.keyed.Bin) is 1025 bytes"},
		{"empty index hash key", func() error { _, err := it.Save(ctx, indexed{ID: "a", Sort: "s", Rank: []byte{1}}); return err }, `index "ByEmail" hash key email (field dynamo.indexed.Email) is an empty string, which DynamoDB refuses in an index key: set it, or tag the field omitempty`},
		{"empty index range key", func() error {
			_, err := it.Save(ctx, indexed{ID: "a", Sort: "s", Email: "e", Rank: []byte{}}, WithSaveBehavior(SavePut))
			return err
		}, `index "ByEmail" range key rank (field dynamo.indexed.Rank) is empty`},
		{"index hash key over 2048 bytes", func() error { _, err := it.Save(ctx, indexed{ID: "a", Sort: "s", Email: long}); return err }, `index "ByEmail" hash key email (field dynamo.indexed.Email) is 2049 bytes`},
		{"local index range key over 1024 bytes", func() error {
			return it.BatchSave(ctx, []indexed{{ID: "a", Sort: "s", Email: "e", Rank: []byte{1}, Where: longer}}, WithSaveBehavior(SaveClobber))
		}, `index "ByWhere" range key where (field dynamo.indexed.Where) is 1025 bytes`},
	}
	for _, tc := range tests {
		err := tc.call()
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err = %v, want ErrInvalidInput mentioning %q", tc.name, err, tc.msg)
		}
	}
	if n := len(c.puts()) + len(c.upds()) + len(c.dels()) + len(c.gets()); n != 0 {
		t.Errorf("%d requests sent for bad input", n)
	}
}

func TestDeleteRequests(t *testing.T) {
	c := &fakeDB{noStore: true}
	books := newBooks(t, c)
	ctx := context.Background()
	if err := books.Delete(ctx, Book{ISBN: "1", Title: "ignored", Version: 3}); err != nil {
		t.Fatal(err)
	}
	if err := books.Delete(ctx, Book{ISBN: "1"}); err != nil {
		t.Fatal(err)
	}
	if err := books.Delete(ctx, Book{ISBN: "1", Version: 3}, WithSaveBehavior(SaveClobber)); err != nil {
		t.Fatal(err)
	}
	want := []string{"#a4 = :v0", "attribute_not_exists(#a4) OR attribute_type(#a4, :onull) OR #a4 = :v0", ""}
	for i, d := range c.dels() {
		if got := aws.ToString(d.ConditionExpression); got != want[i] {
			t.Errorf("delete %d cond = %q, want %q", i, got, want[i])
		}
	}
	if c.dels()[2].ExpressionAttributeNames != nil || c.dels()[2].ExpressionAttributeValues != nil {
		t.Errorf("clobber delete sends names/values: %#v", c.dels()[2])
	}
	c.onDel = func(int, *dynamodb.DeleteItemInput) (*dynamodb.DeleteItemOutput, error) {
		return nil, ccf(map[string]types.AttributeValue{"ISBN": str("1"), "version": n("4")})
	}
	err := books.Delete(ctx, Book{ISBN: "1", Version: 3})
	if !errors.Is(err, ErrVersionConflict) || !strings.Contains(err.Error(), "held version 3, found 4") {
		t.Errorf("stale delete: %v", err)
	}
}

func TestUnversionedSave(t *testing.T) {
	type Plain struct {
		ID   string `dynamo:"id,hash"`
		Body string `dynamo:"body"`
	}
	c := &fakeDB{noStore: true}
	tb := NewTableMust[Plain](t, NewMapper(c))
	if _, err := tb.Save(context.Background(), Plain{ID: "x", Body: "b"}); err != nil {
		t.Fatal(err)
	}
	u := c.upds()[0]
	if aws.ToString(u.UpdateExpression) != "SET #a1 = :a1" || u.ConditionExpression != nil {
		t.Errorf("update = %q cond = %v", aws.ToString(u.UpdateExpression), u.ConditionExpression)
	}
	if !reflect.DeepEqual(u.ExpressionAttributeNames, map[string]string{"#a1": "body"}) {
		t.Errorf("names = %v", u.ExpressionAttributeNames)
	}
}

// On DynamoDB Local: SaveAppendSet adds to a set stored as NULL (SavePut of
// a nil set writes NULL; DynamoDB refuses ADD on it) as to a missing one —
// the set is written, a second request sent when the first finds the NULL
// — and to a stored set as before.
func TestSaveAppendSetOnStoredNullSet(t *testing.T) {
	type tagged struct {
		ID   string   `dynamo:"id,hash"`
		Tags []string `dynamo:"tags,set"`
		Nums []int    `dynamo:"nums,set"`
		V    int64    `dynamo:"v,version"`
	}
	tb, _ := idTable[tagged](t)
	ctx := t.Context()
	it, err := tb.Save(ctx, tagged{ID: "k"}, WithSaveBehavior(SavePut))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tb.Mapper().client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tb.Name()), Key: map[string]types.AttributeValue{"id": str("k")}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if !isNull(raw.Item["tags"]) || !isNull(raw.Item["nums"]) {
		t.Fatalf("SavePut stored tags %#v, nums %#v; want NULL (the case under test)", raw.Item["tags"], raw.Item["nums"])
	}
	it.Tags, it.Nums = []string{"a"}, []int{1}
	got, err := tb.Save(ctx, it, WithSaveBehavior(SaveAppendSet))
	if err != nil || !slices.Equal(got.Tags, []string{"a"}) || !slices.Equal(got.Nums, []int{1}) || got.V != 2 {
		t.Fatalf("SaveAppendSet on NULL sets = %+v, %v; want tags [a], nums [1], version 2", got, err)
	}
	got.Tags, got.Nums = []string{"b"}, nil
	got, err = tb.Save(ctx, got, WithSaveBehavior(SaveAppendSet))
	if err != nil || !slices.Equal(sorted(got.Tags), []string{"a", "b"}) || !slices.Equal(got.Nums, []int{1}) || got.V != 3 {
		t.Fatalf("SaveAppendSet on stored sets = %+v, %v; want tags [a b], nums [1], version 3", got, err)
	}
	// A held version that is not the stored one is a conflict, not a resend.
	got.V = 1
	if _, err := tb.Save(ctx, got, WithSaveBehavior(SaveAppendSet)); !errors.Is(err, ErrVersionConflict) {
		t.Fatalf("SaveAppendSet holding a stale version = %v, want ErrVersionConflict", err)
	}
}

// A write that changes attributes without reading them (SaveClobber, Add)
// and meets another writer flipping a NULL under every attempt gives up
// after maxNullAttempts requests with an error that says so — not a bare
// "condition failed" naming no cause (found by the attack session).
func TestNullsKeptChangingIsNamed(t *testing.T) {
	var n atomic.Int32
	st := &fakeDB{noStore: true}
	st.onUpd = func(_ int, in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		item := map[string]types.AttributeValue{"id": str("k"), "n": plan.NumberAV(1), "v": plan.NumberAV(3)}
		if n.Add(1)%2 == 1 {
			item["v"] = &types.AttributeValueMemberNULL{Value: true}
		}
		return nil, &types.ConditionalCheckFailedException{Message: aws.String("cond"), Item: item}
	}
	tb, err := NewTable[counter](NewMapper(st), "t")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tb.Save(t.Context(), counter{ID: "k", N: 5}, WithSaveBehavior(SaveClobber))
	if got := n.Swap(0); got != maxNullAttempts {
		t.Errorf("SaveClobber sent %d requests, want %d", got, maxNullAttempts)
	}
	_, aerr := tb.Add(t.Context(), counter{ID: "k"}, Increment("n", 1))
	for call, err := range map[string]error{"SaveClobber": err, "Add": aerr} {
		if !errors.Is(err, ErrConditionFailed) || !strings.Contains(err.Error(), "NULLs") || strings.Contains(err.Error(), "If condition") {
			t.Errorf("%s = %v; want ErrConditionFailed saying another writer kept changing NULLs", call, err)
		}
	}
}

// storedNulls sends a write again for the item as its failure found it:
// NULLs where it assumed none, none where it assumed some — including an
// item another writer deleted meanwhile, which holds no NULLs (found by the
// fault suite's foreign writer, seed 5: an Add that had found a NULL
// version failed with "item does not exist" when the item was deleted
// before its second request, instead of creating it).
func TestStoredNullsFollowsTheStoredItem(t *testing.T) {
	fail := func(item map[string]types.AttributeValue) error {
		return &ConditionError{Err: ErrConditionFailed, Exists: item != nil, Item: item}
	}
	null := &types.AttributeValueMemberNULL{Value: true}
	cases := []struct {
		name string
		item map[string]types.AttributeValue
		prev map[string]bool
		want map[string]bool
	}{
		{"a NULL found", map[string]types.AttributeValue{"v": null}, nil, map[string]bool{"v": true}},
		{"the NULL assumed is there: the error stands", map[string]types.AttributeValue{"v": null}, map[string]bool{"v": true}, nil},
		{"the NULL assumed is gone", map[string]types.AttributeValue{"v": plan.NumberAV(3)}, map[string]bool{"v": true}, map[string]bool{}},
		{"the item assumed to hold a NULL is deleted", nil, map[string]bool{"v": true}, map[string]bool{}},
		{"absent, as assumed: the error stands", nil, nil, nil},
	}
	for _, tc := range cases {
		got := storedNulls(fail(tc.item), []string{"v"}, tc.prev, "")
		if (got == nil) != (tc.want == nil) || !maps.Equal(got, tc.want) {
			t.Errorf("%s: storedNulls = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := storedNulls(fail(map[string]types.AttributeValue{"v": plan.NumberAV(0)}), []string{"v"}, nil, "v"); !got["v"] {
		t.Errorf("a stored 0 where it counts as no version: storedNulls = %v, want v", got)
	}
}

// TestVersionFlippedBetweenZeroAndNullByAnotherWriter: on the fake store,
// another writer replaces the stored version before every request of a
// SaveClobber or an Add (which change the version without reading it).
// Flipping it between 0 and NULL — both "no version" — costs at most one
// more request: the second, conditioned on "NULL or 0", takes either, and
// the first version is written (1, or versionstart=100), the item's other
// attributes kept. Flipping it between NULL and a number makes every
// request's assumption wrong: the write stops after maxNullAttempts
// requests (4) with ErrConditionFailed saying so, having changed nothing —
// the other writer's item is stored as it left it.
func TestVersionFlippedBetweenZeroAndNullByAnotherWriter(t *testing.T) {
	null := &types.AttributeValueMemberNULL{Value: true}
	for _, flip := range []struct {
		name   string
		states []types.AttributeValue
		fails  bool
	}{
		{"NULL and 0", []types.AttributeValue{null, n("0")}, false},
		{"0 and NULL", []types.AttributeValue{n("0"), null}, false},
		{"NULL and 3", []types.AttributeValue{null, n("3")}, true},
	} {
		for _, call := range []string{"SaveClobber", "Add", "stepped SaveClobber", "stepped Add"} {
			name := call + " with " + flip.name
			db := (&fakeDB{}).table("t", "id", "")
			key := map[string]types.AttributeValue{"id": str("k")}
			var last types.AttributeValue
			db.hook(&fakeHook{op: "UpdateItem", before: func(i int) {
				last = flip.states[(i-1)%len(flip.states)]
				db.put("t", map[string]types.AttributeValue{"id": str("k"), "n": n("5"), "v": last, "other": str("kept")})
			}})
			m := NewMapper(db)
			plain, err := NewTable[counter](m, "t")
			if err != nil {
				t.Fatal(err)
			}
			stepped, err := NewTable[stepCounter](m, "t")
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			first, wantN := "1", "9"
			switch call {
			case "SaveClobber":
				_, err = plain.Save(ctx, counter{ID: "k", N: 9}, WithSaveBehavior(SaveClobber))
			case "Add":
				_, err = plain.Add(ctx, counter{ID: "k"}, Increment("n", 1))
				wantN = "6"
			case "stepped SaveClobber":
				_, err = stepped.Save(ctx, stepCounter{ID: "k", N: 9}, WithSaveBehavior(SaveClobber))
				first = "100"
			case "stepped Add":
				_, err = stepped.Add(ctx, stepCounter{ID: "k"}, Increment("n", 1))
				first, wantN = "100", "6"
			}
			sent := len(db.upds())
			got := db.item("t", key)
			if flip.fails {
				const bound = 4 // the documented bound (maxNullAttempts)
				if sent != bound || !errors.Is(err, ErrConditionFailed) ||
					!strings.Contains(fmt.Sprint(err), fmt.Sprintf("NULLs in the attributes this write changes (%d attempts", bound)) {
					t.Errorf("%s: %d requests, %v; want %d requests and ErrConditionFailed saying another writer kept changing NULLs", name, sent, err, bound)
				}
				want := map[string]types.AttributeValue{"id": str("k"), "n": n("5"), "v": last, "other": str("kept")}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: stored %v, want the other writer's item as it left it %v", name, got, want)
				}
				continue
			}
			if err != nil || sent > 2 {
				t.Errorf("%s: %d requests, %v; want success in at most 2", name, sent, err)
			}
			if v, _ := got["v"].(*types.AttributeValueMemberN); v == nil || v.Value != first {
				t.Errorf("%s: stored version %v, want the first version %s", name, got["v"], first)
			}
			if nv, _ := got["n"].(*types.AttributeValueMemberN); nv == nil || nv.Value != wantN || !reflect.DeepEqual(got["other"], str("kept")) {
				t.Errorf("%s: stored %v, want n %s and the other attribute kept", name, got, wantN)
			}
		}
	}
}

// TestWriteLandedOverFractionalVersionSaysSo: DynamoDB's conditions cannot
// tell a whole number from another, so a SaveClobber or an Add — which
// check only that the stored version is below the largest — land over a
// version another writer stored as 1.5 (it becomes 2.5), and only the item
// they return fails to decode. The error must say the write was applied
// (a caller that takes it for a refusal and sends it again applies it
// twice: an Add counts twice), name the stored version that is not a whole
// number, and be neither a refusal nor an unknown outcome.
func TestWriteLandedOverFractionalVersionSaysSo(t *testing.T) {
	key := map[string]types.AttributeValue{"id": str("k")}
	for _, call := range []string{"SaveClobber", "Add"} {
		db := (&fakeDB{}).table("t", "id", "")
		db.put("t", map[string]types.AttributeValue{"id": str("k"), "n": n("5"), "v": n("1.5")})
		tb, err := NewTable[counter](NewMapper(db), "t")
		if err != nil {
			t.Fatal(err)
		}
		wantN := "1"
		if call == "SaveClobber" {
			_, err = tb.Save(t.Context(), counter{ID: "k", N: 1}, WithSaveBehavior(SaveClobber))
		} else {
			_, err = tb.Add(t.Context(), counter{ID: "k"}, Increment("n", 1))
			wantN = "6"
		}
		got := db.item("t", key)
		if !reflect.DeepEqual(got["n"], n(wantN)) || !reflect.DeepEqual(got["v"], n("2.5")) {
			t.Fatalf("%s: stored %v; want it applied (n %s, v 2.5): the test's premise", call, got, wantN)
		}
		msg := fmt.Sprint(err)
		if err == nil || !strings.Contains(msg, "was applied") || !strings.Contains(msg, "2.5") ||
			errors.Is(err, ErrConditionFailed) || errors.Is(err, ErrVersionConflict) || errors.Is(err, ErrUnknownOutcome) {
			t.Errorf("%s over a version stored as 1.5: %v; want an error saying the write was applied, naming the version 2.5", call, err)
		}
	}
}

// saveValuesDoc is a type a Save encodes straight into its UpdateItem's
// values (Table.valueNames): a range key, pointers (NULL when nil), an
// omitempty string, a creation time, a set and a map.
type saveValuesDoc struct {
	Org     string            `dynamo:"org,hash"`
	ID      int               `dynamo:"id,range"`
	Version int64             `dynamo:"version,version"`
	A       *string           `dynamo:"a"`
	B       string            `dynamo:"b,omitempty"`
	N       *int              `dynamo:"n"`
	Made    time.Time         `dynamo:"made,created"`
	Tags    []string          `dynamo:"tags,stringset,omitempty"`
	M       map[string]string `dynamo:"m"`
}

// A Save that encodes straight into its UpdateItem's values
// (buildSaveValues) builds the request the item path (buildSave of an item
// a caller keeps) builds: the same key, expressions, names and values, the
// same versions and size — with attributes NULL and absent in every
// combination, with and without an If condition and write tokens, unsaved
// and saved. It makes no item, and refuses what the item path refuses.
func TestSaveValuesBuildTheItemPathsRequest(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000).UTC()
	tok := []byte("0123456789abcdef")
	for _, tokens := range []string{DefaultWriteTokenAttribute, ""} {
		tb, err := NewTable[saveValuesDoc](NewMapper(&fakeDB{noStore: true}, WithWriteTokenAttribute(tokens)), "Docs")
		if err != nil {
			t.Fatal(err)
		}
		if tb.valueNames == nil {
			t.Fatal("saveValuesDoc is not encoded straight into the values: the test checks nothing")
		}
		for mask := range 1 << 6 {
			d := saveValuesDoc{Org: "o", ID: mask, Version: int64(mask % 3), Made: now, M: map[string]string{"k": "v"}}
			if mask&1 != 0 {
				d.A = aws.String("a")
			}
			if mask&2 != 0 {
				d.B = "b"
			}
			if mask&4 != 0 {
				d.N = aws.Int(mask)
			}
			if mask&8 != 0 {
				d.Tags = []string{"x", "y"}
			}
			if mask&16 != 0 {
				d.M = nil
			}
			var opts []WriteOption
			if mask&32 != 0 {
				opts = append(opts, If(expression.Name("b").NotEqual(expression.Value("z"))))
			}
			wo := applyWriteOptions(opts)
			build := func(unkept bool) saveRequest {
				t.Helper()
				boxed, v, err := tb.box(d, "Save")
				if err != nil {
					t.Fatal(err)
				}
				r, err := tb.buildSave(boxed, v, &saveCall{wo: wo, unkept: unkept, now: now}, tok, nil, false)
				if err != nil {
					t.Fatalf("tokens %q, mask %06b: %v", tokens, mask, err)
				}
				return r
			}
			got, want := build(true), build(false)
			if got.item != nil || want.item == nil {
				t.Fatalf("tokens %q, mask %06b: the straight path made an item (%v), or the item path none", tokens, mask, got.item)
			}
			if !maps.EqualFunc(got.key, want.key, av.Equal) || got.up.Update != want.up.Update || got.up.Cond != want.up.Cond ||
				!maps.Equal(got.up.Names, want.up.Names) || !maps.EqualFunc(got.up.Values, want.up.Values, av.Equal) ||
				got.held != want.held || got.next != want.next || got.size != want.size || got.allNew != want.allNew ||
				!bytes.Equal(got.token, want.token) || got.uc != want.uc {
				t.Errorf("tokens %q, mask %06b: request\n %+v\nwant\n %+v", tokens, mask, got, want)
			}
		}
		for _, bad := range []saveValuesDoc{{ID: 1}, {Org: "o", Version: -1}, {Org: "o", B: strings.Repeat("x", 400<<10)}} {
			boxed, v, _ := tb.box(bad, "Save")
			w := applyWriteOptions(nil)
			_, errItem := tb.buildSave(boxed, v, &saveCall{wo: w, now: now}, tok, nil, false)
			_, errValues := tb.buildSave(boxed, v, &saveCall{wo: w, unkept: true, now: now}, tok, nil, false)
			if errItem == nil || errValues == nil || errItem.Error() != errValues.Error() {
				t.Errorf("tokens %q: refusal of %+v: %v, want %v", tokens, bad.Org, errValues, errItem)
			}
		}
	}
}

type nilSMarshaler string

func (nilSMarshaler) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return (*types.AttributeValueMemberS)(nil), nil
}

// TestSaveRefusesNilMarshaledValue: a field whose marshaler returns a nil
// pointer member is refused with ErrInvalidInput, by the compiled codec's
// path and by attributevalue's, for a key, an index key and any attribute,
// instead of crashing the caller.
func TestSaveRefusesNilMarshaledValue(t *testing.T) {
	type rec struct {
		ID    string        `dynamo:"ISBN,hash"`
		Email nilSMarshaler `dynamo:"email" index:"ByEmail,hash"`
		V     int64         `dynamo:"v,version"`
	}
	type keyed struct {
		ID nilSMarshaler `dynamo:"ISBN,hash"`
	}
	db := (&fakeDB{}).table("Books", "ISBN", "")
	tb := NewTableMust[rec](t, NewMapper(db))
	tk := NewTableMust[keyed](t, NewMapper(db))
	for _, b := range []SaveBehavior{SaveUpdate, SavePut} {
		if _, err := tb.Save(t.Context(), rec{ID: "a", Email: "x"}, WithSaveBehavior(b)); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%v: %v; want ErrInvalidInput", b, err)
		}
		if _, err := tk.Save(t.Context(), keyed{ID: "a"}, WithSaveBehavior(b)); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%v of the key: %v; want ErrInvalidInput", b, err)
		}
	}
}
