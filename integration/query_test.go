package integration

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// qMsg lives in a table with partition key room and sort key seq, and a
// global secondary index byAuthor (hash author, range at), so that a
// position in the index holds four key attributes.
type qMsg struct {
	Room    string `dynamo:"room,hash"`
	Seq     int    `dynamo:"seq,range"`
	Author  string `dynamo:"author"`
	At      int    `dynamo:"at"`
	Text    string `dynamo:"text"`
	Version int64  `dynamo:"v,version"`
}

// qCounter counts the Query and Scan requests that reach the server.
type qCounter struct {
	dynamo.Client
	queries, scans atomic.Int32
}

func (c *qCounter) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.queries.Add(1)
	return c.Client.Query(ctx, in, o...)
}

func (c *qCounter) Scan(ctx context.Context, in *dynamodb.ScanInput, o ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	c.scans.Add(1)
	return c.Client.Scan(ctx, in, o...)
}

// msgTable creates the table and its index, and saves, for each room, n
// messages seq 1..n by ann (odd seq) and bob (even seq).
func msgTable(t *testing.T, n int, rooms ...string) (*dynamo.Table[qMsg], *qCounter) {
	t.Helper()
	s, num := types.ScalarAttributeTypeS, types.ScalarAttributeTypeN
	attr := func(name string, typ types.ScalarAttributeType) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: typ}
	}
	key := func(name string, kt types.KeyType) types.KeySchemaElement {
		return types.KeySchemaElement{AttributeName: aws.String(name), KeyType: kt}
	}
	client := dynamotest.Client(t)
	name := dynamotest.CreateTable(t, client, &dynamodb.CreateTableInput{
		TableName:            aws.String("messages"),
		AttributeDefinitions: []types.AttributeDefinition{attr("room", s), attr("seq", num), attr("author", s), attr("at", num)},
		KeySchema:            []types.KeySchemaElement{key("room", types.KeyTypeHash), key("seq", types.KeyTypeRange)},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName:  aws.String("byAuthor"),
			KeySchema:  []types.KeySchemaElement{key("author", types.KeyTypeHash), key("at", types.KeyTypeRange)},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
	})
	counter := &qCounter{Client: client}
	tb, err := dynamo.NewTable[qMsg](dynamo.NewMapper(counter), name)
	if err != nil {
		t.Fatal(err)
	}
	for ri, room := range rooms {
		for i := 1; i <= n; i++ {
			author := "ann"
			if i%2 == 0 {
				author = "bob"
			}
			m := qMsg{Room: room, Seq: i, Author: author, At: 1000*ri + i, Text: fmt.Sprintf("%s #%d", room, i)}
			if _, err := tb.Save(ctx(t), m); err != nil {
				t.Fatal(err)
			}
		}
	}
	counter.queries.Store(0)
	counter.scans.Store(0)
	return tb, counter
}

func roomKey(room string) expression.KeyConditionBuilder {
	return expression.Key("room").Equal(expression.Value(room))
}

func seqs(t *testing.T, seq func(func(qMsg, error) bool)) []int {
	t.Helper()
	var out []int
	for m, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Seq)
	}
	return out
}

func ints(from, to int) []int {
	var out []int
	for i := from; i != to; {
		out = append(out, i)
		if from < to {
			i++
		} else {
			i--
		}
	}
	return append(out, to)
}

// Ten messages in pages of four: three requests, in both orders; the other
// room's messages stay out.
func TestQueryThreePagesBothOrders(t *testing.T) {
	tb, counter := msgTable(t, 10, "r1", "r2")
	for _, desc := range []bool{false, true} {
		t.Run(fmt.Sprint("descending=", desc), func(t *testing.T) {
			counter.queries.Store(0)
			opts, want := []dynamo.QueryOption{dynamo.PageSize(4)}, ints(1, 10)
			if desc {
				opts, want = append(opts, dynamo.Descending()), ints(10, 1)
			}
			if got := seqs(t, tb.Query(ctx(t), roomKey("r1"), opts...)); !slices.Equal(got, want) {
				t.Fatalf("got %v, want %v", got, want)
			}
			if n := counter.queries.Load(); n != 3 {
				t.Errorf("%d requests, want 3 pages", n)
			}
		})
	}
}

// QueryPage and its cursor resume exactly where the last page ended: the
// pages join up to the whole result, with no repeat and no gap, in both
// orders, with a filter, and after a trip through a URL.
func TestQueryPageResumes(t *testing.T) {
	tb, _ := msgTable(t, 10, "r1")
	annOnly := dynamo.Filter(expression.Name("author").Equal(expression.Value("ann")))
	cases := []struct {
		name string
		opts []dynamo.QueryOption
		want []int
	}{
		{"ascending", []dynamo.QueryOption{dynamo.Limit(4)}, ints(1, 10)},
		{"descending", []dynamo.QueryOption{dynamo.Limit(3), dynamo.Descending()}, ints(10, 1)},
		{"exact end", []dynamo.QueryOption{dynamo.Limit(5)}, ints(1, 10)},
		{"filtered", []dynamo.QueryOption{dynamo.Limit(2), annOnly}, []int{1, 3, 5, 7, 9}},
		{"page size below limit", []dynamo.QueryOption{dynamo.Limit(4), dynamo.PageSize(3), dynamo.Descending()}, ints(10, 1)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var all, sizes []int
			var cur dynamo.Cursor
			for range 20 {
				page, next, err := tb.QueryPage(ctx(t), roomKey("r1"), append(tc.opts, dynamo.StartAfter(cur))...)
				if err != nil {
					t.Fatal(err)
				}
				sizes = append(sizes, len(page))
				for _, m := range page {
					all = append(all, m.Seq)
				}
				if next == "" {
					break
				}
				// As an API client would hand it back.
				q, err := url.ParseQuery(url.Values{"page": {string(next)}}.Encode())
				if err != nil {
					t.Fatal(err)
				}
				if cur, err = dynamo.ParseCursor(q.Get("page")); err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(all, tc.want) {
				t.Fatalf("pages joined: %v, want %v (page sizes %v)", all, tc.want, sizes)
			}
			t.Logf("page sizes %v", sizes)
		})
	}
}

// Filter and Limit together: the first three of ann's messages, and paging
// stops there.
func TestQueryFilterLimit(t *testing.T) {
	tb, counter := msgTable(t, 10, "r1")
	got := seqs(t, tb.Query(ctx(t), roomKey("r1"), dynamo.PageSize(2), dynamo.Limit(3),
		dynamo.Filter(expression.Name("author").Equal(expression.Value("ann")))))
	if !slices.Equal(got, []int{1, 3, 5}) {
		t.Fatalf("got %v, want [1 3 5]", got)
	}
	if n := counter.queries.Load(); n != 3 {
		t.Errorf("%d requests, want 3 (pages of 2 up to seq 5)", n)
	}
	got = seqs(t, tb.Scan(ctx(t), dynamo.Filter(expression.Name("seq").GreaterThan(expression.Value(7))), dynamo.Limit(2)))
	if len(got) != 2 || got[0] <= 7 || got[1] <= 7 {
		t.Errorf("scan with filter and limit: %v", got)
	}
}

// A query on the global secondary index, its pages and cursors (which hold
// the table's key and the index's: four attributes).
func TestQueryIndex(t *testing.T) {
	tb, counter := msgTable(t, 6, "r1", "r2")
	bob := expression.Key("author").Equal(expression.Value("bob"))
	var rooms []string
	for m, err := range tb.Query(ctx(t), bob, dynamo.Index("byAuthor"), dynamo.Descending()) {
		if err != nil {
			t.Fatal(err)
		}
		rooms = append(rooms, fmt.Sprintf("%s/%d", m.Room, m.Seq))
	}
	want := []string{"r2/6", "r2/4", "r2/2", "r1/6", "r1/4", "r1/2"} // by at, descending
	if !slices.Equal(rooms, want) {
		t.Fatalf("got %v, want %v", rooms, want)
	}

	var all []string
	var cur dynamo.Cursor
	for range 10 {
		page, next, err := tb.QueryPage(ctx(t), bob, dynamo.Index("byAuthor"), dynamo.Limit(4), dynamo.StartAfter(cur))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page {
			all = append(all, fmt.Sprintf("%s/%d", m.Room, m.Seq))
		}
		if cur = next; cur == "" {
			break
		}
		// An index cursor is refused on the table, and the reverse.
		before := counter.queries.Load()
		_, _, err = tb.QueryPage(ctx(t), roomKey("r1"), dynamo.StartAfter(cur))
		if !errors.Is(err, dynamo.ErrInvalidInput) || counter.queries.Load() != before {
			t.Fatalf("index cursor on the table: %v (requests sent: %d)", err, counter.queries.Load()-before)
		}
		mustContain(t, err, `index "byAuthor"`, "the table itself")
	}
	slices.Reverse(want)
	if !slices.Equal(all, want) {
		t.Fatalf("pages joined: %v, want %v", all, want)
	}
}

// Cursors carry string, number and binary keys through DynamoDB and back.
func TestQueryPageBinaryKey(t *testing.T) {
	type part struct {
		ID   string `dynamo:"id,hash"`
		Part []byte `dynamo:"part,range"`
		N    int    `dynamo:"n"`
	}
	client := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, client, "parts", "id", types.ScalarAttributeTypeS, "part", types.ScalarAttributeTypeB)
	tb, err := dynamo.NewTable[part](dynamo.NewMapper(client), name)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		p := part{ID: "x", Part: []byte{byte(i), 0xff, '/', '+', '='}, N: i}
		if _, err := tb.Save(ctx(t), p); err != nil {
			t.Fatal(err)
		}
	}
	var got []int
	var cur dynamo.Cursor
	for range 10 {
		page, next, err := tb.QueryPage(ctx(t), expression.Key("id").Equal(expression.Value("x")), dynamo.Limit(3), dynamo.StartAfter(cur))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page {
			got = append(got, p.N)
		}
		if cur = next; cur == "" {
			break
		}
	}
	if !slices.Equal(got, ints(0, 6)) {
		t.Fatalf("got %v, want 0..6", got)
	}
}

// segmentGoroutines counts goroutines running a parallel scan's segment;
// they return from scanSegment before signalling the iterator, so the count
// is exact once the iterator has returned.
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

// goroutinesStartedByDynamo counts goroutines the root dynamo package
// started that still exist. A goroutine exists for a moment after its last
// statement, so the caller retries briefly (as goleak does).
func goroutinesStartedByDynamo() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "created by github.com/ddbkit/dynamo.")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// A parallel scan with four segments over 200 items yields each exactly
// once, the same items as a plain scan.
func TestParallelScanEveryItemOnce(t *testing.T) {
	tb, counter := msgTable(t, 50, "r1", "r2", "r3", "r4")
	seen := map[string]int{}
	for m, err := range tb.ParallelScan(ctx(t), 4, dynamo.PageSize(15)) {
		if err != nil {
			t.Fatal(err)
		}
		seen[fmt.Sprintf("%s/%d", m.Room, m.Seq)]++
	}
	if len(seen) != 200 {
		t.Errorf("%d distinct items, want 200", len(seen))
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s yielded %d times", k, n)
		}
	}
	if n, least := counter.scans.Load(), int32((200+14)/15); n < least {
		t.Errorf("%d scan requests; 200 items in pages of 15 need at least %d", n, least)
	}
	plain := 0
	for _, err := range tb.Scan(ctx(t), dynamo.PageSize(64)) {
		if err != nil {
			t.Fatal(err)
		}
		plain++
	}
	if plain != 200 {
		t.Errorf("plain scan: %d items", plain)
	}
	if n := segmentGoroutines(); n != 0 {
		t.Errorf("%d segment goroutines left", n)
	}
}

// Breaking out of a parallel scan early stops every segment: no goroutine
// the scan started outlives the loop.
func TestParallelScanBreakLeaksNothing(t *testing.T) {
	tb, _ := msgTable(t, 50, "r1", "r2", "r3", "r4")
	for _, stop := range []int{1, 17, 150} {
		n := 0
		for _, err := range tb.ParallelScan(ctx(t), 4, dynamo.PageSize(10)) {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == stop {
				break
			}
		}
		if n != stop {
			t.Fatalf("loop ended after %d items, want %d", n, stop)
		}
		if k := segmentGoroutines(); k != 0 {
			t.Fatalf("break after %d: %d segment goroutines still running", stop, k)
		}
		left := goroutinesStartedByDynamo()
		for i := 0; left > 0 && i < 10_000; i++ {
			runtime.Gosched()
			left = goroutinesStartedByDynamo()
		}
		if left != 0 {
			t.Fatalf("break after %d: %d goroutines started by the scan still exist", stop, left)
		}
	}
}

// Bad cursors and options are refused before anything is sent.
func TestQueryBadCursorRefused(t *testing.T) {
	tb, counter := msgTable(t, 3, "r1")
	_, cur, err := tb.QueryPage(ctx(t), roomKey("r1"), dynamo.Limit(1))
	if err != nil || cur == "" {
		t.Fatalf("cursor %q, %v", cur, err)
	}
	counter.queries.Store(0)
	for _, c := range []dynamo.Cursor{"garbage!", cur[:len(cur)-3], cur + "A"} {
		_, _, err := tb.QueryPage(ctx(t), roomKey("r1"), dynamo.StartAfter(c))
		if !errors.Is(err, dynamo.ErrInvalidInput) {
			t.Errorf("cursor %q: %v, want ErrInvalidInput", c, err)
		}
		for _, err := range tb.Query(ctx(t), roomKey("r1"), dynamo.StartAfter(c)) {
			if !errors.Is(err, dynamo.ErrInvalidInput) {
				t.Errorf("Query with cursor %q: %v, want ErrInvalidInput", c, err)
			}
		}
	}
	_, _, err = tb.QueryPage(ctx(t), roomKey("r1"), dynamo.Index("byAuthor"), dynamo.StartAfter(cur))
	mustContain(t, err, "invalid input", "the table itself", `index "byAuthor"`)
	_, _, err = tb.ScanPage(ctx(t), dynamo.Segment(0, 2), dynamo.StartAfter(cur))
	mustContain(t, err, "invalid input", "scan of the whole table")
	if n := counter.queries.Load() + counter.scans.Load(); n != 0 {
		t.Errorf("%d requests sent", n)
	}
	// And the good cursor works.
	page, _, err := tb.QueryPage(ctx(t), roomKey("r1"), dynamo.StartAfter(cur))
	if err != nil || len(page) != 2 || page[0].Seq != 2 {
		t.Fatalf("resume: %+v, %v", page, err)
	}
}

// DynamoDB's own refusals come back wrapped, naming the table and index.
func TestQueryServerError(t *testing.T) {
	tb, _ := msgTable(t, 1, "r1")
	_, _, err := tb.QueryPage(ctx(t), roomKey("r1"), dynamo.Index("noSuchIndex"))
	mustContain(t, err, "dynamo: query table", `index "noSuchIndex"`)
	// A filter on a key attribute is DynamoDB's to refuse.
	for _, err := range tb.Query(ctx(t), roomKey("r1"), dynamo.Filter(expression.Name("seq").Equal(expression.Value(1)))) {
		mustContain(t, err, "dynamo: query table")
	}
	// A key condition on an attribute that is not a key is refused before
	// sending, naming the keys.
	for _, err := range tb.Query(ctx(t), expression.Key("text").Equal(expression.Value("x"))) {
		mustContain(t, err, "invalid input", `names "text"`, `partition key "room"`)
	}
}
