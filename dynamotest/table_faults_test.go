package dynamotest_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
)

// fakeTB is a testing.TB whose failures, skips and clean-ups are recorded
// rather than acted on, for tests of what the helpers do to a test. Run the
// helper through run: Fatalf and Skipf end its goroutine as they would a test's.
type fakeTB struct {
	testing.TB
	ctx context.Context

	mu       sync.Mutex
	fatal    string
	errs     []string
	skipped  string
	cleanups []func()
}

func newFakeTB(t *testing.T, ctx context.Context) *fakeTB { return &fakeTB{TB: t, ctx: ctx} }

func (f *fakeTB) Helper()                  {}
func (f *fakeTB) Context() context.Context { return f.ctx }
func (f *fakeTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.fatal = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}
func (f *fakeTB) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }
func (f *fakeTB) Skipf(format string, args ...any) {
	f.mu.Lock()
	f.skipped = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}
func (f *fakeTB) Skip(args ...any) { f.Skipf("%s", fmt.Sprint(args...)) }

// run calls fn in a goroutine of its own, as a test body, and waits for it.
func (f *fakeTB) run(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	<-done
}

// runCleanups runs the recorded clean-ups, last first, as the testing package does.
func (f *fakeTB) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// tablesWithPrefix lists the tables whose names start with prefix.
func tablesWithPrefix(t *testing.T, c *dynamodb.Client, prefix string) []string {
	t.Helper()
	var names []string
	p := dynamodb.NewListTablesPaginator(c, &dynamodb.ListTablesInput{})
	for p.HasMorePages() {
		out, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatalf("ListTables: %v", err)
		}
		for _, n := range out.TableNames {
			if strings.HasPrefix(n, prefix) {
				names = append(names, n)
			}
		}
	}
	return names
}

// TestKeyTableLostCreateAnswer loses the answers to CreateTable: once (the
// SDK's retry meets the table its first attempt made), and more often than
// the SDK retries. KeyTable must return the table, not fail with "Cannot
// create preexisting table", and the table must go at the end of the test.
func TestKeyTableLostCreateAnswer(t *testing.T) {
	t.Parallel()
	for _, lost := range []int{1, 5} {
		t.Run(fmt.Sprintf("lost=%d", lost), func(t *testing.T) {
			prefix := fmt.Sprintf("lostcreate%d", lost)
			plain := dynamotest.Client(t)
			fake := newFakeTB(t, t.Context())
			d := dynamotest.NewDropper("CreateTable")
			c := d.Client(fake, dynamotest.FastRetries)
			d.Arm(lost)
			var name string
			fake.run(func() {
				name = dynamotest.KeyTable(fake, c, prefix, "pk", types.ScalarAttributeTypeS, "", "")
			})
			if fake.fatal != "" {
				fake.runCleanups()
				t.Fatalf("KeyTable failed: %s", fake.fatal)
			}
			if d.Dropped() != lost {
				t.Errorf("dropped %d answers, want %d", d.Dropped(), lost)
			}
			if _, err := plain.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: &name}); err != nil {
				t.Errorf("DescribeTable %s: %v", name, err)
			}
			fake.runCleanups()
			if len(fake.errs) > 0 {
				t.Errorf("clean-up reported errors: %v", fake.errs)
			}
			if left := tablesWithPrefix(t, plain, prefix+"-"); len(left) > 0 {
				t.Errorf("tables left behind: %v", left)
			}
		})
	}
}

// TestCreateTableFailureLeavesNoTable makes CreateTable fail after the server
// made the table (the test's context ends while the answer is lost): the
// clean-up must already be registered, and delete it.
func TestCreateTableFailureLeavesNoTable(t *testing.T) {
	t.Parallel()
	const prefix = "failedcreate"
	plain := dynamotest.Client(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	fake := newFakeTB(t, ctx)
	d := dynamotest.NewDropper("CreateTable")
	c := d.Client(fake)
	d.ArmThen(cancel)
	fake.run(func() {
		dynamotest.KeyTable(fake, c, prefix, "pk", types.ScalarAttributeTypeS, "", "")
	})
	if fake.fatal == "" {
		t.Fatalf("KeyTable succeeded under a canceled context")
	}
	t.Logf("KeyTable failed as it should: %s", fake.fatal)
	if d.Sent() != 1 {
		t.Errorf("sent %d CreateTable requests, want 1", d.Sent())
	}
	fake.runCleanups()
	if len(fake.errs) > 0 {
		t.Errorf("clean-up reported errors: %v", fake.errs)
	}
	if left := tablesWithPrefix(t, plain, prefix+"-"); len(left) > 0 {
		t.Errorf("tables left behind: %v", left)
	}
}

// TestKeyTableUnderFaults creates and deletes tables through a client that
// loses, refuses and fails a good share of its requests: every KeyTable must
// succeed and every table must go at clean-up.
func TestKeyTableUnderFaults(t *testing.T) {
	t.Parallel()
	const prefix = "underfaults"
	plain := dynamotest.Client(t)
	f := dynamotest.NewFaults(dynamotest.FaultConfig{Seed: 7, Drop: 0.3, ServerError: 0.1, Throttle: 0.1, Reset: 0.1}, nil)
	fake := newFakeTB(t, t.Context())
	c := f.Client(fake)
	for i := range 10 {
		fake.run(func() {
			dynamotest.KeyTable(fake, c, prefix, "pk", types.ScalarAttributeTypeS, "sk", types.ScalarAttributeTypeN)
		})
		if fake.fatal != "" {
			fake.runCleanups()
			t.Fatalf("KeyTable %d failed: %s", i, fake.fatal)
		}
	}
	fake.runCleanups()
	t.Log(f.Stats())
	if len(fake.errs) > 0 {
		t.Errorf("clean-up reported errors: %v", fake.errs)
	}
	if left := tablesWithPrefix(t, plain, prefix+"-"); len(left) > 0 {
		t.Errorf("tables left behind: %v", left)
	}
}

// TestCreateTableBadInputFailsAtOnce: an input the SDK refuses before
// sending is not retried as a lost answer would be (until the minute is up).
func TestCreateTableBadInputFailsAtOnce(t *testing.T) {
	if dynamotest.ShortWithoutServer() {
		t.Skip("needs DynamoDB (-short)")
	}
	t.Parallel()
	fake := newFakeTB(t, t.Context())
	cnt := dynamotest.NewCounter(nil)
	c := cnt.Client(fake)
	fake.run(func() {
		// A key schema element without a name: the SDK refuses it before sending.
		dynamotest.CreateTable(fake, c, &dynamodb.CreateTableInput{TableName: strPtr("badinput"),
			KeySchema: []types.KeySchemaElement{{KeyType: types.KeyTypeHash}}})
	})
	fake.runCleanups()
	if fake.fatal == "" || !strings.Contains(fake.fatal, "creating table badinput-") ||
		strings.Contains(fake.fatal, "context deadline exceeded") {
		t.Fatalf("fatal = %q; want the SDK's refusal, at once", fake.fatal)
	}
	if n := cnt.Count(); n != 1 {
		t.Errorf("%d requests; want 1, the DeleteTable of the clean-up", n)
	}
	t.Logf("failed as it should: %s", fake.fatal)
}

func strPtr(s string) *string { return &s }
