package dynamotest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// User is the item type of the examples.
type User struct {
	ID      string `dynamo:"id,hash"`
	Name    string `dynamo:"name"`
	Version int64  `dynamo:"version,version"`
}

// A test package's TestMain stops the shared DynamoDB Local when its tests
// are done; each test then gets a client and a table of its own.
func ExampleMain() {
	testMain := func(m *testing.M) { dynamotest.Main(m) } // func TestMain(m *testing.M)
	_ = testMain
}

// KeyTable gives a test a fresh table (deleted when the test ends) on the
// test binary's shared DynamoDB Local, or on DYNAMODB_ENDPOINT.
func ExampleKeyTable() {
	testSaveUser := func(t *testing.T) {
		c := dynamotest.Client(t) // fails the test, saying how to fix it, if no server can be had
		name := dynamotest.KeyTable(t, c, "users", "id", types.ScalarAttributeTypeS, "", "")

		users, err := dynamo.NewTable[User](dynamo.NewMapper(c), name)
		if err != nil {
			t.Fatal(err)
		}
		saved, err := users.Save(t.Context(), User{ID: "u1", Name: "Ada"})
		if err != nil || saved.Version != 1 {
			t.Fatalf("Save: %+v, %v", saved, err)
		}
	}
	_ = testSaveUser
}

// CreateTable takes a whole CreateTableInput, for tables with indexes, a
// stream or provisioned capacity; the name is made unique.
func ExampleCreateTable() {
	testWithIndex := func(t *testing.T) {
		c := dynamotest.Client(t)
		name := dynamotest.CreateTable(t, c, &dynamodb.CreateTableInput{
			TableName: aws.String("orders"), // a prefix: a random suffix is added
			AttributeDefinitions: []types.AttributeDefinition{
				{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS},
				{AttributeName: aws.String("customer"), AttributeType: types.ScalarAttributeTypeS},
			},
			KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
				IndexName:  aws.String("ByCustomer"),
				KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("customer"), KeyType: types.KeyTypeHash}},
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
			}},
		})
		_ = name // ACTIVE, PAY_PER_REQUEST, deleted when the test ends
	}
	_ = testWithIndex
}

// A program (an example, a demo, a local tool) starts its own DynamoDB Local
// with Start — or uses DYNAMODB_ENDPOINT when it is set — and stops it when
// done.
func ExampleStart() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	endpoint, stop, err := dynamotest.Start(ctx) // installs DynamoDB Local first if needed
	if err != nil {
		log.Fatal(err) // says how to install Java or set DYNAMODB_ENDPOINT
	}
	defer stop()

	c := dynamotest.NewClient(endpoint)
	users, err := dynamo.NewTable[User](dynamo.NewMapper(c), "Users")
	if err != nil {
		log.Fatal(err)
	}
	if err := users.CreateTable(ctx); err != nil {
		log.Fatal(err)
	}
	saved, err := users.Save(ctx, User{ID: "u1", Name: "Ada"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(saved.Version)
}

// A test of lost responses: the Dropper lets DynamoDB apply the next
// UpdateItem and throws its answer away; the SDK resends it, and the mapper
// must recognise its own write instead of reporting a conflict.
func ExampleDropper() {
	testLostResponse := func(t *testing.T) {
		d := dynamotest.NewDropper("UpdateItem")
		c := d.Client(t)
		name := dynamotest.KeyTable(t, c, "", "id", types.ScalarAttributeTypeS, "", "")
		users, err := dynamo.NewTable[User](dynamo.NewMapper(c), name)
		if err != nil {
			t.Fatal(err)
		}

		d.Arm(1)
		saved, err := users.Save(t.Context(), User{ID: "u1", Name: "Ada"})
		if err != nil {
			t.Fatalf("a retried write reported %v", err)
		}
		if d.Dropped() != 1 || d.Sent() != 2 || saved.Version != 1 {
			t.Fatalf("dropped %d, sent %d, version %d", d.Dropped(), d.Sent(), saved.Version)
		}
	}
	_ = testLostResponse
}

// What a Dropper does on the wire, shown against a stand-in server: the
// server gets and applies the request, the client gets a connection reset.
func ExampleNewDropper() {
	var applied atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		applied.Add(1)
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()

	d := dynamotest.NewDropper("PutItem")
	hc := &http.Client{Transport: d}
	putItem := func() error {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{}`))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810.PutItem") // how the SDK names the operation
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}

	fmt.Println("unarmed:", putItem())
	d.Arm(1)
	err := putItem()
	fmt.Println("armed:", err != nil, strings.Contains(err.Error(), "connection reset"))
	fmt.Println("armed again:", putItem()) // Arm(1) dropped one response
	fmt.Println("applied:", applied.Load(), "sent:", d.Sent(), "dropped:", d.Dropped())
	// Output:
	// unarmed: <nil>
	// armed: true true
	// armed again: <nil>
	// applied: 3 sent: 3 dropped: 1
}

// A Counter counts the requests that pass through it: here three GETs of a
// stand-in server; in a test, the round trips a call costs.
func ExampleCounter() {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()

	counter := dynamotest.NewCounter(nil) // forwards to http.DefaultTransport
	hc := &http.Client{Transport: counter}
	for range 3 {
		resp, err := hc.Get(srv.URL)
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
	}
	fmt.Println(counter.Count())
	// Output: 3
}

// In a test, Counter.Client returns a client for the test server whose
// requests are counted: assert how many round trips a call costs.
func ExampleCounter_Client() {
	testUpdateRoundTrips := func(t *testing.T) {
		counter := dynamotest.NewCounter(nil)
		c := counter.Client(t)
		name := dynamotest.KeyTable(t, c, "", "id", types.ScalarAttributeTypeS, "", "")
		users, err := dynamo.NewTable[User](dynamo.NewMapper(c), name)
		if err != nil {
			t.Fatal(err)
		}

		before := counter.Count()
		_, err = users.Update(t.Context(), User{ID: "u1"}, func(u User) (User, error) {
			u.Name = "Ada"
			return u, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := counter.Count() - before; n != 2 { // a GetItem and an UpdateItem
			t.Errorf("Update took %d round trips, want 2", n)
		}
	}
	_ = testUpdateRoundTrips
}

// ClientWith reaches the same server as Client with the client's options
// changed, here without retries, so that the first error is the one seen.
func ExampleClientWith() {
	testNoRetries := func(t *testing.T) {
		c := dynamotest.ClientWith(t, func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} })
		_, err := c.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String("no-such-table")})
		var nf *types.ResourceNotFoundException
		if !errors.As(err, &nf) {
			t.Fatalf("DescribeTable of a missing table: %v", err)
		}
	}
	_ = testNoRetries
}
