package dynamo

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

type numKeyed struct {
	ID   float64 `dynamo:"id,hash"`
	Part string  `dynamo:"part,range"`
	V    int64   `dynamo:"v,version"`
}

// One item, whatever the spelling of its number key: a transaction with
// members on 1 and 1.0 is refused as DynamoDB would (and as batches do).
func TestItemIdentityCanonical(t *testing.T) {
	tb := NewTableMust[numKeyed](t, NewMapper(&txStub{}))
	a := tb.p.keyID(map[string]types.AttributeValue{"id": &types.AttributeValueMemberN{Value: "1"}, "part": &types.AttributeValueMemberS{Value: "x"}})
	b := tb.p.keyID(map[string]types.AttributeValue{"id": &types.AttributeValueMemberN{Value: "1.0"}, "part": &types.AttributeValueMemberS{Value: "x"}})
	c := tb.p.keyID(map[string]types.AttributeValue{"id": &types.AttributeValueMemberN{Value: "10e-1"}, "part": &types.AttributeValueMemberS{Value: "x"}})
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
		tbl, err := NewTable[fastKeyed](NewMapper(&stubClient{}), "T")
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
		tu, err := NewTable[fastKeyedU](NewMapper(&stubClient{}), "U")
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
