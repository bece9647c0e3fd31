package dynamo

import (
	"context"
	"errors"
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

// TestBreak6EmbeddedTextKeepsFields: a struct that embeds a text type (or
// time.Time) gets its MarshalText by promotion; storing it as that text
// would silently drop its other fields. It stays a map of its fields, as
// before text types were stored as text.
func TestBreak6EmbeddedTextKeepsFields(t *testing.T) {
	type rec struct {
		ID  string  `dynamo:"id,hash"`
		Ref b6Ref   `dynamo:"ref"`
		At  b6Stamp `dynamo:"at"`
	}
	st := &stubClient{}
	tb, err := NewTable[rec](NewMapper(st), "T")
	if err != nil {
		t.Fatal(err)
	}
	in := rec{ID: "k", Ref: b6Ref{B6UUID: B6UUID(tID1), Name: "bob"}, At: b6Stamp{Time: time.Unix(5, 0), By: "me"}}
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
	if at, ok := item["at"].(*types.AttributeValueMemberM); !ok || sAV(t, at.Value["by"]) != "me" {
		t.Errorf("at = %#v, want a map holding by", item["at"])
	}
	st.onGet = func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return &dynamodb.GetItemOutput{Item: item}, nil
	}
	got, err := tb.Load(context.Background(), rec{ID: "k"})
	if err != nil || got.Ref != in.Ref || got.At.By != "me" {
		t.Errorf("loaded %+v, %v", got, err)
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
