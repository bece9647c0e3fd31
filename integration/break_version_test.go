package integration

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// A uint64 version at MaxInt64: the mapper refuses to go further (it keeps
// versions in int64), and tells the user to "widen" the uint64 field to
// int64 — a narrower type that would not help. The error must say what
// the real limit is (the mapper's int64), not send the user to int64.
func TestBreakUint64VersionLimitMessage(t *testing.T) {
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "u64", "id", types.ScalarAttributeTypeS, "", "")
	c := ctx(t)
	rawPut(t, name, map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: "b"}, "v": &types.AttributeValueMemberN{Value: strconv.FormatInt(math.MaxInt64, 10)},
	})
	big, _ := dynamo.NewTable[bigVersion](dynamo.NewMapper(dynamotest.Client(t)), name)
	_, err := big.Save(c, bigVersion{ID: "b", V: math.MaxInt64})
	if err == nil {
		t.Fatal("Save holding MaxInt64 succeeded")
	}
	if strings.Contains(err.Error(), "widen it (int64)") || strings.Contains(err.Error(), "use int64") {
		t.Errorf("Save holding MaxInt64 in a uint64: %v; tells the user to widen a uint64 to int64", err)
	}
	_, err = big.Save(c, bigVersion{ID: "b"}, dynamo.WithSaveBehavior(dynamo.SaveClobber))
	if err == nil {
		t.Fatal("SaveClobber over MaxInt64 succeeded")
	}
	if strings.Contains(err.Error(), "widen it (int64)") {
		t.Errorf("SaveClobber over MaxInt64 in a uint64: %v; tells the user to widen a uint64 to int64", err)
	}
}

// The write-token attribute holds a value that is not binary — the name is
// also used by another writer (WithWriteTokenAttribute("etag") on items
// another service stamps with an S etag), or a tool rewrote it. Update's pin
// for such a basis is attribute_not_exists(#wt), which can never hold:
// with nobody else writing, every attempt fails and Update gives up after
// MaxAttempts (100 by default), calling fn each time, instead of
// writing or saying what is wrong.
func TestBreakUpdateForeignTokenType(t *testing.T) {
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "wt", "id", types.ScalarAttributeTypeS, "", "")
	c := ctx(t)
	rawPut(t, name, map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: "k"}, "v": &types.AttributeValueMemberN{Value: "1"},
		dynamo.DefaultWriteTokenAttribute: &types.AttributeValueMemberS{Value: "not-binary"},
	})
	tb, _ := dynamo.NewTable[incJob](dynamo.NewMapper(dynamotest.Client(t),
		dynamo.WithRetry(dynamo.RetryPolicy{MaxAttempts: 5, BackoffBase: time.Nanosecond, BackoffMax: time.Nanosecond})), name)
	calls := 0
	got, err := tb.Update(c, incJob{ID: "k"}, func(j incJob) (incJob, error) {
		calls++
		j.Owner = "me"
		return j, nil
	})
	if err != nil && !errors.Is(err, dynamo.ErrInvalidInput) {
		t.Fatalf("Update of an item nobody else writes = %+v, %v after %d calls of fn; want success (or a clear error at once)", got, err, calls)
	}
}
