package dynamo

// Attacks on issue 43's features (multi-attribute index keys, MRSC and
// throttling) by an outsider: each test pins a behaviour a user relies on.

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// An Update whose function, called again after a replicated write
// conflict, returns ErrNoChange succeeds with the item read, sending no
// second write.
func TestAttackUpdateNoChangeAfterReplicatedConflict(t *testing.T) {
	s := &scriptedTransport{get: heldItem, steps: []step{rwc}, gets: []getStep{heldStep, heldStep}}
	calls := 0
	saved, err := scriptedTable(t, s).Update(context.Background(), regressCounter{ID: "k"}, func(c regressCounter) (regressCounter, error) {
		calls++
		if calls == 1 {
			c.N++
			return c, nil
		}
		return c, ErrNoChange
	})
	if err != nil || calls != 2 || saved.Version != 5 || saved.N != 5 {
		t.Fatalf("Update = %+v, %v after %d calls; want the item read (version 5), no error, 2 calls", saved, err, calls)
	}
	if s.updates != 1 {
		t.Errorf("%d writes; want 1 (ErrNoChange sends nothing)", s.updates)
	}
}

// A context cancelled while the replicated conflict comes back stops
// Update: no second call of the function, no second write, and the error
// says the context ended, not that the outcome is unknown.
func TestAttackUpdateCancelledOnReplicatedConflictStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelling := func(tok string) (*http.Response, error) { cancel(); return rwc(tok) }
	s := &scriptedTransport{get: heldItem, steps: []step{cancelling, ok}, gets: []getStep{heldStep, heldStep}}
	calls := 0
	_, err := scriptedTable(t, s).Update(ctx, regressCounter{ID: "k"}, func(c regressCounter) (regressCounter, error) {
		calls++
		c.N++
		return c, nil
	})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnknownOutcome) || calls != 1 || s.updates != 1 {
		t.Fatalf("err = %v after %d calls, %d writes; want context.Canceled, not unknown, 1 call, 1 write", err, calls, s.updates)
	}
}

// Add with an IdempotencyKey meets a replicated conflict as Save does:
// returned, not resent, nothing applied.
func TestAttackAddIdempotentReturnsReplicatedConflict(t *testing.T) {
	s := &scriptedTransport{get: heldItem, steps: []step{rwc, ok}}
	_, err := scriptedTable(t, s).Add(context.Background(), regressCounter{ID: "k"}, Increment("n", 1), IdempotencyKey("op-1"))
	if !errors.Is(err, ErrReplicatedConflict) || errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("Add: %v; want ErrReplicatedConflict, not an unknown outcome", err)
	}
	if s.updates != 1 {
		t.Errorf("%d writes; want 1 (not resent)", s.updates)
	}
}

// Add with an IdempotencyKey whose first answer was lost and whose resend
// met a replicated conflict cannot tell whether it was applied: the error
// is an unknown outcome, never "not applied".
func TestAttackAddIdempotentLostThenReplicatedConflictIsUnknown(t *testing.T) {
	s := &scriptedTransport{get: heldItem, steps: []step{reset, rwc, rwc, rwc}}
	_, err := scriptedTable(t, s).Add(context.Background(), regressCounter{ID: "k"}, Increment("n", 1), IdempotencyKey("op-1"))
	if err == nil || !errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("Add: %v; want ErrUnknownOutcome (the lost attempt may have been applied)", err)
	}
	if strings.Contains(err.Error(), "not applied: reload") && !strings.Contains(err.Error(), "may have been applied") {
		t.Errorf("Add: %v; says not applied", err)
	}
}

// Throttling reaches the caller as a *ThrottlingError from batches,
// scans, writes and transactions too, through TxError for the latter.
func TestAttackThrottlingErrorFromBatchesScansAndTransactions(t *testing.T) {
	reasons := []types.ThrottlingReason{{Reason: aws.String("TableWriteKeyRangeThroughputExceeded"), Resource: aws.String("arn:aws:dynamodb:eu-west-1:1:table/Books")}}
	db := &fakeDB{}
	db.table("Books", "ISBN", "")
	db.fail("", 0, &types.ThrottlingException{Message: aws.String("slow down"), ThrottlingReasons: reasons})
	books := newBooks(t, db)
	ctx := context.Background()
	m := books.Mapper()
	calls := map[string]func() error{
		"BatchSave":   func() error { return books.BatchSave(ctx, []Book{{ISBN: "1"}}, WithSaveBehavior(SaveClobber)) },
		"BatchDelete": func() error { return books.BatchDelete(ctx, []Book{{ISBN: "1"}}, WithSaveBehavior(SaveClobber)) },
		"Delete":      func() error { return books.Delete(ctx, Book{ISBN: "1"}) },
		"Update": func() error {
			_, err := books.Update(ctx, Book{ISBN: "1"}, func(b Book) (Book, error) { return b, nil })
			return err
		},
		"Scan": func() error {
			for _, err := range books.Scan(ctx) {
				return err
			}
			return nil
		},
		"WriteTx": func() error { return m.WriteTx(ctx, []TxOp{books.TxSave(Book{ISBN: "1"})}) },
		"ReadTx":  func() error { return m.ReadTx(ctx, []TxGetOp{books.TxGet(Book{ISBN: "1"})}) },
		"Transact": func() error {
			return m.Transact(ctx, func(tx *Tx) error {
				_, err := books.In(tx).Save(Book{ISBN: "1"})
				return err
			})
		},
	}
	for name, call := range calls {
		var te *ThrottlingError
		if err := call(); !errors.As(err, &te) || len(te.Reasons) != 1 {
			t.Errorf("%s: %v; want a *ThrottlingError with the reason", name, err)
		}
	}
}

// A ThrottlingError a user builds (in a fake of their own) prints without
// panicking when it has no SDK error.
func TestAttackThrottlingErrorWithoutErrPrints(t *testing.T) {
	e := &ThrottlingError{Table: "Books", Reasons: []ThrottlingReason{{Reason: "TableReadProvisionedThroughputExceeded"}}}
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Error() panicked: %v", r)
		}
	}()
	if msg := e.Error(); !strings.Contains(msg, "Books") || !strings.Contains(msg, "provisioned capacity") {
		t.Errorf("Error() = %q", msg)
	}
}

// WithStrongGlobalTables with a name given twice, or "" among names,
// refuses transactions on the named table and nothing else.
func TestAttackStrongGlobalTablesRepeatedAndEmptyNames(t *testing.T) {
	db := &fakeDB{}
	db.table("Books", "ISBN", "")
	db.table("Other", "ISBN", "")
	books := newBooks(t, db, WithStrongGlobalTables("", "Books", "Books"), WithStrongGlobalTables("Books", ""))
	other, err := NewTable[Book](books.Mapper(), "Other")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	err = books.Mapper().WriteTx(ctx, []TxOp{books.TxSave(Book{ISBN: "1"})})
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "MRSC") {
		t.Errorf("WriteTx on Books: %v; want refused", err)
	}
	if err := books.Mapper().WriteTx(ctx, []TxOp{other.TxSave(Book{ISBN: "1"})}); err != nil {
		t.Errorf("WriteTx on Other: %v; want served", err)
	}
	if db.count("TransactWriteItems") != 1 {
		t.Errorf("%d transactions sent; want 1", db.count("TransactWriteItems"))
	}
}

// Equal on every sort attribute is a valid key condition whichever order
// the conditions are written in; DynamoDB matches by attribute, not by
// the expression's order.
func TestAttackMultiAttrQueryEqualsWrittenInAnotherOrder(t *testing.T) {
	k, v := expression.Key, expression.Value
	_, tb := mkQueryDB(t)
	kc := k("id").Equal(v("o1")).And(k("status").Equal(v("open"))).And(k("region").Equal(v("eu"))).And(k("tenant").Equal(v("t1")))
	items, _, err := tb.QueryPage(t.Context(), kc, Index("ByTenantStatus"))
	if err != nil || mkIDs(items) != "o1" {
		t.Fatalf("items %q, %v; want o1", mkIDs(items), err)
	}
}

// A cursor whose index attribute carries another type than the key's is
// refused before sending, naming the attribute.
func TestAttackMultiAttrCursorWrongTypeRefused(t *testing.T) {
	db, tb := mkQueryDB(t)
	part := expression.Key("tenant").Equal(expression.Value("t1")).And(expression.Key("region").Equal(expression.Value("eu")))
	_, cur, err := tb.QueryPage(t.Context(), part, Index("ByTenantStatus"), Limit(1))
	if err != nil || cur == "" {
		t.Fatal(cur, err)
	}
	p, err := decodeCursor(cur)
	if err != nil {
		t.Fatal(err)
	}
	p.Key["status"] = &types.AttributeValueMemberN{Value: "1"}
	bad, err := encodeCursor(p)
	if err != nil {
		t.Fatal(err)
	}
	sent := len(db.queries())
	_, _, err = tb.QueryPage(t.Context(), part, Index("ByTenantStatus"), StartAfter(bad))
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "status") {
		t.Errorf("cursor with status a number: %v; want ErrInvalidInput naming status", err)
	}
	if len(db.queries()) != sent {
		t.Errorf("the query was sent")
	}
}

// A KEYS_ONLY multi-attribute index answers every attribute of its key
// and the table's, and none other.
func TestAttackMultiAttrKeysOnlyProjection(t *testing.T) {
	db := &fakeDB{}
	tb := newTestTable[mkOrder](t, db, "Orders")
	if err := tb.CreateTable(t.Context(), WithProjection("ByTenantStatus", types.Projection{ProjectionType: types.ProjectionTypeKeysOnly})); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Save(t.Context(), mkOrder{ID: "o1", Tenant: "t1", Region: "eu", Status: "open", Day: 3, Note: "n"}); err != nil {
		t.Fatal(err)
	}
	part := expression.Key("tenant").Equal(expression.Value("t1")).And(expression.Key("region").Equal(expression.Value("eu")))
	items, _, err := tb.QueryPage(t.Context(), part, Index("ByTenantStatus"))
	if err != nil || len(items) != 1 {
		t.Fatal(items, err)
	}
	if o := items[0]; o.ID != "o1" || o.Tenant != "t1" || o.Region != "eu" || o.Status != "open" || o.Note != "" || o.Day != 0 {
		t.Errorf("item %+v; want the four key attributes only", o)
	}
}

// DeleteTable throttled after the SDK's retries is a *ThrottlingError,
// as CreateTable is.
func TestAttackDeleteTableThrottledIsThrottlingError(t *testing.T) {
	db := &fakeDB{}
	db.table("Books", "ISBN", "")
	db.fail("DeleteTable", 0, &types.ThrottlingException{Message: aws.String("slow down"),
		ThrottlingReasons: []types.ThrottlingReason{{Reason: aws.String("TableWriteProvisionedThroughputExceeded")}}})
	var te *ThrottlingError
	if err := newBooks(t, db).DeleteTable(context.Background()); !errors.As(err, &te) || te.Table != "Books" {
		t.Errorf("DeleteTable: %v; want a *ThrottlingError on Books", err)
	}
}

// Update, WriteTx and Add check every attribute of a multi-attribute
// index key as Save does: an empty string is refused before sending.
func TestAttackMultiAttrKeyValuesCheckedOnEveryWrite(t *testing.T) {
	db, tb := mkQueryDB(t)
	ctx := t.Context()
	writes := func() int { return db.count("PutItem") + db.count("UpdateItem") + db.count("TransactWriteItems") }
	sent := writes()
	_, err := tb.Update(ctx, mkOrder{ID: "o1"}, func(o mkOrder) (mkOrder, error) { o.Status = ""; return o, nil })
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "status") {
		t.Errorf("Update: %v; want ErrInvalidInput naming status", err)
	}
	err = tb.Mapper().WriteTx(ctx, []TxOp{tb.TxSave(mkOrder{ID: "o9", Tenant: "t1", Region: "", Status: "open"})})
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "region") {
		t.Errorf("WriteTx: %v; want ErrInvalidInput naming region", err)
	}
	if got := writes(); got != sent {
		t.Errorf("%d writes sent for refused writes", got-sent)
	}
}

// A transaction DynamoDB cancelled because a member was throttled
// (cancellation reason ThrottlingError) is throttling too: errors.As finds
// a *ThrottlingError through the TxError, as for every other call.
func TestAttackTxCancelledByThrottlingIsThrottlingError(t *testing.T) {
	db := &fakeDB{}
	db.table("Books", "ISBN", "")
	db.fail("TransactWriteItems", 0, &types.TransactionCanceledException{Message: aws.String("Transaction cancelled"),
		CancellationReasons: []types.CancellationReason{{Code: aws.String("ThrottlingError"), Message: aws.String("Throughput exceeds the current capacity")}}})
	books := newBooks(t, db)
	err := books.Mapper().WriteTx(context.Background(), []TxOp{books.TxSave(Book{ISBN: "1"})})
	var txe *TxError
	if !errors.As(err, &txe) || txe.Failure(0) == nil || txe.Failure(0).Code != "ThrottlingError" {
		t.Fatalf("WriteTx: %v; want a TxError whose member 0 failed with ThrottlingError", err)
	}
	var te *ThrottlingError
	if !errors.As(err, &te) || te.Table != "Books" {
		t.Errorf("WriteTx: %v; want a *ThrottlingError on Books through the TxError", err)
	} else if msg := te.Error(); !strings.Contains(msg, "a member was throttled") || strings.Contains(msg, "after the SDK's retries") {
		t.Errorf("ThrottlingError says %q; want it to say a member was throttled, not retried by the SDK", msg)
	}
	if !errors.As(txe.Failure(0).Err, &te) {
		t.Errorf("Failure(0).Err = %v; want a *ThrottlingError too", txe.Failure(0).Err)
	}
	if db.count("TransactWriteItems") != 1 {
		t.Errorf("%d transactions sent; want 1 (a throttled cancellation is returned)", db.count("TransactWriteItems"))
	}
}

// On an MRSC table a Transact whose function only reads is refused at its
// first read, before any request.
func TestAttackStrongTransactReadOnlyRefusedBeforeSending(t *testing.T) {
	db := &fakeDB{}
	db.table("Books", "ISBN", "")
	books := newBooks(t, db, WithStrongGlobalTables("Books"))
	err := books.Mapper().Transact(context.Background(), func(tx *Tx) error {
		_, err := books.In(tx).Load(Book{ISBN: "1"})
		return err
	})
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "MRSC") {
		t.Errorf("Transact: %v; want refused as MRSC", err)
	}
	if n := db.count(""); n != 0 {
		t.Errorf("%d requests sent; want none", n)
	}
}
