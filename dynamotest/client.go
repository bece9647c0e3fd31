package dynamotest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo/internal/ddblocal"
)

const (
	defaultRegion = "us-east-1"
	// dummyKey is both the access key and the secret of the dummy credentials.
	// DynamoDB Local accepts any key made of letters and digits.
	dummyKey = "dynamotest"
)

// NewClient returns a DynamoDB client for endpoint, configured for testing:
//
//   - Region from AWS_REGION, or us-east-1.
//   - The static dummy credentials dynamotest/dynamotest, unless endpoint is the
//     one DYNAMODB_ENDPOINT names and AWS_ACCESS_KEY_ID is set: then
//     AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN.
//   - No CRC32 check of responses (DisableValidateResponseChecksum): DynamoDB
//     Local's error responses carry none, and the SDK would log a warning for each.
//   - The SDK's default retryer and HTTP client.
//
// optFns are applied last, so they can replace any of this; for example
// o.HTTPClient to put a transport that drops responses under test.
// NewClient sends no request.
func NewClient(endpoint string, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = defaultRegion
	}
	var creds aws.CredentialsProvider = credentials.NewStaticCredentialsProvider(dummyKey, dummyKey, "")
	if key := os.Getenv("AWS_ACCESS_KEY_ID"); key != "" && endpoint == os.Getenv(envEndpoint) {
		creds = credentials.NewStaticCredentialsProvider(key,
			os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN"))
	}
	return dynamodb.New(dynamodb.Options{
		Region:                          region,
		BaseEndpoint:                    aws.String(endpoint),
		Credentials:                     creds,
		DisableValidateResponseChecksum: true,
	}, optFns...)
}

// Client returns a client for a DynamoDB-compatible endpoint: DYNAMODB_ENDPOINT when set,
// otherwise a DynamoDB Local started once per test binary and stopped at its end.
// When neither can be had it fails the test with a message that says how to install one
// (or skips it, outside CI, when DYNAMOTEST_SKIP_UNAVAILABLE=1: see [Endpoint]).
//
// The client is configured as [NewClient] describes. Clients from several calls
// share one server; use [CreateTable] to give each test its own table.
func Client(tb testing.TB) *dynamodb.Client {
	tb.Helper()
	return NewClient(Endpoint(tb))
}

// ClientWith is [Client] with optFns applied to the client's options, for a test
// that needs, say, its own HTTP client or retryer. It reaches the same server as
// [Client].
func ClientWith(tb testing.TB, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	tb.Helper()
	return NewClient(Endpoint(tb), optFns...)
}

// Endpoint returns the endpoint [Client] uses: DYNAMODB_ENDPOINT when set, otherwise
// that of the test binary's DynamoDB Local, which the first call starts (installing
// it first if needed). When no server can be had, Endpoint fails the test with a
// message that says how to fix it; later calls fail at once with the same message.
//
// A DYNAMODB_ENDPOINT is checked once per process: it must be an http or https URL
// with a host where something answers one ListTables within 3 s; otherwise every
// test that asks for it fails at once, naming the variable and what is wrong.
//
// With DYNAMOTEST_SKIP_UNAVAILABLE=1 (or true) a test that cannot have a server is
// skipped instead, unless CI is set (to anything but false); a malformed
// DYNAMODB_ENDPOINT always fails. Under go test -short a test that cannot have a
// server without starting DynamoDB Local, or whose DYNAMODB_ENDPOINT does not
// answer, is skipped, even under CI: see [ShortWithoutServer].
func Endpoint(tb testing.TB) string {
	tb.Helper()
	if ShortWithoutServer() {
		tb.Skip(skipShort)
	}
	if ep := os.Getenv(envEndpoint); ep != "" {
		if err := checkEndpointOnce(context.Background(), ep); err != nil {
			unavailable(tb, err)
		}
		return ep
	}
	ep, started, err := shared.endpoint()
	if err != nil {
		unavailable(tb, err)
	}
	if started != "" {
		tb.Logf("dynamotest: started %s for this test binary", started)
	}
	return ep
}

// Main runs the tests of m, stops the shared DynamoDB Local and exits with the
// tests' exit code. Call it from TestMain:
//
//	func TestMain(m *testing.M) { dynamotest.Main(m) }
//
// On Linux the server dies with the test binary anyway; Main stops it as soon as
// the tests are done, and makes that happen on other systems too.
//
// Under go test -short with no server to reach ([ShortWithoutServer]), Main
// skips the binary's examples, which cannot skip themselves: it adds ^Example
// to -test.skip.
func Main(m *testing.M) {
	if ShortWithoutServer() {
		skipExamples()
	}
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the test binary's shared DynamoDB Local, if one is running, and waits
// for it to exit. A later [Client] or [Endpoint] starts a new one. Stop does not
// touch a server named by DYNAMODB_ENDPOINT or one started by [Start].
func Stop() {
	shared.stop()
}

// shared is the test binary's DynamoDB Local: the package's only mutable state.
var shared sharedServer

// sharedServer starts DynamoDB Local on first use and remembers the outcome, so
// that a failure to start is reported at once to every later test.
type sharedServer struct {
	mu  sync.Mutex
	srv *ddblocal.Server // nil until started, and after stop
	err error            // why it could not be started
}

// endpoint returns the server's endpoint, starting it first if needed; started
// describes the server (version, folder, endpoint) when this call started it.
func (s *sharedServer) endpoint() (ep, started string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil && s.err == nil {
		s.srv, s.err = ddblocal.Start(context.Background(), 0)
		if s.err == nil {
			started = s.srv.String()
		}
	}
	if s.srv != nil && s.srv.Exited() {
		// Keep reporting the death: the tables of the tests are gone with it.
		s.err = fmt.Errorf("dynamotest: the shared %s exited (%v); its output:\n%s",
			s.srv, s.srv.ExitErr(), s.srv.Output())
		s.srv = nil
	}
	if s.err != nil {
		return "", "", s.err
	}
	return s.srv.Endpoint, started, nil
}

func (s *sharedServer) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		s.srv.Stop()
	}
	s.srv, s.err = nil, nil
}
