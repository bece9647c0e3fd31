package dynamo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/refusal"
)

// DynamoDB's limits on one batch request.
const (
	// MaxBatchGetKeys is the most keys one BatchGetItem request may carry.
	// BatchLoad sends any number of keys in requests of at most this many.
	MaxBatchGetKeys = 100
	// MaxBatchWriteItems is the most writes one BatchWriteItem request may
	// carry. BatchSave and BatchDelete send any number of items in requests
	// of at most this many.
	MaxBatchWriteItems = 25
)

// BatchReadOption configures BatchLoad and BatchLoadIndexed: ConsistentRead
// (every ReadOption is one) and WithRetry.
type BatchReadOption interface {
	applyBatchRead(*batchReadOptions)
}

type batchReadOptions struct {
	read     readOptions
	retry    RetryPolicy // when retrySet
	retrySet bool
}

// BatchWriteOption configures BatchSave and BatchDelete:
// WithSaveBehavior(SaveClobber) and WithRetry. Every WriteOption is a
// BatchWriteOption, so that clobbering has one name for single and batch
// writes; but a batch write carries no condition and always replaces or
// deletes whole items, so the others (If, MustExist, GuardedBy, ChangedFrom,
// the other save behaviours) are refused with ErrInvalidInput before
// anything is sent (see the table in docs/mapper.md).
type BatchWriteOption interface {
	applyBatchWrite(*batchWriteOptions)
}

type batchWriteOptions struct {
	// write holds the WriteOptions given, as a single write would: the
	// batch takes SaveClobber and refuses the others (writeRules).
	write    writeOptions
	retry    RetryPolicy // when retrySet
	retrySet bool
}

// batchReadPolicy returns the options of a batch read and its retry policy.
func (t *table) batchReadOpts(op string, opts []BatchReadOption) (readOptions, RetryPolicy, error) {
	var o batchReadOptions
	applyOptions(&o, opts, BatchReadOption.applyBatchRead)
	pol, err := t.m.retryPolicy(policyBatch, o.retry, o.retrySet, op+" option WithRetry")
	return o.read, pol, err
}

// batchWriteOpts returns the options of a batch write and its retry policy.
func (t *table) batchWriteOpts(op string, opts []BatchWriteOption) (batchWriteOptions, RetryPolicy, error) {
	var o batchWriteOptions
	applyOptions(&o, opts, BatchWriteOption.applyBatchWrite)
	pol, err := t.m.retryPolicy(policyBatch, o.retry, o.retrySet, op+" option WithRetry")
	return o, pol, err
}

// BatchLoad reads the items with the primary keys of keys and returns those
// that exist, in the order of keys: what Load for each key, dropping the
// ErrNotFound ones, would return (a key given twice yields its item twice;
// BatchLoadIndexed tells which were missing). It sends BatchGetItem requests
// of at most MaxBatchGetKeys distinct keys, one after another, and sends
// unprocessed keys again as the RetryPolicy says. A nil key or an unset key
// is refused with ErrInvalidInput before sending. Details:
// docs/calls.md#batchload.
//
// IAM: dynamodb:BatchGetItem.
func (t *Table[T]) BatchLoad(ctx context.Context, keys []T, opts ...BatchReadOption) ([]T, error) {
	ro, pol, err := t.batchReadOpts("BatchLoad", opts)
	if err != nil {
		return nil, err
	}
	items, err := t.batchGet(ctx, "BatchLoad", keys, ro, pol)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, it := range items {
		if it != nil {
			n++
		}
	}
	out := make([]T, n)
	d := itemDecoder[T]{t: t}
	n = 0
	for _, it := range items {
		if it == nil {
			continue
		}
		if err := d.decodeInto(it, &out[n]); err != nil {
			return nil, err
		}
		n++
	}
	return out, nil
}

// BatchLoadIndexed is BatchLoad reporting what was missing: items[i] is the
// item with the key of keys[i] and found[i] is true, or, when there is no
// such item, items[i] is the zero T and found[i] is false. Both slices have
// len(keys) elements. Each position gets its own decoded value, also when a
// key is repeated. Requests, retries, limits and errors are as for BatchLoad.
//
// IAM: dynamodb:BatchGetItem.
func (t *Table[T]) BatchLoadIndexed(ctx context.Context, keys []T, opts ...BatchReadOption) (items []T, found []bool, err error) {
	ro, pol, err := t.batchReadOpts("BatchLoadIndexed", opts)
	if err != nil {
		return nil, nil, err
	}
	raw, err := t.batchGet(ctx, "BatchLoadIndexed", keys, ro, pol)
	if err != nil {
		return nil, nil, err
	}
	items = make([]T, len(keys))
	found = make([]bool, len(keys))
	d := itemDecoder[T]{t: t}
	for i, it := range raw {
		if it == nil {
			continue
		}
		if err := d.decodeInto(it, &items[i]); err != nil {
			return nil, nil, err
		}
		found[i] = true
	}
	return items, found, nil
}

// batchGet returns, for each of keys, the stored item with its key, or nil.
// Items of repeated keys are the same map.
func (t *Table[T]) batchGet(ctx context.Context, op string, keys []T, ro readOptions, pol RetryPolicy) (_ []map[string]types.AttributeValue, err error) {
	ctx, c := t.m.begin(ctx, op, t.name)
	defer c.endp(&err)
	c.noteConsistent(ro.consistent)
	c.noteItems(len(keys))
	// pos[i] is the index in distinct of keys[i]'s key; found[j] the item
	// of distinct[j].
	pos := make([]int, len(keys))
	index := make(map[keyID]int, len(keys))
	distinct := make([]map[string]types.AttributeValue, 0, len(keys))
	for i := range keys {
		v, err := t.elem(keys, i, op, "keys")
		if err != nil {
			return nil, err
		}
		k, err := t.keyOf(v)
		if err != nil {
			return nil, fmt.Errorf("%w (%s keys[%d])", err, op, i)
		}
		id := keyIDOf(t.p, k)
		j, seen := index[id]
		if !seen {
			j = len(distinct)
			index[id] = j
			distinct = append(distinct, k)
		}
		pos[i] = j
	}
	found := make([]map[string]types.AttributeValue, len(distinct))
	for start := 0; start < len(distinct); start += MaxBatchGetKeys {
		chunk := distinct[start:min(start+MaxBatchGetKeys, len(distinct))]
		if err := t.getChunk(ctx, chunk, ro, pol, index, found); err != nil {
			return nil, fmt.Errorf("dynamo: %s from table %q: keys %d to %d of %d distinct keys: %w", op, t.name, start+1, start+len(chunk), len(distinct), err)
		}
	}
	out := make([]map[string]types.AttributeValue, len(keys))
	for i, j := range pos {
		out[i] = found[j]
	}
	return out, nil
}

// getChunk reads one chunk of at most MaxBatchGetKeys distinct keys,
// retrying unprocessed keys, and stores each item returned in found at the
// index its key has in index.
func (t *table) getChunk(ctx context.Context, pending []map[string]types.AttributeValue, ro readOptions, pol RetryPolicy,
	index map[keyID]int, found []map[string]types.AttributeValue) error {
	var consistent *bool
	if ro.consistent {
		consistent = aws.Bool(true)
	}
	for attempt := 1; ; attempt++ {
		out, err := t.m.client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
			RequestItems: map[string]types.KeysAndAttributes{t.name: {Keys: pending, ConsistentRead: consistent,
				ProjectionExpression: plan.StrPtr(t.p.Proj), ExpressionAttributeNames: t.p.ProjNames}},
		})
		if err != nil {
			return err
		}
		for _, it := range out.Responses[t.name] {
			if j, ok := index[keyIDOf(t.p, it)]; ok {
				if _, other := t.p.S.OtherEntity(it); !other { // another entity's item is not a T
					found[j] = it
				}
			}
		}
		pending = out.UnprocessedKeys[t.name].Keys
		if len(pending) == 0 {
			return nil
		}
		if pol.exhausted(attempt) {
			return fmt.Errorf("%w: %s still unprocessed after %s; the table's read capacity is probably exceeded: retry later or raise it",
				errUnprocessed, plural(len(pending), "key"), plural(attempt, "BatchGetItem request"))
		}
		if err := pol.wait(ctx, attempt); err != nil {
			return err
		}
		t.m.noteResent(ctx, "BatchLoad", t.name, attempt, len(pending))
	}
}

// errUnprocessed is the cause of a batch that gave up on items DynamoDB kept
// leaving unprocessed.
var errUnprocessed = errors.New("DynamoDB kept leaving items unprocessed")

// BatchSave writes items with BatchWriteItem (one PutRequest each, at most
// MaxBatchWriteItems per request, one request after another), each replacing
// the stored item as with SavePut. A batch write carries no condition, so a
// versioned type needs WithSaveBehavior(SaveClobber). Bad items (nil, unset
// key, over 400 KB, a key twice) are refused with ErrInvalidInput before
// sending; unprocessed items are sent again as the RetryPolicy says. A batch
// is not atomic: a failure after sending is a *BatchWriteError saying which
// items were written. Details: docs/calls.md#batchsave.
//
// IAM: dynamodb:BatchWriteItem.
func (t *Table[T]) BatchSave(ctx context.Context, items []T, opts ...BatchWriteOption) error {
	pol, err := t.checkBatchWrite("BatchSave", opts)
	if err != nil {
		return err
	}
	s := t.p.S
	now := t.m.opts.clock.Now()
	reqs := make([]types.WriteRequest, len(items))
	keys := make([]map[string]types.AttributeValue, len(items))
	for i := range items {
		v, err := t.elem(items, i, "BatchSave", "items")
		if err != nil {
			return err
		}
		boxed, v := t.stamp(v.Addr().Interface(), v, now)
		item, err := t.encode(boxed)
		if err != nil {
			return fmt.Errorf("%w (BatchSave items[%d])", err, i)
		}
		if err := t.checkItemKeys(item); err != nil {
			return fmt.Errorf("%w (BatchSave items[%d])", err, i)
		}
		keys[i] = t.pickKey(item)
		if s.Version >= 0 {
			held := s.VersionOf(v)
			next, ok := t.p.NextVersion(held, now.UnixMilli())
			if held < 0 || !ok {
				return fmt.Errorf("%w: BatchSave on table %q items[%d] key %s: version %s is negative or its next value does not fit %s: use int64",
					ErrInvalidInput, t.name, i, formatKey(keys[i]), s.Fields[s.Version].GoName, s.Fields[s.Version].Type)
			}
			item[s.Fields[s.Version].Name] = plan.NumberAV(next)
		}
		if size := av.ItemSize(item); size > maxItemSize {
			return fmt.Errorf("%w: BatchSave on table %q items[%d] key %s: item is about %d bytes, over DynamoDB's 400 KB limit: store large values elsewhere (e.g. S3) and keep a reference",
				ErrInvalidInput, t.name, i, formatKey(keys[i]), size)
		}
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}
	}
	return t.batchWrite(ctx, "BatchSave", reqs, keys, pol)
}

// BatchDelete deletes the items with the keys of items with BatchWriteItem
// (one DeleteRequest each, at most MaxBatchWriteItems per request); deleting
// a missing item succeeds. A batch write checks no version, so a versioned
// type needs WithSaveBehavior(SaveClobber); for version-checked deletes use
// WriteTx with TxDelete, or Delete in a loop. Bad input is refused and
// errors are reported as for BatchSave. Details: docs/calls.md#batchdelete.
//
// IAM: dynamodb:BatchWriteItem.
func (t *Table[T]) BatchDelete(ctx context.Context, items []T, opts ...BatchWriteOption) error {
	pol, err := t.checkBatchWrite("BatchDelete", opts)
	if err != nil {
		return err
	}
	reqs := make([]types.WriteRequest, len(items))
	keys := make([]map[string]types.AttributeValue, len(items))
	for i := range items {
		v, err := t.elem(items, i, "BatchDelete", "items")
		if err != nil {
			return err
		}
		k, err := t.keyOf(v)
		if err != nil {
			return fmt.Errorf("%w (BatchDelete items[%d])", err, i)
		}
		keys[i] = k
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k}}
	}
	return t.batchWrite(ctx, "BatchDelete", reqs, keys, pol)
}

// checkBatchWrite returns the retry policy of a batch write, refusing
// options it does not take and what plan.CheckBatchWrite refuses.
func (t *table) checkBatchWrite(op string, opts []BatchWriteOption) (RetryPolicy, error) {
	bo, pol, err := t.batchWriteOpts(op, opts)
	if err != nil {
		return pol, err
	}
	call := refusal.BatchSave
	if op == "BatchDelete" {
		call = refusal.BatchDelete
	}
	if err := bo.write.refuse(call, t.name); err != nil {
		return pol, err
	}
	return pol, plan.CheckBatchWrite(op, t.name, t.p.S, bo.write.behavior == SaveClobber)
}

// batchWrite sends reqs (keys[i] is the key of reqs[i]) in chunks of
// MaxBatchWriteItems, retrying unprocessed items.
func (t *Table[T]) batchWrite(ctx context.Context, op string, reqs []types.WriteRequest, keys []map[string]types.AttributeValue, pol RetryPolicy) (err error) {
	ctx, c := t.m.begin(ctx, op, t.name)
	defer c.endp(&err)
	c.noteItems(len(reqs))
	index := make(map[keyID]int, len(keys))
	for i, k := range keys {
		id := keyIDOf(t.p, k)
		if j, dup := index[id]; dup {
			return fmt.Errorf("%w: %s on table %q: items[%d] and items[%d] have the same key %s: BatchWriteItem refuses two writes of one item in a request; pass each key once",
				ErrInvalidInput, op, t.name, j, i, formatKey(k))
		}
		index[id] = i
	}
	w := &batchWriter[T]{t: t, op: op, reqs: reqs, keys: keys, index: index, pol: pol}
	for start := 0; start < len(reqs); start += MaxBatchWriteItems {
		if err := w.writeChunk(ctx, start, min(start+MaxBatchWriteItems, len(reqs))); err != nil {
			return err
		}
	}
	return nil
}

// batchWriter is one batch write under way: the requests, their keys, and
// how many DynamoDB confirmed.
type batchWriter[T any] struct {
	t       *Table[T]
	op      string
	reqs    []types.WriteRequest
	keys    []map[string]types.AttributeValue
	index   map[keyID]int // the index in reqs of each key
	pol     RetryPolicy
	written int
}

// writeChunk sends reqs[start:end] in one BatchWriteItem, and what DynamoDB
// leaves unprocessed again, as the RetryPolicy says.
func (w *batchWriter[T]) writeChunk(ctx context.Context, start, end int) error {
	t := w.t
	pending := make([]int, 0, end-start)
	for i := start; i < end; i++ {
		pending = append(pending, i)
	}
	send := w.reqs[start:end]
	for attempt := 1; ; attempt++ {
		out, err := t.m.client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
			RequestItems: map[string][]types.WriteRequest{t.name: send},
		})
		if err != nil {
			return w.fail(pending, end, err)
		}
		un := out.UnprocessedItems[t.name]
		if len(un) == 0 {
			w.written += len(pending)
			return nil
		}
		left, err := w.unprocessed(un)
		if err != nil {
			return w.fail(pending, end, err)
		}
		w.written += len(pending) - len(left)
		pending = left
		if w.pol.exhausted(attempt) {
			return w.fail(pending, end, fmt.Errorf("%w: %s still unprocessed after %s; the table's write capacity is probably exceeded: retry later or raise it",
				errUnprocessed, plural(len(pending), "item"), plural(attempt, "BatchWriteItem request")))
		}
		if err := w.pol.wait(ctx, attempt); err != nil {
			return w.fail(pending, end, err)
		}
		t.m.noteResent(ctx, w.op, t.name, attempt, len(pending))
		send = make([]types.WriteRequest, len(pending))
		for n, i := range pending {
			send[n] = w.reqs[i]
		}
	}
}

// unprocessed returns the indexes in reqs of the requests DynamoDB left
// unprocessed (un), found by key, so that our own requests are sent again.
func (w *batchWriter[T]) unprocessed(un []types.WriteRequest) ([]int, error) {
	left := make([]int, 0, len(un))
	for _, r := range un {
		var k map[string]types.AttributeValue
		switch {
		case r.PutRequest != nil:
			k = r.PutRequest.Item
		case r.DeleteRequest != nil:
			k = r.DeleteRequest.Key
		}
		if i, ok := w.index[keyIDOf(w.t.p, k)]; ok {
			left = append(left, i)
		}
	}
	if len(left) != len(un) {
		return nil, fmt.Errorf("BatchWriteItem reported %d unprocessed items, of which %d do not match a key sent", len(un), len(un)-len(left))
	}
	return left, nil
}

// fail returns the *BatchWriteError of a write stopped by err with the
// requests pending, and those from next on, not confirmed written.
func (w *batchWriter[T]) fail(pending []int, next int, err error) error {
	e := &BatchWriteError{Op: w.op, Table: w.t.name, Written: w.written, Err: err}
	e.Unwritten = append(e.Unwritten, pending...)
	for i := next; i < len(w.reqs); i++ {
		e.Unwritten = append(e.Unwritten, i)
	}
	slices.Sort(e.Unwritten)
	e.UnwrittenKeys = make([]map[string]types.AttributeValue, len(e.Unwritten))
	for n, i := range e.Unwritten {
		e.UnwrittenKeys[n] = w.keys[i]
	}
	return e
}

// BatchWriteError is the error of a BatchSave or BatchDelete that stopped
// before every item was written: a request failed, ctx ended, or DynamoDB
// kept leaving items unprocessed. Items not in Unwritten were written.
//
// Items of a request that failed (rather than being reported unprocessed)
// may or may not have been applied; writing them again is safe, since batch
// writes are unconditional puts and deletes.
type BatchWriteError struct {
	// Op is "BatchSave" or "BatchDelete".
	Op string
	// Table is the table written to.
	Table string
	// Written is the number of items DynamoDB confirmed written.
	Written int
	// Unwritten holds the indexes, in the slice passed in, of the items not
	// confirmed written, ascending. Written + len(Unwritten) is the number of
	// items passed in.
	Unwritten []int
	// UnwrittenKeys holds the primary keys of the items in Unwritten, in the
	// same order.
	UnwrittenKeys []map[string]types.AttributeValue
	// Err is the cause: the SDK's error, ctx's error, or a report that items
	// stayed unprocessed.
	Err error
}

func (e *BatchWriteError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "dynamo: %s to table %q: %d of %d items written; not written: ",
		e.Op, e.Table, e.Written, e.Written+len(e.Unwritten))
	const shown = 5
	for n, k := range e.UnwrittenKeys {
		if n == shown {
			fmt.Fprintf(&b, " and %d more", len(e.UnwrittenKeys)-shown)
			break
		}
		if n > 0 {
			b.WriteString(", ")
		}
		b.WriteString(formatKey(k))
	}
	b.WriteString(" (indexes in BatchWriteError.Unwritten; writing them again is safe): ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the cause.
func (e *BatchWriteError) Unwrap() error { return e.Err }

// elem returns the struct of items[i] without copying it, refusing a nil
// pointer. what names the slice in messages.
func (t *Table[T]) elem(items []T, i int, op, what string) (reflect.Value, error) {
	if !t.ptr {
		return reflect.ValueOf(&items[i]).Elem(), nil
	}
	v := reflect.ValueOf(items[i])
	if v.IsNil() {
		return v, fmt.Errorf("%w: %s on table %q: %s[%d] is a nil %T: pass pointers to structs", ErrInvalidInput, op, t.name, what, i, items[i])
	}
	return v.Elem(), nil
}
