package dynamo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/ddbkit/dynamo"
)

// ChatMessage is an item of a table with a partition key and a sort key,
// and a global secondary index "byAuthor" (hash author, range sent).
type ChatMessage struct {
	Room    string `dynamo:"room,hash"`
	Sent    int64  `dynamo:"sent,range" index:"byAuthor,range"` // Unix milliseconds
	Author  string `dynamo:"author" index:"byAuthor,hash"`
	Text    string `dynamo:"text"`
	Version int64  `dynamo:"v,version"`
}

func ExampleTable_Query() {
	ctx := context.Background()
	messages, _ := dynamo.NewTable[ChatMessage](dynamo.NewMapper(client), "Messages")

	// The 20 latest messages of room "go", newest first, without Bob's.
	// Pages are fetched as the loop needs them.
	latest := messages.Query(ctx, expression.Key("room").Equal(expression.Value("go")),
		dynamo.Descending(),
		dynamo.Filter(expression.Name("author").NotEqual(expression.Value("bob"))),
		dynamo.Limit(20))
	for m, err := range latest {
		if err != nil {
			log.Fatal(err) // yielded once; the loop ends after it
		}
		fmt.Println(m.Sent, m.Author, m.Text)
	}
	// Output:
	// 1700000000003 ann generics?
	// 1700000000001 ann hello
}

func ExampleTable_Query_index() {
	ctx := context.Background()
	messages, _ := dynamo.NewTable[ChatMessage](dynamo.NewMapper(client), "Messages")

	// Ann's messages since a moment, through the global secondary index.
	since := int64(1_700_000_000_000)
	key := expression.Key("author").Equal(expression.Value("ann")).
		And(expression.Key("sent").GreaterThanEqual(expression.Value(since)))
	for m, err := range messages.Query(ctx, key, dynamo.Index("byAuthor")) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(m.Room, m.Text)
	}
	// Output:
	// go hello
	// go generics?
}

// A page handler for an HTTP API: the client gets a page token with each
// page and sends it back for the next one.
func ExampleTable_QueryPage() {
	messages, _ := dynamo.NewTable[ChatMessage](dynamo.NewMapper(client), "Messages")

	http.HandleFunc("GET /rooms/{room}/messages", func(w http.ResponseWriter, r *http.Request) {
		var after dynamo.Cursor // empty: from the start
		if tok := r.URL.Query().Get("page"); tok != "" {
			var err error
			if after, err = dynamo.ParseCursor(tok); err != nil {
				http.Error(w, "bad page token", http.StatusBadRequest)
				return
			}
		}
		page, next, err := messages.QueryPage(r.Context(),
			expression.Key("room").Equal(expression.Value(r.PathValue("room"))),
			dynamo.Limit(50), dynamo.StartAfter(after))
		switch {
		case errors.Is(err, dynamo.ErrInvalidInput): // e.g. a token from another listing
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		case err != nil:
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		// next is "" on the last page.
		_ = json.NewEncoder(w).Encode(map[string]any{"messages": page, "next": next})
	})
}

func ExampleTable_ParallelScan() {
	ctx := context.Background()
	messages, _ := dynamo.NewTable[ChatMessage](dynamo.NewMapper(client), "Messages")

	// Count messages per author, reading the table with 8 concurrent
	// segment scans. Every item is yielded once; leaving the loop early
	// stops all 8 before ParallelScan returns.
	perAuthor := map[string]int{}
	for m, err := range messages.ParallelScan(ctx, 8, dynamo.PageSize(500)) {
		if err != nil {
			log.Fatal(err)
		}
		perAuthor[m.Author]++ // the loop body runs on one goroutine at a time
	}
	fmt.Println(perAuthor)
	// Output: map[ann:2 bob:1 cid:1]
}

func ExampleSegment() {
	ctx := context.Background()
	messages, _ := dynamo.NewTable[ChatMessage](dynamo.NewMapper(client), "Messages")

	// Worker 3 of 16 (in 16 processes, say) scans its share of the table.
	for m, err := range messages.Scan(ctx, dynamo.Segment(3, 16)) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(m.Room, m.Sent)
	}
}

// A page that holds an item another writer stored with a field of another
// type comes back without it: the error names it, the page's other items
// and the cursor are there, and the scan reads on.
func ExamplePageDecodeError() {
	ctx := context.Background()
	messages, _ := dynamo.NewTable[ChatMessage](dynamo.NewMapper(client), "Messages")
	var cursor dynamo.Cursor
	for {
		page, next, err := messages.ScanPage(ctx, dynamo.StartAfter(cursor), dynamo.Limit(100))
		var bad *dynamo.PageDecodeError
		switch {
		case errors.As(err, &bad):
			for _, f := range bad.Failed {
				var key ChatMessage
				_ = f.DecodeKey(&key) // its key fields
				log.Printf("skipped room %s sent %d: %v", key.Room, key.Sent, f.Err)
			}
		case err != nil:
			log.Fatal(err)
		}
		for _, m := range page {
			fmt.Println(m.Room, m.Text)
		}
		if next == "" {
			break
		}
		cursor = next
	}
}

// An iterator yields an item another writer stored with a field of another
// type as an *ItemDecodeError naming it, in its place, and goes on with the
// others: skip it, or stop as at any error.
func ExampleItemDecodeError() {
	ctx := context.Background()
	messages, _ := dynamo.NewTable[ChatMessage](dynamo.NewMapper(client), "Messages")
	for m, err := range messages.Scan(ctx) {
		var bad *dynamo.ItemDecodeError
		switch {
		case errors.As(err, &bad):
			var key ChatMessage
			_ = bad.DecodeKey(&key) // its key fields
			log.Printf("skipped room %s sent %d: %v", key.Room, key.Sent, bad.Err)
			continue
		case err != nil:
			log.Fatal(err)
		}
		fmt.Println(m.Room, m.Text)
	}
}
