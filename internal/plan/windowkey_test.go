package plan

import (
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/schema"
)

type windowBook struct {
	ISBN string `dynamo:"ISBN,hash"`
}

type windowOwn struct {
	ISBN string   `dynamo:"ISBN,hash"`
	Keys []string `dynamo:"ddbkit_idem"`
}

// A key is recorded when it is 1 to MaxKeyLen bytes of UTF-8, the token
// attribute is elsewhere and the type does not model the window; each
// refusal names its fix.
func TestCheckWindowKeyRefusesWhatCannotBeRecorded(t *testing.T) {
	s, err := schema.For(reflect.TypeFor[windowBook]())
	if err != nil {
		t.Fatal(err)
	}
	own, err := schema.For(reflect.TypeFor[windowOwn]())
	if err != nil {
		t.Fatal(err)
	}
	if why := CheckWindowKey(s, "tok", strings.Repeat("k", MaxKeyLen)); why != "" {
		t.Errorf("a key of %d bytes: %s", MaxKeyLen, why)
	}
	for name, c := range map[string]struct {
		s          *schema.Schema
		token, key string
		want       string
	}{
		"empty":        {s, "tok", "", "the key is empty"},
		"long":         {s, "tok", strings.Repeat("k", MaxKeyLen+1), "129 bytes"},
		"not UTF-8":    {s, "tok", "\xff", "not valid UTF-8"},
		"token":        {s, WindowAttr, "k", "WithWriteTokenAttribute"},
		"type's field": {own, "tok", "k", "field Keys is stored as"},
	} {
		if why := CheckWindowKey(c.s, c.token, c.key); !strings.Contains(why, c.want) {
			t.Errorf("%s: %q; want it to say %q", name, why, c.want)
		}
	}
}

// WindowKeys reads a list of strings, takes no window (or NULL) as none,
// and refuses anything else stored under the window's name.
func TestWindowKeysReadsOnlyAListOfStrings(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	keys, ok := WindowKeys(map[string]types.AttributeValue{WindowAttr: &types.AttributeValueMemberL{Value: []types.AttributeValue{s("a"), s("b")}}})
	if !ok || !reflect.DeepEqual(keys, []string{"a", "b"}) {
		t.Errorf("list: %v %v", keys, ok)
	}
	for _, item := range []map[string]types.AttributeValue{nil, {WindowAttr: &types.AttributeValueMemberNULL{Value: true}}} {
		if keys, ok := WindowKeys(item); keys != nil || !ok {
			t.Errorf("%v: %v %v; want none", item, keys, ok)
		}
	}
	for _, bad := range []types.AttributeValue{s("a"), &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberN{Value: "1"}}}} {
		if _, ok := WindowKeys(map[string]types.AttributeValue{WindowAttr: bad}); ok {
			t.Errorf("%#v taken as a window", bad)
		}
	}
}
