package dynamo

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"reflect"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/codec"
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/telemetry"
)

// QueryOption configures Query, QueryPage, Scan, ScanPage and ParallelScan:
// Filter, Index, Limit, PageSize, Descending, StartAfter and Segment. Every
// ReadOption is a QueryOption too, so ConsistentRead() makes a query or scan
// strongly consistent.
//
// Options that make no sense for a call (Descending on a scan, Segment on a
// query, a negative Limit, a cursor from another index or partition, ...)
// make the call fail with an error wrapping ErrInvalidInput before any
// request is sent.
type QueryOption interface {
	applyQuery(*queryOptions)
}

type queryOptionFunc func(*queryOptions)

func (f queryOptionFunc) applyQuery(o *queryOptions) { f(o) }

type queryOptions struct {
	read    readOptions
	filters []expression.ConditionBuilder
	plan.ListingOptions
}

// Filter adds a filter condition: DynamoDB returns only the items read for
// which cond holds; several are ANDed. Filtered-out items still cost read
// capacity and count toward PageSize, not Limit. Values compared with
// javabool, javadate and text-type attributes are sent as those are stored,
// and an ordering comparison of a text-type attribute with a non-string is
// refused with ErrInvalidInput. Rules: docs/calls.md#filter.
func Filter(cond expression.ConditionBuilder) QueryOption {
	return queryOptionFunc(func(o *queryOptions) { o.filters = append(o.filters, cond) })
}

// Index reads the secondary index called name instead of the table itself.
// Items come back as the index projects them: attributes the index does not
// project are left zero in T. The default is the table itself.
//
// An item read from an index that does not project every attribute (KEYS_ONLY,
// INCLUDE) is not the stored item: saved as it is, its zero fields would
// overwrite or remove the attributes the index left out, though its version
// matches. To change such an item, pass it to Table.Update, which reads the
// item from the table, or Load it first.
func Index(name string) QueryOption {
	return queryOptionFunc(func(o *queryOptions) { o.Index = name })
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
	return queryOptionFunc(func(o *queryOptions) { o.Limit = n })
}

// PageSize sets DynamoDB's Limit: each request evaluates at most n items
// (before any Filter), so a page holds at most n items. The default, and
// n = 0, is DynamoDB's: pages of up to 1 MB of items read.
func PageSize(n int) QueryOption {
	return queryOptionFunc(func(o *queryOptions) { o.PageSize = n })
}

// Descending makes a query return items in descending order of the sort
// key (ScanIndexForward=false). The default is ascending. Scans have no
// order and refuse it.
func Descending() QueryOption {
	return queryOptionFunc(func(o *queryOptions) { o.Descending = true })
}

// StartAfter resumes a query or scan after c, a Cursor QueryPage or ScanPage
// returned for the same table, index and segment; the empty Cursor means the
// start. Before anything is sent the cursor is checked as DynamoDB checks an
// ExclusiveStartKey — its form (ParseCursor), its index and segment, its key
// attributes and their types, and for a query that it lies in the key
// condition's partition and range — and refused with ErrInvalidInput.
// ParallelScan refuses it. Rules: docs/calls.md#startafter.
func StartAfter(c Cursor) QueryOption {
	return queryOptionFunc(func(o *queryOptions) { o.Start = string(c) })
}

// Segment makes a scan read only segment segment (0 to total-1) of total,
// so that total workers, in one process or many, can scan a table together
// (each with its own Segment). Queries refuse it; ParallelScan runs all the
// segments of a scan itself and refuses it too.
func Segment(segment, total int) QueryOption {
	return queryOptionFunc(func(o *queryOptions) {
		o.Segment, o.Total, o.Segmented = segment, total, true
	})
}

// Names of the calls, for messages and the checks that depend on the call.
const (
	opQuery        = "Query"
	opQueryPage    = "QueryPage"
	opScan         = "Scan"
	opScanPage     = "ScanPage"
	opParallelScan = plan.OpParallelScan
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
	tel      *telemetry.T
}

// Query reads the items key selects, in sort key order, across as many pages
// as it takes; key fixes the partition key with Equal and may narrow the sort
// key:
//
//	expression.Key("ISBN").Equal(expression.Value("978-0")).
//		And(expression.Key("part").Between(expression.Value(1), expression.Value(9)))
//
// Nothing is sent until the iterator runs; pages are fetched as the loop
// needs them. An error is yielded once and ends it; an item that does not
// decode is yielded as an *ItemDecodeError and the loop goes on. The key
// condition is checked before sending (docs/mapper.md, "Queries").
//
// IAM: dynamodb:Query on the table, or with Index on the index.
func (t *Table[T]) Query(ctx context.Context, key expression.KeyConditionBuilder, opts ...QueryOption) iter.Seq2[T, error] {
	return t.iterate(ctx, t.prepare(opQuery, &key, opts))
}

// QueryPage reads one page of the items key selects (see Query) and returns
// them, a new non-nil slice, with the Cursor after the last one; pass it to
// StartAfter for the next page (empty: no more items). With Limit(n) a page
// holds up to n items, fetched in as many requests as it takes, the cursor
// exactly after the last; without it a page is one DynamoDB page. Items that
// do not decode are named in a *PageDecodeError returned with the others and
// the cursor. ctx bounds the requests. Details: docs/calls.md#querypage.
//
// IAM: dynamodb:Query on the table, or with Index on the index.
func (t *Table[T]) QueryPage(ctx context.Context, key expression.KeyConditionBuilder, opts ...QueryOption) ([]T, Cursor, error) {
	return t.page(ctx, t.prepare(opQueryPage, &key, opts))
}

// Scan reads every item of the table (or of the Index, or of one Segment)
// across as many pages as it takes, in no particular order. It behaves like
// Query in every other way: lazy, a break stops paging, an error is
// yielded once as (zero, err) and stops it, an item that does not decode
// into T is yielded as an *ItemDecodeError and the scan goes on, ctx
// bounds the whole iteration. A scan reads (and
// pays for) the whole table; see ParallelScan to spread it over goroutines.
//
// IAM: dynamodb:Scan on the table (arn:…:table/T), or with Index on the
// index (arn:…:table/T/index/N).
func (t *Table[T]) Scan(ctx context.Context, opts ...QueryOption) iter.Seq2[T, error] {
	return t.iterate(ctx, t.prepare(opScan, nil, opts))
}

// ScanPage reads one page of a scan and returns it with the Cursor after its
// last item, like QueryPage (items that do not decode into T included:
// a *PageDecodeError). With Segment, the cursor belongs to that segment and
// resumes only a scan of the same segment.
//
// IAM: dynamodb:Scan on the table (arn:…:table/T), or with Index on the
// index (arn:…:table/T/index/N).
func (t *Table[T]) ScanPage(ctx context.Context, opts ...QueryOption) ([]T, Cursor, error) {
	return t.page(ctx, t.prepare(opScanPage, nil, opts))
}

// prepare checks the options of one call and builds its request template.
// key is nil for a scan. It sends nothing; a refusal is kept in l.err.
// For a type with an entity attribute, only items of its entity are read
// (a filter is added; a Query of an index keyed by that attribute must fix
// it in its key condition instead).
// A read of the table itself (not of an Index, whose projection already
// decides) asks for the attributes T models only.
func (t *table) prepare(op string, key *expression.KeyConditionBuilder, opts []QueryOption) *listing {
	l := t.prepareFor(op, key, opts, t.p.S.Entity >= 0)
	if l.err == nil && l.index == "" && t.p.Proj != "" {
		names := l.names()
		merged := make(map[string]string, len(names)+len(t.p.ProjNames))
		maps.Copy(merged, names)
		maps.Copy(merged, t.p.ProjNames)
		if l.query != nil {
			l.query.ProjectionExpression, l.query.ExpressionAttributeNames = &t.p.Proj, merged
		} else {
			l.scan.ProjectionExpression, l.scan.ExpressionAttributeNames = &t.p.Proj, merged
		}
	}
	return l
}

// names returns the attribute names of l's request template.
func (l *listing) names() map[string]string {
	if l.query != nil {
		return l.query.ExpressionAttributeNames
	}
	return l.scan.ExpressionAttributeNames
}

// prepareAll is prepare without the entity filter: for Entities, which
// reads the items of every type.
func (t *table) prepareAll(op string, key *expression.KeyConditionBuilder, opts []QueryOption) *listing {
	return t.prepareFor(op, key, opts, false)
}

func (t *table) prepareFor(op string, key *expression.KeyConditionBuilder, opts []QueryOption, entityOnly bool) *listing {
	var o queryOptions
	applyOptions(&o, opts, QueryOption.applyQuery)
	entityKey := entityOnly && key != nil && t.entityKeyOf(o.Index) // the key condition selects the entity
	if entityOnly && !entityKey {
		o.filters = append(o.filters, t.p.S.EntityFilter())
	}
	l := &listing{tel: t.m.tel, op: op, table: t.name, index: o.Index, limit: o.Limit, pageSize: o.PageSize, filtered: len(o.filters) > 0}
	if o.Segmented {
		l.segment, l.total = o.Segment, o.Total
	}
	r := t.keyRules()
	o.Consistent = o.read.consistent
	if l.err = r.CheckListingOptions(op, key != nil, &o.ListingOptions); l.err != nil {
		return l
	}
	e, err := r.BuildListingExpr(op, key, o.filters)
	if err != nil {
		l.err = err
		return l
	}
	x, kc, err := r.RewriteListingExpr(op, o.Index, key != nil, l.filtered, e)
	if err == nil && entityKey {
		err = t.checkEntityKeyTerm(op, o.Index, kc)
	}
	if err != nil {
		l.err = err
		return l
	}
	t.listingInput(l, &o, key != nil, x)
	if o.Start != "" {
		p, err := decodeCursor(Cursor(o.Start))
		if err == nil {
			err = t.checkPosition(p, o.Index, l.segment, l.total, kc)
		}
		if err != nil {
			l.err = err
			return l
		}
		l.start = p.Key
	}
	return l
}

// listingInput sets l's QueryInput (isQuery) or ScanInput from the options
// o and the expressions x.
func (t *table) listingInput(l *listing, o *queryOptions, isQuery bool, x plan.ListingExpr) {
	var consistent, forward *bool
	if o.read.consistent {
		consistent = aws.Bool(true)
	}
	if o.Descending {
		forward = aws.Bool(false)
	}
	if isQuery {
		l.query = &dynamodb.QueryInput{
			TableName:                 aws.String(t.name),
			IndexName:                 plan.StrPtr(o.Index),
			KeyConditionExpression:    x.KeyExpr,
			FilterExpression:          x.Filter,
			ExpressionAttributeNames:  x.Names,
			ExpressionAttributeValues: x.Values,
			ConsistentRead:            consistent,
			ScanIndexForward:          forward,
		}
		return
	}
	l.scan = &dynamodb.ScanInput{
		TableName:      aws.String(t.name),
		IndexName:      plan.StrPtr(o.Index),
		ConsistentRead: consistent,
	}
	if l.filtered {
		l.scan.FilterExpression = x.Filter
		l.scan.ExpressionAttributeNames = x.Names
		l.scan.ExpressionAttributeValues = x.Values
	}
}

// requestLimit returns the DynamoDB Limit of the next request when got items
// have been returned, exact for a page (plan.RequestLimit).
func (l *listing) requestLimit(got int, exact bool) int {
	return plan.RequestLimit(l.limit, l.pageSize, got, l.filtered, exact)
}

// fetch sends one request starting after start, asking for at most n items
// (0: DynamoDB's default), reading scan segment segment when l.total > 0.
func (l *listing) fetch(ctx context.Context, c Client, start map[string]types.AttributeValue, n, segment int) (items []map[string]types.AttributeValue, last map[string]types.AttributeValue, err error) {
	ctx, tc := l.begin(ctx, n, segment)
	defer tc.endp(&err)
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
	if len(t.p.S.JavaDecFields) > 0 {
		if d.m.Value, err = t.p.S.JavaDecode(item); err != nil {
			return t.decodeError(item, err)
		}
	}
	if t.dec != nil {
		if t.ptr {
			pv := reflect.New(t.p.S.Type)
			if err = t.dec.DecodeValue(d.m.Value, pv, t.m.dec); err == nil {
				*out = pv.Interface().(T)
			}
		} else if err = codec.DecodeTo(t.dec, d.m.Value, out, t.m.dec); err != nil {
			var zero T
			*out = zero // attributevalue words the error, on a fresh value
		}
	}
	if te := (*codec.TextError)(nil); err != nil && errors.As(err, &te) {
		// The codec's own verdict on a text type: final.
	} else if t.dec == nil || err != nil {
		d.m.Value = t.avItem(d.m.Value)
		if t.ptr {
			pv := reflect.New(t.p.S.Type)
			err = codec.SafeDecode(t.avDec, &d.m, pv.Interface())
			*out = pv.Interface().(T)
		} else {
			err = codec.SafeDecode(t.avDec, &d.m, out)
		}
	}
	d.m.Value = nil
	if err != nil {
		var zero T
		*out = zero
		return t.decodeError(item, err)
	}
	return nil
}

// decodePage decodes a page of items into a new slice, with the errors
// of the items that did not decode (nil when all did), each placed before
// the item of out it came before in the page.
func (d *itemDecoder[T]) decodePage(items []map[string]types.AttributeValue) ([]T, []placedError) {
	out := make([]T, len(items))
	var bad []placedError
	n := 0
	for _, item := range items {
		if err := d.decodeItem(item, &out[n]); err != nil {
			bad = append(bad, placedError{before: n, err: err})
			continue
		}
		n++
	}
	return out[:n], bad
}

// placedError is the error of an item of a page that did not decode, and
// where it was: before the decoded item at index before.
type placedError struct {
	before int
	err    error
}

// iterate runs l page by page, yielding its items.
func (t *Table[T]) iterate(ctx context.Context, l *listing) iter.Seq2[T, error] {
	return iterateListing(ctx, l, t.m.client, func() func(map[string]types.AttributeValue, *T) error {
		return (&itemDecoder[T]{t: t}).decodeItem
	})
}

// decodeItem decodes item into *out, which must be the zero T, as
// decodeInto does; its error is an *ItemDecodeError.
func (d *itemDecoder[T]) decodeItem(item map[string]types.AttributeValue, out *T) error {
	if err := d.decodeInto(item, out); err != nil {
		return d.t.itemError(item, err)
	}
	return nil
}

// itemError is the error of item, an item of a result that did not decode
// into T with err: an *ItemDecodeError naming it by its key.
func (t *Table[T]) itemError(item map[string]types.AttributeValue, err error) *ItemDecodeError {
	return &ItemDecodeError{Key: t.pickKey(item), Item: item, Err: err, decode: t.decodeAny}
}

// iterateListing runs l through c page by page, yielding its items decoded
// by a decoder newDecoder makes for each iteration (decoders reuse state)
// into a reused value, which yield receives a copy of. An item that does
// not decode is yielded as the decoder's error (an *ItemDecodeError), and
// the iteration goes on; any other error ends it.
func iterateListing[V any](ctx context.Context, l *listing, c Client,
	newDecoder func() func(item map[string]types.AttributeValue, out *V) error) iter.Seq2[V, error] {
	return func(yield func(V, error) bool) {
		var zero V
		if l.err != nil {
			yield(zero, l.err)
			return
		}
		start, got := l.start, 0
		decode := newDecoder()
		v := new(V) // reused: yield receives a copy
		for {
			if err := ctx.Err(); err != nil {
				yield(zero, l.requestError(err, l.segment))
				return
			}
			items, last, err := l.fetch(ctx, c, start, l.requestLimit(got, false), l.segment)
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
				err := decode(item, v)
				if err != nil {
					*v = zero
				}
				if !yield(*v, err) {
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
	var bad *PageDecodeError // the items that did not decode, read all the same
	start := l.start
	d := &itemDecoder[T]{t: t}
	for {
		if err := ctx.Err(); err != nil {
			return nil, "", l.requestError(err, l.segment)
		}
		items, last, err := l.fetch(ctx, t.m.client, start, l.requestLimit(len(out)+bad.count(), true), l.segment)
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
				// Reported with the page's other items, which are
				// returned: one such item does not hide the rest.
				out = out[:len(out)-1]
				if bad == nil {
					bad = &PageDecodeError{Table: t.name}
				}
				bad.Failed = append(bad.Failed, t.itemError(item, err))
			}
		}
		if len(last) == 0 {
			return out, "", bad.orNil()
		}
		if l.limit == 0 || len(out)+bad.count() >= l.limit {
			c, err := encodeCursor(plan.Position{Index: l.index, Segment: l.segment, Total: l.total, Key: last})
			if err != nil {
				return nil, "", err
			}
			return out, c, bad.orNil()
		}
		start = last
	}
}
