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
// that there is no stored version, or version 0); SaveClobber deletes
// unconditionally. A failed condition is a *ConditionError as for Save.
// Deleting a missing unsaved item succeeds. item is not modified. ctx bounds
// the request, including the SDK's retries and the read that settles a lost
// answer.
//
// Lost answers: when an attempt got no answer (or a 5xx one), the SDK does
// not send the delete again — a resend could delete an item someone else
// created since (version numbers start again at 1) and was told was stored.
// Delete reads the item instead: when it is gone, Delete succeeds (what it
// was asked to do holds); when it is there, whether the delete was applied
// (and the item created again) cannot be told, and the error satisfies
// errors.Is(err, ErrUnknownOutcome) (a *ConditionError carrying the item).
// Delete records the SDK's attempts with a per-call middleware that clients
// other than *dynamodb.Client may ignore.
//
// IAM: dynamodb:DeleteItem, and dynamodb:GetItem to settle a lost answer.
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
	pc := t.p.buildPutCond(held, clobber, uc, nil)
	var att attempts
	_, err = t.m.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                           aws.String(t.name),
		Key:                                 key,
		ConditionExpression:                 strPtr(pc.cond),
		ExpressionAttributeNames:            pc.names,
		ExpressionAttributeValues:           pc.values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}, att.option(true))
	if err == nil {
		return nil
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if ccf.Item == nil && att.maybeApplied() {
			return nil // a client that sent it again anyway: the item is gone
		}
		ce := t.p.conditionFailure(t.name, key, held, !clobber, ccf.Item, err, t.decodeAny)
		ce.Condition = uc.String()
		ce.unknown = att.maybeApplied()
		return ce
	}
	if !att.maybeApplied() {
		return fmt.Errorf("dynamo: delete from table %q key %s: %w", t.name, formatKey(key), err)
	}
	return t.settleDelete(ctx, key, held, !clobber, err)
}
