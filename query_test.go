package dynamo

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"iter"
	"math"
	"net/url"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
	avs "github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/plan"
)

// qsItem is the item of the query and scan tests: partition "p", sort key
// "n".
type qsItem struct {
	P       string `dynamo:"p,hash"`
	N       int    `dynamo:"n,range"`
	Body    string `dynamo:"body"`
	Version int64  `dynamo:"v,version"`
}

// qsItems returns n items of partition "a" with sort keys 1 to n; item n
// has body "item n" and owner "o0n" (for the local index byOwner).
func qsItems(n int) []map[string]types.AttributeValue {
	items := make([]map[string]types.AttributeValue, n)
	for i := range items {
		items[i] = map[string]types.AttributeValue{
			"p":     &types.AttributeValueMemberS{Value: "a"},
			"n":     &types.AttributeValueMemberN{Value: strconv.Itoa(i + 1)},
			"body":  &types.AttributeValueMemberS{Value: "item " + strconv.Itoa(i+1)},
			"owner": &types.AttributeValueMemberS{Value: fmt.Sprintf("o%03d", i+1)},
			"v":     &types.AttributeValueMemberN{Value: "1"},
		}
	}
	return items
}

// qsDB is the fake DynamoDB of the query and scan tests holding items:
// table Events keyed p, n, with the local index byOwner (p, owner); item n
// is in scan segment n % TotalSegments.
func qsDB(items ...map[string]types.AttributeValue) *fakeDB {
	db := (&fakeDB{segment: func(it map[string]types.AttributeValue, total int) int { return qsN(it) % total }}).
		table("Events", "p", "n").index("Events", "byOwner", "p", "owner", false)
	return db.put("Events", items...)
}

func newQSTable(t *testing.T, n int) (*Table[qsItem], *fakeDB) {
	t.Helper()
	c := qsDB(qsItems(n)...)
	tb, err := NewTable[qsItem](NewMapper(c), "Events")
	if err != nil {
		t.Fatal(err)
	}
	return tb, c
}

func qsN(item map[string]types.AttributeValue) int {
	n, _ := strconv.Atoi(item["n"].(*types.AttributeValueMemberN).Value)
	return n
}

// qsBodies is a filter keeping the items of the sort keys ns.
func qsBodies(ns ...int) QueryOption {
	var vs []expression.OperandBuilder
	for _, n := range ns {
		vs = append(vs, expression.Value("item "+strconv.Itoa(n)))
	}
	return Filter(expression.Name("body").In(vs[0], vs[1:]...))
}

var qsKeyCond = expression.Key("p").Equal(expression.Value("a"))

// collect ranges over seq and returns the sort keys of the items, and the
// first error.
func collect(seq func(func(qsItem, error) bool)) (ns []int, err error) {
	for v, err := range seq {
		if err != nil {
			return ns, err
		}
		ns = append(ns, v.N)
	}
	return ns, nil
}

func seqInts(from, to int) []int {
	var out []int
	if from <= to {
		for i := from; i <= to; i++ {
			out = append(out, i)
		}
	} else {
		for i := from; i >= to; i-- {
			out = append(out, i)
		}
	}
	return out
}

func startN(in map[string]types.AttributeValue) string {
	if in == nil {
		return "-"
	}
	return in["n"].(*types.AttributeValueMemberN).Value
}

// Ten items in pages of four: three requests, each starting after the last
// key of the one before, in both orders.
func TestQueryThreePagesBothOrders(t *testing.T) {
	for _, desc := range []bool{false, true} {
		t.Run(fmt.Sprint("descending=", desc), func(t *testing.T) {
			tb, c := newQSTable(t, 10)
			opts := []QueryOption{PageSize(4)}
			want, wantStarts := seqInts(1, 10), []string{"-", "4", "8"}
			if desc {
				opts = append(opts, Descending())
				want, wantStarts = seqInts(10, 1), []string{"-", "7", "3"}
			}
			got, err := collect(tb.Query(t.Context(), qsKeyCond, opts...))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("items %v, want %v", got, want)
			}
			qs := c.queries()
			var starts []string
			for _, in := range qs {
				starts = append(starts, startN(in.ExclusiveStartKey))
				if aws.ToInt32(in.Limit) != 4 || aws.ToString(in.TableName) != "Events" {
					t.Errorf("request Limit %d table %q, want 4 %q", aws.ToInt32(in.Limit), aws.ToString(in.TableName), "Events")
				}
				if desc != (in.ScanIndexForward != nil && !*in.ScanIndexForward) {
					t.Errorf("ScanIndexForward = %v with Descending %v", in.ScanIndexForward, desc)
				}
				if got := resolveExpr(t, aws.ToString(in.KeyConditionExpression), in.ExpressionAttributeNames, in.ExpressionAttributeValues); got != `p = S:a` {
					t.Errorf("key condition %q, want %q", got, `p = S:a`)
				}
				if in.FilterExpression != nil || in.IndexName != nil || in.ConsistentRead != nil {
					t.Errorf("unasked options in request: filter %v index %v consistent %v", in.FilterExpression, in.IndexName, in.ConsistentRead)
				}
			}
			if !slices.Equal(starts, wantStarts) {
				t.Errorf("requests started after %v, want %v", starts, wantStarts)
			}
		})
	}
}

// QueryPage with Limit pages through the results with cursors, in both
// orders, and the pages join up without gaps or repeats.
func TestQueryPageResume(t *testing.T) {
	for _, desc := range []bool{false, true} {
		t.Run(fmt.Sprint("descending=", desc), func(t *testing.T) {
			tb, c := newQSTable(t, 10)
			opts := []QueryOption{Limit(4)}
			want := seqInts(1, 10)
			if desc {
				opts = append(opts, Descending())
				want = seqInts(10, 1)
			}
			var all []int
			var cur Cursor
			var sizes []int
			for range 10 {
				items, next, err := tb.QueryPage(t.Context(), qsKeyCond, append(opts, StartAfter(cur))...)
				if err != nil {
					t.Fatal(err)
				}
				if items == nil {
					t.Fatal("QueryPage returned a nil slice")
				}
				sizes = append(sizes, len(items))
				for _, it := range items {
					all = append(all, it.N)
				}
				if next != "" && url.QueryEscape(string(next)) != string(next) {
					t.Errorf("cursor %q is not URL-safe", next)
				}
				if next == "" {
					break
				}
				if _, err := ParseCursor(string(next)); err != nil {
					t.Fatalf("ParseCursor of a returned cursor: %v", err)
				}
				cur = next
			}
			if !slices.Equal(all, want) {
				t.Fatalf("pages joined: %v, want %v", all, want)
			}
			if !slices.Equal(sizes, []int{4, 4, 2}) {
				t.Errorf("page sizes %v, want [4 4 2]", sizes)
			}
			if qs := c.queries(); len(qs) != 3 {
				t.Errorf("%d requests, want 3", len(qs))
			}
		})
	}
}

// A page that ends exactly at the end of the results still has a cursor
// (DynamoDB stopped because of Limit); the page after it is empty and ends
// the paging.
func TestQueryPageExactEnd(t *testing.T) {
	tb, _ := newQSTable(t, 4)
	items, cur, err := tb.QueryPage(t.Context(), qsKeyCond, Limit(4))
	if err != nil || len(items) != 4 || cur == "" {
		t.Fatalf("first page: %d items, cursor %q, %v; want 4 items and a cursor", len(items), cur, err)
	}
	items, cur, err = tb.QueryPage(t.Context(), qsKeyCond, Limit(4), StartAfter(cur))
	if err != nil || len(items) != 0 || cur != "" {
		t.Fatalf("second page: %d items, cursor %q, %v; want none and no cursor", len(items), cur, err)
	}
}

// With a filter, a page with Limit never asks DynamoDB for more items than it
// still needs, so its cursor is exactly after its last item.
func TestQueryPageFilterLimitExact(t *testing.T) {
	tb, c := newQSTable(t, 10)
	thirds := qsBodies(3, 6, 9)
	items, cur, err := tb.QueryPage(t.Context(), qsKeyCond, thirds, Limit(2), PageSize(4))
	if err != nil {
		t.Fatal(err)
	}
	if got := qsNs(items); !slices.Equal(got, []int{3, 6}) || cur == "" {
		t.Fatalf("first page %v cursor %q, want [3 6] and a cursor", got, cur)
	}
	var limits []int32
	for _, in := range c.queries() {
		limits = append(limits, aws.ToInt32(in.Limit))
		if in.FilterExpression == nil {
			t.Error("request without the filter")
		}
	}
	if !slices.Equal(limits, []int32{2, 2, 1, 1}) { // 1-2: none; 3-4: 3; 5: none; 6: 6
		t.Errorf("request limits %v, want [2 2 1 1]: never more than the page still needs", limits)
	}
	items, cur, err = tb.QueryPage(t.Context(), qsKeyCond, thirds, Limit(2), PageSize(4), StartAfter(cur))
	if err != nil {
		t.Fatal(err)
	}
	if got := qsNs(items); !slices.Equal(got, []int{9}) || cur != "" {
		t.Fatalf("second page %v cursor %q, want [9] and no cursor", got, cur)
	}
}

func qsNs(items []qsItem) []int {
	var ns []int
	for _, it := range items {
		ns = append(ns, it.N)
	}
	return ns
}

// Without Limit, QueryPage is one DynamoDB page.
func TestQueryPageOneRequest(t *testing.T) {
	tb, c := newQSTable(t, 10)
	items, cur, err := tb.QueryPage(t.Context(), qsKeyCond, PageSize(3))
	if err != nil || len(items) != 3 || cur == "" {
		t.Fatalf("%d items, cursor %q, %v", len(items), cur, err)
	}
	if qs := c.queries(); len(qs) != 1 {
		t.Fatalf("%d requests, want 1", len(qs))
	}
}

// Breaking out of the loop sends no further request.
func TestQueryBreakStopsPaging(t *testing.T) {
	tb, c := newQSTable(t, 10)
	n := 0
	for _, err := range tb.Query(t.Context(), qsKeyCond, PageSize(2)) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 3 {
			break
		}
	}
	if qs := c.queries(); len(qs) != 2 {
		t.Fatalf("%d requests after taking 3 items of pages of 2, want 2", len(qs))
	}
}

// Limit counts items yielded. Without a filter the requests ask for no more
// than still needed; with one they keep PageSize.
func TestQueryLimit(t *testing.T) {
	limits := func(c *fakeDB) []int32 {
		var l []int32
		for _, in := range c.queries() {
			l = append(l, aws.ToInt32(in.Limit))
		}
		return l
	}
	t.Run("alone", func(t *testing.T) {
		tb, c := newQSTable(t, 10)
		got, err := collect(tb.Query(t.Context(), qsKeyCond, Limit(5)))
		if err != nil || !slices.Equal(got, seqInts(1, 5)) {
			t.Fatalf("items %v, %v; want 1..5", got, err)
		}
		if l := limits(c); !slices.Equal(l, []int32{5}) {
			t.Errorf("request limits %v, want [5]", l)
		}
	})
	t.Run("with PageSize", func(t *testing.T) {
		tb, c := newQSTable(t, 10)
		got, err := collect(tb.Query(t.Context(), qsKeyCond, Limit(5), PageSize(2)))
		if err != nil || !slices.Equal(got, seqInts(1, 5)) {
			t.Fatalf("items %v, %v; want 1..5", got, err)
		}
		if l := limits(c); !slices.Equal(l, []int32{2, 2, 1}) {
			t.Errorf("request limits %v, want [2 2 1]", l)
		}
	})
	t.Run("with Filter", func(t *testing.T) {
		tb, c := newQSTable(t, 10)
		got, err := collect(tb.Query(t.Context(), qsKeyCond, Limit(3), PageSize(4), qsBodies(2, 4, 6, 8, 10)))
		if err != nil || !slices.Equal(got, []int{2, 4, 6}) {
			t.Fatalf("items %v, %v; want [2 4 6]", got, err)
		}
		if l := limits(c); !slices.Equal(l, []int32{4, 4}) {
			t.Errorf("request limits %v, want [4 4]", l)
		}
	})
}

// Index, ConsistentRead and several Filters reach the request; the filter's
// and the key condition's placeholders are merged without collisions. The
// index is local (p, owner), where DynamoDB allows ConsistentRead and a
// filter on the table's sort key n; its key condition names p.
func TestQueryOptionsInRequest(t *testing.T) {
	tb, c := newQSTable(t, 3)
	_, err := collect(tb.Query(t.Context(), qsKeyCond.And(expression.Key("owner").Equal(expression.Value("ann"))),
		Index("byOwner"), ConsistentRead(),
		Filter(expression.Name("body").BeginsWith("item")),
		Filter(expression.Name("n").LessThan(expression.Value(3)))))
	if err != nil {
		t.Fatal(err)
	}
	in := c.queries()[0]
	if aws.ToString(in.IndexName) != "byOwner" || !aws.ToBool(in.ConsistentRead) {
		t.Errorf("IndexName %v ConsistentRead %v", in.IndexName, in.ConsistentRead)
	}
	kc := resolveExpr(t, aws.ToString(in.KeyConditionExpression), in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	fe := resolveExpr(t, aws.ToString(in.FilterExpression), in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	if kc != `(p = S:a) AND (owner = S:ann)` {
		t.Errorf("key condition %q", kc)
	}
	if fe != `(begins_with (body, S:item)) AND (n < N:3)` {
		t.Errorf("filter %q", fe)
	}
	checkAllUsed(t, in.ExpressionAttributeNames, in.ExpressionAttributeValues, in.KeyConditionExpression, in.FilterExpression)

	_, err = collect(tb.Scan(t.Context(), Index("byOwner"), ConsistentRead(), PageSize(7),
		Filter(expression.Name("body").AttributeExists())))
	if err != nil {
		t.Fatal(err)
	}
	s := c.scans()[0]
	if aws.ToString(s.IndexName) != "byOwner" || !aws.ToBool(s.ConsistentRead) || aws.ToInt32(s.Limit) != 7 ||
		s.Segment != nil || s.TotalSegments != nil {
		t.Errorf("scan request %+v", s)
	}
	if fe := resolveExpr(t, aws.ToString(s.FilterExpression), s.ExpressionAttributeNames, s.ExpressionAttributeValues); fe != "attribute_exists (body)" {
		t.Errorf("scan filter %q", fe)
	}
}

// Bad options are refused with ErrInvalidInput, and a message that names
// the problem, before any request is sent.
func TestQueryInvalidInput(t *testing.T) {
	tb, _ := newQSTable(t, 1)
	ctx := t.Context()
	cursor := func(p plan.Position) Cursor {
		c, err := encodeCursor(p)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	key := map[string]types.AttributeValue{"p": &types.AttributeValueMemberS{Value: "a"}, "n": &types.AttributeValueMemberN{Value: "1"}}
	baseCursor := cursor(plan.Position{Key: key})
	indexCursor := cursor(plan.Position{Index: "byOwner", Key: map[string]types.AttributeValue{
		"p": key["p"], "n": key["n"], "owner": &types.AttributeValueMemberS{Value: "ann"}}})
	segCursor := cursor(plan.Position{Segment: 1, Total: 4, Key: key})
	otherKey := cursor(plan.Position{Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "x"}}})
	extraKey := cursor(plan.Position{Key: map[string]types.AttributeValue{"p": key["p"], "n": key["n"], "owner": key["p"]}})

	query := func(opts ...QueryOption) func() error {
		return func() error { _, err := collect(tb.Query(ctx, qsKeyCond, opts...)); return err }
	}
	queryPage := func(opts ...QueryOption) func() error {
		return func() error { _, _, err := tb.QueryPage(ctx, qsKeyCond, opts...); return err }
	}
	scan := func(opts ...QueryOption) func() error {
		return func() error { _, err := collect(tb.Scan(ctx, opts...)); return err }
	}
	scanPage := func(opts ...QueryOption) func() error {
		return func() error { _, _, err := tb.ScanPage(ctx, opts...); return err }
	}
	parallel := func(n int, opts ...QueryOption) func() error {
		return func() error { _, err := collect(tb.ParallelScan(ctx, n, opts...)); return err }
	}
	cases := []struct {
		name string
		call func() error
		want string
	}{
		{"negative limit", query(Limit(-1)), "Limit(-1)"},
		{"negative page size", scan(PageSize(-2)), "PageSize(-2)"},
		{"huge page size", queryPage(PageSize(math.MaxInt32 + 1)), "PageSize(2147483648)"},
		{"descending scan", scan(Descending()), "Descending on a scan"},
		{"descending scan page", scanPage(Descending()), "Descending on a scan"},
		{"segment on query", query(Segment(0, 2)), "Segment on a query"},
		{"segment out of range", scan(Segment(4, 4)), "segments are numbered 0 to 3"},
		{"negative segment", scanPage(Segment(-1, 4)), "segment -1 of 4"},
		{"zero segments", scan(Segment(0, 0)), "0 total segments"},
		{"too many segments", scan(Segment(0, 1_000_001)), "1000001 total segments"},
		{"segment with parallel scan", parallel(4, Segment(0, 4)), "Segment with ParallelScan"},
		{"cursor with parallel scan", parallel(4, StartAfter(baseCursor)), "StartAfter with ParallelScan"},
		{"parallel scan of zero segments", parallel(0), "0 segments"},
		{"parallel scan of too many segments", parallel(1_000_001), "1000001 segments"},
		{"bad index name", query(Index("x")), `index name "x"`},
		{"bad index character", scan(Index("by owner")), `contains " "`},
		{"garbage cursor", query(StartAfter("not a cursor!")), "malformed cursor: not base64url"},
		{"garbage cursor page", queryPage(StartAfter("e30")), "malformed cursor"},
		{"index cursor on table", query(StartAfter(indexCursor)), `made reading index "byOwner", this call reads the table itself`},
		{"table cursor on index", queryPage(Index("byOwner"), StartAfter(baseCursor)), `made reading the table itself, this call reads index "byOwner"`},
		{"cursor of another key", query(StartAfter(otherKey)), `lacks the key attribute "p"`},
		{"cursor with extra attributes", scanPage(StartAfter(extraKey)), `the table's key is "p", "n"`},
		{"segment cursor on whole scan", scanPage(StartAfter(segCursor)), "scan of segment 1 of 4, this call reads everything"},
		{"segment cursor on other segment", scanPage(Segment(2, 4), StartAfter(segCursor)), "segment 1 of 4, this call scans segment 2 of 4"},
		{"whole-scan cursor on segment", scanPage(Segment(2, 4), StartAfter(baseCursor)), "scan of the whole table, this call scans segment 2 of 4"},
		{"unset key condition", func() error {
			_, err := collect(tb.Query(ctx, expression.KeyConditionBuilder{}))
			return err
		}, "key condition or filter does not build"},
		{"unset filter", scan(Filter(expression.ConditionBuilder{})), "filter does not build"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := qsDB(qsItems(1)...)
			tb.m = NewMapper(c) // a fresh fake per case; tb is otherwise shared
			err := tc.call()
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("err = %v, want ErrInvalidInput", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), ": ") || strings.Count(err.Error(), "dynamo:") != 1 {
				t.Errorf("error %q: want one \"dynamo:\" prefix", err)
			}
			if n := c.count(""); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

// The valid cursors of the invalid-input test do work where they belong.
func TestQueryCursorAccepted(t *testing.T) {
	tb, c := newQSTable(t, 10)
	_, cur, err := tb.ScanPage(t.Context(), Segment(1, 3), Limit(2)) // 1, 4
	if err != nil || cur == "" {
		t.Fatalf("cursor %q, %v", cur, err)
	}
	items, _, err := tb.ScanPage(t.Context(), Segment(1, 3), StartAfter(cur))
	if err != nil {
		t.Fatal(err)
	}
	if got := qsNs(items); !slices.Equal(got, []int{7, 10}) {
		t.Errorf("segment 1 of 3 after the cursor: %v, want [7 10]", got)
	}
	for _, in := range c.scans() {
		if aws.ToInt32(in.Segment) != 1 || aws.ToInt32(in.TotalSegments) != 3 {
			t.Errorf("request for segment %d of %d, want 1 of 3", aws.ToInt32(in.Segment), aws.ToInt32(in.TotalSegments))
		}
	}
	// An index cursor carries the table key and the index key.
	idx, err := encodeCursor(plan.Position{Index: "byOwner", Key: map[string]types.AttributeValue{
		"p": &types.AttributeValueMemberS{Value: "a"}, "n": &types.AttributeValueMemberN{Value: "3"},
		"owner": &types.AttributeValueMemberS{Value: "ann"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := collect(tb.Query(t.Context(), qsKeyCond, Index("byOwner"), StartAfter(idx))); err != nil {
		t.Fatal(err)
	}
	qs := c.queries()
	if got := qs[len(qs)-1].ExclusiveStartKey; len(got) != 3 || startN(got) != "3" {
		t.Errorf("ExclusiveStartKey %v", formatKey(got))
	}
}

var errQSStub = errors.New("stub: throttled")

// A failed request is yielded once, after the items before it, wrapped with
// the table's name; nothing more is sent.
func TestQueryRequestError(t *testing.T) {
	tb, c := newQSTable(t, 10)
	c.hook(&fakeHook{op: "Query", fail: func(n int) error {
		if n >= 2 {
			return errQSStub
		}
		return nil
	}})
	var got []int
	var errs []error
	for v, err := range tb.Query(t.Context(), qsKeyCond, Index("byOwner"), PageSize(2)) {
		if err != nil {
			errs = append(errs, err)
			if v != (qsItem{}) {
				t.Errorf("error yielded with %+v, want the zero value", v)
			}
			continue // the iterator must stop by itself
		}
		got = append(got, v.N)
	}
	if !slices.Equal(got, []int{1, 2}) || len(errs) != 1 || !errors.Is(errs[0], errQSStub) {
		t.Fatalf("items %v errors %v; want [1 2] and one stub error", got, errs)
	}
	if want := `dynamo: query table "Events" index "byOwner": stub: throttled`; errs[0].Error() != want {
		t.Errorf("error %q, want %q", errs[0], want)
	}
	if n := c.count("Query"); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	if items, cur, err := tb.QueryPage(t.Context(), qsKeyCond, Limit(5)); !errors.Is(err, errQSStub) || items != nil || cur != "" {
		t.Errorf("QueryPage = %v, %q, %v; want only the stub error", items, cur, err)
	}
}

// An item that does not decode is yielded as an error naming its key.
func TestQueryDecodeError(t *testing.T) {
	items := qsItems(3)
	items[1]["body"] = &types.AttributeValueMemberL{}
	tb, err := NewTable[qsItem](NewMapper(qsDB(items...)), "Events")
	if err != nil {
		t.Fatal(err)
	}
	got, err := collect(tb.Scan(t.Context()))
	if !slices.Equal(got, []int{1}) || err == nil || !strings.Contains(err.Error(), `item key {n: 2, p: "a"}`) {
		t.Fatalf("items %v, err %v", got, err)
	}
	if _, _, err := tb.ScanPage(t.Context()); err == nil {
		t.Error("ScanPage decoded a bad item")
	}
}

// ctx bounds the iteration: done before the first request, nothing is sent;
// done during the loop, the next step yields its error and nothing more is
// sent.
func TestQueryContext(t *testing.T) {
	tb, c := newQSTable(t, 10)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := collect(tb.Query(ctx, qsKeyCond)); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, _, err := tb.QueryPage(ctx, qsKeyCond); !errors.Is(err, context.Canceled) {
		t.Fatalf("QueryPage err = %v, want context.Canceled", err)
	}
	if _, err := collect(tb.ParallelScan(ctx, 3)); !errors.Is(err, context.Canceled) {
		t.Fatalf("ParallelScan err = %v, want context.Canceled", err)
	}
	if n := c.count(""); n != 0 {
		t.Fatalf("%d requests with a done context", n)
	}

	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	var got []int
	var last error
	for v, err := range tb.Query(ctx, qsKeyCond, PageSize(3)) {
		if err != nil {
			last = err
			continue
		}
		got = append(got, v.N)
		if v.N == 2 {
			cancel()
		}
	}
	if !slices.Equal(got, []int{1, 2}) || !errors.Is(last, context.Canceled) {
		t.Fatalf("items %v err %v; want [1 2] then context.Canceled", got, last)
	}
	if qs := c.queries(); len(qs) != 1 {
		t.Errorf("%d requests, want 1", len(qs))
	}
}

// An iterator runs the query afresh each time it is ranged over.
func TestQueryIteratorReusable(t *testing.T) {
	tb, c := newQSTable(t, 5)
	seq := tb.Query(t.Context(), qsKeyCond, PageSize(2))
	for range 2 {
		got, err := collect(seq)
		if err != nil || !slices.Equal(got, seqInts(1, 5)) {
			t.Fatalf("items %v, %v", got, err)
		}
	}
	if qs := c.queries(); len(qs) != 6 {
		t.Errorf("%d requests, want 6", len(qs))
	}
}

// Pointer tables decode into new structs.
func TestQueryPointerTable(t *testing.T) {
	tb, err := NewTable[*qsItem](NewMapper(qsDB(qsItems(3)...)), "Events")
	if err != nil {
		t.Fatal(err)
	}
	var got []*qsItem
	for v, err := range tb.Scan(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if len(got) != 3 || got[0] == got[1] || got[2].Body != "item 3" {
		t.Fatalf("%+v", got)
	}
}

// segmentGoroutines counts the goroutines running a parallel scan's
// segment. A segment's goroutine returns from scanSegment before it signals
// the iterator, so this is exact, without waiting, once the iterator has
// returned.
func segmentGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), ").scanSegment(")
		}
		buf = make([]byte, 2*len(buf))
	}
}

func TestCursorRoundTrip(t *testing.T) {
	cases := []plan.Position{
		{Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "ü/+ \"x\"\n<&>"}}},
		{Key: map[string]types.AttributeValue{
			"p": &types.AttributeValueMemberS{Value: "a"},
			"n": &types.AttributeValueMemberN{Value: "-12.5E+3"},
		}},
		{Index: "by.owner-1_x", Key: map[string]types.AttributeValue{
			"p": &types.AttributeValueMemberS{Value: "a"},
			"b": &types.AttributeValueMemberB{Value: []byte{0, 0xff, '/', '+'}},
			"n": &types.AttributeValueMemberN{Value: "7"},
			"o": &types.AttributeValueMemberS{Value: "ann"},
		}},
		{Segment: 999_999, Total: 1_000_000, Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberN{Value: "0"}}},
	}
	for _, p := range cases {
		c, err := encodeCursor(p)
		if err != nil {
			t.Fatal(err)
		}
		if url.PathEscape(string(c)) != string(c) || url.QueryEscape(string(c)) != string(c) {
			t.Errorf("cursor %q is not URL-safe", c)
		}
		if _, err := ParseCursor(string(c)); err != nil {
			t.Fatalf("ParseCursor(%q): %v", c, err)
		}
		got, err := decodeCursor(c)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, p) {
			t.Errorf("round trip of %+v gave %+v", p, got)
		}
	}
	if _, err := encodeCursor(plan.Position{Key: map[string]types.AttributeValue{"x": &types.AttributeValueMemberBOOL{}}}); err == nil {
		t.Error("encoded a BOOL key")
	}
}

func TestParseCursorErrors(t *testing.T) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	const NW = "not as this package writes it"
	cases := []struct{ in, want string }{
		{"", "empty cursor"},
		{"e30=", "not base64url"}, // padded
		{"e30+", "not base64url"}, // standard alphabet
		{"a", "not base64url"},    // truncated
		{enc("nope"), "bad JSON"}, // not JSON
		{enc(`[]`), "bad JSON"},   // not an object
		{enc(`{"v":1,"k":{"a":{"S":"x"}}}x`), "bad JSON"},
		{enc(`{"v":1,"k":{"a":{"S":"x"}},"z":1}`), NW + `, from offset 26: ",\"z\":1}"`}, // unknown field
		{enc(`{"V":1,"k":{"a":{"S":"x"}}}`), NW},                                         // names are case-sensitive
		{enc(`{"v":1,"k":{"a":{"s":"x"}}}`), NW},
		{enc(`{"v":1,"k":{"a":{"S":"x"}},"k":{"b":{"S":"y"}}}`), NW},
		{enc(`{"v":1,"v":1,"k":{"a":{"S":"x"}}}`), NW},
		{enc(`{"v":1,"k":{"a":{"S":"x"},"a":{"S":"y"}}}`), NW},
		{enc(`{"v":1,"k":{"a":{"S":"x","S":"y"}}}`), NW},
		{enc(`{"v":1,"k":{"a":{"S":"x","N":null}}}`), "null"},
		{enc(`{"v":1,"k":{"a":{"N":null}}}`), "null"},
		{enc(`{"v":null,"k":{"a":{"S":"x"}}}`), "null"},
		{enc(`{"v":1,"i":null,"k":{"a":{"S":"x"}}}`), "null"},
		{enc(`{"v":1,"g":null,"k":{"a":{"S":"x"}}}`), "null"},
		{enc(`{"v":1,"k":null}`), "0 key attributes"},
		{enc(`{"v":1,"g":[0,null],"k":{"a":{"S":"x"}}}`), "null"},
		{enc(`{"v":1.0,"k":{"a":{"S":"x"}}}`), "bad JSON"},
		{enc(`{"v":01,"k":{"a":{"S":"x"}}}`), "bad JSON"},
		{enc(`{"v":1,"g":[0,4,1],"k":{"a":{"S":"x"}}}`), "segment field has 3 numbers"},
		{enc(`{"v":1,"g":[0,99999999999],"k":{"a":{"S":"x"}}}`), "99999999999 total segments"},
		{enc(`{"v":1,"i":"","k":{"a":{"S":"x"}}}`), NW},
		{enc("{\"v\":1,\"k\":{\"a\":{\"S\":\"k\xff\"}}}"), "not valid UTF-8"},
		{enc("{\"v\":1,\"k\":{\"a\xfe\":{\"S\":\"k\"}}}"), "not valid UTF-8"},
		{enc(`{"v":1,"k":{"a":{"S":"\ud800"}}}`), NW}, // a lone surrogate
		{enc(`{"v":1,"k":{"a":{"S":"\udc00x"}}}`), NW},
		{enc(`{"v":1,"k":{"a":{"S":"\ud800\u0041"}}}`), NW},
		{enc(`{"v":1,"k":{"a":{"S":"\x"}}}`), "bad JSON"},             // unknown escape
		{enc("{\"v\":1,\"k\":{\"a\":{\"S\":\"a\tb\"}}}"), "bad JSON"}, // control character
		{enc(`{"v":1,"k":{"a":{"N":"1.00000000000000000000000000000000000001"}}}`), "39 significant digits"},
		{enc(`{"v":1,"k":{"a":{"N":"1e126"}}}`), "outside DynamoDB's range"},
		{enc(`{"v":1,"k":{"a":{"N":"-10E125"}}}`), "outside DynamoDB's range"},
		{enc(`{"v":1,"k":{"a":{"N":"1e-131"}}}`), "outside DynamoDB's range"},
		{enc(`{"v":1,"k":{"a":{"N":"0.001e-128"}}}`), "outside DynamoDB's range"},
		{enc(`{"v":1,"k":{"a":{"S":"x"}}`), "bad JSON"}, // it ends
		{enc(`{"v":2,"k":{"a":{"S":"x"}}}`), "format version 2"},
		{enc(`{"k":{"a":{"S":"x"}}}`), NW},
		{enc(`{"v":1}`), NW},
		{enc(`{"v":1,"k":{"a":{"S":"1"},"b":{"S":"1"},"c":{"S":"1"},"d":{"S":"1"},"e":{"S":"1"},"f":{"S":"1"},"g":{"S":"1"},"h":{"S":"1"},"i":{"S":"1"},"j":{"S":"1"},"k":{"S":"1"}}}`), "11 key attributes"}, // a table key and an index key of 4+4 hold 10
		{enc(`{"v":1,"k":{"":{"S":"x"}}}`), "name of 0 bytes"},
		{enc(`{"v":1,"k":{"a":{}}}`), "0 type tags"},
		{enc(`{"v":1,"k":{"a":null}}`), "null"},
		{enc(`{"v":1,"k":{"a":{"S":"x","N":"1"}}}`), "2 type tags"},
		{enc(`{"v":1,"k":{"a":{"S":""}}}`), "empty string"},
		{enc(`{"v":1,"k":{"a":{"N":"1e"}}}`), "not a number"},
		{enc(`{"v":1,"k":{"a":{"N":"0x10"}}}`), "not a number"},
		{enc(`{"v":1,"k":{"a":{"B":""}}}`), NW}, // empty binary
		{enc(`{"v":1,"k":{"a":{"B":"!!"}}}`), "illegal base64"},
		{enc(`{"v":1,"k":{"a":{"B":"AB=="}}}`), NW}, // non-canonical padding bits
		{enc(`{"v":1,"k":{"a":{"SS":["x"]}}}`), NW},
		{enc(`{"v":1,"i":"ab","k":{"a":{"S":"x"}}}`), "index name"},
		{enc(`{"v":1,"g":[1],"k":{"a":{"S":"x"}}}`), "segment field has 1 numbers"},
		{enc(`{"v":1,"g":[3,3],"k":{"a":{"S":"x"}}}`), "segment 3 of 3"},
		{enc(`{"v":1,"g":[0,0],"k":{"a":{"S":"x"}}}`), "0 total segments"},
		{strings.Repeat("A", plan.MaxCursorLen+1), "bytes long"},
	}
	for _, tc := range cases {
		_, err := ParseCursor(tc.in)
		if !errors.Is(err, ErrInvalidInput) {
			t.Errorf("ParseCursor(%.40q) = %v, want ErrInvalidInput", tc.in, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseCursor(%.40q): %q does not mention %q", tc.in, err, tc.want)
		}
	}
}

// ParseCursor takes only the text encodeCursor writes: another spelling of
// the same JSON — whitespace, escapes, members in another order — is
// refused, so that a position has one cursor.
func TestParseCursorTakesOnlyWrittenText(t *testing.T) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	written := `{"v":1,"i":"by.x","g":[2,3],"k":{"b":{"B":"AP8="},"p":{"S":"é/<"}}}`
	c, err := encodeCursor(plan.Position{Index: "by.x", Segment: 2, Total: 3, Key: map[string]types.AttributeValue{
		"p": &types.AttributeValueMemberS{Value: "é/<"}, "b": &types.AttributeValueMemberB{Value: []byte{0, 0xff}}}})
	if err != nil {
		t.Fatal(err)
	}
	if written = strings.Replace(written, "<", `\u003c`, 1); string(c) != enc(written) {
		t.Fatalf("encodeCursor wrote %s, want %s", mustUnbase64(t, string(c)), written)
	}
	if _, err := ParseCursor(enc(written)); err != nil {
		t.Fatalf("ParseCursor(%s): %v", written, err)
	}
	for _, in := range []string{
		` {"v":1,"i":"by.x","g":[2,3],"k":{"b":{"B":"AP8="},"p":{"S":"é/\u003c"}}}`,
		`{"v":1,"i":"by.x","g":[2, 3],"k":{"b":{"B":"AP8="},"p":{"S":"é/\u003c"}}}`,
		`{"v":1,"i":"by.x","g":[2,3],"k":{"b":{"B":"AP8="},"p":{"S":"\u00e9/\u003c"}}}`,
		`{"v":1,"i":"by.x","g":[2,3],"k":{"b":{"B":"AP8="},"p":{"S":"é\/\u003c"}}}`,
		`{"v":1,"i":"by.x","g":[2,3],"k":{"b":{"B":"AP8="},"p":{"S":"é/<"}}}`,
		`{"v":1,"i":"by.x","g":[2,3],"k":{"p":{"S":"é/\u003c"},"b":{"B":"AP8="}}}`,
		`{"i":"by.x","v":1,"g":[2,3],"k":{"b":{"B":"AP8="},"p":{"S":"é/\u003c"}}}`,
		`{"v":1,"i":"by.x","g":[2,3],"k":{"b":{"B":"AP8="},"p":{"S":"é/\u003c"}}}` + "\n",
	} {
		_, err := ParseCursor(enc(in))
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "not as this package writes it") {
			t.Errorf("ParseCursor(%s) = %v, want ErrInvalidInput: not as this package writes it", in, err)
		}
	}
	// A key that is not valid UTF-8 (DynamoDB never returns one) is not
	// made into a cursor that would name another key.
	if _, err := encodeCursor(plan.Position{Key: map[string]types.AttributeValue{"a": &types.AttributeValueMemberS{Value: "k\xff"}}}); err == nil {
		t.Error("encoded a key that is not valid UTF-8")
	}
}

func mustUnbase64(t *testing.T, s string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// FuzzParseCursor: any input either parses — and then re-encodes to a
// cursor that parses to the same position and is its own canonical form —
// or is refused with ErrInvalidInput. Never a panic. Each input is tried as
// it is and as the JSON inside a cursor (base64url-encoded first), so that
// the fuzzer also explores the checks behind the base64 layer.
func FuzzParseCursor(f *testing.F) {
	for _, p := range []plan.Position{
		{Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "x"}}},
		{Index: "byOwner", Segment: 1, Total: 4, Key: map[string]types.AttributeValue{
			"p": &types.AttributeValueMemberS{Value: "a"},
			"n": &types.AttributeValueMemberN{Value: "-1.5e3"},
			"b": &types.AttributeValueMemberB{Value: []byte{1, 2, 3}},
		}},
	} {
		c, err := encodeCursor(p)
		if err != nil {
			f.Fatal(err)
		}
		raw, _ := base64.RawURLEncoding.DecodeString(string(c))
		f.Add(string(c))
		f.Add(string(raw))
	}
	for _, s := range []string{"", "e30", "e30=", "!!", `{"v":1}`, `{"v":1,"k":{"a":{"N":".5E-0"}}}`,
		`{"v":1,"g":[0,1],"k":{"a":{"B":"AA=="},"b":{"S":"\u00e9"}}}`,
		// What encoding/json accepts and the canonical check refuses.
		`{"v":1,"k":{"p":{"S":"a","N":null}}}`, `{"v":1,"k":{"p":{"N":null}}}`, `{"v":null,"k":{"p":{"S":"a"}}}`,
		`{"v":1,"k":{"p":{"S":"a"}},"k":{"p":{"S":"b"}}}`, `{"v":1,"k":{"p":{"S":"a"},"p":{"S":"b"}}}`,
		`{"V":1,"K":{"p":{"s":"a"}}}`, `{"v":1,"k":{"p":{"S":"a"}},"x":[]}`, "{\"v\":1,\"k\":{\"p\":{\"S\":\"a\xff\"}}}",
		`{"v":1,"k":{"p":{"S":"\ud800"}}}`, `{"v":1,"k":{"p":{"S":"\ud83d\ude00"}}}`,
		`{"v":1,"k":{"p":{"N":"1e126"}}}`, `{"v":1,"k":{"p":{"N":"9.9999999999999999999999999999999999999e125"}}}`,
		`{"v":1,"k":{"p":{"N":"1e-130"}}}`, `{"v":1,"k":{"p":{"N":"1e-131"}}}`, `{"v":1,"k":{"p":{"N":"0e99999"}}}`,
		`{"v":1,"k":{"p":{"N":"1.00000000000000000000000000000000000001"}}}`,
		// Positions of the fuzzed table (qsIndexed), fitting and not.
		`{"v":1,"k":{"p":{"S":"a"},"n":{"N":"3"}}}`, `{"v":1,"k":{"p":{"S":"b"},"n":{"N":"3"}}}`,
		`{"v":1,"k":{"p":{"S":"a"},"n":{"S":"3"}}}`, `{"v":1,"k":{"p":{"S":"a"},"n":{"N":"-3"}}}`,
		`{"v":1,"i":"byOwner","k":{"p":{"S":"a"},"n":{"N":"1"},"owner":{"S":"ann"},"at":{"N":"5"}}}`,
		`{"v":1,"i":"byAt","k":{"p":{"S":"a"},"n":{"N":"1"},"at":{"N":"5"}}}`,
		`{"v":1,"g":[1,2],"k":{"p":{"S":"zz"},"n":{"N":"1.0"}}}`} {
		f.Add(s)
	}
	tb, err := NewTable[qsIndexed](NewMapper(&fakeDB{}), "Events") // prepare sends nothing
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, in := range []string{s, base64.RawURLEncoding.EncodeToString([]byte(s))} {
			checkParseCursor(t, in)
			checkCursorFits(t, tb, in)
		}
	})
}

// fuzzListings are the reads of qsIndexed that FuzzParseCursor checks
// cursors against.
var fuzzListings = []struct {
	op      string
	kc      *expression.KeyConditionBuilder
	index   string
	segment int
	total   int
}{
	{op: opQueryPage, kc: qcPtr(expression.Key("p").Equal(expression.Value("a")).And(expression.Key("n").GreaterThan(expression.Value(0))))},
	{op: opQueryPage, kc: qcPtr(expression.Key("owner").Equal(expression.Value("ann"))), index: "byOwner"},
	{op: opQueryPage, kc: qcPtr(expression.Key("p").Equal(expression.Value("a")).And(expression.Key("at").Between(expression.Value(1), expression.Value(9)))), index: "byAt"},
	{op: opScanPage},
	{op: opScanPage, segment: 1, total: 2},
}

func qcPtr[T any](v T) *T { return &v }

// checkCursorFits checks cursor s against each of fuzzListings: a cursor
// is refused with ErrInvalidInput, or accepted as a start key that holds
// valid UTF-8 strings and numbers DynamoDB stores, and that re-encodes to a
// cursor that is accepted with the same start key.
func checkCursorFits(t *testing.T, tb *Table[qsIndexed], s string) {
	for _, l := range fuzzListings {
		opts := []QueryOption{StartAfter(Cursor(s))}
		if l.index != "" {
			opts = append(opts, Index(l.index))
		}
		if l.total > 0 {
			opts = append(opts, Segment(l.segment, l.total))
		}
		got := tb.prepare(l.op, l.kc, opts)
		if got.err != nil {
			if !errors.Is(got.err, ErrInvalidInput) {
				t.Fatalf("%s %s with cursor %q: %v, not ErrInvalidInput", l.op, l.index, s, got.err)
			}
			continue
		}
		if s == "" {
			continue
		}
		for name, av := range got.start {
			if !utf8.ValidString(name) {
				t.Fatalf("accepted a cursor with attribute name %q", name)
			}
			switch a := av.(type) {
			case *types.AttributeValueMemberS:
				if !utf8.ValidString(a.Value) || a.Value == "" {
					t.Fatalf("accepted a cursor with string %q", a.Value)
				}
			case *types.AttributeValueMemberN:
				if err := plan.CheckNumber(a.Value); err != nil {
					t.Fatalf("accepted a cursor with number %q: %v", a.Value, err)
				}
			}
		}
		again, err := encodeCursor(plan.Position{Index: l.index, Segment: l.segment, Total: l.total, Key: got.start})
		if err != nil {
			t.Fatalf("re-encode of accepted cursor %q: %v", s, err)
		}
		opts[0] = StartAfter(again)
		if l2 := tb.prepare(l.op, l.kc, opts); l2.err != nil || !reflect.DeepEqual(l2.start, got.start) {
			t.Fatalf("accepted cursor %q re-encoded as %q: %v, start %v then %v", s, again, l2.err, formatKey(got.start), formatKey(l2.start))
		}
	}
}

func checkParseCursor(t *testing.T, s string) {
	c, err := ParseCursor(s)
	if err != nil {
		if !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("ParseCursor(%q) = %v, not ErrInvalidInput", s, err)
		}
		if c != "" {
			t.Fatalf("ParseCursor(%q) returned %q with an error", s, c)
		}
		return
	}
	if string(c) != s {
		t.Fatalf("ParseCursor(%q) returned %q", s, c)
	}
	p, err := decodeCursor(c)
	if err != nil {
		t.Fatal(err)
	}
	again, err := encodeCursor(p)
	if err != nil {
		t.Fatalf("re-encode of %q: %v", s, err)
	}
	p2, err := decodeCursor(again)
	if err != nil {
		t.Fatalf("re-encoded cursor %q of %q does not parse: %v", again, s, err)
	}
	if !reflect.DeepEqual(p, p2) {
		t.Fatalf("re-encoding changed the position: %+v → %+v", p, p2)
	}
	if third, _ := encodeCursor(p2); third != again {
		t.Fatalf("encoding is not canonical: %q then %q", again, third)
	}
}

// qsIndexed declares its indexes in tags, so that a cursor for one of them
// is checked against the index's key too.
type qsIndexed struct {
	P     string `dynamo:"p,hash"`
	N     int    `dynamo:"n,range"`
	Owner string `dynamo:"owner" index:"byOwner,hash"`
	At    int    `dynamo:"at" index:"byOwner,range" localIndex:"byAt,range"`
}

func TestCursorCheckedAgainstDeclaredIndex(t *testing.T) {
	db := (&fakeDB{}).table("Events", "p", "n").index("Events", "byOwner", "owner", "at", true).index("Events", "byAt", "p", "at", false)
	tb, err := NewTable[qsIndexed](NewMapper(db), "Events")
	if err != nil {
		t.Fatal(err)
	}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	cases := []struct {
		index string
		key   map[string]types.AttributeValue
		want  string // "" for accepted
	}{
		{"byOwner", map[string]types.AttributeValue{"p": s("a"), "n": n("1"), "owner": s("ann"), "at": n("5")}, ""},
		{"byOwner", map[string]types.AttributeValue{"p": s("a"), "n": n("1"), "owner": s("ann")}, `lacks the key attribute "at"`},
		{"byOwner", map[string]types.AttributeValue{"p": s("a"), "n": n("1"), "owner": s("ann"), "x": n("5")}, `lacks the key attribute "at"`},
		{"byAt", map[string]types.AttributeValue{"p": s("a"), "n": n("1"), "at": n("5")}, ""},
		{"byAt", map[string]types.AttributeValue{"p": s("a"), "n": n("1"), "at": n("5"), "owner": s("ann")},
			`holds "at", "n", "owner", "p", but the table's key and the index's is "p", "n", "at"`},
		// An index the tags do not declare: only the table's key is checked.
		{"other", map[string]types.AttributeValue{"p": s("a"), "n": n("1"), "x": s("y")}, ""},
		{"other", map[string]types.AttributeValue{"p": s("a"), "x": s("y")}, `lacks the key attribute "n"`},
	}
	// ConsistentRead is refused on a global index the tags declare, not on a
	// local one.
	_, err = collect2(tb.Query(t.Context(), qsKeyCond, Index("byOwner"), ConsistentRead()))
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), `ConsistentRead on the global secondary index "byOwner"`) {
		t.Errorf("ConsistentRead on a global index: %v", err)
	}
	if db.count("") != 0 {
		t.Errorf("%d requests sent for a refused ConsistentRead", db.count(""))
	}
	if _, err = collect2(tb.Query(t.Context(), qsKeyCond, Index("byAt"), ConsistentRead())); err != nil {
		t.Errorf("ConsistentRead on a local index: %v", err)
	}
	for _, tc := range cases {
		err := tb.checkPosition(plan.Position{Index: tc.index, Key: tc.key}, tc.index, 0, 0, nil)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %s: %v", tc.index, formatKey(tc.key), err)
		case tc.want != "" && (!errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s %s: %v, want an error mentioning %q", tc.index, formatKey(tc.key), err, tc.want)
		}
	}
}

func collect2[T any](seq func(func(T, error) bool)) (n int, err error) {
	for _, err := range seq {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// TestPageReturnsTheItemsThatDecode: an item that does not decode into T
// (another writer stored a field with another type) does not take its page
// with it. QueryPage and ScanPage return the page's other items and the
// cursor after the page, with a *PageDecodeError naming each failed item
// by its key (DecodeKey gives its key fields as a T), so that paging goes on
// and every item is seen once, decoded or reported. Limit counts the
// failed items as read.
func TestPageReturnsTheItemsThatDecode(t *testing.T) {
	db := (&fakeDB{}).table("q", "p", "n")
	for i := 1; i <= 5; i++ {
		var body types.AttributeValue = str(fmt.Sprint("b", i))
		if i == 3 {
			body = &types.AttributeValueMemberBOOL{Value: true}
		}
		db.put("q", map[string]types.AttributeValue{"p": str("a"), "n": n(fmt.Sprint(i)), "body": body, "v": n("1")})
	}
	tb, err := NewTable[qsItem](NewMapper(db), "q")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, call := range []string{"ScanPage", "QueryPage"} {
		for _, limit := range []int{0, 2} {
			var seen []int
			var failed []qsItem
			var cur Cursor
			for pages := 0; ; pages++ {
				opts := []QueryOption{StartAfter(cur)}
				if limit > 0 {
					opts = append(opts, Limit(limit))
				}
				var items []qsItem
				if call == "ScanPage" {
					items, cur, err = tb.ScanPage(ctx, opts...)
				} else {
					items, cur, err = tb.QueryPage(ctx, expression.Key("p").Equal(expression.Value("a")), opts...)
				}
				var pe *PageDecodeError
				if err != nil && !errors.As(err, &pe) {
					t.Fatalf("%s limit %d: %v", call, limit, err)
				}
				for _, it := range items {
					seen = append(seen, it.N)
				}
				if limit > 0 && len(items)+len(failedOf(pe)) > limit {
					t.Errorf("%s limit %d: a page of %d items and %d failures", call, limit, len(items), len(failedOf(pe)))
				}
				for _, f := range failedOf(pe) {
					var k qsItem
					if err := f.DecodeKey(&k); err != nil {
						t.Errorf("%s: DecodeKey: %v", call, err)
					}
					failed = append(failed, k)
					if !strings.Contains(pe.Error(), `n: 3`) || !strings.Contains(f.Error(), `n: 3`) || !reflect.DeepEqual(f.Key, map[string]types.AttributeValue{"p": str("a"), "n": n("3")}) {
						t.Errorf("%s: error %q, item error %q, key %v; want them to name the key {n: 3, p: \"a\"}", call, pe, f, f.Key)
					}
				}
				if cur == "" || pages > 10 {
					break
				}
			}
			if !slices.Equal(seen, []int{1, 2, 4, 5}) || !reflect.DeepEqual(failed, []qsItem{{P: "a", N: 3}}) {
				t.Errorf("%s limit %d: decoded %v, failed %+v; want 1 2 4 5 decoded and {a 3} reported", call, limit, seen, failed)
			}
		}
	}
}

// TestIteratorsReportUndecodableItemsAndGoOn: the iterators treat an item
// that does not decode into T as the pages do: Query, Scan and
// ParallelScan yield (zero, *ItemDecodeError) for it, naming its key
// (DecodeKey gives it as a T), and go on with the other items, so that a
// loop that skips errors loses no item silently and a loop that stops at
// any error stops there. Limit counts the failed item as read.
func TestIteratorsReportUndecodableItemsAndGoOn(t *testing.T) {
	db := (&fakeDB{}).table("q", "p", "n")
	for i := 1; i <= 5; i++ {
		var body types.AttributeValue = str(fmt.Sprint("b", i))
		if i == 3 {
			body = &types.AttributeValueMemberBOOL{Value: true}
		}
		db.put("q", map[string]types.AttributeValue{"p": str("a"), "n": n(fmt.Sprint(i)), "body": body, "v": n("1")})
	}
	tb, err := NewTable[qsItem](NewMapper(db), "q")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	key := expression.Key("p").Equal(expression.Value("a"))
	for _, limit := range []int{0, 3} {
		opts := []QueryOption{PageSize(2)}
		if limit > 0 {
			opts = append(opts, Limit(limit))
		}
		for call, seq := range map[string]iter.Seq2[qsItem, error]{
			"Query":           tb.Query(ctx, key, opts...),
			"Scan":            tb.Scan(ctx, opts...),
			"ParallelScan(1)": tb.ParallelScan(ctx, 1, opts...),
			"ParallelScan(3)": tb.ParallelScan(ctx, 3, opts...),
		} {
			var seen []int
			var failed []qsItem
			for it, err := range seq {
				if err == nil {
					seen = append(seen, it.N)
					continue
				}
				var ie *ItemDecodeError
				if !errors.As(err, &ie) || !strings.Contains(err.Error(), "n: 3") {
					t.Errorf("%s limit %d: %v; want an *ItemDecodeError naming the key {n: 3, p: \"a\"}", call, limit, err)
					continue
				}
				var k qsItem
				if err := ie.DecodeKey(&k); err != nil {
					t.Errorf("%s: DecodeKey: %v", call, err)
				}
				failed = append(failed, k)
			}
			slices.Sort(seen)
			want := []int{1, 2, 4, 5}
			if limit > 0 && !strings.HasPrefix(call, "ParallelScan") {
				want = []int{1, 2} // then 3 fails: the third item read
			}
			if strings.HasPrefix(call, "ParallelScan") && limit > 0 {
				// In no particular order: limit items read, 3 among them or not.
				if len(seen)+len(failed) != limit {
					t.Errorf("%s limit %d: decoded %v, failed %+v; want %d in all", call, limit, seen, failed, limit)
				}
				continue
			}
			if !slices.Equal(seen, want) || !reflect.DeepEqual(failed, []qsItem{{P: "a", N: 3}}) {
				t.Errorf("%s limit %d: decoded %v, failed %+v; want %v decoded and {a 3} reported", call, limit, seen, failed, want)
			}
		}
	}
}

// failedOf returns the items pe reports (none for nil).
func failedOf(pe *PageDecodeError) []*ItemDecodeError {
	if pe == nil {
		return nil
	}
	return pe.Failed
}

// TestIteratorStopsWhereTheCallerStops: a loop that breaks at an item's
// *ItemDecodeError ends the iteration there — no further page is read — and
// the error names a key that is not valid UTF-8 quoted, as read.
func TestIteratorStopsWhereTheCallerStops(t *testing.T) {
	db := (&fakeDB{}).table("q", "p", "n")
	for i := 1; i <= 5; i++ {
		var body types.AttributeValue = str(fmt.Sprint("b", i))
		if i == 3 {
			body = &types.AttributeValueMemberBOOL{Value: true}
		}
		db.put("q", map[string]types.AttributeValue{"p": str("\xff"), "n": n(fmt.Sprint(i)), "body": body, "v": n("1")})
	}
	tb, err := NewTable[qsItem](NewMapper(db), "q")
	if err != nil {
		t.Fatal(err)
	}
	var seen []int
	for it, err := range tb.Scan(t.Context(), PageSize(2)) {
		if err != nil {
			var ie *ItemDecodeError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), `{n: 3, p: "\xff"}`) || !reflect.DeepEqual(ie.Key["p"], str("\xff")) {
				t.Errorf("error %v; want an *ItemDecodeError naming the key {n: 3, p: \"\\xff\"}", err)
			}
			break
		}
		seen = append(seen, it.N)
	}
	if !slices.Equal(seen, []int{1, 2}) || db.count("Scan") != 2 {
		t.Errorf("decoded %v with %d requests; want 1 2, then the break at 3 in the second page (2 requests)", seen, db.count("Scan"))
	}
}

// TestParallelScanReportsEveryBadItemOnce: with undecodable items in
// several segments, and pages holding nothing but them (PageSize 1, and
// pages of two bad items), ParallelScan yields each good item once and
// each bad one once as its *ItemDecodeError, and goes on after each: no
// segment ends at a page of bad items, none is read twice.
func TestParallelScanReportsEveryBadItemOnce(t *testing.T) {
	db := (&fakeDB{}).table("q", "p", "n")
	bad := map[int]bool{3: true, 4: true, 7: true, 11: true, 12: true}
	for i := 1; i <= 14; i++ {
		var body types.AttributeValue = str(fmt.Sprint("b", i))
		if bad[i] {
			body = &types.AttributeValueMemberBOOL{Value: true}
		}
		db.put("q", map[string]types.AttributeValue{"p": str(fmt.Sprint("k", i%4)), "n": n(fmt.Sprint(i)), "body": body, "v": n("1")})
	}
	tb, err := NewTable[qsItem](NewMapper(db), "q")
	if err != nil {
		t.Fatal(err)
	}
	for _, pageSize := range []int{1, 2} {
		for _, segments := range []int{1, 3} {
			var seen, failed []int
			for it, err := range tb.ParallelScan(t.Context(), segments, PageSize(pageSize)) {
				if err == nil {
					seen = append(seen, it.N)
					continue
				}
				var ie *ItemDecodeError
				var k qsItem
				if !errors.As(err, &ie) || ie.DecodeKey(&k) != nil {
					t.Fatalf("page size %d, %d segments: %v; want an *ItemDecodeError", pageSize, segments, err)
				}
				failed = append(failed, k.N)
			}
			slices.Sort(seen)
			slices.Sort(failed)
			if !slices.Equal(seen, []int{1, 2, 5, 6, 8, 9, 10, 13, 14}) || !slices.Equal(failed, []int{3, 4, 7, 11, 12}) {
				t.Errorf("page size %d, %d segments: decoded %v, failed %v; want every good item once and 3 4 7 11 12 reported once", pageSize, segments, seen, failed)
			}
		}
	}
}

// numKeyItem has a numeric sort key held as written (any number DynamoDB
// stores, 38 digits or far past float64's range).
type numKeyItem struct {
	P string                `dynamo:"p,hash"`
	N attributevalue.Number `dynamo:"n,range"`
}

// On DynamoDB Local: numeric sort keys written in every spelling (zeros with
// exponents, negative numbers, "10" beside "1e1"-like values of other digit
// counts, 38-digit neighbours, the ends of the range) come back from a
// query in the order av.NumberCompare gives, ascending and descending;
// paged two and three at a time, each page resumed from the cursor of the
// one before (the cursor is checked against the key condition with
// NumberCompare), no item is skipped or repeated, under range conditions
// spelled oddly too.
func TestNumericSortKeysPageInDynamoDBsOrder(t *testing.T) {
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "numsort", "p", types.ScalarAttributeTypeS, "n", types.ScalarAttributeTypeN)
	ctx := t.Context()
	tb, err := NewTable[numKeyItem](NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	var written []string
	seen := map[string]bool{}
	for _, s := range []string{"0e5", "-0.5", "1e1", "110e-1", "9.99", "-10", "-1.1e1", "-9.9", "1", "0.1", "0.01",
		"0.099", "-0.099", "-0.01", "1.1", "1.01", "1.001", "12345678901234567890123456789012345678",
		"1234567890123456789012345678901234567.9", "12345678901234567890123456789012345679", "1.2345678901234567890123456789012345678",
		"9.9999999999999999999999999999999999999E+125", "-9.9999999999999999999999999999999999999E+125", "1e-130", "-1e-130",
		"2e-130", "1E+125", "-1E+125", "99", "100.000", "101", "+5", ".5", "-.25", "1e0000000000003", "-00012.50"} {
		if seen[avs.Canonical(s)] {
			t.Fatalf("%q repeats a value", s)
		}
		seen[avs.Canonical(s)] = true
		written = append(written, s)
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: map[string]types.AttributeValue{
			"p": &types.AttributeValueMemberS{Value: "a"}, "n": &types.AttributeValueMemberN{Value: s}}}); err != nil {
			t.Fatalf("PutItem %q: %v", s, err)
		}
	}
	num := func(s string) expression.ValueBuilder {
		return expression.Value(&types.AttributeValueMemberN{Value: s})
	}
	pk := expression.Key("p").Equal(expression.Value("a"))
	for _, tc := range []struct {
		name string
		key  expression.KeyConditionBuilder
		keep func(string) bool
	}{
		{"all", pk, func(string) bool { return true }},
		{"between -1e1 and 100e-1", pk.And(expression.Key("n").Between(num("-1e1"), num("100e-1"))),
			func(s string) bool { return avs.NumberCompare(s, "-10") >= 0 && avs.NumberCompare(s, "10") <= 0 }},
		{"over 0e5", pk.And(expression.Key("n").GreaterThan(num("0e5"))), func(s string) bool { return avs.NumberCompare(s, "0") > 0 }},
		{"at most -0.0990", pk.And(expression.Key("n").LessThanEqual(num("-0.0990"))), func(s string) bool { return avs.NumberCompare(s, "-0.099") <= 0 }},
	} {
		for _, desc := range []bool{false, true} {
			var want []string
			for _, s := range written {
				if tc.keep(s) {
					want = append(want, avs.Canonical(s))
				}
			}
			slices.SortFunc(want, avs.NumberCompare)
			if desc {
				slices.Reverse(want)
			}
			for _, per := range []int{2, 3} {
				t.Run(fmt.Sprintf("%s/descending=%v/per=%d", tc.name, desc, per), func(t *testing.T) {
					opts := []QueryOption{Limit(per), ConsistentRead()}
					if desc {
						opts = append(opts, Descending())
					}
					var got []string
					var cur Cursor
					for range 100 {
						items, next, err := tb.QueryPage(ctx, tc.key, append(opts, StartAfter(cur))...)
						if err != nil {
							t.Fatalf("after %v: %v", got, err)
						}
						for _, it := range items {
							got = append(got, string(it.N))
						}
						if next == "" {
							break
						}
						cur = next
					}
					if !slices.Equal(got, want) {
						t.Errorf("pages joined:\n%v\nwant (NumberCompare's order):\n%v", got, want)
					}
				})
			}
		}
	}
}
