package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/plan"
)

// Read transactions: Table.TxGet members, sent by Mapper.ReadTx.

// TxGet is a read in a read transaction, made by Table.TxGet. After the
// transaction succeeded, Item returns what it read.
type TxGet[T any] struct {
	t     *Table[T]
	key   T
	item  T
	found bool
}

// TxGet returns a member of a read transaction (Mapper.ReadTx) that reads
// the item whose primary key is the key fields of key (other fields are
// ignored). key is not modified; nothing is sent until ReadTx.
func (t *Table[T]) TxGet(key T) *TxGet[T] {
	return &TxGet[T]{t: t, key: key}
}

// Item returns the item read and true, or the zero T and false when there is
// no such item (or the transaction has not succeeded). Every call returns the
// same value: its slices and maps are shared between calls, so a caller that
// changes them in place changes what the next call returns.
func (g *TxGet[T]) Item() (T, bool) { return g.item, g.found }

type txGetMember struct {
	txMember
	get types.Get
	// set decodes the item read (nil: none) and returns the function that
	// records it in the TxGet, called once every member has decoded.
	set func(map[string]types.AttributeValue) (func(), error)
	// setValue records v, a T, as the item read (Tx.Prefetch of an item
	// the run has written).
	setValue func(v any)
}

func (g *TxGet[T]) txRead() (*txGetMember, error) {
	t := g.t
	_, v, err := t.box(g.key, "TxGet")
	if err != nil {
		return nil, err
	}
	key, err := t.keyOf(v)
	if err != nil {
		return nil, err
	}
	mem := &txGetMember{
		txMember: txMember{kind: "TxGet", table: t.name, key: key, plan: t.p, decode: t.decodeAny},
		get: types.Get{TableName: aws.String(t.name), Key: key,
			ProjectionExpression: plan.StrPtr(t.p.Proj), ExpressionAttributeNames: t.p.ProjNames},
	}
	mem.setValue = func(v any) { g.item, g.found = v.(T), true }
	mem.set = func(item map[string]types.AttributeValue) (func(), error) {
		if _, other := t.p.S.OtherEntity(item); len(item) == 0 || other {
			// Absent, or an item of another entity: not a T.
			return func() { var zero T; g.item, g.found = zero, false }, nil
		}
		out, err := t.decode(item)
		if err != nil {
			return nil, err
		}
		return func() { g.item, g.found = out, true }, nil
	}
	return mem, nil
}

// ReadTx reads the items of gets — up to MaxTxItems, of any tables — in one
// TransactGetItems, a serializable snapshot; after success each TxGet's Item
// returns what it read (false for a missing item). Bad input (no gets, too
// many, a nil get or key, an unset key, an item twice) is refused with
// ErrInvalidInput before sending. A read cancelled by a write transaction in
// flight is sent again as the RetryPolicy allows; other cancellations are a
// *TxError. The request goes through m's client.
//
// IAM: dynamodb:GetItem on each member's table.
func (m *Mapper) ReadTx(ctx context.Context, gets []TxGetOp, opts ...ReadTxOption) error {
	ctx, c := m.begin(ctx, "ReadTx", "")
	c.noteItems(len(gets))
	return c.end(m.readTx(ctx, gets, opts))
}

func (m *Mapper) readTx(ctx context.Context, gets []TxGetOp, opts []ReadTxOption) error {
	o, err := m.applyReadTxOptions(opts)
	if err != nil {
		return err
	}
	if err := plan.TxCount("ReadTx", len(gets)); err != nil {
		return err
	}
	members := make([]*txGetMember, len(gets))
	seen := make(map[txItem]int, len(gets))
	in := &dynamodb.TransactGetItemsInput{TransactItems: make([]types.TransactGetItem, len(gets))}
	for i, g := range gets {
		if g == nil {
			return fmt.Errorf("%w: ReadTx member %d is nil", ErrInvalidInput, i)
		}
		mem, err := g.txRead()
		if err != nil {
			return fmt.Errorf("dynamo: ReadTx member %d: %w", i, err)
		}
		if err := m.refuseStrong("ReadTx", mem.table, false); err != nil {
			return err
		}
		id := txItemID(&mem.txMember)
		if j, dup := seen[id]; dup {
			return fmt.Errorf("%w: ReadTx members %d and %d both read table %q key %s: DynamoDB allows one operation per item in a transaction",
				ErrInvalidInput, j, i, mem.table, formatKey(mem.key))
		}
		seen[id] = i
		members[i] = mem
		in.TransactItems[i].Get = &mem.get
	}
	var out *dynamodb.TransactGetItemsOutput
	err = retryTx(ctx, o, "ReadTx", members, func(error) string { return "" }, func() (err error) {
		out, err = m.client.TransactGetItems(ctx, in)
		return err
	})
	if err != nil {
		return err
	}
	if len(out.Responses) != len(members) {
		return fmt.Errorf("dynamo: ReadTx of %s: DynamoDB answered with %s", plural(len(members), "member"), plural(len(out.Responses), "response"))
	}
	done := make([]func(), len(members))
	for i, mem := range members {
		if done[i], err = mem.set(out.Responses[i].Item); err != nil {
			return fmt.Errorf("dynamo: ReadTx member %d: %w", i, err)
		}
	}
	for _, fn := range done {
		fn()
	}
	return nil
}
