package dynamo

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/refusal"
	"github.com/ddbkit/dynamo/internal/schema"
)

// Transactions as a function: Mapper.Transact runs a function over a Tx,
// which records what the function read (the stored item, or its absence)
// and buffers what it writes; the run is committed with one
// TransactWriteItems that writes the buffered items and checks that every
// item read is still as read. A conflict runs the function again, from the
// items the cancellation carries.

// Tx is the view of one run of a Mapper.Transact function: reads through
// it (Table.In(tx).Load, Tx.Prefetch) are recorded, writes
// (Table.In(tx).Save, Delete) are buffered until the run is committed. A Tx
// is valid only inside the run it was passed to; its methods are safe for
// concurrent use, but the function should not need that.
type Tx struct {
	m   *Mapper
	ctx context.Context
	run int

	mu      sync.Mutex
	done    bool  // the function returned: the Tx may no longer be used
	err     error // sticky: a failed read or a limit; the run commits nothing
	entries map[txItem]*txnEntry
	order   []*txnEntry // entries in the order the function touched them

	// cache holds items known from earlier runs (the items a cancelled
	// commit carried, or a validation read); a read in this run takes them
	// from there instead of reading again.
	cache map[txItem]txnCached
	snaps *int      // the last snapshot id handed out, shared by all runs
	o     txOptions // Transact's options
	// guards are the GuardedBy checks of the run's writes; the commit
	// carries them and Transact's own (o.guards).
	guards []TxOp
}

// txnCached is an item known without reading it: nil item means absent.
// Items with the same snap were read together, in one snapshot.
type txnCached struct {
	item map[string]types.AttributeValue
	snap int
}

// txnEntry is one item the run touched.
type txnEntry struct {
	id     txItem
	table  string
	key    map[string]types.AttributeValue
	plan   *plan.Plan
	decode func(map[string]types.AttributeValue, any) error

	read bool                            // the run read it (raw, snap)
	raw  map[string]types.AttributeValue // as read; nil: absent
	snap int

	written bool        // a write is buffered (mem)
	deleted bool        // the buffered write is a delete
	value   any         // the buffered item (a T) as the commit stores it
	based   bool        // held and bs are set (by the first write)
	held    int64       // the version the writes are checked against
	bs      *plan.Basis // the state the writes are pinned to; nil for a blind write
	mem     *txMember   // the buffered write, built
}

// TxTable is table T seen through one run of a Transact function, made by
// Table.In.
type TxTable[T any] struct {
	t  *Table[T]
	tx *Tx
}

// entry returns x's struct and the run's entry for the item with x's
// primary key (made on its first use in the run), for the call op; an error
// fails the run.
func (v TxTable[T]) entry(x T, op string) (reflect.Value, *txnEntry, error) {
	_, xv, err := v.t.box(x, op)
	if err != nil {
		return xv, nil, v.tx.fail(err)
	}
	k, err := v.t.keyOf(xv)
	if err != nil {
		return xv, nil, v.tx.fail(err)
	}
	e, err := v.tx.entry(v.t.name, k, v.t.p, v.t.decodeAny)
	return xv, e, err
}

// In returns the table as seen through tx, the Tx of the Transact run the
// caller is in: its Load, Save and Delete read and write inside that run.
// The requests go through the Mapper Transact was called on.
func (t *Table[T]) In(tx *Tx) TxTable[T] { return TxTable[T]{t: t, tx: tx} }

// Context returns the ctx Transact was called with: pass it to anything
// else the function calls (which should not have side effects). Of a nil
// *Tx, which every other call refuses with ErrInvalidInput, it returns a
// context already done whose context.Cause is that refusal, so that work
// given it stops at once, saying why.
func (tx *Tx) Context() context.Context {
	if tx == nil {
		return nilTxContext
	}
	return tx.ctx
}

// nilTxContext is the Context of a nil *Tx: done, its cause errNilTx.
var nilTxContext = func() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errNilTx)
	return ctx
}()

// errNilTx is the refusal of every call on a nil *Tx.
var errNilTx = fmt.Errorf("%w: a nil *Tx: use the one Transact passes to its function", ErrInvalidInput)

// Run returns which run of the function this is: 1 for the first, 2 after
// the first commit was cancelled by a conflict, and so on; 0 for a nil
// *Tx, which is no run (every call on it is refused with ErrInvalidInput).
func (tx *Tx) Run() int {
	if tx == nil {
		return 0
	}
	return tx.run
}

// Transact runs fn and commits what it did as one serializable transaction:
// the items fn wrote, on condition that every item fn read (through
// Table.In(tx) and Tx.Prefetch) is still as read. When one changed, nothing
// is written and fn runs again. It returns nil once a run committed, or fn's
// error as is. fn may run several times and see items that never existed
// together in a run that does not commit: it must have no side effects. With
// GuardedBy every commit carries the checks given. Rules: docs/mapper.md,
// "Transactions as a function".
//
// IAM: dynamodb:GetItem, dynamodb:UpdateItem (PutItem with SavePut),
// dynamodb:DeleteItem and dynamodb:ConditionCheckItem on the tables used.
func (m *Mapper) Transact(ctx context.Context, fn func(tx *Tx) error, opts ...TxOption) (err error) {
	ctx, c := m.begin(ctx, "Transact", "")
	defer c.endp(&err) // also when fn panics
	return m.transact(ctx, fn, opts, &c)
}

func (m *Mapper) transact(ctx context.Context, fn func(tx *Tx) error, opts []TxOption, tel *call) error {
	o, err := m.applyTxOptions("Transact", policyUpdate, opts)
	if err != nil {
		return err
	}
	o.tel = tel
	if len(o.guards) > 0 {
		// Refused before the function runs (its reads are requests).
		gs, err := buildGuards("Transact", o.guards)
		if err != nil {
			return err
		}
		if err := m.refuseStrongTx("Transact", true, gs); err != nil {
			return err
		}
	}
	switch {
	case fn == nil:
		return fmt.Errorf("%w: Transact with a nil function", ErrInvalidInput)
	case m.client == nil:
		return fmt.Errorf("%w: Transact on a Mapper that has no client: create it with dynamo.NewMapper(client)", ErrInvalidInput)
	case o.tokenSet:
		return fmt.Errorf("%w: Transact with WithRequestToken: each commit needs a token of its own, which Transact makes; to resend one fixed transaction under yours, use WriteTx", ErrInvalidInput)
	}
	cache := map[txItem]txnCached{}
	snaps := 0
	for _, k := range o.known {
		snaps++
		cache[k.id] = txnCached{item: k.item, snap: snaps}
	}
	for run := 1; ; run++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("dynamo: Transact, run %d: %w", run, err)
		}
		tx := &Tx{m: m, ctx: ctx, run: run, entries: map[txItem]*txnEntry{}, cache: cache, snaps: &snaps, o: o}
		if err := tx.call(fn); err != nil {
			return err
		}
		if tx.err != nil {
			return tx.err
		}
		next, wait, err := tx.commit(ctx)
		if next == nil {
			return err
		}
		if o.retry.exhausted(run) {
			return fmt.Errorf("dynamo: Transact gave up after %s, the items it read changed under each (%w): %w", plural(run, "run"), ErrVersionConflict, err)
		}
		cache = next
		m.noteRerun(ctx, run+1, err)
		if wait {
			if err := o.retry.wait(ctx, run); err != nil {
				return fmt.Errorf("dynamo: Transact, after run %d: %w (the last run was not committed: %w)", run, err, ErrVersionConflict)
			}
		}
	}
}

// call runs fn on tx; tx is unusable afterwards, also when fn panics.
func (tx *Tx) call(fn func(*Tx) error) error {
	defer func() {
		tx.mu.Lock()
		tx.done = true
		tx.mu.Unlock()
	}()
	return fn(tx)
}

// lock takes tx's lock for one call on the run, or returns why tx may not
// be used (nil, used after its function returned, or its run failed) and
// leaves it unlocked.
func (tx *Tx) lock() error {
	if tx == nil {
		return errNilTx
	}
	tx.mu.Lock()
	err := tx.err
	if tx.done {
		err = fmt.Errorf("%w: a *Tx used after its Transact function returned: use it only inside the function", ErrInvalidInput)
	}
	if err != nil {
		tx.mu.Unlock()
	}
	return err
}

// fail records err as the run's error: the run commits nothing even if the
// function ignores err.
func (tx *Tx) fail(err error) error {
	if tx.err == nil {
		tx.err = err
	}
	return err
}

func (tx *Tx) newSnap() int {
	*tx.snaps++
	return *tx.snaps
}

// entry returns the run's entry for the item with key on table, creating it
// (and taking it from the cache) on first use.
func (tx *Tx) entry(table string, key map[string]types.AttributeValue, p *plan.Plan, decode func(map[string]types.AttributeValue, any) error) (*txnEntry, error) {
	id := txItem{table: table, id: keyIDOf(p, key)}
	if e, ok := tx.entries[id]; ok {
		if e.plan.S != p.S {
			return nil, tx.fail(fmt.Errorf("%w: Transact: table %q key %s used as %s and as %s in one run: use one type per table",
				ErrInvalidInput, table, formatKey(key), e.plan.S.Type, p.S.Type))
		}
		return e, nil
	}
	if err := tx.m.refuseStrong("Transact", table, false); err != nil {
		return nil, tx.fail(err)
	}
	if len(tx.order) >= MaxTxItems {
		return nil, tx.fail(fmt.Errorf("%w: Transact: the function touched more than %d items (MaxTxItems) in one run, each item read or written a member of the transaction: split the work",
			ErrInvalidInput, MaxTxItems))
	}
	e := &txnEntry{id: id, table: table, key: key, plan: p, decode: decode}
	if c, ok := tx.cache[id]; ok {
		e.read, e.raw, e.snap = true, c.item, c.snap
	}
	tx.entries[id] = e
	tx.order = append(tx.order, e)
	return e, nil
}

// Save buffers a save of item, sent when the run commits: item as Save
// would store it (SaveUpdate, or SavePut; other behaviours are refused),
// checked against the version this run read of it (the version item holds
// is ignored then, as Update does) — or, when the run did not read it,
// against the version item holds. It returns the copy the commit stores,
// with its new version: Load returns it too for the rest of the run. A
// later Save or Delete of the same item in the run replaces this one.
// Encoding errors and limits are returned at once and fail the run.
func (v TxTable[T]) Save(item T, opts ...WriteOption) (T, error) {
	var zero T
	t, tx := v.t, v.tx
	if err := tx.lock(); err != nil {
		return zero, err
	}
	defer tx.mu.Unlock()
	wo := applyWriteOptions(opts)
	if err := wo.refuse(refusal.TxnSave, t.name); err != nil {
		return zero, tx.fail(err)
	}
	iv, e, err := v.entry(item, "Save")
	if err != nil {
		return zero, err
	}
	if err := e.base(func() int64 { return t.p.S.VersionOf(iv) }); err != nil {
		return zero, tx.fail(err)
	}
	if e.written && e.deleted && wo.behavior == SaveUpdate {
		wo.behavior = SavePut // after a delete in this run, leave nothing else of the item
	}
	c := t.withVersion(iv, e.held)
	boxed, cv, _ := t.box(c, "Save")
	r, err := t.buildSave(boxed, cv, &saveCall{wo: wo}, nil, e.bs, true)
	if err != nil {
		return zero, tx.fail(err)
	}
	e.mem = t.saveMember(&r)
	tx.guards = append(tx.guards, wo.guards...)
	saved := t.withVersion(r.v, r.next) // r.v: as stamped (timestamps)
	e.written, e.deleted, e.value = true, false, saved
	return saved, nil
}

// Delete buffers a delete of the item with key's primary key, sent when the
// run commits, checked against the version this run read of it (or, not
// read, the version key holds; a type without a version: the attributes
// read, or nothing). If conditions are ANDed; WithSaveBehavior is refused. Load returns ErrNotFound for it for the rest of the run.
func (v TxTable[T]) Delete(key T, opts ...WriteOption) error {
	t, tx := v.t, v.tx
	if err := tx.lock(); err != nil {
		return err
	}
	defer tx.mu.Unlock()
	wo := applyWriteOptions(opts)
	if err := wo.refuse(refusal.TxnDelete, t.name); err != nil {
		return tx.fail(err)
	}
	uc, err := plan.CompileConds(t.p.S, wo.conds)
	if err != nil {
		return tx.fail(fmt.Errorf("%w: If condition for table %q: %w", ErrInvalidInput, t.name, err))
	}
	kv, e, err := v.entry(key, "Delete")
	if err != nil {
		return err
	}
	k := e.key
	if err := e.base(func() int64 { return t.p.S.VersionOf(kv) }); err != nil {
		return tx.fail(err)
	}
	if e.held < 0 {
		return tx.fail(t.heldVersionError(k))
	}
	pc := t.p.BuildPutCond(e.held, false, uc, e.bs)
	if err := t.checkCondLen(pc.Cond, e.bs); err != nil {
		return tx.fail(err)
	}
	e.mem = &txMember{kind: "TxDelete", table: t.name, key: k, held: e.held, plan: t.p, decode: t.decodeAny, cond: uc,
		checked: true, size: av.ItemSize(k), done: func() {}}
	e.mem.item.Delete = pc.DeleteItem(t.name, k)
	tx.guards = append(tx.guards, wo.guards...)
	e.written, e.deleted, e.value = true, true, nil
	return nil
}

// checkMember builds the ConditionCheck that e, read and not written, is
// still as read: absent, or the same version and write token (a type
// without a version, or an item without a token: the same modeled
// attributes).
func (e *txnEntry) checkMember() (*txMember, error) {
	p := e.plan
	var pc plan.PutParts
	held, err := e.readVersion()
	if err != nil {
		return nil, err
	}
	if e.raw == nil {
		pc = plan.PutParts{Cond: "attribute_not_exists(" + plan.HashNamePH + ")", Names: p.HashNames}
	} else {
		pc = p.BuildPutCond(held, false, nil, &plan.Basis{Item: e.raw})
		if len(pc.Cond) > schema.MaxExprLen {
			return nil, fmt.Errorf("%w: Transact: the check that table %q key %s is unchanged names every attribute %s models, %d bytes, over the 4 KB expression limit: add a version attribute",
				ErrInvalidInput, e.table, formatKey(e.key), p.S.Type, len(pc.Cond))
		}
	}
	m := &txMember{kind: "TxCheck", table: e.table, key: e.key, held: held, plan: p, decode: e.decode, checked: true, size: av.ItemSize(e.key)}
	m.item.ConditionCheck = &types.ConditionCheck{
		TableName:                           aws.String(e.table),
		Key:                                 e.key,
		ConditionExpression:                 aws.String(pc.Cond),
		ExpressionAttributeNames:            pc.Names,
		ExpressionAttributeValues:           pc.Values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	return m, nil
}
