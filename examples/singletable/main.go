package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// Customer is the profile item of a customer's partition.
type Customer struct {
	PK      string `dynamo:"pk,hash"`  // CUSTOMER#<id>
	SK      string `dynamo:"sk,range"` // #PROFILE (sorts before ORDER#...)
	Kind    string `dynamo:"kind,entity=customer"`
	Name    string `dynamo:"name"`
	Email   string `dynamo:"email"`
	Version int64  `dynamo:"v,version"`
}

// Order is one order, in its customer's partition.
type Order struct {
	PK      string `dynamo:"pk,hash"`  // CUSTOMER#<id>
	SK      string `dynamo:"sk,range"` // ORDER#<id>
	Kind    string `dynamo:"kind,entity=order"`
	Status  string `dynamo:"status,omitempty" index:"ByStatus,hash"`
	Placed  string `dynamo:"placed,omitempty" index:"ByStatus,range"` // RFC 3339, sorts by time
	Total   int    `dynamo:"total"`
	Version int64  `dynamo:"v,version"`
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	endpoint, stop, err := dynamotest.Start(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	if err := run(ctx, os.Stdout, endpoint); err != nil {
		stop()
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer, endpoint string) error {
	m := dynamo.NewMapper(dynamotest.NewClient(endpoint))
	name := fmt.Sprintf("shop-%d", time.Now().UnixNano())
	customers, err := dynamo.NewTable[Customer](m, name)
	if err != nil {
		return err
	}
	orders, err := dynamo.NewTable[Order](m, name)
	if err != nil {
		return err
	}
	// The table from Order's tags: keys pk/sk and the ByStatus index.
	if err := orders.CreateTable(ctx); err != nil {
		return err
	}
	defer func() { _ = orders.DeleteTable(context.WithoutCancel(ctx)) }()

	ada, err := customers.Save(ctx, Customer{PK: "CUSTOMER#1", SK: "#PROFILE", Name: "Ada", Email: "ada@example.com"})
	if err != nil {
		return err
	}
	placed := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	for i, total := range []int{30, 12, 45} {
		status := "open"
		if i == 1 {
			status = "shipped"
		}
		_, err := orders.Save(ctx, Order{PK: ada.PK, SK: fmt.Sprintf("ORDER#%d", i+1), Status: status,
			Placed: placed.Add(time.Duration(i) * time.Hour).Format(time.RFC3339), Total: total})
		if err != nil {
			return err
		}
	}
	if _, err := orders.Save(ctx, Order{PK: "CUSTOMER#2", SK: "ORDER#9", Status: "open", Placed: placed.Add(30 * time.Minute).Format(time.RFC3339), Total: 7}); err != nil {
		return err
	}

	// One Query: the customer and all its orders, each as its own type.
	shop, err := dynamo.NewEntities(dynamo.Member(customers), dynamo.Member(orders))
	if err != nil {
		return err
	}
	sum := 0
	for v, err := range shop.Query(ctx, expression.Key("pk").Equal(expression.Value(ada.PK))) {
		if err != nil {
			return err
		}
		switch v := v.(type) {
		case Customer:
			fmt.Fprintf(w, "customer %s <%s> (version %d)\n", v.Name, v.Email, v.Version)
		case Order:
			sum += v.Total
			fmt.Fprintf(w, "  %s %s, total %d\n", v.SK, v.Status, v.Total)
		default:
			return fmt.Errorf("unexpected item %v", v)
		}
	}
	fmt.Fprintf(w, "orders total %d\n", sum)

	// The index: open orders of every customer, oldest first.
	var open []string
	for o, err := range orders.Query(ctx, expression.Key("status").Equal(expression.Value("open")), dynamo.Index("ByStatus")) {
		if err != nil {
			return err
		}
		open = append(open, o.PK+"/"+o.SK)
	}
	fmt.Fprintf(w, "open orders by time: %v\n", open)

	// An order written at the customer's key is refused: one type never
	// overwrites another's item.
	_, err = orders.Save(ctx, Order{PK: ada.PK, SK: "#PROFILE", Status: "open"})
	fmt.Fprintf(w, "saving an order over the customer's profile: refused: %v\n", err != nil)
	if err == nil {
		return errors.New("an order overwrote the customer")
	}

	// Each type keeps its version rules: a stale customer conflicts.
	stale := ada
	if _, err := customers.Update(ctx, ada, func(c Customer) (Customer, error) { c.Email = "ada@lovelace.example"; return c, nil }); err != nil {
		return err
	}
	stale.Name = "Ada L."
	_, err = customers.Save(ctx, stale)
	fmt.Fprintf(w, "saving a stale customer: version conflict: %v\n", errors.Is(err, dynamo.ErrVersionConflict))
	return nil
}
