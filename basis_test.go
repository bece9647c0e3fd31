package dynamo

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/itemstate"
	"github.com/ddbkit/dynamo/internal/plan"
)

// foreignItems are the items a foreign writer may create under key ISBN "1"
// between an Update's read (absent) and its write, on which the old version
// condition ("version absent or 0") holds: version 0 (Java's CLOBBER holding
// −1) and no version attribute (a backfill, a raw PutItem).
func foreignBooks() map[itemstate.Kind]map[string]types.AttributeValue {
	s := itemstate.Schema{Version: "version", Token: DefaultWriteTokenAttribute,
		Attrs: map[string]types.AttributeValue{"title": str("theirs")}}
	out := map[itemstate.Kind]map[string]types.AttributeValue{}
	for _, st := range itemstate.States(s) {
		if st.Kind == itemstate.Version0 || st.Kind == itemstate.NoVersion {
			out[st.Kind] = st.Item(map[string]types.AttributeValue{"ISBN": str("1")})
		}
	}
	return out
}

// requiresAbsence reports whether cond holds only where the item is absent
// (attribute_not_exists of the hash key): the stubs' stand-in for
// DynamoDB's evaluation on an item a foreign writer created.
func requiresAbsence(cond *string) bool {
	return strings.Contains(aws.ToString(cond), "attribute_not_exists("+plan.HashNamePH+")")
}

// A write Update computed from an absent item commits only over absence:
// when a foreign writer created the item meanwhile (version 0, or no version
// attribute), the write fails and the function runs again on the stored
// item, whose title it keeps.
func TestUpdateFromAbsentDoesNotOverwriteForeignItem(t *testing.T) {
	for kind, foreign := range foreignBooks() {
		t.Run(string(kind), func(t *testing.T) {
			c := &fakeDB{noStore: true, onGet: func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
				return &dynamodb.GetItemOutput{}, nil
			}}
			c.onUpd = func(_ int, in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
				if len(c.upds()) == 1 && requiresAbsence(in.ConditionExpression) {
					return nil, ccf(foreign)
				}
				return &dynamodb.UpdateItemOutput{}, nil
			}
			books := newBooks(t, c, WithRetry(RetryPolicy{BackoffBase: time.Nanosecond, BackoffMax: time.Nanosecond}))
			var seen []string
			saved, err := books.Update(context.Background(), Book{ISBN: "1"}, func(b Book) (Book, error) {
				seen = append(seen, b.Title)
				b.Title += "+mine"
				return b, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(seen, ",") != ",theirs" || saved.Title != "theirs+mine" {
				t.Fatalf("fn saw %q, saved %q: want the function run again on the foreign item (its title kept)", seen, saved.Title)
			}
			if !requiresAbsence(c.upds()[0].ConditionExpression) {
				t.Errorf("the write computed from absence has condition %q: it must require the key's absence", aws.ToString(c.upds()[0].ConditionExpression))
			}
		})
	}
}

// A Transact write computed from an absent item commits only over absence:
// when a foreign writer created the item before the commit (version 0, or
// no version attribute), the commit is cancelled and the function runs
// again on the stored item.
func TestTransactFromAbsentDoesNotOverwriteForeignItem(t *testing.T) {
	s := itemstate.Schema{Version: "version", Token: DefaultWriteTokenAttribute,
		Attrs: map[string]types.AttributeValue{"bal": plan.NumberAV(100)}}
	for _, st := range itemstate.States(s) {
		if st.Kind != itemstate.Version0 && st.Kind != itemstate.NoVersion {
			continue
		}
		t.Run(st.String(), func(t *testing.T) {
			foreign := st.Item(map[string]types.AttributeValue{"id": str("x")})
			c := storeDB()
			c.onTxWrite = txErr(func(n int, in *dynamodb.TransactWriteItemsInput) error {
				if n == 1 {
					storeSet(c, foreign) // between the function's read and the commit
					if requiresAbsence(in.TransactItems[0].Update.ConditionExpression) {
						return txCanceled(txReason(TxCodeConditionFailed, foreign))
					}
				}
				return nil
			})
			tb := acctTable(t, c)
			var seen []int64
			err := tb.Mapper().Transact(context.Background(), func(tx *Tx) error {
				a, err := tb.In(tx).Load(acct{ID: "x"})
				switch {
				case errors.Is(err, ErrNotFound):
					a = acct{ID: "x"}
					seen = append(seen, -1)
				case err != nil:
					return err
				default:
					seen = append(seen, a.Bal)
				}
				a.Bal += 10
				_, err = tb.In(tx).Save(a)
				return err
			}, quick)
			if err != nil {
				t.Fatal(err)
			}
			if len(seen) != 2 || seen[1] != 100 {
				t.Fatalf("the runs saw balances %v (-1: absent): want the function run again on the foreign item's 100", seen)
			}
			if !requiresAbsence(c.txWrites()[0].TransactItems[0].Update.ConditionExpression) {
				t.Errorf("the commit computed from absence has condition %q: it must require the key's absence", aws.ToString(c.txWrites()[0].TransactItems[0].Update.ConditionExpression))
			}
		})
	}
}

// counter is a versioned item for the foreign-state tests on DynamoDB Local.
type counter struct {
	ID      string `dynamo:"id,hash"`
	N       int64  `dynamo:"n"`
	Version int64  `dynamo:"v,version"`
}

// On DynamoDB Local: a write computed from an absent item — by Update, by
// Transact — never lands on the item a foreign writer created between the
// read and the write with version 0 or without a version attribute (a raw
// PutItem): the write fails and the function runs again on the stored item,
// whose count it keeps. Add counts on such an item too.
func TestForeignItemCreatedAfterAbsentReadIsKept(t *testing.T) {
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "foreign", "id", types.ScalarAttributeTypeS, "", "")
	tb, err := NewTable[counter](NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	schema := itemstate.Schema{Version: "v", Token: DefaultWriteTokenAttribute, Attrs: map[string]types.AttributeValue{"n": plan.NumberAV(5)}}
	for _, st := range itemstate.States(schema) {
		if st.Kind != itemstate.Version0 && st.Kind != itemstate.NoVersion {
			continue
		}
		key := func(op string) map[string]types.AttributeValue {
			return map[string]types.AttributeValue{"id": str(op + " " + st.String())}
		}
		check := func(op string, runs int, got counter) {
			t.Helper()
			stored, err := tb.Load(ctx, counter{ID: op + " " + st.String()}, ConsistentRead())
			if err != nil {
				t.Fatal(err)
			}
			if stored.N != 6 || got.N != 6 {
				t.Errorf("%s over %s: stored n = %d, returned %d, function ran %d times: want 6 (the foreign item's 5 plus one)", op, st, stored.N, got.N, runs)
			}
		}

		runs := 0
		got, err := tb.Update(ctx, counter{ID: "update " + st.String()}, func(cur counter) (counter, error) {
			runs++
			if runs == 1 {
				if err := itemstate.Put(ctx, c, name, key("update"), st); err != nil {
					return cur, err
				}
			}
			cur.N++
			return cur, nil
		})
		if err != nil {
			t.Fatalf("Update over %s: %v", st, err)
		}
		check("update", runs, got)

		runs = 0
		err = tb.Mapper().Transact(ctx, func(tx *Tx) error {
			runs++
			cur, err := tb.In(tx).Load(counter{ID: "transact " + st.String()})
			if errors.Is(err, ErrNotFound) {
				cur, err = counter{ID: "transact " + st.String()}, nil
				if runs == 1 {
					err = itemstate.Put(ctx, c, name, key("transact"), st)
				}
			}
			if err != nil {
				return err
			}
			cur.N++
			got, err = tb.In(tx).Save(cur)
			return err
		})
		if err != nil {
			t.Fatalf("Transact over %s: %v", st, err)
		}
		check("transact", runs, got)

		if err := itemstate.Put(ctx, c, name, key("add"), st); err != nil {
			t.Fatal(err)
		}
		got, err = tb.Add(ctx, counter{ID: "add " + st.String()}, Increment("n", 1))
		if err != nil {
			t.Fatalf("Add over %s: %v", st, err)
		}
		check("add", 1, got)
	}
}
