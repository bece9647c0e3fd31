package dynamo_test

import (
	"context"
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/ddbkit/dynamo"
)

type Customer struct {
	PK   string `dynamo:"pk,hash"`
	SK   string `dynamo:"sk,range"`
	Kind string `dynamo:"kind,entity=customer"`
	Name string `dynamo:"name"`
}

type Order struct {
	PK      string `dynamo:"pk,hash"`
	SK      string `dynamo:"sk,range"`
	Kind    string `dynamo:"kind,entity=order"`
	Total   int    `dynamo:"total"`
	Version int64  `dynamo:"v,version"`
}

// Customers and their orders in one table: one Query reads a customer's
// partition, each item decoded as its own type.
func ExampleNewEntities() {
	ctx := context.Background()
	m := dynamo.NewMapper(client)
	customers, _ := dynamo.NewTable[Customer](m, "Shop")
	orders, _ := dynamo.NewTable[Order](m, "Shop")
	shop, err := dynamo.NewEntities(dynamo.Member(customers), dynamo.Member(orders))
	if err != nil {
		log.Fatal(err)
	}
	for v, err := range shop.Query(ctx, expression.Key("pk").Equal(expression.Value("CUSTOMER#1"))) {
		if err != nil {
			log.Fatal(err)
		}
		switch v := v.(type) {
		case Customer:
			fmt.Println("customer", v.Name)
		case Order:
			fmt.Println("order", v.SK, v.Total)
		}
	}
	// Output:
	// order ORDER#1 30
	// order ORDER#2 12
	// customer Ann
}
