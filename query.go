package dynamo

import (
	"context"
	"fmt"
	"iter"
	"math"
	"reflect"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// QueryOption configures Query, QueryPage, Scan, ScanPage and ParallelScan:
// Filter, Index, Limit, PageSize, Descending, StartAfter and Segment. Every
// ReadOption is a QueryOption too, so ConsistentRead() makes a query or scan
// strongly consistent.
//
// Options that make no sense for a call (Descending on a scan, Segment on a
// query, a negative Limit, a cursor from another index, ...) make the call
// fail with an error wrapping ErrInvalidInput before any request is sent.
type QueryOption interface {
	applyQuery(*queryOptions)
}

type queryOptionFunc func(*queryOptions)

func (f queryOptionFunc) applyQuery(o *queryOptions) { f(o) }

// applyQuery makes every ReadOption a QueryOption.
func (f ReadOption) applyQuery(o *queryOptions) { f(&o.read) }

type queryOptions struct {
	read       readOptions
	filters    []expression.ConditionBuilder
	index      string
	limit      int
	pageSize   int
	descending bool
	start      Cursor
	segment    int
	total      int
	segmented  bool
}

// Filter adds a filter condition: DynamoDB reads the items the key
// condition selects (or, for a scan, every item) and returns only those for
// which cond holds. Several Filter options are ANDed together. Filtered-out
// items still cost read capacity and count toward PageSize, but not toward
// Limit.
//
// Values in cond are marshaled by the expression package with the default
// attributevalue options, not the mapper's: pass types.AttributeValue values
// where that matters.
func Filter(cond expression.ConditionBuilder) QueryOption {
	return queryOptionFunc(func(o *queryOptions) { o.filters = append(o.filters, cond) })
}

// Index reads the secondary index called name instead of the table itself.
// Items come back as the index projects them: attributes the index does not
// project are left zero in T. The default is the table itself.
func Index(name string) QueryOption {
	return queryOptionFunc(func(o *queryOptions) { o.index = name })
}

// Limit stops after n items: the iterators yield at most n items in total,
// QueryPage and ScanPage return at most n per call. It counts items
// returned, after any Filter; it is not DynamoDB's Limit (see PageSize). The
// default, and n = 0, is no limit; a negative n is refused. Any n up to
// math.MaxInt is accepted (requests ask DynamoDB for at most math.MaxInt32
// items each).
//
// Without a Filter, the mapper asks DynamoDB for no more items than it still
// needs, so Limit(10) reads ten items, not a page of them.
func Limit(n int) QueryOption {
	return queryOptionFunc(func(o *queryOptions) { o.limit = n })
}

// PageSize sets DynamoDB's Limit: each request evaluates at most n items
// (before any Filter), so a page holds at most n items. The default, and
// n = 0, is DynamoDB's: pages of up to 1 MB of items read.
func PageSize(n int) QueryOption {
	return queryOptionFunc(func(o *queryOptions) { o.pageSize = n })
}

// Descending makes a query return items in descending order of the sort
// key (ScanIndexForward=false). The default is ascending. Scans have no
// order and refuse it.
func Descending() QueryOption {
	return queryOptionFunc(func(o *queryOptions) { o.descending = true })
}

// StartAfter resumes a query or scan after the position c, a Cursor that
// QueryPage or ScanPage returned for the same query or scan (same table,
// index and segment; the key condition and filter are the caller's to keep
// the same). The empty Cursor means the start, so a page handler can pass
// its client's token through unchanged. A cursor that is malformed, or
// that belongs to another index, segment or table key, is refused with
// ErrInvalidInput before anything is sent. ParallelScan refuses StartAfter:
// it has one position per segment.
func StartAfter(c Cursor) QueryOption {
	return queryOptionFunc(func(o *queryOptions) { o.start = c })
}

// Segment makes a scan read only segment segment (0 to total-1) of total,
// so that total workers, in one process or many, can scan a table together
// (each with its own Segment). Queries refuse it; ParallelScan runs all the
// segments of a scan itself and refuses it too.
func Segment(segment, total int) QueryOption {
	return queryOptionFunc(func(o *queryOptions) {
		o.segment, o.total, o.segmented = segment, total, true
	})
}

// Names of the calls, for messages and the checks that depend on the call.
const (
	opQuery        = "Query"
	opQueryPage    = "QueryPage"
	opScan         = "Scan"
	opScanPage     = "ScanPage"
	opParallelScan = "ParallelScan"
)

// listing is one prepared Query or Scan: everything but the start key and
// the per-request Limit. Read-only once prepared, so one listing serves any
// number of iterations, from any number of goroutines.
type listing struct {
	op       string // opQuery, ...
	table    string
	index    string
	query    *dynamodb.QueryInput // the request template of a query...
	scan     *dynamodb.ScanInput  // ...or of a scan
	limit    int                  // items returned in total (per page call); 0 = no limit
	pageSize int                  // DynamoDB's Limit; 0 = DynamoDB's default
	filtered bool
	start    map[string]types.AttributeValue // ExclusiveStartKey of the first request
	segment  int
	total    int   // total scan segments; 0 for a query or a whole-table scan
	err      error // refused input; nothing is sent
}

// Query reads the items that key selects, in sort key order (see
// Descending), across as many pages as it takes: key must fix the partition
// key with Equal and may narrow the sort key, e.g.
//
//	expression.Key("ISBN").Equal(expression.Value("978-0")).
//		And(expression.Key("part").Between(expression.Value(1), expression.Value(9)))
//
// Nothing is sent until the iterator is used; each use runs the query again
// from the start (or from StartAfter). Pages are fetched as the loop needs
// them: breaking out of the loop sends no further request. An error — a
// refused option, a failed request, an item that does not decode into T,
// ctx done — is yielded once as (zero, err), after which the iterator stops.
// ctx bounds the whole iteration, including the SDK's retries; once it is
// done the iterator yields its error and stops.
//
// Values in key are marshaled by the expression package with the default
// attributevalue options, not the mapper's (see Filter).
//
// IAM: dynamodb:Query.
func (t *Table[T]) Query(ctx context.Context, key expression.KeyConditionBuilder, opts ...QueryOption) iter.Seq2[T, error] {
	return t.iterate(ctx, t.prepare(opQuery, &key, opts))
}

// QueryPage reads one page of the items that key selects (see Query) and
// returns them with the Cursor after the last one. Pass the cursor to
// StartAfter to read the next page; the empty Cursor means there are no more
// items. A non-empty cursor does not promise more: the next page may be
// empty (with an empty cursor).
//
// With Limit(n), a page holds up to n items: QueryPage sends requests until
// it has n items or the results end, asking DynamoDB each time for no more
// than it still needs, so the cursor is exactly after the last item
// returned and paging never skips or repeats an item. With a Filter that
// matches few items that can take many requests; ctx bounds them all.
// Without Limit a page is one DynamoDB page (PageSize items evaluated, or
// 1 MB), which a Filter may leave empty while the cursor moves on.
//
// On success the items are a new, non-nil slice (possibly empty). ctx bounds
// the requests, including the SDK's retries.
//
// IAM: dynamodb:Query.
func (t *Table[T]) QueryPage(ctx context.Context, key expression.KeyConditionBuilder, opts ...QueryOption) ([]T, Cursor, error) {
	return t.page(ctx, t.prepare(opQueryPage, &key, opts))
}

// Scan reads every item of the table (or of the Index, or of one Segment)
// across as many pages as it takes, in no particular order. It behaves like
// Query in every other way: lazy, a break stops paging, errors are yielded
// once as (zero, err), ctx bounds the whole iteration. A scan reads (and
// pays for) the whole table; see ParallelScan to spread it over goroutines.
//
// IAM: dynamodb:Scan.
func (t *Table[T]) Scan(ctx context.Context, opts ...QueryOption) iter.Seq2[T, error] {
	return t.iterate(ctx, t.prepare(opScan, nil, opts))
}

// ScanPage reads one page of a scan and returns it with the Cursor after its
// last item, like QueryPage. With Segment, the cursor belongs to that
// segment and resumes only a scan of the same segment.
//
// IAM: dynamodb:Scan.
func (t *Table[T]) ScanPage(ctx context.Context, opts ...QueryOption) ([]T, Cursor, error) {
	return t.page(ctx, t.prepare(opScanPage, nil, opts))
}

// prepare checks the options of one call and builds its request template.
// key is nil for a scan. It sends nothing; a refusal is kept in l.err.
func (t *Table[T]) prepare(op string, key *expression.KeyConditionBuilder, opts []QueryOption) *listing {
	var o queryOptions
	for _, opt := range opts {
		opt.applyQuery(&o)
	}
	l := &listing{op: op, table: t.name, index: o.index, limit: o.limit, pageSize: o.pageSize, filtered: len(o.filters) > 0}
	if o.segmented {
		l.segment, l.total = o.segment, o.total
	}
	if l.err = t.checkQueryOptions(op, key != nil, &o); l.err != nil {
		return l
	}
	var e expression.Expression
	if key != nil || l.filtered {
		b := expression.NewBuilder() // one per call: built builders share state
		if key != nil {
			b = b.WithKeyCondition(*key)
		}
		if l.filtered {
			f := o.filters[0]
			if len(o.filters) > 1 {
				f = expression.And(o.filters[0], o.filters[1], o.filters[2:]...)
			}
			b = b.WithFilter(f)
		}
		var err error
		if e, err = b.Build(); err != nil {
			what := "filter"
			if key != nil {
				what = "key condition or filter"
			}
			l.err = fmt.Errorf("%w: %s on table %q: the %s does not build (%v): build a key condition with expression.Key(name).Equal(expression.Value(v)), a filter with expression.Name(name)",
				ErrInvalidInput, op, t.name, what, err)
			return l
		}
	}
	var consistent, forward *bool
	if o.read.consistent {
		consistent = aws.Bool(true)
	}
	if o.descending {
		forward = aws.Bool(false)
	}
	if key != nil {
		l.query = &dynamodb.QueryInput{
			TableName:                 aws.String(t.name),
			IndexName:                 strPtr(o.index),
			KeyConditionExpression:    e.KeyCondition(),
			FilterExpression:          e.Filter(),
			ExpressionAttributeNames:  e.Names(),
			ExpressionAttributeValues: e.Values(),
			ConsistentRead:            consistent,
			ScanIndexForward:          forward,
		}
	} else {
		l.scan = &dynamodb.ScanInput{
			TableName:      aws.String(t.name),
			IndexName:      strPtr(o.index),
			ConsistentRead: consistent,
		}
		if l.filtered {
			l.scan.FilterExpression = e.Filter()
			l.scan.ExpressionAttributeNames = e.Names()
			l.scan.ExpressionAttributeValues = e.Values()
		}
	}
	if o.start != "" {
		p, err := decodeCursor(o.start)
		if err == nil {
			err = t.checkPosition(p, o.index, l.segment, l.total)
		}
		if err != nil {
			l.err = err
			return l
		}
		l.start = p.key
	}
	return l
}

// checkQueryOptions refuses options that do not fit the call op.
func (t *Table[T]) checkQueryOptions(op string, isQuery bool, o *queryOptions) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s on table %q: %s", ErrInvalidInput, op, t.name, fmt.Sprintf(format, args...))
	}
	switch {
	case o.limit < 0:
		return fail("Limit(%d): give a positive number of items, or no Limit for all of them", o.limit)
	case o.pageSize < 0 || o.pageSize > math.MaxInt32:
		return fail("PageSize(%d): give 1 to %d items per request, or no PageSize for DynamoDB's pages of up to 1 MB", o.pageSize, math.MaxInt32)
	case o.descending && !isQuery:
		return fail("Descending on a scan: scans return items in no particular order; use Query for sorted results")
	case o.segmented && isQuery:
		return fail("Segment on a query: only scans are split into segments")
	case o.segmented && op == opParallelScan:
		return fail("Segment with ParallelScan, which scans every segment itself: use Scan or ScanPage with Segment to scan one segment")
	case o.start != "" && op == opParallelScan:
		return fail("StartAfter with ParallelScan, which keeps one position per segment: use ScanPage with Segment to page through one segment")
	}
	if o.segmented {
		if err := checkSegment(o.segment, o.total); err != nil {
			return fail("Segment(%d, %d): %v", o.segment, o.total, err)
		}
	}
	if o.index != "" {
		if err := checkIndexName(o.index); err != nil {
			return fail("Index: %v", err)
		}
		if o.read.consistent {
			for _, x := range t.p.s.indexes {
				if x.name == o.index && !x.local {
					return fail("ConsistentRead on the global secondary index %q, which DynamoDB reads only eventually consistently: drop ConsistentRead, or read the table or a local index", o.index)
				}
			}
		}
	}
	return nil
}

// requestLimit returns the DynamoDB Limit of the next request when got items
// have been returned (0: none). Without a filter, no request asks for more
// items than the call still needs; exact (pages) applies that even with a
// filter, so that a page never reads past its last item. It never exceeds
// math.MaxInt32, the most DynamoDB's Limit takes: a Limit above it (such as
// Limit(math.MaxInt) for "no limit") asks for MaxInt32 items per request.
func (l *listing) requestLimit(got int, exact bool) int {
	n := l.pageSize
	if l.limit > 0 && (exact || !l.filtered) {
		if rem := l.limit - got; n == 0 || rem < n {
			n = rem
		}
	}
	return min(n, math.MaxInt32)
}

// fetch sends one request starting after start, asking for at most n items
// (0: DynamoDB's default), reading scan segment segment when l.total > 0.
func (l *listing) fetch(ctx context.Context, c Client, start map[string]types.AttributeValue, n, segment int) (items []map[string]types.AttributeValue, last map[string]types.AttributeValue, err error) {
	var limit *int32
	if n > 0 {
		limit = aws.Int32(int32(n))
	}
	if l.query != nil {
		in := *l.query // the template's maps are shared, read-only
		in.ExclusiveStartKey, in.Limit = start, limit
		out, err := c.Query(ctx, &in)
		if err != nil {
			return nil, nil, l.requestError(err, segment)
		}
		if out == nil {
			return nil, nil, nil
		}
		return out.Items, out.LastEvaluatedKey, nil
	}
	in := *l.scan
	in.ExclusiveStartKey, in.Limit = start, limit
	if l.total > 0 {
		in.Segment, in.TotalSegments = aws.Int32(int32(segment)), aws.Int32(int32(l.total))
	}
	out, err := c.Scan(ctx, &in)
	if err != nil {
		return nil, nil, l.requestError(err, segment)
	}
	if out == nil {
		return nil, nil, nil
	}
	return out.Items, out.LastEvaluatedKey, nil
}

// requestError wraps the error of a request or of ctx; segment < 0 names no
// segment.
func (l *listing) requestError(err error, segment int) error {
	verb := "query"
	if l.query == nil {
		verb = "scan"
	}
	where := ""
	if l.index != "" {
		where = " index " + strconv.Quote(l.index)
	}
	if l.total > 0 && segment >= 0 {
		where += " segment " + strconv.Itoa(segment) + " of " + strconv.Itoa(l.total)
	}
	return fmt.Errorf("dynamo: %s table %q%s: %w", verb, l.table, where, err)
}

// itemDecoder decodes the items of a result one after another into T with
// the mapper's decoder, as Table.decode does, but without allocating per item
// anything beyond what decoding itself allocates: the map wrapper is reused,
// and a struct T is decoded in place into memory the caller provides.
type itemDecoder[T any] struct {
	t *Table[T]
	m types.AttributeValueMemberM
}

// decodeInto decodes item into *out, which must be the zero T.
func (d *itemDecoder[T]) decodeInto(item map[string]types.AttributeValue, out *T) error {
	t := d.t
	d.m.Value = item
	var err error
	if len(t.p.s.javaDecFields) > 0 {
		if d.m.Value, err = t.p.s.javaDecode(item); err != nil {
			return fmt.Errorf("dynamo: decode item of table %q into %s: %w (item key %s)", t.name, t.p.s.typ, err, formatKey(t.pickKey(item)))
		}
	}
	if t.ptr {
		pv := reflect.New(t.p.s.typ)
		err = t.m.dec.Decode(&d.m, pv.Interface())
		*out = pv.Interface().(T)
	} else {
		err = t.m.dec.Decode(&d.m, out)
	}
	d.m.Value = nil
	if err != nil {
		var zero T
		*out = zero
		return fmt.Errorf("dynamo: decode item of table %q into %s: %w (item key %s)", t.name, t.p.s.typ, err, formatKey(t.pickKey(item)))
	}
	return nil
}

// decodePage decodes a page of items into a new slice. On an error it
// returns the items before the failing one.
func (d *itemDecoder[T]) decodePage(items []map[string]types.AttributeValue) ([]T, error) {
	out := make([]T, len(items))
	for i, item := range items {
		if err := d.decodeInto(item, &out[i]); err != nil {
			return out[:i], err
		}
	}
	return out, nil
}

// iterate runs l page by page, yielding its items.
func (t *Table[T]) iterate(ctx context.Context, l *listing) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		if l.err != nil {
			yield(zero, l.err)
			return
		}
		start, got := l.start, 0
		d := &itemDecoder[T]{t: t}
		v := new(T) // reused: yield receives a copy
		for {
			if err := ctx.Err(); err != nil {
				yield(zero, l.requestError(err, l.segment))
				return
			}
			items, last, err := l.fetch(ctx, t.m.client, start, l.requestLimit(got, false), l.segment)
			if err != nil {
				yield(zero, err)
				return
			}
			for _, item := range items {
				if err := ctx.Err(); err != nil {
					yield(zero, l.requestError(err, l.segment))
					return
				}
				*v = zero
				if err := d.decodeInto(item, v); err != nil {
					yield(zero, err)
					return
				}
				if !yield(*v, nil) {
					return
				}
				if got++; l.limit > 0 && got >= l.limit {
					return
				}
			}
			if len(last) == 0 {
				return
			}
			start = last
		}
	}
}

// page reads one page of l (see QueryPage).
func (t *Table[T]) page(ctx context.Context, l *listing) ([]T, Cursor, error) {
	if l.err != nil {
		return nil, "", l.err
	}
	var out []T
	start := l.start
	d := &itemDecoder[T]{t: t}
	for {
		if err := ctx.Err(); err != nil {
			return nil, "", l.requestError(err, l.segment)
		}
		items, last, err := l.fetch(ctx, t.m.client, start, l.requestLimit(len(out), true), l.segment)
		if err != nil {
			return nil, "", err
		}
		if out == nil {
			out = make([]T, 0, len(items))
		}
		for _, item := range items {
			var zero T
			out = append(out, zero)
			if err := d.decodeInto(item, &out[len(out)-1]); err != nil {
				return nil, "", err
			}
		}
		if len(last) == 0 {
			return out, "", nil
		}
		if l.limit == 0 || len(out) >= l.limit {
			c, err := encodeCursor(position{index: l.index, segment: l.segment, total: l.total, key: last})
			if err != nil {
				return nil, "", err
			}
			return out, c, nil
		}
		start = last
	}
}
