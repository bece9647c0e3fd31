// Command backfill runs an online migration with package backfill: it
// fills a table, keeps a few writers updating random items (the live
// service), and adds a field to every item while they write, showing a
// progress bar with the estimate of the time left. At the end it checks
// every item: changed exactly once, every live write kept.
//
//	go run ./examples/backfill -items 5000
//
// It starts DynamoDB Local (or uses DYNAMODB_ENDPOINT).
package main
