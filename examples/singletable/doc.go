// Command singletable keeps customers and their orders in one table (the
// single-table design): a customer's profile and its orders share a
// partition ("CUSTOMER#<id>"), told apart by an entity attribute, so one
// Query reads a customer with all its orders, each item decoded as its own
// Go type; a global secondary index lists orders by status across
// customers. Saving an order can never overwrite the customer at the same
// key, and each type keeps its own version rules.
//
// Run it with `go run ./examples/singletable`: it starts DynamoDB Local (or
// uses DYNAMODB_ENDPOINT).
package main
