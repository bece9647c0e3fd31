package plan

import (
	"fmt"
	"math"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/errs"
	"github.com/ddbkit/dynamo/internal/schema"
)

// OpParallelScan is the name of the call that scans every segment itself.
const OpParallelScan = "ParallelScan"

// ListingOptions are the options of a Query or Scan its checks read: the
// root's QueryOptions set them (ConsistentRead only through the root's
// read options, copied into Consistent before the checks).
type ListingOptions struct {
	Index      string
	Limit      int
	PageSize   int
	Descending bool
	Start      string // the StartAfter cursor; "" for none
	Segment    int
	Total      int
	Segmented  bool
	Consistent bool
}

// CheckListingOptions refuses options o that do not fit the call op, a
// query (isQuery) or a scan of the table.
func (r KeyRules) CheckListingOptions(op string, isQuery bool, o *ListingOptions) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s on table %q: %s", errs.ErrInvalidInput, op, r.Table, fmt.Sprintf(format, args...))
	}
	switch {
	case o.Limit < 0:
		return fail("Limit(%d): give a positive number of items, or no Limit for all of them", o.Limit)
	case o.PageSize < 0 || o.PageSize > math.MaxInt32:
		return fail("PageSize(%d): give 1 to %d items per request, or no PageSize for DynamoDB's pages of up to 1 MB", o.PageSize, math.MaxInt32)
	case o.Descending && !isQuery:
		return fail("Descending on a scan: scans return items in no particular order; use Query for sorted results")
	case o.Segmented && isQuery:
		return fail("Segment on a query: only scans are split into segments")
	case o.Segmented && op == OpParallelScan:
		return fail("Segment with ParallelScan, which scans every segment itself: use Scan or ScanPage with Segment to scan one segment")
	case o.Start != "" && op == OpParallelScan:
		return fail("StartAfter with ParallelScan, which keeps one position per segment: use ScanPage with Segment to page through one segment")
	}
	if o.Segmented {
		if err := CheckSegment(o.Segment, o.Total); err != nil {
			return fail("Segment(%d, %d): %v", o.Segment, o.Total, err)
		}
	}
	if o.Index != "" {
		if err := schema.CheckIndexName(o.Index); err != nil {
			return fail("Index: %v", err)
		}
		if o.Consistent {
			for _, x := range r.S.Indexes {
				if x.Name == o.Index && !x.Local {
					return fail("ConsistentRead on the global secondary index %q, which DynamoDB reads only eventually consistently: drop ConsistentRead, or read the table or a local index", o.Index)
				}
			}
		}
	}
	return nil
}

// RequestLimit returns the DynamoDB Limit of a listing's next request when
// got items have been returned (0: none), for a listing of limit items in
// all (0: no limit) in pages of pageSize (0: DynamoDB's default). Without a
// filter, no request asks for more items than the call still needs; exact
// (pages) applies that even with a filter, so that a page never reads past
// its last item. It never exceeds math.MaxInt32, the most DynamoDB's Limit
// takes: a Limit above it (such as Limit(math.MaxInt) for "no limit") asks
// for MaxInt32 items per request.
func RequestLimit(limit, pageSize, got int, filtered, exact bool) int {
	n := pageSize
	if limit > 0 && (exact || !filtered) {
		if rem := limit - got; n == 0 || rem < n {
			n = rem
		}
	}
	return min(n, math.MaxInt32)
}

// ListingExpr is the expressions of a query or scan as sent.
type ListingExpr struct {
	KeyExpr, Filter *string
	Names           map[string]string
	Values          map[string]types.AttributeValue
}

// BuildListingExpr builds the key condition key (nil for a scan) and the
// filters of the call op, ANDed, into one expression; with neither, the
// zero Expression.
func (r KeyRules) BuildListingExpr(op string, key *expression.KeyConditionBuilder, filters []expression.ConditionBuilder) (expression.Expression, error) {
	var e expression.Expression
	if key == nil && len(filters) == 0 {
		return e, nil
	}
	b := expression.NewBuilder() // one per call: built builders share state
	if key != nil {
		b = b.WithKeyCondition(*key)
	}
	if len(filters) > 0 {
		f := filters[0]
		if len(filters) > 1 {
			f = expression.And(filters[0], filters[1], filters[2:]...)
		}
		b = b.WithFilter(f)
	}
	e, err := b.Build()
	if err != nil {
		what := "filter"
		if key != nil {
			what = "key condition or filter"
		}
		return e, fmt.Errorf("%w: %s on table %q: the %s does not build (%v): build a key condition with expression.Key(name).Equal(expression.Value(v)), a filter with expression.Name(name)",
			errs.ErrInvalidInput, op, r.Table, what, err)
	}
	return e, nil
}

// RewriteListingExpr returns e's expressions as sent, and the key condition
// of a query (isQuery) as checked against the key schema of index.
// Values compared with javabool/javadate attributes — in the key condition
// (a javadate sort key) and the filter — are encoded as stored, and
// Name("a.b") may name the attribute "a.b" (schema.RewriteCond). The key
// condition is checked (and a cursor against it) as sent.
func (r KeyRules) RewriteListingExpr(op, index string, isQuery, filtered bool, e expression.Expression) (ListingExpr, *KeyCond, error) {
	x := ListingExpr{KeyExpr: e.KeyCondition(), Filter: e.Filter(), Names: e.Names(), Values: e.Values()}
	var kc *KeyCond
	if isQuery {
		k, n, err := r.S.RewriteCond(*x.KeyExpr, x.Names, x.Values, aws.ToString(x.Filter))
		if err != nil {
			return x, nil, fmt.Errorf("%w: %s on table %q: key condition: %w", errs.ErrInvalidInput, op, r.Table, err)
		}
		x.KeyExpr, x.Names = &k, n
		if kc, err = r.CheckKeyCondition(op, index, *x.KeyExpr, x.Names, x.Values); err != nil {
			return x, nil, err
		}
	}
	if err := r.CheckExprText(op, e); err != nil {
		return x, nil, err
	}
	if filtered {
		f, n, err := r.S.RewriteCond(*x.Filter, x.Names, x.Values, aws.ToString(x.KeyExpr))
		if err != nil {
			return x, nil, fmt.Errorf("%w: %s on table %q: filter: %w", errs.ErrInvalidInput, op, r.Table, err)
		}
		x.Filter, x.Names = &f, n
	}
	return x, kc, nil
}
