package dynamo

import "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

// TxKnown makes Transact start from items of t the caller has read already
// (as a Scan, Query or GetItem of the SDK returned them, without a
// projection), as if its first run had read them: Table.In(tx).Load returns
// them without a request, and a Save or Delete of one is checked at commit
// against the item as given — its version and write token, or, for a type
// without a version, every attribute it models — as for an item the run read
// itself. An item given that is stale (read eventually consistent, or
// written since) only makes the first commit fail on it; the next run starts
// from the item the cancellation carries, as after any conflict. Each item
// counts as read on its own, not in one snapshot with the others. Items
// without t's key are ignored; the maps are not modified. WriteTx ignores the
// option.
func (t *table) TxKnown(items ...map[string]types.AttributeValue) TxOption {
	return txOptionFunc(func(o *txOptions) {
		for _, it := range items {
			if it == nil || it[t.p.KeyNames[0]] == nil || t.p.HasRangeKey && it[t.p.KeyNames[1]] == nil {
				continue
			}
			o.known = append(o.known, txKnownItem{id: txItem{table: t.name, id: keyIDOf(t.p, it)}, item: it})
		}
	})
}

// txKnownItem is an item TxKnown gave Transact.
type txKnownItem struct {
	id   txItem
	item map[string]types.AttributeValue
}
