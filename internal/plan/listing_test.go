package plan

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/ddbkit/dynamo/internal/errs"
	"github.com/ddbkit/dynamo/internal/schema"
)

// Issue 12 item 6: Limit above MaxInt32 is not truncated to int32.
func TestLimitAboveMaxInt32(t *testing.T) {
	for _, n := range []int{math.MaxInt, 1<<32 + 2, math.MaxInt32 + 1} {
		if got := RequestLimit(n, 0, 0, false, false); got != math.MaxInt32 {
			t.Errorf("Limit(%d): request limit %d, want %d", n, got, math.MaxInt32)
		}
	}
	if got := RequestLimit(10, 0, 3, false, false); got != 7 {
		t.Errorf("Limit(10) after 3: %d, want 7", got)
	}
}

// CheckListingOptions refuses each option that does not fit the call, with
// ErrInvalidInput and the fix, and takes the ones that do.
func TestCheckListingOptionsRefusesWhatDoesNotFit(t *testing.T) {
	r := KeyRules{Table: "T", S: &schema.Schema{Indexes: []schema.SecondaryIndex{{Name: "byGlobal"}, {Name: "byLocal", Local: true}}}}
	for _, tc := range []struct {
		op      string
		isQuery bool
		o       ListingOptions
		want    string // "" when taken
	}{
		{"Query", true, ListingOptions{Limit: 5, PageSize: 2, Descending: true, Index: "byLocal", Consistent: true}, ""},
		{"Scan", false, ListingOptions{Segmented: true, Segment: 1, Total: 2, Start: "c"}, ""},
		{"Query", true, ListingOptions{Limit: -1}, "Limit(-1): give a positive number"},
		{"Query", true, ListingOptions{PageSize: math.MaxInt32 + 1}, "PageSize(2147483648): give 1 to 2147483647"},
		{"Scan", false, ListingOptions{Descending: true}, "Descending on a scan"},
		{"Query", true, ListingOptions{Segmented: true, Total: 1}, "Segment on a query"},
		{OpParallelScan, false, ListingOptions{Segmented: true, Total: 1}, "Segment with ParallelScan"},
		{OpParallelScan, false, ListingOptions{Start: "c"}, "StartAfter with ParallelScan"},
		{"Scan", false, ListingOptions{Segmented: true, Segment: 2, Total: 2}, "Segment(2, 2): segment 2 of 2"},
		{"Query", true, ListingOptions{Index: "byGlobal", Consistent: true}, `ConsistentRead on the global secondary index "byGlobal"`},
	} {
		err := r.CheckListingOptions(tc.op, tc.isQuery, &tc.o)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %+v: %v", tc.op, tc.o, err)
		case tc.want != "" && (!errors.Is(err, errs.ErrInvalidInput) || !strings.Contains(err.Error(), tc.op+` on table "T": `+tc.want)):
			t.Errorf("%s %+v: %v, want %q", tc.op, tc.o, err, tc.want)
		}
	}
}

// RequestLimit asks for no more than the call still needs (unless a filter
// may drop items and the call is not a page), for at most PageSize, and
// never for more than DynamoDB's MaxInt32, whatever Limit and PageSize say.
func TestRequestLimitAsksForWhatIsStillNeeded(t *testing.T) {
	for _, tc := range []struct {
		limit, pageSize, got int
		filtered, exact      bool
		want                 int
	}{
		{0, 0, 0, false, false, 0},
		{0, 25, 100, false, false, 25},
		{10, 0, 0, false, false, 10},
		{10, 3, 0, false, false, 3},
		{10, 3, 8, false, false, 2},
		{10, 0, 9, true, false, 0}, // a filter may drop items: DynamoDB's pages
		{10, 4, 9, true, false, 4},
		{10, 4, 9, true, true, 1}, // a page never reads past its last item
		{10, 0, 9, true, true, 1},
		{math.MaxInt, 0, 0, false, false, math.MaxInt32},
		{math.MaxInt, math.MaxInt32, math.MaxInt - 5, false, false, 5},
		{math.MaxInt32 + 1, math.MaxInt32, 0, false, false, math.MaxInt32},
		{1, math.MaxInt32, 0, true, true, 1},
	} {
		if got := RequestLimit(tc.limit, tc.pageSize, tc.got, tc.filtered, tc.exact); got != tc.want {
			t.Errorf("RequestLimit(%d, %d, %d, %t, %t) = %d, want %d", tc.limit, tc.pageSize, tc.got, tc.filtered, tc.exact, got, tc.want)
		}
	}
}

// CheckListingOptions refuses every Segment outside DynamoDB's range
// (total 1 to MaxTotalSegments, segment 0 to total-1) and every negative
// size, naming the values given; the range's ends and math.MaxInt as a
// Limit are taken.
func TestCheckListingOptionsSegmentAndSizeBounds(t *testing.T) {
	r := KeyRules{Table: "T", S: &schema.Schema{}}
	for _, tc := range []struct {
		o    ListingOptions
		want string // "" when taken
	}{
		{ListingOptions{Limit: math.MaxInt, PageSize: math.MaxInt32}, ""},
		{ListingOptions{Segmented: true, Segment: 0, Total: 1}, ""},
		{ListingOptions{Segmented: true, Segment: MaxTotalSegments - 1, Total: MaxTotalSegments}, ""},
		{ListingOptions{Limit: math.MinInt}, "Limit(-9223372036854775808)"},
		{ListingOptions{PageSize: -1}, "PageSize(-1)"},
		{ListingOptions{PageSize: math.MaxInt}, "PageSize(9223372036854775807)"},
		{ListingOptions{Segmented: true, Segment: 0, Total: 0}, "Segment(0, 0): 0 total segments; DynamoDB takes 1 to"},
		{ListingOptions{Segmented: true, Segment: -1, Total: -1}, "Segment(-1, -1): -1 total segments"},
		{ListingOptions{Segmented: true, Segment: -1, Total: 4}, "Segment(-1, 4): segment -1 of 4; segments are numbered 0 to 3"},
		{ListingOptions{Segmented: true, Segment: 4, Total: 4}, "Segment(4, 4): segment 4 of 4"},
		{ListingOptions{Segmented: true, Segment: math.MaxInt, Total: math.MaxInt}, "Segment(9223372036854775807, 9223372036854775807): 9223372036854775807 total segments"},
		{ListingOptions{Segmented: true, Segment: 0, Total: MaxTotalSegments + 1}, "Segment(0, 1000001): 1000001 total segments; DynamoDB takes 1 to 1000000"},
	} {
		err := r.CheckListingOptions("Scan", false, &tc.o)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.o, err)
		case tc.want != "" && (!errors.Is(err, errs.ErrInvalidInput) || !strings.Contains(err.Error(), `Scan on table "T": `+tc.want)):
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
}

// BuildListingExpr ANDs every filter into one expression with the key
// condition, and refuses a condition that does not build (an unset
// ConditionBuilder) naming which one; RewriteListingExpr then refuses a
// filter name of invalid UTF-8 and places a query's key terms.
func TestListingExprBuildsAndRewrites(t *testing.T) {
	N, V, K := expression.Name, expression.Value, expression.Key
	r := kcRules(t)
	if e, err := r.BuildListingExpr("Scan", nil, nil); err != nil || e.Filter() != nil || e.KeyCondition() != nil {
		t.Errorf("no key, no filter: %v, %v", e, err)
	}
	key := K("p").Equal(V("a"))
	three := []expression.ConditionBuilder{N("x").Equal(V(1)), N("y").Equal(V(2)), N("z").Equal(V(3))}
	e, err := r.BuildListingExpr("Query", &key, three)
	if err != nil {
		t.Fatal(err)
	}
	if f := *e.Filter(); strings.Count(f, " AND ") != 2 || len(e.Names()) != 4 {
		t.Errorf("three filters: %q, names %v", f, e.Names())
	}
	x, kc, err := r.RewriteListingExpr("Query", "", true, true, e)
	if err != nil || kc == nil || len(kc.Hash) != 1 || kc.Hash[0].Name != "p" || x.Filter == nil {
		t.Errorf("RewriteListingExpr: %+v, %+v, %v", x, kc, err)
	}
	for _, tc := range []struct {
		op      string
		key     *expression.KeyConditionBuilder
		filters []expression.ConditionBuilder
		want    string
	}{
		{"Scan", nil, []expression.ConditionBuilder{{}}, `Scan on table "Events": the filter does not build`},
		{"Query", &key, []expression.ConditionBuilder{{}}, `Query on table "Events": the key condition or filter does not build`},
		{"Query", &expression.KeyConditionBuilder{}, nil, "the key condition or filter does not build"},
	} {
		if _, err := r.BuildListingExpr(tc.op, tc.key, tc.filters); !errors.Is(err, errs.ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.op, err, tc.want)
		}
	}
	bad, err := r.BuildListingExpr("Scan", nil, []expression.ConditionBuilder{N("a\xff").Equal(V(1))})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.RewriteListingExpr("Scan", "", false, true, bad); !errors.Is(err, errs.ErrInvalidInput) || !strings.Contains(err.Error(), "is not valid UTF-8") {
		t.Errorf("a filter name of invalid UTF-8: %v", err)
	}
}
