package dynamo

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/telemetry"
)

// rwc answers a write with ReplicatedWriteConflictException, as a strongly
// consistent global table does while another Region writes the item.
var rwc = apiError(400, "ReplicatedWriteConflictException")

var heldItem = `{"id":{"S":"k"},"n":{"N":"5"},"version":{"N":"5"},"ddbkit_wt":{"B":"` + heldToken + `"}}`

func heldStep(string) string { return heldItem }

// Update meets a replicated write conflict as a version conflict: it reads
// the item again (strongly consistent), calls its function again on what
// it finds and writes that, once. The SDK itself does not resend the
// refused write (the second UpdateItem carries the new version).
func TestUpdateRetriesReplicatedConflict(t *testing.T) {
	for _, idem := range []bool{false, true} {
		s := &scriptedTransport{get: heldItem, steps: []step{rwc, ok}, gets: []getStep{heldStep, stored(7, false)}}
		var opts []WriteOption
		if idem {
			opts = append(opts, IdempotencyKey("op-1"))
		}
		calls := 0
		saved, err := scriptedTable(t, s).Update(context.Background(), regressCounter{ID: "k"}, func(c regressCounter) (regressCounter, error) {
			calls++
			c.N++
			return c, nil
		}, opts...)
		if err != nil || calls != 2 || saved.Version != 8 || saved.N != 8 {
			t.Fatalf("idempotency key %v: Update = %+v, %v after %d calls; want version and n 8 after 2 calls", idem, saved, err, calls)
		}
		if s.updates != 2 || len(s.gets) != 0 || len(s.steps) != 0 {
			t.Errorf("idempotency key %v: %d UpdateItems, %d reads and %d answers left; want 2 writes and the item read again", idem, s.updates, len(s.gets), len(s.steps))
		}
	}
}

// Replicated write conflicts count against the RetryPolicy's attempts;
// the error then wraps ErrReplicatedConflict and the SDK's error, and is
// no unknown outcome (nothing was applied).
func TestUpdateGivesUpOnReplicatedConflicts(t *testing.T) {
	s := &scriptedTransport{get: heldItem, steps: []step{rwc, rwc}}
	calls := 0
	_, err := scriptedTable(t, s, WithRetry(RetryPolicy{MaxAttempts: 2})).Update(context.Background(), regressCounter{ID: "k"}, func(c regressCounter) (regressCounter, error) {
		calls++
		c.N++
		return c, nil
	})
	var sdk *types.ReplicatedWriteConflictException
	if !errors.Is(err, ErrReplicatedConflict) || !errors.As(err, &sdk) || errors.Is(err, ErrUnknownOutcome) || errors.Is(err, ErrVersionConflict) {
		t.Fatalf("err = %v; want ErrReplicatedConflict wrapping the SDK's error, not an unknown outcome nor a version conflict", err)
	}
	if calls != 2 || !strings.Contains(err.Error(), "gave up after 2 attempts") || !strings.Contains(err.Error(), `table "Counters"`) {
		t.Errorf("after %d calls: %v; want 2 calls, the attempts and the table named", calls, err)
	}
}

// After a lost answer settled as not applied, a resend refused by a
// replicated write conflict leaves the outcome open: Update stops without
// calling its function again.
func TestUpdateLostAnswerThenReplicatedConflictIsUnknown(t *testing.T) {
	s := &scriptedTransport{get: heldItem, steps: []step{reset, rwc}, gets: []getStep{heldStep, stored(5, false)}}
	calls := 0
	_, err := scriptedTable(t, s).Update(context.Background(), regressCounter{ID: "k"}, func(c regressCounter) (regressCounter, error) {
		calls++
		c.N++
		return c, nil
	})
	if !errors.Is(err, ErrUnknownOutcome) || !errors.Is(err, ErrReplicatedConflict) || calls != 1 {
		t.Fatalf("err = %v after %d calls; want ErrUnknownOutcome and ErrReplicatedConflict after 1", err, calls)
	}
}

// Save and Delete return the conflict, after one request: never success,
// never sent again.
func TestSaveAndDeleteReturnReplicatedConflict(t *testing.T) {
	s := &scriptedTransport{steps: []step{rwc, rwc}}
	tb := scriptedTable(t, s)
	_, err := tb.Save(context.Background(), regressCounter{ID: "k", N: 6, Version: 5})
	if !errors.Is(err, ErrReplicatedConflict) || errors.Is(err, ErrUnknownOutcome) || !strings.Contains(err.Error(), "not applied") {
		t.Errorf("Save: %v; want ErrReplicatedConflict saying the write was not applied", err)
	}
	err = tb.Delete(context.Background(), regressCounter{ID: "k", Version: 5})
	if !errors.Is(err, ErrReplicatedConflict) || errors.Is(err, ErrUnknownOutcome) {
		t.Errorf("Delete: %v; want ErrReplicatedConflict", err)
	}
	if s.updates != 2 {
		t.Errorf("%d writes sent; want 2 (one each, not resent)", s.updates)
	}
}

// throttled answers a request with a throttling error carrying reasons in
// the member name of its shape.
func throttledStep(code, member, reason string) step {
	return func(string) (*http.Response, error) {
		return answer(400, `{"__type":"com.amazonaws.dynamodb.v20120810#`+code+`","message":"scripted","`+member+`":[{"reason":"`+reason+
			`","resource":"arn:aws:dynamodb:us-east-1:123456789012:table/Counters"}]}`), nil
	}
}

// A request throttled until the SDK gave up returns a *ThrottlingError
// carrying DynamoDB's reasons and unwrapping to the SDK's error, whichever
// throttling shape it was.
func TestThrottlingErrorCarriesReasons(t *testing.T) {
	for _, tc := range []struct{ code, member, reason, fix string }{
		{"ThrottlingException", "throttlingReasons", "TableWriteKeyRangeThroughputExceeded", "write sharding"},
		{"ProvisionedThroughputExceededException", "ThrottlingReasons", "IndexWriteProvisionedThroughputExceeded", "provisioned capacity"},
	} {
		th := throttledStep(tc.code, tc.member, tc.reason)
		s := &scriptedTransport{steps: []step{th, th, th}}
		_, err := scriptedTable(t, s).Save(context.Background(), regressCounter{ID: "k", N: 6, Version: 5})
		var te *ThrottlingError
		if !errors.As(err, &te) || len(te.Reasons) != 1 || te.Table != "Counters" {
			t.Fatalf("%s: Save: %v; want a *ThrottlingError on Counters with one reason", tc.code, err)
		}
		if r := te.Reasons[0]; r.Reason != tc.reason || r.Resource != "arn:aws:dynamodb:us-east-1:123456789012:table/Counters" {
			t.Errorf("%s: reason %+v", tc.code, r)
		}
		var ae interface{ ErrorCode() string }
		if !errors.As(err, &ae) || ae.ErrorCode() != tc.code || !strings.Contains(err.Error(), tc.reason) || !strings.Contains(err.Error(), tc.fix) {
			t.Errorf("%s: %v; want the SDK's error reachable, the reason and %q named", tc.code, err, tc.fix)
		}
		if s.updates != 3 {
			t.Errorf("%s: %d attempts; want the SDK's 3", tc.code, s.updates)
		}
	}
}

// Every call's throttled request is a *ThrottlingError: reads, queries
// and batches too (the fake gives the error as the SDK decodes it).
func TestThrottlingErrorFromEveryCall(t *testing.T) {
	reasons := []types.ThrottlingReason{{Reason: aws.String("TableReadKeyRangeThroughputExceeded"), Resource: aws.String("arn:aws:dynamodb:eu-west-1:1:table/Books")}}
	db := &fakeDB{}
	db.table("Books", "ISBN", "")
	db.fail("", 0, &types.ThrottlingException{Message: aws.String("slow down"), ThrottlingReasons: reasons})
	books := newBooks(t, db)
	ctx := context.Background()
	calls := map[string]func() error{
		"Load": func() error { _, err := books.Load(ctx, Book{ISBN: "1"}); return err },
		"Save": func() error { _, err := books.Save(ctx, Book{ISBN: "1"}); return err },
		"Query": func() error {
			for _, err := range books.Query(ctx, expression.Key("ISBN").Equal(expression.Value("1"))) {
				return err
			}
			return nil
		},
		"BatchLoad": func() error { _, err := books.BatchLoad(ctx, []Book{{ISBN: "1"}}); return err },
	}
	for name, call := range calls {
		var te *ThrottlingError
		if err := call(); !errors.As(err, &te) || len(te.Reasons) != 1 || te.Reasons[0].Reason != "TableReadKeyRangeThroughputExceeded" {
			t.Errorf("%s: %v; want a *ThrottlingError with the reason", name, err)
		}
	}
}

// The span and the duration metric of a throttled call carry the reason
// (aws.dynamodb.throttling_reason), never the resource's ARN; a reason not
// of DynamoDB's shape is "other", so the attribute stays bounded.
func TestTelemetryThrottlingReason(t *testing.T) {
	for _, tc := range []struct{ reason, want string }{
		{"TableWriteKeyRangeThroughputExceeded", "TableWriteKeyRangeThroughputExceeded"},
		{"user-42 table Books key 978-1", "other"},
	} {
		r := newTelemetryRig(t)
		th := throttledStep("ThrottlingException", "throttlingReasons", tc.reason)
		s := &scriptedTransport{steps: []step{th, th, th}}
		if _, err := scriptedTable(t, s, r.opts...).Save(context.Background(), regressCounter{ID: "k", N: 6, Version: 5}); err == nil {
			t.Fatal("Save succeeded; want it throttled")
		}
		sp := r.span(t, "Save Counters")
		if v, ok := attr(sp.Attributes(), telemetry.DBThrottlingReason); !ok || v.AsString() != tc.want {
			t.Errorf("reason %q: span %s = %q; want %q", tc.reason, telemetry.DBThrottlingReason, v.AsString(), tc.want)
		}
		if n := r.count(t, telemetry.MetricDuration, telemetry.DBThrottlingReason.String(tc.want)); n != 1 {
			t.Errorf("reason %q: %s with the reason counts %d calls; want 1", tc.reason, telemetry.MetricDuration, n)
		}
		if v, _ := attr(sp.Attributes(), telemetry.ErrorType); v.AsString() != "throttled" {
			t.Errorf("error.type = %q; want throttled", v.AsString())
		}
		if all := r.everything(t); strings.Contains(all, "arn:aws") || strings.Contains(all, "978-1") {
			t.Errorf("telemetry records the resource or a key:\n%s", all)
		}
	}
}

// The error.type of a replicated write conflict is replicated_conflict.
func TestTelemetryReplicatedConflict(t *testing.T) {
	r := newTelemetryRig(t)
	s := &scriptedTransport{get: heldItem, steps: []step{rwc, ok}, gets: []getStep{heldStep, stored(7, false)}}
	if _, err := scriptedTable(t, s, r.opts...).Update(context.Background(), regressCounter{ID: "k"}, func(c regressCounter) (regressCounter, error) {
		c.N++
		return c, nil
	}); err != nil {
		t.Fatal(err)
	}
	sp := r.span(t, "Update Counters")
	if n := len(events(sp, telemetry.EventReplicatedConflict)); n != 1 {
		t.Errorf("%d %s events; want 1", n, telemetry.EventReplicatedConflict)
	}
	if n := len(events(sp, telemetry.EventRetry)); n != 1 {
		t.Errorf("%d retry events; want 1", n)
	}
	if c := errorClass(&replicatedConflict{table: "T", err: errors.New("x")}); c != "replicated_conflict" {
		t.Errorf("errorClass = %q; want replicated_conflict", c)
	}
}

// ctLeased has neither a ttl nor a local index: an MRSC table can hold it.
type ctLeased struct {
	ID      string `dynamo:"id,hash"`
	Version int64  `dynamo:"v,version"`
}

// ctExpiring has a ttl attribute; ctLocal a local secondary index.
type ctExpiring struct {
	ID  string `dynamo:"id,hash"`
	Exp int64  `dynamo:"exp,ttl"`
}

type ctLocal struct {
	ID  string `dynamo:"id,hash"`
	At  int64  `dynamo:"at,range"`
	Seq int64  `dynamo:"seq" localIndex:"BySeq,range"`
}

// A Mapper told which tables are strongly consistent global tables refuses,
// before sending anything, what MRSC cannot serve — transactions, GuardedBy
// on such a table or checking one, CreateTable with TTL or a local index —
// naming the table, why and the fix; the same calls on other tables, and
// single-item writes on MRSC tables, go on.
func TestStrongGlobalTablesRefuseWhatMRSCCannotServe(t *testing.T) {
	ctx := context.Background()
	db := &fakeDB{}
	db.table("Strong", "id", "").table("Plain", "id", "")
	m := NewMapper(db, WithStrongGlobalTables("Strong", ""), WithStrongGlobalTables("Expiring", "Local"))
	strong, _ := NewTable[ctLeased](m, "Strong")
	plain, _ := NewTable[ctLeased](m, "Plain")
	expiring, _ := NewTable[ctExpiring](m, "Expiring")
	local, _ := NewTable[ctLocal](m, "Local")
	bump := func(c ctLeased) (ctLeased, error) { return c, nil }
	calls := []struct {
		name, want string
		call       func() error
	}{
		{"WriteTx", "WriteTx on table \"Strong\"", func() error {
			return m.WriteTx(ctx, []TxOp{plain.TxSave(ctLeased{ID: "a"}), strong.TxSave(ctLeased{ID: "b"})})
		}},
		{"ReadTx", "ReadTx on table \"Strong\"", func() error { return m.ReadTx(ctx, []TxGetOp{strong.TxGet(ctLeased{ID: "b"})}) }},
		{"Transact", "Transact on table \"Strong\"", func() error {
			return m.Transact(ctx, func(tx *Tx) error {
				_, err := strong.In(tx).Load(ctLeased{ID: "b"})
				return err
			})
		}},
		{"Save with GuardedBy", "Save with GuardedBy on table \"Strong\"", func() error {
			_, err := strong.Save(ctx, ctLeased{ID: "b"}, GuardedBy(plain.TxCheck(ctLeased{ID: "a", Version: 1})))
			return err
		}},
		{"Save guarded by an MRSC item", "Save with GuardedBy on table \"Strong\"", func() error {
			_, err := plain.Save(ctx, ctLeased{ID: "b"}, GuardedBy(strong.TxCheck(ctLeased{ID: "a", Version: 1})))
			return err
		}},
		{"Update with GuardedBy", "Update with GuardedBy on table \"Strong\"", func() error {
			_, err := strong.Update(ctx, ctLeased{ID: "b"}, bump, GuardedBy(plain.TxCheck(ctLeased{ID: "a", Version: 1})))
			return err
		}},
		{"Delete with GuardedBy", "Delete with GuardedBy on table \"Strong\"", func() error {
			return strong.Delete(ctx, ctLeased{ID: "b"}, GuardedBy(plain.TxCheck(ctLeased{ID: "a", Version: 1})))
		}},
		{"CreateTable with ttl", "no TTL, and attribute exp is tagged ttl", func() error { return expiring.CreateTable(ctx) }},
		{"CreateTable with a local index", "no local secondary indexes, and \"BySeq\" is one", func() error { return local.CreateTable(ctx) }},
	}
	for _, tc := range calls {
		db.forget()
		err := tc.call()
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "MRSC") {
			t.Errorf("%s: %v; want ErrInvalidInput naming %s and MRSC", tc.name, err, tc.want)
		} else if len(err.Error()) > 160 {
			t.Errorf("%s: message of %d characters: %s", tc.name, len(err.Error()), err)
		}
		if ops := db.ops(); len(ops) != 0 {
			t.Errorf("%s: sent %v; want nothing sent", tc.name, ops)
		}
	}
	// What MRSC serves goes on: single-item writes on MRSC tables,
	// transactions on the others.
	if _, err := strong.Save(ctx, ctLeased{ID: "b"}); err != nil {
		t.Errorf("Save on an MRSC table: %v", err)
	}
	if _, err := strong.Update(ctx, ctLeased{ID: "b"}, bump); err != nil {
		t.Errorf("Update on an MRSC table: %v", err)
	}
	if err := m.WriteTx(ctx, []TxOp{plain.TxSave(ctLeased{ID: "a"})}); err != nil {
		t.Errorf("WriteTx on a table not MRSC: %v", err)
	}
	// Another Mapper of the same client knows nothing of MRSC.
	other, _ := NewTable[ctLeased](NewMapper(db), "Strong")
	if err := other.m.WriteTx(ctx, []TxOp{other.TxSave(ctLeased{ID: "c"})}); err != nil {
		t.Errorf("WriteTx through a Mapper without WithStrongGlobalTables: %v", err)
	}
}

// A transaction cancelled for a throttled member is counted as a cancelled
// transaction (error.type transaction_canceled) and carries no
// aws.dynamodb.throttling_reason: cancellation reasons name no
// ThrottlingReason, and the attribute is never made up.
func TestTelemetryTxCancelledByThrottling(t *testing.T) {
	r := newTelemetryRig(t)
	db := &fakeDB{}
	db.table("Books", "ISBN", "")
	db.fail("TransactWriteItems", 0, &types.TransactionCanceledException{Message: aws.String("Transaction cancelled"),
		CancellationReasons: []types.CancellationReason{{Code: aws.String("ThrottlingError"), Message: aws.String("Throughput exceeds the current capacity")}}})
	books := newBooks(t, db, r.opts...)
	var te *ThrottlingError
	if err := books.Mapper().WriteTx(context.Background(), []TxOp{books.TxSave(Book{ISBN: "1"})}); !errors.As(err, &te) {
		t.Fatalf("WriteTx: %v; want a *ThrottlingError", err)
	}
	sp := r.span(t, "WriteTx")
	if v, _ := attr(sp.Attributes(), telemetry.ErrorType); v.AsString() != "transaction_canceled" {
		t.Errorf("error.type = %q; want transaction_canceled", v.AsString())
	}
	if v, ok := attr(sp.Attributes(), telemetry.DBThrottlingReason); ok {
		t.Errorf("span %s = %q; want none", telemetry.DBThrottlingReason, v.AsString())
	}
}
