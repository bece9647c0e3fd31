package integration

// Regression tests of issue "A version number is not an identity": each
// case places another client's delete (and re-creation) or write between a
// write that DynamoDB applied and the moment its lost answer would have
// been resent. The mapper must never apply a write twice, never delete or
// overwrite another incarnation of an item, and say ErrUnknownOutcome when
// it cannot tell.

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/ident"
)

type incJob struct {
	ID      string   `dynamo:"id,hash"`
	Jobs    []string `dynamo:"jobs"`
	Owner   string   `dynamo:"owner"`
	Version int64    `dynamo:"v,version"`
}

// incTables returns a table of incJob reached through a Dropper of op,
// the same table through a plain client (the other process), and the name.
func incTables(t *testing.T, op string, opts ...dynamo.Option) (*dynamo.Table[incJob], *dynamo.Table[incJob], *dynamotest.Dropper, string) {
	t.Helper()
	d := dynamotest.NewDropper(op)
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "inc", "id", types.ScalarAttributeTypeS, "", "")
	mine, err := dynamo.NewTable[incJob](dynamo.NewMapper(d.Client(t), opts...), name)
	if err != nil {
		t.Fatal(err)
	}
	other, err := dynamo.NewTable[incJob](dynamo.NewMapper(dynamotest.Client(t)), name)
	if err != nil {
		t.Fatal(err)
	}
	return mine, other, d, name
}

func mustUnknown(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, dynamo.ErrUnknownOutcome) || !strings.Contains(err.Error(), "may have been applied") {
		t.Fatalf("err = %v; want ErrUnknownOutcome saying the write may have been applied", err)
	}
}

// Case 1: an Update that creates the item (holding 0) is applied, its answer
// lost; another client deletes the item. A resend would create it again: the
// job enqueued twice. Update must not apply it again.
func TestIncarnationCreateNotReapplied(t *testing.T) {
	mine, other, d, _ := incTables(t, "UpdateItem")
	c := ctx(t)
	d.ArmThen(func() {
		if err := other.Delete(c, incJob{ID: "q"}, dynamo.WithSaveBehavior(dynamo.SaveClobber)); err != nil {
			t.Error(err)
		}
	})
	calls := 0
	_, err := mine.Update(c, incJob{ID: "q"}, func(j incJob) (incJob, error) {
		calls++
		j.Jobs = append(j.Jobs, "job-1")
		return j, nil
	})
	if d.Dropped() != 1 {
		t.Fatalf("dropped %d answers, the test needs 1", d.Dropped())
	}
	mustUnknown(t, err)
	if calls != 1 {
		t.Errorf("fn called %d times, want 1", calls)
	}
	if _, err := other.Load(c, incJob{ID: "q"}, dynamo.ConsistentRead()); !errors.Is(err, dynamo.ErrNotFound) {
		t.Errorf("Load after = %v; want the item still deleted (never created twice)", err)
	}
	// With nobody in between, the lost answer of a create is settled as the
	// success it was.
	d.Arm(1)
	saved, err := mine.Update(c, incJob{ID: "r"}, func(j incJob) (incJob, error) {
		j.Jobs = append(j.Jobs, "job-2")
		return j, nil
	})
	if err != nil || saved.Version != 1 || d.Dropped() != 2 {
		t.Fatalf("Update after a lost answer alone = %+v, %v; want version 1", saved, err)
	}
}

// Case 2: a Delete of v1 is applied, its answer lost; another client creates
// the key again (v1, acknowledged). The new item must survive.
func TestIncarnationDeleteSparesNewItem(t *testing.T) {
	mine, other, d, _ := incTables(t, "DeleteItem")
	c := ctx(t)
	v1, err := mine.Save(c, incJob{ID: "k", Owner: "first"})
	if err != nil {
		t.Fatal(err)
	}
	d.ArmThen(func() {
		if _, err := other.Save(c, incJob{ID: "k", Owner: "second"}); err != nil {
			t.Error(err)
		}
	})
	err = mine.Delete(c, v1)
	if d.Dropped() != 1 {
		t.Fatalf("dropped %d answers, the test needs 1", d.Dropped())
	}
	if err != nil {
		mustUnknown(t, err)
	}
	got, lerr := other.Load(c, incJob{ID: "k"}, dynamo.ConsistentRead())
	if lerr != nil || got.Owner != "second" || got.Version != 1 {
		t.Fatalf("the item created again: %+v, %v; want it kept (owner second, v1)", got, lerr)
	}
	if cur, cerr := mine.Current(err); cerr != nil || cur.Owner != "second" {
		t.Errorf("Current(err) = %+v, %v; want the item found", cur, cerr)
	}
}

// Case 3: a Delete (held 3) is applied, its answer lost, the item created
// again at v1: not a plain conflict that invites a second delete. Nor is a
// Delete with If whose item is gone afterwards.
func TestIncarnationDeleteOutcome(t *testing.T) {
	mine, other, d, _ := incTables(t, "DeleteItem")
	c := ctx(t)
	v, _ := mine.Save(c, incJob{ID: "k"})
	v, _ = mine.Save(c, v)
	v, err := mine.Save(c, v)
	if err != nil || v.Version != 3 {
		t.Fatal(v, err)
	}
	d.ArmThen(func() {
		if _, err := other.Save(c, incJob{ID: "k", Owner: "new"}); err != nil {
			t.Error(err)
		}
	})
	err = mine.Delete(c, v)
	mustUnknown(t, err)
	if errors.Is(err, dynamo.ErrConditionFailed) {
		t.Errorf("err %v also says condition failed", err)
	}

	// With If: applied, answer lost, nothing there afterwards: someone
	// else's delete (whose item ours might have refused) looks the same, so
	// ErrUnknownOutcome — never a plain conflict.
	v, _ = mine.Save(c, incJob{ID: "i", Owner: "o"})
	d.Arm(1)
	err = mine.Delete(c, v, dynamo.If(expression.Name("owner").Equal(expression.Value("o"))))
	mustUnknown(t, err)
	if errors.Is(err, dynamo.ErrConditionFailed) {
		t.Errorf("err %v says the condition failed", err)
	}
}

// Case 4: SaveClobber applied, answer lost, another client's version-checked
// Update lands on top: a resend would clobber it again and lose the
// acknowledged Update. Same with If, and with write tokens off.
func TestIncarnationClobberKeepsAcknowledgedUpdate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []dynamo.Option
		wo   []dynamo.WriteOption
	}{
		{"tokens on", nil, nil},
		{"with If", nil, []dynamo.WriteOption{dynamo.If(expression.AttributeExists(expression.Name("id")))}},
		{"tokens off", []dynamo.Option{dynamo.WithWriteTokenAttribute("")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mine, other, d, _ := incTables(t, "UpdateItem", tc.opts...)
			c := ctx(t)
			if _, err := other.Save(c, incJob{ID: "k", Owner: "start"}); err != nil {
				t.Fatal(err)
			}
			d.ArmThen(func() {
				if _, err := other.Update(c, incJob{ID: "k"}, func(j incJob) (incJob, error) {
					j.Jobs = append(j.Jobs, "acknowledged")
					return j, nil
				}); err != nil {
					t.Error(err)
				}
			})
			_, err := mine.Save(c, incJob{ID: "k", Owner: "clobber"}, append([]dynamo.WriteOption{dynamo.WithSaveBehavior(dynamo.SaveClobber)}, tc.wo...)...)
			if d.Dropped() != 1 {
				t.Fatalf("dropped %d answers, the test needs 1", d.Dropped())
			}
			if err != nil {
				mustUnknown(t, err)
			}
			got, _ := other.Load(c, incJob{ID: "k"}, dynamo.ConsistentRead())
			if !slices.Contains(got.Jobs, "acknowledged") || got.Version != 3 {
				t.Errorf("stored %+v; want the acknowledged Update kept, version 3 (clobber applied once)", got)
			}
		})
	}
}

// Case 6: an item stored at version 0 (Java v1's CLOBBER holding -1 stores
// 0; backfills seed 0) loads, saves to 1, updates and deletes; a stale holder
// of 0 still conflicts.
func TestIncarnationVersionZero(t *testing.T) {
	_, tb, _, name := incTables(t, "UpdateItem")
	c := ctx(t)
	putRaw := func(id string) {
		t.Helper()
		rawPut(t, name, map[string]types.AttributeValue{
			"id": &types.AttributeValueMemberS{Value: id}, "owner": &types.AttributeValueMemberS{Value: "java"},
			"v": &types.AttributeValueMemberN{Value: "0"},
		})
	}
	putRaw("z")
	got, err := tb.Load(c, incJob{ID: "z"})
	if err != nil || got.Version != 0 || got.Owner != "java" {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	saved, err := tb.Save(c, got)
	if err != nil || saved.Version != 1 {
		t.Fatalf("Save of a version-0 item = %+v, %v; want version 1", saved, err)
	}
	if _, err := tb.Save(c, got); !errors.Is(err, dynamo.ErrVersionConflict) {
		t.Fatalf("stale holder of 0 = %v; want a conflict", err)
	}
	putRaw("u")
	up, err := tb.Update(c, incJob{ID: "u"}, func(j incJob) (incJob, error) { j.Owner = "go"; return j, nil })
	if err != nil || up.Version != 1 || up.Owner != "go" {
		t.Fatalf("Update of a version-0 item = %+v, %v", up, err)
	}
	putRaw("d")
	if err := tb.Delete(c, incJob{ID: "d"}); err != nil {
		t.Fatalf("Delete of a version-0 item: %v", err)
	}
}

// Case 12: an error after an attempt that may have been applied says so —
// here the context ends between the lost answer and anything that could
// settle it. The increment is applied once at most.
func TestIncarnationErrorAfterMaybeApplied(t *testing.T) {
	mine, other, d, _ := incTables(t, "UpdateItem")
	base := ctx(t)
	if _, err := other.Save(base, incJob{ID: "k"}); err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithCancel(base)
	d.ArmThen(cancel)
	_, err := mine.Update(c, incJob{ID: "k"}, func(j incJob) (incJob, error) {
		j.Jobs = append(j.Jobs, "x")
		return j, nil
	})
	mustUnknown(t, err)
	got, _ := other.Load(base, incJob{ID: "k"}, dynamo.ConsistentRead())
	if len(got.Jobs) != 1 || got.Version != 2 {
		t.Errorf("stored %+v; want the change applied exactly once", got)
	}
}

// WriteTx: the context ends while an attempt is under way (its answer lost):
// ErrUnknownOutcome, not a plain error; resending with the same request
// token settles it without writing twice.
func TestIncarnationWriteTxUnknown(t *testing.T) {
	d := dynamotest.NewDropper("TransactWriteItems")
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "inc", "id", types.ScalarAttributeTypeS, "", "")
	m := dynamo.NewMapper(d.Client(t))
	tb, _ := dynamo.NewTable[incJob](m, name)
	base := ctx(t)
	c, cancel := context.WithCancel(base)
	d.ArmThen(cancel)
	ops := []dynamo.TxOp{tb.TxSave(incJob{ID: "a"}), tb.TxSave(incJob{ID: "b"})}
	token := "settle-me-" + ident.RandomHex(8) // unique: a server may outlive a test run, and remembers tokens for 10 minutes
	err := m.WriteTx(c, ops, dynamo.WithRequestToken(token))
	if !errors.Is(err, dynamo.ErrUnknownOutcome) {
		t.Fatalf("WriteTx = %v; want ErrUnknownOutcome", err)
	}
	if err := m.WriteTx(base, ops, dynamo.WithRequestToken(token)); err != nil {
		t.Fatalf("resend with the same token: %v; want success without writing again", err)
	}
	got, _ := tb.Load(base, incJob{ID: "a"}, dynamo.ConsistentRead())
	if got.Version != 1 {
		t.Errorf("version %d after the resend, want 1", got.Version)
	}
}

// rawPut writes item into table as it is, past the mapper.
func rawPut(t *testing.T, table string, item map[string]types.AttributeValue) {
	t.Helper()
	if _, err := dynamotest.Client(t).PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
		t.Fatal(err)
	}
}

// Every call on a missing table says so with ErrTableNotFound; NewTable
// refuses a Mapper without a client; Current(nil) says what to pass.
func TestTableNotFoundEverywhere(t *testing.T) {
	c := dynamotest.Client(t)
	tb, err := dynamo.NewTable[incJob](dynamo.NewMapper(c), "no-such-table-here")
	if err != nil {
		t.Fatal(err)
	}
	x := ctx(t)
	calls := map[string]error{}
	_, calls["Load"] = tb.Load(x, incJob{ID: "k"})
	_, calls["Save"] = tb.Save(x, incJob{ID: "k"})
	calls["Delete"] = tb.Delete(x, incJob{ID: "k"})
	_, calls["Update"] = tb.Update(x, incJob{ID: "k"}, func(j incJob) (incJob, error) { return j, nil })
	calls["WriteTx"] = tb.Mapper().WriteTx(x, []dynamo.TxOp{tb.TxSave(incJob{ID: "k"})})
	for name, err := range calls {
		if !errors.Is(err, dynamo.ErrTableNotFound) || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("%s on a missing table: %v; want ErrTableNotFound", name, err)
		}
	}
	if _, err := dynamo.NewTable[incJob](dynamo.NewMapper(nil), "t"); !errors.Is(err, dynamo.ErrInvalidInput) {
		t.Errorf("NewTable with a nil client: %v; want ErrInvalidInput", err)
	}
	if _, err := tb.Current(nil); !errors.Is(err, dynamo.ErrInvalidInput) {
		t.Errorf("Current(nil) = %v; want ErrInvalidInput", err)
	}
}
