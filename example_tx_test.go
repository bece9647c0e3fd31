package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/ddbkit/dynamo"
)

type Shelf struct {
	Room    string   `dynamo:"room,hash"`
	Number  int      `dynamo:"number,range"`
	Books   []string `dynamo:"books,set,omitempty"`
	Version int64    `dynamo:"version,version"`
}

func ExampleMapper_WriteTx() {
	ctx := context.Background()
	m := dynamo.NewMapper(client)
	books, _ := dynamo.NewTable[Book](m, "Books")
	shelves, _ := dynamo.NewTable[Shelf](m, "Shelves")

	book, _ := books.Load(ctx, Book{ISBN: "978-0596007126"}, dynamo.ConsistentRead())
	shelf, _ := shelves.Load(ctx, Shelf{Room: "A", Number: 3}, dynamo.ConsistentRead())

	// Shelve the book and tag it, both or neither, each on condition that
	// nobody wrote it since it was loaded.
	shelf.Books = append(shelf.Books[:len(shelf.Books):len(shelf.Books)], book.ISBN)
	book.Tags = append(book.Tags[:len(book.Tags):len(book.Tags)], "shelved")
	saveBook, saveShelf := books.TxSave(book), shelves.TxSave(shelf)
	if err := m.WriteTx(ctx, []dynamo.TxOp{saveBook, saveShelf}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(saveBook.Saved().Version, saveShelf.Saved().Version) // one more than loaded
	// Output: 2 2
}

func ExampleTxError() {
	ctx := context.Background()
	m := dynamo.NewMapper(client)
	books, _ := dynamo.NewTable[Book](m, "Books")
	shelves, _ := dynamo.NewTable[Shelf](m, "Shelves")

	book, _ := books.Load(ctx, Book{ISBN: "978-0132350884"}, dynamo.ConsistentRead())
	shelf, _ := shelves.Load(ctx, Shelf{Room: "B", Number: 1}, dynamo.ConsistentRead())
	_, _ = books.Save(ctx, book) // meanwhile, someone else saves the book

	// Write the shelf only if the book is still at the version loaded.
	ops := []dynamo.TxOp{shelves.TxSave(shelf), books.TxCheck(book)}
	err := m.WriteTx(ctx, ops)
	var txErr *dynamo.TxError
	if errors.Is(err, dynamo.ErrVersionConflict) && errors.As(err, &txErr) {
		// err names the members that failed; each failure carries the item
		// as stored, which the member's own table decodes.
		if f := txErr.Failure(1); f != nil {
			current, _ := books.Current(f.Err)
			fmt.Println("the book is now at version", current.Version)
		}
	}
	// Output: the book is now at version 2
}

func ExampleWithRequestToken() {
	ctx := context.Background()
	m := dynamo.NewMapper(client)
	books, _ := dynamo.NewTable[Book](m, "Books")

	// A worker handles message "msg-7" and may be run again for it after a
	// crash. Built from the same values with the same token, the transaction
	// is applied once: a resend within 10 minutes succeeds without writing.
	book := Book{ISBN: "978-1593279288", Title: "The Linux Programming Interface"}
	for range 2 { // the first run, and the run after a crash
		ops := []dynamo.TxOp{books.TxSave(book)}
		if err := m.WriteTx(ctx, ops, dynamo.WithRequestToken("msg-7")); err != nil {
			log.Fatal(err)
		}
	}
	// Not run as a test: DynamoDB remembers a token for 10 minutes, also
	// across a table's deletion, so a second run within them would write
	// nothing at all.
}

func ExampleMapper_ReadTx() {
	ctx := context.Background()
	m := dynamo.NewMapper(client)
	books, _ := dynamo.NewTable[Book](m, "Books")
	shelves, _ := dynamo.NewTable[Shelf](m, "Shelves")

	// Read a shelf and its book as of one moment: no write transaction
	// is seen half-applied.
	getShelf := shelves.TxGet(Shelf{Room: "C", Number: 1})
	getBook := books.TxGet(Book{ISBN: "978-0000000000"})
	if err := m.ReadTx(ctx, []dynamo.TxGetOp{getShelf, getBook}); err != nil {
		log.Fatal(err)
	}
	if shelf, ok := getShelf.Item(); ok {
		fmt.Println(shelf.Books)
	}
	if _, ok := getBook.Item(); !ok {
		fmt.Println("no such book")
	}
	// Output:
	// [978-1617291784]
	// no such book
}

type Account struct {
	ID      string `dynamo:"id,hash"`
	Balance int64  `dynamo:"balance"`
	Version int64  `dynamo:"version,version"`
}

var ErrInsufficientFunds = errors.New("insufficient funds")

func ExampleMapper_Transact() {
	ctx := context.Background()
	m := dynamo.NewMapper(client)
	accounts, _ := dynamo.NewTable[Account](m, "Accounts")

	// Move 30 from one account to another. The function may run several
	// times (after a conflict, from the accounts as they are then): it only
	// reads and writes through tx.
	err := m.Transact(ctx, func(tx *dynamo.Tx) error {
		from, to := Account{ID: "alice"}, Account{ID: "bob"}
		// One TransactGetItems: both accounts from one snapshot.
		if err := tx.Prefetch(accounts.TxGet(from), accounts.TxGet(to)); err != nil {
			return err
		}
		v := accounts.In(tx)
		from, err := v.Load(from)
		if err != nil {
			return err
		}
		if to, err = v.Load(to); err != nil {
			return err
		}
		if from.Balance < 30 {
			return ErrInsufficientFunds // nothing is written
		}
		from.Balance -= 30
		to.Balance += 30
		if _, err := v.Save(from); err != nil { // buffered until the commit
			return err
		}
		_, err = v.Save(to)
		return err
	})
	switch {
	case errors.Is(err, ErrInsufficientFunds):
		fmt.Println("declined")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println("moved 30")
	}
	// Output: moved 30
}

func ExampleMapper_Transact_readOnly() {
	ctx := context.Background()
	m := dynamo.NewMapper(client)
	accounts, _ := dynamo.NewTable[Account](m, "Accounts")

	// Sum all balances from one snapshot: a read-only run writes nothing.
	ids := []string{"alice", "bob", "carol"}
	var total int64
	err := m.Transact(ctx, func(tx *dynamo.Tx) error {
		total = 0 // the function may run again: start over
		gets := make([]dynamo.TxGetOp, len(ids))
		for i, id := range ids {
			gets[i] = accounts.TxGet(Account{ID: id})
		}
		if err := tx.Prefetch(gets...); err != nil {
			return err
		}
		for _, id := range ids {
			a, err := accounts.In(tx).Load(Account{ID: id})
			if err != nil {
				return err
			}
			total += a.Balance
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(total)
	// Output: 150
}
