package stream

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/ddbkit/dynamo"
)

// Kind is what a record's change did to its item.
type Kind int

const (
	Insert Kind = iota + 1 // the item was created
	Modify                 // the item was changed
	Remove                 // the item was deleted
)

func (k Kind) String() string {
	switch k {
	case Insert:
		return "insert"
	case Modify:
		return "modify"
	case Remove:
		return "remove"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Record is one change of a table's stream, its images decoded into T by the
// table's codec.
type Record[T any] struct {
	Kind  Kind
	Shard string // "" for a Lambda event's record
	Seq   SequenceNumber
	ID    string    // the record's event id
	Time  time.Time // approximately when the change was made (second precision)
	Keys  map[string]types.AttributeValue
	// Old and New are the item before and after the change, decoded into
	// T; nil when the stream's view does not carry that image, the change
	// has none (Old of an Insert, New of a Remove), or the image is of
	// another entity (Other).
	Old, New *T
	// OldItem and NewItem are the images as stored (nil when absent).
	OldItem, NewItem map[string]types.AttributeValue
	// Other: an image is of another entity than T's (entity=): Old and New
	// are nil; OldItem and NewItem hold it.
	Other bool
	// OldVersion and NewVersion are the images' version attributes (0
	// when absent or T has no version): a gap between one record's
	// NewVersion and the next's OldVersion would be a change not seen.
	OldVersion, NewVersion int64
	// TTL: the item was deleted by DynamoDB's time to live, not a writer.
	TTL bool
}

// rawRecord is a stream record in the dynamodb package's attribute types,
// from the streams API or a Lambda event.
type rawRecord struct {
	kind           Kind
	shard, id      string
	seq            SequenceNumber
	at             time.Time
	keys, old, new map[string]types.AttributeValue
	ttl            bool
}

// fromStreams converts a record of the streams API.
func fromStreams(shard string, r st.Record) (rawRecord, error) {
	out := rawRecord{shard: shard, id: str(r.EventID)}
	switch r.EventName {
	case st.OperationTypeInsert:
		out.kind = Insert
	case st.OperationTypeModify:
		out.kind = Modify
	case st.OperationTypeRemove:
		out.kind = Remove
	default:
		return out, fmt.Errorf("dynamo: stream: shard %s record %s: unknown event %q", shard, out.id, r.EventName)
	}
	d := r.Dynamodb
	if d == nil {
		return out, fmt.Errorf("dynamo: stream: shard %s record %s carries no change", shard, out.id)
	}
	var err error
	if out.seq, err = ParseSequenceNumber(str(d.SequenceNumber)); err != nil {
		return out, fmt.Errorf("dynamo: stream: shard %s record %s: %w", shard, out.id, err)
	}
	if d.ApproximateCreationDateTime != nil {
		out.at = *d.ApproximateCreationDateTime
	}
	out.keys, out.old, out.new = itemOf(d.Keys), itemOf(d.OldImage), itemOf(d.NewImage)
	if u := r.UserIdentity; u != nil {
		out.ttl = str(u.Type) == "Service" && str(u.PrincipalId) == "dynamodb.amazonaws.com"
	}
	return out, nil
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// itemOf converts a streams item to the dynamodb package's types (nil: nil).
func itemOf(m map[string]st.AttributeValue) map[string]types.AttributeValue {
	if m == nil {
		return nil
	}
	out := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		out[k] = valueOf(v)
	}
	return out
}

func valueOf(v st.AttributeValue) types.AttributeValue {
	switch v := v.(type) {
	case *st.AttributeValueMemberS:
		return &types.AttributeValueMemberS{Value: v.Value}
	case *st.AttributeValueMemberN:
		return &types.AttributeValueMemberN{Value: v.Value}
	case *st.AttributeValueMemberB:
		return &types.AttributeValueMemberB{Value: v.Value}
	case *st.AttributeValueMemberBOOL:
		return &types.AttributeValueMemberBOOL{Value: v.Value}
	case *st.AttributeValueMemberNULL:
		return &types.AttributeValueMemberNULL{Value: v.Value}
	case *st.AttributeValueMemberSS:
		return &types.AttributeValueMemberSS{Value: v.Value}
	case *st.AttributeValueMemberNS:
		return &types.AttributeValueMemberNS{Value: v.Value}
	case *st.AttributeValueMemberBS:
		return &types.AttributeValueMemberBS{Value: v.Value}
	case *st.AttributeValueMemberL:
		l := make([]types.AttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = valueOf(e)
		}
		return &types.AttributeValueMemberL{Value: l}
	case *st.AttributeValueMemberM:
		return &types.AttributeValueMemberM{Value: itemOf(v.Value)}
	}
	return &types.AttributeValueMemberNULL{Value: true} // an unknown member: nothing to decode
}

// decoder decodes raw records into Record[T] with a table's codec.
type decoder[T any] struct {
	table   *dynamo.Table[T]
	version string // the version attribute, "" when none
}

func newDecoder[T any](t *dynamo.Table[T]) *decoder[T] {
	return &decoder[T]{table: t, version: t.Attributes().Version}
}

// decode decodes r. An image of another entity sets Other; an image that
// does not decode is an error naming the table, key and attribute.
func (d *decoder[T]) decode(r rawRecord) (Record[T], error) {
	out := Record[T]{Kind: r.kind, Shard: r.shard, Seq: r.seq, ID: r.id, Time: r.at, Keys: r.keys,
		OldItem: r.old, NewItem: r.new, TTL: r.ttl}
	var err error
	if out.Old, out.OldVersion, err = d.image(r.old, &out.Other); err != nil {
		return out, fmt.Errorf("dynamo: stream: record %s (%s) old image: %w", r.id, r.seq, err)
	}
	if out.New, out.NewVersion, err = d.image(r.new, &out.Other); err != nil {
		return out, fmt.Errorf("dynamo: stream: record %s (%s) new image: %w", r.id, r.seq, err)
	}
	if out.Other {
		out.Old, out.New = nil, nil
	}
	return out, nil
}

func (d *decoder[T]) image(item map[string]types.AttributeValue, other *bool) (*T, int64, error) {
	if item == nil {
		return nil, 0, nil
	}
	var ver int64
	if d.version != "" {
		if n, ok := item[d.version].(*types.AttributeValueMemberN); ok {
			ver, _ = strconv.ParseInt(n.Value, 10, 64) // decode below says what is wrong with it
		}
	}
	v, err := d.table.Decode(item)
	if errors.Is(err, dynamo.ErrNotFound) {
		*other = true
		return nil, ver, nil
	}
	if err != nil {
		return nil, 0, err
	}
	return &v, ver, nil
}
