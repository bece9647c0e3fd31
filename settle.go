package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/telemetry"
)

// Settling a write whose outcome is unknown.
//
// An attempt that got no answer (or a 5xx one) may have been applied. The
// SDK would send it again, and a resend is not safe: version numbers start
// again at 1 when an item is deleted and created again, so a resend's
// version condition can hold on another incarnation of the item (a create
// applied twice, a delete that removes the item someone created since), and
// a write without a version condition (SaveClobber) overwrites whatever was
// acknowledged to others in between. So the mapper turns the SDK's resends
// of such attempts off (attempts.option) and settles the write here with a
// strongly consistent read:
//
//   - the write's own token in the item: it was applied (once: it was sent
//     once);
//   - exactly the state the write was computed from (its basis: the
//     version and the token Table.Update read — tokens never repeat): it
//     was not applied, and it is sent again;
//   - anything else: the outcome cannot be told, ErrUnknownOutcome.

// maxResends bounds how often settling sends a write again after proving
// that its earlier attempts were not applied.
const maxResends = 3

// settleSave settles the save r, one of whose attempts failed with cause
// and may have been applied. key is r's key.
func (t *Table[T]) settleSave(ctx context.Context, r *saveRequest, wo *writeOptions, bs *plan.Basis, key map[string]types.AttributeValue, cause error) (map[string]types.AttributeValue, error) {
	for round := 1; ; round++ {
		cur, err := t.readRaw(ctx, key)
		if err != nil {
			t.noteSettle(ctx, telemetry.VerdictReadFailed)
			return nil, unknownOutcome("save to", t.name, key, cause, err)
		}
		if isOwnWrite(cur, t.p.TokenAttr, r.token) || !r.noResend && r.cond() == "" && t.p.S.Version < 0 && cur != nil && t.p.SameAttrs(r.item, cur) {
			// Applied; or, for an unconditional write of a type without a
			// version, the item holds exactly what it writes, so it may be
			// taken to have landed now.
			t.noteSettle(ctx, telemetry.VerdictApplied)
			return cur, nil
		}
		if round > maxResends || r.noResend || bs == nil || !t.p.Proves(bs.Item) || !t.p.SameState(bs.Item, cur) {
			t.noteSettle(ctx, telemetry.VerdictConflict)
			ce := t.saveConditionFailure(key, r, wo, cur, cause)
			markUnknown(t.p, ce)
			return nil, ce
		}
		// Not applied: the item is exactly what the write was computed from.
		t.noteSettle(ctx, telemetry.VerdictNotApplied)
		var att attempts
		allNew, err := t.sendSaveOnce(ctx, r, wo, &att, true)
		if err == nil {
			return allNew, nil
		}
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			if isOwnWrite(ccf.Item, t.p.TokenAttr, r.token) {
				return ccf.Item, nil
			}
			return nil, t.saveConditionFailure(key, r, wo, ccf.Item, err)
		}
		if errors.Is(err, ErrReplicatedConflict) {
			// Refused, but the lost attempt it stood for is settled only
			// as of the read: Update must not compute its change again.
			return nil, fmt.Errorf("dynamo: save to table %q key %s: %w: the write may have been applied (an attempt's answer was lost), and sending it again met %w",
				t.name, formatKey(key), ErrUnknownOutcome, err)
		}
		if !att.maybeApplied() {
			return nil, fmt.Errorf("dynamo: save to table %q key %s: %w", t.name, formatKey(key), err)
		}
		cause = err
	}
}

// settleDelete settles a delete one of whose attempts failed with cause and
// may have been applied. An item that is gone is a success only when the
// delete's own condition holds on an absent item (an unsaved holder, or
// SaveClobber, without If): then whoever deleted it, the outcome is the
// same. Otherwise — gone, or there (the same, or created again) — the
// outcome cannot be told: ErrUnknownOutcome. A resend could delete an item
// someone else created and was told was stored, and "gone" may be someone
// else's delete of an item whose condition ours would have failed.
func (t *Table[T]) settleDelete(ctx context.Context, key map[string]types.AttributeValue, held int64, checked bool, uc *plan.UserCond, cause error) error {
	cur, err := t.readRaw(ctx, key)
	if err != nil {
		t.noteSettle(ctx, telemetry.VerdictReadFailed)
		return unknownOutcome("delete from", t.name, key, cause, err)
	}
	if cur == nil && uc == nil && (held == 0 || !checked) {
		t.noteSettle(ctx, telemetry.VerdictApplied)
		return nil
	}
	t.noteSettle(ctx, telemetry.VerdictConflict)
	ce := conditionFailure(t.p, t.name, key, held, checked, cur, cause, t.decodeAny)
	ce.Condition = uc.String()
	markUnknown(t.p, ce)
	return ce
}

// markUnknown makes ce an unknown outcome: it satisfies ErrUnknownOutcome,
// and for a versioned type ErrVersionConflict (never ErrConditionFailed,
// which would say the write was refused).
func markUnknown(p *plan.Plan, ce *ConditionError) {
	ce.unknown = true
	if p.S.Version >= 0 {
		ce.Err = ErrVersionConflict
	} else {
		ce.Err = ErrUnknownOutcome
	}
}

// readRaw reads the item with key strongly consistently; nil when absent.
func (t *table) readRaw(ctx context.Context, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	out, err := t.m.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &t.name, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	return out.Item, nil
}

// unknownOutcome is the error of a write (op: "save to", "delete from") that
// may have been applied (cause) and could not be settled (readErr, nil when
// nothing could settle it).
func unknownOutcome(op, table string, key map[string]types.AttributeValue, cause, readErr error) error {
	if readErr != nil {
		return fmt.Errorf("dynamo: %s table %q key %s: %w: the write may have been applied (%w), and reading the item to find out failed: %w",
			op, table, formatKey(key), ErrUnknownOutcome, cause, readErr)
	}
	return fmt.Errorf("dynamo: %s table %q key %s: %w: the write may have been applied: %w", op, table, formatKey(key), ErrUnknownOutcome, cause)
}
