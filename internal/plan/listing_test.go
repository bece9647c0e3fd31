package plan

import (
	"errors"
	"math"
	"strings"
	"testing"

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
