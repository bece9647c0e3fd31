package backfill

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
)

// notStopped is a page's stopped of a segment that goes on.
func notStopped() error { return nil }

// TestSegmentDoneEarlyWritesTheOthersPages: a segment whose page is written
// lends its goroutine to the page of a segment still at work — two items of
// that page are in flight at once, one on each goroutine, never more —
// every item is written once, and the helper returns once no segment of
// the process is at work.
func TestSegmentDoneEarlyWritesTheOthersPages(t *testing.T) {
	w := newWriters()
	var written [4]atomic.Int32
	var inFlight, most atomic.Int32
	started := make(chan int, 4)
	release := make(chan struct{})
	long := &pageWork{n: 4, stopped: notStopped, write: func(i int) error {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		started <- i
		<-release
		written[i].Add(1)
		inFlight.Add(-1)
		return nil
	}}
	shortWritten := atomic.Int32{}
	short := &pageWork{n: 1, stopped: notStopped, write: func(int) error { shortWritten.Add(1); return nil }}
	w.begin() // the long segment
	w.begin() // the short one
	var wg sync.WaitGroup
	wg.Add(2)
	errs := make(chan error, 2)
	go func() {
		defer wg.Done()
		errs <- w.write(long)
		w.end()
	}()
	go func() {
		defer wg.Done()
		errs <- w.write(short)
		w.end()
		w.help(nil, nil)
	}()
	<-started
	<-started // two of the long page's items in flight at once: the short segment's goroutine helps
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a page's write: %v", err)
		}
	}
	for i := range written {
		if n := written[i].Load(); n != 1 {
			t.Errorf("item %d of the long page written %d times, want once", i, n)
		}
	}
	if n := shortWritten.Load(); n != 1 {
		t.Errorf("the short page's item written %d times, want once", n)
	}
	if n := most.Load(); n != 2 {
		t.Errorf("at most %d of the long page's items in flight at once, want 2 (one per segment goroutine)", n)
	}
}

// TestStoppedPageTakesNoMoreItems: once a page's segment stops (its lease
// ended, or Run stopping), no item of the page is taken any more, by its
// own goroutine or a helper, and its write returns the stop's error.
func TestStoppedPageTakesNoMoreItems(t *testing.T) {
	w := newWriters()
	errLost := errors.New("lease ended")
	var looks, writes atomic.Int32
	p := &pageWork{n: 5,
		// Looked at (under the writers' lock) before each take: the
		// segment stops once its first item is taken.
		stopped: func() error {
			if looks.Add(1) > 1 {
				return errLost
			}
			return nil
		},
		write: func(int) error {
			writes.Add(1)
			return nil
		}}
	w.begin()
	helped := make(chan struct{})
	go func() {
		defer close(helped)
		w.help(nil, nil)
	}()
	if err := w.write(p); !errors.Is(err, errLost) {
		t.Errorf("the stopped page's write: %v, want its stop's error", err)
	}
	w.end()
	<-helped
	if n := writes.Load(); n != 1 {
		t.Errorf("%d items written, want 1 (the one in hand when the segment stopped)", n)
	}
}

// concurrentUpdates counts the UpdateItems in flight on one table, and the
// most at once.
type concurrentUpdates struct {
	updateRecorder
	now, most atomic.Int32
}

func (c *concurrentUpdates) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if aws.ToString(in.TableName) == c.table {
		n := c.now.Add(1)
		defer c.now.Add(-1)
		for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
		}
	}
	return c.updateRecorder.UpdateItem(ctx, in, optFns...)
}

func (c *concurrentUpdates) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	n := c.now.Add(1)
	defer c.now.Add(-1)
	for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
	}
	return c.updateRecorder.Client.TransactWriteItems(ctx, in, optFns...)
}

// TestWritesInFlightBoundedBySegments: a process never has more of the
// migration's commits in flight than segments, and every item is still
// changed once.
func TestWritesInFlightBoundedBySegments(t *testing.T) {
	e := newEnv(t, 120)
	c := &concurrentUpdates{updateRecorder: updateRecorder{Client: e.c, table: e.table}}
	m, err := NewMigration(dynamo.NewMapper(c), e.table, "bounded", addMigrated, WithFleet(e.leaseClient("w1"), e.leases), WithSegments(3), WithPageSize(10), WithPollInterval(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.check(nil)
	if n := c.most.Load(); n > 3 || n < 1 {
		t.Errorf("%d writes in flight at most, want 1 to 3 (the segments)", n)
	}
	if p := m.Progress(); p.Changed != int64(e.n) {
		t.Errorf("changed %d, want %d", p.Changed, e.n)
	}
}
