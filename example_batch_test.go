package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/ddbkit/dynamo"
)

func ExampleTable_BatchLoad() {
	ctx := context.Background()
	books, _ := dynamo.NewTable[Book](dynamo.NewMapper(client), "Books")

	// Any number of keys; only the key fields are read. Missing books are
	// left out; the others come back in the order of the keys.
	found, err := books.BatchLoad(ctx, []Book{{ISBN: "978-1491941195"}, {ISBN: "978-1617291784"}, {ISBN: "none"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range found {
		fmt.Println(b.ISBN, b.Title, b.Version)
	}
	// Output:
	// 978-1491941195 Concurrency in Go 1
	// 978-1617291784 Go in Action 1
}

func ExampleTable_BatchLoadIndexed() {
	ctx := context.Background()
	books, _ := dynamo.NewTable[Book](dynamo.NewMapper(client), "Books")

	keys := []Book{{ISBN: "978-1617291784"}, {ISBN: "none"}}
	items, found, err := books.BatchLoadIndexed(ctx, keys, dynamo.ConsistentRead())
	if err != nil {
		log.Fatal(err)
	}
	for i, k := range keys {
		if !found[i] {
			fmt.Println("no book", k.ISBN)
			continue
		}
		fmt.Println(items[i].Title)
	}
	// Output:
	// Go in Action
	// no book none
}

func ExampleTable_BatchSave() {
	ctx := context.Background()
	m := dynamo.NewMapper(client)

	// An unversioned type: batch writes need no option.
	type Event struct {
		Stream string `dynamo:"stream,hash"`
		Seq    int64  `dynamo:"seq,range"`
		Body   string `dynamo:"body"`
	}
	events, _ := dynamo.NewTable[Event](m, "Events")
	if err := events.BatchSave(ctx, []Event{{"s", 1, "a"}, {"s", 2, "b"}}); err != nil {
		var be *dynamo.BatchWriteError
		if errors.As(err, &be) {
			fmt.Println("written:", be.Written, "not written:", be.Unwritten) // indexes into the slice
		}
		log.Fatal(err)
	}

	// A versioned type: refused, because a batch write cannot check versions.
	books, _ := dynamo.NewTable[Book](m, "Books")
	imported := []Book{{ISBN: "978-1098104764", Title: "Learning Go"}}
	err := books.BatchSave(ctx, imported)
	fmt.Println(errors.Is(err, dynamo.ErrInvalidInput)) // true; the message points to Mapper.WriteTx

	// Loading data nobody else writes: say so, and versions are written as
	// held+1 without a check.
	err = books.BatchSave(ctx, imported, dynamo.WithSaveBehavior(dynamo.SaveClobber))
	if err != nil {
		log.Fatal(err)
	}
	// Output: true
}
