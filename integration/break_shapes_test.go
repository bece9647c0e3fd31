package integration

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// Update creating an item of a type without a version, with SavePut,
// SaveUpdateSkipNulls or SaveAppendSet: the guard of an absent item is
// "attribute_not_exists(#kh)", but the request carries the names of every
// modeled attribute (basisNames); those the write does not use (all of them
// for PutItem; nil/omitted ones for SkipNulls/AppendSet) make DynamoDB
// refuse the request ("Value provided in ExpressionAttributeNames unused
// in expressions"). Update can never create such an item.
func TestBreakUnversionedUpdateCreate(t *testing.T) {
	for _, b := range []dynamo.SaveBehavior{dynamo.SavePut, dynamo.SaveUpdateSkipNulls, dynamo.SaveAppendSet} {
		t.Run(b.String(), func(t *testing.T) {
			name := dynamotest.KeyTable(t, dynamotest.Client(t), "uc", "id", types.ScalarAttributeTypeS, "", "")
			tb, err := dynamo.NewTable[unversionedCounter](dynamo.NewMapper(dynamotest.Client(t)), name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tb.Update(ctx(t), unversionedCounter{ID: "c"}, func(c unversionedCounter) (unversionedCounter, error) {
				c.N++
				return c, nil
			}, dynamo.WithSaveBehavior(b))
			if err != nil || got.N != 1 {
				t.Fatalf("Update creating an unversioned item with %v = %+v, %v", b, got, err)
			}
		})
	}
}
