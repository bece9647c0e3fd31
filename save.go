package dynamo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/codec"
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/refusal"
	"github.com/ddbkit/dynamo/internal/schema"
)

// Save writes item and returns the saved copy: item with its new version (for
// SaveUpdateSkipNulls, SaveAppendSet and SaveClobber, the item as stored);
// item is never modified. For a versioned type an unsaved item is written on
// condition that no version is stored, an item holding version v as v+1 on
// condition that v is; a failed condition is a *ConditionError wrapping
// ErrVersionConflict or ErrConditionFailed, carrying the stored item. A lost
// answer is settled by a read, never a blind resend (ErrUnknownOutcome when
// it cannot be told). Bad input is refused with ErrInvalidInput before
// sending. Rules: docs/mapper.md, "Versions" and "Save behaviours".
//
// IAM: dynamodb:UpdateItem (dynamodb:PutItem with SavePut), and
// dynamodb:GetItem to settle a lost answer.
func (t *Table[T]) Save(ctx context.Context, item T, opts ...WriteOption) (T, error) {
	ctx, c := t.m.begin(ctx, "Save", t.name)
	saved, err := t.saveItem(ctx, item, opts)
	return saved, c.end(err)
}

func (t *Table[T]) saveItem(ctx context.Context, item T, opts []WriteOption) (T, error) {
	sc := saveCall{unkept: true}
	if len(opts) > 0 {
		sc.wo = applyWriteOptions(opts)
		if err := sc.wo.refuse(refusal.Save, t.name); err != nil {
			var zero T
			return zero, err
		}
	}
	boxed, v, err := t.box(item, "Save")
	if err != nil {
		var zero T
		return zero, err
	}
	res, err := t.save(ctx, boxed, v, &sc, nil)
	return res.saved, err
}

// save writes the struct boxed points to (v is the same struct) as sc
// says. bs, when not nil, is the stored item the struct was computed from
// (Table.Update): the write is pinned to it (basisCond). Its result's
// stored item is, for SaveUpdate and SavePut, the encoded item with its
// new version and token, else ALL_NEW. sc's own fields are not modified.
func (t *Table[T]) save(ctx context.Context, boxed any, v reflect.Value, sc *saveCall, bs *plan.Basis) (saveResult[T], error) {
	p, s := t.p, t.p.S
	var r saveRequest
	var allNew map[string]types.AttributeValue
	var err error
	wo := &sc.wo
	guarded := len(wo.guards) > 0 // the behaviour was checked by the caller (refusal.Rules)
	for attempt := 1; ; attempt++ {
		if r, err = t.buildSave(boxed, v, sc, nil, bs, guarded); err != nil {
			return saveResult[T]{}, err
		}
		if guarded {
			call := "Save"
			if bs != nil {
				call = "Update"
			}
			mem := t.saveMember(&r)
			mem.kind = call
			err = t.m.writeGuarded(ctx, call, mem, wo.guards)
		} else {
			allNew, err = t.sendSave(ctx, &r, wo, bs)
		}
		if err == nil {
			break
		}
		if w, again := t.windowMoved(err, &r, sc.window, bs, guarded); again && attempt < maxNullAttempts {
			nc := *sc
			nc.window = w
			sc = &nc
			continue
		}
		if nulls := storedNulls(err, p.BlindAttrs(wo.behavior), sc.nulls, p.ZeroIsNoVersion()); nulls != nil {
			if attempt < maxNullAttempts {
				nc := *sc
				nc.nulls = nulls
				sc = &nc
				continue
			}
			nullsKeptChanging(err, attempt)
		}
		return saveResult[T]{}, err
	}
	item := r.item // nil when encoded into the request's values (sc.unkept)
	if wo.behavior == SaveUpdate && !r.allNew || wo.behavior == SavePut {
		if s.Version >= 0 && !r.put && item != nil { // a put's item carries them already
			// The request is done with item. The version and the token
			// are the values the update wrote (buildUpdate): the same
			// attribute values, shared (nobody modifies one).
			ver, tok := r.up.Values[plan.NewVersionPH], r.up.Values[plan.TokenValuePH]
			if ver == nil {
				ver = plan.NumberAV(r.next)
			}
			item[s.Fields[s.Version].Name] = ver
			if r.token != nil {
				if tok == nil {
					tok = &types.AttributeValueMemberB{Value: r.token}
				}
				item[p.TokenAttr] = tok
			}
		}
		written := r.v
		if sc.own.IsValid() {
			_, written = t.stamp(sc.ownBoxed, sc.own, sc.now) // as buildSave stamped v
		}
		own := item != nil && !r.put && !guarded && r.token != nil
		return saveResult[T]{saved: t.withVersion(written, r.next), stored: item, size: r.size, own: own}, nil
	}
	saved, err := t.decodeWritten("save to", allNew)
	return saveResult[T]{saved: saved, stored: allNew}, err
}

// sendSave sends the save r and settles it when an attempt's outcome is
// unknown. It returns the item as stored after the write when DynamoDB said
// so (ALL_NEW) or settling read it.
func (t *Table[T]) sendSave(ctx context.Context, r *saveRequest, wo *writeOptions, bs *plan.Basis) (map[string]types.AttributeValue, error) {
	var att attempts
	allNew, err := t.sendSaveOnce(ctx, r, wo, &att, true)
	if err == nil {
		return allNew, nil
	}
	key := r.key
	if key == nil {
		key = t.pickKey(r.item)
	}
	t.m.noteKey(ctx, key)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if isOwnWrite(ccf.Item, t.p.TokenAttr, r.token) {
			// A client that sends again despite our option: the write was
			// applied, and its resend found it.
			return ccf.Item, nil
		}
		ce := t.saveConditionFailure(key, r, wo, ccf.Item, err)
		if att.maybeApplied() {
			markUnknown(t.p, ce) // a client that sent it again anyway
		}
		return nil, ce
	}
	if !att.maybeApplied() && !att.unrecorded() {
		if tooLarge(err) {
			// Only DynamoDB knows the stored item an update adds to (Add,
			// SaveAppendSet, SaveUpdateSkipNulls keep what is stored).
			return nil, fmt.Errorf("%w: save to table %q key %s: %s: %w",
				ErrInvalidInput, t.name, formatKey(key), tooLargeFix, err)
		}
		return nil, fmt.Errorf("dynamo: save to table %q key %s: %w", t.name, formatKey(key), err)
	}
	return t.settleSave(ctx, r, wo, bs, key, err)
}

// sendSaveOnce sends the save r once: the SDK retries only attempts that
// were certainly not applied when noResend is set.
func (t *table) sendSaveOnce(ctx context.Context, r *saveRequest, wo *writeOptions, att *attempts, noResend bool) (map[string]types.AttributeValue, error) {
	if r.put {
		_, err := t.m.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName:                           &t.name,
			Item:                                r.item,
			ConditionExpression:                 t.p.ExprPtr(r.pc.Cond),
			ExpressionAttributeNames:            r.pc.Names,
			ExpressionAttributeValues:           r.pc.Values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}, att.option(noResend))
		return nil, err
	}
	in := &dynamodb.UpdateItemInput{
		TableName:                           &t.name,
		Key:                                 r.key,
		UpdateExpression:                    t.p.ExprPtr(r.up.Update),
		ConditionExpression:                 t.p.ExprPtr(r.up.Cond),
		ExpressionAttributeNames:            r.up.Names,
		ExpressionAttributeValues:           r.up.Values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if wo.behavior != SaveUpdate || r.allNew {
		in.ReturnValues = types.ReturnValueAllNew
	}
	out, err := t.m.client.UpdateItem(ctx, in, att.option(noResend))
	if err != nil {
		return nil, err
	}
	return out.Attributes, nil
}

// saveConditionFailure builds the error of the save r whose condition failed
// on the stored item old.
func (t *Table[T]) saveConditionFailure(key map[string]types.AttributeValue, r *saveRequest, wo *writeOptions, old map[string]types.AttributeValue, cause error) *ConditionError {
	ce := conditionFailure(t.p, t.name, key, r.held, wo.behavior != SaveClobber, old, cause, t.decodeAny)
	ce.Condition = r.uc.String()
	if wo.fromSet && ce.Err == ErrConditionFailed && ce.Exists && ce.wrongVersion == nil && !t.p.SameIncarnation(wo.from, old) {
		// The version read, but another incarnation (incarnationCond):
		// the item read is gone, as after a conflict.
		ce.Err = ErrVersionConflict
		ce.reason = "the item was deleted and created again since it was read (its write token is not the one read): the changes from the item read do not apply to it"
	}
	if r.createdCond && ce.Err == ErrConditionFailed && ce.reason == "" {
		ce.reason = t.p.CreatedMismatch(old, r.item[t.p.S.Fields[t.p.S.Created].Name])
	}
	if len(r.bounds) > 0 && ce.Err == ErrConditionFailed && ce.reason == "" {
		ce.reason = plan.BoundsFailure(r.bounds, old)
	}
	if s := t.p.S; wo.behavior == SaveClobber && s.Version >= 0 && ce.HasVersion {
		f := &s.Fields[s.Version]
		switch {
		case ce.FoundVersion > t.p.MaxVersion-t.p.VerStep:
			ce.full = fmt.Sprintf("field %s (%s) holds at most %d, and the version advances by %d: %s", f.GoName, f.Type, t.p.MaxVersion, t.p.VerStep, s.Widen())
		case ce.FoundVersion < 0:
			ce.full = fmt.Sprintf("a negative version, which no write of a %s holds or advances: store a version of 0 or more there, or remove the attribute, with a write of your own", s.Type)
		}
	}
	return ce
}

// storedNulls returns which of attrs the stored item of a failed write (err,
// a *ConditionError carrying it) holds no value in, when that is not what
// the write assumed (prev), so that the write, certainly not applied, is
// sent again for the item as stored; nil when err is the write's answer:
// another failure, a version conflict, or an outcome that is not known.
//
// This is the one rule for NULLs met by writes that change an attribute
// without reading it — Add's changes, SaveAppendSet's sets, the version
// Add and SaveClobber advance (attrs: plan.blindAttrs, Add's). A NULL (another
// writer's, or SavePut's of a nil set or pointer) counts as missing: from
// 0, from the empty set, no version. But DynamoDB refuses ADD and DELETE on
// NULL, and a comparison is false on it, so each request assumes a set of
// NULLs (writeOptions.nulls), conditioned on it (attribute_type NULL, or
// NOT), and is sent again when the stored item says otherwise — at most
// maxNullAttempts requests in all. A stored version 0 (unsaved) is no
// version either, and is met the same way when the first version is not the
// step (zeroVersion, plan.zeroIsNoVersion; see advanceVersion).
func storedNulls(err error, attrs []string, prev map[string]bool, zeroVersion string) map[string]bool {
	var ce *ConditionError
	if len(attrs) == 0 || !errors.As(err, &ce) || errors.Is(err, ErrUnknownOutcome) || errors.Is(err, ErrVersionConflict) {
		return nil
	}
	// An absent item (ce.Item nil: another writer deleted it since) holds
	// no NULLs: a request that assumed some is sent again without them.
	nulls := map[string]bool{}
	for _, a := range attrs {
		if isNull(ce.Item[a]) || a == zeroVersion && isZero(ce.Item[a]) {
			nulls[a] = true
		}
	}
	if maps.Equal(nulls, prev) {
		return nil
	}
	return nulls
}

// nullsKeptChanging gives err, the failure of a write's last attempt that
// storedNulls would send again, the reason: another writer stored or
// replaced NULLs under every attempt.
func nullsKeptChanging(err error, attempts int) {
	if ce, ok := asConditionError(err); ok && ce.Err == ErrConditionFailed && ce.reason == "" {
		ce.reason = fmt.Sprintf("another writer kept storing or replacing NULLs in the attributes this write changes (%d attempts, each on the NULLs the last found): try again", attempts)
	}
}

// tooLarge reports whether err is DynamoDB's refusal of an update that
// would leave an item over 400 KB.
func tooLarge(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "ValidationException" && tooLargeMessage(ae.ErrorMessage())
}

// tooLargeMessage reports whether msg, the message of a ValidationException
// or of a transaction member's ValidationError, is DynamoDB's refusal of an
// update that would leave an item over 400 KB.
func tooLargeMessage(msg string) bool {
	return strings.Contains(msg, "Item size to update has exceeded")
}

// tooLargeFix says what an update DynamoDB refused as too large (tooLarge)
// means and how to fix it.
const tooLargeFix = "the item as stored after this write would be over DynamoDB's 400 KB limit, so nothing was written: store large values elsewhere (e.g. S3) and keep a reference"

// maxNullAttempts bounds the requests of one write that storedNulls sends
// again: each after the first is sent because another writer stored or
// replaced a NULL meanwhile.
const maxNullAttempts = 4

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
	pc         plan.PutParts
	up         plan.UpdateParts
	uc         *plan.UserCond // the If condition, named when it fails (nil: none)
	// v is the struct the request encodes: the caller's, or the copy with
	// the timestamps set (stamp).
	v reflect.Value
	// allNew asks a SaveUpdate for the item as stored (ReturnValues
	// ALL_NEW): the creation time kept by if_not_exists is known only so.
	allNew bool
	// createdCond: the request is conditioned on the stored creation time
	// being absent or the one written (SavePut, transactions).
	createdCond bool
	// noResend: the write is not idempotent (Table.Add), so only its own
	// token proves it applied; it is never sent again.
	noResend bool
	// bounds are the guards of Table.Add's integer fields.
	bounds []plan.AddBound
	// size is the item's size as written, counted by buildSave.
	size int
}

// cond returns the condition expression of r, "" when it has none.
func (r *saveRequest) cond() string {
	if r.put {
		return r.pc.Cond
	}
	return r.up.Cond
}

// buildSave checks and encodes the struct boxed points to (v is the same
// struct) and builds the request that saves it as sc says. token is the write
// token to store; nil means a fresh random one (when the type is versioned and
// tokens are on). bs, when not nil, pins the write to the stored item it was
// computed from. tx says the request is a transaction member. sc.now is the
// clock reading for the timestamps and a clock-started version; zero means
// read the clock. Nothing is sent; bad input is an error wrapping
// ErrInvalidInput.
func (t *table) buildSave(boxed any, v reflect.Value, sc *saveCall, token []byte, bs *plan.Basis, tx bool) (saveRequest, error) {
	p, s := t.p, t.p.S
	wo, now := &sc.wo, sc.now
	if now.IsZero() && (s.HasStamps() || p.VerClock) {
		now = t.m.opts.clock.Now()
	}
	boxed, v = t.stamp(boxed, v, now)
	if sc.unkept && t.valueNames != nil && bs == nil && !tx && !wo.fromSet && wo.behavior == SaveUpdate {
		if r, ok, err := t.buildSaveValues(boxed, v, sc, token, now); ok {
			return r, err
		}
	}
	var prev map[string]types.AttributeValue // the basis's values, shared where equal: nobody changes one
	into := false                            // the item is encoded into the basis's map (basis.own)
	if bs != nil {
		prev, into = bs.Item, bs.Own && !tx && wo.behavior == SaveUpdate
	}
	if wo.fromSet {
		if err := t.checkChangedFrom(wo); err != nil {
			return saveRequest{}, err
		}
		prev, into = wo.from, false // equal values shared: changedFrom compares pointers first
	}
	item, sz, err := t.encodeSized(boxed, prev, into)
	if err != nil {
		return saveRequest{}, err
	}
	if err := t.checkItemKeys(item); err != nil {
		return saveRequest{}, err
	}
	uc, err := wo.compileIfs(t.p.S)
	if err != nil {
		return saveRequest{}, fmt.Errorf("%w: If condition for table %q: %w", ErrInvalidInput, t.name, err)
	}
	held, next, err := t.saveVersions(v, item, sc, now)
	if err != nil {
		return saveRequest{}, err
	}
	if wo.fromSet {
		if err := t.checkChangedFromItem(wo.from, item, held); err != nil {
			return saveRequest{}, err
		}
	}
	if s.Version >= 0 && p.TokenAttr != "" && token == nil {
		token = newToken()
	}
	if p.TokenAttr == "" {
		token = nil
	}
	size, err := t.checkSaveSize(item, sz, next, token, wo.behavior)
	if err != nil {
		return saveRequest{}, err
	}
	r := saveRequest{item: item, held: held, next: next, token: token, uc: uc, v: v, size: size}
	iw, err := t.saveWindow(&r, bs, sc, tx)
	if err != nil {
		return saveRequest{}, err
	}
	if wo.behavior == SavePut {
		err := t.putRequest(&r, bs)
		if err == nil && iw != nil {
			iw.Put(r.item, &r.pc)
			err = t.checkCondLen(r.pc.Cond, bs)
		}
		return r, err
	}
	err = t.updateRequest(&r, sc, bs, tx, sz, iw)
	return r, err
}

// updateRequest makes r an UpdateItem: its key map, and the update
// expression with the conditions of the version, the basis, the creation
// time (in a transaction) and the window of idempotency keys iw.
func (t *table) updateRequest(r *saveRequest, sc *saveCall, bs *plan.Basis, tx bool, sz itemSizes, iw *plan.WindowWrite) error {
	wo := &sc.wo
	// The key map is built only where it is sent (UpdateItem) or reported
	// (errors): a PutItem carries the key in its item.
	if r.key = sc.key; !t.reusesKey(r.key, r.item) {
		r.key = t.pickKey(r.item)
	}
	var kept uint64
	if bs != nil && bs.Item != nil && !tx && !wo.fromSet && wo.behavior == SaveUpdate {
		// The basis's condition pins the stored item to bs.item: what
		// the item holds as it does needs no writing.
		kept = t.keptAttrs(sz)
	}
	p := t.p
	r.up = p.BuildUpdate(wo.behavior, r.item, r.held, r.next, sc.nulls, r.token, r.uc, bs, wo.from, kept)
	if p.S.Created >= 0 {
		if tx {
			r.createdCond = true
			r.up.Cond, r.up.Names, r.up.Values = p.WithCreatedCond(r.up.Cond, r.up.Names, r.up.Values, r.item)
		} else {
			r.allNew = true
		}
	}
	if iw != nil {
		iw.Update(&r.up)
	}
	return t.checkCondLen(r.up.Cond, bs)
}

// saveWindow returns the window of idempotency keys r carries — the
// call's, or for a put the one stored that the put would drop — with its
// size added to r's, refusing an item it takes over DynamoDB's 400 KB.
func (t *table) saveWindow(r *saveRequest, bs *plan.Basis, sc *saveCall, tx bool) (*plan.WindowWrite, error) {
	iw := sc.idem
	if iw == nil && sc.wo.behavior == SavePut && !tx {
		iw = t.putWindow(bs, sc.window)
	}
	if iw != nil && iw.Next != nil {
		if r.size += len(IdempotencyAttribute) + av.Size(iw.Next); r.size > maxItemSize {
			return nil, fmt.Errorf("%w: table %q key %s: item is about %d bytes with its idempotency window, over DynamoDB's 400 KB limit: store large values elsewhere (e.g. S3)",
				ErrInvalidInput, t.name, formatKey(t.pickKey(r.item)), r.size)
		}
	}
	return iw, nil
}

// buildSaveValues is buildSave of a SaveUpdate whose item nobody keeps
// (sc.unkept) and that has no basis, for a type the codec encodes so
// (Table.valueNames): the fields' attributes are encoded straight into the
// UpdateItem's values, under their placeholders, and the key's into the
// key map — no item is made, and r.item is nil. The checks are buildSave's,
// in its order, reading the key and the version from the key map (the
// version is taken out of it before it is sent). ok is false, with nothing
// done, when the codec refuses a value or does not vouch for the values
// (codec.Result.Clean): buildSave encodes the item then, and words the
// error or checks it.
func (t *table) buildSaveValues(boxed any, v reflect.Value, sc *saveCall, token []byte, now time.Time) (r saveRequest, ok bool, err error) {
	p, s, wo := t.p, t.p.S, &sc.wo
	if s.Walk {
		if err := s.CheckGo(t.name, reflect.ValueOf(boxed).Elem()); err != nil {
			return saveRequest{}, true, err
		}
	}
	var uc *plan.UserCond
	if len(wo.conds) > 0 {
		// compiled before the values map is sized, for its values
		if uc, err = wo.compileIfs(s); err != nil {
			return saveRequest{}, false, nil // buildSave words it, after the checks before it
		}
	}
	room := len(p.NonKeyNoVerFs) + 2 // the version held and written
	if p.TokenAttr != "" {
		room++
	}
	if uc != nil {
		room += len(uc.Values)
	}
	to := codec.Named{Names: t.valueNames, Dst: make(map[string]types.AttributeValue, room), Alt: make(map[string]types.AttributeValue, 3)}
	res, err := t.enc.EncodeNamed(reflect.ValueOf(boxed).UnsafePointer(), &to, t.m.enc, codecHooks)
	if err != nil || !res.Clean {
		return saveRequest{}, false, nil
	}
	key := to.Alt // the key attributes and the version, until sized
	if err := t.checkKey(key); err != nil {
		return saveRequest{}, true, err
	}
	if err := t.checkIndexKeys(to.Dst, key, true); err != nil {
		return saveRequest{}, true, err
	}
	held, next, err := t.saveVersions(v, key, sc, now)
	if err != nil {
		return saveRequest{}, true, err
	}
	if p.TokenAttr != "" && token == nil {
		token = newToken()
	}
	if p.TokenAttr == "" {
		token = nil
	}
	size, err := t.checkSaveSize(key, itemSizes{ok: true, total: res.Size, nulls: res.NullSize}, next, token, wo.behavior)
	if err != nil {
		return saveRequest{}, true, err
	}
	delete(key, s.Fields[s.Version].Name)
	r = saveRequest{key: key, held: held, next: next, token: token, uc: uc, v: v, size: size, allNew: s.Created >= 0}
	r.up = p.BuildUpdateValues(to.Dst, held, next, token, uc)
	return r, true, t.checkCondLen(r.up.Cond, nil)
}

// putRequest completes r as a SavePut's PutItem: the item holds the new
// version and the write token, under the version condition (and bs's
// basis condition, when not nil).
func (t *table) putRequest(r *saveRequest, bs *plan.Basis) error {
	p, s := t.p, t.p.S
	if s.Version >= 0 {
		if r.token == nil {
			r.item[s.Fields[s.Version].Name] = plan.NumberAV(r.next)
		} else {
			ver, tok := p.VersionAndToken(r.next, r.token) // one allocation
			if tok == nil {
				tok = &types.AttributeValueMemberB{Value: r.token}
			}
			r.item[s.Fields[s.Version].Name], r.item[p.TokenAttr] = ver, tok
		}
	}
	r.put = true
	r.pc = p.BuildPutCond(r.held, false, r.uc, bs)
	if s.Created >= 0 {
		r.createdCond = true
		r.pc.Cond, r.pc.Names, r.pc.Values = p.WithCreatedCond(r.pc.Cond, r.pc.Names, r.pc.Values, r.item)
	}
	return t.checkCondLen(r.pc.Cond, bs)
}

// checkSaveSize returns the size of the item a save with behaviour b
// stores (item encoded, sz its size as encoded, writing version next and
// token), refusing one over DynamoDB's 400 KB limit.
func (t *table) checkSaveSize(item map[string]types.AttributeValue, sz itemSizes, next int64, token []byte, b SaveBehavior) (int, error) {
	sizedAs := next
	if b == SaveClobber && t.p.S.Version >= 0 {
		// DynamoDB ADDs 1 to the stored version, which may have more
		// digits than the one held: count the widest the field holds.
		sizedAs = t.p.MaxVersion
	}
	size := t.sizeOf(item, sz, sizedAs, token, b == SavePut)
	if size > maxItemSize {
		return 0, fmt.Errorf("%w: table %q key %s: item is about %d bytes, over DynamoDB's 400 KB limit: store large values elsewhere (e.g. S3) and keep a reference",
			ErrInvalidInput, t.name, formatKey(t.pickKey(item)), size)
	}
	return size, nil
}

// saveVersions returns the version a save of v (encoded as item) holds and
// the one it writes (0, 0 for a type without a version): the next by the
// version settings, sc.step steps for Update's combined write of several
// changes, the first for SaveClobber (DynamoDB advances the stored one, or
// stores the first where there is none). A version that is negative or
// leaves no room for the step is refused.
func (t *table) saveVersions(v reflect.Value, item map[string]types.AttributeValue, sc *saveCall, now time.Time) (held, next int64, err error) {
	p, s := t.p, t.p.S
	if s.Version < 0 {
		return 0, 0, nil
	}
	if held = s.VersionOf(v); held < 0 {
		return 0, 0, t.heldVersionError(t.pickKey(item))
	}
	var ok bool
	if next, ok = p.NextVersion(held, now.UnixMilli()); !ok {
		return 0, 0, fmt.Errorf("%w: table %q key %s: version %d leaves no room for the next (step %d) in field %s (%s), which holds at most %d: %s",
			ErrInvalidInput, t.name, formatKey(t.pickKey(item)), held, p.VerStep, s.Fields[s.Version].GoName, s.Fields[s.Version].Type, p.MaxVersion, s.Widen())
	}
	if sc.step > 1 {
		// Update's combined write of several changes: one step each.
		if next, ok = p.Advance(held, sc.step, now.UnixMilli()); !ok {
			return 0, 0, fmt.Errorf("%w: table %q key %s: version %d leaves no room for %d more steps (step %d) in field %s (%s): %s",
				ErrInvalidInput, t.name, formatKey(t.pickKey(item)), held, sc.step, p.VerStep, s.Fields[s.Version].GoName, s.Fields[s.Version].Type, s.Widen())
		}
	}
	if sc.wo.behavior == SaveClobber {
		// DynamoDB advances the stored version; where there is none
		// it stores the first version.
		next = p.FirstVersion(now.UnixMilli())
	}
	return held, next, nil
}

// checkCondLen refuses a condition expression longer than DynamoDB takes.
// Update's guard of a type without a version (or of an item written
// without a write token) names every attribute the type models, so a type
// with very many attributes can reach the limit.
func (t *table) checkCondLen(cond string, bs *plan.Basis) error {
	if len(cond) <= schema.MaxExprLen {
		return nil
	}
	if bs != nil {
		fix := "add a version attribute (`dynamo:\",version\"`), whose write token pins the write instead"
		if t.p.S.Version >= 0 {
			fix = "the item carries no write token (another client wrote it): Save it once through this mapper, which stores one"
		}
		return fmt.Errorf("%w: Update on table %q: the condition that guards the write with the %d attributes %s models is %d bytes, over DynamoDB's 4 KB limit for an expression: %s",
			ErrInvalidInput, t.name, len(t.p.NonKeyFields), t.p.S.Type, len(cond), fix)
	}
	return fmt.Errorf("%w: table %q: the condition expression is %d bytes, over DynamoDB's 4 KB limit: shorten the If conditions", ErrInvalidInput, t.name, len(cond))
}

// checkChangedFrom refuses ChangedFrom where the values given to a Save
// (the only call that takes it: refusal.Rules) cannot work: another save
// behaviour than SaveUpdate, a type without a version, a nil item read.
func (t *table) checkChangedFrom(wo *writeOptions) error {
	var why string
	switch {
	case wo.behavior != SaveUpdate:
		why = fmt.Sprintf("only SaveUpdate (the default) writes the changes alone; remove WithSaveBehavior(%v) or ChangedFrom", wo.behavior)
	case t.p.S.Version < 0:
		why = fmt.Sprintf("%s has no version attribute, and only the version condition makes the stored item the one read; add a `dynamo:\",version\"` field, or remove ChangedFrom", t.p.S.Type)
	case wo.from == nil:
		why = "the item read is nil; pass the item as read (a Scan's, Query's or GetItem's), or remove ChangedFrom"
	default:
		return nil
	}
	return fmt.Errorf("%w: Save on table %q with ChangedFrom: %s", ErrInvalidInput, t.name, why)
}

// checkChangedFromItem refuses a ChangedFrom item read that is not the
// stored state the save of item (encoded, holding version held) replaces:
// another key, another version, or an unsaved item.
func (t *table) checkChangedFromItem(read, item map[string]types.AttributeValue, held int64) error {
	p := t.p
	fail := func(why string) error {
		return fmt.Errorf("%w: Save on table %q key %s with ChangedFrom: %s", ErrInvalidInput, t.name, formatKey(t.pickKey(item)), why)
	}
	for i, name := range p.KeyNames {
		if i == 1 && !p.HasRangeKey {
			break
		}
		if a, b := read[name], item[name]; a == nil || !av.Equal(a, b) {
			return fail(fmt.Sprintf("the item read holds another key (%s): pass the item read of the key saved", formatKey(t.pickKey(read))))
		}
	}
	if held == 0 {
		return fail("the item saved is unsaved (version zero), so the stored item it replaces is not known; remove ChangedFrom")
	}
	found := "no version"
	if v, ok, big := plan.StoredVersion(read, p.VersionAttr[0]); ok && !big && v == held {
		return nil
	} else if got, isN := read[p.VersionAttr[0]].(*types.AttributeValueMemberN); isN {
		found = "version " + got.Value
	}
	return fail(fmt.Sprintf("the item read holds %s, the item saved version %d: pass the item read at the version saved", found, held))
}
