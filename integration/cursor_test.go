package integration

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// Tables with a sort key of each type, a global index (hash g, range x)
// and a local index (range x) of the same type, declared in the tags so
// that cursors are checked against every key.
type curN struct {
	P string `dynamo:"p,hash"`
	R int64  `dynamo:"r,range"`
	G string `dynamo:"g" index:"byG,hash"`
	X int64  `dynamo:"x" index:"byG,range" localIndex:"byX,range"`
}

type curS struct {
	P string `dynamo:"p,hash"`
	R string `dynamo:"r,range"`
	G string `dynamo:"g" index:"byG,hash"`
	X string `dynamo:"x" index:"byG,range" localIndex:"byX,range"`
}

type curB struct {
	P string `dynamo:"p,hash"`
	R []byte `dynamo:"r,range"`
	G string `dynamo:"g" index:"byG,hash"`
	X []byte `dynamo:"x" index:"byG,range" localIndex:"byX,range"`
}

// pagedQuery is one query (or, with scan, a scan) to page through.
type pagedQuery struct {
	name string
	kc   expression.KeyConditionBuilder
	opts []dynamo.QueryOption
	scan bool
}

// checkCursorPaging saves two partitions of ten items made by mk, then, for
// each query, reads it whole with the iterator and again in pages of
// Limit(3) (and in descending order), every cursor passed through
// ParseCursor as an API client's page token would be: the pages must give
// the same items in the same order. A cursor of partition "a" must then be
// refused, before sending, by the same query on partition "b".
func checkCursorPaging[T any](t *testing.T, mk func(p string, i int) T, queries []pagedQuery, otherPartition expression.KeyConditionBuilder) {
	counter := &qCounter{Client: dynamotest.Client(t)}
	tb, err := dynamo.NewTable[T](dynamo.NewMapper(counter), uniqueTable(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.CreateTable(ctx(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tb.DeleteTable(t.Context()) })
	for _, p := range []string{"a", "b"} {
		for i := range 10 {
			if _, err := tb.Save(ctx(t), mk(p, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var lastCursor dynamo.Cursor
	for _, q := range queries {
		for _, desc := range []bool{false, true} {
			if desc && q.scan {
				continue
			}
			opts := slices.Clone(q.opts)
			if desc {
				opts = append(opts, dynamo.Descending())
			}
			var whole []string
			seq := tb.Scan(ctx(t), opts...)
			if !q.scan {
				seq = tb.Query(ctx(t), q.kc, opts...)
			}
			for v, err := range seq {
				if err != nil {
					t.Fatalf("%s: %v", q.name, err)
				}
				whole = append(whole, fmt.Sprint(v))
			}
			if len(whole) < 2 {
				t.Fatalf("%s: %d items; the test needs more", q.name, len(whole))
			}
			var paged []string
			var cur dynamo.Cursor
			for pages := 0; ; pages++ {
				if pages > 20 {
					t.Fatalf("%s: more than 20 pages", q.name)
				}
				popts := append(slices.Clone(opts), dynamo.Limit(3), dynamo.StartAfter(cur))
				var items []T
				var err error
				if q.scan {
					items, cur, err = tb.ScanPage(ctx(t), popts...)
				} else {
					items, cur, err = tb.QueryPage(ctx(t), q.kc, popts...)
				}
				if err != nil {
					t.Fatalf("%s (desc %v) page %d: %v", q.name, desc, pages, err)
				}
				for _, v := range items {
					paged = append(paged, fmt.Sprint(v))
				}
				if cur == "" {
					break
				}
				if cur, err = dynamo.ParseCursor(string(cur)); err != nil {
					t.Fatalf("%s: ParseCursor of a cursor QueryPage made: %v", q.name, err)
				}
				if q.name == "table" && !desc {
					lastCursor = cur
				}
			}
			if !slices.Equal(paged, whole) {
				t.Errorf("%s (desc %v): pages gave\n%v\nthe iterator\n%v", q.name, desc, paged, whole)
			}
		}
	}
	if lastCursor == "" {
		t.Fatal("no cursor of the table query")
	}
	before := counter.queries.Load()
	_, _, err = tb.QueryPage(ctx(t), otherPartition, dynamo.StartAfter(lastCursor))
	mustContain(t, err, "invalid input", "in the partition p = ")
	if !errors.Is(err, dynamo.ErrInvalidInput) {
		t.Errorf("cursor of another partition: %v", err)
	}
	_, _, err = tb.QueryPage(ctx(t), otherPartition, dynamo.Index("byX"), dynamo.StartAfter(lastCursor))
	mustContain(t, err, "invalid input", "made reading the table itself")
	if n := counter.queries.Load() - before; n != 0 {
		t.Errorf("%d requests sent for refused cursors", n)
	}
}

func TestCursorPagingNumberKeys(t *testing.T) {
	r := []int64{-1 << 40, -7, -1, 0, 1, 2, 10, 99, 1000, 1 << 50}
	K, V := expression.Key, expression.Value
	checkCursorPaging(t, func(p string, i int) curN {
		return curN{P: p, R: r[i], G: "g" + p, X: r[(i*7)%10]*3 + 1}
	}, []pagedQuery{
		{name: "table", kc: K("p").Equal(V("a"))},
		{name: "table between", kc: K("p").Equal(V("a")).And(K("r").Between(V(-7), V(1000)))},
		{name: "global index", kc: K("g").Equal(V("ga")), opts: []dynamo.QueryOption{dynamo.Index("byG")}},
		{name: "global index range", kc: K("g").Equal(V("ga")).And(K("x").GreaterThanEqual(V(-2))), opts: []dynamo.QueryOption{dynamo.Index("byG")}},
		{name: "local index range", kc: K("p").Equal(V("a")).And(K("x").LessThan(V(3000))), opts: []dynamo.QueryOption{dynamo.Index("byX"), dynamo.ConsistentRead()}},
		{name: "scan", scan: true},
		{name: "index scan", scan: true, opts: []dynamo.QueryOption{dynamo.Index("byG")}},
	}, K("p").Equal(V("b")))
}

func TestCursorPagingStringKeys(t *testing.T) {
	r := []string{"a", "ab", "abc", "b", "zz", "é", "éa", "😀", "ü", "~"}
	K, V := expression.Key, expression.Value
	checkCursorPaging(t, func(p string, i int) curS {
		return curS{P: p, R: r[i], G: "g" + p, X: r[(i*3)%10] + "x"}
	}, []pagedQuery{
		{name: "table", kc: K("p").Equal(V("a"))},
		{name: "table begins_with", kc: K("p").Equal(V("a")).And(K("r").BeginsWith("a"))},
		{name: "table from", kc: K("p").Equal(V("a")).And(K("r").GreaterThanEqual(V("ab")))},
		{name: "global index", kc: K("g").Equal(V("ga")).And(K("x").LessThanEqual(V("zz"))), opts: []dynamo.QueryOption{dynamo.Index("byG")}},
		{name: "local index", kc: K("p").Equal(V("a")).And(K("x").Between(V("a"), V("é"))), opts: []dynamo.QueryOption{dynamo.Index("byX")}},
		{name: "scan", scan: true},
	}, K("p").Equal(V("b")))
}

func TestCursorPagingBinaryKeys(t *testing.T) {
	r := [][]byte{{0}, {0, 0}, {0, 1}, {1}, {0x7f}, {0x80}, {0xfe}, {0xff}, {0xff, 0}, {0xff, 0xff}}
	K, V := expression.Key, expression.Value
	checkCursorPaging(t, func(p string, i int) curB {
		return curB{P: p, R: r[i], G: "g" + p, X: append([]byte{byte(9 - i)}, r[i]...)}
	}, []pagedQuery{
		{name: "table", kc: K("p").Equal(V("a"))},
		{name: "table between", kc: K("p").Equal(V("a")).And(K("r").Between(V([]byte{0, 1}), V([]byte{0xff})))},
		{name: "global index", kc: K("g").Equal(V("ga")), opts: []dynamo.QueryOption{dynamo.Index("byG")}},
		{name: "local index", kc: K("p").Equal(V("a")).And(K("x").GreaterThan(V([]byte{1}))), opts: []dynamo.QueryOption{dynamo.Index("byX")}},
		{name: "scan", scan: true},
	}, K("p").Equal(V("b")))
}
