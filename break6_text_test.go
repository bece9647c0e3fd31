package dynamo

import (
	"context"
	"errors"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/ddbkit/dynamo/dynamotest"
	"math/big"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Adversarial cases of text types (issue 15 item 6).

// B6UUID is an exported uuid-style text type, embeddable under its name.
type B6UUID [16]byte

func (u B6UUID) MarshalText() ([]byte, error)  { return tUUID(u).MarshalText() }
func (u *B6UUID) UnmarshalText(b []byte) error { return (*tUUID)(u).UnmarshalText(b) }

// b6Ref embeds a text type: MarshalText and UnmarshalText are promoted to
// it, but they see only the embedded UUID, not Name.
type b6Ref struct {
	B6UUID
	Name string `dynamo:"name"`
}

// b6Stamp embeds time.Time, whose text methods are promoted too.
type b6Stamp struct {
	time.Time
	By string `dynamo:"by"`
}

// TestBreak6EmbeddedTextKeepsFields: a struct that embeds a text type next
// to other fields gets its MarshalText by promotion; storing it as that
// text silently dropped its other fields. It stays a map of its fields, as
// before text types were stored as text. One that embeds time.Time or
// netip.Addr next to other fields is refused: flattened as a map, the
// embedded value (all unexported fields) would be lost.
func TestBreak6EmbeddedTextKeepsFields(t *testing.T) {
	type rec struct {
		ID  string `dynamo:"id,hash"`
		Ref b6Ref  `dynamo:"ref"`
	}
	st := &stubClient{}
	tb, err := NewTable[rec](NewMapper(st), "T")
	if err != nil {
		t.Fatal(err)
	}
	in := rec{ID: "k", Ref: b6Ref{B6UUID: B6UUID(tID1), Name: "bob"}}
	if _, err := tb.Save(context.Background(), in, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	item := st.puts[0].Item
	ref, ok := item["ref"].(*types.AttributeValueMemberM)
	if !ok {
		t.Fatalf("ref = %#v, want a map holding name", item["ref"])
	}
	if sAV(t, ref.Value["name"]) != "bob" || sAV(t, ref.Value["B6UUID"]) != tID1Text {
		t.Errorf("ref = %#v", ref.Value)
	}
	st.onGet = func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return &dynamodb.GetItemOutput{Item: item}, nil
	}
	got, err := tb.Load(context.Background(), rec{ID: "k"})
	if err != nil || got.Ref != in.Ref {
		t.Errorf("loaded %+v, %v", got, err)
	}
	type stamped struct {
		ID string    `dynamo:"id,hash"`
		At []b6Stamp `dynamo:"at"`
	}
	if _, err := NewTable[stamped](NewMapper(st), "T"); !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "b6Stamp embeds time.Time") {
		t.Errorf("embedded time.Time: %v, want ErrInvalidSchema naming b6Stamp", err)
	}
	type addrNote struct {
		netip.Addr
		Note string
	}
	type noted struct {
		ID string   `dynamo:"id,hash"`
		A  addrNote `dynamo:"a"`
	}
	if _, err := NewTable[noted](NewMapper(st), "T"); !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "netip.Addr") {
		t.Errorf("embedded netip.Addr: %v, want ErrInvalidSchema naming netip.Addr", err)
	}
}

// b6Epoch is an integer type with text methods: stored as S.
type b6Epoch int64

func (e b6Epoch) MarshalText() ([]byte, error) { return []byte(strconv.FormatInt(int64(e), 10)), nil }
func (e *b6Epoch) UnmarshalText(b []byte) error {
	n, err := strconv.ParseInt(string(b), 10, 64)
	*e = b6Epoch(n)
	return err
}

// TestBreak6TTLOfTextType: a ttl field of an integer type with text
// methods would be stored as S, which DynamoDB TTL ignores: the item would
// never expire. NewTable refuses it.
func TestBreak6TTLOfTextType(t *testing.T) {
	type rec struct {
		ID  string  `dynamo:"id,hash"`
		Exp b6Epoch `dynamo:"exp,ttl"`
	}
	_, err := NewTable[rec](NewMapper(&stubClient{}), "T")
	if !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "ttl") || !strings.Contains(err.Error(), "Exp") {
		t.Errorf("NewTable: %v, want ErrInvalidSchema naming Exp and ttl", err)
	}
}

// b6Code is a string text type with pointer-receiver methods, as big.Int
// has: attributevalue cannot call MarshalText on a map value, which it
// cannot take the address of, and would store the bare string.
type b6Code string

func (c *b6Code) MarshalText() ([]byte, error) { return []byte("c-" + string(*c)), nil }
func (c *b6Code) UnmarshalText(b []byte) error {
	s, ok := strings.CutPrefix(string(b), "c-")
	if !ok {
		return errors.New("b6Code: no prefix")
	}
	*c = b6Code(s)
	return nil
}

// TestBreak6PointerTextInMapValue: where attributevalue encodes (encoder
// options, or a field the codec hands over), a pointer-receiver text type
// in a map value would be stored by its kind — big.Int as an empty map, its
// value lost; a b6Code without its prefix, unreadable. NewTable refuses
// such types; the compiled codec stores them as text.
func TestBreak6PointerTextInMapValue(t *testing.T) {
	type bigs struct {
		ID string             `dynamo:"id,hash"`
		M  map[string]big.Int `dynamo:"m"`
	}
	type codes struct {
		ID string            `dynamo:"id,hash"`
		M  map[string]b6Code `dynamo:"m"`
	}
	type handed struct {
		ID string                `dynamo:"id,hash"`
		A  [1]map[string]big.Int `dynamo:"a"` // arrays go to attributevalue
	}
	opts := NewMapper(&stubClient{}, WithEncoderOptions(func(o *attributevalue.EncoderOptions) { o.NullEmptySets = true }))
	if _, err := NewTable[bigs](opts, "T"); !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "big.Int") {
		t.Errorf("options, map of big.Int: %v, want ErrInvalidSchema naming big.Int", err)
	}
	if _, err := NewTable[codes](opts, "T"); !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "b6Code") {
		t.Errorf("options, map of b6Code: %v, want ErrInvalidSchema naming b6Code", err)
	}
	if _, err := NewTable[handed](NewMapper(&stubClient{}), "T"); !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "big.Int") {
		t.Errorf("array of map of big.Int: %v, want ErrInvalidSchema naming big.Int", err)
	}
	// The compiled codec takes the address itself: stored as text, read back.
	st := &stubClient{}
	tb, err := NewTable[codes](NewMapper(st), "T")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Save(context.Background(), codes{ID: "k", M: map[string]b6Code{"a": "x"}}, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	if got := sAV(t, st.puts[0].Item["m"].(*types.AttributeValueMemberM).Value["a"]); got != "c-x" {
		t.Errorf("m.a = %q, want c-x", got)
	}
}

// TestBreak6TextSetThroughAttributevalue: with decoder options
// attributevalue decodes the item; it reads a string set's elements without
// UnmarshalText, so a `set` of a text type was written and then could not
// be read (by Load, nor by Query, which decodes item by item).
func TestBreak6TextSetThroughAttributevalue(t *testing.T) {
	type rec struct {
		ID   string   `dynamo:"id,hash"`
		Tags []tUUID  `dynamo:"tags,set"`
		P    []*tUUID `dynamo:"p,set"`
	}
	st := &stubClient{}
	m := NewMapper(st, WithDecoderOptions(func(o *attributevalue.DecoderOptions) { o.UseNumber = true }))
	tb, err := NewTable[rec](m, "T")
	if err != nil {
		t.Fatal(err)
	}
	id := tID1
	in := rec{ID: "k", Tags: []tUUID{tID1, tID2}, P: []*tUUID{&id}}
	if _, err := tb.Save(context.Background(), in, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	item := st.puts[0].Item
	if _, ok := item["tags"].(*types.AttributeValueMemberSS); !ok {
		t.Fatalf("tags = %#v, want SS", item["tags"])
	}
	st.onGet = func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return &dynamodb.GetItemOutput{Item: item}, nil
	}
	got, err := tb.Load(context.Background(), rec{ID: "k"})
	if err != nil || len(got.Tags) != 2 || got.Tags[1] != tID2 || len(got.P) != 1 || *got.P[0] != tID1 {
		t.Errorf("Load: %+v, %v", got, err)
	}
	d := &itemDecoder[rec]{t: tb}
	var q rec
	if err := d.decodeInto(item, &q); err != nil || len(q.Tags) != 2 || q.Tags[0] != tID1 {
		t.Errorf("decodeInto: %+v, %v", q, err)
	}
	if _, ok := item["tags"].(*types.AttributeValueMemberSS); !ok {
		t.Errorf("the stored item was changed: tags = %#v", item["tags"])
	}
}

// TestBreak6EmptyTextIndexKey: DynamoDB refuses an empty string as an index
// key; doc.go says to tag such fields omitempty, which leaves out an empty
// string. A text type's zero value (netip.Addr{}) has empty text but is not
// "empty" to omitempty (a struct), so it was sent as "" and refused by
// DynamoDB. It is left out (Put) or removed (update).
func TestBreak6EmptyTextIndexKey(t *testing.T) {
	type rec struct {
		ID   string     `dynamo:"id,hash"`
		Addr netip.Addr `dynamo:"addr,omitempty" index:"ByAddr,hash"`
		Note string     `dynamo:"note"`
	}
	st := &stubClient{}
	tb, err := NewTable[rec](NewMapper(st), "T")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Save(context.Background(), rec{ID: "k", Note: "n"}, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	if av, ok := st.puts[0].Item["addr"]; ok {
		t.Errorf("Put item holds addr = %#v, want it left out", av)
	}
	if _, err := tb.Save(context.Background(), rec{ID: "k", Note: "n"}, WithSaveBehavior(SaveUpdate)); err != nil {
		t.Fatal(err)
	}
	for ph, v := range st.upds[0].ExpressionAttributeValues {
		if s, ok := v.(*types.AttributeValueMemberS); ok && s.Value == "" {
			t.Errorf("update sends %s = \"\" (%s)", ph, *st.upds[0].UpdateExpression)
		}
	}
	if _, err := tb.Save(context.Background(), rec{ID: "k", Addr: netip.MustParseAddr("::1")}, WithSaveBehavior(SavePut)); err != nil || sAV(t, st.puts[1].Item["addr"]) != "::1" {
		t.Errorf("a set address: %v, %#v", err, st.puts[1].Item["addr"])
	}
}

// TestBreak6TextIndexKeyLocal: against DynamoDB Local, a table keyed by a
// text type with a GSI keyed by an omitempty netip.Addr: an item without
// an address is stored (not refused for an empty index key) and stays out
// of the index; one with an address is found through it, decoded.
func TestBreak6TextIndexKeyLocal(t *testing.T) {
	type rec struct {
		ID   tUUID      `dynamo:"id,hash"`
		V    int64      `dynamo:"v,version"`
		Addr netip.Addr `dynamo:"addr,omitempty" index:"ByAddr,hash"`
	}
	c := dynamotest.Client(t)
	ctx := t.Context()
	proto, err := NewTable[rec](NewMapper(c), "b6addr")
	if err != nil {
		t.Fatal(err)
	}
	in, err := proto.CreateTableInput()
	if err != nil {
		t.Fatal(err)
	}
	tb, err := NewTable[rec](NewMapper(c), dynamotest.CreateTable(t, c, in))
	if err != nil {
		t.Fatal(err)
	}
	a, err := tb.Save(ctx, rec{ID: tID1})
	if err != nil {
		t.Fatalf("save without an address: %v", err)
	}
	a.Addr = netip.MustParseAddr("10.0.0.1")
	if a, err = tb.Save(ctx, a); err != nil {
		t.Fatal(err)
	}
	a.Addr = netip.Addr{} // leaves the index again (REMOVE)
	if _, err = tb.Save(ctx, a); err != nil {
		t.Fatalf("save clearing the address: %v", err)
	}
	if _, err := tb.Save(ctx, rec{ID: tID2, Addr: netip.MustParseAddr("10.0.0.2")}); err != nil {
		t.Fatal(err)
	}
	var got []rec
	for r, err := range tb.Query(ctx, expression.Key("addr").Equal(expression.Value("10.0.0.2")), Index("ByAddr")) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if len(got) != 1 || got[0].ID != tID2 {
		t.Errorf("query ByAddr: %+v", got)
	}
	n := 0
	for _, err := range tb.Scan(ctx, Index("ByAddr")) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("index holds %d items, want 1", n)
	}
}

// b6Wrap only wraps a text type: its promoted methods see all of it.
type b6Wrap struct{ netip.Addr }

// TestBreak6WrapperStaysText: a struct that only embeds a text type is
// still stored as that text (flattened as a map, netip.Addr's unexported
// fields would leave nothing: the address would be lost).
func TestBreak6WrapperStaysText(t *testing.T) {
	type rec struct {
		ID string `dynamo:"id,hash"`
		W  b6Wrap `dynamo:"w"`
	}
	st := &stubClient{}
	tb, err := NewTable[rec](NewMapper(st), "T")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Save(context.Background(), rec{ID: "k", W: b6Wrap{netip.MustParseAddr("::1")}}, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	if got := sAV(t, st.puts[0].Item["w"]); got != "::1" {
		t.Errorf("w = %q, want ::1", got)
	}
}
