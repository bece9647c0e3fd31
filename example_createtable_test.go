package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
)

// Loan declares its table in its tags: the key (library, book), a global
// secondary index ByMember (member, due), a local secondary index ByDue
// (library, due) and a TTL attribute.
type Loan struct {
	Library string    `dynamo:"library,hash"`
	Book    string    `dynamo:"book,range"`
	Member  string    `dynamo:"member,omitempty" index:"ByMember,hash"`
	Due     int64     `dynamo:"due" index:"ByMember,range" localIndex:"ByDue,range"`
	Expires time.Time `dynamo:"expires,ttl,unixtime"`
	Version int64     `dynamo:"v,version"`
}

func ExampleTable_CreateTable() {
	ctx := context.Background()
	loans, err := dynamo.NewTable[Loan](dynamo.NewMapper(client), "Loans")
	if err != nil {
		log.Fatal(err)
	}
	// Creates the table (on demand) with its indexes, waits until it is
	// ACTIVE and enables TTL on "expires". IfNotExists accepts a table that
	// is already there, so a service can call this at every start.
	if err := loans.CreateTable(ctx, dynamo.IfNotExists()); err != nil {
		log.Fatal(err)
	}
	fmt.Println("Loans is ready")
	// Output: Loans is ready
}

func ExampleTable_DeleteTable() {
	ctx := context.Background()
	loans, _ := dynamo.NewTable[Loan](dynamo.NewMapper(client), "Loans")
	if err := loans.DeleteTable(ctx); err != nil { // waits until it is gone
		log.Fatal(err)
	}
	err := loans.DeleteTable(ctx)
	fmt.Println(errors.Is(err, dynamo.ErrTableNotFound))
	// Output: true
}

func ExampleTable_CreateTableInput() {
	loans, _ := dynamo.NewTable[Loan](dynamo.NewMapper(client), "Loans")
	in, err := loans.CreateTableInput(
		dynamo.WithProvisioned(10, 5),
		dynamo.WithProjection("ByMember", types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(in.BillingMode, *in.ProvisionedThroughput.ReadCapacityUnits, *in.ProvisionedThroughput.WriteCapacityUnits)
	for _, k := range in.KeySchema {
		fmt.Println("key", k.KeyType, *k.AttributeName)
	}
	for _, a := range in.AttributeDefinitions {
		fmt.Println("attribute", *a.AttributeName, a.AttributeType)
	}
	for _, g := range in.GlobalSecondaryIndexes {
		fmt.Println("global index", *g.IndexName, *g.KeySchema[0].AttributeName, *g.KeySchema[1].AttributeName, g.Projection.ProjectionType)
	}
	for _, l := range in.LocalSecondaryIndexes {
		fmt.Println("local index", *l.IndexName, *l.KeySchema[0].AttributeName, *l.KeySchema[1].AttributeName, l.Projection.ProjectionType)
	}
	// Output:
	// PROVISIONED 10 5
	// key HASH library
	// key RANGE book
	// attribute library S
	// attribute book S
	// attribute member S
	// attribute due N
	// global index ByMember member due KEYS_ONLY
	// local index ByDue library due ALL
}
