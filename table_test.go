package dynamo

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
)

// Current hands back the item a failed write found, without another read:
// the stored item for a conflict, ErrNotFound for an absent item, an error
// wrapping err for an error that carries no item, ErrInvalidInput for nil.
func TestCurrentIsTheItemTheFailureFound(t *testing.T) {
	db := (&fakeDB{}).table("Books", "ISBN", "")
	db.put("Books", map[string]types.AttributeValue{"ISBN": str("1"), "title": str("stored"), "version": n("4")})
	books := newBooks(t, db)
	ctx := context.Background()

	_, err := books.Save(ctx, Book{ISBN: "1", Title: "mine", Version: 2})
	got, cerr := books.Current(err)
	if !errors.Is(err, ErrVersionConflict) || cerr != nil || got.Title != "stored" || got.Version != 4 {
		t.Fatalf("Current(%v) = %+v, %v; want the stored item at version 4", err, got, cerr)
	}
	if n := db.count("GetItem"); n != 0 {
		t.Errorf("Current sent %d GetItems; want none", n)
	}

	err = books.Delete(ctx, Book{ISBN: "2", Version: 1})
	if _, cerr := books.Current(err); !errors.Is(err, ErrVersionConflict) || !errors.Is(cerr, ErrNotFound) {
		t.Errorf("Current after a delete of an absent item (%v) = %v; want ErrNotFound", err, cerr)
	}

	other := errors.New("some other failure")
	if _, cerr := books.Current(other); !errors.Is(cerr, other) {
		t.Errorf("Current(an error without an item) = %v; want it wrapped", cerr)
	}
	if _, cerr := books.Current(nil); !errors.Is(cerr, ErrInvalidInput) {
		t.Errorf("Current(nil) = %v; want ErrInvalidInput", cerr)
	}
}

// keptDoc is an item whose doc attribute is of a type that keeps the value
// its marshaler returns and its unmarshaler is given (sharedAV).
type keptDoc struct {
	ID  string   `dynamo:"id,hash"`
	Doc sharedAV `dynamo:"doc"`
	N   int      `dynamo:"n"`
	V   int64    `dynamo:"v,version"`
}

// docX is the string at "x" of d's doc map ("" when none).
func docX(d keptDoc) string {
	m, _ := d.Doc.av.(*types.AttributeValueMemberM)
	if m == nil {
		return ""
	}
	s, _ := m.Value["x"].(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}

// The values of a type's own marshaler and unmarshaler share nothing with
// what the mapper keeps between calls (a key's last item): a returned copy
// changed in place afterwards, or the value a function set changed in
// place after its Update, is not what the next Update's function is given,
// nor written by it.
func TestValuesOfOwnMarshalersShareNothingKept(t *testing.T) {
	tb, _ := idTable[keptDoc](t)
	ctx := t.Context()
	mine := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"x": &types.AttributeValueMemberS{Value: "old"}}}
	if _, err := tb.Save(ctx, keptDoc{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Update(ctx, keptDoc{ID: "a"}, func(cur keptDoc) (keptDoc, error) { cur.Doc.av = mine; return cur, nil }); err != nil {
		t.Fatal(err)
	}
	mine.Value["x"] = &types.AttributeValueMemberS{Value: "changed after the Update"}
	got, err := tb.Update(ctx, keptDoc{ID: "a"}, func(cur keptDoc) (keptDoc, error) {
		if x := docX(cur); x != "old" {
			t.Errorf("the function was given doc x %q, want old: the value set by the last Update, changed since", x)
		}
		cur.N++
		return cur, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got.Doc.av.(*types.AttributeValueMemberM).Value["x"] = &types.AttributeValueMemberS{Value: "changed in the returned copy"}
	if _, err := tb.Update(ctx, keptDoc{ID: "a"}, func(cur keptDoc) (keptDoc, error) {
		if x := docX(cur); x != "old" {
			t.Errorf("the function was given doc x %q, want old: the copy the last Update returned, changed since", x)
		}
		cur.N++
		return cur, nil
	}); err != nil {
		t.Fatal(err)
	}
	stored, err := tb.Load(ctx, keptDoc{ID: "a"}, ConsistentRead())
	if err != nil || docX(stored) != "old" || stored.N != 2 {
		t.Fatalf("stored %+v (doc x %q), %v; want doc x old, n 2", stored, docX(stored), err)
	}
}

// selfDoc encodes and decodes itself (attributevalue's Marshaler and
// Unmarshaler for the whole item), keeping the map it returns and the one
// it is given in selfKept.
type selfDoc struct {
	ID string `dynamo:"id,hash"`
	N  int    `dynamo:"n"`
	V  int64  `dynamo:"v,version"`
}

// selfKept holds the maps selfDoc's methods returned and were given last.
var selfKept struct {
	mu      sync.Mutex
	out, in map[string]types.AttributeValue
}

func (d selfDoc) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	m := map[string]types.AttributeValue{"id": str(d.ID), "n": n(strconv.Itoa(d.N)), "v": n(strconv.FormatInt(d.V, 10))}
	selfKept.mu.Lock()
	selfKept.out = m
	selfKept.mu.Unlock()
	return &types.AttributeValueMemberM{Value: m}, nil
}

func (d *selfDoc) UnmarshalDynamoDBAttributeValue(v types.AttributeValue) error {
	m, ok := v.(*types.AttributeValueMemberM)
	if !ok {
		return errors.New("selfDoc: not a map")
	}
	selfKept.mu.Lock()
	selfKept.in = m.Value
	selfKept.mu.Unlock()
	id, _ := m.Value["id"].(*types.AttributeValueMemberS)
	nv, _ := m.Value["n"].(*types.AttributeValueMemberN)
	vv, _ := m.Value["v"].(*types.AttributeValueMemberN)
	if id == nil || nv == nil || vv == nil {
		return errors.New("selfDoc: id, n or v missing")
	}
	d.ID = id.Value
	d.N, _ = strconv.Atoi(nv.Value)
	d.V, _ = strconv.ParseInt(vv.Value, 10, 64)
	return nil
}

// A type that encodes and decodes the whole item itself shares nothing
// with the mapper: the map its marshaler returned is not written into (no
// version step, no write token), and the map its unmarshaler was given,
// changed afterwards, is not what the next Update starts from.
func TestItemsOfOwnMarshalersShareNothingKept(t *testing.T) {
	tb, _ := idTable[selfDoc](t)
	ctx := t.Context()
	saved, err := tb.Save(ctx, selfDoc{ID: "a", N: 1})
	if err != nil {
		t.Fatal(err)
	}
	selfKept.mu.Lock()
	out := selfKept.out
	selfKept.mu.Unlock()
	if len(out) != 3 || out["v"].(*types.AttributeValueMemberN).Value != "0" {
		t.Errorf("the map the marshaler returned was written into: %v; want id, n and v 0 only", out)
	}
	if _, err := tb.Update(ctx, selfDoc{ID: "a"}, func(cur selfDoc) (selfDoc, error) { cur.N = 2; return cur, nil }); err != nil {
		t.Fatal(err)
	}
	selfKept.mu.Lock()
	for _, m := range []map[string]types.AttributeValue{selfKept.in, selfKept.out} {
		if m != nil {
			m["n"] = n("999")
		}
	}
	selfKept.mu.Unlock()
	got, err := tb.Update(ctx, selfDoc{ID: "a"}, func(cur selfDoc) (selfDoc, error) {
		if cur.N != 2 {
			t.Errorf("the function was given n %d, want 2: a map a marshaler returned or an unmarshaler was given, changed since", cur.N)
		}
		cur.N++
		return cur, nil
	})
	if err != nil || got.N != 3 || got.V != saved.V+2 {
		t.Fatalf("Update = %+v, %v; want n 3 at version %d", got, err, saved.V+2)
	}
}

// The item a failed condition carries (ConditionError.Item) is the
// caller's: changed in place, it is not what the next Update starts from.
func TestConditionErrorItemSharesNothingKept(t *testing.T) {
	tb, _ := idTable[keptDoc](t)
	ctx := t.Context()
	if _, err := tb.Save(ctx, keptDoc{ID: "a", N: 1}); err != nil {
		t.Fatal(err)
	}
	_, err := tb.Update(ctx, keptDoc{ID: "a"}, func(cur keptDoc) (keptDoc, error) { cur.N++; return cur, nil },
		If(expression.Name("n").Equal(expression.Value(5))))
	var ce *ConditionError
	if !errors.As(err, &ce) || ce.Item == nil {
		t.Fatalf("Update with a failing If = %v; want a ConditionError carrying the item", err)
	}
	ce.Item["n"] = n("999")
	got, err := tb.Update(ctx, keptDoc{ID: "a"}, func(cur keptDoc) (keptDoc, error) {
		if cur.N != 1 {
			t.Errorf("the function was given n %d, want 1: the item of a ConditionError, changed since", cur.N)
		}
		cur.N++
		return cur, nil
	})
	if err != nil || got.N != 2 {
		t.Fatalf("Update = %+v, %v; want n 2", got, err)
	}
}

// TestKeysAtDynamoDBsLimitsStored: key values of exactly DynamoDB's limits —
// 2048 bytes for a partition key, 1024 for a sort key, of the table and of
// its indexes — are stored and found (checkItemKeys refuses only what is
// over them), and one byte more is refused before sending, on DynamoDB
// Local as by the mapper.
func TestKeysAtDynamoDBsLimitsStored(t *testing.T) {
	type rec struct {
		ID    string `dynamo:"id,hash"`
		Sort  []byte `dynamo:"sort,range"`
		Email string `dynamo:"email,omitempty" index:"ByEmail,hash"`
		Rank  string `dynamo:"rank,omitempty" index:"ByEmail,range"`
		V     int64  `dynamo:"v,version"`
	}
	c := dynamotest.Client(t)
	ctx := t.Context()
	tb := createdTable[rec](t, c)
	at := rec{ID: strings.Repeat("p", 2048), Sort: bytes.Repeat([]byte{7}, 1024), Email: strings.Repeat("e", 2048), Rank: strings.Repeat("r", 1024)}
	if _, err := tb.Save(ctx, at); err != nil {
		t.Fatalf("keys at the limits: %v", err)
	}
	got, err := tb.Load(ctx, rec{ID: at.ID, Sort: at.Sort}, ConsistentRead())
	if err != nil || got.Email != at.Email || got.Rank != at.Rank {
		t.Fatalf("Load: %v (index keys read back equal: %v)", err, got.Email == at.Email && got.Rank == at.Rank)
	}
	for i, over := range []rec{
		{ID: at.ID + "p", Sort: at.Sort},
		{ID: "a", Sort: append(bytes.Clone(at.Sort), 7)},
		{ID: "a", Sort: at.Sort, Email: at.Email + "e"},
		{ID: "a", Sort: at.Sort, Email: "e", Rank: at.Rank + "r"},
	} {
		if _, err := tb.Save(ctx, over, WithSaveBehavior(SavePut)); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "over DynamoDB's") {
			t.Errorf("key %d one byte over: %v; want ErrInvalidInput", i, err)
		}
		sent := map[string]types.AttributeValue{"id": str(over.ID), "sort": &types.AttributeValueMemberB{Value: over.Sort}}
		if over.Email != "" {
			sent["email"] = str(over.Email)
		}
		if over.Rank != "" {
			sent["rank"] = str(over.Rank)
		}
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tb.Name()), Item: sent}); err == nil {
			t.Errorf("key %d one byte over: DynamoDB Local took it; the limit checked is not DynamoDB's", i)
		}
	}
}

// TestNullIndexKeyLeftOut: DynamoDB refuses NULL in an index key ("Invalid
// attribute value type"). An index key field held as NULL — a nil pointer,
// a nullempty field's empty value — is left out of the item, so that every
// way of writing it stores what an update stores (it REMOVEs a NULL): the
// item, not in the index. Before, a SavePut and a BatchSave of such an
// item failed at DynamoDB while a Save succeeded.
func TestNullIndexKeyLeftOut(t *testing.T) {
	type rec struct {
		ID    string  `dynamo:"id,hash"`
		Email *string `dynamo:"email" index:"ByEmail,hash"`
		Name  string  `dynamo:"name,nullempty" index:"ByName,hash"`
		V     int64   `dynamo:"v,version"`
	}
	c := dynamotest.Client(t)
	ctx := t.Context()
	tb := createdTable[rec](t, c)
	m := tb.Mapper()
	writes := itemWrites(ctx, tb)
	writes["SaveClobber"] = func(r rec) error { _, err := tb.Save(ctx, r, WithSaveBehavior(SaveClobber)); return err }
	writes["TxSave SavePut"] = func(r rec) error { return m.WriteTx(ctx, []TxOp{tb.TxSave(r, WithSaveBehavior(SavePut))}) }
	for name, write := range writes {
		if err := write(rec{ID: name}); err != nil {
			t.Errorf("%s of an item without its index keys: %v", name, err)
			continue
		}
		out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tb.Name()), Key: map[string]types.AttributeValue{"id": str(name)}, ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := out.Item["email"]; ok {
			t.Errorf("%s stored email = %#v; want it left out", name, out.Item["email"])
		}
		if _, ok := out.Item["name"]; ok {
			t.Errorf("%s stored name = %#v; want it left out", name, out.Item["name"])
		}
		got, err := tb.Load(ctx, rec{ID: name}, ConsistentRead())
		if err != nil || got.Email != nil || got.Name != "" {
			t.Errorf("%s: Load %+v, %v; want no email and no name", name, got, err)
		}
	}
	email := "a@x"
	if _, err := tb.Save(ctx, rec{ID: "set", Email: &email, Name: "n"}, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	var found []string
	for r, err := range tb.Query(ctx, expression.Key("email").Equal(expression.Value(email)), Index("ByEmail")) {
		if err != nil {
			t.Fatal(err)
		}
		found = append(found, r.ID)
	}
	if len(found) != 1 || found[0] != "set" {
		t.Errorf("ByEmail holds %v; want only the item with an email", found)
	}
}

// TestTableHashKeyAsIndexRangeKeyLimited: the table's partition key may be
// a global index's sort key, whose values DynamoDB limits to 1024 bytes,
// not the 2048 of a partition key. Every write of a longer value is refused
// with ErrInvalidInput before sending (DynamoDB Local refuses it too), and
// one of 1024 bytes is stored.
func TestTableHashKeyAsIndexRangeKeyLimited(t *testing.T) {
	type rec struct {
		ID    string `dynamo:"id,hash" index:"ByGroup,range"`
		Group string `dynamo:"group" index:"ByGroup,hash"`
		V     int64  `dynamo:"v,version"`
	}
	c := dynamotest.Client(t)
	ctx := t.Context()
	tb := createdTable[rec](t, c)
	writes := itemWrites(ctx, tb)
	writes["Update"] = func(r rec) error {
		_, err := tb.Update(ctx, r, func(x rec) (rec, error) { x.Group = "g"; return x, nil })
		return err
	}
	for name, write := range writes {
		at := rec{ID: name + strings.Repeat("i", 1024-len(name)), Group: "g"}
		if err := write(at); err != nil {
			t.Errorf("%s of an index sort key of 1024 bytes: %v", name, err)
		}
		over := rec{ID: name + strings.Repeat("i", 1025-len(name)), Group: "g"}
		if err := write(over); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "over DynamoDB's 1024") {
			t.Errorf("%s of an index sort key of 1025 bytes: %v; want ErrInvalidInput", name, err)
		}
	}
	sent := map[string]types.AttributeValue{"id": str(strings.Repeat("i", 1025)), "group": str("g")}
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tb.Name()), Item: sent}); err == nil {
		t.Errorf("DynamoDB Local took an index sort key of 1025 bytes; the limit checked is not DynamoDB's")
	}
}
