package dynamotest

import (
	"context"
	"errors"
	"flag"
	"os"
	"testing"
)

// skipShort is the reason a test that needs a server gives under -short.
const skipShort = "dynamotest: needs DynamoDB, skipped under -short (set " + envEndpoint + " to a running server to include it)"

// ShortWithoutServer reports whether the test binary runs under go test
// -short with no server to reach: DYNAMODB_ENDPOINT unset, or set to a
// well-formed URL where nothing answers (checked once per process, one
// ListTables). Then [Endpoint] and [Client] skip the tests that ask for a
// server instead of starting DynamoDB Local, so the edit loop needs neither
// Java nor a server; without -short a missing server still fails under CI.
// A TestMain that starts a server itself should call [Main] instead when it
// reports true. It parses the command line's flags if nothing has yet.
func ShortWithoutServer() bool {
	if flag.Lookup("test.short") == nil {
		return false // not a test binary
	}
	if !flag.Parsed() {
		flag.Parse()
	}
	if !testing.Short() {
		return false
	}
	ep := os.Getenv(envEndpoint)
	if ep == "" {
		return true
	}
	err := checkEndpointOnce(context.Background(), ep)
	return err != nil && !errors.Is(err, errBadEndpoint) // a malformed value still fails
}

// skipExamples adds ^Example to -test.skip.
func skipExamples() {
	f := flag.Lookup("test.skip")
	if f == nil {
		return
	}
	v := "^Example"
	if old := f.Value.String(); old != "" {
		v = old + "|" + v
	}
	_ = f.Value.Set(v)
}
