// Package integration holds end-to-end tests against a real
// DynamoDB-compatible server: DynamoDB Local, started by dynamotest, or the
// endpoint DYNAMODB_ENDPOINT names.
package integration

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo/dynamotest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// dropTransport forwards every request to the server and, while armed,
// discards the response of requests for one operation and reports a
// connection reset instead — the server has applied the request, the client
// never hears of it, and the SDK retries.
type dropTransport struct {
	next   http.RoundTripper
	target string // X-Amz-Target, e.g. "DynamoDB_20120810.UpdateItem"

	mu      sync.Mutex
	armed   int // responses still to drop
	dropped atomic.Int32
	sent    atomic.Int32 // requests for target forwarded
}

func (d *dropTransport) arm(n int) {
	d.mu.Lock()
	d.armed = n
	d.mu.Unlock()
}

func (d *dropTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := d.next.RoundTrip(r)
	if r.Header.Get("X-Amz-Target") != d.target {
		return resp, err
	}
	d.sent.Add(1)
	d.mu.Lock()
	drop := d.armed > 0 && err == nil
	if drop {
		d.armed--
	}
	d.mu.Unlock()
	if !drop {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d.dropped.Add(1)
	return nil, errors.New("read tcp 127.0.0.1: connection reset by peer (dropped by test)")
}

// dropClient returns a client whose responses for the operation op (e.g.
// "UpdateItem") can be dropped with the returned transport's arm.
func dropClient(t *testing.T, op string) (*dynamodb.Client, *dropTransport) {
	d := &dropTransport{next: http.DefaultTransport.(*http.Transport).Clone(), target: "DynamoDB_20120810." + op}
	t.Cleanup(d.next.(*http.Transport).CloseIdleConnections)
	return dynamotest.ClientWith(t, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: d} }), d
}

func mustContain(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want one mentioning %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}

func ctx(t *testing.T) context.Context { return t.Context() }
