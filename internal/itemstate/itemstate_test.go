package itemstate

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Every state is expressible for a schema with a version, a token and an
// entity; each present state keeps the key and the type's attributes, and
// the version states differ from one another in the version attribute.
func TestStatesCoverEveryKind(t *testing.T) {
	s := Schema{Version: "v", Token: "wt", Entity: "kind", Name: "order", Attrs: map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "5"}}}
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}}
	got := map[Kind]map[string]types.AttributeValue{}
	for _, st := range States(s) {
		item := st.Item(key)
		if st.Present() != (item != nil) {
			t.Fatalf("%s: Present %v, item %v", st, st.Present(), item)
		}
		if item != nil && item["pk"] == nil {
			t.Fatalf("%s: no key in %v", st, item)
		}
		got[st.Kind] = item
	}
	for _, k := range []Kind{Absent, Version0, NoVersion, NullVersion, OtherEntity, ForeignToken, NumberSpelling} {
		if _, ok := got[k]; !ok {
			t.Errorf("state %s missing", k)
		}
	}
	if _, ok := got[NoVersion]["v"]; ok {
		t.Errorf("no version attribute: %v", got[NoVersion])
	}
	if _, ok := got[NullVersion]["v"].(*types.AttributeValueMemberNULL); !ok {
		t.Errorf("NULL version: %v", got[NullVersion])
	}
	if n := got[NumberSpelling]["n"].(*types.AttributeValueMemberN).Value; n != "5E0" {
		t.Errorf("number spelling: %s", n)
	}
	if len(key) != 1 {
		t.Errorf("key modified: %v", key)
	}
	// Without a version, token or entity only absence and spelling apply.
	if n := len(States(Schema{})); n != 2 {
		t.Errorf("states of a bare schema: %d, want 2", n)
	}
	if Pick(s, -1).Kind != States(s)[len(States(s))-1].Kind {
		t.Errorf("Pick(-1)")
	}
}
