package dynamo

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/ddbkit/dynamo/internal/plan"
)

// acct is a versioned account for the Transact tests.
type acct struct {
	ID      string `dynamo:"id,hash"`
	Bal     int64  `dynamo:"bal"`
	Version int64  `dynamo:"version,version"`
}

// note is an unversioned type.
type note struct {
	ID   string `dynamo:"id,hash"`
	Text string `dynamo:"text"`
	N    int    `dynamo:"n"`
}

// acctRaw is the stored form of an account, with a write token.
func acctRaw(id string, bal, version int64, token byte) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"id":                       &types.AttributeValueMemberS{Value: id},
		"bal":                      plan.NumberAV(bal),
		"version":                  plan.NumberAV(version),
		DefaultWriteTokenAttribute: &types.AttributeValueMemberB{Value: []byte{token, 1, 2, 3}},
	}
}

// storeDB is the fake DynamoDB of the Transact tests: items by hash key
// "id", in tables Acct and Notes alike (the tests list accounts and notes
// together), read strongly consistently only (anything else fails). Writes
// are answered with success and not applied; a test sets onTxWrite to
// answer the commit.
func storeDB(items ...map[string]types.AttributeValue) *fakeDB {
	db := (&fakeDB{strongReads: true}).table("Acct", "id", "").table("Notes", "id", "")
	ok := func(int, *dynamodb.TransactWriteItemsInput) error { return nil }
	db.onTxWrite = txErr(ok)
	db.onPut = func(int, *dynamodb.PutItemInput) (*dynamodb.PutItemOutput, error) {
		return &dynamodb.PutItemOutput{}, nil
	}
	db.onUpd = func(int, *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		return &dynamodb.UpdateItemOutput{}, nil
	}
	db.onDel = func(int, *dynamodb.DeleteItemInput) (*dynamodb.DeleteItemOutput, error) {
		return &dynamodb.DeleteItemOutput{}, nil
	}
	for _, it := range items {
		storeSet(db, it)
	}
	return db
}

// storeSet stores item in db (as storeDB does).
func storeSet(db *fakeDB, item map[string]types.AttributeValue) {
	db.put("Acct", item).put("Notes", item)
}

// txCounts returns how many GetItem, TransactGetItems and
// TransactWriteItems requests db received.
func txCounts(db *fakeDB) (gets, txGets, txWrites int) {
	return db.count("GetItem"), db.count("TransactGetItems"), db.count("TransactWriteItems")
}

func acctTable(t *testing.T, c Client) *Table[acct] {
	t.Helper()
	tb, err := NewTable[acct](NewMapper(c), "Acct")
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// quick keeps the backoff of the tests short.
var quick = WithRetry(RetryPolicy{BackoffBase: time.Microsecond, BackoffMax: time.Microsecond})

// transfer moves amt from a to b through tx.
func transferFn(tb *Table[acct], a, b string, amt int64) func(tx *Tx) error {
	return func(tx *Tx) error {
		v := tb.In(tx)
		from, err := v.Load(acct{ID: a})
		if err != nil {
			return err
		}
		to, err := v.Load(acct{ID: b})
		if err != nil {
			return err
		}
		from.Bal -= amt
		to.Bal += amt
		if _, err := v.Save(from); err != nil {
			return err
		}
		_, err = v.Save(to)
		return err
	}
}

func TestTransactCommitsReadsAndWrites(t *testing.T) {
	c := storeDB(acctRaw("a", 100, 3, 1), acctRaw("b", 5, 7, 2), acctRaw("c", 1, 1, 3))
	tb := acctTable(t, c)
	err := tb.Mapper().Transact(context.Background(), func(tx *Tx) error {
		v := tb.In(tx)
		if _, err := v.Load(acct{ID: "c"}); err != nil { // read, not written: a check
			return err
		}
		if _, err := v.Load(acct{ID: "zz"}); !errors.Is(err, ErrNotFound) { // absent: a check too
			t.Errorf("Load of an absent item: %v, want ErrNotFound", err)
		}
		return transferFn(tb, "a", "b", 10)(tx)
	})
	if err != nil {
		t.Fatal(err)
	}
	gets, txGets, txWrites := txCounts(c)
	if gets != 4 || txGets != 0 || txWrites != 1 {
		t.Fatalf("requests: %d GetItem, %d TransactGetItems, %d TransactWriteItems; want 4, 0, 1", gets, txGets, txWrites)
	}
	in := c.txWrites()[0]
	if len(in.TransactItems) != 4 || aws.ToString(in.ClientRequestToken) == "" {
		t.Fatalf("commit: %d members, token %q", len(in.TransactItems), aws.ToString(in.ClientRequestToken))
	}
	chk := in.TransactItems[0].ConditionCheck
	if chk == nil || !strings.Contains(*chk.ConditionExpression, "#wt = :wh") || chk.ExpressionAttributeValues[":v0"].(*types.AttributeValueMemberN).Value != "1" {
		t.Errorf("check of c: %+v", chk)
	}
	abs := in.TransactItems[1].ConditionCheck
	if abs == nil || *abs.ConditionExpression != "attribute_not_exists(#kh)" {
		t.Errorf("check of the absent item: %+v", abs)
	}
	up := in.TransactItems[2].Update
	if up == nil || up.ExpressionAttributeValues[":v0"].(*types.AttributeValueMemberN).Value != "3" || !strings.Contains(*up.ConditionExpression, "#wt = :wh") {
		t.Errorf("save of a: %+v", up)
	}
}

func TestTransactFunctionErrorCommitsNothing(t *testing.T) {
	c := storeDB(acctRaw("a", 100, 1, 1), acctRaw("b", 0, 1, 2))
	tb := acctTable(t, c)
	boom := errors.New("insufficient funds")
	runs := 0
	err := tb.Mapper().Transact(context.Background(), func(tx *Tx) error {
		runs++
		if err := transferFn(tb, "a", "b", 10)(tx); err != nil {
			return err
		}
		return boom
	})
	if err != boom {
		t.Fatalf("err = %v, want the function's error as is", err)
	}
	if _, _, w := txCounts(c); w != 0 || runs != 1 {
		t.Fatalf("%d commits, %d runs; want 0, 1", w, runs)
	}
}

func TestTransactReadOnlyCommitsNothing(t *testing.T) {
	ctx := context.Background()
	t.Run("prefetched", func(t *testing.T) {
		c := storeDB(acctRaw("a", 1, 1, 1), acctRaw("b", 2, 1, 2))
		tb := acctTable(t, c)
		var sum int64
		err := tb.Mapper().Transact(ctx, func(tx *Tx) error {
			ga, gb := tb.TxGet(acct{ID: "a"}), tb.TxGet(acct{ID: "b"})
			if err := tx.Prefetch(ga, gb); err != nil {
				return err
			}
			a, _ := ga.Item()
			b, err := tb.In(tx).Load(acct{ID: "b"})
			sum = a.Bal + b.Bal
			return err
		})
		if err != nil || sum != 3 {
			t.Fatalf("err %v, sum %d", err, sum)
		}
		if g, tg, w := txCounts(c); g != 0 || tg != 1 || w != 0 {
			t.Fatalf("requests: %d GetItem, %d TransactGetItems, %d TransactWriteItems; want 0, 1, 0", g, tg, w)
		}
	})
	t.Run("one item", func(t *testing.T) {
		c := storeDB(acctRaw("a", 1, 1, 1))
		tb := acctTable(t, c)
		if err := tb.Mapper().Transact(ctx, func(tx *Tx) error { _, err := tb.In(tx).Load(acct{ID: "a"}); return err }); err != nil {
			t.Fatal(err)
		}
		if g, tg, w := txCounts(c); g != 1 || tg != 0 || w != 0 {
			t.Fatalf("requests: %d GetItem, %d TransactGetItems, %d TransactWriteItems; want 1, 0, 0", g, tg, w)
		}
	})
	t.Run("two reads checked together", func(t *testing.T) {
		c := storeDB(acctRaw("a", 1, 1, 1), acctRaw("b", 2, 1, 2))
		tb := acctTable(t, c)
		err := tb.Mapper().Transact(ctx, func(tx *Tx) error {
			_, err := tb.In(tx).Load(acct{ID: "a"})
			if err == nil {
				_, err = tb.In(tx).Load(acct{ID: "b"})
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if g, tg, w := txCounts(c); g != 2 || tg != 1 || w != 0 {
			t.Fatalf("requests: %d GetItem, %d TransactGetItems, %d TransactWriteItems; want 2, 1, 0", g, tg, w)
		}
	})
	t.Run("inconsistent mix runs again", func(t *testing.T) {
		c := storeDB(acctRaw("a", 10, 1, 1), acctRaw("b", 0, 1, 2))
		tb := acctTable(t, c)
		var sums []int64
		err := tb.Mapper().Transact(ctx, func(tx *Tx) error {
			a, err := tb.In(tx).Load(acct{ID: "a"})
			if err != nil {
				return err
			}
			if tx.Run() == 1 { // a transfer of 10 from a to b commits between the reads
				storeSet(c, acctRaw("a", 0, 2, 3))
				storeSet(c, acctRaw("b", 10, 2, 4))
			}
			b, err := tb.In(tx).Load(acct{ID: "b"})
			sums = append(sums, a.Bal+b.Bal)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(sums) != 2 || sums[0] != 20 || sums[1] != 10 {
			t.Fatalf("sums seen by the runs: %v; want [20 10]: the first (inconsistent) one is not returned as committed", sums)
		}
		if g, tg, w := txCounts(c); g != 2 || tg != 1 || w != 0 {
			t.Fatalf("requests: %d GetItem, %d TransactGetItems, %d TransactWriteItems; want 2, 1, 0 (the second run reuses the check's snapshot)", g, tg, w)
		}
	})
}

func TestTransactConflictReusesCancellationItems(t *testing.T) {
	c := storeDB(acctRaw("a", 100, 1, 1), acctRaw("b", 0, 1, 2))
	c.onTxWrite = txErr(func(n int, in *dynamodb.TransactWriteItemsInput) error {
		if n == 1 { // someone moved 50 out of a: its check fails, b's holds
			return txCanceled(txReason(TxCodeConditionFailed, acctRaw("a", 50, 2, 9)), txReason("None", nil))
		}
		return nil
	})
	tb := acctTable(t, c)
	var seen []int64
	err := tb.Mapper().Transact(context.Background(), func(tx *Tx) error {
		a, err := tb.In(tx).Load(acct{ID: "a"})
		if err != nil {
			return err
		}
		seen = append(seen, a.Bal)
		return transferFn(tb, "a", "b", 10)(tx)
	}, quick)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0] != 100 || seen[1] != 50 {
		t.Fatalf("a's balance seen by the runs: %v; want [100 50]", seen)
	}
	if g, tg, w := txCounts(c); g != 2 || tg != 0 || w != 2 {
		t.Fatalf("requests: %d GetItem, %d TransactGetItems, %d TransactWriteItems; want 2, 0, 2 (the second run reads nothing)", g, tg, w)
	}
	second := c.txWrites()[1]
	if second.TransactItems[0].Update.ExpressionAttributeValues[":v0"].(*types.AttributeValueMemberN).Value != "2" ||
		second.TransactItems[1].Update.ExpressionAttributeValues[":v0"].(*types.AttributeValueMemberN).Value != "1" {
		t.Errorf("the second commit checks a at 2 and b at 1: %+v", second.TransactItems)
	}
	if aws.ToString(second.ClientRequestToken) == aws.ToString(c.txWrites()[0].ClientRequestToken) {
		t.Error("the second commit reuses the first one's request token")
	}
}

func TestTransactConflictGivesUp(t *testing.T) {
	c := storeDB(acctRaw("a", 100, 1, 1), acctRaw("b", 0, 1, 2))
	c.onTxWrite = txErr(func(n int, in *dynamodb.TransactWriteItemsInput) error {
		return txCanceled(txReason(TxCodeConditionFailed, acctRaw("a", 100, int64(n)+1, byte(n+10))), txReason("None", nil))
	})
	tb := acctTable(t, c)
	runs := 0
	err := tb.Mapper().Transact(context.Background(), func(tx *Tx) error { runs++; return transferFn(tb, "a", "b", 1)(tx) },
		WithRetry(RetryPolicy{MaxAttempts: 3, BackoffBase: time.Microsecond, BackoffMax: time.Microsecond}))
	if !errors.Is(err, ErrVersionConflict) || !strings.Contains(err.Error(), "gave up after 3 runs") || runs != 3 {
		t.Fatalf("err %v after %d runs; want a version conflict after 3", err, runs)
	}
}

func TestTransactTransactionConflictResendsSameRequest(t *testing.T) {
	c := storeDB(acctRaw("a", 100, 1, 1), acctRaw("b", 0, 1, 2))
	c.onTxWrite = txErr(func(n int, in *dynamodb.TransactWriteItemsInput) error {
		if n == 1 {
			return txCanceled(txReason("None", nil), txReason(TxCodeConflict, nil))
		}
		return nil
	})
	tb := acctTable(t, c)
	runs := 0
	if err := tb.Mapper().Transact(context.Background(), func(tx *Tx) error { runs++; return transferFn(tb, "a", "b", 1)(tx) }, quick); err != nil {
		t.Fatal(err)
	}
	if len(c.txWrites()) != 2 || c.txWrites()[0] != c.txWrites()[1] || runs != 1 {
		t.Fatalf("%d sends, %d runs; want the same request sent twice by one run", len(c.txWrites()), runs)
	}
}

func TestTransactIfConditionAndStaleBlindWriteNotRerun(t *testing.T) {
	t.Run("blind write", func(t *testing.T) {
		c := storeDB()
		c.onTxWrite = txErr(func(int, *dynamodb.TransactWriteItemsInput) error {
			return txCanceled(txReason(TxCodeConditionFailed, acctRaw("a", 1, 5, 1)))
		})
		tb := acctTable(t, c)
		runs := 0
		err := tb.Mapper().Transact(context.Background(), func(tx *Tx) error {
			runs++
			_, err := tb.In(tx).Save(acct{ID: "a", Bal: 1, Version: 4}) // not read: checked against 4
			return err
		}, quick)
		var te *TxError
		if !errors.Is(err, ErrVersionConflict) || !errors.As(err, &te) || runs != 1 {
			t.Fatalf("err %v after %d runs; want the TxError after one", err, runs)
		}
		if got, _ := tb.Current(te.Failure(0).Err); got.Version != 5 {
			t.Errorf("the failure carries %+v", got)
		}
	})
	t.Run("If condition", func(t *testing.T) {
		c := storeDB(acctRaw("a", 1, 2, 1))
		c.onTxWrite = txErr(func(int, *dynamodb.TransactWriteItemsInput) error {
			return txCanceled(txReason(TxCodeConditionFailed, acctRaw("a", 1, 2, 1))) // unchanged: the If failed
		})
		tb := acctTable(t, c)
		runs := 0
		err := tb.Mapper().Transact(context.Background(), func(tx *Tx) error {
			runs++
			a, err := tb.In(tx).Load(acct{ID: "a"})
			if err != nil {
				return err
			}
			a.Bal++
			_, err = tb.In(tx).Save(a, If(expression.Name("bal").GreaterThan(expression.Value(5))))
			return err
		}, quick)
		if !errors.Is(err, ErrConditionFailed) || errors.Is(err, ErrVersionConflict) || runs != 1 {
			t.Fatalf("err %v after %d runs; want ErrConditionFailed after one", err, runs)
		}
	})
}

func TestTransactUnknownOutcomeNotRerun(t *testing.T) {
	lost := &smithy.GenericAPIError{Code: "InternalServerError", Message: "500 after apply"}
	t.Run("settled by a resend", func(t *testing.T) {
		c := storeDB(acctRaw("a", 100, 1, 1), acctRaw("b", 0, 1, 2))
		c.onTxWrite = txErr(func(n int, in *dynamodb.TransactWriteItemsInput) error {
			if n == 1 {
				return lost
			}
			return nil // the resend under the same token: DynamoDB answers success
		})
		tb := acctTable(t, c)
		runs := 0
		if err := tb.Mapper().Transact(context.Background(), func(tx *Tx) error { runs++; return transferFn(tb, "a", "b", 1)(tx) }, quick); err != nil {
			t.Fatal(err)
		}
		if len(c.txWrites()) != 2 || c.txWrites()[0] != c.txWrites()[1] || runs != 1 {
			t.Fatalf("%d sends, %d runs; want the same request (and token) sent twice by one run", len(c.txWrites()), runs)
		}
	})
	t.Run("not settled", func(t *testing.T) {
		c := storeDB(acctRaw("a", 100, 1, 1), acctRaw("b", 0, 1, 2))
		c.onTxWrite = txErr(func(int, *dynamodb.TransactWriteItemsInput) error { return lost })
		tb := acctTable(t, c)
		runs := 0
		err := tb.Mapper().Transact(context.Background(), func(tx *Tx) error { runs++; return transferFn(tb, "a", "b", 1)(tx) }, quick)
		if !errors.Is(err, ErrUnknownOutcome) || runs != 1 || len(c.txWrites()) != 1+maxResends {
			t.Fatalf("err %v, %d runs, %d sends; want ErrUnknownOutcome, 1 run, %d sends", err, runs, len(c.txWrites()), 1+maxResends)
		}
		for _, w := range c.txWrites() {
			if w != c.txWrites()[0] {
				t.Fatal("a resend is another request")
			}
		}
	})
}

func TestTransactReadYourWrites(t *testing.T) {
	c := storeDB(acctRaw("a", 100, 4, 1), acctRaw("b", 0, 1, 2))
	tb := acctTable(t, c)
	var saved acct
	err := tb.Mapper().Transact(context.Background(), func(tx *Tx) error {
		v := tb.In(tx)
		a, err := v.Load(acct{ID: "a"})
		if err != nil {
			return err
		}
		a.Bal = 1
		if _, err := v.Save(a); err != nil {
			return err
		}
		again, err := v.Load(acct{ID: "a"})
		if err != nil || again.Bal != 1 || again.Version != 5 {
			t.Errorf("Load after Save: %+v, %v; want the buffered item at version 5", again, err)
		}
		again.Bal = 2
		if saved, err = v.Save(again); err != nil { // replaces the first save; still checked against 4
			return err
		}
		if err := v.Delete(acct{ID: "b"}); err != nil {
			return err
		}
		if _, err := v.Load(acct{ID: "b"}); !errors.Is(err, ErrNotFound) {
			t.Errorf("Load after Delete: %v, want ErrNotFound", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if saved.Version != 5 || saved.Bal != 2 {
		t.Errorf("saved %+v", saved)
	}
	if g, _, _ := txCounts(c); g != 0 && g != 1 {
		t.Errorf("%d reads", g)
	}
	in := c.txWrites()[0]
	if len(in.TransactItems) != 2 || in.TransactItems[0].Update == nil || in.TransactItems[1].Delete == nil ||
		in.TransactItems[0].Update.ExpressionAttributeValues[":v0"].(*types.AttributeValueMemberN).Value != "4" ||
		in.TransactItems[0].Update.ExpressionAttributeValues[":a1"].(*types.AttributeValueMemberN).Value != "2" {
		t.Fatalf("commit: %+v", in.TransactItems)
	}
	if d := in.TransactItems[1].Delete; !strings.Contains(aws.ToString(d.ConditionExpression), "attribute_not_exists(#a2) OR attribute_type(#a2, :onull) OR #a2 = :v0") {
		t.Errorf("blind delete of b at version 0: %s", aws.ToString(d.ConditionExpression))
	}
}

func TestTransactUnversionedChecksAttributes(t *testing.T) {
	c := storeDB(map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "n"}, "text": &types.AttributeValueMemberS{Value: "hi"}, "n": plan.NumberAV(3)})
	tb, err := NewTable[note](NewMapper(c), "Notes")
	if err != nil {
		t.Fatal(err)
	}
	accts := acctTable(t, c)
	err = tb.Mapper().Transact(context.Background(), func(tx *Tx) error {
		if _, err := tb.In(tx).Load(note{ID: "n"}); err != nil {
			return err
		}
		_, err := accts.In(tx).Save(acct{ID: "new", Bal: 1}) // blind create
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	chk := c.txWrites()[0].TransactItems[0].ConditionCheck
	cond := aws.ToString(chk.ConditionExpression)
	for _, want := range []string{"attribute_exists(#kh)", "#a1 = :o1", "#a2 = :o2"} {
		if !strings.Contains(cond, want) {
			t.Errorf("check of the unversioned note %q lacks %q", cond, want)
		}
	}
}

func TestTransactLimits(t *testing.T) {
	ctx := context.Background()
	c := storeDB()
	tb := acctTable(t, c)
	m := tb.Mapper()
	t.Run("members", func(t *testing.T) {
		err := m.Transact(ctx, func(tx *Tx) error {
			for i := range MaxTxItems + 1 {
				if _, err := tb.In(tx).Save(acct{ID: "k" + plan.Itoa(int64(i))}); err != nil {
					return nil // ignored: the run fails anyway
				}
			}
			return nil
		})
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "more than 100 items (MaxTxItems)") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("size", func(t *testing.T) {
		big, err := NewTable[note](m, "Notes")
		if err != nil {
			t.Fatal(err)
		}
		err = m.Transact(ctx, func(tx *Tx) error {
			for i := range 11 {
				if _, err := big.In(tx).Save(note{ID: "k" + plan.Itoa(int64(i)), Text: strings.Repeat("x", 390<<10)}); err != nil {
					return err
				}
			}
			return nil
		})
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "4 MB") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("two types on one table", func(t *testing.T) {
		other, _ := NewTable[*acct](m, "Acct")
		type acct2 struct {
			ID string `dynamo:"id,hash"`
		}
		alias, _ := NewTable[acct2](m, "Acct")
		err := m.Transact(ctx, func(tx *Tx) error {
			tb.In(tx).Save(acct{ID: "x"})
			other.In(tx).Save(&acct{ID: "x"}) // same struct: fine
			alias.In(tx).Save(acct2{ID: "x"})
			return nil
		})
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "use one type per table") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("refused options", func(t *testing.T) {
		if err := m.Transact(ctx, func(*Tx) error { return nil }, WithRequestToken("t")); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("WithRequestToken: %v", err)
		}
		if err := m.Transact(ctx, nil); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("nil function: %v", err)
		}
		err := m.Transact(ctx, func(tx *Tx) error {
			_, err := tb.In(tx).Save(acct{ID: "x"}, WithSaveBehavior(SaveClobber))
			return err
		})
		if !errors.Is(err, ErrInvalidInput) {
			t.Errorf("SaveClobber: %v", err)
		}
	})
	if _, _, w := txCounts(c); w != 0 {
		t.Errorf("%d commits sent", w)
	}
}

func TestTransactContext(t *testing.T) {
	c := storeDB(acctRaw("a", 100, 1, 1), acctRaw("b", 0, 1, 2))
	tb := acctTable(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	runs := 0
	err := tb.Mapper().Transact(ctx, func(tx *Tx) error { runs++; return nil })
	if !errors.Is(err, context.Canceled) || runs != 0 {
		t.Fatalf("err %v, %d runs", err, runs)
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	c.onTxWrite = txErr(func(int, *dynamodb.TransactWriteItemsInput) error {
		cancel() // ends during the backoff before the second run
		return txCanceled(txReason(TxCodeConditionFailed, acctRaw("a", 100, 9, 9)), txReason("None", nil))
	})
	err = tb.Mapper().Transact(ctx, func(tx *Tx) error { runs++; return transferFn(tb, "a", "b", 1)(tx) },
		WithRetry(RetryPolicy{BackoffBase: time.Hour, BackoffMax: time.Hour}))
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrVersionConflict) || runs != 1 {
		t.Fatalf("err %v, %d runs; want cancelled after one run", err, runs)
	}
}

func TestTransactPanicAndTxnAfterRun(t *testing.T) {
	c := storeDB(acctRaw("a", 100, 1, 1))
	tb := acctTable(t, c)
	var kept *Tx
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v", r)
			}
		}()
		tb.Mapper().Transact(context.Background(), func(tx *Tx) error {
			kept = tx
			tb.In(tx).Save(acct{ID: "a"})
			panic("boom")
		})
	}()
	if _, err := tb.In(kept).Load(acct{ID: "a"}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Load through a finished Tx: %v", err)
	}
	if _, _, w := txCounts(c); w != 0 {
		t.Errorf("%d commits", w)
	}
}

// A nil *Tx (Table.In(nil)) is refused with ErrInvalidInput by every call
// on the run, and sends nothing: it used to panic taking the run's lock
// before the nil check could speak.
func TestTransactNilTxRefused(t *testing.T) {
	c := storeDB(acctRaw("a", 100, 1, 1))
	tb := acctTable(t, c)
	v := tb.In(nil)
	if _, err := v.Load(acct{ID: "a"}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Load: %v", err)
	}
	if _, err := v.Save(acct{ID: "a"}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Save: %v", err)
	}
	if err := v.Delete(acct{ID: "a"}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Delete: %v", err)
	}
	var tx *Tx
	if err := tx.Prefetch(tb.TxGet(acct{ID: "a"})); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Prefetch: %v", err)
	}
	if g, tg, tw := txCounts(c); g+tg+tw != 0 {
		t.Errorf("%d requests sent", g+tg+tw)
	}
}

// TestTransactNilTxContextAndRun: Context and Run of a nil *Tx do not
// panic, as every other call on a nil *Tx refuses instead: Context returns
// a context already done whose cause is ErrInvalidInput naming the fix (so
// that work given it stops at once, saying why), Run returns 0 (runs are
// numbered from 1).
func TestTransactNilTxContextAndRun(t *testing.T) {
	var tx *Tx
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("Context of a nil *Tx panicked: %v", r)
			}
		}()
		ctx := tx.Context()
		if ctx == nil || ctx.Err() == nil {
			t.Fatalf("Context of a nil *Tx: %v, want a context already done", ctx)
		}
		if cause := context.Cause(ctx); !errors.Is(cause, ErrInvalidInput) || !strings.Contains(cause.Error(), "Transact passes") {
			t.Errorf("Context of a nil *Tx: cause %v, want ErrInvalidInput naming the fix", cause)
		}
	}()
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("Run of a nil *Tx panicked: %v", r)
			}
		}()
		if got := tx.Run(); got != 0 {
			t.Errorf("Run of a nil *Tx = %d, want 0", got)
		}
	}()
}

func TestTransactGiveUpUnversionedIsVersionConflict(t *testing.T) {
	c := storeDB(map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "n"}, "text": &types.AttributeValueMemberS{Value: "a"}, "n": plan.NumberAV(1)})
	c.onTxWrite = txErr(func(n int, in *dynamodb.TransactWriteItemsInput) error {
		return txCanceled(txReason(TxCodeConditionFailed, map[string]types.AttributeValue{
			"id": &types.AttributeValueMemberS{Value: "n"}, "text": &types.AttributeValueMemberS{Value: "a"}, "n": plan.NumberAV(int64(n) + 1)}))
	})
	notes, err := NewTable[note](NewMapper(c), "Notes")
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	err = notes.Mapper().Transact(context.Background(), func(tx *Tx) error {
		runs++
		n, err := notes.In(tx).Load(note{ID: "n"})
		if err != nil {
			return err
		}
		if want := runs; n.N != want {
			t.Errorf("run %d saw n=%d, want %d (the item the cancellation carried)", runs, n.N, want)
		}
		n.N++
		_, err = notes.In(tx).Save(n)
		return err
	}, WithRetry(RetryPolicy{MaxAttempts: 3, BackoffBase: time.Microsecond, BackoffMax: time.Microsecond}))
	if !errors.Is(err, ErrVersionConflict) || runs != 3 {
		t.Fatalf("err %v after %d runs; want ErrVersionConflict after 3", err, runs)
	}
	if g, _, _ := txCounts(c); g != 1 {
		t.Errorf("%d reads; want 1", g)
	}
}

func TestTransactPrefetch(t *testing.T) {
	c := storeDB(acctRaw("a", 1, 1, 1), map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "n"}, "text": &types.AttributeValueMemberS{Value: "x"}, "n": plan.NumberAV(2)})
	accts := acctTable(t, c)
	notes, _ := NewTable[note](accts.Mapper(), "Notes")
	err := accts.Mapper().Transact(context.Background(), func(tx *Tx) error {
		if _, err := accts.In(tx).Save(acct{ID: "b", Bal: 7}); err != nil { // written before the Prefetch
			return err
		}
		ga, gb, gn := accts.TxGet(acct{ID: "a"}), accts.TxGet(acct{ID: "b"}), notes.TxGet(note{ID: "n"})
		if err := tx.Prefetch(ga, gb, gn, accts.TxGet(acct{ID: "a"})); err != nil {
			return err
		}
		a, okA := ga.Item()
		b, okB := gb.Item()
		n, okN := gn.Item()
		if !okA || a.Bal != 1 || !okB || b.Bal != 7 || !okN || n.N != 2 {
			t.Errorf("items: %+v %v, %+v %v, %+v %v", a, okA, b, okB, n, okN)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if g, tg, w := txCounts(c); g != 0 || tg != 1 || w != 1 || len(c.txGets()[0].TransactItems) != 2 {
		t.Fatalf("requests: %d GetItem, %d TransactGetItems (of %d), %d TransactWriteItems; want 0, 1 (of 2: a and n), 1", g, tg, len(c.txGets()[0].TransactItems), w)
	}
}

func TestTransactFailedReadFailsRun(t *testing.T) {
	c := storeDB(acctRaw("a", 1, 1, 1))
	c.onGet = func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return nil, errors.New("throttled for good")
	}
	tb := acctTable(t, c)
	err := tb.Mapper().Transact(context.Background(), func(tx *Tx) error {
		tb.In(tx).Load(acct{ID: "a"}) // error ignored: it must not read as absent
		_, err := tb.In(tx).Save(acct{ID: "b", Bal: 1})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "throttled for good") {
		t.Fatalf("err %v", err)
	}
	if _, _, w := txCounts(c); w != 0 {
		t.Errorf("%d commits", w)
	}
}
