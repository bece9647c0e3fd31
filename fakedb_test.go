package dynamo

// fakeDB is the one fake DynamoDB of the unit tests, as database/sql keeps
// one fakedb_test.go. It is an in-memory store of tables that evaluates
// condition, filter and key-condition expressions with the mapper's own
// parser (internal/condexpr) and applies update expressions, plus the hooks
// the tests need: it records every request, counts calls, can fail or lose
// the answer of the Nth call of an operation, hold a call until released,
// run code before or after a call, or answer an operation from a hook.
//
// Three configurations cover the tests:
//   - the store (the default): tables are declared with table, seeded with
//     put, indexes declared with index, and the calls are served as
//     DynamoDB serves them, as far as the tests need (no capacity, no size
//     limits);
//   - noStore: writes succeed and are not applied, GetItem fails
//     (errUnexpected), the other reads find nothing: a test of the requests
//     the mapper sends, with answers from hooks;
//   - backend: the calls go to another Client (DynamoDB Local), and the
//     hooks wrap it.

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/condexpr"
	"github.com/ddbkit/dynamo/internal/plan"
)

var errUnexpected = errors.New("fakedb: unexpected call")

// fakeValuePlaceholder finds the :value placeholders of an expression.
var fakeValuePlaceholder = regexp.MustCompile(`:\w+`)

// fakeDB implements Client; the zero value is an empty store.
type fakeDB struct {
	// backend, when set, serves the calls no answer hook takes (a wrapper of
	// DynamoDB Local) instead of the store.
	backend Client
	// noStore: writes succeed without being applied, GetItem fails, other
	// reads find nothing; see the type doc.
	noStore bool

	// Answer hooks: when set, they answer the call instead of the store
	// (after it is recorded and the fakeHooks before it ran). n counts the
	// calls of the operation from 1.
	onGet        func(n int, in *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error)
	onPut        func(n int, in *dynamodb.PutItemInput) (*dynamodb.PutItemOutput, error)
	onUpd        func(n int, in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error)
	onDel        func(n int, in *dynamodb.DeleteItemInput) (*dynamodb.DeleteItemOutput, error)
	onQuery      func(n int, in *dynamodb.QueryInput) (*dynamodb.QueryOutput, error)
	onScan       func(n int, in *dynamodb.ScanInput) (*dynamodb.ScanOutput, error)
	onBatchGet   func(n int, in *dynamodb.BatchGetItemInput) (*dynamodb.BatchGetItemOutput, error)
	onBatchWrite func(n int, in *dynamodb.BatchWriteItemInput) (*dynamodb.BatchWriteItemOutput, error)
	onTxGet      func(n int, in *dynamodb.TransactGetItemsInput) (*dynamodb.TransactGetItemsOutput, error)
	onTxWrite    func(n int, in *dynamodb.TransactWriteItemsInput) (*dynamodb.TransactWriteItemsOutput, error)
	onCreate     func(n int, in *dynamodb.CreateTableInput) (*dynamodb.CreateTableOutput, error)
	onDescribe   func(n int, in *dynamodb.DescribeTableInput) (*dynamodb.DescribeTableOutput, error)
	onDropTable  func(n int, in *dynamodb.DeleteTableInput) (*dynamodb.DeleteTableOutput, error)
	onTTL        func(n int, in *dynamodb.UpdateTimeToLiveInput) (*dynamodb.UpdateTimeToLiveOutput, error)

	// unprocessedGet, when set, picks the keys of BatchGetItem call n that
	// the store leaves unprocessed (not answered); unprocessedWrite the
	// writes of BatchWriteItem call n (not applied).
	unprocessedGet   func(n int, keys []map[string]types.AttributeValue) []map[string]types.AttributeValue
	unprocessedWrite func(n int, reqs []types.WriteRequest) []types.WriteRequest
	// segment, when set, gives the scan segment of an item; by default the
	// hash of its key modulo total.
	segment func(item map[string]types.AttributeValue, total int) int
	// strongReads makes GetItem refuse an eventually consistent read.
	strongReads bool

	mu     sync.Mutex
	tables map[string]*fakeTable
	calls  []fakeCall
	counts map[string]int
	hooks  []*fakeHook
}

// fakeCall is one request: the operation ("PutItem") and its input.
type fakeCall struct {
	op string
	in any
}

// fakeHook acts on the calls of op ("" every operation) — the nth of them
// (counting from 1) or, with n 0, every one. In order: before runs, then
// the call waits for release (closing holding first) if set, then err (or
// what fail returns) is returned instead of serving the call; once served,
// lost replaces a success (the write applied, its answer lost), and after
// sees the answer (also an error of the hooks before, or of a held call's
// ctx). match, when set, narrows the hook to the calls whose input it
// accepts.
type fakeHook struct {
	op               string
	n                int
	match            func(in any) bool
	before           func(n int)
	holding, release chan struct{}
	err              error
	fail             func(n int) error // err for call n, or nil
	lost             error
	after            func(n int, in, out any, err error)

	held sync.Once
}

// fakeTable is a table of the store: its key attributes and items by key.
type fakeTable struct {
	hash, rng string // rng "" for a hash-only table
	items     map[string]map[string]types.AttributeValue
	indexes   map[string]*fakeIndex
	desc      *types.TableDescription // from CreateTable, or nil
}

// table declares table name with its key attributes (rng "" for none) and
// returns db.
func (db *fakeDB) table(name, hash, rng string) *fakeDB {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.tableLocked(name, hash, rng)
	return db
}

func (db *fakeDB) tableLocked(name, hash, rng string) *fakeTable {
	if db.tables == nil {
		db.tables = map[string]*fakeTable{}
	}
	t := &fakeTable{hash: hash, rng: rng, items: map[string]map[string]types.AttributeValue{}}
	db.tables[name] = t
	return t
}

// put stores item in table name (declared before) and returns db.
func (db *fakeDB) put(name string, items ...map[string]types.AttributeValue) *fakeDB {
	db.mu.Lock()
	defer db.mu.Unlock()
	t := db.tables[name]
	if t == nil {
		panic("fakedb: put in undeclared table " + name)
	}
	for _, it := range items {
		t.items[t.id(it)] = it
	}
	return db
}

// item returns the stored item of table name with key (nil when absent).
func (db *fakeDB) item(name string, key map[string]types.AttributeValue) map[string]types.AttributeValue {
	db.mu.Lock()
	defer db.mu.Unlock()
	if t := db.tables[name]; t != nil {
		return t.items[t.id(key)]
	}
	return nil
}

// items returns the items of table name in key order.
func (db *fakeDB) items(name string) []map[string]types.AttributeValue {
	db.mu.Lock()
	defer db.mu.Unlock()
	t := db.tables[name]
	if t == nil {
		return nil
	}
	return t.sorted()
}

// hook adds h and returns it.
func (db *fakeDB) hook(h *fakeHook) *fakeHook {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.hooks = append(db.hooks, h)
	return h
}

// fail makes call n of op (0: every call) return err without being served.
func (db *fakeDB) fail(op string, n int, err error) { db.hook(&fakeHook{op: op, n: n, err: err}) }

// lose makes call n of op (0: every call) be served and, when it succeeds,
// return err instead: a write applied whose answer was lost.
func (db *fakeDB) lose(op string, n int, err error) { db.hook(&fakeHook{op: op, n: n, lost: err}) }

// hold makes call n of op wait, once it has closed holding, until release
// is closed (or its context ends).
func (db *fakeDB) hold(op string, n int) (holding, release chan struct{}) {
	h := db.hook(&fakeHook{op: op, n: n, holding: make(chan struct{}), release: make(chan struct{})})
	return h.holding, h.release
}

// afterOnce runs fn once, after the first call of op that succeeds and
// before its caller hears of it.
func (db *fakeDB) afterOnce(op string, fn func()) {
	var fired atomic.Bool // not a sync.Once: fn may call db itself
	db.hook(&fakeHook{op: op, after: func(_ int, _, _ any, err error) {
		if err == nil && fired.CompareAndSwap(false, true) {
			fn()
		}
	}})
}

// forget drops the requests recorded so far and starts counting calls
// from 1 again.
func (db *fakeDB) forget() {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.calls, db.counts = nil, nil
}

// count returns how many calls of op (every call for "") were made.
func (db *fakeDB) count(op string) int {
	db.mu.Lock()
	defer db.mu.Unlock()
	if op == "" {
		return len(db.calls)
	}
	return db.counts[op]
}

// sent returns the inputs of the calls of op ("" every call), in order.
func (db *fakeDB) sent(op string) []any {
	db.mu.Lock()
	defer db.mu.Unlock()
	var out []any
	for _, c := range db.calls {
		if op == "" || c.op == op {
			out = append(out, c.in)
		}
	}
	return out
}

// ops returns the operations called, in order.
func (db *fakeDB) ops() []string {
	db.mu.Lock()
	defer db.mu.Unlock()
	out := make([]string, len(db.calls))
	for i, c := range db.calls {
		out[i] = c.op
	}
	return out
}

// sentOf returns the requests of the operation whose input is I.
func sentOf[I any](db *fakeDB) []*I {
	op := strings.TrimSuffix(reflect.TypeFor[I]().Name(), "Input")
	var out []*I
	for _, in := range db.sent(op) {
		out = append(out, in.(*I))
	}
	return out
}

func (db *fakeDB) puts() []*dynamodb.PutItemInput    { return sentOf[dynamodb.PutItemInput](db) }
func (db *fakeDB) upds() []*dynamodb.UpdateItemInput { return sentOf[dynamodb.UpdateItemInput](db) }
func (db *fakeDB) dels() []*dynamodb.DeleteItemInput { return sentOf[dynamodb.DeleteItemInput](db) }
func (db *fakeDB) gets() []*dynamodb.GetItemInput    { return sentOf[dynamodb.GetItemInput](db) }
func (db *fakeDB) queries() []*dynamodb.QueryInput   { return sentOf[dynamodb.QueryInput](db) }
func (db *fakeDB) scans() []*dynamodb.ScanInput      { return sentOf[dynamodb.ScanInput](db) }
func (db *fakeDB) txWrites() []*dynamodb.TransactWriteItemsInput {
	return sentOf[dynamodb.TransactWriteItemsInput](db)
}
func (db *fakeDB) txGets() []*dynamodb.TransactGetItemsInput {
	return sentOf[dynamodb.TransactGetItemsInput](db)
}
func (db *fakeDB) batchGets() []*dynamodb.BatchGetItemInput {
	return sentOf[dynamodb.BatchGetItemInput](db)
}
func (db *fakeDB) batchWrites() []*dynamodb.BatchWriteItemInput {
	return sentOf[dynamodb.BatchWriteItemInput](db)
}

// serve runs one call of op: records it, runs the hooks, and answers from
// answer (the operation's hook), the backend, or the store (store, or
// blank under noStore).
func serve[I, O any](ctx context.Context, db *fakeDB, op string, in *I,
	answer func(int, *I) (*O, error), backend func() (*O, error), store func(*I) (*O, error), blank func() (*O, error)) (*O, error) {
	db.mu.Lock()
	db.calls = append(db.calls, fakeCall{op, in})
	if db.counts == nil {
		db.counts = map[string]int{}
	}
	db.counts[op]++
	n := db.counts[op]
	var hooks []*fakeHook
	for _, h := range db.hooks {
		if (h.op == "" || h.op == op) && (h.n == 0 || h.n == n) && (h.match == nil || h.match(in)) {
			hooks = append(hooks, h)
		}
	}
	db.mu.Unlock()
	if err := ctx.Err(); err != nil { // as the SDK: a call on a done context is not sent
		return nil, err
	}
	out, err := hold[O](ctx, hooks, n)
	served := err == nil
	switch {
	case !served:
	case answer != nil:
		out, err = answer(n, in)
	case db.backend != nil:
		out, err = backend()
	case db.noStore:
		out, err = blank()
	default:
		db.mu.Lock()
		out, err = store(in)
		db.mu.Unlock()
	}
	for _, h := range hooks {
		if h.lost != nil && served && err == nil {
			out, err = nil, h.lost
		}
		if h.after != nil {
			h.after(n, in, out, err)
		}
	}
	return out, err
}

// hold runs the hooks' before, waits where they hold, and returns the
// error one of them answers with instead of serving the call (the call's
// ctx error when it ends while held).
func hold[O any](ctx context.Context, hooks []*fakeHook, n int) (*O, error) {
	for _, h := range hooks {
		if h.before != nil {
			h.before(n)
		}
		if h.release != nil {
			h.held.Do(func() { close(h.holding) })
			select {
			case <-h.release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if h.err != nil {
			return nil, h.err
		}
		if h.fail != nil {
			if err := h.fail(n); err != nil {
				return nil, err
			}
		}
	}
	return nil, nil
}

func blankOK[O any]() (*O, error) { return new(O), nil }

func (db *fakeDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return serve(ctx, db, "GetItem", in, db.onGet,
		func() (*dynamodb.GetItemOutput, error) { return db.backend.GetItem(ctx, in, optFns...) },
		db.getItem, func() (*dynamodb.GetItemOutput, error) { return nil, errUnexpected })
}

func (db *fakeDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return serve(ctx, db, "PutItem", in, db.onPut,
		func() (*dynamodb.PutItemOutput, error) { return db.backend.PutItem(ctx, in, optFns...) },
		db.putItem, blankOK[dynamodb.PutItemOutput])
}

func (db *fakeDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return serve(ctx, db, "UpdateItem", in, db.onUpd,
		func() (*dynamodb.UpdateItemOutput, error) { return db.backend.UpdateItem(ctx, in, optFns...) },
		db.updateItem, blankOK[dynamodb.UpdateItemOutput])
}

func (db *fakeDB) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return serve(ctx, db, "DeleteItem", in, db.onDel,
		func() (*dynamodb.DeleteItemOutput, error) { return db.backend.DeleteItem(ctx, in, optFns...) },
		db.deleteItem, blankOK[dynamodb.DeleteItemOutput])
}

func (db *fakeDB) Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return serve(ctx, db, "Query", in, db.onQuery,
		func() (*dynamodb.QueryOutput, error) { return db.backend.Query(ctx, in, optFns...) },
		db.query, blankOK[dynamodb.QueryOutput])
}

func (db *fakeDB) Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return serve(ctx, db, "Scan", in, db.onScan,
		func() (*dynamodb.ScanOutput, error) { return db.backend.Scan(ctx, in, optFns...) },
		db.scan, blankOK[dynamodb.ScanOutput])
}

func (db *fakeDB) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return serve(ctx, db, "BatchGetItem", in, db.onBatchGet,
		func() (*dynamodb.BatchGetItemOutput, error) { return db.backend.BatchGetItem(ctx, in, optFns...) },
		db.batchGet, blankOK[dynamodb.BatchGetItemOutput])
}

func (db *fakeDB) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return serve(ctx, db, "BatchWriteItem", in, db.onBatchWrite,
		func() (*dynamodb.BatchWriteItemOutput, error) { return db.backend.BatchWriteItem(ctx, in, optFns...) },
		db.batchWrite, blankOK[dynamodb.BatchWriteItemOutput])
}

func (db *fakeDB) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	return serve(ctx, db, "TransactGetItems", in, db.onTxGet,
		func() (*dynamodb.TransactGetItemsOutput, error) {
			return db.backend.TransactGetItems(ctx, in, optFns...)
		},
		db.txGet, func() (*dynamodb.TransactGetItemsOutput, error) {
			return &dynamodb.TransactGetItemsOutput{Responses: make([]types.ItemResponse, len(in.TransactItems))}, nil
		})
}

func (db *fakeDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return serve(ctx, db, "TransactWriteItems", in, db.onTxWrite,
		func() (*dynamodb.TransactWriteItemsOutput, error) {
			return db.backend.TransactWriteItems(ctx, in, optFns...)
		},
		db.txWrite, blankOK[dynamodb.TransactWriteItemsOutput])
}

func (db *fakeDB) CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	return serve(ctx, db, "CreateTable", in, db.onCreate,
		func() (*dynamodb.CreateTableOutput, error) { return db.backend.CreateTable(ctx, in, optFns...) },
		db.createTable, blankOK[dynamodb.CreateTableOutput])
}

func (db *fakeDB) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return serve(ctx, db, "DescribeTable", in, db.onDescribe,
		func() (*dynamodb.DescribeTableOutput, error) { return db.backend.DescribeTable(ctx, in, optFns...) },
		db.describeTable, func() (*dynamodb.DescribeTableOutput, error) {
			return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{TableName: in.TableName, TableStatus: types.TableStatusActive}}, nil
		})
}

func (db *fakeDB) DeleteTable(ctx context.Context, in *dynamodb.DeleteTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error) {
	return serve(ctx, db, "DeleteTable", in, db.onDropTable,
		func() (*dynamodb.DeleteTableOutput, error) { return db.backend.DeleteTable(ctx, in, optFns...) },
		db.deleteTable, blankOK[dynamodb.DeleteTableOutput])
}

func (db *fakeDB) UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error) {
	return serve(ctx, db, "UpdateTimeToLive", in, db.onTTL,
		func() (*dynamodb.UpdateTimeToLiveOutput, error) {
			return db.backend.UpdateTimeToLive(ctx, in, optFns...)
		},
		func(*dynamodb.UpdateTimeToLiveInput) (*dynamodb.UpdateTimeToLiveOutput, error) {
			return &dynamodb.UpdateTimeToLiveOutput{}, nil
		}, blankOK[dynamodb.UpdateTimeToLiveOutput])
}

var _ Client = (*fakeDB)(nil)

// ---- the store; every method below runs with db.mu held ----

func fakeValidation(format string, args ...any) error {
	return &smithy.GenericAPIError{Code: "ValidationException", Message: "fakedb: " + fmt.Sprintf(format, args...)}
}

func fakeNotFound(name string) error {
	return &types.ResourceNotFoundException{Message: aws.String("fakedb: no table " + name)}
}

// id is the identity of item (or key) in t.
func (t *fakeTable) id(item map[string]types.AttributeValue) string {
	k := map[string]types.AttributeValue{t.hash: item[t.hash]}
	if t.rng != "" {
		k[t.rng] = item[t.rng]
	}
	return formatKey(k)
}

// key returns the key attributes of item.
func (t *fakeTable) key(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	k := map[string]types.AttributeValue{t.hash: item[t.hash]}
	if t.rng != "" {
		k[t.rng] = item[t.rng]
	}
	return k
}

// checkKey refuses a key that is not exactly t's key attributes.
func (t *fakeTable) checkKey(key map[string]types.AttributeValue) error {
	want := 1
	if t.rng != "" {
		want = 2
	}
	if len(key) != want || key[t.hash] == nil || t.rng != "" && key[t.rng] == nil {
		return fakeValidation("the provided key element does not match the schema: %s", formatKey(key))
	}
	return nil
}

// sorted returns the items of t by hash key, then range key.
func (t *fakeTable) sorted() []map[string]types.AttributeValue {
	out := slices.Collect(maps.Values(t.items))
	slices.SortFunc(out, func(a, b map[string]types.AttributeValue) int {
		if c := fakeCompare(a[t.hash], b[t.hash]); c != 0 {
			return c
		}
		if t.rng == "" {
			return 0
		}
		return fakeCompare(a[t.rng], b[t.rng])
	})
	return out
}

// tableFor returns table name; one never declared is created with the
// key attributes of key when it has one or two (the names sorted: a test
// of a composite key that queries should declare the table).
func (db *fakeDB) tableFor(name *string, key map[string]types.AttributeValue) (*fakeTable, error) {
	n := aws.ToString(name)
	if t := db.tables[n]; t != nil {
		return t, nil
	}
	names := slices.Sorted(maps.Keys(key))
	switch len(names) {
	case 1:
		return db.tableLocked(n, names[0], ""), nil
	case 2:
		return db.tableLocked(n, names[0], names[1]), nil
	}
	return nil, fakeNotFound(n)
}

// putTable returns the table of a PutItem: its item names no key.
func (db *fakeDB) putTable(name *string) (*fakeTable, error) {
	if t := db.tables[aws.ToString(name)]; t != nil {
		return t, nil
	}
	return nil, fakeNotFound(aws.ToString(name))
}

func (db *fakeDB) getItem(in *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
	if db.strongReads && !aws.ToBool(in.ConsistentRead) {
		return nil, errors.New("fakedb: the read must be strongly consistent")
	}
	t, err := db.tableFor(in.TableName, in.Key)
	if err != nil {
		return nil, err
	}
	if err := t.checkKey(in.Key); err != nil {
		return nil, err
	}
	item, err := fakeProject(t.items[t.id(in.Key)], in.ProjectionExpression, in.ExpressionAttributeNames)
	return &dynamodb.GetItemOutput{Item: item}, err
}

// fakeStored is item as DynamoDB stores a write of it: numbers, in sets,
// lists and maps too, in their canonical form (av.Canonical: "7.50" is
// stored and read back as "7.5"). It returns item itself when nothing
// changes.
func fakeStored(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	out, _ := fakeCanonicalMap(item)
	return out
}

// fakeCanonicalMap is fakeStored, and whether anything changed.
func fakeCanonicalMap(item map[string]types.AttributeValue) (map[string]types.AttributeValue, bool) {
	var out map[string]types.AttributeValue
	for k, v := range item {
		if c := fakeCanonical(v); c != v {
			if out == nil {
				out = maps.Clone(item)
			}
			out[k] = c
		}
	}
	if out == nil {
		return item, false
	}
	return out, true
}

// fakeCanonical is v with its numbers canonical; v itself when they are.
func fakeCanonical(v types.AttributeValue) types.AttributeValue {
	switch v := v.(type) {
	case *types.AttributeValueMemberN:
		if !av.IsCanonical(v.Value) {
			return &types.AttributeValueMemberN{Value: av.Canonical(v.Value)}
		}
	case *types.AttributeValueMemberNS:
		if slices.ContainsFunc(v.Value, func(n string) bool { return !av.IsCanonical(n) }) {
			ns := make([]string, len(v.Value))
			for i, n := range v.Value {
				ns[i] = av.Canonical(n)
			}
			return &types.AttributeValueMemberNS{Value: ns}
		}
	case *types.AttributeValueMemberL:
		var l []types.AttributeValue
		for i, e := range v.Value {
			if c := fakeCanonical(e); c != e {
				if l == nil {
					l = slices.Clone(v.Value)
				}
				l[i] = c
			}
		}
		if l != nil {
			return &types.AttributeValueMemberL{Value: l}
		}
	case *types.AttributeValueMemberM:
		if m, changed := fakeCanonicalMap(v.Value); changed {
			return &types.AttributeValueMemberM{Value: m}
		}
	}
	return v
}

// fakeFailed is the ConditionalCheckFailedException of a write on old.
func fakeFailed(old map[string]types.AttributeValue, rv types.ReturnValuesOnConditionCheckFailure) error {
	e := &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	if rv == types.ReturnValuesOnConditionCheckFailureAllOld {
		e.Item = old
	}
	return e
}

func (db *fakeDB) putItem(in *dynamodb.PutItemInput) (*dynamodb.PutItemOutput, error) {
	t, err := db.putTable(in.TableName)
	if err != nil {
		return nil, err
	}
	if err := t.checkKey(t.key(in.Item)); err != nil {
		return nil, err
	}
	id := t.id(in.Item)
	old := t.items[id]
	ok, err := fakeCond(in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, old)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fakeFailed(old, in.ReturnValuesOnConditionCheckFailure)
	}
	t.items[id] = fakeStored(in.Item)
	out := &dynamodb.PutItemOutput{}
	if in.ReturnValues == types.ReturnValueAllOld {
		out.Attributes = old
	}
	return out, nil
}

func (db *fakeDB) updateItem(in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
	t, err := db.tableFor(in.TableName, in.Key)
	if err != nil {
		return nil, err
	}
	if err := t.checkKey(in.Key); err != nil {
		return nil, err
	}
	id := t.id(in.Key)
	old := t.items[id]
	ok, err := fakeCond(in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, old)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fakeFailed(old, in.ReturnValuesOnConditionCheckFailure)
	}
	item := fakeClone(old)
	if item == nil {
		item = maps.Clone(in.Key)
	}
	touched, err := fakeUpdate(aws.ToString(in.UpdateExpression), in.ExpressionAttributeNames, in.ExpressionAttributeValues, item)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{t.hash, t.rng} {
		if k != "" && touched[k] {
			return nil, fakeValidation("cannot update attribute %s: it is part of the key", k)
		}
	}
	t.items[id] = fakeStored(item)
	out := &dynamodb.UpdateItemOutput{}
	switch in.ReturnValues {
	case types.ReturnValueAllNew:
		out.Attributes = item
	case types.ReturnValueAllOld:
		out.Attributes = old
	case types.ReturnValueUpdatedNew, types.ReturnValueUpdatedOld:
		from := item
		if in.ReturnValues == types.ReturnValueUpdatedOld {
			from = old
		}
		out.Attributes = map[string]types.AttributeValue{}
		for k := range touched {
			if v, ok := from[k]; ok {
				out.Attributes[k] = v
			}
		}
	}
	return out, nil
}

func (db *fakeDB) deleteItem(in *dynamodb.DeleteItemInput) (*dynamodb.DeleteItemOutput, error) {
	t, err := db.tableFor(in.TableName, in.Key)
	if err != nil {
		return nil, err
	}
	if err := t.checkKey(in.Key); err != nil {
		return nil, err
	}
	id := t.id(in.Key)
	old := t.items[id]
	ok, err := fakeCond(in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, old)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fakeFailed(old, in.ReturnValuesOnConditionCheckFailure)
	}
	delete(t.items, id)
	out := &dynamodb.DeleteItemOutput{}
	if in.ReturnValues == types.ReturnValueAllOld {
		out.Attributes = old
	}
	return out, nil
}

// fakeIndex is a secondary index of a fakeTable: its key attributes in key
// order (several of each role for a multi-attribute global key), whether
// it is global (a local index's hash is the table's), and its projection
// (the zero value: ALL).
type fakeIndex struct {
	hashes, rngs []string
	global       bool
	proj         types.Projection
}

// index declares index name of table (declared before) with its key
// attributes (rng "" for none); a local index has the table's hash. It
// returns db. The index projects all attributes (CreateTable declares
// others).
func (db *fakeDB) index(table, name, hash, rng string, global bool) *fakeDB {
	db.mu.Lock()
	defer db.mu.Unlock()
	t := db.tables[table]
	if t == nil {
		panic("fakedb: index of undeclared table " + table)
	}
	if !global && hash != t.hash {
		panic("fakedb: local index " + name + " must have the table's hash " + t.hash)
	}
	if t.indexes == nil {
		t.indexes = map[string]*fakeIndex{}
	}
	t.indexes[name] = &fakeIndex{hashes: []string{hash}, rngs: fakeNonEmpty(rng), global: global}
	return db
}

func fakeNonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// fakeView is what a Query or Scan reads: a table or one of its indexes.
type fakeView struct {
	t            *fakeTable
	hashes, rngs []string // the view's key attributes, in key order
	keys         []string // the attributes of a position in it: the view's key, then the table's
	global       bool
	index        *fakeIndex // nil for the table
	what         string     // "query" or "scan", for messages
}

// view returns the view of a Query or Scan of table, or of its index.
func (db *fakeDB) view(table, index *string, consistent *bool, what string) (*fakeView, error) {
	t := db.tables[aws.ToString(table)]
	if t == nil {
		return nil, fakeNotFound(aws.ToString(table))
	}
	v := &fakeView{t: t, hashes: []string{t.hash}, rngs: fakeNonEmpty(t.rng), what: what}
	if index != nil {
		ix := t.indexes[*index]
		if ix == nil {
			return nil, fakeValidation("the table does not have the specified index: %s", *index)
		}
		v.hashes, v.rngs, v.global, v.index = ix.hashes, ix.rngs, ix.global, ix
		if v.global && aws.ToBool(consistent) {
			return nil, fakeValidation("Consistent read cannot be true when %sing a GSI", what)
		}
	}
	for _, k := range slices.Concat(v.hashes, v.rngs, []string{t.hash, t.rng}) {
		if k != "" && !slices.Contains(v.keys, k) {
			v.keys = append(v.keys, k)
		}
	}
	return v, nil
}

// compare orders a and b by the view's key, then the table's (DynamoDB
// leaves the order of an index's ties unspecified; the fake's is this). A
// multi-attribute key orders by its attributes left to right, as DynamoDB
// orders one.
func (v *fakeView) compare(a, b map[string]types.AttributeValue) int {
	for _, k := range v.keys {
		if c := fakeCompare(a[k], b[k]); c != 0 {
			return c
		}
	}
	return 0
}

// items returns the items in the view (an index holds those with its key
// attributes), in its order: a global index's as it holds them (its
// projected attributes only), a local index's whole (DynamoDB fetches from
// the table what a local index lacks and a projection names).
func (v *fakeView) items() []map[string]types.AttributeValue {
	var out []map[string]types.AttributeValue
	for _, it := range v.t.items {
		if !slices.ContainsFunc(slices.Concat(v.hashes, v.rngs), func(k string) bool { return it[k] == nil }) {
			if v.global {
				it = v.projected(it)
			}
			out = append(out, it)
		}
	}
	slices.SortFunc(out, v.compare)
	return out
}

// projected returns the attributes of item that the view's index projects:
// all for ALL (and for the table); for KEYS_ONLY the table's and the
// index's key attributes; for INCLUDE those and NonKeyAttributes.
func (v *fakeView) projected(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	if v.index == nil || v.allProjected() {
		return item
	}
	out := map[string]types.AttributeValue{}
	for _, a := range slices.Concat(v.keys, v.index.proj.NonKeyAttributes) {
		if av, ok := item[a]; ok {
			out[a] = av
		}
	}
	return out
}

// checkProjected refuses, as DynamoDB Local does, a filter (on attributes
// filter) naming an attribute a secondary index does not project, and a
// projection naming one that a global index does not (a local index
// fetches it from the table).
func (v *fakeView) checkProjected(filter []string, proj *string, names map[string]string) error {
	if v.allProjected() {
		return nil
	}
	held := func(a string) bool {
		return slices.Contains(v.keys, a) || slices.Contains(v.index.proj.NonKeyAttributes, a)
	}
	var missing []string
	for _, a := range filter {
		if !held(a) && !slices.Contains(missing, a) {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		return fakeValidation("Secondary index does not project one or more filter attributes: %v", missing)
	}
	if !v.global || aws.ToString(proj) == "" {
		return nil
	}
	toks, err := condexpr.Tokenize(*proj)
	if err != nil {
		return fakeValidation("invalid projection %q", *proj)
	}
	first := true
	for _, t := range toks {
		name := t.Text
		if t.Kind == condexpr.Name {
			name = names[t.Text]
		}
		if first && (t.Kind == condexpr.Name || t.Kind == condexpr.Ident) && !held(name) {
			missing = append(missing, name)
		}
		first = t.Kind == ','
	}
	if len(missing) > 0 {
		return fakeValidation("Global secondary index does not project %v", missing)
	}
	return nil
}

// allProjected reports whether the view holds every attribute of its
// items: the table, or an index projecting ALL.
func (v *fakeView) allProjected() bool {
	return v.index == nil || v.index.proj.ProjectionType == "" || v.index.proj.ProjectionType == types.ProjectionTypeAll
}

// position returns the attributes of item that name its place in the view.
func (v *fakeView) position(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	k := make(map[string]types.AttributeValue, len(v.keys))
	for _, a := range v.keys {
		k[a] = item[a]
	}
	return k
}

// paths returns the top-level attribute names expr uses.
func fakePaths(expr *string, names map[string]string) ([]string, error) {
	if aws.ToString(expr) == "" {
		return nil, nil
	}
	e, err := condexpr.Parse(*expr)
	if err != nil {
		return nil, fakeValidation("invalid expression %q: %v", *expr, err)
	}
	var out []string
	for _, p := range e.Paths {
		steps, err := fakeSteps(p, names)
		if err != nil {
			return nil, err
		}
		out = append(out, steps[0].name)
	}
	return out, nil
}

// page serves a Query or Scan over items (in the view's order, reversed
// when desc): from after ExclusiveStartKey (which need not exist), at most
// limit items read, the filter applied after the limit, as DynamoDB does; a
// page that stops at the limit returns the position of its last item read,
// even when no item follows.
func (v *fakeView) page(items []map[string]types.AttributeValue, desc bool, start map[string]types.AttributeValue, limit *int32,
	filter *string, names map[string]string, vals map[string]types.AttributeValue) (page []map[string]types.AttributeValue, scanned int, last map[string]types.AttributeValue, err error) {
	if limit != nil && *limit < 1 {
		return nil, 0, nil, fakeValidation("Limit must be greater than or equal to 1")
	}
	i := 0
	if start != nil {
		if len(start) != len(v.keys) || slices.ContainsFunc(v.keys, func(k string) bool { return start[k] == nil }) {
			return nil, 0, nil, fakeValidation("Exclusive Start Key must have same size as table's key schema: %s", formatKey(start))
		}
		for i < len(items) {
			c := v.compare(items[i], start)
			if desc {
				c = -c
			}
			if c > 0 {
				break
			}
			i++
		}
	}
	n := len(items) - i
	if limit != nil && int(*limit) < n {
		n = int(*limit)
	}
	for _, it := range items[i : i+n] {
		ok, err := fakeCond(filter, names, vals, it)
		if err != nil {
			return nil, 0, nil, err
		}
		if ok {
			page = append(page, it)
		}
	}
	if limit != nil && n == int(*limit) {
		last = v.position(items[i+n-1])
	}
	return page, n, last, nil
}

// project returns the items of page (read from v) as the request asks for
// them, none for Select COUNT, as the service documentation says: by
// default a table's whole items and an index's projected attributes
// (ALL_PROJECTED_ATTRIBUTES); ALL_ATTRIBUTES of a local index fetches the
// whole items, of a global index not projecting all is refused, as is
// ALL_PROJECTED_ATTRIBUTES of a table; a ProjectionExpression picks from
// what the view holds (a local index fetching what it lacks).
func (v *fakeView) project(page []map[string]types.AttributeValue, sel types.Select, proj *string, names map[string]string) ([]map[string]types.AttributeValue, error) {
	switch {
	case sel == types.SelectCount:
		return nil, nil
	case sel == types.SelectAllProjectedAttributes && v.index == nil:
		return nil, fakeValidation("ALL_PROJECTED_ATTRIBUTES can be used only when %sing using an IndexName", v.what)
	case sel == types.SelectAllAttributes && v.global && !v.allProjected():
		return nil, fakeValidation("One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index because its projection type is not ALL")
	}
	whole := sel == types.SelectAllAttributes || aws.ToString(proj) != ""
	var out []map[string]types.AttributeValue
	for _, it := range page {
		if !v.global && !whole {
			it = v.projected(it) // a global index's items are already
		}
		p, err := fakeProject(it, proj, names)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// query serves a Query as DynamoDB does, refusing what it refuses: a key
// condition on other attributes than the view's key or without its hash, a
// filter on the view's key, a start key the key condition does not select,
// a consistent read of a global index.
func (db *fakeDB) query(in *dynamodb.QueryInput) (*dynamodb.QueryOutput, error) {
	v, err := db.view(in.TableName, in.IndexName, in.ConsistentRead, "query")
	if err != nil {
		return nil, err
	}
	names, vals := in.ExpressionAttributeNames, in.ExpressionAttributeValues
	kc, err := fakePaths(in.KeyConditionExpression, names)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(kc, v.hashes[0]) || slices.ContainsFunc(kc, func(a string) bool { return !v.isKey(a) }) {
		return nil, fakeValidation("Query condition missed key schema element")
	}
	if err := fakeKeyConditionRule(aws.ToString(in.KeyConditionExpression), names, v.hashes, v.rngs); err != nil {
		return nil, err
	}
	for _, ph := range fakeValuePlaceholder.FindAllString(aws.ToString(in.KeyConditionExpression), -1) {
		switch v := vals[ph].(type) {
		case *types.AttributeValueMemberS:
			if v.Value == "" {
				return nil, fakeValidation("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value")
			}
		case *types.AttributeValueMemberB:
			if len(v.Value) == 0 {
				return nil, fakeValidation("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty binary value")
			}
		}
	}
	fp, err := fakePaths(in.FilterExpression, names)
	if err != nil {
		return nil, err
	}
	for _, a := range fp {
		if v.isKey(a) {
			return nil, fakeValidation("Filter Expression can only contain non-primary key attributes: Primary key attribute: %s", a)
		}
	}
	if err := v.checkProjected(fp, in.ProjectionExpression, names); err != nil {
		return nil, err
	}
	if in.ExclusiveStartKey != nil {
		if ok, err := fakeCond(in.KeyConditionExpression, names, vals, in.ExclusiveStartKey); err != nil || !ok {
			return nil, cmp.Or(err, fakeValidation("The provided starting key does not match the range key predicate"))
		}
	}
	var items []map[string]types.AttributeValue
	for _, it := range v.items() {
		ok, err := fakeCond(in.KeyConditionExpression, names, vals, it)
		if err != nil {
			return nil, err
		}
		if ok {
			items = append(items, it)
		}
	}
	desc := in.ScanIndexForward != nil && !*in.ScanIndexForward
	if desc {
		slices.Reverse(items)
	}
	page, scanned, last, err := v.page(items, desc, in.ExclusiveStartKey, in.Limit, in.FilterExpression, names, vals)
	if err != nil {
		return nil, err
	}
	out := &dynamodb.QueryOutput{Count: int32(len(page)), ScannedCount: int32(scanned), LastEvaluatedKey: last}
	out.Items, err = v.project(page, in.Select, in.ProjectionExpression, names)
	return out, err
}

// isKey reports whether attribute a is one of the view's key attributes.
func (v *fakeView) isKey(a string) bool {
	return slices.Contains(v.hashes, a) || slices.Contains(v.rngs, a)
}

// fakeKeyConditionRule applies DynamoDB's rule for the key condition expr
// of a Query of a view keyed by hashes and rngs (in key order), as the
// service documentation states it for multi-attribute keys (a key of one
// attribute per role is the case n = 1): equality on every partition
// attribute; sort attributes matched left to right, none skipped; only
// the last one used with a range operator (<, <=, >, >=, BETWEEN,
// begins_with). The messages are the fake's own.
func fakeKeyConditionRule(expr string, names map[string]string, hashes, rngs []string) error {
	e, err := condexpr.Parse(expr)
	if err != nil || !e.Conjunction {
		return fakeValidation("Invalid KeyConditionExpression: the key condition is a conjunction of comparisons: %q", expr)
	}
	ops := map[string]string{}
	for _, g := range e.Groups {
		steps, err := fakeSteps(g.Operands[0].Path, names)
		if g.Operands[0].Path == nil || err != nil || len(steps) != 1 {
			return fakeValidation("Invalid KeyConditionExpression: %q", expr)
		}
		op := g.Op
		if g.Fn != "" {
			op = g.Fn
		}
		if _, twice := ops[steps[0].name]; twice {
			return fakeValidation("KeyConditionExpressions must only contain one condition per key")
		}
		ops[steps[0].name] = op
	}
	for _, h := range hashes {
		switch op, ok := ops[h]; {
		case !ok:
			return fakeValidation("Query condition missed key schema element: %s", h)
		case op != "=":
			return fakeValidation("Query key condition not supported: partition key attribute %s takes only =", h)
		}
	}
	used := 0
	for j, r := range rngs {
		if _, ok := ops[r]; ok {
			used = j + 1
		}
	}
	for j, r := range rngs[:used] {
		switch op, ok := ops[r]; {
		case !ok:
			return fakeValidation("Query key condition not supported: sort key attribute %s skipped before %s", r, rngs[used-1])
		case j < used-1 && op != "=":
			return fakeValidation("Query key condition not supported: sort key attribute %s takes %s before %s; only the last one used may take a range", r, op, rngs[j+1])
		}
	}
	return nil
}

// scan serves a Scan: the view in key order (DynamoDB's order is its own;
// the tests must not depend on it), or one segment of it: by default the
// hash of an item's key modulo the total, or as db.segment says.
func (db *fakeDB) scan(in *dynamodb.ScanInput) (*dynamodb.ScanOutput, error) {
	v, err := db.view(in.TableName, in.IndexName, in.ConsistentRead, "scan")
	if err != nil {
		return nil, err
	}
	fp, err := fakePaths(in.FilterExpression, in.ExpressionAttributeNames)
	if err != nil {
		return nil, err
	}
	if err := v.checkProjected(fp, in.ProjectionExpression, in.ExpressionAttributeNames); err != nil {
		return nil, err
	}
	items := v.items()
	if in.TotalSegments != nil {
		total, seg := int(*in.TotalSegments), int(aws.ToInt32(in.Segment))
		items = slices.DeleteFunc(items, func(it map[string]types.AttributeValue) bool {
			if db.segment != nil {
				return db.segment(it, total) != seg
			}
			h := fnv.New32a()
			h.Write([]byte(v.t.id(it)))
			return int(h.Sum32()%uint32(total)) != seg
		})
	}
	page, scanned, last, err := v.page(items, false, in.ExclusiveStartKey, in.Limit, in.FilterExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	if err != nil {
		return nil, err
	}
	out := &dynamodb.ScanOutput{Count: int32(len(page)), ScannedCount: int32(scanned), LastEvaluatedKey: last}
	out.Items, err = v.project(page, in.Select, in.ProjectionExpression, in.ExpressionAttributeNames)
	return out, err
}

func (db *fakeDB) batchGet(in *dynamodb.BatchGetItemInput) (*dynamodb.BatchGetItemOutput, error) {
	n := db.counts["BatchGetItem"]
	out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}}
	total := 0
	for name, ka := range in.RequestItems {
		total += len(ka.Keys)
		if len(ka.Keys) == 0 {
			return nil, fakeValidation("no keys for table %s", name)
		}
		var t *fakeTable
		seen := map[string]bool{}
		for _, k := range ka.Keys {
			var err error
			if t, err = db.tableFor(&name, k); err != nil {
				return nil, err
			}
			if err := t.checkKey(k); err != nil {
				return nil, err
			}
			if seen[t.id(k)] {
				return nil, fakeValidation("Provided list of item keys contains duplicates")
			}
			seen[t.id(k)] = true
		}
		keys := ka.Keys
		if db.unprocessedGet != nil {
			if un := db.unprocessedGet(n, keys); len(un) > 0 {
				if out.UnprocessedKeys == nil {
					out.UnprocessedKeys = map[string]types.KeysAndAttributes{}
				}
				out.UnprocessedKeys[name] = types.KeysAndAttributes{Keys: un, ProjectionExpression: ka.ProjectionExpression, ExpressionAttributeNames: ka.ExpressionAttributeNames, ConsistentRead: ka.ConsistentRead}
				keys = slices.DeleteFunc(slices.Clone(keys), func(k map[string]types.AttributeValue) bool {
					return slices.ContainsFunc(un, func(u map[string]types.AttributeValue) bool { return t.id(u) == t.id(k) })
				})
			}
		}
		for _, k := range keys {
			if it, ok := t.items[t.id(k)]; ok {
				p, err := fakeProject(it, ka.ProjectionExpression, ka.ExpressionAttributeNames)
				if err != nil {
					return nil, err
				}
				out.Responses[name] = append(out.Responses[name], p)
			}
		}
	}
	if total > MaxBatchGetKeys {
		return nil, fakeValidation("%d keys: at most %d", total, MaxBatchGetKeys)
	}
	return out, nil
}

func fakeWriteKey(r types.WriteRequest) map[string]types.AttributeValue {
	if r.PutRequest != nil {
		return r.PutRequest.Item
	}
	return r.DeleteRequest.Key
}

func (db *fakeDB) batchWrite(in *dynamodb.BatchWriteItemInput) (*dynamodb.BatchWriteItemOutput, error) {
	n := db.counts["BatchWriteItem"]
	out := &dynamodb.BatchWriteItemOutput{}
	total := 0
	type apply struct {
		t    *fakeTable
		reqs []types.WriteRequest
	}
	var todo []apply
	for name, reqs := range in.RequestItems {
		total += len(reqs)
		if len(reqs) == 0 {
			return nil, fakeValidation("no writes for table %s", name)
		}
		t := db.tables[name]
		if t == nil {
			var key map[string]types.AttributeValue // a put's item names no key
			for _, r := range reqs {
				if r.DeleteRequest != nil {
					key = r.DeleteRequest.Key
				}
			}
			var err error
			if t, err = db.tableFor(&name, key); err != nil {
				return nil, err
			}
		}
		seen := map[string]bool{}
		for _, r := range reqs {
			if err := t.checkKey(t.key(fakeWriteKey(r))); err != nil {
				return nil, err
			}
			id := t.id(fakeWriteKey(r))
			if seen[id] {
				return nil, fakeValidation("Provided list of item keys contains duplicates")
			}
			seen[id] = true
		}
		if db.unprocessedWrite != nil {
			if un := db.unprocessedWrite(n, reqs); len(un) > 0 {
				if out.UnprocessedItems == nil {
					out.UnprocessedItems = map[string][]types.WriteRequest{}
				}
				out.UnprocessedItems[name] = un
				reqs = slices.DeleteFunc(slices.Clone(reqs), func(r types.WriteRequest) bool {
					return slices.ContainsFunc(un, func(u types.WriteRequest) bool { return t.id(fakeWriteKey(u)) == t.id(fakeWriteKey(r)) })
				})
			}
		}
		todo = append(todo, apply{t, reqs})
	}
	if total > MaxBatchWriteItems {
		return nil, fakeValidation("%d writes: at most %d", total, MaxBatchWriteItems)
	}
	for _, a := range todo {
		for _, r := range a.reqs {
			if r.PutRequest != nil {
				a.t.items[a.t.id(r.PutRequest.Item)] = fakeStored(r.PutRequest.Item)
			} else {
				delete(a.t.items, a.t.id(r.DeleteRequest.Key))
			}
		}
	}
	return out, nil
}

func (db *fakeDB) txGet(in *dynamodb.TransactGetItemsInput) (*dynamodb.TransactGetItemsOutput, error) {
	out := &dynamodb.TransactGetItemsOutput{Responses: make([]types.ItemResponse, len(in.TransactItems))}
	for i, ti := range in.TransactItems {
		g := ti.Get
		t, err := db.tableFor(g.TableName, g.Key)
		if err != nil {
			return nil, err
		}
		if err := t.checkKey(g.Key); err != nil {
			return nil, err
		}
		if out.Responses[i].Item, err = fakeProject(t.items[t.id(g.Key)], g.ProjectionExpression, g.ExpressionAttributeNames); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// txWrite checks every member's condition, then applies all or none; a
// failed condition cancels the transaction with one reason per member.
func (db *fakeDB) txWrite(in *dynamodb.TransactWriteItemsInput) (*dynamodb.TransactWriteItemsOutput, error) {
	type member struct {
		t     *fakeTable
		key   map[string]types.AttributeValue
		cond  *string
		names map[string]string
		vals  map[string]types.AttributeValue
		rv    types.ReturnValuesOnConditionCheckFailure
		apply func(old map[string]types.AttributeValue) (map[string]types.AttributeValue, error) // nil: a check
	}
	var ms []member
	seen := map[string]bool{}
	for _, ti := range in.TransactItems {
		var m member
		var name *string
		switch {
		case ti.Put != nil:
			p := ti.Put
			t, err := db.putTable(p.TableName)
			if err != nil {
				return nil, err
			}
			name, m = p.TableName, member{t: t, key: t.key(p.Item), cond: p.ConditionExpression, names: p.ExpressionAttributeNames, vals: p.ExpressionAttributeValues, rv: p.ReturnValuesOnConditionCheckFailure,
				apply: func(map[string]types.AttributeValue) (map[string]types.AttributeValue, error) { return p.Item, nil }}
		case ti.Update != nil:
			u := ti.Update
			t, err := db.tableFor(u.TableName, u.Key)
			if err != nil {
				return nil, err
			}
			name, m = u.TableName, member{t: t, key: u.Key, cond: u.ConditionExpression, names: u.ExpressionAttributeNames, vals: u.ExpressionAttributeValues, rv: u.ReturnValuesOnConditionCheckFailure,
				apply: func(old map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
					item := fakeClone(old)
					if item == nil {
						item = maps.Clone(u.Key)
					}
					_, err := fakeUpdate(aws.ToString(u.UpdateExpression), u.ExpressionAttributeNames, u.ExpressionAttributeValues, item)
					return item, err
				}}
		case ti.Delete != nil:
			d := ti.Delete
			t, err := db.tableFor(d.TableName, d.Key)
			if err != nil {
				return nil, err
			}
			name, m = d.TableName, member{t: t, key: d.Key, cond: d.ConditionExpression, names: d.ExpressionAttributeNames, vals: d.ExpressionAttributeValues, rv: d.ReturnValuesOnConditionCheckFailure,
				apply: func(map[string]types.AttributeValue) (map[string]types.AttributeValue, error) { return nil, nil }}
		case ti.ConditionCheck != nil:
			c := ti.ConditionCheck
			t, err := db.tableFor(c.TableName, c.Key)
			if err != nil {
				return nil, err
			}
			name, m = c.TableName, member{t: t, key: c.Key, cond: c.ConditionExpression, names: c.ExpressionAttributeNames, vals: c.ExpressionAttributeValues, rv: c.ReturnValuesOnConditionCheckFailure}
		default:
			return nil, fakeValidation("a transaction member with no operation")
		}
		if err := m.t.checkKey(m.key); err != nil {
			return nil, err
		}
		id := aws.ToString(name) + " " + m.t.id(m.key)
		if seen[id] {
			return nil, fakeValidation("Transaction request cannot include multiple operations on one item")
		}
		seen[id] = true
		ms = append(ms, m)
	}
	reasons := make([]types.CancellationReason, len(ms))
	failed := false
	for i, m := range ms {
		old := m.t.items[m.t.id(m.key)]
		ok, err := fakeCond(m.cond, m.names, m.vals, old)
		if err != nil {
			return nil, err
		}
		reasons[i].Code = aws.String("None")
		if !ok {
			failed = true
			reasons[i].Code = aws.String("ConditionalCheckFailed")
			reasons[i].Message = aws.String("The conditional request failed")
			if m.rv == types.ReturnValuesOnConditionCheckFailureAllOld {
				reasons[i].Item = old
			}
		}
	}
	if failed {
		return nil, &types.TransactionCanceledException{Message: aws.String("Transaction cancelled"), CancellationReasons: reasons}
	}
	news := make([]map[string]types.AttributeValue, len(ms))
	for i, m := range ms {
		if m.apply == nil {
			continue
		}
		var err error
		if news[i], err = m.apply(m.t.items[m.t.id(m.key)]); err != nil {
			return nil, err
		}
	}
	for i, m := range ms {
		switch {
		case m.apply == nil:
		case news[i] == nil:
			delete(m.t.items, m.t.id(m.key))
		default:
			m.t.items[m.t.id(m.key)] = fakeStored(news[i])
		}
	}
	return &dynamodb.TransactWriteItemsOutput{}, nil
}

func (db *fakeDB) createTable(in *dynamodb.CreateTableInput) (*dynamodb.CreateTableOutput, error) {
	name := aws.ToString(in.TableName)
	if db.tables[name] != nil {
		return nil, &types.ResourceInUseException{Message: aws.String("fakedb: table exists: " + name)}
	}
	var hash, rng string
	for _, k := range in.KeySchema {
		if k.KeyType == types.KeyTypeHash {
			hash = aws.ToString(k.AttributeName)
		} else {
			rng = aws.ToString(k.AttributeName)
		}
	}
	t := db.tableLocked(name, hash, rng)
	t.desc = &types.TableDescription{TableName: in.TableName, TableStatus: types.TableStatusActive, KeySchema: in.KeySchema,
		AttributeDefinitions: in.AttributeDefinitions, BillingModeSummary: &types.BillingModeSummary{BillingMode: in.BillingMode}}
	// The indexes, served by Query and Scan (with their projections) and
	// described as created.
	for _, g := range in.GlobalSecondaryIndexes {
		hs, rs := fakeKeyRoles(g.KeySchema)
		if len(hs) > 4 || len(rs) > 4 {
			return nil, fakeValidation("a global secondary index key schema has at most 4 HASH and 4 RANGE attributes")
		}
		if t.indexes == nil {
			t.indexes = map[string]*fakeIndex{}
		}
		t.indexes[aws.ToString(g.IndexName)] = &fakeIndex{hashes: hs, rngs: rs, global: true, proj: fakeProjection(g.Projection)}
		t.desc.GlobalSecondaryIndexes = append(t.desc.GlobalSecondaryIndexes, types.GlobalSecondaryIndexDescription{
			IndexName: g.IndexName, KeySchema: g.KeySchema, Projection: g.Projection, IndexStatus: types.IndexStatusActive})
	}
	for _, l := range in.LocalSecondaryIndexes {
		hs, rs := fakeKeyRoles(l.KeySchema)
		if len(hs) != 1 || len(rs) != 1 || hs[0] != hash {
			return nil, fakeValidation("a local secondary index has the table's HASH attribute and one RANGE attribute")
		}
		if t.indexes == nil {
			t.indexes = map[string]*fakeIndex{}
		}
		t.indexes[aws.ToString(l.IndexName)] = &fakeIndex{hashes: hs, rngs: rs, proj: fakeProjection(l.Projection)}
		t.desc.LocalSecondaryIndexes = append(t.desc.LocalSecondaryIndexes, types.LocalSecondaryIndexDescription{
			IndexName: l.IndexName, KeySchema: l.KeySchema, Projection: l.Projection})
	}
	return &dynamodb.CreateTableOutput{TableDescription: t.desc}, nil
}

// fakeProjection returns p as an index keeps it (nil: the zero value, ALL).
func fakeProjection(p *types.Projection) types.Projection {
	if p == nil {
		return types.Projection{}
	}
	return types.Projection{ProjectionType: p.ProjectionType, NonKeyAttributes: slices.Clone(p.NonKeyAttributes)}
}

// fakeKeyRoles returns the HASH and the RANGE attributes of ks, each in
// the order ks lists them.
func fakeKeyRoles(ks []types.KeySchemaElement) (hashes, rngs []string) {
	for _, k := range ks {
		if k.KeyType == types.KeyTypeHash {
			hashes = append(hashes, aws.ToString(k.AttributeName))
		} else {
			rngs = append(rngs, aws.ToString(k.AttributeName))
		}
	}
	return hashes, rngs
}

func (db *fakeDB) describeTable(in *dynamodb.DescribeTableInput) (*dynamodb.DescribeTableOutput, error) {
	t := db.tables[aws.ToString(in.TableName)]
	if t == nil {
		return nil, fakeNotFound(aws.ToString(in.TableName))
	}
	d := t.desc
	if d == nil {
		d = &types.TableDescription{TableName: in.TableName, TableStatus: types.TableStatusActive}
	}
	return &dynamodb.DescribeTableOutput{Table: d}, nil
}

func (db *fakeDB) deleteTable(in *dynamodb.DeleteTableInput) (*dynamodb.DeleteTableOutput, error) {
	if db.tables[aws.ToString(in.TableName)] == nil {
		return nil, fakeNotFound(aws.ToString(in.TableName))
	}
	delete(db.tables, aws.ToString(in.TableName))
	return &dynamodb.DeleteTableOutput{}, nil
}

// ---- values, paths, conditions, projections, updates ----

// fakeClone copies item deeply enough for an update to change it.
func fakeClone(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	if item == nil {
		return nil
	}
	out := make(map[string]types.AttributeValue, len(item))
	for k, v := range item {
		out[k] = fakeCloneAV(v)
	}
	return out
}

func fakeCloneAV(v types.AttributeValue) types.AttributeValue {
	switch x := v.(type) {
	case *types.AttributeValueMemberM:
		return &types.AttributeValueMemberM{Value: fakeClone(x.Value)}
	case *types.AttributeValueMemberL:
		l := make([]types.AttributeValue, len(x.Value))
		for i, e := range x.Value {
			l[i] = fakeCloneAV(e)
		}
		return &types.AttributeValueMemberL{Value: l}
	}
	return v
}

// fakeCompare orders two scalars of one type (N, S or B) as the library's
// key order does (compareKeyValues); values of other types compare by type
// name.
func fakeCompare(a, b types.AttributeValue) int {
	if c := plan.CompareKeyValues(a, b); c != 2 {
		return c
	}
	return cmp.Compare(fmt.Sprintf("%T", a), fmt.Sprintf("%T", b))
}

// fakeSegs turns a path of an expression into its steps: attribute names
// (index false) and list indexes.
type fakeStep struct {
	name  string
	index int
	isIdx bool
}

func fakeSteps(p *condexpr.Path, names map[string]string) ([]fakeStep, error) {
	steps := make([]fakeStep, len(p.Segs))
	for i, s := range p.Segs {
		if p.Index[i] {
			var n big.Int
			if _, ok := n.SetString(s.Text, 10); !ok {
				return nil, fakeValidation("bad index %s", s.Text)
			}
			steps[i] = fakeStep{index: int(n.Int64()), isIdx: true}
			continue
		}
		name, ok := names[s.Text]
		if !ok {
			return nil, fakeValidation("name placeholder %s is not defined", s.Text)
		}
		steps[i] = fakeStep{name: name}
	}
	return steps, nil
}

// fakeGet returns the value at steps in item, nil when absent.
func fakeGet(item map[string]types.AttributeValue, steps []fakeStep) types.AttributeValue {
	var cur types.AttributeValue = &types.AttributeValueMemberM{Value: item}
	for _, s := range steps {
		switch x := cur.(type) {
		case *types.AttributeValueMemberM:
			if s.isIdx {
				return nil
			}
			cur = x.Value[s.name]
		case *types.AttributeValueMemberL:
			if !s.isIdx || s.index >= len(x.Value) {
				return nil
			}
			cur = x.Value[s.index]
		default:
			return nil
		}
		if cur == nil {
			return nil
		}
	}
	return cur
}

// fakeSet sets (v non-nil) or removes the value at steps in item; the
// parent must exist, as DynamoDB requires.
func fakeSet(item map[string]types.AttributeValue, steps []fakeStep, v types.AttributeValue) error {
	var parent types.AttributeValue = &types.AttributeValueMemberM{Value: item}
	if len(steps) > 1 {
		parent = fakeGet(item, steps[:len(steps)-1])
	}
	last := steps[len(steps)-1]
	switch x := parent.(type) {
	case *types.AttributeValueMemberM:
		if last.isIdx {
			break
		}
		if v == nil {
			delete(x.Value, last.name)
		} else {
			x.Value[last.name] = v
		}
		return nil
	case *types.AttributeValueMemberL:
		if !last.isIdx {
			break
		}
		switch {
		case v == nil && last.index < len(x.Value):
			x.Value = slices.Delete(x.Value, last.index, last.index+1)
		case v == nil:
		case last.index < len(x.Value):
			x.Value[last.index] = v
		default:
			x.Value = append(x.Value, v)
		}
		return nil
	}
	return fakeValidation("the document path provided in the update expression is invalid for update")
}

// fakeCond evaluates condition expr (nil or empty: true) on item (nil:
// absent).
func fakeCond(expr *string, names map[string]string, vals map[string]types.AttributeValue, item map[string]types.AttributeValue) (bool, error) {
	if aws.ToString(expr) == "" {
		return true, nil
	}
	e, err := condexpr.ParseTree(*expr)
	if err != nil {
		return false, fakeValidation("invalid condition %q: %v", *expr, err)
	}
	var eval func(n *condexpr.Node) (bool, error)
	eval = func(n *condexpr.Node) (bool, error) {
		switch n.Op {
		case "":
			return fakeGroup(&e.Groups[n.Group], names, vals, item)
		case "NOT":
			ok, err := eval(n.Kids[0])
			return !ok, err
		}
		for _, k := range n.Kids {
			ok, err := eval(k)
			if err != nil || ok == (n.Op == "OR") {
				return ok, err
			}
		}
		return n.Op == "AND", nil
	}
	return eval(e.Tree)
}

// fakeOperand returns the value of o on item: nil for an absent path.
func fakeOperand(o condexpr.Operand, names map[string]string, vals map[string]types.AttributeValue, item map[string]types.AttributeValue) (types.AttributeValue, error) {
	switch {
	case o.Value != "":
		v, ok := vals[o.Value]
		if !ok {
			return nil, fakeValidation("value placeholder %s is not defined", o.Value)
		}
		return v, nil
	case o.Path != nil:
		steps, err := fakeSteps(o.Path, names)
		if err != nil {
			return nil, err
		}
		return fakeGet(item, steps), nil
	case o.Size != nil:
		steps, err := fakeSteps(o.Size, names)
		if err != nil {
			return nil, err
		}
		var n int
		switch x := fakeGet(item, steps).(type) {
		case *types.AttributeValueMemberS:
			n = utf8.RuneCountInString(x.Value)
		case *types.AttributeValueMemberB:
			n = len(x.Value)
		case *types.AttributeValueMemberSS:
			n = len(x.Value)
		case *types.AttributeValueMemberNS:
			n = len(x.Value)
		case *types.AttributeValueMemberBS:
			n = len(x.Value)
		case *types.AttributeValueMemberL:
			n = len(x.Value)
		case *types.AttributeValueMemberM:
			n = len(x.Value)
		default:
			return nil, nil
		}
		return plan.NumberAV(int64(n)), nil
	}
	return nil, fakeValidation("unreadable operand")
}

// fakeAVType is DynamoDB's name of v's type ("S", "NULL").
func fakeAVType(v types.AttributeValue) string {
	switch v.(type) {
	case *types.AttributeValueMemberS:
		return "S"
	case *types.AttributeValueMemberN:
		return "N"
	case *types.AttributeValueMemberB:
		return "B"
	case *types.AttributeValueMemberSS:
		return "SS"
	case *types.AttributeValueMemberNS:
		return "NS"
	case *types.AttributeValueMemberBS:
		return "BS"
	case *types.AttributeValueMemberBOOL:
		return "BOOL"
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberL:
		return "L"
	case *types.AttributeValueMemberM:
		return "M"
	}
	return ""
}

// fakeOrdered reports whether a and b are scalars of one ordered type.
func fakeOrdered(a, b types.AttributeValue) bool {
	ta := fakeAVType(a)
	return ta == fakeAVType(b) && (ta == "N" || ta == "S" || ta == "B")
}

// fakeGroup evaluates one comparison, BETWEEN, IN or function.
func fakeGroup(g *condexpr.Group, names map[string]string, vals map[string]types.AttributeValue, item map[string]types.AttributeValue) (bool, error) {
	ops := make([]types.AttributeValue, len(g.Operands))
	for i, o := range g.Operands {
		v, err := fakeOperand(o, names, vals, item)
		if err != nil {
			return false, err
		}
		ops[i] = v
	}
	switch g.Fn {
	case "attribute_exists":
		return ops[0] != nil, nil
	case "attribute_not_exists":
		return ops[0] == nil, nil
	case "attribute_type":
		t, ok := ops[1].(*types.AttributeValueMemberS)
		if !ok {
			return false, fakeValidation("attribute_type takes a string")
		}
		return ops[0] != nil && fakeAVType(ops[0]) == t.Value, nil
	case "begins_with":
		switch x := ops[0].(type) {
		case *types.AttributeValueMemberS:
			p, ok := ops[1].(*types.AttributeValueMemberS)
			return ok && strings.HasPrefix(x.Value, p.Value), nil
		case *types.AttributeValueMemberB:
			p, ok := ops[1].(*types.AttributeValueMemberB)
			return ok && bytes.HasPrefix(x.Value, p.Value), nil
		}
		return false, nil
	case "contains":
		switch x := ops[0].(type) {
		case *types.AttributeValueMemberS:
			p, ok := ops[1].(*types.AttributeValueMemberS)
			return ok && strings.Contains(x.Value, p.Value), nil
		case *types.AttributeValueMemberB:
			p, ok := ops[1].(*types.AttributeValueMemberB)
			return ok && bytes.Contains(x.Value, p.Value), nil
		case *types.AttributeValueMemberSS:
			p, ok := ops[1].(*types.AttributeValueMemberS)
			return ok && slices.Contains(x.Value, p.Value), nil
		case *types.AttributeValueMemberNS:
			p, ok := ops[1].(*types.AttributeValueMemberN)
			return ok && slices.ContainsFunc(x.Value, func(s string) bool { return av.NumberEqual(s, p.Value) }), nil
		case *types.AttributeValueMemberBS:
			p, ok := ops[1].(*types.AttributeValueMemberB)
			return ok && slices.ContainsFunc(x.Value, func(b []byte) bool { return bytes.Equal(b, p.Value) }), nil
		case *types.AttributeValueMemberL:
			return slices.ContainsFunc(x.Value, func(e types.AttributeValue) bool { return av.Equal(e, ops[1]) }), nil
		}
		return false, nil
	case "":
	default:
		return false, fakeValidation("function %s is not modelled", g.Fn)
	}
	a := ops[0]
	switch g.Op {
	case "=":
		return a != nil && ops[1] != nil && av.Equal(a, ops[1]), nil
	case "<>":
		return a == nil || ops[1] == nil || !av.Equal(a, ops[1]), nil
	case "IN":
		return a != nil && slices.ContainsFunc(ops[1:], func(v types.AttributeValue) bool { return v != nil && av.Equal(a, v) }), nil
	case "BETWEEN":
		return a != nil && fakeOrdered(a, ops[1]) && fakeOrdered(a, ops[2]) &&
			fakeCompare(ops[1], a) <= 0 && fakeCompare(a, ops[2]) <= 0, nil
	}
	if a == nil || ops[1] == nil || !fakeOrdered(a, ops[1]) {
		return false, nil
	}
	c := fakeCompare(a, ops[1])
	switch g.Op {
	case "<":
		return c < 0, nil
	case "<=":
		return c <= 0, nil
	case ">":
		return c > 0, nil
	case ">=":
		return c >= 0, nil
	}
	return false, fakeValidation("comparator %s", g.Op)
}

// fakeProject returns the attributes of item that the projection names (the
// whole top-level attribute of a nested path); item itself without one.
func fakeProject(item map[string]types.AttributeValue, proj *string, names map[string]string) (map[string]types.AttributeValue, error) {
	if item == nil || aws.ToString(proj) == "" {
		return item, nil
	}
	toks, err := condexpr.Tokenize(*proj)
	if err != nil {
		return nil, fakeValidation("invalid projection %q", *proj)
	}
	out := map[string]types.AttributeValue{}
	first := true
	for _, t := range toks {
		switch {
		case t.Kind == ',':
			first = true
		case t.Kind == condexpr.Name && first:
			name, ok := names[t.Text]
			if !ok {
				return nil, fakeValidation("name placeholder %s is not defined", t.Text)
			}
			if v, ok := item[name]; ok {
				out[name] = v
			}
			first = false
		case t.Kind == condexpr.Ident && first:
			if v, ok := item[t.Text]; ok {
				out[t.Text] = v
			}
			first = false
		}
	}
	return out, nil
}

// fakeUpdateTokens tokenizes an update expression: condexpr's tokens, and
// "+" and "-" (which no placeholder contains) as tokens of kind '+', '-'.
func fakeUpdateTokens(s string) ([]condexpr.Token, error) {
	var out []condexpr.Token
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '+' && s[i] != '-' {
			continue
		}
		toks, err := condexpr.Tokenize(s[start:i])
		if err != nil {
			return nil, err
		}
		for _, t := range toks {
			t.Start, t.End = t.Start+start, t.End+start
			out = append(out, t)
		}
		if i < len(s) {
			out = append(out, condexpr.Token{Kind: s[i], Text: s[i : i+1], Start: i, End: i + 1})
		}
		start = i + 1
	}
	return out, nil
}

// fakeUpdate applies update expression expr to item (changed in place) and
// returns the top-level attributes it touched. It reads SET (with +, -,
// if_not_exists and list_append), REMOVE, ADD and DELETE, as DynamoDB does:
// every operand is read from the item as it was before the update.
func fakeUpdate(expr string, names map[string]string, vals map[string]types.AttributeValue, item map[string]types.AttributeValue) (map[string]bool, error) {
	touched := map[string]bool{}
	if expr == "" {
		return touched, nil
	}
	toks, err := fakeUpdateTokens(expr)
	if err != nil {
		return nil, fakeValidation("invalid update expression %q", expr)
	}
	before := fakeClone(item)
	pos := 0
	peek := func() condexpr.Token {
		if pos < len(toks) {
			return toks[pos]
		}
		return condexpr.Token{}
	}
	bad := func() error { return fakeValidation("invalid update expression %q at %d", expr, peek().Start) }
	path := func() ([]fakeStep, error) {
		t := peek()
		if t.Kind != condexpr.Name {
			return nil, bad()
		}
		p := &condexpr.Path{Segs: []condexpr.Token{t}, Index: []bool{false}}
		pos++
		for {
			switch peek().Kind {
			case '.':
				pos++
				if peek().Kind != condexpr.Name {
					return nil, bad()
				}
				p.Segs, p.Index = append(p.Segs, peek()), append(p.Index, false)
				pos++
				continue
			case '[':
				pos++
				d := peek()
				if d.Kind != condexpr.Digits {
					return nil, bad()
				}
				pos++
				if peek().Kind != ']' {
					return nil, bad()
				}
				pos++
				p.Segs, p.Index = append(p.Segs, d), append(p.Index, true)
				continue
			}
			break
		}
		return fakeSteps(p, names)
	}
	expect := func(kind byte) error {
		if peek().Kind != kind {
			return bad()
		}
		pos++
		return nil
	}
	var operand func() (types.AttributeValue, error)
	operand = func() (types.AttributeValue, error) {
		t := peek()
		switch t.Kind {
		case condexpr.Value:
			pos++
			v, ok := vals[t.Text]
			if !ok {
				return nil, fakeValidation("value placeholder %s is not defined", t.Text)
			}
			return v, nil
		case condexpr.Name:
			steps, err := path()
			if err != nil {
				return nil, err
			}
			v := fakeGet(before, steps)
			if v == nil {
				return nil, fakeValidation("the provided expression refers to an attribute that does not exist in the item")
			}
			return v, nil
		case condexpr.Ident:
			pos++
			if err := expect('('); err != nil {
				return nil, err
			}
			var out types.AttributeValue
			switch strings.ToLower(t.Text) {
			case "if_not_exists":
				steps, err := path()
				if err != nil {
					return nil, err
				}
				if err := expect(','); err != nil {
					return nil, err
				}
				dflt, err := operand()
				if err != nil {
					return nil, err
				}
				if out = fakeGet(before, steps); out == nil {
					out = dflt
				}
			case "list_append":
				a, err := operand()
				if err != nil {
					return nil, err
				}
				if err := expect(','); err != nil {
					return nil, err
				}
				b, err := operand()
				if err != nil {
					return nil, err
				}
				la, ok1 := a.(*types.AttributeValueMemberL)
				lb, ok2 := b.(*types.AttributeValueMemberL)
				if !ok1 || !ok2 {
					return nil, fakeValidation("list_append of a non-list")
				}
				out = &types.AttributeValueMemberL{Value: append(slices.Clone(la.Value), lb.Value...)}
			default:
				return nil, fakeValidation("function %s is not modelled", t.Text)
			}
			return out, expect(')')
		}
		return nil, bad()
	}
	arith := func(a, b types.AttributeValue, op byte) (types.AttributeValue, error) {
		x, ok1 := a.(*types.AttributeValueMemberN)
		y, ok2 := b.(*types.AttributeValueMemberN)
		if !ok1 || !ok2 {
			return nil, fakeValidation("an operand of %c is not a number", op)
		}
		ra, ok1 := av.Rat(x.Value)
		rb, ok2 := av.Rat(y.Value)
		if !ok1 || !ok2 {
			return nil, fakeValidation("an operand of %c is not a number DynamoDB stores", op)
		}
		if op == '+' {
			ra = new(big.Rat).Add(ra, rb)
		} else {
			ra = new(big.Rat).Sub(ra, rb)
		}
		return &types.AttributeValueMemberN{Value: av.Canonical(ra.FloatString(40))}, nil
	}
	clause := ""
	for pos < len(toks) {
		t := peek()
		if t.Kind == condexpr.Ident {
			switch w := strings.ToUpper(t.Text); w {
			case "SET", "REMOVE", "ADD", "DELETE":
				clause = w
				pos++
				continue
			}
		}
		if t.Kind == ',' && clause != "" {
			pos++
			continue
		}
		steps, err := path()
		if err != nil {
			return nil, err
		}
		touched[steps[0].name] = true
		switch clause {
		case "SET":
			if peek().Kind != condexpr.Comparator || peek().Text != "=" {
				return nil, bad()
			}
			pos++
			v, err := operand()
			if err != nil {
				return nil, err
			}
			if k := peek().Kind; k == '+' || k == '-' {
				pos++
				w, err := operand()
				if err != nil {
					return nil, err
				}
				if v, err = arith(v, w, k); err != nil {
					return nil, err
				}
			}
			if err := fakeSet(item, steps, v); err != nil {
				return nil, err
			}
		case "REMOVE":
			if err := fakeSet(item, steps, nil); err != nil {
				return nil, err
			}
		case "ADD", "DELETE":
			v, err := operand()
			if err != nil {
				return nil, err
			}
			nv, err := fakeAddDelete(clause, fakeGet(before, steps), v)
			if err != nil {
				return nil, err
			}
			if err := fakeSet(item, steps, nv); err != nil {
				return nil, err
			}
		default:
			return nil, bad()
		}
	}
	return touched, nil
}

// fakeAddDelete is ADD (a number or a set) or DELETE (from a set) of v to
// cur (nil: absent); nil when a DELETE leaves the set empty.
func fakeAddDelete(clause string, cur, v types.AttributeValue) (types.AttributeValue, error) {
	if _, ok := cur.(*types.AttributeValueMemberNULL); ok {
		return nil, fakeValidation("an operand in the update expression has an incorrect data type")
	}
	if clause == "ADD" {
		if n, ok := v.(*types.AttributeValueMemberN); ok {
			if cur == nil {
				return n, nil
			}
			c, ok := cur.(*types.AttributeValueMemberN)
			if !ok {
				return nil, fakeValidation("an operand in the update expression has an incorrect data type")
			}
			ra, ok1 := av.Rat(c.Value)
			rb, ok2 := av.Rat(n.Value)
			if !ok1 || !ok2 {
				return nil, fakeValidation("an operand of ADD is not a number DynamoDB stores")
			}
			return &types.AttributeValueMemberN{Value: av.Canonical(new(big.Rat).Add(ra, rb).FloatString(40))}, nil
		}
	}
	if cur != nil && fakeAVType(cur) != fakeAVType(v) {
		return nil, fakeValidation("an operand in the update expression has an incorrect data type")
	}
	switch x := v.(type) {
	case *types.AttributeValueMemberSS:
		var have []string
		if cur != nil {
			have = cur.(*types.AttributeValueMemberSS).Value
		}
		out := fakeSetOp(clause, have, x.Value, func(a, b string) bool { return a == b })
		if len(out) == 0 {
			return nil, nil
		}
		return &types.AttributeValueMemberSS{Value: out}, nil
	case *types.AttributeValueMemberNS:
		var have []string
		if cur != nil {
			have = cur.(*types.AttributeValueMemberNS).Value
		}
		out := fakeSetOp(clause, have, x.Value, av.NumberEqual)
		if len(out) == 0 {
			return nil, nil
		}
		return &types.AttributeValueMemberNS{Value: out}, nil
	case *types.AttributeValueMemberBS:
		var have [][]byte
		if cur != nil {
			have = cur.(*types.AttributeValueMemberBS).Value
		}
		out := fakeSetOp(clause, have, x.Value, bytes.Equal)
		if len(out) == 0 {
			return nil, nil
		}
		return &types.AttributeValueMemberBS{Value: out}, nil
	}
	return nil, fakeValidation("%s takes a number or a set", clause)
}

func fakeSetOp[E any](clause string, have, v []E, eq func(E, E) bool) []E {
	out := slices.Clone(have)
	for _, e := range v {
		i := slices.IndexFunc(out, func(x E) bool { return eq(x, e) })
		switch {
		case clause == "ADD" && i < 0:
			out = append(out, e)
		case clause == "DELETE" && i >= 0:
			out = slices.Delete(out, i, i+1)
		}
	}
	return out
}

// TestFakeDBServesLikeDynamoDB pins the fake's own semantics that the unit
// tests lean on: conditions and updates are evaluated (a failed condition
// returns the item as it was with ALL_OLD, and changes nothing), SET reads
// every operand from the item as it was, ADD and DELETE work on numbers and
// sets, and a transaction applies all of its members or none.
func TestFakeDBServesLikeDynamoDB(t *testing.T) {
	ctx := context.Background()
	db := (&fakeDB{}).table("T", "id", "")
	db.put("T", map[string]types.AttributeValue{"id": str("a"), "v": n("1"), "tags": &types.AttributeValueMemberSS{Value: []string{"x", "y"}}})
	key := map[string]types.AttributeValue{"id": str("a")}
	names := map[string]string{"#v": "v", "#t": "tags", "#c": "c"}
	upd := func(cond, expr string, vals map[string]types.AttributeValue) error {
		_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("T"), Key: key, ConditionExpression: aws.String(cond),
			UpdateExpression: aws.String(expr), ExpressionAttributeNames: names, ExpressionAttributeValues: vals,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
		return err
	}
	var ccf *types.ConditionalCheckFailedException
	if err := upd("#v = :0 AND NOT attribute_exists(#c)", "SET #v = #v + :1", map[string]types.AttributeValue{":0": n("2"), ":1": n("1")}); !errors.As(err, &ccf) || !av.Equal(ccf.Item["v"], n("1")) {
		t.Fatalf("a failed condition: %v, want ConditionalCheckFailed with the old item", err)
	}
	err := upd("#v = :0 OR attribute_exists(#c)", "SET #v = #v + :1, #c = if_not_exists(#c, :0) ADD #t :s",
		map[string]types.AttributeValue{":0": n("1"), ":1": n("1.5"), ":s": &types.AttributeValueMemberSS{Value: []string{"z"}}})
	if err == nil {
		err = upd("#v = :0", "DELETE #t :d", map[string]types.AttributeValue{":0": n("2.5"), ":d": &types.AttributeValueMemberSS{Value: []string{"x"}}})
	}
	got := db.item("T", key)
	if err != nil || !av.Equal(got["v"], n("2.5")) || !av.Equal(got["c"], n("1")) || !av.Equal(got["tags"], &types.AttributeValueMemberSS{Value: []string{"y", "z"}}) {
		t.Fatalf("update: %v, item v %s c %s tags %s", err, avString(got["v"]), avString(got["c"]), avString(got["tags"]))
	}
	_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String("T"), Item: map[string]types.AttributeValue{"id": str("b")}}},
		{ConditionCheck: &types.ConditionCheck{TableName: aws.String("T"), Key: key, ConditionExpression: aws.String("size(#t) > :0"),
			ExpressionAttributeNames: map[string]string{"#t": "tags"}, ExpressionAttributeValues: map[string]types.AttributeValue{":0": n("2")}}},
	}})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != 2 || aws.ToString(tce.CancellationReasons[1].Code) != "ConditionalCheckFailed" ||
		db.item("T", map[string]types.AttributeValue{"id": str("b")}) != nil {
		t.Fatalf("a transaction with a failed check: %v, want it cancelled and nothing applied", err)
	}
}

// The fake's lose hook serves the call and then answers with an error: the
// write is applied, its answer lost — what the settling tests need.
func TestFakeDBLoseAppliesTheWrite(t *testing.T) {
	db := (&fakeDB{}).table("T", "id", "")
	lost := errors.New("connection reset after the write")
	db.lose("PutItem", 1, lost)
	_, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String("T"), Item: map[string]types.AttributeValue{"id": str("a")}})
	if !errors.Is(err, lost) {
		t.Fatalf("PutItem = %v, want the lost answer", err)
	}
	if db.item("T", map[string]types.AttributeValue{"id": str("a")}) == nil {
		t.Fatal("the write whose answer was lost was not applied")
	}
}

// The fake answers Queries as DynamoDB Local does — the same items, counts
// and LastEvaluatedKey, or a ValidationException for both: Limit reached
// at the last item still returns its key; a start key that is not stored
// resumes after it in either order; the filter runs after Limit; Select
// COUNT counts; a local and a global index are read in their own order,
// their positions carrying the table's key and theirs; and what DynamoDB
// refuses is refused (key condition off the key, filter on the key read,
// start key outside the key condition or of the wrong size, ConsistentRead
// on a global index, Limit 0).
func TestFakeDBQueriesAsDynamoDBLocal(t *testing.T) {
	local := dynamotest.Client(t)
	def := func(name string, typ types.ScalarAttributeType) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: typ}
	}
	ks := func(hash, rng string) []types.KeySchemaElement {
		return []types.KeySchemaElement{{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash}, {AttributeName: aws.String(rng), KeyType: types.KeyTypeRange}}
	}
	all := &types.Projection{ProjectionType: types.ProjectionTypeAll}
	name := dynamotest.CreateTable(t, local, &dynamodb.CreateTableInput{
		TableName:              aws.String("fakeq"),
		AttributeDefinitions:   []types.AttributeDefinition{def("p", "S"), def("n", "N"), def("owner", "S"), def("at", "N")},
		KeySchema:              ks("p", "n"),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{IndexName: aws.String("byOwner"), KeySchema: ks("owner", "at"), Projection: all}},
		LocalSecondaryIndexes:  []types.LocalSecondaryIndex{{IndexName: aws.String("byAt"), KeySchema: ks("p", "at"), Projection: all}},
	})
	fake := (&fakeDB{}).table(name, "p", "n").index(name, "byOwner", "owner", "at", true).index(name, "byAt", "p", "at", false)
	ctx := t.Context()
	for i, at := range []string{"9", "", "7", "6", "8"} { // item 2 is in no index
		it := map[string]types.AttributeValue{"p": str("a"), "n": n(strconv.Itoa(i + 1)), "body": str("item " + strconv.Itoa(i+1))}
		if at != "" {
			it["owner"], it["at"] = str("ann"), n(at)
		}
		for _, c := range []Client{local, fake} {
			if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: it}); err != nil {
				t.Fatal(err)
			}
		}
	}
	key := func(kv ...string) map[string]types.AttributeValue {
		m := map[string]types.AttributeValue{}
		for i := 0; i < len(kv); i += 2 {
			if kv[i] == "p" || kv[i] == "owner" {
				m[kv[i]] = str(kv[i+1])
			} else {
				m[kv[i]] = n(kv[i+1])
			}
		}
		return m
	}
	names := map[string]string{"#p": "p", "#n": "n", "#o": "owner", "#at": "at", "#b": "body"}
	vals := map[string]types.AttributeValue{":a": str("a"), ":ann": str("ann"), ":3": n("3"), ":8": n("8"), ":b": str("item 3")}
	cases := []struct {
		name string
		in   dynamodb.QueryInput
	}{
		{"limit at the end", dynamodb.QueryInput{Limit: aws.Int32(5)}},
		{"limit descending", dynamodb.QueryInput{Limit: aws.Int32(2), ScanIndexForward: aws.Bool(false)}},
		{"start not stored", dynamodb.QueryInput{ExclusiveStartKey: key("p", "a", "n", "2.5")}},
		{"start not stored descending", dynamodb.QueryInput{ExclusiveStartKey: key("p", "a", "n", "2.5"), ScanIndexForward: aws.Bool(false)}},
		{"sort key range", dynamodb.QueryInput{KeyConditionExpression: aws.String("#p = :a AND #n > :3")}},
		{"filter after limit", dynamodb.QueryInput{Limit: aws.Int32(2), FilterExpression: aws.String("#b = :b")}},
		{"count", dynamodb.QueryInput{Select: types.SelectCount, FilterExpression: aws.String("#b = :b")}},
		{"local index", dynamodb.QueryInput{IndexName: aws.String("byAt"), ConsistentRead: aws.Bool(true), Limit: aws.Int32(2)}},
		{"local index from a start", dynamodb.QueryInput{IndexName: aws.String("byAt"), ExclusiveStartKey: key("p", "a", "n", "4", "at", "6")}},
		{"local index filter on the table's sort key", dynamodb.QueryInput{IndexName: aws.String("byAt"), FilterExpression: aws.String("#n < :3")}},
		{"global index", dynamodb.QueryInput{IndexName: aws.String("byOwner"), KeyConditionExpression: aws.String("#o = :ann"), Limit: aws.Int32(3)}},
		{"global index from a start", dynamodb.QueryInput{IndexName: aws.String("byOwner"), KeyConditionExpression: aws.String("#o = :ann AND #at < :8"),
			ExclusiveStartKey: key("p", "a", "n", "4", "owner", "ann", "at", "6"), ScanIndexForward: aws.Bool(false)}},
		{"refused: global index consistent", dynamodb.QueryInput{IndexName: aws.String("byOwner"), KeyConditionExpression: aws.String("#o = :ann"), ConsistentRead: aws.Bool(true)}},
		{"refused: global index start of the table's key", dynamodb.QueryInput{IndexName: aws.String("byOwner"), KeyConditionExpression: aws.String("#o = :ann"),
			ExclusiveStartKey: key("p", "a", "n", "4")}},
		{"refused: global index filter on its key", dynamodb.QueryInput{IndexName: aws.String("byOwner"), KeyConditionExpression: aws.String("#o = :ann"), FilterExpression: aws.String("#at < :8")}},
		{"refused: filter on the sort key", dynamodb.QueryInput{FilterExpression: aws.String("#n < :3")}},
		{"refused: key condition off the key", dynamodb.QueryInput{KeyConditionExpression: aws.String("#p = :a AND #b = :b")}},
		{"refused: start in another partition", dynamodb.QueryInput{ExclusiveStartKey: key("p", "b", "n", "1")}},
		{"refused: start outside the range", dynamodb.QueryInput{KeyConditionExpression: aws.String("#p = :a AND #n > :3"), ExclusiveStartKey: key("p", "a", "n", "1")}},
		{"refused: limit 0", dynamodb.QueryInput{Limit: aws.Int32(0)}},
	}
	answer := func(c Client, in dynamodb.QueryInput) string {
		in.TableName = aws.String(name)
		if in.KeyConditionExpression == nil {
			in.KeyConditionExpression = aws.String("#p = :a")
		}
		used := condexpr.UsedNames(aws.ToString(in.KeyConditionExpression), aws.ToString(in.FilterExpression))
		in.ExpressionAttributeNames = map[string]string{}
		for ph := range used {
			in.ExpressionAttributeNames[ph] = names[ph]
		}
		in.ExpressionAttributeValues = map[string]types.AttributeValue{}
		for ph, v := range vals {
			if strings.Contains(aws.ToString(in.KeyConditionExpression)+" "+aws.ToString(in.FilterExpression)+" ", ph+" ") {
				in.ExpressionAttributeValues[ph] = v
			}
		}
		out, err := c.Query(ctx, &in)
		var api smithy.APIError
		if errors.As(err, &api) {
			return api.ErrorCode()
		}
		if err != nil {
			return err.Error()
		}
		var ns []string
		for _, it := range out.Items {
			ns = append(ns, it["n"].(*types.AttributeValueMemberN).Value)
		}
		return fmt.Sprintf("items %v count %d scanned %d last %s", ns, out.Count, out.ScannedCount, formatKey(out.LastEvaluatedKey))
	}
	for _, tc := range cases {
		want, got := answer(local, tc.in), answer(fake, tc.in)
		if got != want {
			t.Errorf("%s: the fake answers %s, DynamoDB Local %s", tc.name, got, want)
		}
		if refused := strings.HasPrefix(tc.name, "refused"); refused != (want == "ValidationException") {
			t.Errorf("%s: DynamoDB Local answers %s", tc.name, want)
		}
	}
}

// The fake answers a Query or Scan of a global index with what the index
// projects, as the service documentation says (API Projection): KEYS_ONLY
// the table's key and every attribute of the index's key, INCLUDE those and
// its NonKeyAttributes, ALL every attribute; for a key of one attribute per
// role and one of several. A filter on an attribute the index does not
// project, and Select ALL_ATTRIBUTES of an index projecting less, are
// refused, as DynamoDB Local refuses them. (Local indexes, which fetch
// from the table, are checked against DynamoDB Local in
// TestFakeAnswersAsDynamoDBLocal.)
func TestFakeIndexProjections(t *testing.T) {
	ctx := t.Context()
	attrs := func(items []map[string]types.AttributeValue) string {
		var out []string
		for _, it := range items {
			out = append(out, strings.Join(slices.Sorted(maps.Keys(it)), " "))
		}
		return strings.Join(out, "|")
	}
	keys := map[string][]types.KeySchemaElement{
		"one": {{AttributeName: aws.String("a"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("c"), KeyType: types.KeyTypeRange}},
		"multi": {{AttributeName: aws.String("a"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("b"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("c"), KeyType: types.KeyTypeRange}, {AttributeName: aws.String("d"), KeyType: types.KeyTypeRange}},
	}
	for _, tc := range []struct {
		index string
		proj  types.Projection
		want  string
	}{
		{"one", types.Projection{ProjectionType: types.ProjectionTypeAll}, "a b c d pk x y"},
		{"one", types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}, "a c pk"},
		{"one", types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"x"}}, "a c pk x"},
		{"multi", types.Projection{ProjectionType: types.ProjectionTypeAll}, "a b c d pk x y"},
		{"multi", types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}, "a b c d pk"},
		{"multi", types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"x"}}, "a b c d pk x"},
	} {
		name := tc.index + " " + string(tc.proj.ProjectionType)
		db := &fakeDB{}
		if _, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("P"),
			KeySchema:              []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{IndexName: &tc.index, KeySchema: keys[tc.index], Projection: &tc.proj}}}); err != nil {
			t.Fatal(err)
		}
		db.put("P", map[string]types.AttributeValue{"pk": str("1"), "a": str("a"), "b": str("b"), "c": str("c"), "d": str("d"), "x": str("x"), "y": str("y")})
		kc, names := "#a = :a", map[string]string{"#a": "a", "#y": "y"}
		if tc.index == "multi" {
			kc, names["#b"] = "#a = :a AND #b = :b", "b"
		}
		q := func(sel types.Select, filter *string) (*dynamodb.QueryOutput, error) {
			return db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("P"), IndexName: &tc.index, KeyConditionExpression: &kc,
				FilterExpression: filter, Select: sel, ExpressionAttributeNames: names,
				ExpressionAttributeValues: map[string]types.AttributeValue{":a": str("a"), ":b": str("b")}})
		}
		out, err := q("", nil)
		if err != nil || attrs(out.Items) != tc.want {
			t.Errorf("%s: query answers %q, %v; want %q", name, attrs(out.Items), err, tc.want)
		}
		sc, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("P"), IndexName: &tc.index})
		if err != nil || attrs(sc.Items) != tc.want {
			t.Errorf("%s: scan answers %q, %v; want %q", name, attrs(sc.Items), err, tc.want)
		}
		all := tc.proj.ProjectionType == types.ProjectionTypeAll
		if out, err := q("", aws.String("attribute_exists(#y)")); (err == nil) != all || (all && len(out.Items) != 1) {
			t.Errorf("%s: a filter on y: %v; want refused unless the index projects it", name, err)
		}
		if _, err := q(types.SelectAllAttributes, nil); (err == nil) != all {
			t.Errorf("%s: Select ALL_ATTRIBUTES: %v; want refused unless the index projects ALL", name, err)
		}
	}
}
