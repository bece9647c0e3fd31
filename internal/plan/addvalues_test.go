package plan

import (
	"math/big"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// float32Max, the bound of float32 counters, loads as math.MaxFloat32,
// and the next integer does not load.
func TestFloat32MaxIsTheLargestThatLoads(t *testing.T) {
	dec := func(s string) error {
		var f struct {
			F float32 `dynamo:"f"`
		}
		return attributevalue.UnmarshalMapWithOptions(map[string]types.AttributeValue{"f": &types.AttributeValueMemberN{Value: s}}, &f,
			func(o *attributevalue.DecoderOptions) { o.TagKey = "dynamo" })
	}
	if err := dec(float32Max.String()); err != nil {
		t.Errorf("float32Max %s does not load: %v", float32Max, err)
	}
	if err := dec(new(big.Int).Add(float32Max, big.NewInt(1)).String()); err == nil {
		t.Errorf("float32Max+1 loads into a float32")
	}
}
