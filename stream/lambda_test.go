package stream

import (
	"context"
	"encoding/json"
	"testing"
)

// An event as Lambda sends it (the shape of aws-lambda-go's
// events.DynamoDBEvent): decoded into the same Record[T] a Processor hands.
const lambdaEventJSON = `{"Records":[
 {"eventID":"1","eventName":"INSERT","eventSourceARN":"arn:aws:dynamodb:us-east-1:1:table/Shop/stream/x",
  "dynamodb":{"ApproximateCreationDateTime":1700000000,"Keys":{"pk":{"S":"C#1"},"sk":{"S":"O#1"}},
   "NewImage":{"pk":{"S":"C#1"},"sk":{"S":"O#1"},"kind":{"S":"order"},"total":{"N":"7"},"v":{"N":"1"},"tags":{"SS":["a"]}},
   "SequenceNumber":"000000000000000000111","SizeBytes":26,"StreamViewType":"NEW_AND_OLD_IMAGES"}},
 {"eventID":"2","eventName":"REMOVE",
  "dynamodb":{"Keys":{"pk":{"S":"C#1"},"sk":{"S":"O#1"}},
   "OldImage":{"pk":{"S":"C#1"},"sk":{"S":"O#1"},"kind":{"S":"order"},"total":{"N":"7"},"v":{"N":"1"},"m":{"M":{"x":{"L":[{"NULL":true},{"BOOL":true},{"B":"aGk="}]}}}},
   "SequenceNumber":"000000000000000000112"},
  "userIdentity":{"type":"Service","principalId":"dynamodb.amazonaws.com"}}]}`

func TestLambdaEventDecodedAsStreamRecords(t *testing.T) {
	var ev LambdaEvent
	if err := json.Unmarshal([]byte(lambdaEventJSON), &ev); err != nil {
		t.Fatal(err)
	}
	recs, err := LambdaRecords(offlineTable[order](t, "Shop"), &ev)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	in, rm := recs[0], recs[1]
	if in.Kind != Insert || in.New == nil || in.New.Total != 7 || in.NewVersion != 1 || in.Seq.String() != "000000000000000000111" || in.Time.Unix() != 1700000000 || in.TTL {
		t.Fatalf("insert %+v", in)
	}
	if rm.Kind != Remove || rm.Old == nil || !rm.TTL || rm.OldVersion != 1 || rm.Seq.Compare(in.Seq) <= 0 {
		t.Fatalf("remove %+v", rm)
	}
}

// One handler type serves a Processor and a Lambda function.
func TestOneHandlerForLambdaAndProcessor(t *testing.T) {
	var seen []Kind
	var h Handler[order] = func(ctx context.Context, b *Batch[order]) error {
		for _, r := range b.Records {
			seen = append(seen, r.Kind)
		}
		if b.Lease() != nil {
			t.Error("a Lambda batch has no lease")
		}
		return nil
	}
	var ev LambdaEvent
	if err := json.Unmarshal([]byte(lambdaEventJSON), &ev); err != nil {
		t.Fatal(err)
	}
	if err := LambdaHandler(offlineTable[order](t, "Shop"), h)(context.Background(), &ev); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0] != Insert || seen[1] != Remove {
		t.Fatalf("seen %v", seen)
	}
}

func TestLambdaBadValueRefused(t *testing.T) {
	for _, bad := range []string{`{"a":{"S":"x","N":"1"}}`, `{"a":{"Q":"x"}}`, `{"a":{"B":"!!"}}`} {
		var it LambdaItem
		if err := json.Unmarshal([]byte(bad), &it); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}
