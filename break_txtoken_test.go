package dynamo

import (
	"bytes"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/ident"
)

// "Tokens never repeat" (settle.go) is what lets Update resend a write
// whose answer was lost when it finds the exact state it read. But WriteTx
// with WithRequestToken derives its members' write tokens from the request
// token, table and key — and its doc tells users to resend with the same
// token after a crash or timeout. A create resent after its 10 minutes,
// once the item was consumed and deleted, stores the same (v1, token) pair
// as the first incarnation.
//
// Here: the item is created by WriteTx under request token "create-k".
// Update reads it (v1, token H) and appends a job; its write is applied and
// the answer lost; meanwhile the item is deleted and the same WriteTx is
// resent (emulated by putting back exactly the item it stores: DynamoDB
// Local cannot age a request token). The settling read finds (v1, H) — the
// state Update read — and Update sends its write again: the job is applied
// to the new incarnation as well, and Update reports success.
func TestBreakRepeatedTxTokenFoolsSettle(t *testing.T) {
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "txtok", "id", types.ScalarAttributeTypeS, "", "")
	d := dynamotest.NewDropper("UpdateItem")
	mine, err := NewTable[queuedJob](NewMapper(d.Client(t)), name)
	if err != nil {
		t.Fatal(err)
	}
	om := NewMapper(c)
	other, _ := NewTable[queuedJob](om, name)
	ctx := t.Context()
	reqToken := "create-k-" + ident.RandomHex(8) // unique: a server may outlive a test run, and remembers tokens for 10 minutes
	if err := om.WriteTx(ctx, []TxOp{other.TxSave(queuedJob{ID: "k", Owner: "first"})}, WithRequestToken(reqToken)); err != nil {
		t.Fatal(err)
	}
	key := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "k"}}
	raw, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(name), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	tok := raw.Item[DefaultWriteTokenAttribute].(*types.AttributeValueMemberB).Value
	if !bytes.Equal(tok, txWriteToken(reqToken, name, key)) {
		t.Fatal("the stored token is not the one a resend of the WriteTx stores; the emulation below would be wrong")
	}
	d.ArmThen(func() {
		if err := other.Delete(ctx, queuedJob{ID: "k"}, WithSaveBehavior(SaveClobber)); err != nil {
			t.Error(err)
		}
		// The WriteTx resent with its request token after 10 minutes.
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: raw.Item}); err != nil {
			t.Error(err)
		}
	})
	_, err = mine.Update(ctx, queuedJob{ID: "k"}, func(j queuedJob) (queuedJob, error) {
		j.Jobs = append(j.Jobs, "job")
		return j, nil
	})
	if d.Dropped() != 1 {
		t.Fatalf("dropped %d answers, the test needs 1", d.Dropped())
	}
	got, _ := other.Load(ctx, queuedJob{ID: "k"}, ConsistentRead())
	if slices.Contains(got.Jobs, "job") {
		t.Fatalf("Update = %v after %d UpdateItems; the incarnation created after its applied write carries its job too (%+v): applied twice", err, d.Sent(), got)
	}
}
