package dynamo

import (
	"context"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
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
