package dynamo

import (
	"context"
	"errors"
	"math/big"
	"net"
	"net/netip"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/codec/codectest"
)

type textKid struct {
	ID   codectest.UUID `dynamo:"id"`
	Kids []textKid      `dynamo:"kids"`
}

type textItem struct {
	ID     codectest.UUID            `dynamo:"id,hash"`
	V      int64                     `dynamo:"v,version"`
	Addr   netip.Addr                `dynamo:"addr"`
	PAddr  *netip.Addr               `dynamo:"paddr,omitempty"`
	IP     net.IP                    `dynamo:"ip"`
	Big    *big.Int                  `dynamo:"big"`
	Tags   []codectest.UUID          `dynamo:"tags,set"`
	ByName map[string]codectest.UUID `dynamo:"byname"`
	Kids   []textKid                 `dynamo:"kids"`
	At     time.Time                 `dynamo:"at,unixtime"` // time.Time keeps its own encoding
}

var (
	tID1 = codectest.UUID{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	tID2 = codectest.UUID{1, 2, 3}
)

const tID1Text = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"

func sAV(t *testing.T, av types.AttributeValue) string {
	t.Helper()
	s, ok := av.(*types.AttributeValueMemberS)
	if !ok {
		t.Fatalf("stored as %T, want S", av)
	}
	return s.Value
}

// TestTextTypesStoredAsS: text types (TextMarshaler + TextUnmarshaler) are
// written as S by MarshalText wherever the Go type says so — key, pointer,
// set, map value, nested in a recursive type — and read back.
func TestTextTypesStoredAsS(t *testing.T) {
	st := &fakeDB{noStore: true}
	tb, err := NewTable[textItem](NewMapper(st), "T")
	if err != nil {
		t.Fatal(err)
	}
	addr := netip.MustParseAddr("2001:db8::1")
	in := textItem{ID: tID1, Addr: netip.MustParseAddr("10.0.0.1"), PAddr: &addr, IP: net.ParseIP("192.0.2.7"),
		Big: new(big.Int).Lsh(big.NewInt(1), 100), Tags: []codectest.UUID{tID2}, ByName: map[string]codectest.UUID{"a": tID2},
		Kids: []textKid{{ID: tID2, Kids: []textKid{{ID: tID1}}}}, At: time.Unix(1700000000, 0)}
	saved, err := tb.Save(context.Background(), in, WithSaveBehavior(SavePut))
	if err != nil {
		t.Fatal(err)
	}
	item := st.puts()[0].Item
	for attr, want := range map[string]string{"id": tID1Text, "addr": "10.0.0.1", "paddr": "2001:db8::1", "ip": "192.0.2.7", "big": "1267650600228229401496703205376"} {
		if got := sAV(t, item[attr]); got != want {
			t.Errorf("%s = %q, want %q", attr, got, want)
		}
	}
	if ss, ok := item["tags"].(*types.AttributeValueMemberSS); !ok || len(ss.Value) != 1 || ss.Value[0] != "01020300-0000-0000-0000-000000000000" {
		t.Errorf("tags = %#v, want a string set", item["tags"])
	}
	sAV(t, item["byname"].(*types.AttributeValueMemberM).Value["a"])
	deep := item["kids"].(*types.AttributeValueMemberL).Value[0].(*types.AttributeValueMemberM).Value["kids"].(*types.AttributeValueMemberL).Value[0]
	if got := sAV(t, deep.(*types.AttributeValueMemberM).Value["id"]); got != tID1Text {
		t.Errorf("nested id = %q", got)
	}
	if _, ok := item["at"].(*types.AttributeValueMemberN); !ok {
		t.Errorf("at = %#v: time.Time with unixtime must stay a number", item["at"])
	}
	if cond := *st.puts()[0].ConditionExpression; !strings.Contains(cond, "attribute_not_exists") {
		t.Errorf("condition %q", cond)
	}

	st.onGet = func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return &dynamodb.GetItemOutput{Item: item}, nil
	}
	got, err := tb.Load(context.Background(), textItem{ID: tID1})
	if err != nil {
		t.Fatal(err)
	}
	if sAV(t, st.gets()[0].Key["id"]) != tID1Text {
		t.Errorf("Load key %#v", st.gets()[0].Key)
	}
	got.At, saved.At = got.At.UTC(), saved.At.UTC()
	if !reflect.DeepEqual(got, saved) {
		t.Errorf("loaded\n%+v\nwant\n%+v", got, saved)
	}
}

// TestTextReadsJavaAndOldItems: an S written by another client (Java
// stores a UUID as its text) is read; so is the B this mapper wrote for a
// [16]byte type before it was stored as text.
func TestTextReadsJavaAndOldItems(t *testing.T) {
	type rec struct {
		ID  string         `dynamo:"id,hash"`
		Ref codectest.UUID `dynamo:"ref"`
	}
	for name, av := range map[string]types.AttributeValue{
		"java S": &types.AttributeValueMemberS{Value: tID1Text},
		"old B":  &types.AttributeValueMemberB{Value: tID1[:]},
	} {
		st := &fakeDB{noStore: true, onGet: func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
			return &dynamodb.GetItemOutput{Item: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "k"}, "ref": av}}, nil
		}}
		tb, _ := NewTable[rec](NewMapper(st), "T")
		got, err := tb.Load(context.Background(), rec{ID: "k"})
		if err != nil || got.Ref != tID1 {
			t.Errorf("%s: %v, %v", name, got.Ref, err)
		}
	}
	// A B of another length, or text UnmarshalText refuses: an error
	// naming the type, never a zero value or a panic.
	for name, av := range map[string]types.AttributeValue{
		"short B":  &types.AttributeValueMemberB{Value: []byte{1, 2}},
		"bad text": &types.AttributeValueMemberS{Value: "not-a-uuid"},
	} {
		st := &fakeDB{noStore: true, onGet: func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
			return &dynamodb.GetItemOutput{Item: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "k"}, "ref": av}}, nil
		}}
		tb, _ := NewTable[rec](NewMapper(st), "T")
		if _, err := tb.Load(context.Background(), rec{ID: "k"}); err == nil || !strings.Contains(err.Error(), "codectest.UUID") || !strings.Contains(err.Error(), `"ref"`) {
			t.Errorf("%s: err %v, want one naming codectest.UUID and the attribute", name, err)
		}
	}
}

type bothWays struct{ V string }

func (b bothWays) MarshalText() ([]byte, error) { return []byte("text"), nil }
func (b *bothWays) UnmarshalText([]byte) error  { b.V = "text"; return nil }
func (b bothWays) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return &types.AttributeValueMemberN{Value: "7"}, nil
}
func (b *bothWays) UnmarshalDynamoDBAttributeValue(types.AttributeValue) error {
	b.V = "ddb"
	return nil
}

type failText struct{ bad bool }

func (f failText) MarshalText() ([]byte, error) {
	if f.bad {
		return nil, errors.New("cannot")
	}
	return []byte("ok"), nil
}
func (f *failText) UnmarshalText([]byte) error { return nil }

// TestTextMarshalerWins: a type's own MarshalDynamoDBAttributeValue wins
// over MarshalText; a failing MarshalText is an ErrInvalidInput before
// anything is sent.
func TestTextMarshalerWinsAndErrors(t *testing.T) {
	type rec struct {
		ID string    `dynamo:"id,hash"`
		B  bothWays  `dynamo:"b"`
		F  failText  `dynamo:"f"`
		A  any       `dynamo:"a"`
		PF *failText `dynamo:"pf"`
	}
	st := &fakeDB{noStore: true}
	tb, _ := NewTable[rec](NewMapper(st), "T")
	if _, err := tb.Save(context.Background(), rec{ID: "k"}, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	if n, ok := st.puts()[0].Item["b"].(*types.AttributeValueMemberN); !ok || n.Value != "7" {
		t.Errorf("b = %#v, want the DynamoDB marshaler's N 7", st.puts()[0].Item["b"])
	}
	_, err := tb.Save(context.Background(), rec{ID: "k", PF: &failText{bad: true}}, WithSaveBehavior(SavePut))
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "MarshalText") || len(st.puts()) != 1 {
		t.Errorf("failing MarshalText: %v (%d puts)", err, len(st.puts()))
	}
	// What an interface holds goes to attributevalue: a netip.Addr there
	// would be an empty map, so it is refused; a [16]byte stays binary.
	_, err = tb.Save(context.Background(), rec{ID: "k", A: netip.MustParseAddr("::1")}, WithSaveBehavior(SavePut))
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "interface") {
		t.Errorf("netip.Addr in any: %v", err)
	}
	_, err = tb.Save(context.Background(), rec{ID: "k", A: []any{map[string]any{"x": new(big.Int)}}}, WithSaveBehavior(SavePut))
	if !errors.Is(err, ErrInvalidInput) {
		t.Errorf("big.Int deep in any: %v", err)
	}
}

// TestTextWithEncoderOptions: with encoder options the mapper encodes
// through attributevalue, with its text options for types holding text
// types; a type that also holds a time.Time cannot be stored so and is
// refused by NewTable, as is a field handed to attributevalue that holds
// both.
func TestTextWithEncoderOptions(t *testing.T) {
	type plain struct {
		ID   codectest.UUID `dynamo:"id,hash"`
		Addr netip.Addr     `dynamo:"addr"`
	}
	type timed struct {
		ID codectest.UUID `dynamo:"id,hash"`
		At time.Time      `dynamo:"at,unixtime"`
	}
	st := &fakeDB{noStore: true}
	m := NewMapper(st, WithEncoderOptions(func(o *attributevalue.EncoderOptions) { o.NullEmptySets = true }))
	tb, err := NewTable[plain](m, "T")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Save(context.Background(), plain{ID: tID1, Addr: netip.MustParseAddr("::1")}, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	if sAV(t, st.puts()[0].Item["id"]) != tID1Text || sAV(t, st.puts()[0].Item["addr"]) != "::1" {
		t.Errorf("item %#v", st.puts()[0].Item)
	}
	if _, err := NewTable[timed](m, "T"); !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "time.Time") {
		t.Errorf("options + text + time: %v, want ErrInvalidSchema naming time.Time", err)
	}
	if _, err := NewTable[timed](NewMapper(st), "T"); err != nil {
		t.Errorf("without options: %v", err)
	}
	type clash struct {
		ID  string   `dynamo:"id,hash"`
		Arr [1]timed `dynamo:"arr"`
	}
	if _, err := NewTable[clash](NewMapper(st), "T"); !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "arr") {
		t.Errorf("array of text+time: %v, want ErrInvalidSchema naming arr", err)
	}
}

// TestTextKeyTypes: a text key is an S key in CreateTable, and a Table's
// Current decodes a ConditionError's item with text types.
func TestTextKeyTypes(t *testing.T) {
	type rec struct {
		ID  codectest.UUID `dynamo:"id,hash"`
		Sub netip.Addr     `dynamo:"sub,range"`
		V   int            `dynamo:"v,version"`
	}
	st := &fakeDB{noStore: true}
	tb, err := NewTable[rec](NewMapper(st), "T")
	if err != nil {
		t.Fatal(err)
	}
	in, err := tb.CreateTableInput()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range in.AttributeDefinitions {
		if d.AttributeType != types.ScalarAttributeTypeS {
			t.Errorf("key %s has type %s, want S", *d.AttributeName, d.AttributeType)
		}
	}
	cur := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: tID1Text}, "sub": &types.AttributeValueMemberS{Value: "::1"}, "v": &types.AttributeValueMemberN{Value: "3"}}
	st.onPut = func(int, *dynamodb.PutItemInput) (*dynamodb.PutItemOutput, error) {
		return nil, &types.ConditionalCheckFailedException{Item: cur}
	}
	_, err = tb.Save(context.Background(), rec{ID: tID1, Sub: netip.MustParseAddr("::1"), V: 1}, WithSaveBehavior(SavePut))
	if !errors.Is(err, ErrVersionConflict) {
		t.Fatalf("want a conflict, got %v", err)
	}
	got, err := tb.Current(err)
	if err != nil || got.ID != tID1 || got.V != 3 {
		t.Errorf("Current: %+v, %v", got, err)
	}
	var ce *ConditionError
	var out rec
	if !errors.As(err, &ce) {
		_, err = tb.Save(context.Background(), rec{ID: tID1, Sub: netip.MustParseAddr("::1"), V: 1}, WithSaveBehavior(SavePut))
		errors.As(err, &ce)
	}
	if ce != nil {
		if err := ce.Decode(&out); err != nil || out.ID != tID1 {
			t.Errorf("ConditionError.Decode: %+v, %v", out, err)
		}
	}
}

// TextUUID is codectest.UUID under an exported name, to embed.
type TextUUID = codectest.UUID

// TestTextEmbeddedIsNotText: a struct embedding a text type has its text
// methods by promotion only; it is stored as the struct it is, its other
// fields kept (as json would not).
func TestTextEmbeddedIsNotText(t *testing.T) {
	type named struct {
		TextUUID
		Name string `dynamo:"name"`
	}
	type rec struct {
		ID string `dynamo:"id,hash"`
		N  named  `dynamo:"n"`
	}
	st := &fakeDB{noStore: true}
	tb, _ := NewTable[rec](NewMapper(st), "T")
	if _, err := tb.Save(context.Background(), rec{ID: "k", N: named{TextUUID: tID1, Name: "ada"}}, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	m, ok := st.puts()[0].Item["n"].(*types.AttributeValueMemberM)
	if !ok || sAV(t, m.Value["name"]) != "ada" {
		t.Fatalf("n = %#v: the struct's fields must be kept", st.puts()[0].Item["n"])
	}
}

// jText is a text type that has a javabool field of its own: stored as its
// text, so the Java conversions must not look inside it.
type jText struct {
	On bool `dynamo:"on,javabool"`
}

func (j jText) MarshalText() ([]byte, error) {
	if j.On {
		return []byte("on"), nil
	}
	return []byte("off"), nil
}

func (j *jText) UnmarshalText(b []byte) error {
	j.On = string(b) == "on"
	return nil
}

// TestTextJavaTagsInside: the Java conversions stop at a text type, as the
// codec does; before, the item's S was taken for the struct's map.
func TestTextJavaTagsInside(t *testing.T) {
	type rec struct {
		ID string  `dynamo:"id,hash"`
		J  jText   `dynamo:"j"`
		Js []jText `dynamo:"js"`
	}
	st := &fakeDB{noStore: true}
	tb, err := NewTable[rec](NewMapper(st), "T")
	if err != nil {
		t.Fatal(err)
	}
	in := rec{ID: "k", J: jText{On: true}, Js: []jText{{On: true}, {}}}
	if _, err := tb.Save(context.Background(), in, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	item := st.puts()[0].Item
	if sAV(t, item["j"]) != "on" {
		t.Errorf("j = %#v", item["j"])
	}
	st.onGet = func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return &dynamodb.GetItemOutput{Item: item}, nil
	}
	got, err := tb.Load(context.Background(), rec{ID: "k"})
	if err != nil || !reflect.DeepEqual(got, in) {
		t.Errorf("loaded %+v, %v; want %+v", got, err, in)
	}
}

type b2Big struct {
	ID string   `dynamo:"id,hash"`
	A  any      `dynamo:"a"`
	B  *big.Int `dynamo:"b"`
}

// A *big.Int (or *big.Float, or any struct with only unexported fields) in
// a field or inside `any` is never stored as an empty map {} (the number
// lost while the caller's copy still shows it): it is stored as its text,
// or refused with ErrInvalidInput naming the field.
func TestBigNumberNotLost(t *testing.T) {
	for name, v := range map[string]b2Big{
		"*big.Int field":    {ID: "a", B: big.NewInt(5)},
		"*big.Int in any":   {ID: "a", A: big.NewInt(12345)},
		"*big.Float in any": {ID: "a", A: big.NewFloat(1.5)},
	} {
		st := &fakeDB{noStore: true}
		tb, err := NewTable[b2Big](NewMapper(st), "T")
		if err != nil {
			t.Fatal(err)
		}
		_, err = tb.Save(context.Background(), v, WithSaveBehavior(SavePut))
		if errors.Is(err, ErrInvalidInput) {
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		item := st.puts()[0].Item
		for _, k := range []string{"a", "b"} {
			if m, ok := item[k].(*types.AttributeValueMemberM); ok && len(m.Value) == 0 {
				t.Errorf("%s: attribute %q stored as {}: the number is lost, no error", name, k)
			}
		}
	}
}

// embeddingRef embeds a text type: MarshalText and UnmarshalText are
// promoted to it, but they see only the embedded UUID, not Name.
type embeddingRef struct {
	TextUUID
	Name string `dynamo:"name"`
}

// b6Stamp embeds time.Time, whose text methods are promoted too.
type b6Stamp struct {
	time.Time
	By string `dynamo:"by"`
}

// TestEmbeddedTextKeepsFields: a struct that embeds a text type next
// to other fields gets its MarshalText by promotion; storing it as that
// text silently dropped its other fields. It stays a map of its fields, as
// before text types were stored as text. One that embeds time.Time or
// netip.Addr next to other fields is refused: flattened as a map, the
// embedded value (all unexported fields) would be lost.
func TestEmbeddedTextKeepsFields(t *testing.T) {
	type rec struct {
		ID  string       `dynamo:"id,hash"`
		Ref embeddingRef `dynamo:"ref"`
	}
	st := &fakeDB{noStore: true}
	tb, err := NewTable[rec](NewMapper(st), "T")
	if err != nil {
		t.Fatal(err)
	}
	in := rec{ID: "k", Ref: embeddingRef{TextUUID: tID1, Name: "bob"}}
	if _, err := tb.Save(context.Background(), in, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	item := st.puts()[0].Item
	ref, ok := item["ref"].(*types.AttributeValueMemberM)
	if !ok {
		t.Fatalf("ref = %#v, want a map holding name", item["ref"])
	}
	if sAV(t, ref.Value["name"]) != "bob" || sAV(t, ref.Value["TextUUID"]) != tID1Text {
		t.Errorf("ref = %#v", ref.Value)
	}
	st.onGet = func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
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

// TestTTLOfTextTypeRefused: a ttl field of an integer type with text
// methods would be stored as S, which DynamoDB TTL ignores: the item would
// never expire. NewTable refuses it.
func TestTTLOfTextTypeRefused(t *testing.T) {
	type rec struct {
		ID  string  `dynamo:"id,hash"`
		Exp b6Epoch `dynamo:"exp,ttl"`
	}
	_, err := NewTable[rec](NewMapper(&fakeDB{noStore: true}), "T")
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

// TestPointerTextInMapValue: where attributevalue encodes (encoder
// options, or a field the codec hands over), a pointer-receiver text type
// in a map value would be stored by its kind — big.Int as an empty map, its
// value lost; a b6Code without its prefix, unreadable. NewTable refuses
// such types; the compiled codec stores them as text.
func TestPointerTextInMapValue(t *testing.T) {
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
	opts := NewMapper(&fakeDB{noStore: true}, WithEncoderOptions(func(o *attributevalue.EncoderOptions) { o.NullEmptySets = true }))
	if _, err := NewTable[bigs](opts, "T"); !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "big.Int") {
		t.Errorf("options, map of big.Int: %v, want ErrInvalidSchema naming big.Int", err)
	}
	if _, err := NewTable[codes](opts, "T"); !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "b6Code") {
		t.Errorf("options, map of b6Code: %v, want ErrInvalidSchema naming b6Code", err)
	}
	if _, err := NewTable[handed](NewMapper(&fakeDB{noStore: true}), "T"); !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "big.Int") {
		t.Errorf("array of map of big.Int: %v, want ErrInvalidSchema naming big.Int", err)
	}
	// The compiled codec takes the address itself: stored as text, read back.
	st := &fakeDB{noStore: true}
	tb, err := NewTable[codes](NewMapper(st), "T")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Save(context.Background(), codes{ID: "k", M: map[string]b6Code{"a": "x"}}, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	if got := sAV(t, st.puts()[0].Item["m"].(*types.AttributeValueMemberM).Value["a"]); got != "c-x" {
		t.Errorf("m.a = %q, want c-x", got)
	}
}

// TestTextSetThroughAttributevalue: with decoder options
// attributevalue decodes the item; it reads a string set's elements without
// UnmarshalText, so a `set` of a text type was written and then could not
// be read (by Load, nor by Query, which decodes item by item).
func TestTextSetThroughAttributevalue(t *testing.T) {
	type rec struct {
		ID   string            `dynamo:"id,hash"`
		Tags []codectest.UUID  `dynamo:"tags,set"`
		P    []*codectest.UUID `dynamo:"p,set"`
	}
	st := &fakeDB{noStore: true}
	m := NewMapper(st, WithDecoderOptions(func(o *attributevalue.DecoderOptions) { o.UseNumber = true }))
	tb, err := NewTable[rec](m, "T")
	if err != nil {
		t.Fatal(err)
	}
	id := tID1
	in := rec{ID: "k", Tags: []codectest.UUID{tID1, tID2}, P: []*codectest.UUID{&id}}
	if _, err := tb.Save(context.Background(), in, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	item := st.puts()[0].Item
	if _, ok := item["tags"].(*types.AttributeValueMemberSS); !ok {
		t.Fatalf("tags = %#v, want SS", item["tags"])
	}
	st.onGet = func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
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

// TestEmptyTextIndexKeyLeftOut: DynamoDB refuses an empty string as an index
// key; doc.go says to tag such fields omitempty, which leaves out an empty
// string. A text type's zero value (netip.Addr{}) has empty text but is not
// "empty" to omitempty (a struct), so it was sent as "" and refused by
// DynamoDB. It is left out (Put) or removed (update).
func TestEmptyTextIndexKeyLeftOut(t *testing.T) {
	type rec struct {
		ID   string     `dynamo:"id,hash"`
		Addr netip.Addr `dynamo:"addr,omitempty" index:"ByAddr,hash"`
		Note string     `dynamo:"note"`
	}
	st := &fakeDB{noStore: true}
	tb, err := NewTable[rec](NewMapper(st), "T")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Save(context.Background(), rec{ID: "k", Note: "n"}, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	if av, ok := st.puts()[0].Item["addr"]; ok {
		t.Errorf("Put item holds addr = %#v, want it left out", av)
	}
	if _, err := tb.Save(context.Background(), rec{ID: "k", Note: "n"}, WithSaveBehavior(SaveUpdate)); err != nil {
		t.Fatal(err)
	}
	for ph, v := range st.upds()[0].ExpressionAttributeValues {
		if s, ok := v.(*types.AttributeValueMemberS); ok && s.Value == "" {
			t.Errorf("update sends %s = \"\" (%s)", ph, *st.upds()[0].UpdateExpression)
		}
	}
	if _, err := tb.Save(context.Background(), rec{ID: "k", Addr: netip.MustParseAddr("::1")}, WithSaveBehavior(SavePut)); err != nil || sAV(t, st.puts()[1].Item["addr"]) != "::1" {
		t.Errorf("a set address: %v, %#v", err, st.puts()[1].Item["addr"])
	}
}

// TestTextIndexKeyLocal: against DynamoDB Local, a table keyed by a
// text type with a GSI keyed by an omitempty netip.Addr: an item without
// an address is stored (not refused for an empty index key) and stays out
// of the index; one with an address is found through it, decoded.
func TestTextIndexKeyLocal(t *testing.T) {
	type rec struct {
		ID   codectest.UUID `dynamo:"id,hash"`
		V    int64          `dynamo:"v,version"`
		Addr netip.Addr     `dynamo:"addr,omitempty" index:"ByAddr,hash"`
	}
	c := dynamotest.Client(t)
	ctx := t.Context()
	tb := createdTable[rec](t, c)
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

// TestWrapperStaysText: a struct that only embeds a text type is
// still stored as that text (flattened as a map, netip.Addr's unexported
// fields would leave nothing: the address would be lost).
func TestWrapperStaysText(t *testing.T) {
	type rec struct {
		ID string `dynamo:"id,hash"`
		W  b6Wrap `dynamo:"w"`
	}
	st := &fakeDB{noStore: true}
	tb, err := NewTable[rec](NewMapper(st), "T")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Save(context.Background(), rec{ID: "k", W: b6Wrap{netip.MustParseAddr("::1")}}, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	if got := sAV(t, st.puts()[0].Item["w"]); got != "::1" {
		t.Errorf("w = %q, want ::1", got)
	}
}

// b7Addr is a named struct wrapping a text type: attributevalue finds its
// promoted pointer-receiver UnmarshalText through its address.
type b7Addr struct{ netip.Addr }

// TestUnnamedTextWrapperHandedToAttributevalueRefused: an unnamed struct
// wrapping a text type (struct{ netip.Addr }) is a text type, written by
// its promoted MarshalText; where attributevalue decodes it (a field under
// WithDecoderOptions, an array element) it looks for UnmarshalText only on
// named types, so the item was written but every Load failed ("cannot
// unmarshal string into Go value type struct { netip.Addr }"). NewTable
// refuses it; a named wrapper, or one behind a pointer, round-trips.
func TestUnnamedTextWrapperHandedToAttributevalueRefused(t *testing.T) {
	decOpts := WithDecoderOptions(func(*attributevalue.DecoderOptions) {})
	type arr struct {
		ID string                  `dynamo:"id,hash"`
		A  [1]struct{ netip.Addr } `dynamo:"a"`
	}
	if _, err := NewTable[arr](NewMapper(&fakeDB{noStore: true}), "T"); !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "struct { netip.Addr }") {
		t.Errorf("array of struct{ netip.Addr }: %v, want ErrInvalidSchema naming it", err)
	}
	type field struct {
		ID string               `dynamo:"id,hash"`
		W  struct{ netip.Addr } `dynamo:"w"`
	}
	if _, err := NewTable[field](NewMapper(&fakeDB{noStore: true}, decOpts), "T"); !errors.Is(err, ErrInvalidSchema) || !strings.Contains(err.Error(), "struct { netip.Addr }") {
		t.Errorf("struct{ netip.Addr } with decoder options: %v, want ErrInvalidSchema naming it", err)
	}
	type ok struct {
		ID string                `dynamo:"id,hash"`
		N  b7Addr                `dynamo:"n"`
		P  *struct{ netip.Addr } `dynamo:"p"`
		A  [1]b7Addr             `dynamo:"a"`
	}
	for _, opts := range [][]Option{nil, {decOpts}} {
		st := &fakeDB{noStore: true}
		tb, err := NewTable[ok](NewMapper(st, opts...), "T")
		if err != nil {
			t.Fatalf("named or pointer wrapper (%d options): %v", len(opts), err)
		}
		in := ok{ID: "k", N: b7Addr{netip.MustParseAddr("192.0.2.1")}, P: &struct{ netip.Addr }{netip.MustParseAddr("192.0.2.2")}}
		in.A[0] = b7Addr{netip.MustParseAddr("::1")}
		if _, err := tb.Save(context.Background(), in, WithSaveBehavior(SavePut)); err != nil {
			t.Fatal(err)
		}
		item := st.puts()[0].Item
		if sAV(t, item["n"]) != "192.0.2.1" || sAV(t, item["p"]) != "192.0.2.2" {
			t.Errorf("stored %v", item)
		}
		st.onGet = func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
			return &dynamodb.GetItemOutput{Item: item}, nil
		}
		got, err := tb.Load(context.Background(), ok{ID: "k"})
		if err != nil || !reflect.DeepEqual(got, in) {
			t.Errorf("loaded (%d options) %+v, %v; want %+v", len(opts), got, err, in)
		}
	}
}

// TestConditionOnEntryOfMapWithTextKeys: a condition on an entry of
// a map whose keys are not strings (a UUID, a number: stored as an M keyed
// by their text) compared with a value of the entries' text type was sent
// as attributevalue encodes it (a [16]byte as B), so it never matched the
// S stored there; it is sent as its text, as for string-keyed maps.
func TestConditionOnEntryOfMapWithTextKeys(t *testing.T) {
	type rec struct {
		ID codectest.UUID                    `dynamo:"id,hash"`
		M  map[codectest.UUID]codectest.UUID `dynamo:"m"`
		I  map[int]codectest.UUID            `dynamo:"i"`
	}
	st := &fakeDB{noStore: true}
	tb, err := NewTable[rec](NewMapper(st), "T")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"m." + tID1Text, "i.5"} {
		st.forget()
		c := expression.Name(path).Equal(expression.Value(tID2))
		if _, err := tb.Save(context.Background(), rec{ID: tID1}, If(c), WithSaveBehavior(SavePut)); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		vals := st.puts()[0].ExpressionAttributeValues
		want, _ := tID2.MarshalText()
		if len(vals) != 1 || sAV(t, vals[":0"]) != string(want) {
			t.Errorf("%s: values %v, want :0 = S %s", path, vals, want)
		}
	}
}
