package dynamo_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// The examples of this package run against DynamoDB Local: TestMain points
// client at it and lays out the tables and items they read, fresh for each
// run of the test binary, so that what an example prints is what the mapper
// did. Each example owns its keys, so any subset runs alone (-run).
func TestMain(m *testing.M) {
	flag.Parse()
	if dynamotest.ShortWithoutServer() {
		dynamotest.Main(m) // skips the examples and the tests that need a server
	}
	stop := func() {}
	if runsExamples() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		ep, stopServer, err := dynamotest.Start(ctx)
		if err == nil {
			stop = stopServer
			// The package's other tests (dynamotest.Client) reach the
			// same server instead of starting a second one.
			os.Setenv("DYNAMODB_ENDPOINT", ep)
			client = dynamotest.NewClient(ep)
			err = layOutExamples(ctx, client)
		}
		cancel()
		if err != nil {
			stop()
			fmt.Fprintf(os.Stderr, "the examples run against DynamoDB Local, which could not be had: %v\n(set DYNAMODB_ENDPOINT, or run `go test -run Test` to leave the examples out)\n", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	dynamotest.Stop()
	stop()
	os.Exit(code)
}

// runsExamples reports whether -test.run selects examples: when it is unset
// or matches one of the Example functions of this directory's test files
// (a run of some tests alone starts no server here; `-run Add` selects
// ExampleTable_Add, and must not run it without one).
func runsExamples() bool {
	f := flag.Lookup("test.run")
	if f == nil || f.Value.String() == "" {
		return true
	}
	re, err := regexp.Compile(strings.Split(f.Value.String(), "/")[0])
	if err != nil {
		return true
	}
	files, _ := filepath.Glob("*_test.go")
	fset := token.NewFileSet()
	for _, name := range files {
		file, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return true
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Example") && re.MatchString(fn.Name.Name) {
				return true
			}
		}
	}
	return false
}

// layOutExamples creates the examples' tables afresh and stores the items
// they expect to find.
func layOutExamples(ctx context.Context, c *dynamodb.Client) error {
	m := dynamo.NewMapper(c)
	books, err1 := dynamo.NewTable[Book](m, "Books")
	shelves, err2 := dynamo.NewTable[Shelf](m, "Shelves")
	accounts, err3 := dynamo.NewTable[Account](m, "Accounts")
	messages, err4 := dynamo.NewTable[ChatMessage](m, "Messages")
	customers, err5 := dynamo.NewTable[Customer](m, "Shop")
	orders, err6 := dynamo.NewTable[Order](m, "Shop")
	if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
		return err
	}
	type event struct {
		Stream string `dynamo:"stream,hash"`
		Seq    int64  `dynamo:"seq,range"`
	}
	creates := []func() error{
		fresh(ctx, books), fresh(ctx, shelves), fresh(ctx, accounts), fresh(ctx, customers), fresh(ctx, messages),
		fresh(ctx, must(dynamo.NewTable[Loan](m, "Loans"))),
		fresh(ctx, must(dynamo.NewTable[Ledger](m, "Ledgers"))),
		fresh(ctx, must(dynamo.NewTable[Note](m, "Notes"))),
		fresh(ctx, must(dynamo.NewTable[Page](m, "Pages"))),
		fresh(ctx, must(dynamo.NewTable[event](m, "Events"))),
		fresh(ctx, must(dynamo.NewTable[Device](m, "Devices"))),
	}
	for _, create := range creates {
		if err := create(); err != nil {
			return err
		}
	}
	var errs []error
	save := func(err error) { errs = append(errs, err) }
	for _, b := range []Book{
		{ISBN: "978-0262033848", Title: "Introduction to Algorithms"}, // ExampleIf
		{ISBN: "978-1617291784", Title: "Go in Action"},               // the batch loads
		{ISBN: "978-1491941195", Title: "Concurrency in Go"},
		{ISBN: "978-0596007126", Title: "Head First Design Patterns"}, // ExampleMapper_WriteTx
		{ISBN: "978-0132350884", Title: "Clean Code"},                 // ExampleTxError
	} {
		_, err := books.Save(ctx, b)
		save(err)
	}
	for _, s := range []Shelf{{Room: "A", Number: 3}, {Room: "B", Number: 1}, {Room: "C", Number: 1, Books: []string{"978-1617291784"}}} {
		_, err := shelves.Save(ctx, s)
		save(err)
	}
	for _, a := range []Account{{ID: "alice", Balance: 100}, {ID: "bob", Balance: 0}, {ID: "carol", Balance: 50}} {
		_, err := accounts.Save(ctx, a)
		save(err)
	}
	for _, msg := range []ChatMessage{
		{Room: "go", Sent: 1_700_000_000_001, Author: "ann", Text: "hello"},
		{Room: "go", Sent: 1_700_000_000_002, Author: "bob", Text: "hi ann"},
		{Room: "go", Sent: 1_700_000_000_003, Author: "ann", Text: "generics?"},
		{Room: "rust", Sent: 1_700_000_000_004, Author: "cid", Text: "borrowck"},
	} {
		_, err := messages.Save(ctx, msg)
		save(err)
	}
	_, err := customers.Save(ctx, Customer{PK: "CUSTOMER#1", SK: "PROFILE", Name: "Ann"})
	save(err)
	for _, o := range []Order{{PK: "CUSTOMER#1", SK: "ORDER#1", Total: 30}, {PK: "CUSTOMER#1", SK: "ORDER#2", Total: 12}} {
		_, err := orders.Save(ctx, o)
		save(err)
	}
	return errors.Join(errs...)
}

// fresh returns a function that deletes t's table if it exists and creates
// it again.
func fresh[T any](ctx context.Context, t *dynamo.Table[T]) func() error {
	return func() error {
		if err := t.DeleteTable(ctx); err != nil && !errors.Is(err, dynamo.ErrTableNotFound) {
			return err
		}
		return t.CreateTable(ctx)
	}
}

func must[T any](t *dynamo.Table[T], err error) *dynamo.Table[T] {
	if err != nil {
		panic(err)
	}
	return t
}
