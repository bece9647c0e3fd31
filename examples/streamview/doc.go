// Command streamview keeps a materialized view exactly in step with a
// table through its DynamoDB stream: per customer, the total of its order
// lines. Two worker processes run a stream.Processor; each batch's view
// updates are written in one transaction with the batch's checkpoint,
// under the lease of the worker holding the shard. One worker is killed
// (SIGKILL) while orders are written; the other takes its shard over and
// the view ends equal to the source, every change counted once.
//
//	go run ./examples/streamview
//
// It starts DynamoDB Local (or uses DYNAMODB_ENDPOINT), and runs its
// workers as child processes of itself.
package main
