package integration

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// optDropper is a dynamo.Client wrapper of the kind users write for
// logging or metrics, that forwards every call but not its per-call
// options (a one-line mistake, or a wrapper written against an interface
// without them).
type optDropper struct{ *dynamodb.Client }

func (o optDropper) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return o.Client.UpdateItem(ctx, in)
}

func (o optDropper) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return o.Client.DeleteItem(ctx, in)
}

func (o optDropper) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return o.Client.TransactWriteItems(ctx, in)
}

// Through a Client wrapper that drops the per-call options, a WriteTx that
// DynamoDB applied, whose answer was lost and whose ctx then ended, returns
// ErrUnknownOutcome, not a plain context error: the mapper sees that its
// attempt recorder never ran and cannot rule the write out.
func TestWrapperIgnoringOptionsReportsUnknownTx(t *testing.T) {
	d := dynamotest.NewDropper("TransactWriteItems")
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "inc", "id", types.ScalarAttributeTypeS, "", "")
	m := dynamo.NewMapper(optDropper{d.Client(t)})
	tb, _ := dynamo.NewTable[incJob](m, name)
	base := ctx(t)
	c, cancel := context.WithCancel(base)
	d.ArmThen(cancel)
	err := m.WriteTx(c, []dynamo.TxOp{tb.TxSave(incJob{ID: "a"})})
	if d.Dropped() != 1 {
		t.Fatalf("dropped %d answers, the test needs 1", d.Dropped())
	}
	got, _ := tb.Load(base, incJob{ID: "a"}, dynamo.ConsistentRead())
	if got.Version == 1 && !errors.Is(err, dynamo.ErrUnknownOutcome) {
		t.Fatalf("WriteTx = %v although it was applied; want ErrUnknownOutcome", err)
	}
}
