package dynamotest

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Dropper is an http.RoundTripper for tests of lost responses: it forwards
// every request to the server and, while armed, throws away the response to
// requests for one operation and reports a connection reset instead. The
// server has applied the request; the client never hears of it, and the
// SDK's retryer sends it again.
type Dropper struct {
	next   *http.Transport
	target string // X-Amz-Target of the operation

	mu      sync.Mutex
	armed   int // responses still to drop; guarded by mu
	dropped int // guarded by mu
	sent    int // requests for the operation forwarded; guarded by mu
}

// NewDropper returns a Dropper for the DynamoDB operation op, e.g.
// "UpdateItem" or "TransactWriteItems". It drops nothing until Arm.
func NewDropper(op string) *Dropper {
	return &Dropper{
		next:   http.DefaultTransport.(*http.Transport).Clone(),
		target: "DynamoDB_20120810." + op,
	}
}

// Client returns a client for the test server whose requests go through d.
// The transport's idle connections are closed when the test ends.
func (d *Dropper) Client(tb testing.TB, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	tb.Helper()
	tb.Cleanup(d.next.CloseIdleConnections)
	return ClientWith(tb, append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: d}
	}}, optFns...)...)
}

// Arm makes d drop the next n responses to the operation.
func (d *Dropper) Arm(n int) {
	d.mu.Lock()
	d.armed = n
	d.mu.Unlock()
}

// Dropped returns how many responses d has dropped.
func (d *Dropper) Dropped() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dropped
}

// Sent returns how many requests for the operation d has forwarded.
func (d *Dropper) Sent() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sent
}

// RoundTrip implements http.RoundTripper.
func (d *Dropper) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := d.next.RoundTrip(r)
	if r.Header.Get("X-Amz-Target") != d.target {
		return resp, err
	}
	d.mu.Lock()
	d.sent++
	drop := d.armed > 0 && err == nil
	if drop {
		d.armed--
		d.dropped++
	}
	d.mu.Unlock()
	if !drop {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil, errors.New("read tcp 127.0.0.1: connection reset by peer (response dropped by dynamotest.Dropper)")
}
