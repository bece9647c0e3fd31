package dynamo

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/plan"
)

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
		return nil, fmt.Errorf("DynamoDB answered %s with %s", plural(len(ms), "get"), plural(len(out.Responses), "response"))
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
	if err := notOurs(t.p.S, t.name, k, e.raw); err != nil {
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
	e.bs = &plan.Basis{Item: e.raw}
	var err error
	e.held, err = e.readVersion()
	return err
}

// readVersion returns the version of the item the run read for e: 0 for
// an absent item or a type without a version, an error wrapping
// ErrInvalidInput when it does not fit an int64.
func (e *txnEntry) readVersion() (int64, error) {
	if e.plan.S.Version < 0 || e.raw == nil {
		return 0, nil
	}
	v, _, big := plan.StoredVersion(e.raw, e.plan.S.Fields[e.plan.S.Version].Name)
	if big || v < 0 {
		return 0, fmt.Errorf("%w: table %q key %s: the stored version does not fit an int64", ErrInvalidInput, e.table, formatKey(e.key))
	}
	return v, nil
}
