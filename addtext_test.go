package dynamo

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/codec/codectest"
)

// textSets has `set` fields of text types: a string kind, an integer kind.
type textSets struct {
	ID    string         `dynamo:"id,hash"`
	Codes []tCode        `dynamo:"codes,set"`
	Lvls  []tLevel       `dynamo:"lvls,set"`
	Lvl   tLevel         `dynamo:"lvl"`
	Owner codectest.UUID `dynamo:"owner"`
	Plain []string       `dynamo:"plain,set"`
	V     int64          `dynamo:"v,version"`
}

func addTextStub() *fakeDB {
	return &fakeDB{noStore: true, onUpd: func(int, *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		return &dynamodb.UpdateItemOutput{Attributes: map[string]types.AttributeValue{"id": str("a"), "v": n("2")}}, nil
	}}
}

// addedValue returns the value an Add sent for attribute attr (in ADD or
// DELETE).
func addedValue(t *testing.T, in *dynamodb.UpdateItemInput, attr string) types.AttributeValue {
	t.Helper()
	for ph, name := range in.ExpressionAttributeNames {
		if name != attr {
			continue
		}
		u := *in.UpdateExpression
		i := strings.Index(u, ph+" :")
		if i < 0 {
			continue
		}
		rest := u[i+len(ph)+1:]
		end := strings.IndexAny(rest, " ,")
		if end < 0 {
			end = len(rest)
		}
		return in.ExpressionAttributeValues[rest[:end]]
	}
	t.Fatalf("no value for %q in %q", attr, *in.UpdateExpression)
	return nil
}

// TestAddTextSet: AddToSet and DeleteFromSet of values of a text type on a
// `set` field of that type send the values' text as a string set (SS), as
// the field is stored; strings are sent as they are.
func TestAddTextSet(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		delta Delta
		attr  string
		want  types.AttributeValue
	}{
		{"string-kind text", AddToSet("codes", []tCode{"ab", "cd"}), "codes", &types.AttributeValueMemberSS{Value: []string{"AB", "CD"}}},
		{"strings as they are", AddToSet("codes", []string{"ab"}), "codes", &types.AttributeValueMemberSS{Value: []string{"ab"}}},
		{"pointers", AddToSet("codes", []*tCode{ptrTo(tCode("x"))}), "codes", &types.AttributeValueMemberSS{Value: []string{"X"}}},
		{"int-kind text", AddToSet("lvls", []tLevel{1, 2}), "lvls", &types.AttributeValueMemberSS{Value: []string{"info", "warn"}}},
		{"delete", DeleteFromSet("lvls", []tLevel{2}), "lvls", &types.AttributeValueMemberSS{Value: []string{"warn"}}},
		{"text into a plain string set", AddToSet("plain", []tCode{"q"}), "plain", &types.AttributeValueMemberSS{Value: []string{"Q"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := addTextStub()
			tb, err := NewTable[textSets](NewMapper(c), "sets")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tb.Add(ctx, textSets{ID: "a"}, tc.delta); err != nil {
				t.Fatalf("Add: %v", err)
			}
			if got := addedValue(t, c.upds()[0], tc.attr); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("sent %s, want %s", avString(got), avString(tc.want))
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestAddTextRefused: Increment of a text attribute, and set elements a
// text set cannot hold (their MarshalText fails, or the field's type's
// UnmarshalText refuses their text), are refused before anything is sent.
func TestAddTextRefused(t *testing.T) {
	for _, tc := range []struct {
		delta Delta
		want  string
	}{
		{Increment("lvl", 1), "stored as text"},
		{Increment("owner", 1), "stored as text"},
		{AddToSet("lvls", []tLevel{1, 9}), "element [1]: dynamo.tLevel.MarshalText: no level 9"},
		{AddToSet("lvls", []int{1}), "element [0] is a int"},
		{AddToSet("lvls", tLevel(1)), "pass a slice"},
		// Text the field's type does not read back (stored, the item
		// would not load).
		{AddToSet("lvls", []string{"info", "nonsense"}), `element [1] "nonsense" is no dynamo.tLevel: dynamo.tLevel.UnmarshalText: no level "nonsense"`},
		{DeleteFromSet("lvls", []any{tLevel(2), tCode("ab")}), `element [1] (a dynamo.tCode) "AB" is no dynamo.tLevel`},
	} {
		c := addTextStub()
		tb, err := NewTable[textSets](NewMapper(c), "sets")
		if err != nil {
			t.Fatal(err)
		}
		_, err = tb.Add(context.Background(), textSets{ID: "a"}, tc.delta)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add = %v, want ErrInvalidInput saying %q", err, tc.want)
		}
		if len(c.upds()) > 0 {
			t.Error("a request was sent")
		}
	}
}

// textUUIDSet has a `set` of uuid-style [16]byte values.
type textUUIDSet struct {
	ID   string           `dynamo:"id,hash"`
	Tags []codectest.UUID `dynamo:"tags,set"`
}

// TestAddUUIDSet: AddToSet of uuids on a `set` field of uuids sends their
// text (SS); one uuid, binary values, or a string that is no uuid's text,
// are refused.
func TestAddUUIDSet(t *testing.T) {
	c := addTextStub()
	tb, err := NewTable[textUUIDSet](NewMapper(c), "uuidsets")
	if err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := tb.Add(ctx, textUUIDSet{ID: "a"}, AddToSet("tags", []codectest.UUID{uuid1})); err != nil {
		t.Fatalf("Add: %v", err)
	}
	if got, want := addedValue(t, c.upds()[0], "tags"), (&types.AttributeValueMemberSS{Value: []string{uuid1Text}}); !reflect.DeepEqual(got, want) {
		t.Errorf("sent %s, want %s", avString(got), avString(want))
	}
	for _, d := range []Delta{AddToSet("tags", uuid1), AddToSet("tags", [][]byte{uuid1[:]}), DeleteFromSet("tags", []any{uuid1, 1}), AddToSet("tags", []string{"not a uuid"})} {
		if _, err := tb.Add(ctx, textUUIDSet{ID: "a"}, d); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("Add = %v, want ErrInvalidInput", err)
		}
	}
	if len(c.upds()) != 1 {
		t.Errorf("%d requests sent", len(c.upds()))
	}
}
