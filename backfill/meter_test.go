package backfill

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
)

// fakeScans answers Scans with a consumed capacity of units, failing the
// first throttle requests with ProvisionedThroughputExceededException.
type fakeScans struct {
	dynamo.Client
	units    float64
	mu       sync.Mutex
	throttle int
	calls    int
	sentAt   []time.Time
	clk      clock.Clock
}

func (f *fakeScans) Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.sentAt = append(f.sentAt, f.clk.Now())
	if in.ReturnConsumedCapacity != types.ReturnConsumedCapacityTotal {
		panic("the meter must ask for the consumed capacity")
	}
	if f.throttle > 0 {
		f.throttle--
		return nil, &smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException", Message: "slow down"}
	}
	return &dynamodb.ScanOutput{ConsumedCapacity: &types.ConsumedCapacity{CapacityUnits: aws.Float64(f.units)}}, nil
}

// drive advances clk to each pending timer until done is closed, and
// returns how far it advanced.
func drive(clk *clock.Fake, done <-chan struct{}) time.Duration {
	var total time.Duration
	for clk.BlockUntil(done, 1) {
		d, _ := clk.Next()
		clk.Advance(d)
		total += d
	}
	return total
}

// TestBudgetHoldsReadsToTheRate: with a read budget of 10 units/s and scans
// consuming 5 units each, ten scans (50 units) take 3.5 s: one second's
// burst, then each scan waits until the debt of the one before is paid.
func TestBudgetHoldsReadsToTheRate(t *testing.T) {
	clk := clock.NewFake(time.Unix(1e9, 0))
	f := &fakeScans{units: 5, clk: clk}
	m := &meter{Client: f, clk: clk, maxBackoff: time.Second, reads: newBudget(clk, 10), writes: newBudget(clk, 0)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 10 {
			if _, err := m.Scan(t.Context(), &dynamodb.ScanInput{}); err != nil {
				t.Error(err)
			}
		}
	}()
	took := drive(clk, done)
	if took != 3500*time.Millisecond {
		t.Errorf("10 scans of 5 units at 10 units/s took %v, want 3.5s", took)
	}
	if got := m.readUse.milli.Load(); got != 50_000 {
		t.Errorf("counted %d milli-units, want 50000", got)
	}
}

// TestUnlimitedBudgetNeverWaits: a zero rate sends at once.
func TestUnlimitedBudgetNeverWaits(t *testing.T) {
	clk := clock.NewFake(time.Unix(1e9, 0))
	f := &fakeScans{units: 500, clk: clk}
	m := &meter{Client: f, clk: clk, maxBackoff: time.Second, reads: newBudget(clk, 0), writes: newBudget(clk, 0)}
	for range 10 {
		if _, err := m.Scan(t.Context(), &dynamodb.ScanInput{}); err != nil {
			t.Fatal(err)
		}
	}
	if clk.Timers() != 0 {
		t.Error("an unlimited budget made a timer")
	}
}

// TestThrottledRequestSentAgainAfterBackoff: a scan throttled three times
// is sent again after 50, 100 and 200 ms, and then succeeds.
func TestThrottledRequestSentAgainAfterBackoff(t *testing.T) {
	clk := clock.NewFake(time.Unix(1e9, 0))
	f := &fakeScans{units: 1, throttle: 3, clk: clk}
	m := &meter{Client: f, clk: clk, maxBackoff: time.Second, reads: newBudget(clk, 0), writes: newBudget(clk, 0)}
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		_, err = m.Scan(t.Context(), &dynamodb.ScanInput{})
	}()
	took := drive(clk, done)
	if err != nil {
		t.Fatal(err)
	}
	if f.calls != 4 || took != 350*time.Millisecond || m.throttled.Load() != 3 {
		t.Errorf("%d calls in %v, %d throttled; want 4 in 350ms, 3", f.calls, took, m.throttled.Load())
	}
}

// fakeWrites answers UpdateItems with a consumed capacity of units when
// asked for it, recording which asked.
type fakeWrites struct {
	dynamo.Client
	units float64
	mu    sync.Mutex
	asked []bool
}

func (f *fakeWrites) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	asked := in.ReturnConsumedCapacity == types.ReturnConsumedCapacityTotal
	f.asked = append(f.asked, asked)
	if !asked {
		return &dynamodb.UpdateItemOutput{}, nil
	}
	return &dynamodb.UpdateItemOutput{ConsumedCapacity: &types.ConsumedCapacity{CapacityUnits: aws.Float64(f.units)}}, nil
}

// TestWritesSampledForCapacityWithoutABudget: without a write budget, one
// write in writeSample asks DynamoDB for its capacity (the first of each
// run: DynamoDB Local spends more on a write that asks), and the units
// counted are those writes' mean times all writes; under a write budget
// every write asks and is charged exactly.
func TestWritesSampledForCapacityWithoutABudget(t *testing.T) {
	for _, rate := range []float64{0, 1e6} {
		clk := clock.NewFake(time.Unix(1e9, 0))
		f := &fakeWrites{units: 2}
		m := &meter{Client: f, clk: clk, maxBackoff: time.Second, reads: newBudget(clk, 0), writes: newBudget(clk, rate),
			markAttr: "mark", markAV: &types.AttributeValueMemberS{Value: "id"}}
		const n = 3*writeSample + 1
		for range n {
			if _, err := m.UpdateItem(t.Context(), &dynamodb.UpdateItemInput{UpdateExpression: aws.String("SET #0 = :0")}); err != nil {
				t.Fatal(err)
			}
		}
		asked := 0
		for i, a := range f.asked {
			if want := rate > 0 || i%writeSample == 0; a != want {
				t.Errorf("rate %g: write %d asked for its capacity: %v, want %v", rate, i, a, want)
			}
			if a {
				asked++
			}
		}
		if rate == 0 && asked != 4 || rate > 0 && asked != n {
			t.Errorf("rate %g: %d of %d writes asked", rate, asked, n)
		}
		if got := m.writeUse.units(); got != 2*n {
			t.Errorf("rate %g: %g write units counted, want %d (2 per write)", rate, got, 2*n)
		}
	}
}

// TestMarkJoinsTheSetClause: the mark is written by the same UpdateItem,
// whatever clauses the mapper's expression has.
func TestMarkJoinsTheSetClause(t *testing.T) {
	for in, want := range map[string]string{
		"SET #0 = :0, #1 = :1 REMOVE #2": "SET #backfillMark = :backfillMark, #0 = :0, #1 = :1 REMOVE #2",
		"REMOVE #2":                      "SET #backfillMark = :backfillMark REMOVE #2",
		"ADD #v :one":                    "SET #backfillMark = :backfillMark ADD #v :one",
		"":                               "SET #backfillMark = :backfillMark",
	} {
		if got := withMark(in); got != want {
			t.Errorf("withMark(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRemainingEstimate: the time left is the time so far scaled by the
// items left over the items done — from this process's counts while the
// fleet's checkpoints show no more, from the fleet's rate once they do —
// unknown before anything is done, and zero once every segment is done.
func TestRemainingEstimate(t *testing.T) {
	clk := clock.NewFake(time.Unix(1e9, 0))
	m := &Migration[struct{}]{o: options{segments: 4, clock: clk}, meter: &meter{}, total: 1000, started: clk.Now()}
	if r := m.Progress().Remaining; r != -1 {
		t.Errorf("nothing done: %v left, want -1 (unknown)", r)
	}
	clk.Advance(10 * time.Second)
	m.changed.Store(200)
	m.skipped.Store(50)
	if r := m.Progress().Remaining; r != 30*time.Second {
		t.Errorf("250 of 1000 in 10s: %v left, want 30s", r)
	}
	// The fleet's checkpoints: 600 scanned, 500 of them in the 10 s between
	// the first poll and the last.
	m.fleet = fleetView{scanned: 600, first: 100, firstAt: clk.Now().Add(-10 * time.Second), at: clk.Now()}
	if r := m.Progress().Remaining; r != 8*time.Second {
		t.Errorf("fleet at 50 items/s with 400 left: %v left, want 8s", r)
	}
	m.fleet.done = 4
	if r := m.Progress().Remaining; r != 0 {
		t.Errorf("all segments done: %v left, want 0", r)
	}
}

// TestUnmarkJoinsTheRemoveClause: Clean's writes remove the mark in the
// same UpdateItem, whatever clauses the mapper's expression has.
func TestUnmarkJoinsTheRemoveClause(t *testing.T) {
	for in, want := range map[string]string{
		"SET #0 = :0 REMOVE #2": "SET #0 = :0 REMOVE #backfillMark, #2",
		"REMOVE #2":             "REMOVE #backfillMark, #2",
		"SET #0 = :0":           "SET #0 = :0 REMOVE #backfillMark",
		"":                      "REMOVE #backfillMark",
	} {
		if got := withoutMark(in); got != want {
			t.Errorf("withoutMark(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestVersionField: the version attribute is found as NewTable finds it,
// in embedded structs too, and not in skipped fields; versionOf reads it.
func TestVersionField(t *testing.T) {
	type base struct {
		V *int32 `dynamo:"v,version"`
	}
	type embeds struct {
		ID string `dynamo:"id,hash"`
		*base
	}
	type skipped struct {
		ID string `dynamo:"id,hash"`
		V  int64  `dynamo:"-"`
	}
	for typ, want := range map[reflect.Type]bool{
		reflect.TypeFor[account]():      true,
		reflect.TypeFor[*account]():     true,
		reflect.TypeFor[plainAccount](): false,
		reflect.TypeFor[embeds]():       true,
		reflect.TypeFor[skipped]():      false,
	} {
		if got := versionField(typ) != nil; got != want {
			t.Errorf("versionField(%v) found: %v, want %v", typ, got, want)
		}
	}
	if v := versionOf(&account{Version: 7}, versionField(reflect.TypeFor[*account]())); v != 7 {
		t.Errorf("versionOf account: %d, want 7", v)
	}
	seven := int32(7)
	path := versionField(reflect.TypeFor[embeds]())
	if v := versionOf(embeds{base: &base{V: &seven}}, path); v != 7 {
		t.Errorf("versionOf embedded pointer: %d, want 7", v)
	}
	if v := versionOf(embeds{}, path); v != 0 {
		t.Errorf("versionOf nil embedded: %d, want 0", v)
	}
}

// TestMarkRewriteFollowsTheExpression: the meter keeps the last rewrite of
// an UpdateExpression, and a different expression is rewritten anew, the
// mark written (or, for Clean, removed) in each.
func TestMarkRewriteFollowsTheExpression(t *testing.T) {
	for _, unmark := range []bool{false, true} {
		m := &meter{unmark: unmark}
		rewrite := withMark
		if unmark {
			rewrite = withoutMark
		}
		for _, in := range []string{"SET #0 = :0", "SET #0 = :0", "SET #0 = :0 REMOVE #2", "SET #0 = :0", ""} {
			if got := *m.withMarkOf(in); got != rewrite(in) {
				t.Errorf("unmark %v: withMarkOf(%q) = %q, want %q", unmark, in, got, rewrite(in))
			}
		}
	}
}
