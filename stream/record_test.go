package stream

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

type order struct {
	Customer string   `dynamo:"pk,hash"`
	ID       string   `dynamo:"sk,range"`
	Kind     string   `dynamo:"kind,entity=order"`
	Total    int64    `dynamo:"total"`
	Tags     []string `dynamo:"tags,set,omitempty"`
	Version  int64    `dynamo:"v,version"`
}

func offlineTable[T any](t *testing.T, name string) *dynamo.Table[T] {
	t.Helper()
	tb, err := dynamo.NewTable[T](dynamo.NewMapper(dynamotest.NewClient("http://127.0.0.1:1")), name)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func s(v string) st.AttributeValue { return &st.AttributeValueMemberS{Value: v} }
func n(v string) st.AttributeValue { return &st.AttributeValueMemberN{Value: v} }

func orderImage(kind, total, v string) map[string]st.AttributeValue {
	return map[string]st.AttributeValue{"pk": s("C#1"), "sk": s("O#1"), "kind": s(kind), "total": n(total), "v": n(v),
		"tags": &st.AttributeValueMemberSS{Value: []string{"a", "b"}}}
}

func TestModifyRecordDecodedIntoTaggedStruct(t *testing.T) {
	d := newDecoder(offlineTable[order](t, "Shop"))
	at := time.Unix(1700000000, 0)
	raw, err := fromStreams("shard-1", st.Record{EventID: aws.String("e1"), EventName: st.OperationTypeModify,
		Dynamodb: &st.StreamRecord{SequenceNumber: aws.String("000123"), ApproximateCreationDateTime: &at,
			Keys:     map[string]st.AttributeValue{"pk": s("C#1"), "sk": s("O#1")},
			OldImage: orderImage("order", "5", "2"), NewImage: orderImage("order", "7", "3")}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != Modify || r.Shard != "shard-1" || r.ID != "e1" || r.Seq.String() != "000123" || !r.Time.Equal(at) || r.TTL || r.Other {
		t.Fatalf("record %+v", r)
	}
	if r.Old == nil || r.New == nil || r.Old.Total != 5 || r.New.Total != 7 || len(r.New.Tags) != 2 || r.New.Kind != "order" {
		t.Fatalf("images %+v %+v", r.Old, r.New)
	}
	if r.OldVersion != 2 || r.NewVersion != 3 {
		t.Fatalf("versions %d -> %d, want 2 -> 3", r.OldVersion, r.NewVersion)
	}
}

func TestTTLRemoveMarked(t *testing.T) {
	d := newDecoder(offlineTable[order](t, "Shop"))
	raw, err := fromStreams("s", st.Record{EventID: aws.String("e2"), EventName: st.OperationTypeRemove,
		UserIdentity: &st.Identity{Type: aws.String("Service"), PrincipalId: aws.String("dynamodb.amazonaws.com")},
		Dynamodb:     &st.StreamRecord{SequenceNumber: aws.String("9"), OldImage: orderImage("order", "1", "4")}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.decode(raw)
	if err != nil || r.Kind != Remove || !r.TTL || r.New != nil || r.Old == nil || r.OldVersion != 4 || r.NewVersion != 0 {
		t.Fatalf("record %+v, %v", r, err)
	}
}

// An image of another entity of a single-table design is not decoded into
// T: Other is set and the raw images are kept.
func TestOtherEntityImageNotDecoded(t *testing.T) {
	d := newDecoder(offlineTable[order](t, "Shop"))
	raw, err := fromStreams("s", st.Record{EventID: aws.String("e3"), EventName: st.OperationTypeInsert,
		Dynamodb: &st.StreamRecord{SequenceNumber: aws.String("10"), NewImage: orderImage("customer", "1", "1")}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.decode(raw)
	if err != nil || !r.Other || r.New != nil || r.NewItem == nil {
		t.Fatalf("record %+v, %v", r, err)
	}
}

func TestUndecodableImageNamesRecordAndAttribute(t *testing.T) {
	d := newDecoder(offlineTable[order](t, "Shop"))
	img := orderImage("order", "1", "1")
	img["total"] = s("lots")
	raw, err := fromStreams("s", st.Record{EventID: aws.String("e4"), EventName: st.OperationTypeInsert,
		Dynamodb: &st.StreamRecord{SequenceNumber: aws.String("11"), NewImage: img}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.decode(raw); err == nil || !strings.Contains(err.Error(), "e4") || !strings.Contains(err.Error(), "total") {
		t.Fatalf("error %v: want the record and the attribute named", err)
	}
	if _, err := fromStreams("s", st.Record{EventID: aws.String("e5"), EventName: st.OperationTypeInsert,
		Dynamodb: &st.StreamRecord{SequenceNumber: aws.String("x1")}}); !errors.Is(err, ErrBadSequence) {
		t.Fatalf("bad sequence number: %v", err)
	}
}
