package integration

import (
	"errors"
	"reflect"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/ident"
)

// TxShelf is a second versioned type, with a composite key, so that
// transactions span two tables and two key shapes.
type TxShelf struct {
	Room    string `dynamo:"room,hash"`
	Number  int    `dynamo:"n,range"`
	Label   string `dynamo:"label"`
	Version int64  `dynamo:"v,version"`
}

// txTables creates a books table and a shelves table whose Tables send
// through c, with one Mapper.
func txTables(t *testing.T, c dynamo.Client) (*dynamo.Mapper, *dynamo.Table[Book], *dynamo.Table[TxShelf]) {
	t.Helper()
	admin := dynamotest.Client(t)
	bn := dynamotest.KeyTable(t, admin, "books", "ISBN", types.ScalarAttributeTypeS, "", "")
	sn := dynamotest.KeyTable(t, admin, "shelves", "room", types.ScalarAttributeTypeS, "n", types.ScalarAttributeTypeN)
	m := dynamo.NewMapper(c)
	books, err := dynamo.NewTable[Book](m, bn)
	if err != nil {
		t.Fatal(err)
	}
	shelves, err := dynamo.NewTable[TxShelf](m, sn)
	if err != nil {
		t.Fatal(err)
	}
	return m, books, shelves
}

// txSnapshot reads every item of both tables (consistently), for checking
// that a cancelled transaction changed nothing.
func txSnapshot(t *testing.T, tables ...string) map[string][]map[string]types.AttributeValue {
	t.Helper()
	snap := map[string][]map[string]types.AttributeValue{}
	for _, name := range tables {
		out, err := dynamotest.Client(t).Scan(ctx(t), &dynamodb.ScanInput{TableName: aws.String(name), ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		snap[name] = out.Items
	}
	return snap
}

func mustSave[T any](t *testing.T, tb *dynamo.Table[T], item T) T {
	t.Helper()
	saved, err := tb.Save(ctx(t), item)
	if err != nil {
		t.Fatal(err)
	}
	return saved
}

// The case: a transaction whose third member holds a stale version
// changes nothing, and its error names that member (index, table, key, held
// and found versions) and carries the member's stored item.
func TestTxStaleThirdMemberChangesNothing(t *testing.T) {
	m, books, shelves := txTables(t, dynamotest.Client(t))
	c := ctx(t)
	b1 := mustSave(t, books, Book{ISBN: "1", Title: "one"})
	s1 := mustSave(t, shelves, TxShelf{Room: "a", Number: 1, Label: "first"})
	stale := mustSave(t, books, Book{ISBN: "3", Title: "three"})
	fresh := stale
	fresh.Title = "three, edited elsewhere"
	mustSave(t, books, fresh) // now at version 2; stale holds 1
	b4 := mustSave(t, books, Book{ISBN: "4", Title: "four"})
	before := txSnapshot(t, books.Name(), shelves.Name())

	b1.Title, s1.Label, stale.Title = "one, edited", "first, edited", "three, stale edit"
	save1 := books.TxSave(b1)
	ops := []dynamo.TxOp{save1, shelves.TxSave(s1), books.TxSave(stale), books.TxCheck(b4)}
	err := m.WriteTx(c, ops)
	if !errors.Is(err, dynamo.ErrVersionConflict) || errors.Is(err, dynamo.ErrConditionFailed) {
		t.Fatalf("WriteTx = %v, want a version conflict", err)
	}
	mustContain(t, err, "member 2 (TxSave)", strconv.Quote(books.Name()), `key {ISBN: "3"}`, "held version 1, found 2", "nothing written")
	var te *dynamo.TxError
	if !errors.As(err, &te) || len(te.Failures) != 1 {
		t.Fatalf("err = %#v, want a *TxError with one failure", err)
	}
	f := te.Failure(2)
	if f == nil || f.Table != books.Name() || f.Code != "ConditionalCheckFailed" || f.Key["ISBN"].(*types.AttributeValueMemberS).Value != "3" {
		t.Fatalf("Failure(2) = %+v", f)
	}
	cur, err := books.Current(f.Err)
	if err != nil || cur.Version != 2 || cur.Title != "three, edited elsewhere" {
		t.Errorf("Current = %+v, %v; want the stored version 2", cur, err)
	}
	if after := txSnapshot(t, books.Name(), shelves.Name()); !reflect.DeepEqual(before, after) {
		t.Errorf("a cancelled transaction changed items:\n before %v\n after  %v", before, after)
	}
	if got := save1.Saved(); got.Version != 0 {
		t.Errorf("Saved after a cancelled transaction = %+v", got)
	}
}

// Saves (update, put, create), a delete and a check across two tables, all
// applied, each with the version rules of the single-item calls.
func TestTxWritesAcrossTables(t *testing.T) {
	m, books, shelves := txTables(t, dynamotest.Client(t))
	c := ctx(t)
	b1 := mustSave(t, books, Book{ISBN: "1", Title: "one", Authors: []string{"x"}})
	b2 := mustSave(t, books, Book{ISBN: "2", Title: "two"})
	s1 := mustSave(t, shelves, TxShelf{Room: "a", Number: 1, Label: "first"})
	gone := mustSave(t, shelves, TxShelf{Room: "a", Number: 2})

	b1.Title = "one, edited"
	b1.Authors = nil // SaveUpdate removes it, as Save does
	b2.Title = "two, put"
	upd, put := books.TxSave(b1), books.TxSave(b2, dynamo.WithSaveBehavior(dynamo.SavePut))
	created := shelves.TxSave(TxShelf{Room: "b", Number: 7, Label: "new"})
	ops := []dynamo.TxOp{upd, put, created, shelves.TxDelete(gone), shelves.TxCheck(s1)}
	if err := m.WriteTx(c, ops); err != nil {
		t.Fatal(err)
	}
	if upd.Saved().Version != 2 || put.Saved().Version != 2 || created.Saved().Version != 1 || b1.Version != 1 {
		t.Errorf("Saved = %+v %+v %+v", upd.Saved(), put.Saved(), created.Saved())
	}
	got, err := books.Load(c, Book{ISBN: "1"}, dynamo.ConsistentRead())
	if err != nil || !reflect.DeepEqual(got, upd.Saved()) {
		t.Errorf("stored %+v (%v), Saved %+v", got, err, upd.Saved())
	}
	if raw(t, books.Name(), "1")[dynamo.DefaultWriteTokenAttribute] == nil {
		t.Error("a transactional save stored no write token")
	}
	if got, err := shelves.Load(c, TxShelf{Room: "b", Number: 7}, dynamo.ConsistentRead()); err != nil || got != created.Saved() {
		t.Errorf("created %+v, %v", got, err)
	}
	if _, err := shelves.Load(c, gone, dynamo.ConsistentRead()); !errors.Is(err, dynamo.ErrNotFound) {
		t.Errorf("deleted item: %v", err)
	}
	// The saved copies are the new current versions: a second round works,
	// and the old copies conflict.
	if err := m.WriteTx(c, []dynamo.TxOp{books.TxSave(upd.Saved()), books.TxDelete(put.Saved())}); err != nil {
		t.Fatal(err)
	}
	err = m.WriteTx(c, []dynamo.TxOp{books.TxSave(b1)})
	mustContain(t, err, "held version 1, found 3")
	// Deleting an unsaved item that does not exist succeeds, as Delete does;
	// deleting with a version an item that is gone is a conflict.
	if err := m.WriteTx(c, []dynamo.TxOp{books.TxDelete(Book{ISBN: "none"})}); err != nil {
		t.Errorf("delete of a missing unsaved item: %v", err)
	}
	err = m.WriteTx(c, []dynamo.TxOp{books.TxDelete(put.Saved())})
	if !errors.Is(err, dynamo.ErrVersionConflict) {
		t.Errorf("delete of a gone item: %v", err)
	}
	mustContain(t, err, "held version 2, item does not exist")
}

// The case: a transaction sent twice with the same request token is
// applied once — with the same ops, or with ops built again from the same
// values — even when the item has been written since.
func TestTxSameRequestTokenAppliesOnce(t *testing.T) {
	m, books, shelves := txTables(t, dynamotest.Client(t))
	c := ctx(t)
	b := mustSave(t, books, Book{ISBN: "1", Title: "one"})
	s := mustSave(t, shelves, TxShelf{Room: "a", Number: 1})
	build := func() []dynamo.TxOp {
		b2, s2 := b, s
		b2.Title, s2.Label = "one, edited", "labelled"
		return []dynamo.TxOp{books.TxSave(b2), shelves.TxSave(s2)}
	}
	ops := build()
	token := "order-42-" + ident.RandomHex(8) // unique: a server may outlive a test run, and remembers tokens for 10 minutes
	for i := range 2 {
		if err := m.WriteTx(c, ops, dynamo.WithRequestToken(token)); err != nil {
			t.Fatalf("send %d: %v", i+1, err)
		}
	}
	if v := storedVersion(t, books.Name(), "1"); v != "2" {
		t.Fatalf("book at version %s after sending one transaction twice; want 2", v)
	}
	// Someone else writes; a resend built again from the same values still
	// succeeds without writing.
	cur, err := books.Load(c, b, dynamo.ConsistentRead())
	if err != nil {
		t.Fatal(err)
	}
	cur.Title = "third party"
	mustSave(t, books, cur)
	if err := m.WriteTx(c, build(), dynamo.WithRequestToken(token)); err != nil {
		t.Fatalf("resend with rebuilt ops: %v", err)
	}
	if got, _ := books.Load(c, b, dynamo.ConsistentRead()); got.Version != 3 || got.Title != "third party" {
		t.Errorf("book = %+v; the resend must not write", got)
	}
	if got, _ := shelves.Load(c, s, dynamo.ConsistentRead()); got.Version != 2 || got.Label != "labelled" {
		t.Errorf("shelf = %+v; want written once", got)
	}
	// The same token for other values is refused by DynamoDB; without a
	// token the same ops are a new transaction, and conflict.
	other := build()[:1]
	err = m.WriteTx(c, other, dynamo.WithRequestToken(token))
	mustContain(t, err, "IdempotentParameterMismatch", "use a new token for each transaction")
	if err := m.WriteTx(c, ops); !errors.Is(err, dynamo.ErrVersionConflict) {
		t.Errorf("the same ops without a token: %v, want a version conflict", err)
	}
}

// DynamoDB applies the transaction but the response is lost; the SDK
// resends it with the same request token, and WriteTx succeeds with every
// version incremented exactly once.
func TestTxLostResponse(t *testing.T) {
	client, drop := dropClient(t, "TransactWriteItems")
	m, books, shelves := txTables(t, client)
	b := mustSave(t, books, Book{ISBN: "1", Title: "one"})
	s := mustSave(t, shelves, TxShelf{Room: "a", Number: 1})
	b.Title = "one, edited"
	save := books.TxSave(b)
	drop.Arm(1)
	err := m.WriteTx(ctx(t), []dynamo.TxOp{save, shelves.TxSave(s)})
	if drop.Dropped() != 1 || drop.Sent() != 2 {
		t.Fatalf("transport dropped %d responses over %d requests; the test needs exactly 1 drop and a retry", drop.Dropped(), drop.Sent())
	}
	if err != nil {
		t.Fatalf("WriteTx after a lost response: %v, want success", err)
	}
	if bv, sv := storedVersion(t, books.Name(), "1"), shelfVersion(t, shelves, s); bv != "2" || sv != 2 || save.Saved().Version != 2 {
		t.Errorf("versions book %s, shelf %d, saved %d; want 2 written once", bv, sv, save.Saved().Version)
	}
}

func shelfVersion(t *testing.T, shelves *dynamo.Table[TxShelf], s TxShelf) int64 {
	t.Helper()
	got, err := shelves.Load(ctx(t), s, dynamo.ConsistentRead())
	if err != nil {
		t.Fatal(err)
	}
	return got.Version
}

// Two operations on one item, or more than 100, are refused before anything
// is sent.
func TestTxRefusedBeforeSending(t *testing.T) {
	client, drop := dropClient(t, "TransactWriteItems")
	m, books, shelves := txTables(t, client)
	c := ctx(t)
	dup := []dynamo.TxOp{books.TxSave(Book{ISBN: "1"}), shelves.TxSave(TxShelf{Room: "1", Number: 1}), books.TxDelete(Book{ISBN: "1"})}
	err := m.WriteTx(c, dup)
	if !errors.Is(err, dynamo.ErrInvalidInput) {
		t.Errorf("duplicate: %v", err)
	}
	mustContain(t, err, "members 0 and 2", `key {ISBN: "1"}`)
	many := make([]dynamo.TxOp, 101)
	for i := range many {
		many[i] = books.TxSave(Book{ISBN: strconv.Itoa(i)})
	}
	err = m.WriteTx(c, many)
	if !errors.Is(err, dynamo.ErrInvalidInput) {
		t.Errorf("101 members: %v", err)
	}
	mustContain(t, err, "101 members", "at most 100")
	if n := drop.Sent(); n != 0 {
		t.Errorf("%d TransactWriteItems requests sent for refused transactions", n)
	}
	// 100 members is the limit, and goes through.
	if err := m.WriteTx(c, many[:100]); err != nil {
		t.Fatal(err)
	}
	if v := storedVersion(t, books.Name(), "99"); v != "1" {
		t.Errorf("member 99 stored version %s", v)
	}
}

// An If condition that fails while the version matches is
// ErrConditionFailed, and nothing is written.
func TestTxIfConditionFails(t *testing.T) {
	m, books, shelves := txTables(t, dynamotest.Client(t))
	b := mustSave(t, books, Book{ISBN: "1", Title: "one"})
	s := mustSave(t, shelves, TxShelf{Room: "a", Number: 1})
	before := txSnapshot(t, books.Name(), shelves.Name())
	b.Title = "edited"
	err := m.WriteTx(ctx(t), []dynamo.TxOp{
		shelves.TxSave(s),
		books.TxSave(b, dynamo.If(expression.Name("title").Equal(expression.Value("something else")))),
	})
	if !errors.Is(err, dynamo.ErrConditionFailed) || errors.Is(err, dynamo.ErrVersionConflict) {
		t.Fatalf("err = %v, want ErrConditionFailed only", err)
	}
	mustContain(t, err, "member 1 (TxSave)", "condition failed", "held version 1, found 1")
	if after := txSnapshot(t, books.Name(), shelves.Name()); !reflect.DeepEqual(before, after) {
		t.Error("a cancelled transaction changed items")
	}
}

// A TxCheck of a stale version fails the transaction; of the current
// version it lets it through.
func TestTxCheckStaleVersion(t *testing.T) {
	m, books, shelves := txTables(t, dynamotest.Client(t))
	c := ctx(t)
	stale := mustSave(t, books, Book{ISBN: "1", Title: "one"})
	cur := mustSave(t, books, stale)
	s := mustSave(t, shelves, TxShelf{Room: "a", Number: 1})
	err := m.WriteTx(c, []dynamo.TxOp{shelves.TxSave(s), books.TxCheck(stale)})
	if !errors.Is(err, dynamo.ErrVersionConflict) {
		t.Fatalf("err = %v, want a version conflict", err)
	}
	mustContain(t, err, "member 1 (TxCheck)", "held version 1, found 2")
	if v := shelfVersion(t, shelves, s); v != 1 {
		t.Errorf("shelf written (version %d) by a cancelled transaction", v)
	}
	if err := m.WriteTx(c, []dynamo.TxOp{shelves.TxSave(s), books.TxCheck(cur)}); err != nil {
		t.Fatal(err)
	}
	if v := shelfVersion(t, shelves, s); v != 2 {
		t.Errorf("shelf at version %d, want 2", v)
	}
	if v := storedVersion(t, books.Name(), "1"); v != "2" {
		t.Errorf("a check wrote the book: version %s", v)
	}
}

// A transactional read of three items across two tables, one of them
// missing.
func TestReadTx(t *testing.T) {
	m, books, shelves := txTables(t, dynamotest.Client(t))
	b := mustSave(t, books, Book{ISBN: "1", Title: "one", Authors: []string{"x", "y"}})
	s := mustSave(t, shelves, TxShelf{Room: "a", Number: 1, Label: "first"})
	gb, gm, gs := books.TxGet(Book{ISBN: "1"}), books.TxGet(Book{ISBN: "missing"}), shelves.TxGet(TxShelf{Room: "a", Number: 1})
	if err := m.ReadTx(ctx(t), []dynamo.TxGetOp{gb, gm, gs}); err != nil {
		t.Fatal(err)
	}
	if got, ok := gb.Item(); !ok || !reflect.DeepEqual(got, b) {
		t.Errorf("book = %+v, %v; want %+v", got, ok, b)
	}
	if got, ok := gm.Item(); ok || !reflect.DeepEqual(got, Book{}) {
		t.Errorf("missing = %+v, %v", got, ok)
	}
	if got, ok := gs.Item(); !ok || got != s {
		t.Errorf("shelf = %+v, %v; want %+v", got, ok, s)
	}
	err := m.ReadTx(ctx(t), []dynamo.TxGetOp{gb, books.TxGet(Book{ISBN: "1"})})
	if !errors.Is(err, dynamo.ErrInvalidInput) {
		t.Errorf("duplicate read: %v", err)
	}
}
