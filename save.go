package dynamo

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Save writes item and returns the saved copy: item with its new version
// (for SaveUpdateSkipNulls, SaveAppendSet and SaveClobber, the whole item as
// stored after the write). item itself is never modified.
//
// For a versioned type, an unsaved item (version zero or nil) is written as
// version 1 on condition that the stored item has no version; an item holding
// version v is written as v+1 on condition that the stored version is v. When
// the condition fails, the error is a *ConditionError wrapping
// ErrVersionConflict (the stored version differs; Table.Current decodes the
// stored item) or ErrConditionFailed (an If condition failed). A write that
// DynamoDB applied but whose response was lost, and which the SDK retried, is
// a success (see WithWriteTokenAttribute) — unless someone else wrote the
// item between the applied attempt and the SDK's retry: the retry then finds
// neither the version held nor the write's token, and whether the write took
// effect cannot be told. That conflict also satisfies
// errors.Is(err, ErrUnknownOutcome): check the stored item (Table.Current)
// for the change before making it again. (So does, with write tokens turned
// off, any conflict after an attempt that may have been applied. Telling
// these cases apart needs the per-call option Save adds to record the SDK's
// attempts; a Client that ignores it gets a plain conflict.) Types without a
// version attribute carry no token: for them a lost response to a write with
// an If condition can come back as ErrConditionFailed although the write was
// applied — give such types a version attribute when that matters.
//
// Bad input is refused before anything is sent with an error wrapping
// ErrInvalidInput: a nil item, an unset or empty key, an item over 400 KB.
// ctx bounds the request, including the SDK's retries.
//
// IAM: dynamodb:UpdateItem (dynamodb:PutItem with SavePut).
func (t *Table[T]) Save(ctx context.Context, item T, opts ...WriteOption) (T, error) {
	wo := defaultWriteOptions()
	if len(opts) > 0 {
		wo = applyWriteOptions(opts)
	}
	boxed, v, err := t.box(item, "Save")
	if err != nil {
		var zero T
		return zero, err
	}
	saved, _, err := t.save(ctx, boxed, v, &wo)
	return saved, err
}

// save writes the struct boxed points to (v is the same struct). Besides the
// saved copy it returns the item as stored after the write — for SaveUpdate
// and SavePut the encoded item with its new version, else ALL_NEW — which
// Update hands to the next caller of the same key.
func (t *Table[T]) save(ctx context.Context, boxed any, v reflect.Value, wo *writeOptions) (T, map[string]types.AttributeValue, error) {
	var zero T
	p, s := t.p, t.p.s
	r, err := t.buildSave(boxed, v, wo, nil)
	if err != nil {
		return zero, nil, err
	}
	item, key := r.item, r.key
	var allNew map[string]types.AttributeValue
	var att attempts
	if r.put {
		_, err = t.m.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName:                           aws.String(t.name),
			Item:                                item,
			ConditionExpression:                 strPtr(r.pc.cond),
			ExpressionAttributeNames:            r.pc.names,
			ExpressionAttributeValues:           r.pc.values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}, att.option())
	} else {
		in := &dynamodb.UpdateItemInput{
			TableName:                           aws.String(t.name),
			Key:                                 key,
			UpdateExpression:                    strPtr(r.up.update),
			ConditionExpression:                 strPtr(r.up.cond),
			ExpressionAttributeNames:            r.up.names,
			ExpressionAttributeValues:           r.up.values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}
		if wo.behavior != SaveUpdate {
			in.ReturnValues = types.ReturnValueAllNew
		}
		var out *dynamodb.UpdateItemOutput
		out, err = t.m.client.UpdateItem(ctx, in, att.option())
		if err == nil {
			allNew = out.Attributes
		}
	}
	if err != nil {
		if key == nil {
			key = t.pickKey(item)
		}
		var ccf *types.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			return zero, nil, fmt.Errorf("dynamo: save to table %q key %s: %w", t.name, formatKey(key), err)
		}
		if !isOwnWrite(ccf.Item, p.tokenAttr, r.token) {
			ce := p.conditionFailure(t.name, key, r.held, wo.behavior != SaveClobber, ccf.Item, err, t.decodeAny)
			ce.unknown = s.version >= 0 && att.maybeApplied() && mayHoldWrite(ce, r.held, r.token != nil)
			return zero, nil, ce
		}
		// DynamoDB applied our write; the SDK's retry of it failed its
		// condition. The item it reports is our write (or later ones).
		allNew = ccf.Item
	}
	if wo.behavior == SaveUpdate || wo.behavior == SavePut {
		if s.version >= 0 {
			item[s.fields[s.version].name] = numberAV(r.next) // the request is done with item
		}
		return t.withVersion(v, r.next), item, nil
	}
	saved, err := t.decode(allNew)
	return saved, allNew, err
}

// saveRequest is the request of one save, built by buildSave and sent by
// save (as an UpdateItem or PutItem) or by WriteTx (as a transaction member).
type saveRequest struct {
	// item is the encoded item; for SavePut it carries the new version and
	// the write token, and is the item to put.
	item map[string]types.AttributeValue
	// key is the primary key to update; nil for SavePut, whose item carries it.
	key        map[string]types.AttributeValue
	held, next int64  // the version held and the version written (0, 0 when unversioned)
	token      []byte // the write token, nil when none is written
	put        bool   // SavePut: pc holds the condition; otherwise up holds the update
	pc         putParts
	up         updateParts
}

// buildSave checks and encodes the struct boxed points to (v is the same
// struct) and builds the request that saves it as wo says. token is the write
// token to store; nil means a fresh random one (when the type is versioned and
// tokens are on). Nothing is sent; bad input is an error wrapping
// ErrInvalidInput.
func (t *Table[T]) buildSave(boxed any, v reflect.Value, wo *writeOptions, token []byte) (saveRequest, error) {
	p, s := t.p, t.p.s
	if wo.behavior < SaveUpdate || wo.behavior > SaveAppendSet {
		return saveRequest{}, fmt.Errorf("%w: unknown %v: use one of the dynamo.Save* constants", ErrInvalidInput, wo.behavior)
	}
	item, err := t.encode(boxed)
	if err != nil {
		return saveRequest{}, err
	}
	if err := t.checkKey(item); err != nil {
		return saveRequest{}, err
	}
	uc, err := compileConds(wo.conds)
	if err != nil {
		return saveRequest{}, fmt.Errorf("%w: If condition for table %q: %w", ErrInvalidInput, t.name, err)
	}
	var held, next int64
	if s.version >= 0 {
		if held = s.versionOf(v); held < 0 {
			return saveRequest{}, fmt.Errorf("%w: table %q key %s: version %s is negative or too large", ErrInvalidInput, t.name, formatKey(t.pickKey(item)), s.fields[s.version].goName)
		}
		if next = held + 1; !s.versionFits(next) {
			return saveRequest{}, fmt.Errorf("%w: table %q key %s: the next version %d does not fit field %s (%s): use int64",
				ErrInvalidInput, t.name, formatKey(t.pickKey(item)), next, s.fields[s.version].goName, s.fields[s.version].typ)
		}
		if p.tokenAttr != "" && token == nil {
			token = newToken()
		}
	}
	if p.tokenAttr == "" {
		token = nil
	}
	if size := t.writtenSize(item, next, token, wo.behavior == SavePut); size > maxItemSize {
		return saveRequest{}, fmt.Errorf("%w: table %q key %s: item is about %d bytes, over DynamoDB's 400 KB limit: store large values elsewhere (e.g. S3) and keep a reference",
			ErrInvalidInput, t.name, formatKey(t.pickKey(item)), size)
	}
	r := saveRequest{item: item, held: held, next: next, token: token}
	if wo.behavior == SavePut {
		if s.version >= 0 {
			item[s.fields[s.version].name] = numberAV(next)
			if token != nil {
				item[p.tokenAttr] = &types.AttributeValueMemberB{Value: token}
			}
		}
		r.put = true
		r.pc = p.buildPutCond(held, false, uc)
		return r, nil
	}
	// The key map is built only where it is sent (UpdateItem) or reported
	// (errors): a PutItem carries the key in its item.
	r.key = t.pickKey(item)
	r.up = p.buildUpdate(wo.behavior, item, held, next, token, uc)
	return r, nil
}
