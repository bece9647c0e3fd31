package dynamo

import (
	"context"
	"encoding/hex"
	"errors"
	"math/big"
	"net"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// tUUID is a uuid.UUID-style text type: [16]byte, MarshalText on the value.
type tUUID [16]byte

func (u tUUID) MarshalText() ([]byte, error) {
	b := make([]byte, 36)
	hex.Encode(b, u[:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return b, nil
}

func (u *tUUID) UnmarshalText(b []byte) error {
	s := strings.ReplaceAll(string(b), "-", "")
	if len(s) != 32 {
		return errors.New("uuid: want 32 hex digits")
	}
	_, err := hex.Decode(u[:], []byte(s))
	return err
}

type textKid struct {
	ID   tUUID     `dynamo:"id"`
	Kids []textKid `dynamo:"kids"`
}

type textItem struct {
	ID     tUUID            `dynamo:"id,hash"`
	V      int64            `dynamo:"v,version"`
	Addr   netip.Addr       `dynamo:"addr"`
	PAddr  *netip.Addr      `dynamo:"paddr,omitempty"`
	IP     net.IP           `dynamo:"ip"`
	Big    *big.Int         `dynamo:"big"`
	Tags   []tUUID          `dynamo:"tags,set"`
	ByName map[string]tUUID `dynamo:"byname"`
	Kids   []textKid        `dynamo:"kids"`
	At     time.Time        `dynamo:"at,unixtime"` // time.Time keeps its own encoding
}

var (
	tID1 = tUUID{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	tID2 = tUUID{1, 2, 3}
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
	st := &stubClient{}
	tb, err := NewTable[textItem](NewMapper(st), "T")
	if err != nil {
		t.Fatal(err)
	}
	addr := netip.MustParseAddr("2001:db8::1")
	in := textItem{ID: tID1, Addr: netip.MustParseAddr("10.0.0.1"), PAddr: &addr, IP: net.ParseIP("192.0.2.7"),
		Big: new(big.Int).Lsh(big.NewInt(1), 100), Tags: []tUUID{tID2}, ByName: map[string]tUUID{"a": tID2},
		Kids: []textKid{{ID: tID2, Kids: []textKid{{ID: tID1}}}}, At: time.Unix(1700000000, 0)}
	saved, err := tb.Save(context.Background(), in, WithSaveBehavior(SavePut))
	if err != nil {
		t.Fatal(err)
	}
	item := st.puts[0].Item
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
	if cond := *st.puts[0].ConditionExpression; !strings.Contains(cond, "attribute_not_exists") {
		t.Errorf("condition %q", cond)
	}

	st.onGet = func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return &dynamodb.GetItemOutput{Item: item}, nil
	}
	got, err := tb.Load(context.Background(), textItem{ID: tID1})
	if err != nil {
		t.Fatal(err)
	}
	if sAV(t, st.gets[0].Key["id"]) != tID1Text {
		t.Errorf("Load key %#v", st.gets[0].Key)
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
		ID  string `dynamo:"id,hash"`
		Ref tUUID  `dynamo:"ref"`
	}
	for name, av := range map[string]types.AttributeValue{
		"java S": &types.AttributeValueMemberS{Value: tID1Text},
		"old B":  &types.AttributeValueMemberB{Value: tID1[:]},
	} {
		st := &stubClient{onGet: func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
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
		st := &stubClient{onGet: func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
			return &dynamodb.GetItemOutput{Item: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "k"}, "ref": av}}, nil
		}}
		tb, _ := NewTable[rec](NewMapper(st), "T")
		if _, err := tb.Load(context.Background(), rec{ID: "k"}); err == nil || !strings.Contains(err.Error(), "tUUID") || !strings.Contains(err.Error(), `"ref"`) {
			t.Errorf("%s: err %v, want one naming tUUID and the attribute", name, err)
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
	st := &stubClient{}
	tb, _ := NewTable[rec](NewMapper(st), "T")
	if _, err := tb.Save(context.Background(), rec{ID: "k"}, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	if n, ok := st.puts[0].Item["b"].(*types.AttributeValueMemberN); !ok || n.Value != "7" {
		t.Errorf("b = %#v, want the DynamoDB marshaler's N 7", st.puts[0].Item["b"])
	}
	_, err := tb.Save(context.Background(), rec{ID: "k", PF: &failText{bad: true}}, WithSaveBehavior(SavePut))
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "MarshalText") || len(st.puts) != 1 {
		t.Errorf("failing MarshalText: %v (%d puts)", err, len(st.puts))
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
		ID   tUUID      `dynamo:"id,hash"`
		Addr netip.Addr `dynamo:"addr"`
	}
	type timed struct {
		ID tUUID     `dynamo:"id,hash"`
		At time.Time `dynamo:"at,unixtime"`
	}
	st := &stubClient{}
	m := NewMapper(st, WithEncoderOptions(func(o *attributevalue.EncoderOptions) { o.NullEmptySets = true }))
	tb, err := NewTable[plain](m, "T")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Save(context.Background(), plain{ID: tID1, Addr: netip.MustParseAddr("::1")}, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	if sAV(t, st.puts[0].Item["id"]) != tID1Text || sAV(t, st.puts[0].Item["addr"]) != "::1" {
		t.Errorf("item %#v", st.puts[0].Item)
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
		ID  tUUID      `dynamo:"id,hash"`
		Sub netip.Addr `dynamo:"sub,range"`
		V   int        `dynamo:"v,version"`
	}
	st := &stubClient{}
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
	st.onPut = func(*dynamodb.PutItemInput) (*dynamodb.PutItemOutput, error) {
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

// TextUUID is tUUID under an exported name, to embed.
type TextUUID = tUUID

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
	st := &stubClient{}
	tb, _ := NewTable[rec](NewMapper(st), "T")
	if _, err := tb.Save(context.Background(), rec{ID: "k", N: named{TextUUID: tID1, Name: "ada"}}, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	m, ok := st.puts[0].Item["n"].(*types.AttributeValueMemberM)
	if !ok || sAV(t, m.Value["name"]) != "ada" {
		t.Fatalf("n = %#v: the struct's fields must be kept", st.puts[0].Item["n"])
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
	st := &stubClient{}
	tb, err := NewTable[rec](NewMapper(st), "T")
	if err != nil {
		t.Fatal(err)
	}
	in := rec{ID: "k", J: jText{On: true}, Js: []jText{{On: true}, {}}}
	if _, err := tb.Save(context.Background(), in, WithSaveBehavior(SavePut)); err != nil {
		t.Fatal(err)
	}
	item := st.puts[0].Item
	if sAV(t, item["j"]) != "on" {
		t.Errorf("j = %#v", item["j"])
	}
	st.onGet = func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return &dynamodb.GetItemOutput{Item: item}, nil
	}
	got, err := tb.Load(context.Background(), rec{ID: "k"})
	if err != nil || !reflect.DeepEqual(got, in) {
		t.Errorf("loaded %+v, %v; want %+v", got, err, in)
	}
}
