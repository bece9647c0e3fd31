package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Delete deletes the item with item's primary key. For a versioned type it
// checks that the stored version is the one item holds (an unsaved item:
// that there is no stored version); SaveClobber deletes unconditionally. A
// failed condition is a *ConditionError as for Save. Deleting a missing
// unsaved item succeeds. item is not modified. ctx bounds the request,
// including the SDK's retries.
//
// When DynamoDB applied the delete but the response was lost, the SDK's
// retry finds no item; Delete reports that as success when an earlier attempt
// may have been applied — it got no answer, or a 5xx one. (A throttled first
// attempt was not applied: a retry that then finds no item is a conflict.)
// Delete records the SDK's attempts with a per-call middleware that clients
// other than *dynamodb.Client may ignore.
//
// IAM: dynamodb:DeleteItem.
func (t *Table[T]) Delete(ctx context.Context, item T, opts ...WriteOption) error {
	wo := defaultWriteOptions()
	for _, fn := range opts {
		fn(&wo)
	}
	_, v, err := t.box(item, "Delete")
	if err != nil {
		return err
	}
	key, err := t.keyOf(v)
	if err != nil {
		return err
	}
	uc, err := compileConds(t.p.s, wo.conds)
	if err != nil {
		return fmt.Errorf("%w: If condition for table %q: %w", ErrInvalidInput, t.name, err)
	}
	held := t.p.s.versionOf(v)
	if held < 0 {
		return fmt.Errorf("%w: table %q key %s: version is negative or too large", ErrInvalidInput, t.name, formatKey(key))
	}
	clobber := wo.behavior == SaveClobber
	pc := t.p.buildPutCond(held, clobber, uc)
	var att attempts
	_, err = t.m.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                           aws.String(t.name),
		Key:                                 key,
		ConditionExpression:                 strPtr(pc.cond),
		ExpressionAttributeNames:            pc.names,
		ExpressionAttributeValues:           pc.values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}, att.option())
	if err == nil {
		return nil
	}
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return fmt.Errorf("dynamo: delete from table %q key %s: %w", t.name, formatKey(key), err)
	}
	if ccf.Item == nil && held > 0 && uc == nil && att.maybeApplied() {
		return nil // our delete was applied; its retry found nothing
	}
	ce := t.p.conditionFailure(t.name, key, held, !clobber, ccf.Item, err, t.decodeAny)
	ce.Condition = uc.String()
	return ce
}
