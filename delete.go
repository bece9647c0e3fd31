package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/refusal"
)

// Delete deletes the item with item's primary key. For a versioned type it
// checks that the stored version is item's (for an unsaved item: none, or 0);
// SaveClobber deletes unconditionally. A failed condition is a
// *ConditionError as for Save; deleting a missing unsaved item succeeds. A
// lost answer is settled by a read, never a resend: Delete succeeds when the
// outcome is the same either way, and otherwise returns ErrUnknownOutcome
// (docs/calls.md#delete). ctx bounds the request and the settling read.
//
// IAM: dynamodb:DeleteItem, and dynamodb:GetItem to settle a lost answer.
func (t *Table[T]) Delete(ctx context.Context, item T, opts ...WriteOption) error {
	ctx, c := t.m.begin(ctx, "Delete", t.name)
	return c.end(t.delete(ctx, item, opts))
}

func (t *Table[T]) delete(ctx context.Context, item T, opts []WriteOption) error {
	wo := applyWriteOptions(opts)
	if err := wo.refuse(refusal.Delete, t.name); err != nil {
		return err
	}
	clobber := wo.behavior == SaveClobber
	_, v, err := t.box(item, "Delete")
	if err != nil {
		return err
	}
	key, err := t.keyOf(v)
	if err != nil {
		return err
	}
	t.m.noteKey(ctx, key)
	uc, err := plan.CompileConds(t.p.S, wo.conds)
	if err != nil {
		return fmt.Errorf("%w: If condition for table %q: %w", ErrInvalidInput, t.name, err)
	}
	held := t.p.S.VersionOf(v)
	if held < 0 {
		return t.heldVersionError(key)
	}
	pc := t.p.BuildPutCond(held, clobber, uc, nil)
	if len(wo.guards) > 0 {
		m := &txMember{kind: "Delete", table: t.name, key: key, held: held, plan: t.p, decode: t.decodeAny, cond: uc, checked: !clobber}
		m.item.Delete = pc.DeleteItem(t.name, key)
		return t.m.writeGuarded(ctx, "Delete", m, wo.guards)
	}
	var att attempts
	_, err = t.m.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                           &t.name,
		Key:                                 key,
		ConditionExpression:                 plan.StrPtr(pc.Cond),
		ExpressionAttributeNames:            pc.Names,
		ExpressionAttributeValues:           pc.Values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}, att.option(true))
	if err == nil {
		return nil
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		ce := conditionFailure(t.p, t.name, key, held, !clobber, ccf.Item, err, t.decodeAny)
		ce.Condition = uc.String()
		if att.maybeApplied() {
			markUnknown(t.p, ce) // a client that sent it again anyway
		}
		return ce
	}
	if !att.maybeApplied() && !att.unrecorded() {
		return fmt.Errorf("dynamo: delete from table %q key %s: %w", t.name, formatKey(key), err)
	}
	return t.settleDelete(ctx, key, held, !clobber, uc, err)
}
