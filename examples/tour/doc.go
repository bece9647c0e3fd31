// Command tour is the quick-start demo of ddbkit/dynamo, in four parts:
//
//  1. one versioned item: a save, two writers in conflict, Update;
//  2. shopping carts kept by two stateless HTTP servers (examples/sessions/cart)
//     that change the same cart at the same moment, and expiry;
//  3. a leader lease with failover: the leader freezes, another node takes
//     over with a greater fencing token, and the old leader's write is refused;
//  4. a commit log that four writers append to at once.
//
// It starts DynamoDB Local (or uses DYNAMODB_ENDPOINT) and an in-process S3
// server, and deletes the tables it creates.
//
//	go run ./examples/tour
package main
