// Command sessions runs two instances of the shopping-cart service of
// package cart on two ports, sharing one DynamoDB table: stateless servers,
// as behind a load balancer. Send requests to either; both see every cart,
// and concurrent changes through both are all kept.
//
//	go run ./examples/sessions                 # :8081 and :8082
//	go run ./examples/sessions -addr1 127.0.0.1:9001 -addr2 127.0.0.1:9002
//
// It starts DynamoDB Local (or uses DYNAMODB_ENDPOINT), creates the table
// if it is missing, prints curl commands to try, and serves until
// interrupted (Ctrl-C).
package main
