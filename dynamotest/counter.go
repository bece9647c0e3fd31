package dynamotest

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Counter is an http.RoundTripper that counts the requests it forwards —
// round trips to DynamoDB, or to any server — for tests and benchmarks that
// assert or report them. It is safe for concurrent use.
type Counter struct {
	next http.RoundTripper
	n    atomic.Int64
}

// NewCounter returns a Counter forwarding to next (http.DefaultTransport
// when nil).
func NewCounter(next http.RoundTripper) *Counter {
	if next == nil {
		next = http.DefaultTransport
	}
	return &Counter{next: next}
}

// Count returns the number of requests forwarded so far.
func (c *Counter) Count() int64 { return c.n.Load() }

// RoundTrip implements http.RoundTripper.
func (c *Counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// Client returns a client for the test server whose requests go through c.
func (c *Counter) Client(tb testing.TB, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	tb.Helper()
	return ClientWith(tb, append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: c}
	}}, optFns...)...)
}
