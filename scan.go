package dynamo

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/plan"
)

// ParallelScan scans the table (or Index) as segments concurrent segment
// scans (1 to 1,000,000; a few per consumer core is a good start) and yields
// every item once, in no order. At most one decoded page per segment waits
// for the consumer. Limit bounds the items in total; PageSize, Filter, Index
// and ConsistentRead apply per segment; Segment and StartAfter are refused.
// Errors are yielded as by Scan. When the loop ends the iterator cancels what
// is in flight and returns after every goroutine it started has exited.
// Details: docs/calls.md#parallelscan.
//
// IAM: dynamodb:Scan on the table, or with Index on the index.
func (t *Table[T]) ParallelScan(ctx context.Context, segments int, opts ...QueryOption) iter.Seq2[T, error] {
	l := t.prepare(opParallelScan, nil, opts)
	if l.err == nil {
		if err := plan.CheckSegment(0, segments); err != nil {
			l.err = fmt.Errorf("%w: ParallelScan on table %q with %d segments: give 1 to %d", ErrInvalidInput, t.name, segments, plan.MaxTotalSegments)
		}
	}
	l.total = segments
	return func(yield func(T, error) bool) {
		var zero T
		if l.err != nil {
			yield(zero, l.err)
			return
		}
		if err := ctx.Err(); err != nil {
			yield(zero, l.requestError(err, -1))
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		defer func() {
			cancel()
			wg.Wait()
		}()
		pages := make(chan segmentPage[T])
		for seg := range segments {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.scanSegment(ctx, l, seg, pages)
			}()
		}
		running, got := segments, 0
		// emit yields (v, err) unless ctx is done, and reports whether to
		// go on (the loop goes on, Limit is not reached).
		emit := func(v T, err error) bool {
			if cerr := ctx.Err(); cerr != nil {
				yield(zero, l.requestError(cerr, -1))
				return false
			}
			if !yield(v, err) {
				return false
			}
			got++
			return l.limit == 0 || got < l.limit
		}
		for running > 0 {
			var p segmentPage[T]
			select {
			case p = <-pages:
			case <-ctx.Done(): // only the caller's ctx: ours is cancelled on return
				yield(zero, l.requestError(ctx.Err(), -1))
				return
			}
			if p.err != nil {
				yield(zero, p.err)
				return
			}
			if !p.emit(emit) {
				return
			}
			if p.last {
				running--
			}
		}
	}
}

// segmentPage is one decoded page of a parallel scan's segment.
type segmentPage[T any] struct {
	items []T
	bad   []placedError // the items that did not decode
	err   error         // the request failed
	last  bool          // the segment has no more pages (or failed)
}

// scanSegment scans one segment of l, sending its decoded pages to out until
// the segment ends, a request fails, or ctx is done.
func (t *Table[T]) scanSegment(ctx context.Context, l *listing, segment int, out chan<- segmentPage[T]) {
	var start map[string]types.AttributeValue
	d := &itemDecoder[T]{t: t}
	for {
		items, last, err := l.fetch(ctx, t.m.client, start, l.requestLimit(0, false), segment)
		p := segmentPage[T]{err: err, last: err != nil || len(last) == 0}
		if err == nil {
			p.items, p.bad = d.decodePage(items)
		}
		select {
		case out <- p:
		case <-ctx.Done():
			return
		}
		if p.last {
			return
		}
		start = last
	}
}

// emit passes p's items to emit, each item that did not decode (its error)
// where it was in the page, and reports whether emit took them all.
func (p segmentPage[T]) emit(emit func(T, error) bool) bool {
	var zero T
	bad := p.bad
	for i, v := range p.items {
		for len(bad) > 0 && bad[0].before == i {
			if !emit(zero, bad[0].err) {
				return false
			}
			bad = bad[1:]
		}
		if !emit(v, nil) {
			return false
		}
	}
	for _, b := range bad {
		if !emit(zero, b.err) {
			return false
		}
	}
	return true
}
