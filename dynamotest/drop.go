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
// the requests it watches (one DynamoDB operation, or any requests a match
// function selects) and reports a connection reset instead. The server has
// applied the request; the client never hears of it, and the SDK's retryer
// sends it again.
type Dropper struct {
	next  *http.Transport
	match func(*http.Request) bool // the requests watched

	mu      sync.Mutex
	armed   int    // responses still to drop; guarded by mu
	hook    func() // run after the next drop; guarded by mu
	dropped int    // guarded by mu
	sent    int    // watched requests forwarded; guarded by mu
}

// NewDropper returns a Dropper for the DynamoDB operation op, e.g.
// "UpdateItem" or "TransactWriteItems". It drops nothing until Arm.
func NewDropper(op string) *Dropper {
	target := "DynamoDB_20120810." + op
	return NewRequestDropper(func(r *http.Request) bool { return r.Header.Get("X-Amz-Target") == target })
}

// NewRequestDropper returns a Dropper for the requests match selects, of
// any HTTP API (for example the S3 PutObject requests of one key). match is
// called before the request is sent. It drops nothing until Arm.
func NewRequestDropper(match func(*http.Request) bool) *Dropper {
	return &Dropper{next: http.DefaultTransport.(*http.Transport).Clone(), match: match}
}

// Client returns a client for the test server whose requests go through d.
// The transport's idle connections are closed when the test ends.
func (d *Dropper) Client(tb testing.TB, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	tb.Helper()
	tb.Cleanup(d.next.CloseIdleConnections)
	return ClientWith(tb, append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
		o.HTTPClient = d.HTTPClient()
	}}, optFns...)...)
}

// HTTPClient returns an *http.Client whose requests go through d, for any
// SDK client (for S3: s3.Options.HTTPClient).
func (d *Dropper) HTTPClient() *http.Client { return &http.Client{Transport: d} }

// CloseIdleConnections closes the idle connections of d's transport.
func (d *Dropper) CloseIdleConnections() { d.next.CloseIdleConnections() }

// Arm makes d drop the next n responses to the requests it watches.
func (d *Dropper) Arm(n int) {
	d.mu.Lock()
	d.armed, d.hook = n, nil
	d.mu.Unlock()
}

// ArmThen makes d drop the next response to the requests it watches and
// call hook after the server applied the request, before the client hears
// of the reset: the moment to act as another client does between a lost
// answer and the SDK's retry.
func (d *Dropper) ArmThen(hook func()) {
	d.mu.Lock()
	d.armed, d.hook = 1, hook
	d.mu.Unlock()
}

// Dropped returns how many responses d has dropped.
func (d *Dropper) Dropped() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dropped
}

// Sent returns how many of the requests d watches it has forwarded.
func (d *Dropper) Sent() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sent
}

// RoundTrip implements http.RoundTripper.
func (d *Dropper) RoundTrip(r *http.Request) (*http.Response, error) {
	if !d.match(r) {
		return d.next.RoundTrip(r)
	}
	resp, err := d.next.RoundTrip(r)
	d.mu.Lock()
	d.sent++
	drop := d.armed > 0 && err == nil
	var hook func()
	if drop {
		d.armed--
		d.dropped++
		hook, d.hook = d.hook, nil
	}
	d.mu.Unlock()
	if !drop {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if hook != nil {
		hook()
	}
	return nil, errors.New("read tcp 127.0.0.1: connection reset by peer (response dropped by dynamotest.Dropper)")
}
