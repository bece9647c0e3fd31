package dynamo

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
)

type numKeyed struct {
	ID   float64 `dynamo:"id,hash"`
	Part string  `dynamo:"part,range"`
	V    int64   `dynamo:"v,version"`
}

// One item, whatever the spelling of its number key: a transaction with
// members on 1 and 1.0 is refused as DynamoDB would (and as batches do).
func TestItemIdentityCanonical(t *testing.T) {
	tb := NewTableMust[numKeyed](t, NewMapper(&fakeDB{noStore: true}))
	a := keyIDOf(tb.p, map[string]types.AttributeValue{"id": &types.AttributeValueMemberN{Value: "1"}, "part": &types.AttributeValueMemberS{Value: "x"}})
	b := keyIDOf(tb.p, map[string]types.AttributeValue{"id": &types.AttributeValueMemberN{Value: "1.0"}, "part": &types.AttributeValueMemberS{Value: "x"}})
	c := keyIDOf(tb.p, map[string]types.AttributeValue{"id": &types.AttributeValueMemberN{Value: "10e-1"}, "part": &types.AttributeValueMemberS{Value: "x"}})
	if a != b || a != c {
		t.Fatalf("keyIDs of 1, 1.0, 10e-1: %+v %+v %+v; want one", a, b, c)
	}
	m1 := &txMember{table: "T", plan: tb.p, key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberN{Value: "0"}, "part": &types.AttributeValueMemberS{Value: "x"}}}
	m2 := &txMember{table: "T", plan: tb.p, key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberN{Value: "-0"}, "part": &types.AttributeValueMemberS{Value: "x"}}}
	if txItemID(m1) != txItemID(m2) {
		t.Errorf("0 and -0 are two items in a transaction")
	}
	err := tb.Mapper().WriteTx(context.Background(), []TxOp{tb.TxCheck(numKeyed{ID: 0, Part: "x", V: 1}), tb.TxDelete(numKeyed{ID: negZero(), Part: "x", V: 1})})
	if !errors.Is(err, ErrInvalidInput) {
		t.Errorf("WriteTx on 0 and -0: %v; want ErrInvalidInput (one item twice)", err)
	}
}

func negZero() float64 { z := 0.0; return -z }

type fastKeyed struct {
	ID   string `dynamo:"id,hash"`
	Part int64  `dynamo:"part,range"`
	N    int    `dynamo:"n"`
}

type fastKeyedU struct {
	ID   []byte `dynamo:"id,hash"`
	Part uint16 `dynamo:"part,range"`
}

// The fast key path (no general encoder) and the general one agree.
func FuzzKeyPaths(f *testing.F) {
	f.Add("k", int64(1), []byte("b"), uint16(7))
	f.Add("", int64(-1), []byte{}, uint16(0))
	f.Add("\xff", int64(1<<62), []byte(nil), uint16(65535))
	t1 := func(tb testing.TB) *Table[fastKeyed] {
		tbl, err := NewTable[fastKeyed](NewMapper(&fakeDB{noStore: true}), "T")
		if err != nil {
			tb.Fatal(err)
		}
		return tbl
	}
	f.Fuzz(func(t *testing.T, id string, part int64, bid []byte, upart uint16) {
		tb := t1(t)
		v := reflect.ValueOf(&fastKeyed{ID: id, Part: part}).Elem()
		fast, ok, ferr := tb.fastKeyOf(v)
		slow, serr := tb.keyFromEncoded(v)
		if ok && ((ferr == nil) != (serr == nil) || ferr == nil && !reflect.DeepEqual(fast, slow)) {
			t.Fatalf("fast %v %v, general %v %v", fast, ferr, slow, serr)
		}
		tu, err := NewTable[fastKeyedU](NewMapper(&fakeDB{noStore: true}), "U")
		if err != nil {
			t.Fatal(err)
		}
		vu := reflect.ValueOf(&fastKeyedU{ID: bid, Part: upart}).Elem()
		fast, ok, ferr = tu.fastKeyOf(vu)
		slow, serr = tu.keyFromEncoded(vu)
		if ok && ((ferr == nil) != (serr == nil) || ferr == nil && !reflect.DeepEqual(fast, slow)) {
			t.Fatalf("fast %v %v, general %v %v", fast, ferr, slow, serr)
		}
	})
}

type numberKeyed struct {
	ID attributevalue.Number `dynamo:"id,hash"`
	X  string                `dynamo:"x"`
	V  int64                 `dynamo:"v,version"`
}

// A key field of type attributevalue.Number is a number (N) everywhere:
// CreateTable declares it N, Save writes N, and Load, Delete and the Query
// key check use N too.
func TestNumberKeyIsN(t *testing.T) {
	c := &fakeDB{noStore: true, onGet: func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return &dynamodb.GetItemOutput{}, nil
	}}
	tb, err := NewTable[numberKeyed](NewMapper(c), "t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Load(t.Context(), numberKeyed{ID: "1.50"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load = %v, want ErrNotFound", err)
	}
	if err := tb.Delete(t.Context(), numberKeyed{ID: "1.50", V: 1}); err != nil {
		t.Fatalf("Delete = %v", err)
	}
	for _, k := range []map[string]types.AttributeValue{c.gets()[0].Key, c.dels()[0].Key} {
		if got, ok := k["id"].(*types.AttributeValueMemberN); !ok || got.Value != "1.50" {
			t.Errorf("key sent as %#v, want N 1.50", k["id"])
		}
	}
	if got := tb.keyKind(&tb.p.S.Fields[tb.p.S.Hash]); got != 'N' {
		t.Errorf("keyKind = %q, want 'N' (a Query with a number value must be accepted)", got)
	}
}

// The same on DynamoDB Local: Save, Load, Update, Delete and Query of an
// item keyed by an attributevalue.Number, the key spelled as stored or not.
func TestNumberKeyRoundTrip(t *testing.T) {
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "", "id", types.ScalarAttributeTypeN, "", "")
	tb, err := NewTable[numberKeyed](NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := tb.Save(ctx, numberKeyed{ID: "1.5", X: "a"}); err != nil {
		t.Fatalf("Save = %v", err)
	}
	got, err := tb.Load(ctx, numberKeyed{ID: "1.50"}, ConsistentRead())
	if err != nil || got.X != "a" {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	got, err = tb.Update(ctx, numberKeyed{ID: "1.5"}, func(it numberKeyed) (numberKeyed, error) { it.X = "b"; return it, nil })
	if err != nil || got.X != "b" {
		t.Fatalf("Update = %+v, %v", got, err)
	}
	var n int
	for it, err := range tb.Query(ctx, expression.Key("id").Equal(expression.Value(attributevalue.Number("1.5")))) {
		if err != nil {
			t.Fatalf("Query = %v", err)
		}
		if it.X != "b" {
			t.Fatalf("Query gave %+v", it)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("Query gave %d items, want 1", n)
	}
	if err := tb.Delete(ctx, got); err != nil {
		t.Fatalf("Delete = %v", err)
	}
	if _, err := tb.Load(ctx, numberKeyed{ID: "1.5"}, ConsistentRead()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load after Delete = %v", err)
	}
}
