package dynamo

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
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
	plan   *plan
	decode func(map[string]types.AttributeValue, any) error

	read bool                            // the run read it (raw, snap)
	raw  map[string]types.AttributeValue // as read; nil: absent
	snap int

	written bool      // a write is buffered (mem)
	deleted bool      // the buffered write is a delete
	value   any       // the buffered item (a T) as the commit stores it
	based   bool      // held and bs are set (by the first write)
	held    int64     // the version the writes are checked against
	bs      *basis    // the state the writes are pinned to; nil for a blind write
	mem     *txMember // the buffered write, built
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
// the items fn wrote, on condition that every item fn read — through
// Table.In(tx) and Tx.Prefetch, on any tables — is still as fn read it.
// When one of them changed, nothing is written and fn runs again on the
// items as they are now. Transact returns nil once a run committed, and
// fn's error as is when fn fails (nothing of that run is written). fn may
// run several times, and may see items that never existed together in a run
// that then does not commit: it must have no side effects. ctx bounds the
// whole call; WithRetry (here or on NewMapper) bounds the runs.
//
// What fn sees, how a run commits, retries, lost answers and limits are in
// docs/mapper.md, section "Transactions as a function". With
// GuardedBy (here or on a Save or Delete in fn), every commit carries the
// checks given, and a failed check ends Transact with its *TxError.
//
// IAM: dynamodb:GetItem (reads, Prefetch), dynamodb:UpdateItem (Save;
// dynamodb:PutItem with SavePut), dynamodb:DeleteItem and
// dynamodb:ConditionCheckItem on the tables used.
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
		if _, err := buildGuards("Transact", o.guards); err != nil {
			return err
		}
	}
	switch {
	case fn == nil:
		return fmt.Errorf("%w: Transact with a nil function", ErrInvalidInput)
	case m.client == nil:
		return fmt.Errorf("%w: Transact on a Mapper that has no client: create it with dynamo.NewMapper(client)", ErrInvalidInput)
	case o.tokenSet:
		return fmt.Errorf("%w: Transact with WithRequestToken: each commit Transact sends needs a request token of its own, which Transact makes; to resend one fixed transaction under your token, use WriteTx", ErrInvalidInput)
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
			return fmt.Errorf("dynamo: Transact gave up after %d runs, the items it read changed under each (%w): %w", run, ErrVersionConflict, err)
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
func (tx *Tx) entry(table string, key map[string]types.AttributeValue, p *plan, decode func(map[string]types.AttributeValue, any) error) (*txnEntry, error) {
	id := txItem{table: table, id: p.keyID(key)}
	if e, ok := tx.entries[id]; ok {
		if e.plan.s != p.s {
			return nil, tx.fail(fmt.Errorf("%w: Transact: table %q key %s used as %s and as %s in one run: use one type per table",
				ErrInvalidInput, table, formatKey(key), e.plan.s.Type, p.s.Type))
		}
		return e, nil
	}
	if len(tx.order) >= MaxTxItems {
		return nil, tx.fail(fmt.Errorf("%w: Transact: the function touched more than %d items (MaxTxItems) in one run: DynamoDB takes at most %d members in a transaction, and each item read or written is one; split the work",
			ErrInvalidInput, MaxTxItems, MaxTxItems))
	}
	e := &txnEntry{id: id, table: table, key: key, plan: p, decode: decode}
	if c, ok := tx.cache[id]; ok {
		e.read, e.raw, e.snap = true, c.item, c.snap
	}
	tx.entries[id] = e
	tx.order = append(tx.order, e)
	return e, nil
}

// read reads e with a strongly consistent GetItem unless it is known.
func (tx *Tx) read(e *txnEntry) error {
	if e.read {
		return nil
	}
	out, err := tx.m.client.GetItem(tx.ctx, &dynamodb.GetItemInput{TableName: aws.String(e.table), Key: e.key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return tx.fail(fmt.Errorf("dynamo: Transact: load from table %q key %s: %w", e.table, formatKey(e.key), err))
	}
	e.read, e.raw, e.snap = true, out.Item, tx.newSnap()
	return nil
}

// Prefetch reads the items gets name (Table.TxGet(key)) that this run does
// not know yet together, with one TransactGetItems — a consistent snapshot
// of them — and records them as read; Load then returns them without a
// request. Call it first in the function with every item the function will
// read, so that it sees them consistently. Items the run knows already (read
// or written earlier in the run, or carried over from a cancelled commit)
// are not read again. Each TxGet's Item is set to the item as the run sees
// it. A failed read is returned and fails the run.
func (tx *Tx) Prefetch(gets ...TxGetOp) error {
	if err := tx.lock(); err != nil {
		return err
	}
	defer tx.mu.Unlock()
	type pending struct {
		e   *txnEntry
		mem *txGetMember
	}
	var all, toRead []pending
	queued := map[*txnEntry]bool{}
	for i, g := range gets {
		if g == nil {
			return tx.fail(fmt.Errorf("%w: Prefetch get %d is nil", ErrInvalidInput, i))
		}
		mem, err := g.txRead()
		if err != nil {
			return tx.fail(fmt.Errorf("dynamo: Prefetch get %d: %w", i, err))
		}
		e, err := tx.entry(mem.table, mem.key, mem.plan, mem.decode)
		if err != nil {
			return err
		}
		all = append(all, pending{e, mem})
		if !e.read && !e.written && !queued[e] {
			queued[e] = true
			toRead = append(toRead, pending{e, mem})
		}
	}
	if len(toRead) > 0 {
		in := &dynamodb.TransactGetItemsInput{TransactItems: make([]types.TransactGetItem, len(toRead))}
		ms := make([]*txGetMember, len(toRead))
		for i, p := range toRead {
			// The whole item, as the run's GetItem reads take it: the
			// commit pins what it read by the write token, which the
			// type's projection leaves out.
			get := p.mem.get
			get.ProjectionExpression, get.ExpressionAttributeNames = nil, nil
			in.TransactItems[i].Get = &get
			ms[i] = p.mem
		}
		out, err := tx.getTogether(in, ms)
		if err != nil {
			return tx.fail(fmt.Errorf("dynamo: Transact: Prefetch: %w", err))
		}
		snap := tx.newSnap()
		for i, p := range toRead {
			p.e.read, p.e.raw, p.e.snap = true, out[i], snap
		}
	}
	for _, p := range all {
		if err := tx.fill(p.e, p.mem); err != nil {
			return tx.fail(err)
		}
	}
	return nil
}

// fill sets the TxGet of mem to e as the run sees it.
func (tx *Tx) fill(e *txnEntry, mem *txGetMember) error {
	if e.written && !e.deleted {
		mem.setValue(e.value)
		return nil
	}
	raw := e.raw
	if e.written {
		raw = nil
	}
	done, err := mem.set(raw)
	if err != nil {
		return err
	}
	done()
	return nil
}

// getTogether reads the items of in with one TransactGetItems (sent again
// while write transactions are in flight on them); nil for an absent one.
func (tx *Tx) getTogether(in *dynamodb.TransactGetItemsInput, ms []*txGetMember) ([]map[string]types.AttributeValue, error) {
	var out *dynamodb.TransactGetItemsOutput
	err := retryTx(tx.ctx, tx.o, "TransactGetItems", ms, func(error) string { return "" }, func() (err error) {
		out, err = tx.m.client.TransactGetItems(tx.ctx, in)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(out.Responses) != len(ms) {
		return nil, fmt.Errorf("DynamoDB answered %d gets with %d responses", len(ms), len(out.Responses))
	}
	items := make([]map[string]types.AttributeValue, len(ms))
	for i, r := range out.Responses {
		if len(r.Item) > 0 {
			items[i] = r.Item
		}
	}
	return items, nil
}

// Load returns the item whose primary key is the key fields of key, as this
// run sees it (see Mapper.Transact): the buffered item after a Save or
// Delete in this run, else the item read — from a Prefetch, from an earlier
// run's cancelled commit, or with a strongly consistent GetItem now. An
// absent item is an error wrapping ErrNotFound, and its absence is checked
// at commit like any read. A failed read is returned and fails the run.
func (v TxTable[T]) Load(key T) (T, error) {
	var zero T
	t, tx := v.t, v.tx
	if err := tx.lock(); err != nil {
		return zero, err
	}
	defer tx.mu.Unlock()
	_, e, err := v.entry(key, "Load")
	if err != nil {
		return zero, err
	}
	k := e.key
	if e.written {
		if e.deleted {
			return zero, fmt.Errorf("%w: table %q key %s (deleted earlier in this run)", ErrNotFound, t.name, formatKey(k))
		}
		return e.value.(T), nil
	}
	if err := tx.read(e); err != nil {
		return zero, err
	}
	if e.raw == nil {
		return zero, fmt.Errorf("%w: table %q key %s", ErrNotFound, t.name, formatKey(k))
	}
	if err := notOurs(t.p.s, t.name, k, e.raw); err != nil {
		return zero, err
	}
	out, err := t.decode(e.raw)
	if err != nil {
		return zero, tx.fail(err)
	}
	return out, nil
}

// base sets the version and state e's writes are checked against, on its
// first write: what the run read, or — for an item the run did not read —
// the version item holds (a blind write, checked as Table.TxSave does).
func (e *txnEntry) base(held func() int64) error {
	if e.based {
		return nil
	}
	e.based = true
	if !e.read {
		e.held = held()
		return nil
	}
	e.bs = &basis{item: e.raw}
	var err error
	e.held, err = e.readVersion()
	return err
}

// readVersion returns the version of the item the run read for e: 0 for
// an absent item or a type without a version, an error wrapping
// ErrInvalidInput when it does not fit an int64.
func (e *txnEntry) readVersion() (int64, error) {
	if e.plan.s.Version < 0 || e.raw == nil {
		return 0, nil
	}
	v, _, big := storedVersion(e.raw, e.plan.s.Fields[e.plan.s.Version].Name)
	if big || v < 0 {
		return 0, fmt.Errorf("%w: table %q key %s: the stored version does not fit an int64", ErrInvalidInput, e.table, formatKey(e.key))
	}
	return v, nil
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
	if err := wo.refuse(callTxnSave, t.name); err != nil {
		return zero, tx.fail(err)
	}
	iv, e, err := v.entry(item, "Save")
	if err != nil {
		return zero, err
	}
	if err := e.base(func() int64 { return t.p.s.VersionOf(iv) }); err != nil {
		return zero, tx.fail(err)
	}
	if e.written && e.deleted && wo.behavior == SaveUpdate {
		wo.behavior = SavePut // after a delete in this run, leave nothing else of the item
	}
	c := t.withVersion(iv, e.held)
	boxed, cv, _ := t.box(c, "Save")
	r, err := t.buildSave(boxed, cv, &wo, nil, e.bs, true, time.Time{})
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
	if err := wo.refuse(callTxnDelete, t.name); err != nil {
		return tx.fail(err)
	}
	uc, err := compileConds(t.p.s, wo.conds)
	if err != nil {
		return tx.fail(fmt.Errorf("%w: If condition for table %q: %w", ErrInvalidInput, t.name, err))
	}
	kv, e, err := v.entry(key, "Delete")
	if err != nil {
		return err
	}
	k := e.key
	if err := e.base(func() int64 { return t.p.s.VersionOf(kv) }); err != nil {
		return tx.fail(err)
	}
	if e.held < 0 {
		return tx.fail(t.heldVersionError(k))
	}
	pc := t.p.buildPutCond(e.held, false, uc, e.bs)
	if err := t.checkCondLen(pc.cond, e.bs); err != nil {
		return tx.fail(err)
	}
	e.mem = &txMember{kind: "TxDelete", table: t.name, key: k, held: e.held, plan: t.p, decode: t.decodeAny, cond: uc,
		checked: true, size: av.ItemSize(k), done: func() {}}
	e.mem.item.Delete = pc.deleteItem(t.name, k)
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
	var pc putParts
	held, err := e.readVersion()
	if err != nil {
		return nil, err
	}
	if e.raw == nil {
		pc = putParts{cond: "attribute_not_exists(" + hashNamePH + ")", names: p.hashNames}
	} else {
		pc = p.buildPutCond(held, false, nil, &basis{item: e.raw})
		if len(pc.cond) > schema.MaxExprLen {
			return nil, fmt.Errorf("%w: Transact: the check that table %q key %s is unchanged names every attribute %s models and is %d bytes, over DynamoDB's 4 KB limit for an expression: add a version attribute, whose write token pins the item instead",
				ErrInvalidInput, e.table, formatKey(e.key), p.s.Type, len(pc.cond))
		}
	}
	m := &txMember{kind: "TxCheck", table: e.table, key: e.key, held: held, plan: p, decode: e.decode, checked: true, size: av.ItemSize(e.key)}
	m.item.ConditionCheck = &types.ConditionCheck{
		TableName:                           aws.String(e.table),
		Key:                                 e.key,
		ConditionExpression:                 aws.String(pc.cond),
		ExpressionAttributeNames:            pc.names,
		ExpressionAttributeValues:           pc.values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	return m, nil
}

// commit sends the run. It returns the items the next run starts from when
// fn must run again (and whether to back off first), else nil and the
// result of Transact.
func (tx *Tx) commit(ctx context.Context) (map[txItem]txnCached, bool, error) {
	writes := 0
	for _, e := range tx.order {
		if e.written {
			writes++
		}
	}
	if writes == 0 {
		return tx.validateReads()
	}
	in, members, entries, err := tx.build()
	if err != nil {
		return nil, false, err
	}
	unknown, err := tx.send(ctx, in, members)
	if err == nil || unknown {
		return nil, false, err
	}
	var te *TxError
	if !errors.As(err, &te) || len(te.Failures) == 0 {
		return nil, false, fmt.Errorf("dynamo: Transact, run %d: %w", tx.run, err)
	}
	return tx.classify(te, entries)
}

// build makes the run's TransactWriteItems: one member per item touched —
// its buffered write, or for an item only read the check that it is still
// as read — with a fresh client request token. entries are the members'
// items, in order.
func (tx *Tx) build() (*dynamodb.TransactWriteItemsInput, []*txMember, []*txnEntry, error) {
	members := make([]*txMember, 0, len(tx.order))
	entries := make([]*txnEntry, 0, len(tx.order))
	for _, e := range tx.order {
		mem := e.mem
		if !e.written {
			if !e.read {
				continue // touched by a failed read only
			}
			var err error
			if mem, err = e.checkMember(); err != nil {
				return nil, nil, nil, err
			}
		}
		members = append(members, mem)
		entries = append(entries, e)
	}
	// The GuardedBy checks follow the items' members.
	gs, err := buildGuards("Transact", append(slices.Clone(tx.o.guards), tx.guards...))
	if err != nil {
		return nil, nil, nil, err
	}
	for _, mem := range gs {
		if _, dup := tx.entries[txItemID(mem)]; dup {
			return nil, nil, nil, fmt.Errorf("%w: Transact: a GuardedBy check is on table %q key %s, which the function read or wrote: DynamoDB allows one operation per item in a transaction; check another item",
				ErrInvalidInput, mem.table, formatKey(mem.key))
		}
		members = append(members, mem)
	}
	if err := checkTxLimits("Transact", "items read or written", members, len(gs), tx.o.guardNames); err != nil {
		return nil, nil, nil, err
	}
	in := &dynamodb.TransactWriteItemsInput{
		TransactItems:      make([]types.TransactWriteItem, len(members)),
		ClientRequestToken: aws.String(hex.EncodeToString(newToken())),
	}
	for i, mem := range members {
		in.TransactItems[i] = mem.item
	}
	return in, members, entries, nil
}

// send sends in, the run's commit, with Mapper.sendTx.
func (tx *Tx) send(ctx context.Context, in *dynamodb.TransactWriteItemsInput, members []*txMember) (unknown bool, err error) {
	return tx.m.sendTx(ctx, tx.o, fmt.Sprintf("Transact, run %d", tx.run), in, members)
}

// sendTx sends in, one transaction of its own (Transact's run commits, the
// guarded writes of Save, Update and Delete). One request and one token:
// the SDK's resends of it (and retryTx's after a TransactionConflict) are
// the same transaction, which DynamoDB applies at most once. When the
// outcome is still unknown, the same request is sent again under the same
// token (within DynamoDB's 10 minutes): an applied transaction then answers
// success, one that was not is decided now. It returns nil on success;
// unknown and an error wrapping ErrUnknownOutcome, naming call, when no
// resend settled the outcome; else the transaction's error (a *TxError when
// DynamoDB cancelled it).
func (m *Mapper) sendTx(ctx context.Context, o txOptions, call string, in *dynamodb.TransactWriteItemsInput, members []*txMember) (unknown bool, err error) {
	o.tel.noteTables(members)
	for round := 0; ; round++ {
		att := new(attempts)
		err = retryTx(ctx, o, call, members, txHint, func() error {
			_, err := m.client.TransactWriteItems(ctx, in, att.option(false))
			return err
		})
		if err == nil {
			return false, nil
		}
		var te *TxError
		if errors.As(err, &te) {
			err = txOutcome(err, att) // marks te unknown when it may have been applied
			unknown = errors.Is(err, ErrUnknownOutcome)
		} else {
			unknown = att.maybeApplied() || att.unrecorded()
		}
		if !unknown {
			return false, err
		}
		if round >= maxResends || o.retry.wait(ctx, round+1) != nil {
			return true, fmt.Errorf("dynamo: %s: %w: the transaction may have been applied, and %d resends under its request token did not settle it; it is not built again (nor a function run again), which could apply its change twice: read the items to find out: %w",
				call, ErrUnknownOutcome, round, err)
		}
	}
}

// classify decides what a cancelled commit te means: the function runs
// again — from the items as the cancellation found them: those whose check
// failed as carried (ALL_OLD), those whose check held as read, those busy
// with another transaction read again — when only its reads went stale
// (the stored item is not the one read: sameState) or other transactions
// were in flight; otherwise te is Transact's error.
func (tx *Tx) classify(te *TxError, entries []*txnEntry) (map[txItem]txnCached, bool, error) {
	refreshed := map[int]map[string]types.AttributeValue{}
	dropped := map[int]bool{}
	for _, f := range te.Failures {
		if f.Index >= len(entries) {
			return nil, false, te // a GuardedBy check failed: running fn again would not change it
		}
		e := entries[f.Index]
		switch f.Code {
		case TxCodeConditionFailed:
			ce, ok := f.Err.(*ConditionError)
			if !ok || !e.read || e.plan.sameState(e.raw, ce.Item) {
				// A blind write whose held version is stale, or an If
				// condition that failed on the item the function read:
				// running the function again would not change that.
				return nil, false, te
			}
			refreshed[f.Index] = ce.Item
		case TxCodeConflict:
			dropped[f.Index] = true
		default:
			return nil, false, te
		}
	}
	next := make(map[txItem]txnCached, len(entries))
	for i, e := range entries {
		switch {
		case dropped[i]:
		case hasKey(refreshed, i):
			next[e.id] = txnCached{item: refreshed[i], snap: tx.newSnap()}
		case e.read:
			next[e.id] = txnCached{item: e.raw, snap: e.snap}
		}
	}
	return next, true, te
}

func hasKey[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}

// validateReads ends a read-only run: nothing to write. Reads from one
// snapshot stand; otherwise they are read again together, and a run that
// saw anything else runs again from that snapshot.
func (tx *Tx) validateReads() (map[txItem]txnCached, bool, error) {
	var reads []*txnEntry
	for _, e := range tx.order {
		if e.read {
			reads = append(reads, e)
		}
	}
	consistent := true
	for _, e := range reads {
		if e.snap != reads[0].snap {
			consistent = false
			break
		}
	}
	if consistent {
		return nil, false, nil
	}
	in := &dynamodb.TransactGetItemsInput{TransactItems: make([]types.TransactGetItem, len(reads))}
	ms := make([]*txGetMember, len(reads))
	for i, e := range reads {
		ms[i] = &txGetMember{txMember: txMember{kind: "TxGet", table: e.table, key: e.key, plan: e.plan, decode: e.decode},
			get: types.Get{TableName: aws.String(e.table), Key: e.key}}
		in.TransactItems[i].Get = &ms[i].get
	}
	cur, err := tx.getTogether(in, ms)
	if err != nil {
		return nil, false, fmt.Errorf("dynamo: Transact, run %d: reading the %d items the read-only run read from several snapshots again, to check them: %w", tx.run, len(reads), err)
	}
	same := true
	for i, e := range reads {
		if !e.plan.sameState(e.raw, cur[i]) {
			same = false
			break
		}
	}
	if same {
		return nil, false, nil
	}
	snap := tx.newSnap()
	next := make(map[txItem]txnCached, len(reads))
	for i, e := range reads {
		next[e.id] = txnCached{item: cur[i], snap: snap}
	}
	return next, false, fmt.Errorf("dynamo: Transact, run %d: a read-only run saw items from several snapshots that differ from one read together: %w", tx.run, ErrVersionConflict)
}
