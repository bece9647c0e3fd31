package dynamo

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// clockCounter has a version that starts at the clock (milliseconds) and
// a uint field, for the first version written over a stored 0.
type clockCounter struct {
	ID string `dynamo:"id,hash"`
	N  int64  `dynamo:"n"`
	V  uint64 `dynamo:"v,version,versionstart=clock,versionstep=1000"`
}

// TestFirstVersionOverEverySpellingOfZero pins that SaveClobber and Add
// write the first version (versionstart) over a stored version 0 however
// DynamoDB was given it ("0.0", "0E5", "-0", "000"), for an int64 field
// with versionstart=100 and a uint64 field with versionstart=clock; and
// that a version stored as a string (another writer's, not a number) is
// left as it is, the call failing, rather than written over.
func TestFirstVersionOverEverySpellingOfZero(t *testing.T) {
	tb, fc := idTable[stepCounter](t)
	ctb, err := NewTable[clockCounter](tb.Mapper(), tb.Name())
	if err != nil {
		t.Fatal(err)
	}
	c := tb.Mapper().Client()
	ctx := t.Context()
	put := func(id string, v types.AttributeValue) {
		t.Helper()
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tb.Name()), Item: map[string]types.AttributeValue{
			"id": str(id), "n": numberAV(5), "v": v}}); err != nil {
			t.Fatalf("put %s: %v", id, err)
		}
	}
	clockFirst := uint64(fc.Now().UnixMilli())
	for _, zero := range []string{"0", "0.0", "0E5", "-0", "000", "0e-3"} {
		for _, call := range []string{"Add", "SaveClobber", "clock Add", "clock SaveClobber"} {
			id := call + " " + zero
			put(id, &types.AttributeValueMemberN{Value: zero})
			var got, want uint64
			switch call {
			case "Add":
				r, err := tb.Add(ctx, stepCounter{ID: id}, Increment("n", 1))
				got, want = uint64(r.V), 100
				if err != nil {
					t.Errorf("%s: %v", id, err)
				}
			case "SaveClobber":
				r, err := tb.Save(ctx, stepCounter{ID: id, N: 9}, WithSaveBehavior(SaveClobber))
				got, want = uint64(r.V), 100
				if err != nil {
					t.Errorf("%s: %v", id, err)
				}
			case "clock Add":
				r, err := ctb.Add(ctx, clockCounter{ID: id}, Increment("n", 1))
				got, want = r.V, clockFirst
				if err != nil {
					t.Errorf("%s: %v", id, err)
				}
			case "clock SaveClobber":
				r, err := ctb.Save(ctx, clockCounter{ID: id, N: 9}, WithSaveBehavior(SaveClobber))
				got, want = r.V, clockFirst
				if err != nil {
					t.Errorf("%s: %v", id, err)
				}
			}
			stored, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tb.Name()), Key: map[string]types.AttributeValue{"id": str(id)}, ConsistentRead: aws.Bool(true)})
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s over stored %q: version %d, want %d (stored %v)", call, zero, got, want, stored.Item["v"])
			}
		}
	}
	for _, call := range []string{"Add", "SaveClobber"} {
		id := call + " string version"
		put(id, str("0"))
		var err error
		if call == "Add" {
			_, err = tb.Add(ctx, stepCounter{ID: id}, Increment("n", 1))
		} else {
			_, err = tb.Save(ctx, stepCounter{ID: id, N: 9}, WithSaveBehavior(SaveClobber))
		}
		if err == nil || errors.Is(err, ErrUnknownOutcome) {
			t.Errorf("%s over a version stored as a string: %v, want a failure", call, err)
		} else {
			t.Logf("%s over a version stored as a string: %v", call, err)
		}
		stored, gerr := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tb.Name()), Key: map[string]types.AttributeValue{"id": str(id)}, ConsistentRead: aws.Bool(true)})
		if gerr != nil {
			t.Fatal(gerr)
		}
		if s, ok := stored.Item["v"].(*types.AttributeValueMemberS); !ok || s.Value != "0" {
			t.Errorf("%s over a version stored as a string: stored %v", call, stored.Item)
		}
	}
}
