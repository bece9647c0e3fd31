package dynamo

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/backoff"
	"github.com/ddbkit/dynamo/internal/plan"
)

// Each kind of call takes its own defaults; a mapper policy overrides them
// field by field (except for polling), and a per-call policy overrides the
// mapper's.
func TestRetryPolicyLayers(t *testing.T) {
	plain := NewMapper(&fakeDB{noStore: true})
	tuned := NewMapper(&fakeDB{noStore: true}, WithRetry(RetryPolicy{MaxAttempts: 7}))
	for _, tc := range []struct {
		name string
		m    *Mapper
		kind retryKind
		call RetryPolicy
		set  bool
		want RetryPolicy
	}{
		{"update default", plain, policyUpdate, RetryPolicy{}, false, RetryPolicy{100, 2 * time.Millisecond, 100 * time.Millisecond}},
		{"tx default", plain, policyTx, RetryPolicy{}, false, RetryPolicy{8, 10 * time.Millisecond, 500 * time.Millisecond}},
		{"poll default", plain, policyPoll, RetryPolicy{}, false, RetryPolicy{0, 20 * time.Millisecond, time.Second}},
		{"mapper over update default", tuned, policyUpdate, RetryPolicy{}, false, RetryPolicy{7, 2 * time.Millisecond, 100 * time.Millisecond}},
		{"mapper over tx default", tuned, policyTx, RetryPolicy{}, false, RetryPolicy{7, 10 * time.Millisecond, 500 * time.Millisecond}},
		{"mapper not over polling", tuned, policyPoll, RetryPolicy{}, false, RetryPolicy{0, 20 * time.Millisecond, time.Second}},
		{"call over mapper", tuned, policyBatch, RetryPolicy{BackoffMax: time.Second}, true, RetryPolicy{7, 2 * time.Millisecond, time.Second}},
		{"call over mapper attempts", tuned, policyBatch, RetryPolicy{MaxAttempts: 2}, true, RetryPolicy{2, 2 * time.Millisecond, 100 * time.Millisecond}},
	} {
		got, err := tc.m.retryPolicy(tc.kind, tc.call, tc.set, "test")
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

// A policy no call can follow is refused before anything is sent, naming
// where it was given: by NewTable for the mapper's, by the call for its own.
func TestRetryPolicyRefused(t *testing.T) {
	_, err := NewTable[Book](NewMapper(&fakeDB{noStore: true}, WithRetry(RetryPolicy{BackoffBase: -1})), "Books")
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "NewMapper option WithRetry") {
		t.Errorf("NewTable with a negative backoff: %v", err)
	}
	c := &fakeDB{noStore: true}
	books, _ := txTables(t, c)
	bad := WithRetry(RetryPolicy{BackoffBase: time.Second, BackoffMax: time.Millisecond})
	if err := books.Mapper().WriteTx(context.Background(), []TxOp{books.TxSave(Book{ISBN: "1"})}, bad); !errors.Is(err, ErrInvalidInput) ||
		!strings.Contains(err.Error(), "WriteTx option WithRetry") {
		t.Errorf("WriteTx: %v", err)
	}
	if err := books.Mapper().ReadTx(context.Background(), []TxGetOp{books.TxGet(Book{ISBN: "1"})}, bad); !errors.Is(err, ErrInvalidInput) ||
		!strings.Contains(err.Error(), "ReadTx option WithRetry") {
		t.Errorf("ReadTx: %v", err)
	}
	if _, err := books.BatchLoad(context.Background(), []Book{{ISBN: "1"}}, bad); !errors.Is(err, ErrInvalidInput) ||
		!strings.Contains(err.Error(), "BatchLoad option WithRetry") {
		t.Errorf("BatchLoad: %v", err)
	}
	if len(c.txWrites()) != 0 {
		t.Errorf("%d transactions sent", len(c.txWrites()))
	}
	stub := &fakeDB{noStore: true}
	if err := newTestTable[ctMovie](t, stub, "Movies").CreateTable(context.Background(), bad); !errors.Is(err, ErrInvalidInput) || len(stub.ops()) != 0 {
		t.Errorf("CreateTable: %v after %v", err, stub.ops())
	}
}

// WithRetry bounds CreateTable's polling: a table that never becomes ACTIVE
// is an error after MaxAttempts polls, not a wait until ctx ends.
func TestCreateTablePollBound(t *testing.T) {
	stub := &fakeDB{noStore: true, onDescribe: describing(func(int) (*types.TableDescription, error) {
		return &types.TableDescription{TableStatus: types.TableStatusCreating}, nil
	})}
	err := newTestTable[ctMovie](t, stub, "Movies").CreateTable(context.Background(),
		WithRetry(RetryPolicy{MaxAttempts: 3, BackoffBase: time.Nanosecond, BackoffMax: time.Nanosecond}))
	if err == nil || !strings.Contains(err.Error(), "after 3 polls") || stub.count("DescribeTable") != 3 {
		t.Errorf("err = %v after %d polls; want an error after 3", err, stub.count("DescribeTable"))
	}
}

// The mapper's policy governs Update: MaxAttempts 2 gives up after two
// conflicting writes.
func TestUpdateTakesMapperPolicy(t *testing.T) {
	c := &fakeDB{noStore: true,
		onGet: func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
			return &dynamodb.GetItemOutput{}, nil
		},
	}
	writes := 0
	c.onUpd = func(int, *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		writes++
		return nil, ccf(map[string]types.AttributeValue{"ISBN": str("1"), "version": n(plan.Itoa(int64(writes) + 10))})
	}
	books := newBooks(t, c, WithRetry(RetryPolicy{MaxAttempts: 2, BackoffBase: time.Nanosecond, BackoffMax: time.Nanosecond}))
	_, err := books.Update(context.Background(), Book{ISBN: "1"}, func(b Book) (Book, error) { return b, nil })
	if !errors.Is(err, ErrVersionConflict) || writes != 2 || !strings.Contains(err.Error(), "after 2 attempts") {
		t.Errorf("err = %v after %d writes; want a conflict after 2", err, writes)
	}
}

// A policy that sets only BackoffBase above the default BackoffMax (100 ms
// for batches) does not have its waits silently capped below BackoffBase:
// the resolved BackoffMax is at least BackoffBase. Huge values resolve
// without overflow.
func TestRetryBaseAboveDefaultMax(t *testing.T) {
	for _, base := range []time.Duration{time.Second, time.Duration(math.MaxInt64)} {
		m := NewMapper(&fakeDB{noStore: true})
		p, err := m.retryPolicy(policyBatch, RetryPolicy{BackoffBase: base, MaxAttempts: math.MaxInt}, true, "WithRetry")
		if err != nil {
			t.Fatal(err)
		}
		if p.BackoffMax < p.BackoffBase {
			t.Errorf("call policy base %v: resolved %+v: BackoffMax below BackoffBase caps every wait below the base asked for", base, p)
		}
		for n := 1; n < 100; n += 17 {
			if d := backoff.Jitter(n, p.BackoffBase, p.BackoffMax); d < 0 {
				t.Errorf("backoff(%d) = %v", n, d)
			}
		}
		mm := NewMapper(&fakeDB{noStore: true}, WithRetry(RetryPolicy{BackoffBase: base}))
		if p, _ := mm.retryPolicy(policyTx, RetryPolicy{}, false, ""); p.BackoffMax < p.BackoffBase {
			t.Errorf("mapper policy base %v: resolved %+v", base, p)
		}
	}
}
