// Command tour is the quick-start demo of ddbkit/dynamo: a versioned save,
// two writers in conflict with the message the loser gets, and Update
// resolving the conflict. It starts DynamoDB Local (or uses
// DYNAMODB_ENDPOINT) and creates and deletes its own table.
//
//	go run ./examples/tour
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// Book is an item of the Books table; Version makes it optimistically locked.
type Book struct {
	ISBN    string   `dynamo:"ISBN,hash"`
	Title   string   `dynamo:"title"`
	Tags    []string `dynamo:"tags,set,omitempty"`
	Version int64    `dynamo:"version,version"`
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	endpoint, stop, err := dynamotest.Start(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	if err := run(ctx, os.Stdout, dynamotest.NewClient(endpoint)); err != nil {
		stop()
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer, client *dynamodb.Client) error {
	table := fmt.Sprintf("tour-books-%d", time.Now().UnixNano())
	if err := createTable(ctx, client, table); err != nil {
		return err
	}
	defer client.DeleteTable(context.WithoutCancel(ctx), &dynamodb.DeleteTableInput{TableName: aws.String(table)})

	books, err := dynamo.NewTable[Book](dynamo.NewMapper(client), table)
	if err != nil {
		return err
	}
	say := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }

	say("1. Save a new book. The argument is not modified; the saved copy comes back.")
	draft := Book{ISBN: "978-0134190440", Title: "The Go Programming Language"}
	saved, err := books.Save(ctx, draft)
	if err != nil {
		return err
	}
	say("   draft.Version = %d, saved.Version = %d", draft.Version, saved.Version)

	say("2. Two writers load version %d and both change it.", saved.Version)
	alice, err := books.Load(ctx, Book{ISBN: draft.ISBN}, dynamo.ConsistentRead())
	if err != nil {
		return err
	}
	bob := alice
	alice.Tags = []string{"golang"}
	if alice, err = books.Save(ctx, alice); err != nil {
		return err
	}
	say("   alice saved version %d (tags %v)", alice.Version, alice.Tags)
	bob.Title = "The Go Programming Language (2nd printing)"
	_, err = books.Save(ctx, bob)
	if !errors.Is(err, dynamo.ErrVersionConflict) {
		return fmt.Errorf("bob's save: got %v, want a version conflict", err)
	}
	say("   bob's save is refused:\n   %v", err)
	current, err := books.Current(err)
	if err != nil {
		return err
	}
	say("   the error carries the stored item: version %d, tags %v (no extra read)", current.Version, current.Tags)

	say("3. Update applies bob's change as a function, retrying on conflict.")
	final, err := books.Update(ctx, Book{ISBN: draft.ISBN}, func(b Book) (Book, error) {
		b.Title = bob.Title
		return b, nil
	})
	if err != nil {
		return err
	}
	say("   stored: %q, tags %v, version %d — both changes kept", final.Title, final.Tags, final.Version)
	return nil
}

// createTable creates the Books table and waits until it is active.
func createTable(ctx context.Context, c *dynamodb.Client, name string) error {
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("ISBN"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("ISBN"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		return err
	}
	for {
		out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			return err
		}
		if out.Table.TableStatus == types.TableStatusActive {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}
