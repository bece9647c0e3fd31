package dynamo

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// ParallelScan yields every item exactly once, each segment paging on its
// own.
func TestParallelScanEveryItemOnce(t *testing.T) {
	tb, c := newQSTable(t, 200)
	seen := map[int]int{}
	for v, err := range tb.ParallelScan(t.Context(), 4, PageSize(7)) {
		if err != nil {
			t.Fatal(err)
		}
		seen[v.N]++
	}
	if len(seen) != 200 {
		t.Errorf("%d distinct items, want 200", len(seen))
	}
	for n, k := range seen {
		if k != 1 || n < 1 || n > 200 {
			t.Errorf("item %d yielded %d times", n, k)
		}
	}
	perSegment := map[int32]int{}
	for _, in := range c.scans() {
		if aws.ToInt32(in.TotalSegments) != 4 || aws.ToInt32(in.Limit) != 7 {
			t.Errorf("request segment %d of %d limit %d", aws.ToInt32(in.Segment), aws.ToInt32(in.TotalSegments), aws.ToInt32(in.Limit))
		}
		perSegment[aws.ToInt32(in.Segment)]++
	}
	for seg := range int32(4) {
		if perSegment[seg] != 8 { // 50 items in pages of 7
			t.Errorf("segment %d: %d requests, want 8", seg, perSegment[seg])
		}
	}
	if n := segmentGoroutines(); n != 0 {
		t.Errorf("%d segment goroutines left", n)
	}
}

// qsSegment matches the scans of segment seg.
func qsSegment(seg int32) func(in any) bool {
	return func(in any) bool {
		s, ok := in.(*dynamodb.ScanInput)
		return ok && s.Segment != nil && *s.Segment == seg
	}
}

// Breaking out of a ParallelScan cancels the requests in flight and returns
// only after every segment's goroutine is done.
func TestParallelScanBreakLeaksNothing(t *testing.T) {
	tb, c := newQSTable(t, 40)
	var cancelled sync.WaitGroup
	cancelled.Add(1)
	var sawCancel error
	// Segment 3's request hangs until its ctx ends (release stays open).
	hang := c.hook(&fakeHook{op: "Scan", match: qsSegment(3), holding: make(chan struct{}), release: make(chan struct{}),
		after: func(_ int, _, _ any, err error) {
			sawCancel = err
			cancelled.Done()
		}})
	blocked := hang.holding
	n := 0
	for _, err := range tb.ParallelScan(t.Context(), 4, PageSize(2)) {
		if err != nil {
			t.Fatal(err)
		}
		<-blocked // segment 3 is in its request
		if running := segmentGoroutines(); running == 0 {
			t.Fatal("no segment goroutine seen during the scan: segmentGoroutines is broken")
		}
		if n++; n == 3 {
			break
		}
	}
	if n := segmentGoroutines(); n != 0 {
		t.Fatalf("%d segment goroutines still running after the loop", n)
	}
	cancelled.Wait()
	if !errors.Is(sawCancel, context.Canceled) {
		t.Errorf("the hanging request saw %v, want context.Canceled", sawCancel)
	}
}

// Limit stops a parallel scan, and its goroutines, after n items.
func TestParallelScanLimit(t *testing.T) {
	tb, _ := newQSTable(t, 100)
	got, err := collect(tb.ParallelScan(t.Context(), 3, Limit(10), PageSize(4)))
	if err != nil || len(got) != 10 {
		t.Fatalf("%d items, %v; want 10", len(got), err)
	}
	if n := segmentGoroutines(); n != 0 {
		t.Fatalf("%d segment goroutines left", n)
	}
}

// A failing segment stops the whole scan with its error.
func TestParallelScanError(t *testing.T) {
	tb, c := newQSTable(t, 100)
	second := func(in any) bool { // segment 2's second page
		return qsSegment(2)(in) && in.(*dynamodb.ScanInput).ExclusiveStartKey != nil
	}
	c.hook(&fakeHook{op: "Scan", match: second, err: errQSStub})
	var errs []error
	for _, err := range tb.ParallelScan(t.Context(), 4, PageSize(5)) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) != 1 || !errors.Is(errs[0], errQSStub) || !strings.Contains(errs[0].Error(), "segment 2 of 4") {
		t.Fatalf("errors %v, want one stub error naming segment 2 of 4", errs)
	}
	if n := segmentGoroutines(); n != 0 {
		t.Fatalf("%d segment goroutines left", n)
	}
}

// The caller's ctx ending while every segment waits on DynamoDB ends the
// scan with ctx's error.
func TestParallelScanCallerContext(t *testing.T) {
	tb, c := newQSTable(t, 10)
	var started sync.WaitGroup
	started.Add(2)
	// Every request hangs until its ctx ends (release stays open).
	c.hook(&fakeHook{op: "Scan", before: func(int) { started.Done() }, holding: make(chan struct{}), release: make(chan struct{})})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		started.Wait()
		cancel()
	}()
	_, err := collect(tb.ParallelScan(ctx, 2))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := segmentGoroutines(); n != 0 {
		t.Fatalf("%d segment goroutines left", n)
	}
}

// Scan pages through the table and Segment scans one segment.
func TestScanPagesAndSegment(t *testing.T) {
	tb, c := newQSTable(t, 10)
	got, err := collect(tb.Scan(t.Context(), PageSize(3)))
	if err != nil || !slices.Equal(got, seqInts(1, 10)) {
		t.Fatalf("scan: %v, %v", got, err)
	}
	if ss := c.scans(); len(ss) != 4 {
		t.Errorf("%d requests for 10 items in pages of 3, want 4", len(ss))
	}
	got, err = collect(tb.Scan(t.Context(), Segment(0, 3)))
	if err != nil || !slices.Equal(got, []int{3, 6, 9}) {
		t.Fatalf("segment 0 of 3: %v, %v", got, err)
	}
}
