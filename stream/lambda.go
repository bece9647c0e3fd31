package stream

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
)

// LambdaEvent is the event a Lambda function triggered by a DynamoDB stream
// receives, as JSON: the shape of aws-lambda-go's events.DynamoDBEvent,
// without depending on it. Lambda's Go runtime decodes it for a handler
// taking a *LambdaEvent (see LambdaHandler).
type LambdaEvent struct {
	Records []LambdaRecord `json:"Records"`
}

// LambdaRecord is one record of a LambdaEvent.
type LambdaRecord struct {
	EventID        string          `json:"eventID"`
	EventName      string          `json:"eventName"` // INSERT, MODIFY, REMOVE
	EventSourceARN string          `json:"eventSourceARN"`
	Change         LambdaChange    `json:"dynamodb"`
	UserIdentity   *LambdaIdentity `json:"userIdentity,omitempty"`
}

// LambdaChange is a LambdaRecord's change.
type LambdaChange struct {
	ApproximateCreationDateTime float64    `json:"ApproximateCreationDateTime"` // epoch seconds
	Keys                        LambdaItem `json:"Keys,omitempty"`
	NewImage                    LambdaItem `json:"NewImage,omitempty"`
	OldImage                    LambdaItem `json:"OldImage,omitempty"`
	SequenceNumber              string     `json:"SequenceNumber"`
	SizeBytes                   int64      `json:"SizeBytes"`
	StreamViewType              string     `json:"StreamViewType"`
}

// LambdaIdentity says who made a change: DynamoDB's TTL is type "Service",
// principal "dynamodb.amazonaws.com".
type LambdaIdentity struct {
	Type        string `json:"type"`
	PrincipalID string `json:"principalId"`
}

// LambdaItem is an item in DynamoDB's JSON ({"S": "x"}, {"N": "1"}, ...).
type LambdaItem map[string]types.AttributeValue

// UnmarshalJSON decodes an item in DynamoDB's JSON.
func (it *LambdaItem) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		*it = nil
		return nil
	}
	out := make(LambdaItem, len(raw))
	for k, v := range raw {
		av, err := jsonValue(v, 0)
		if err != nil {
			return fmt.Errorf("attribute %q: %w", k, err)
		}
		out[k] = av
	}
	*it = out
	return nil
}

// jsonValue decodes one attribute value in DynamoDB's JSON.
func jsonValue(b json.RawMessage, depth int) (types.AttributeValue, error) {
	if depth > 32 {
		return nil, errors.New("nested deeper than DynamoDB's 32 levels")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if len(m) != 1 {
		return nil, fmt.Errorf("an attribute value has one type key, not %d", len(m))
	}
	for k, v := range m {
		switch k {
		case "BS":
			return jsonBinarySet(v)
		case "L":
			return jsonList(v, depth)
		case "M":
			return jsonMap(v, depth)
		}
		return jsonScalar(k, v)
	}
	return nil, nil // unreachable
}

// jsonScalar reads the value v of type key k: a string, number, binary,
// boolean, null, or a string or number set.
func jsonScalar(k string, v json.RawMessage) (types.AttributeValue, error) {
	switch k {
	case "S":
		var s string
		err := json.Unmarshal(v, &s)
		return &types.AttributeValueMemberS{Value: s}, err
	case "N":
		var s string
		err := json.Unmarshal(v, &s)
		return &types.AttributeValueMemberN{Value: s}, err
	case "B":
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, err
		}
		d, err := base64.StdEncoding.DecodeString(s)
		return &types.AttributeValueMemberB{Value: d}, err
	case "BOOL":
		var x bool
		err := json.Unmarshal(v, &x)
		return &types.AttributeValueMemberBOOL{Value: x}, err
	case "NULL":
		var x bool
		err := json.Unmarshal(v, &x)
		return &types.AttributeValueMemberNULL{Value: x}, err
	case "SS", "NS":
		var x []string
		err := json.Unmarshal(v, &x)
		if k == "SS" {
			return &types.AttributeValueMemberSS{Value: x}, err
		}
		return &types.AttributeValueMemberNS{Value: x}, err
	}
	return nil, fmt.Errorf("unknown attribute type %q", k)
}

// jsonBinarySet reads a BS value: base64 strings.
func jsonBinarySet(v json.RawMessage) (types.AttributeValue, error) {
	var x []string
	if err := json.Unmarshal(v, &x); err != nil {
		return nil, err
	}
	out := make([][]byte, len(x))
	for i, s := range x {
		d, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return &types.AttributeValueMemberBS{Value: out}, nil
}

// jsonList reads an L value whose elements sit at depth+1.
func jsonList(v json.RawMessage, depth int) (types.AttributeValue, error) {
	var x []json.RawMessage
	if err := json.Unmarshal(v, &x); err != nil {
		return nil, err
	}
	out := make([]types.AttributeValue, len(x))
	for i, e := range x {
		av, err := jsonValue(e, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = av
	}
	return &types.AttributeValueMemberL{Value: out}, nil
}

// jsonMap reads an M value whose members sit at depth+1.
func jsonMap(v json.RawMessage, depth int) (types.AttributeValue, error) {
	var x map[string]json.RawMessage
	if err := json.Unmarshal(v, &x); err != nil {
		return nil, err
	}
	out := make(map[string]types.AttributeValue, len(x))
	for mk, e := range x {
		av, err := jsonValue(e, depth+1)
		if err != nil {
			return nil, err
		}
		out[mk] = av
	}
	return &types.AttributeValueMemberM{Value: out}, nil
}

// LambdaRecords decodes the records of a Lambda event into Record[T] with
// table's codec, as a Processor decodes the stream's: the same kinds,
// images, versions, TTL flag and sequence numbers.
func LambdaRecords[T any](table *dynamo.Table[T], ev *LambdaEvent) ([]Record[T], error) {
	if table == nil {
		return nil, fmt.Errorf("%w: stream.LambdaRecords with a nil table", dynamo.ErrInvalidInput)
	}
	if ev == nil {
		return nil, nil
	}
	d := newDecoder(table)
	out := make([]Record[T], 0, len(ev.Records))
	for _, r := range ev.Records {
		raw := rawRecord{id: r.EventID, keys: r.Change.Keys, old: r.Change.OldImage, new: r.Change.NewImage}
		switch r.EventName {
		case "INSERT":
			raw.kind = Insert
		case "MODIFY":
			raw.kind = Modify
		case "REMOVE":
			raw.kind = Remove
		default:
			return nil, fmt.Errorf("dynamo: stream: Lambda record %s: unknown event %q", r.EventID, r.EventName)
		}
		var err error
		if raw.seq, err = ParseSequenceNumber(r.Change.SequenceNumber); err != nil {
			return nil, fmt.Errorf("dynamo: stream: Lambda record %s: %w", r.EventID, err)
		}
		if s := r.Change.ApproximateCreationDateTime; s > 0 {
			sec, frac := math.Modf(s)
			raw.at = time.Unix(int64(sec), int64(frac*1e9))
		}
		if u := r.UserIdentity; u != nil {
			raw.ttl = u.Type == "Service" && u.PrincipalID == "dynamodb.amazonaws.com"
		}
		rec, err := d.decode(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// LambdaHandler adapts h, the handler a Processor runs, to a Lambda
// function's handler: lambda.Start(stream.LambdaHandler(orders, h)). The
// ops h passes to Batch.Write are written in one transaction (at most 100)
// after h returns; there is no checkpoint and no lease (Batch.Lease is
// nil): Lambda hands the batch again when the function fails, so effects
// are at least once — make them idempotent (a condition on the sequence
// number stored on the target).
func LambdaHandler[T any](table *dynamo.Table[T], h Handler[T]) func(ctx context.Context, ev *LambdaEvent) error {
	return func(ctx context.Context, ev *LambdaEvent) error {
		if h == nil {
			return fmt.Errorf("%w: stream.LambdaHandler with a nil handler", dynamo.ErrInvalidInput)
		}
		recs, err := LambdaRecords(table, ev)
		if err != nil || len(recs) == 0 {
			return err
		}
		b := &Batch[T]{Records: recs}
		if err := h(ctx, b); err != nil {
			return err
		}
		if len(b.ops) == 0 {
			return nil
		}
		return table.Mapper().WriteTx(ctx, b.ops)
	}
}
