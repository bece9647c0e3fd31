package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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

// FuzzLambdaItem: DynamoDB's JSON either fails to decode or decodes to an
// item that, written back as DynamoDB's JSON, decodes to the same item.
func FuzzLambdaItem(f *testing.F) {
	for _, s := range []string{`{"a":{"S":"x"}}`, `{"a":{"M":{"b":{"L":[{"N":"1"},{"NULL":true}]}}}}`,
		`{"a":{"BS":["aGk="]},"b":{"SS":["x"]},"c":{"NS":["1"]},"d":{"BOOL":false},"e":{"B":""}}`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var it LambdaItem
		if json.Unmarshal([]byte(s), &it) != nil {
			return
		}
		b, err := json.Marshal(itemJSON(it))
		if err != nil {
			t.Fatal(err)
		}
		var again LambdaItem
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatalf("%s: re-encoded %s does not decode: %v", s, b, err)
		}
		if !reflect.DeepEqual(it, again) {
			t.Fatalf("%s: decoded %#v, re-encoded %s decodes to %#v", s, it, b, again)
		}
	})
}

// itemJSON is it in DynamoDB's JSON, as encoding/json marshals it.
func itemJSON(it LambdaItem) map[string]any {
	if it == nil {
		return nil
	}
	out := make(map[string]any, len(it))
	for k, v := range it {
		out[k] = valueJSON(v)
	}
	return out
}

func valueJSON(av types.AttributeValue) map[string]any {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *types.AttributeValueMemberB:
		return map[string]any{"B": v.Value} // []byte marshals as base64
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": v.Value}
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}
	case *types.AttributeValueMemberBS:
		return map[string]any{"BS": v.Value}
	case *types.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			l[i] = valueJSON(e)
		}
		return map[string]any{"L": l}
	case *types.AttributeValueMemberM:
		return map[string]any{"M": itemJSON(v.Value)}
	}
	panic(fmt.Sprintf("unknown attribute value %T", av))
}
