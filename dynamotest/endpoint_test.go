package dynamotest_test

import (
	"flag"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ddbkit/dynamo/dynamotest"
)

// deadEndpoint returns the URL of a loopback port where nothing listens.
func deadEndpoint(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ep := "http://" + l.Addr().String()
	l.Close()
	return ep
}

// garbageEndpoint returns the URL of a server that answers every connection
// with something that is not HTTP, and the number of connections it had.
func garbageEndpoint(t *testing.T) (string, *atomic.Int64) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Write([]byte("not http\r\n\r\n"))
			c.Close()
		}
	}()
	return "http://" + l.Addr().String(), &n
}

// notShort runs the rest of a (non-parallel) test as without -short, and
// setShort as with it: Endpoint's rules differ under -short.
func notShort(t *testing.T) { setShort(t, "false") }

func setShort(t *testing.T, v string) {
	t.Helper()
	f := flag.Lookup("test.short")
	old := f.Value.String()
	if err := f.Value.Set(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Value.Set(old) })
}

// TestEndpointSkipsUnderShort: under -short a test whose DYNAMODB_ENDPOINT
// does not answer is skipped, even under CI; a malformed one still fails.
func TestEndpointSkipsUnderShort(t *testing.T) {
	setShort(t, "true")
	t.Setenv("DYNAMODB_ENDPOINT", deadEndpoint(t))
	t.Setenv("DYNAMOTEST_SKIP_UNAVAILABLE", "")
	t.Setenv("CI", "true")
	if fake := endpointOutcome(t); fake.skipped == "" || fake.fatal != "" || !strings.Contains(fake.skipped, "-short") {
		t.Errorf("dead endpoint under -short: skipped %q, fatal %q; want a skip naming -short", fake.skipped, fake.fatal)
	}
	t.Setenv("DYNAMODB_ENDPOINT", "localhost:8000")
	if fake := endpointOutcome(t); fake.fatal == "" {
		t.Errorf("malformed endpoint under -short: skipped %q; want a failure", fake.skipped)
	}
}

// endpointOutcome calls Endpoint through a fakeTB and returns how it ended.
func endpointOutcome(t *testing.T) *fakeTB {
	fake := newFakeTB(t, t.Context())
	fake.run(func() { dynamotest.Endpoint(fake) })
	return fake
}

func TestEndpointSchemeless(t *testing.T) {
	t.Setenv("DYNAMODB_ENDPOINT", "localhost:8000")
	t.Setenv("DYNAMOTEST_SKIP_UNAVAILABLE", "1") // a mistake is never skipped
	t.Setenv("CI", "")
	fake := endpointOutcome(t)
	if !strings.Contains(fake.fatal, "DYNAMODB_ENDPOINT") || !strings.Contains(fake.fatal, "http://localhost:8000") {
		t.Errorf("fatal = %q; want it to name DYNAMODB_ENDPOINT and the fix http://localhost:8000 (skipped: %q)", fake.fatal, fake.skipped)
	}
}

// TestEndpointDeadCheckedOnce: a DYNAMODB_ENDPOINT where no DynamoDB answers
// fails every test with a message naming the variable, after one request.
func TestEndpointDeadCheckedOnce(t *testing.T) {
	notShort(t)
	ep, conns := garbageEndpoint(t)
	t.Setenv("DYNAMODB_ENDPOINT", ep)
	t.Setenv("DYNAMOTEST_SKIP_UNAVAILABLE", "")
	for i := range 3 {
		fake := endpointOutcome(t)
		if !strings.Contains(fake.fatal, "DYNAMODB_ENDPOINT") || !strings.Contains(fake.fatal, "no DynamoDB answers") {
			t.Fatalf("call %d: fatal = %q; want a message naming DYNAMODB_ENDPOINT", i, fake.fatal)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("the endpoint was contacted %d times, want once per process", n)
	}
}

// TestEndpointSkipUnavailable: with DYNAMOTEST_SKIP_UNAVAILABLE=1 a test
// without a server is skipped, unless CI is set: then it fails.
func TestEndpointSkipUnavailable(t *testing.T) {
	notShort(t)
	t.Setenv("DYNAMODB_ENDPOINT", deadEndpoint(t))
	t.Setenv("DYNAMOTEST_SKIP_UNAVAILABLE", "1")
	for _, tc := range []struct {
		ci   string
		skip bool
	}{{"", true}, {"false", true}, {"true", false}, {"1", false}} {
		t.Setenv("CI", tc.ci)
		fake := endpointOutcome(t)
		switch {
		case tc.skip && (fake.skipped == "" || fake.fatal != ""):
			t.Errorf("CI=%q: skipped %q, fatal %q; want a skip", tc.ci, fake.skipped, fake.fatal)
		case !tc.skip && (fake.fatal == "" || fake.skipped != ""):
			t.Errorf("CI=%q: skipped %q, fatal %q; want a failure", tc.ci, fake.skipped, fake.fatal)
		case !tc.skip && !strings.Contains(fake.fatal, "CI"):
			t.Errorf("CI=%q: fatal %q does not say why the skip was refused", tc.ci, fake.fatal)
		}
	}
	t.Setenv("DYNAMOTEST_SKIP_UNAVAILABLE", "")
	t.Setenv("CI", "")
	if fake := endpointOutcome(t); fake.fatal == "" {
		t.Errorf("without DYNAMOTEST_SKIP_UNAVAILABLE: skipped %q; want a failure", fake.skipped)
	}
}
