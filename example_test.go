package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
)

type Book struct {
	ISBN    string   `dynamo:"ISBN,hash"`
	Title   string   `dynamo:"title"`
	Tags    []string `dynamo:"tags,set,omitempty"`
	Version int64    `dynamo:"version,version"`
}

// client is e.g. dynamodb.NewFromConfig(cfg); here, DynamoDB Local (see
// example_main_test.go, which also lays out the items the examples read).
var client *dynamodb.Client

func ExampleNewTable() {
	books, err := dynamo.NewTable[Book](dynamo.NewMapper(client), "Books")
	if err != nil {
		log.Fatal(err) // names the struct, the field and the fix
	}
	_ = books
}

func ExampleTable_Save() {
	ctx := context.Background()
	books, _ := dynamo.NewTable[Book](dynamo.NewMapper(client), "Books")

	in := Book{ISBN: "978-0134190440", Title: "The Go Programming Language"}
	saved, err := books.Save(ctx, in) // written as version 1
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(in.Version, saved.Version) // the input is never modified: 0 1

	_, err = books.Save(ctx, in) // in still says "unsaved"
	if errors.Is(err, dynamo.ErrVersionConflict) {
		current, _ := books.Current(err) // the stored item, without another read
		fmt.Println("stored version", current.Version)
	}
	// Output:
	// 0 1
	// stored version 1
}

func ExampleTable_Update() {
	ctx := context.Background()
	books, _ := dynamo.NewTable[Book](dynamo.NewMapper(client), "Books")

	// Add a tag, whatever else writes the book concurrently. A missing book
	// reaches fn with only its key set, so this also creates it.
	saved, err := books.Update(ctx, Book{ISBN: "978-0201633610"}, func(b Book) (Book, error) {
		b.Tags = append(b.Tags[:len(b.Tags):len(b.Tags)], "golang")
		return b, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(saved.Version, saved.Tags)
	// Output: 1 [golang]
}

func ExampleIf() {
	ctx := context.Background()
	books, _ := dynamo.NewTable[Book](dynamo.NewMapper(client), "Books")
	b, _ := books.Load(ctx, Book{ISBN: "978-0262033848"}, dynamo.ConsistentRead())

	b.Title = "Introduction to Algorithms (4th ed.)"
	saved, err := books.Save(ctx, b, dynamo.If(expression.Name("title").AttributeExists()))
	switch {
	case err == nil:
		fmt.Println("saved version", saved.Version)
	case errors.Is(err, dynamo.ErrVersionConflict):
		// someone saved the book since it was loaded
	case errors.Is(err, dynamo.ErrConditionFailed):
		// the version matched, the If condition did not
	}
	// Output: saved version 2
}

func ExampleWithSaveBehavior() {
	ctx := context.Background()
	books, _ := dynamo.NewTable[Book](dynamo.NewMapper(client), "Books")

	// Overwrite without a version check (a migration, say). The version is
	// still incremented by DynamoDB, so older copies conflict afterwards.
	saved, err := books.Save(ctx, Book{ISBN: "978-0131103627", Title: "Fixed"},
		dynamo.WithSaveBehavior(dynamo.SaveClobber))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(saved.Version)
	// Output: 1
}

// A Save that knows the item as stored at the version it holds — here the
// one a conflict carries — sends only what it changes from it.
func ExampleChangedFrom() {
	ctx := context.Background()
	books, _ := dynamo.NewTable[Book](dynamo.NewMapper(client), "Books")
	if _, err := books.Save(ctx, Book{ISBN: "978-0135957059", Title: "The Pragmatic Programmer"}); err != nil {
		log.Fatal(err)
	}

	_, err := books.Save(ctx, Book{ISBN: "978-0135957059", Title: "stale"}) // unsaved: conflicts
	var ce *dynamo.ConditionError
	if !errors.As(err, &ce) {
		log.Fatal(err)
	}
	b, _ := books.Current(err) // ce.Item decoded
	b.Tags = []string{"craft"}
	// An UpdateItem of the tags, the version and the write token alone,
	// still conditioned on version 1.
	saved, err := books.Save(ctx, b, dynamo.ChangedFrom(ce.Item))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(saved.Version, saved.Title, saved.Tags)
	// Output: 2 The Pragmatic Programmer [craft]
}

// A mapper whose Updates, batches and transactions retry at most 10 times,
// waiting up to a second between attempts; one batch call allows more.
func ExampleWithRetry() {
	ctx := context.Background()
	m := dynamo.NewMapper(client, dynamo.WithRetry(dynamo.RetryPolicy{MaxAttempts: 10, BackoffMax: time.Second}))
	books, err := dynamo.NewTable[Book](m, "Books")
	if err != nil {
		log.Fatal(err)
	}
	saved, err := books.Update(ctx, Book{ISBN: "0-201-03801-3"}, func(b Book) (Book, error) {
		b.Title = "The Art of Computer Programming"
		return b, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	err = books.BatchSave(ctx, []Book{{ISBN: "1"}, {ISBN: "2"}},
		dynamo.WithSaveBehavior(dynamo.SaveClobber), dynamo.WithRetry(dynamo.RetryPolicy{MaxAttempts: 50}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(saved.Title, saved.Version)
	// Output: The Art of Computer Programming 1
}
