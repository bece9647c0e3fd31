package dynamo

import (
	"context"
	"errors"
	"math/big"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

type b2Big struct {
	ID string   `dynamo:"id,hash"`
	A  any      `dynamo:"a"`
	B  *big.Int `dynamo:"b"`
}

// break2: a *big.Int (or *big.Float, or any struct with only unexported
// fields) in a field or inside `any` is encoded as an empty map {}: Save
// succeeds, the number is lost, and the caller's copy still shows it. The
// same class as issue 12 item 6 (func/chan in `any` silently dropped). Want:
// stored as the number, or ErrInvalidInput naming the field.
func TestBreak2BigNumberNotLost(t *testing.T) {
	for name, v := range map[string]b2Big{
		"*big.Int field":    {ID: "a", B: big.NewInt(5)},
		"*big.Int in any":   {ID: "a", A: big.NewInt(12345)},
		"*big.Float in any": {ID: "a", A: big.NewFloat(1.5)},
	} {
		st := &stubClient{}
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
		item := st.puts[0].Item
		for _, k := range []string{"a", "b"} {
			if m, ok := item[k].(*types.AttributeValueMemberM); ok && len(m.Value) == 0 {
				t.Errorf("%s: attribute %q stored as {}: the number is lost, no error", name, k)
			}
		}
	}
}
