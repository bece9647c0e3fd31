package cart_test

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/examples/sessions/cart"
)

// Serve the carts of the table "carts". Run as many instances as you like
// on the same table; each holds nothing but its DynamoDB client.
func ExampleNew() {
	ctx := context.Background()
	client := dynamotest.NewClient("http://localhost:8000") // or dynamodb.NewFromConfig(cfg)
	srv, err := cart.New(dynamo.NewMapper(client), "carts", cart.WithTTL(time.Hour))
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.CreateTable(ctx); err != nil { // once; accepts an existing table
		log.Fatal(err)
	}
	hs := &http.Server{Addr: ":8081", Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(hs.ListenAndServe())
}
