package dynamo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/ident"
	"github.com/ddbkit/dynamo/internal/plan"
)

// txErr answers TransactWriteItems call n with the error fn returns for it,
// or an empty success.
func txErr(fn func(n int, in *dynamodb.TransactWriteItemsInput) error) func(int, *dynamodb.TransactWriteItemsInput) (*dynamodb.TransactWriteItemsOutput, error) {
	return func(n int, in *dynamodb.TransactWriteItemsInput) (*dynamodb.TransactWriteItemsOutput, error) {
		if err := fn(n, in); err != nil {
			return nil, err
		}
		return &dynamodb.TransactWriteItemsOutput{}, nil
	}
}

// Shelf is a second versioned type, with a composite key, for transactions
// across tables.
type Shelf struct {
	Room    string `dynamo:"room,hash"`
	Number  int    `dynamo:"n,range"`
	Label   string `dynamo:"label"`
	Version *int64 `dynamo:"v,version"`
}

func txTables(t *testing.T, c Client, opts ...Option) (*Table[Book], *Table[*Shelf]) {
	t.Helper()
	m := NewMapper(c, opts...)
	books, err := NewTable[Book](m, "Books")
	if err != nil {
		t.Fatal(err)
	}
	shelves, err := NewTable[*Shelf](m, "Shelves")
	if err != nil {
		t.Fatal(err)
	}
	return books, shelves
}

func i64(n int64) *int64 { return &n }

func txCanceled(reasons ...types.CancellationReason) error {
	return &types.TransactionCanceledException{Message: aws.String("Transaction cancelled"), CancellationReasons: reasons}
}

func txReason(code string, item map[string]types.AttributeValue) types.CancellationReason {
	return types.CancellationReason{Code: aws.String(code), Item: item}
}

func TestWriteTxRequest(t *testing.T) {
	c := &fakeDB{noStore: true}
	books, shelves := txTables(t, c)
	m := books.Mapper()
	b1 := Book{ISBN: "1", Title: "T", Version: 2}
	sh := &Shelf{Room: "r", Number: 3, Label: "L", Version: i64(5)}
	put := books.TxSave(Book{ISBN: "2", Title: "P"}, WithSaveBehavior(SavePut), If(expression.Name("title").AttributeNotExists()))
	save := books.TxSave(b1)
	ssave := shelves.TxSave(sh)
	ops := []TxOp{save, put, ssave, books.TxDelete(Book{ISBN: "3", Version: 7}), books.TxCheck(Book{ISBN: "4", Version: 1}),
		books.TxDelete(Book{ISBN: "5", Version: 1}, WithSaveBehavior(SaveClobber))}
	if err := m.WriteTx(context.Background(), ops); err != nil {
		t.Fatal(err)
	}
	if len(c.txWrites()) != 1 {
		t.Fatalf("%d requests", len(c.txWrites()))
	}
	in := c.txWrites()[0]
	if tok := aws.ToString(in.ClientRequestToken); len(tok) != 32 {
		t.Errorf("request token %q: want a random one of 32 hex digits", tok)
	}
	if len(in.TransactItems) != len(ops) {
		t.Fatalf("%d members", len(in.TransactItems))
	}
	// 0: the same update as Save builds.
	u := in.TransactItems[0].Update
	if u == nil || aws.ToString(u.TableName) != "Books" || aws.ToString(u.ConditionExpression) != "#a4 = :v0" ||
		aws.ToString(u.UpdateExpression) != "SET #a1 = :a1, #a4 = :v1, #wt = :wt REMOVE #a2, #a3" ||
		u.ReturnValuesOnConditionCheckFailure != types.ReturnValuesOnConditionCheckFailureAllOld {
		t.Fatalf("member 0 = %+v", u)
	}
	if !reflect.DeepEqual(u.Key, map[string]types.AttributeValue{"ISBN": str("1")}) ||
		u.ExpressionAttributeValues[":v1"].(*types.AttributeValueMemberN).Value != "3" ||
		len(u.ExpressionAttributeValues[":wt"].(*types.AttributeValueMemberB).Value) != 16 {
		t.Errorf("member 0 key/values = %v %v", u.Key, u.ExpressionAttributeValues)
	}
	// 1: a put with the version, the token and the If condition.
	p := in.TransactItems[1].Put
	if p == nil || aws.ToString(p.ConditionExpression) != "(attribute_not_exists(#a4) OR attribute_type(#a4, :onull) OR #a4 = :v0) AND (attribute_not_exists (#0))" ||
		p.Item["version"].(*types.AttributeValueMemberN).Value != "1" || p.Item["ddbkit_wt"] == nil ||
		p.ReturnValuesOnConditionCheckFailure != types.ReturnValuesOnConditionCheckFailureAllOld {
		t.Fatalf("member 1 = %+v", p)
	}
	// 2: another table, composite key, pointer version.
	u = in.TransactItems[2].Update
	if u == nil || aws.ToString(u.TableName) != "Shelves" ||
		!reflect.DeepEqual(u.Key, map[string]types.AttributeValue{"room": str("r"), "n": n("3")}) {
		t.Fatalf("member 2 = %+v", u)
	}
	// 3: a version-checked delete; 4: a bare check; 5: an unconditional delete.
	d := in.TransactItems[3].Delete
	if d == nil || aws.ToString(d.ConditionExpression) != "#a4 = :v0" || d.ExpressionAttributeValues[":v0"].(*types.AttributeValueMemberN).Value != "7" ||
		d.ReturnValuesOnConditionCheckFailure != types.ReturnValuesOnConditionCheckFailureAllOld {
		t.Fatalf("member 3 = %+v", d)
	}
	cc := in.TransactItems[4].ConditionCheck
	if cc == nil || aws.ToString(cc.ConditionExpression) != "#a4 = :v0" || cc.ExpressionAttributeValues[":v0"].(*types.AttributeValueMemberN).Value != "1" ||
		!reflect.DeepEqual(cc.ExpressionAttributeNames, map[string]string{"#a4": "version"}) ||
		cc.ReturnValuesOnConditionCheckFailure != types.ReturnValuesOnConditionCheckFailureAllOld {
		t.Fatalf("member 4 = %+v", cc)
	}
	if d := in.TransactItems[5].Delete; d == nil || d.ConditionExpression != nil || d.ExpressionAttributeValues != nil {
		t.Fatalf("member 5 = %+v", d)
	}
	// Saved copies; the inputs untouched.
	if got := save.Saved(); got.Version != 3 || got.Title != "T" || b1.Version != 2 {
		t.Errorf("Saved = %+v, input %+v", got, b1)
	}
	if got := put.Saved(); got.Version != 1 || got.Title != "P" {
		t.Errorf("put Saved = %+v", got)
	}
	if got := ssave.Saved(); got == sh || *got.Version != 6 || *sh.Version != 5 || got.Label != "L" {
		t.Errorf("shelf Saved = %+v (version %d), input version %d", got, *got.Version, *sh.Version)
	}
}

func TestWriteTxSavedBeforeSuccessIsZero(t *testing.T) {
	c := &fakeDB{noStore: true, onTxWrite: txErr(func(int, *dynamodb.TransactWriteItemsInput) error {
		return txCanceled(txReason("ConditionalCheckFailed", nil))
	})}
	books, _ := txTables(t, c)
	s := books.TxSave(Book{ISBN: "1", Version: 1})
	if err := books.Mapper().WriteTx(context.Background(), []TxOp{s}); err == nil {
		t.Fatal("no error")
	}
	if got := s.Saved(); !reflect.DeepEqual(got, Book{}) {
		t.Errorf("Saved after failure = %+v", got)
	}
}

// The case: the third member holds a stale version. The error names
// it, carries its stored item, and satisfies ErrVersionConflict.
func TestWriteTxStaleThirdMember(t *testing.T) {
	stored := map[string]types.AttributeValue{"room": str("r"), "n": n("1"), "label": str("moved"), "v": n("4")}
	c := &fakeDB{noStore: true, onTxWrite: txErr(func(int, *dynamodb.TransactWriteItemsInput) error {
		return txCanceled(txReason("None", nil), txReason("None", nil), txReason("ConditionalCheckFailed", stored))
	})}
	books, shelves := txTables(t, c)
	ops := []TxOp{books.TxSave(Book{ISBN: "1", Version: 1}), books.TxCheck(Book{ISBN: "2", Version: 1}),
		shelves.TxSave(&Shelf{Room: "r", Number: 1, Version: i64(3)})}
	err := books.Mapper().WriteTx(context.Background(), ops)
	if !errors.Is(err, ErrVersionConflict) || errors.Is(err, ErrConditionFailed) {
		t.Fatalf("err = %v, want a version conflict only", err)
	}
	var te *TxError
	if !errors.As(err, &te) || len(te.Failures) != 1 || te.Members != 3 {
		t.Fatalf("err = %#v", err)
	}
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		t.Error("SDK error not wrapped")
	}
	var ce *ConditionError
	if errors.As(err, &ce) {
		t.Error("a *ConditionError is reachable from the TxError: Table.Current(txErr) could decode another table's item")
	}
	for _, s := range []string{"member 2 (TxSave)", `table "Shelves"`, `key {n: 1, room: "r"}`, "held v 3, found 4", "nothing written"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q lacks %q", err, s)
		}
	}
	f := te.Failure(2)
	if f == nil || f.Index != 2 || f.Table != "Shelves" || f.Code != "ConditionalCheckFailed" || te.Failure(0) != nil {
		t.Fatalf("Failure(2) = %+v", f)
	}
	cur, err := shelves.Current(f.Err)
	if err != nil || cur.Label != "moved" || *cur.Version != 4 {
		t.Errorf("Current = %+v, %v", cur, err)
	}
}

// A transaction cancelled by a conflicting transaction is sent again — the
// very same request, token included — and succeeds.
func TestWriteTxRetriesTransactionConflict(t *testing.T) {
	c := &fakeDB{noStore: true, onTxWrite: txErr(func(n int, in *dynamodb.TransactWriteItemsInput) error {
		switch n {
		case 1:
			return txCanceled(txReason("None", nil), txReason("TransactionConflict", nil))
		case 2:
			return &smithy.GenericAPIError{Code: "TransactionInProgressException", Message: "in progress"}
		}
		return nil
	})}
	books, _ := txTables(t, c)
	s := books.TxSave(Book{ISBN: "1", Version: 1})
	err := books.Mapper().WriteTx(context.Background(), []TxOp{s, books.TxCheck(Book{ISBN: "2", Version: 1})},
		WithRetry(RetryPolicy{BackoffBase: time.Microsecond, BackoffMax: time.Microsecond}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.txWrites()) != 3 || c.txWrites()[0] != c.txWrites()[1] || c.txWrites()[1] != c.txWrites()[2] {
		t.Fatalf("%d attempts; want 3 sends of one request", len(c.txWrites()))
	}
	if s.Saved().Version != 2 {
		t.Errorf("Saved = %+v", s.Saved())
	}
}

func TestWriteTxConflictGivesUp(t *testing.T) {
	c := &fakeDB{noStore: true, onTxWrite: txErr(func(int, *dynamodb.TransactWriteItemsInput) error {
		return txCanceled(txReason("TransactionConflict", nil))
	})}
	books, _ := txTables(t, c)
	err := books.Mapper().WriteTx(context.Background(), []TxOp{books.TxSave(Book{ISBN: "1"})},
		WithRetry(RetryPolicy{MaxAttempts: 3, BackoffBase: time.Microsecond, BackoffMax: time.Microsecond}))
	var te *TxError
	if !errors.As(err, &te) || te.Attempts != 3 || len(c.txWrites()) != 3 {
		t.Fatalf("err = %v after %d sends", err, len(c.txWrites()))
	}
	if errors.Is(err, ErrVersionConflict) || !strings.Contains(err.Error(), "after 3 attempts") || !strings.Contains(err.Error(), "TransactionConflict") {
		t.Errorf("err = %v", err)
	}
}

// A transaction whose last attempt finds one under the same request token
// still in progress may have been applied: ErrUnknownOutcome, never
// "cancelled, nothing written". A plain TransactionConflict to the end was
// not applied.
func TestWriteTxInProgressIsUnknown(t *testing.T) {
	c := &fakeDB{noStore: true, onTxWrite: txErr(func(int, *dynamodb.TransactWriteItemsInput) error {
		return &smithy.GenericAPIError{Code: "TransactionInProgressException", Message: "in progress"}
	})}
	books, _ := txTables(t, c)
	err := books.Mapper().WriteTx(context.Background(), []TxOp{books.TxSave(Book{ISBN: "1"})},
		WithRetry(RetryPolicy{MaxAttempts: 2, BackoffBase: time.Microsecond, BackoffMax: time.Microsecond}))
	var te *TxError
	if !errors.As(err, &te) || !errors.Is(err, ErrUnknownOutcome) || strings.Contains(err.Error(), "nothing written") {
		t.Fatalf("err = %v; want a *TxError with ErrUnknownOutcome that does not say nothing was written", err)
	}
	c = &fakeDB{noStore: true, onTxWrite: txErr(func(int, *dynamodb.TransactWriteItemsInput) error {
		return txCanceled(txReason("TransactionConflict", nil))
	})}
	books, _ = txTables(t, c)
	err = books.Mapper().WriteTx(context.Background(), []TxOp{books.TxSave(Book{ISBN: "1"})},
		WithRetry(RetryPolicy{MaxAttempts: 2, BackoffBase: time.Microsecond, BackoffMax: time.Microsecond}))
	if errors.Is(err, ErrUnknownOutcome) || !strings.Contains(err.Error(), "nothing written") {
		t.Fatalf("err = %v; want a plain cancellation", err)
	}
}

func TestWriteTxBackoffHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &fakeDB{noStore: true, onTxWrite: txErr(func(int, *dynamodb.TransactWriteItemsInput) error {
		cancel()
		return txCanceled(txReason("TransactionConflict", nil))
	})}
	books, _ := txTables(t, c)
	err := books.Mapper().WriteTx(ctx, []TxOp{books.TxSave(Book{ISBN: "1"})}, WithRetry(RetryPolicy{BackoffBase: time.Hour, BackoffMax: time.Hour}))
	if !errors.Is(err, context.Canceled) || len(c.txWrites()) != 1 {
		t.Fatalf("err = %v after %d sends", err, len(c.txWrites()))
	}
}

func TestWriteTxRefusedBeforeSending(t *testing.T) {
	c := &fakeDB{noStore: true}
	books, shelves := txTables(t, c)
	m := books.Mapper()
	ctx := context.Background()
	many := make([]TxOp, MaxTxItems+1)
	for i := range many {
		many[i] = books.TxCheck(Book{ISBN: strings.Repeat("x", i+1), Version: 1})
	}
	big := strings.Repeat("x", 300*1024)
	var bigOps []TxOp
	for i := range 14 { // 14 × 300 KB > 4 MB, each under 400 KB
		bigOps = append(bigOps, books.TxSave(Book{ISBN: strings.Repeat("k", i+1), Title: big}))
	}
	type plain struct {
		ID string `dynamo:"id,hash"`
	}
	plains := NewTableMust[plain](t, m)
	tests := []struct {
		name string
		ops  []TxOp
		opts []TxOption
		msg  string
	}{
		{"no ops", nil, nil, "WriteTx with no members"},
		{"101 ops", many, nil, "WriteTx with 101 members: DynamoDB takes at most 100"},
		{"duplicate", []TxOp{books.TxSave(Book{ISBN: "1"}), shelves.TxSave(&Shelf{Room: "1", Number: 1}), books.TxCheck(Book{ISBN: "1", Version: 2})},
			nil, `members 0 and 2 are both on table "Books" key {ISBN: "1"}`},
		{"nil op", []TxOp{books.TxSave(Book{ISBN: "1"}), nil}, nil, "member 1 is nil"},
		{"nil item", []TxOp{shelves.TxSave(nil)}, nil, "member 0: dynamo: invalid input: TxSave on table \"Shelves\" with a nil *dynamo.Shelf"},
		{"nil delete", []TxOp{shelves.TxDelete(nil)}, nil, "TxDelete on table \"Shelves\" with a nil"},
		{"unset key", []TxOp{books.TxSave(Book{ISBN: "1"}), books.TxDelete(Book{})}, nil, "member 1: dynamo: invalid input: table \"Books\": hash key ISBN"},
		{"unset range key", []TxOp{shelves.TxCheck(&Shelf{Number: 1})}, nil, "hash key room"},
		{"item too big", []TxOp{books.TxSave(Book{ISBN: "1", Title: big + big})}, nil, "over DynamoDB's 400 KB limit"},
		{"tx too big", bigOps, nil, "over DynamoDB's 4 MB limit"},
		{"clobber", []TxOp{books.TxSave(Book{ISBN: "1"}, WithSaveBehavior(SaveClobber))}, nil, "TxSave on table \"Books\" with WithSaveBehavior(SaveClobber)"},
		{"skip nulls", []TxOp{books.TxSave(Book{ISBN: "1"}, WithSaveBehavior(SaveUpdateSkipNulls))}, nil, "a transaction returns no items"},
		{"append set", []TxOp{books.TxSave(Book{ISBN: "1"}, WithSaveBehavior(SaveAppendSet))}, nil, "use SaveUpdate or SavePut"},
		{"check nothing", []TxOp{plains.TxCheck(plain{ID: "a"})}, nil, "checks nothing (type dynamo.plain has no version attribute)"},
		{"clobber check", []TxOp{books.TxCheck(Book{ISBN: "1"}, WithSaveBehavior(SaveClobber))}, nil, "SaveClobber turns the version check off"},
		{"empty token", []TxOp{books.TxSave(Book{ISBN: "1"})}, []TxOption{WithRequestToken("")}, "1 to 36 characters"},
		{"long token", []TxOp{books.TxSave(Book{ISBN: "1"})}, []TxOption{WithRequestToken(strings.Repeat("t", 37))}, "1 to 36 characters"},
	}
	for _, tc := range tests {
		err := m.WriteTx(ctx, tc.ops, tc.opts...)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err = %v, want ErrInvalidInput mentioning %q", tc.name, err, tc.msg)
		}
	}
	if len(c.txWrites()) != 0 {
		t.Errorf("%d requests sent for bad input", len(c.txWrites()))
	}
	// An unversioned check with If, and 100 members, are fine.
	if err := m.WriteTx(ctx, []TxOp{plains.TxCheck(plain{ID: "a"}, If(expression.Name("id").AttributeExists()))}); err != nil {
		t.Error(err)
	}
	if err := m.WriteTx(ctx, many[:MaxTxItems]); err != nil {
		t.Error(err)
	}
}

// "Tokens never repeat" (settle.go) is what lets Update resend a write
// whose answer was lost when it finds the exact state it read. But WriteTx
// with WithRequestToken derives its members' write tokens from the request
// token, table and key — and its doc tells users to resend with the same
// token after a crash or timeout. A create resent after its 10 minutes,
// once the item was consumed and deleted, stores the same (v1, token) pair
// as the first incarnation.
//
// Here: the item is created by WriteTx under request token "create-k".
// Update reads it (v1, token H) and appends a job; its write is applied and
// the answer lost; meanwhile the item is deleted and the same WriteTx is
// resent (emulated by putting back exactly the item it stores: DynamoDB
// Local cannot age a request token). The settling read finds (v1, H) — the
// state Update read — and Update sends its write again: the job is applied
// to the new incarnation as well, and Update reports success.
func TestRepeatedTxTokenDoesNotFoolSettle(t *testing.T) {
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "txtok", "id", types.ScalarAttributeTypeS, "", "")
	d := dynamotest.NewDropper("UpdateItem")
	mine, err := NewTable[queuedJob](NewMapper(d.Client(t)), name)
	if err != nil {
		t.Fatal(err)
	}
	om := NewMapper(c)
	other, _ := NewTable[queuedJob](om, name)
	ctx := t.Context()
	reqToken := "create-k-" + ident.RandomHex(8) // unique: a server may outlive a test run, and remembers tokens for 10 minutes
	if err := om.WriteTx(ctx, []TxOp{other.TxSave(queuedJob{ID: "k", Owner: "first"})}, WithRequestToken(reqToken)); err != nil {
		t.Fatal(err)
	}
	key := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "k"}}
	raw, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(name), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	tok := raw.Item[DefaultWriteTokenAttribute].(*types.AttributeValueMemberB).Value
	if !bytes.Equal(tok, plan.TxWriteToken(reqToken, name, formatKey(key))) {
		t.Fatal("the stored token is not the one a resend of the WriteTx stores; the emulation below would be wrong")
	}
	d.ArmThen(func() {
		if err := other.Delete(ctx, queuedJob{ID: "k"}, WithSaveBehavior(SaveClobber)); err != nil {
			t.Error(err)
		}
		// The WriteTx resent with its request token after 10 minutes.
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: raw.Item}); err != nil {
			t.Error(err)
		}
	})
	_, err = mine.Update(ctx, queuedJob{ID: "k"}, func(j queuedJob) (queuedJob, error) {
		j.Jobs = append(j.Jobs, "job")
		return j, nil
	})
	if d.Dropped() != 1 {
		t.Fatalf("dropped %d answers, the test needs 1", d.Dropped())
	}
	got, _ := other.Load(ctx, queuedJob{ID: "k"}, ConsistentRead())
	if slices.Contains(got.Jobs, "job") {
		t.Fatalf("Update = %v after %d UpdateItems; the incarnation created after its applied write carries its job too (%+v): applied twice", err, d.Sent(), got)
	}
}

// TestTxSaveAgreesWithSaveOverNullSet: over an item whose set attributes
// are stored as NULL (SavePut of a nil set writes NULL; other writers may),
// a transaction's save (WriteTx's TxSave, Transact's Save) and Table.Save
// with the same behaviour agree: SaveUpdate and SavePut leave the same item
// stored, whether the struct's sets hold elements or none; the behaviours
// whose copy is the item as stored (SaveUpdateSkipNulls, SaveAppendSet,
// SaveClobber), which Save sends again over a NULL, are refused by a
// transaction before anything is sent, with ErrInvalidInput naming what to
// use instead, and the stored item is left as it was.
func TestTxSaveAgreesWithSaveOverNullSet(t *testing.T) {
	type tagged struct {
		ID   string   `dynamo:"id,hash"`
		Tags []string `dynamo:"tags,set"`
		Nums []int    `dynamo:"nums,set"`
		V    int64    `dynamo:"v,version"`
	}
	null := &types.AttributeValueMemberNULL{Value: true}
	seed := func(id string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"id": str(id), "tags": null, "nums": null, "v": n("1"), "other": str("kept?")}
	}
	db := (&fakeDB{}).table("t", "id", "")
	tb, err := NewTable[tagged](NewMapper(db), "t")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	stored := func(id string) map[string]types.AttributeValue {
		it := maps.Clone(db.item("t", map[string]types.AttributeValue{"id": str(id)}))
		delete(it, DefaultWriteTokenAttribute)
		delete(it, "id")
		return it
	}
	for _, b := range []SaveBehavior{SaveUpdate, SavePut, SaveUpdateSkipNulls, SaveAppendSet, SaveClobber} {
		for _, tags := range [][]string{{"x"}, nil} {
			name := fmt.Sprintf("%v with tags %v", b, tags)
			save, wtx, trx := name+" Save", name+" WriteTx", name+" Transact"
			for _, id := range []string{save, wtx, trx} {
				db.put("t", seed(id))
			}
			opt := WithSaveBehavior(b)
			_, serr := tb.Save(ctx, tagged{ID: save, Tags: tags, V: 1}, opt)
			if serr != nil {
				t.Errorf("%s: %v", save, serr)
			}
			sent := len(db.txWrites())
			werr := tb.Mapper().WriteTx(ctx, []TxOp{tb.TxSave(tagged{ID: wtx, Tags: tags, V: 1}, opt)})
			terr := tb.Mapper().Transact(ctx, func(tx *Tx) error {
				_, err := tb.In(tx).Save(tagged{ID: trx, Tags: tags, V: 1}, opt)
				return err
			})
			for _, c := range []struct {
				id  string
				err error
			}{{wtx, werr}, {trx, terr}} {
				if b == SaveUpdate || b == SavePut {
					if c.err != nil {
						t.Errorf("%s: %v", c.id, c.err)
					} else if got, want := stored(c.id), stored(save); !reflect.DeepEqual(got, want) {
						t.Errorf("%s stored %v; Save stored %v", c.id, got, want)
					}
					continue
				}
				if !errors.Is(c.err, ErrInvalidInput) || !strings.Contains(fmt.Sprint(c.err), "use SaveUpdate or SavePut") {
					t.Errorf("%s: %v; want ErrInvalidInput naming SaveUpdate or SavePut", c.id, c.err)
				}
				want := seed(c.id)
				delete(want, "id")
				if got := stored(c.id); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: stored %v, want the seeded item unchanged %v", c.id, got, want)
				}
			}
			if b != SaveUpdate && b != SavePut && len(db.txWrites()) != sent {
				t.Errorf("%v: a refused transaction sent TransactWriteItems", b)
			}
		}
	}
}
