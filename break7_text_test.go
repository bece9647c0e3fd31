package dynamo

import (
	"context"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Adversarial cases at the seams of text types (issue 15 item 6).

// b7Addr is a named struct wrapping a text type: attributevalue finds its
// promoted pointer-receiver UnmarshalText through its address.
type b7Addr struct{ netip.Addr }

// TestBreak7UnnamedTextWrapperHandedToAttributevalue: an unnamed struct
// wrapping a text type (struct{ netip.Addr }) is a text type, written by
// its promoted MarshalText; where attributevalue decodes it (a field under
// WithDecoderOptions, an array element) it looks for UnmarshalText only on
// named types, so the item was written but every Load failed ("cannot
// unmarshal string into Go value type struct { netip.Addr }"). NewTable
// refuses it; a named wrapper, or one behind a pointer, round-trips.
func TestBreak7UnnamedTextWrapperHandedToAttributevalue(t *testing.T) {
	decOpts := WithDecoderOptions(func(*attributevalue.DecoderOptions) {})
	type arr struct {
		ID string                  `dynamo:"id,hash"`
		A  [1]struct{ netip.Addr } `dynamo:"a"`
	}
	if _, err := NewTable[arr](NewMapper(&stubClient{}), "T"); !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "struct { netip.Addr }") {
		t.Errorf("array of struct{ netip.Addr }: %v, want ErrInvalidSchema naming it", err)
	}
	type field struct {
		ID string               `dynamo:"id,hash"`
		W  struct{ netip.Addr } `dynamo:"w"`
	}
	if _, err := NewTable[field](NewMapper(&stubClient{}, decOpts), "T"); !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "struct { netip.Addr }") {
		t.Errorf("struct{ netip.Addr } with decoder options: %v, want ErrInvalidSchema naming it", err)
	}
	type ok struct {
		ID string                `dynamo:"id,hash"`
		N  b7Addr                `dynamo:"n"`
		P  *struct{ netip.Addr } `dynamo:"p"`
		A  [1]b7Addr             `dynamo:"a"`
	}
	for _, opts := range [][]Option{nil, {decOpts}} {
		st := &stubClient{}
		tb, err := NewTable[ok](NewMapper(st, opts...), "T")
		if err != nil {
			t.Fatalf("named or pointer wrapper (%d options): %v", len(opts), err)
		}
		in := ok{ID: "k", N: b7Addr{netip.MustParseAddr("192.0.2.1")}, P: &struct{ netip.Addr }{netip.MustParseAddr("192.0.2.2")}}
		in.A[0] = b7Addr{netip.MustParseAddr("::1")}
		if _, err := tb.Save(context.Background(), in, WithSaveBehavior(SavePut)); err != nil {
			t.Fatal(err)
		}
		item := st.puts[0].Item
		if sAV(t, item["n"]) != "192.0.2.1" || sAV(t, item["p"]) != "192.0.2.2" {
			t.Errorf("stored %v", item)
		}
		st.onGet = func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
			return &dynamodb.GetItemOutput{Item: item}, nil
		}
		got, err := tb.Load(context.Background(), ok{ID: "k"})
		if err != nil || !reflect.DeepEqual(got, in) {
			t.Errorf("loaded (%d options) %+v, %v; want %+v", len(opts), got, err, in)
		}
	}
}

// TestBreak7ConditionOnEntryOfMapWithTextKeys: a condition on an entry of
// a map whose keys are not strings (a UUID, a number: stored as an M keyed
// by their text) compared with a value of the entries' text type was sent
// as attributevalue encodes it (a [16]byte as B), so it never matched the
// S stored there; it is sent as its text, as for string-keyed maps.
func TestBreak7ConditionOnEntryOfMapWithTextKeys(t *testing.T) {
	type rec struct {
		ID tUUID           `dynamo:"id,hash"`
		M  map[tUUID]tUUID `dynamo:"m"`
		I  map[int]tUUID   `dynamo:"i"`
	}
	st := &stubClient{}
	tb, err := NewTable[rec](NewMapper(st), "T")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"m." + tID1Text, "i.5"} {
		st.puts = nil
		c := expression.Name(path).Equal(expression.Value(tID2))
		if _, err := tb.Save(context.Background(), rec{ID: tID1}, If(c), WithSaveBehavior(SavePut)); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		vals := st.puts[0].ExpressionAttributeValues
		want, _ := tID2.MarshalText()
		if len(vals) != 1 || sAV(t, vals[":0"]) != string(want) {
			t.Errorf("%s: values %v, want :0 = S %s", path, vals, want)
		}
	}
}
