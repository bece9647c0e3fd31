package av

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Clone makes a value equal to its original that shares nothing a caller
// may change: changing every map, list, set and byte slice of the copy
// leaves the original as it was.
func TestCloneSharesNothing(t *testing.T) {
	orig := func() types.AttributeValue {
		return &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{
				&types.AttributeValueMemberB{Value: []byte("ab")},
				&types.AttributeValueMemberSS{Value: []string{"a"}},
				&types.AttributeValueMemberNS{Value: []string{"1"}},
				&types.AttributeValueMemberBS{Value: [][]byte{[]byte("c")}},
			}},
			"s": &types.AttributeValueMemberS{Value: "x"},
			"n": &types.AttributeValueMemberNULL{Value: true},
		}}
	}
	a := orig()
	c := Clone(a)
	if !Equal(a, c) {
		t.Fatalf("Clone(%v) = %v, not equal", a, c)
	}
	cm := c.(*types.AttributeValueMemberM).Value
	l := cm["l"].(*types.AttributeValueMemberL).Value
	l[0].(*types.AttributeValueMemberB).Value[0] = 'z'
	l[1].(*types.AttributeValueMemberSS).Value[0] = "z"
	l[2].(*types.AttributeValueMemberNS).Value[0] = "9"
	l[3].(*types.AttributeValueMemberBS).Value[0][0] = 'z'
	cm["s"] = &types.AttributeValueMemberS{Value: "changed"}
	if !Equal(a, orig()) {
		t.Fatalf("changing the copy changed the original: %v", a)
	}
	if Clone(nil) != nil || CloneItem(nil) != nil {
		t.Fatal("Clone of nil is not nil")
	}
}
