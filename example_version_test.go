package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/ddbkit/dynamo"
)

// ClockAccount's versions start at the Unix millisecond of the item's creation
// and advance by 1: a copy loaded before the account was deleted and opened
// again conflicts with the new account instead of saving over it.
type ClockAccount struct {
	ID      string `dynamo:"id,hash"`
	Owner   string `dynamo:"owner"`
	Version int64  `dynamo:"version,version,versionstart=clock"`
}

func Example_versionStartClock() {
	ctx := context.Background()
	accounts, err := dynamo.NewTable[ClockAccount](dynamo.NewMapper(client), "Accounts")
	if err != nil {
		log.Fatal(err)
	}
	old, _ := accounts.Save(ctx, ClockAccount{ID: "a1", Owner: "ann"}) // version: now in ms
	_ = accounts.Delete(ctx, old)
	_, _ = accounts.Save(ctx, ClockAccount{ID: "a1", Owner: "bob"}) // a later millisecond

	old.Owner = "mallory"
	_, err = accounts.Save(ctx, old)
	fmt.Println(errors.Is(err, dynamo.ErrVersionConflict)) // true: bob's account is kept
	// Output: true
}

// Ledger's versions are 100, 110, 120, ... (Java v2's initialValue(100),
// incrementBy(10)).
type Ledger struct {
	ID      string `dynamo:"id,hash"`
	Version int64  `dynamo:"version,version,versionstart=100,versionstep=10"`
}

func Example_versionSettings() {
	ctx := context.Background()
	ledgers, _ := dynamo.NewTable[Ledger](dynamo.NewMapper(client), "Ledgers")
	first, _ := ledgers.Save(ctx, Ledger{ID: "l1"})
	second, _ := ledgers.Save(ctx, first)
	fmt.Println(first.Version, second.Version)
	// Output: 100 110
}

// Note's times are set by the mapper: Created once, by the write that
// creates the item, Modified by every write.
type Note struct {
	ID       string    `dynamo:"id,hash"`
	Text     string    `dynamo:"text"`
	Created  time.Time `dynamo:"created,created"`
	Modified time.Time `dynamo:"modified,modified"`
	Version  int64     `dynamo:"version,version"`
}

func Example_timestamps() {
	ctx := context.Background()
	notes, _ := dynamo.NewTable[Note](dynamo.NewMapper(client), "Notes")
	n, err := notes.Save(ctx, Note{ID: "n1", Text: "draft"})
	if err != nil {
		log.Fatal(err)
	}
	n.Text = "final"
	n, _ = notes.Save(ctx, n) // Created kept (if_not_exists), Modified now
	fmt.Println(n.Created.Before(n.Modified) || n.Created.Equal(n.Modified))
	// Output: true
}

// Page counts its views with Table.Add: no read, no conflict.
type Page struct {
	URL       string   `dynamo:"url,hash"`
	Views     int64    `dynamo:"views"`
	Referrers []string `dynamo:"referrers,set,omitempty"`
	Version   int64    `dynamo:"version,version"`
}

func ExampleTable_Add() {
	ctx := context.Background()
	pages, _ := dynamo.NewTable[Page](dynamo.NewMapper(client), "Pages")
	page, err := pages.Add(ctx, Page{URL: "/home"},
		dynamo.Increment("views", 1).AddToSet("referrers", []string{"example.com"}))
	if err != nil {
		log.Fatal(err) // errors.Is(err, dynamo.ErrUnknownOutcome): look before adding again
	}
	fmt.Println(page.Views, page.Referrers, page.Version) // as stored after the Add
	// Output: 1 [example.com] 1
}
