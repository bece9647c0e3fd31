package dynamo

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/refusal"
)

// Transactions: several version-checked writes (or reads) in one
// TransactWriteItems (TransactGetItems). The members are built by the same
// code as the single-item calls (Table.buildSave, plan.buildPutCond), so a
// member checks and writes versions exactly as Save, Delete and Load do.

// MaxTxItems is the most members one transaction may have: DynamoDB's limit
// for TransactWriteItems and TransactGetItems.
const MaxTxItems = plan.MaxTxItems

// DynamoDB's cancellation reason codes (CancellationReason.Code, and
// TxFailure.Code), the ones the mapper and its users compare against.
//
// They are untyped string constants on purpose, and stay so: TxFailure.Code
// is a string holding any code DynamoDB sends (most have no constant here),
// and callers compare it, switch on it and pass it on as a string. A named
// type (type TxCode string) would stop `f.Code == TxCodeConflict` from
// compiling where f.Code or the variable compared is a string, and turning
// TxFailure.Code into that type would break every `var code string =
// f.Code`; an untyped constant fits both.
const (
	// TxCodeConditionFailed: the member's condition failed (its version or
	// its If condition); TxFailure.Err is a *ConditionError.
	TxCodeConditionFailed = "ConditionalCheckFailed"
	// TxCodeConflict: another transaction was in flight on the member's
	// item; WriteTx and ReadTx send the transaction again.
	TxCodeConflict = "TransactionConflict"
)

const (
	txCodeNone        = "None" // the member did not cause the cancellation
	maxRequestTokenLn = 36     // ClientRequestToken length limit
)

// TxOp is one member of a write transaction, made by Table.TxSave,
// Table.TxDelete or Table.TxCheck and sent by Mapper.WriteTx. Its methods are
// unexported: only this package implements it.
type TxOp interface {
	// txWrite builds the member. token is the write token to store (nil: a
	// fresh random one).
	txWrite(token []byte) (*txMember, error)
	// txKey returns the member's table and primary key, for deriving the
	// write token; an error is reported by txWrite as well.
	txKey() (string, map[string]types.AttributeValue, error)
}

// TxGetOp is one member of a read transaction, made by Table.TxGet and sent
// by Mapper.ReadTx. Its methods are unexported: only this package
// implements it.
type TxGetOp interface {
	txRead() (*txGetMember, error)
}

// txMember is one built member of a write transaction.
type txMember struct {
	kind   string // "TxSave", "TxDelete" or "TxCheck", for messages
	table  string
	key    map[string]types.AttributeValue
	item   types.TransactWriteItem
	size   int   // estimated size, for the 4 MB limit
	held   int64 // the version the caller holds (0: unsaved or unversioned)
	plan   *plan.Plan
	decode func(map[string]types.AttributeValue, any) error
	// checked is false when the member carries no version condition
	// (SaveClobber on delete and check), so that a failure is ErrConditionFailed.
	checked bool
	// cond is the member's If condition, named when it fails (nil: none).
	cond *plan.UserCond
	// done records the result once the transaction has succeeded.
	done func()
	// created is the creation time a TxSave writes under the condition
	// that the stored one is absent or equal (nil: none).
	created types.AttributeValue
	// guards are the member's GuardedBy checks, which the transaction
	// carries too.
	guards []TxOp
}

// TxSave is a save in a write transaction, made by Table.TxSave. After the
// transaction succeeded, Saved returns the saved copy.
type TxSave[T any] struct {
	t     *Table[T]
	item  T
	opts  []WriteOption
	saved T
	// The clock reading of the last request built with a request token
	// (stampTok, the write token derived from it), reused when the same
	// token is sent again: a resend must carry the same times and
	// clock-started version, or DynamoDB refuses it as another transaction
	// under a used token.
	stampTok []byte
	stampNow time.Time
}

// TxSave returns a member of a write transaction (Mapper.WriteTx) that saves
// item as Table.Save does, with its version condition and write token; If
// conditions are ANDed with the version condition. Only SaveUpdate and
// SavePut are allowed: the other behaviours' saved copy is the item as stored,
// which a transaction does not return. item is not modified; a pointer's
// struct is read when WriteTx builds the request. Nothing is sent until
// WriteTx.
func (t *Table[T]) TxSave(item T, opts ...WriteOption) *TxSave[T] {
	return &TxSave[T]{t: t, item: item, opts: append([]WriteOption(nil), opts...)}
}

// Saved returns the saved copy — the item with its new version — after the
// transaction that carried s succeeded; before that, the zero T. The copy is
// never the value passed to TxSave. When DynamoDB recognised the transaction
// as one it had applied already (WithRequestToken), it is the copy that
// transaction stored, which others may have changed since.
func (s *TxSave[T]) Saved() T { return s.saved }

func (s *TxSave[T]) txKey() (string, map[string]types.AttributeValue, error) {
	_, v, err := s.t.box(s.item, "TxSave")
	if err != nil {
		return s.t.name, nil, err
	}
	key, err := s.t.keyOf(v)
	return s.t.name, key, err
}

func (s *TxSave[T]) txWrite(token []byte) (*txMember, error) {
	t := s.t
	wo := applyWriteOptions(s.opts)
	if err := wo.refuse(refusal.TxSave, t.name); err != nil {
		return nil, err
	}
	boxed, v, err := t.box(s.item, "TxSave")
	if err != nil {
		return nil, err
	}
	var now time.Time
	if t.p.S.HasStamps() || t.p.VerClock {
		if token != nil && bytes.Equal(token, s.stampTok) {
			now = s.stampNow
		} else {
			now = t.m.opts.clock.Now()
			if token != nil {
				s.stampTok, s.stampNow = token, now
			}
		}
	}
	r, err := t.buildSave(boxed, v, &saveCall{wo: wo, now: now}, token, nil, true)
	if err != nil {
		return nil, err
	}
	m := t.saveMember(&r)
	m.guards = wo.guards
	next, sv := r.next, r.v // sv: the value as stamped (timestamps)
	m.done = func() { s.saved = t.withVersion(sv, next) }
	return m, nil
}

// saveMember builds the transaction member that sends the save r, asking
// for the item as stored when its condition fails (ALL_OLD).
func (t *Table[T]) saveMember(r *saveRequest) *txMember {
	m := &txMember{kind: "TxSave", table: t.name, held: r.held, plan: t.p, decode: t.decodeAny, checked: true, cond: r.uc}
	if r.put {
		m.key = t.pickKey(r.item)
		m.item.Put = &types.Put{
			TableName:                           aws.String(t.name),
			Item:                                r.item,
			ConditionExpression:                 plan.StrPtr(r.pc.Cond),
			ExpressionAttributeNames:            r.pc.Names,
			ExpressionAttributeValues:           r.pc.Values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}
	} else {
		m.key = r.key
		m.item.Update = &types.Update{
			TableName:                           aws.String(t.name),
			Key:                                 r.key,
			UpdateExpression:                    plan.StrPtr(r.up.Update),
			ConditionExpression:                 plan.StrPtr(r.up.Cond),
			ExpressionAttributeNames:            r.up.Names,
			ExpressionAttributeValues:           r.up.Values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}
	}
	m.size = t.writtenSize(r.item, r.next, r.token, r.put)
	if r.createdCond {
		m.created = r.item[t.p.S.Fields[t.p.S.Created].Name]
	}
	return m
}

// txCond is a member that writes nothing but a condition on one item:
// a delete or a condition check.
type txCond[T any] struct {
	t     *Table[T]
	item  T
	opts  []WriteOption
	check bool // ConditionCheck rather than Delete
}

// TxDelete returns a member of a write transaction (Mapper.WriteTx) that
// deletes the item with item's primary key the way Table.Delete does: for a
// versioned type on condition that the stored version is the one item holds
// (an unsaved item: that no version is stored); with SaveClobber without a
// version condition. If conditions are ANDed. item is not modified. Nothing
// is sent until WriteTx.
func (t *Table[T]) TxDelete(item T, opts ...WriteOption) TxOp {
	return &txCond[T]{t: t, item: item, opts: append([]WriteOption(nil), opts...)}
}

// TxCheck returns a member of a write transaction (Mapper.WriteTx) that
// writes nothing but makes the transaction fail unless the item with item's
// primary key still has the version item holds (an unsaved item: that no
// version is stored) and the If conditions hold: a ConditionCheck. Use it to
// make writes of other items depend on items the transaction does not
// change. With SaveClobber only the If conditions are checked; a check with
// no condition at all (an unversioned type without If, or SaveClobber without
// If) is refused by WriteTx. item is not modified. Nothing is sent until
// WriteTx.
func (t *Table[T]) TxCheck(item T, opts ...WriteOption) TxOp {
	return &txCond[T]{t: t, item: item, opts: append([]WriteOption(nil), opts...), check: true}
}

func (c *txCond[T]) kind() string {
	if c.check {
		return "TxCheck"
	}
	return "TxDelete"
}

func (c *txCond[T]) txKey() (string, map[string]types.AttributeValue, error) {
	_, v, err := c.t.box(c.item, c.kind())
	if err != nil {
		return c.t.name, nil, err
	}
	key, err := c.t.keyOf(v)
	return c.t.name, key, err
}

func (c *txCond[T]) txWrite([]byte) (*txMember, error) {
	t := c.t
	wo := applyWriteOptions(c.opts)
	call := refusal.TxDelete
	if c.check {
		call = refusal.TxCheck
	}
	if err := wo.refuse(call, t.name); err != nil {
		return nil, err
	}
	clobber := wo.behavior == SaveClobber
	_, v, err := t.box(c.item, c.kind())
	if err != nil {
		return nil, err
	}
	key, err := t.keyOf(v)
	if err != nil {
		return nil, err
	}
	uc, err := plan.CompileConds(t.p.S, wo.conds)
	if err != nil {
		return nil, fmt.Errorf("%w: If condition for table %q: %w", ErrInvalidInput, t.name, err)
	}
	held := t.p.S.VersionOf(v)
	if held < 0 {
		return nil, t.heldVersionError(key)
	}
	pc := t.p.BuildPutCond(held, clobber, uc, nil)
	m := &txMember{kind: c.kind(), table: t.name, key: key, held: held, plan: t.p, decode: t.decodeAny, cond: uc,
		checked: !clobber, size: av.ItemSize(key), done: func() {}, guards: wo.guards}
	if c.check {
		if pc.Cond == "" {
			why := "type " + t.p.S.Type.String() + " has no version attribute"
			if t.p.S.Version >= 0 {
				why = "SaveClobber turns the version check off"
			}
			return nil, fmt.Errorf("%w: TxCheck on table %q key %s checks nothing (%s): add an If condition, or leave the item out of the transaction",
				ErrInvalidInput, t.name, formatKey(key), why)
		}
		m.item.ConditionCheck = &types.ConditionCheck{
			TableName:                           aws.String(t.name),
			Key:                                 key,
			ConditionExpression:                 aws.String(pc.Cond),
			ExpressionAttributeNames:            pc.Names,
			ExpressionAttributeValues:           pc.Values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}
		return m, nil
	}
	m.item.Delete = pc.DeleteItem(t.name, key)
	return m, nil
}

// WriteTx writes ops — saves, deletes and checks on up to MaxTxItems items of
// any tables — in one TransactWriteItems: all or none, each member checking
// versions as its single-item call does. After success each TxSave's Saved
// returns its copy. A failed condition is a *TxError naming each failing
// member; an error after an attempt that may have been applied satisfies
// errors.Is(err, ErrUnknownOutcome): resend with the same WithRequestToken to
// settle it. ctx bounds the whole call. Rules: docs/mapper.md, "Write
// transactions".
//
// IAM: per member, on its table, dynamodb:UpdateItem (TxSave; PutItem with
// SavePut), dynamodb:DeleteItem (TxDelete) or dynamodb:ConditionCheckItem.
func (m *Mapper) WriteTx(ctx context.Context, ops []TxOp, opts ...TxOption) error {
	ctx, c := m.begin(ctx, "WriteTx", "")
	c.noteItems(len(ops))
	return c.end(m.writeTx(ctx, ops, opts, &c))
}

func (m *Mapper) writeTx(ctx context.Context, ops []TxOp, opts []TxOption, tel *call) error {
	o, err := m.applyTxOptions("WriteTx", policyTx, opts)
	if err != nil {
		return err
	}
	o.tel = tel
	if o.tokenSet && (o.token == "" || len(o.token) > maxRequestTokenLn) {
		return fmt.Errorf("%w: WriteTx request token %q: DynamoDB takes 1 to %d characters", ErrInvalidInput, o.token, maxRequestTokenLn)
	}
	if err := plan.TxCount("WriteTx", len(ops)); err != nil {
		return err
	}
	members, err := writeTxMembers(ops, o)
	if err != nil {
		return err
	}
	if err := m.refuseStrongTx("WriteTx", false, members); err != nil {
		return err
	}
	o.tel.noteTables(members)

	in := &dynamodb.TransactWriteItemsInput{TransactItems: make([]types.TransactWriteItem, len(members))}
	for i, mem := range members {
		in.TransactItems[i] = mem.item
	}
	if o.tokenSet {
		in.ClientRequestToken = aws.String(o.token)
	} else {
		in.ClientRequestToken = aws.String(hex.EncodeToString(newToken()))
	}
	// in is built once and sent unchanged on every attempt: the SDK fills in
	// nothing (the token is set), and an identical request under the same
	// token is what DynamoDB recognises as the same transaction. So the SDK
	// may send it again after a lost answer.
	var att attempts
	err = retryTx(ctx, o, "WriteTx", members, txHint, func() error {
		_, err := m.client.TransactWriteItems(ctx, in, att.option(false))
		return err
	})
	if err != nil {
		return txOutcome(err, &att)
	}
	for _, mem := range members {
		mem.done()
	}
	return nil
}

// writeTxMembers builds the members of a WriteTx of ops with options o —
// the ops, then the GuardedBy checks — and refuses, before anything is
// sent, a nil op, two members on one item, and too many members or bytes.
func writeTxMembers(ops []TxOp, o txOptions) ([]*txMember, error) {
	members := make([]*txMember, len(ops))
	seen := make(map[txItem]int, len(ops))
	for i, op := range ops {
		if op == nil {
			return nil, fmt.Errorf("%w: WriteTx member %d is nil", ErrInvalidInput, i)
		}
		var token []byte
		if o.tokenSet {
			table, key, err := op.txKey()
			if err == nil {
				token = plan.TxWriteToken(o.token, table, formatKey(key))
			}
		}
		mem, err := op.txWrite(token)
		if err != nil {
			return nil, fmt.Errorf("dynamo: WriteTx member %d: %w", i, err)
		}
		if j, dup := seen[txItemID(mem)]; dup {
			return nil, fmt.Errorf("%w: WriteTx members %d and %d are both on table %q key %s: DynamoDB allows one operation per item in a transaction; merge them",
				ErrInvalidInput, j, i, mem.table, formatKey(mem.key))
		}
		seen[txItemID(mem)] = i
		members[i] = mem
	}
	// The GuardedBy checks, of the call and of its members, follow the ops
	// (an op that is also one of the ops is sent once, as the op).
	guards := o.guards
	for _, mem := range members {
		guards = append(guards, mem.guards...)
	}
	guards = slices.DeleteFunc(slices.Clone(guards), func(g TxOp) bool { return g != nil && slices.Contains(ops, g) })
	gs, err := buildGuards("WriteTx", guards)
	if err != nil {
		return nil, err
	}
	for j, mem := range gs {
		i := len(ops) + j
		if k, dup := seen[txItemID(mem)]; dup {
			return nil, fmt.Errorf("%w: WriteTx members %d and %d (a GuardedBy check) are both on table %q key %s: a transaction takes one operation per item; check another item",
				ErrInvalidInput, k, i, mem.table, formatKey(mem.key))
		}
		seen[txItemID(mem)] = i
		members = append(members, mem)
	}
	if err := checkTxLimits("WriteTx", "ops", members, len(gs), o.guardNames); err != nil {
		return nil, err
	}
	return members, nil
}

// txOutcome is the error WriteTx returns for err, the error of its last
// attempt. A cancellation that names its reasons means nothing was written:
// had an earlier attempt under the same request token been applied, DynamoDB
// would have answered the resend with success. Any other error after an
// attempt that may have been applied — a lost answer, a 5xx, a transaction
// still in progress under the token — leaves the outcome open:
// ErrUnknownOutcome.
func txOutcome(err error, att *attempts) error {
	var te *TxError
	if errors.As(err, &te) {
		if len(te.Failures) == 0 && (att.maybeApplied() || txInProgress(te.Cause)) {
			te.unknown = true
		}
		return te
	}
	if att.maybeApplied() || att.unrecorded() {
		return fmt.Errorf("%w: %w (an attempt got no answer and may have been applied; resend with the same request token, WithRequestToken, within 10 minutes to settle it)", ErrUnknownOutcome, err)
	}
	return err
}

// txInProgress reports whether err is DynamoDB's
// TransactionInProgressException: a transaction under the same request
// token is still being applied.
func txInProgress(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "TransactionInProgressException"
}

// retryTx sends a transaction until it succeeds, fails for good (the
// *TxError naming the members that failed, or the SDK's error), or has been
// cancelled by conflicting transactions as often as o.retry allows, with backoff in
// between. name ("WriteTx", "ReadTx") and hint shape the errors.
func retryTx[M txMemberInfo](ctx context.Context, o txOptions, name string, ms []M, hint func(error) string, send func() error) error {
	for attempt := 1; ; attempt++ {
		err := send()
		if err == nil {
			return nil
		}
		txErr, retry := txFailure(err, ms, len(ms))
		if txErr == nil {
			return fmt.Errorf("dynamo: %s of %s: %w%s", name, plural(len(ms), "member"), err, hint(err))
		}
		if !retry {
			return txErr
		}
		if o.retry.exhausted(attempt) {
			txErr.Attempts = attempt
			return txErr
		}
		if err := o.retry.wait(ctx, attempt); err != nil {
			return fmt.Errorf("dynamo: %s of %s, after %s cancelled by conflicting transactions: %w", name, plural(len(ms), "member"), plural(attempt, "attempt"), err)
		}
	}
}

// checkTxLimits refuses the members of a transaction that DynamoDB would:
// none, more than MaxTxItems, more than 4 MB in all. The one check for
// WriteTx, Transact and the guarded writes of GuardedBy. The last checks
// members are GuardedBy checks (named names, when given) added to the
// call's own, which are noun ("ops"): a refusal for their number says the
// checks took room, and how to split the rest.
func checkTxLimits(call, noun string, members []*txMember, checks int, names []string) error {
	size := 0
	for _, mem := range members {
		size += mem.size
	}
	return plan.TxLimits(call, noun, len(members), size, checks, names)
}

// txItemID identifies an item across tables, for refusing duplicates.
func txItemID(m *txMember) txItem {
	return txItem{table: m.table, id: keyIDOf(m.plan, m.key)}
}

// txItem identifies an item across tables.
type txItem struct {
	table string
	id    keyID
}

// txHint explains errors whose fix is not obvious from DynamoDB's message.
func txHint(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "IdempotentParameterMismatchException" {
		return " (the request token was used in the last 10 minutes for a transaction with other members or values: use a new token for each transaction)"
	}
	return ""
}
