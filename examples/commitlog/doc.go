// Command commitlog shows package commitlog's Log: several writers append
// to one log at the same time, each entry gets its own version (none
// twice, none skipped), and the log is then read back in order.
//
//	go run ./examples/commitlog -writers 4 -appends 5
//
// It starts DynamoDB Local (or uses DYNAMODB_ENDPOINT) for the version
// claims and an in-process S3 server (gofakes3, package s3test) for the
// entries' objects.
package main
