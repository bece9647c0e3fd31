package dynamotest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"

	"github.com/ddbkit/dynamo/internal/ddblocal"
)

const (
	// envSkip, set to a true value (1, true), makes tests skip rather than
	// fail when no server can be had, unless CI is set.
	envSkip = ddblocal.EnvSkip
	// envCI is set (to true) by CI services.
	envCI = "CI"

	// checkTimeout bounds the one request that checks DYNAMODB_ENDPOINT.
	checkTimeout = 3 * time.Second
)

// errBadEndpoint marks a DYNAMODB_ENDPOINT value that is not a URL a client
// can use: a mistake to fix, never a reason to skip.
var errBadEndpoint = errors.New("dynamotest: bad " + envEndpoint)

// parseEndpoint checks that v, the value of DYNAMODB_ENDPOINT, is an http or
// https URL with a host, and says what is wrong otherwise. It sends nothing.
// suggestEndpoint turns a scheme-less value into an endpoint that parses:
// "localhost:8000" → "http://localhost:8000", ":8000" and "//localhost:8000"
// alike. What cannot be made one is replaced by the usual local endpoint.
func suggestEndpoint(v string) string {
	host := strings.TrimLeft(v, "/")
	if strings.HasPrefix(host, ":") {
		host = "localhost" + host
	}
	if s := "http://" + host; host != "" && parseEndpoint(s) == nil { // s has a scheme: no recursion
		return s
	}
	return "http://localhost:8000"
}

func parseEndpoint(v string) error {
	bad := func(what string) error {
		return fmt.Errorf("%w: %q %s", errBadEndpoint, v, what)
	}
	if strings.TrimSpace(v) != v {
		return bad("has spaces around it; remove them")
	}
	u, err := url.Parse(v)
	if err != nil {
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err // without the value, which the message names already
		}
		if !strings.Contains(v, "://") {
			return bad(fmt.Sprintf("is not a URL (%v); it needs a scheme and a host, e.g. %s", err, suggestEndpoint(v)))
		}
		return bad(fmt.Sprintf("is not a URL (%v); write it as http://host:port, e.g. http://localhost:8000", err))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		if !strings.Contains(v, "://") {
			return bad("has no scheme: write it as " + suggestEndpoint(v) + " (or https://)")
		}
		return bad(fmt.Sprintf("has scheme %q: use http or https, e.g. http://localhost:8000", u.Scheme))
	case u.Host == "" || u.Hostname() == "":
		return bad("has no host: write it as " + u.Scheme + "://host:port, e.g. http://localhost:8000")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return bad(fmt.Sprintf("has port %q: use a port from 1 to 65535", p))
		}
	}
	return nil
}

// checkEndpoint parses ep (the value of DYNAMODB_ENDPOINT) and sends it one
// ListTables, without retries, to see that something answers there. An error
// answer (bad credentials, say) counts as an answer: the tests will report it.
func checkEndpoint(ctx context.Context, ep string) error {
	if err := parseEndpoint(ep); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	c := NewClient(ep, func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} })
	_, err := c.ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
	if err == nil || answered(err) {
		return nil
	}
	return fmt.Errorf("dynamotest: %s=%q: no DynamoDB answers there: start one (go doc dynamotest says how) or unset it to have dynamotest start one: %v",
		envEndpoint, ep, err)
}

// answered reports whether err carries an answer from a server, rather than
// a failure to reach one.
func answered(err error) bool {
	var api smithy.APIError
	if errors.As(err, &api) {
		return true
	}
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() != 0
}

// endpointChecks remembers the outcome of checkEndpoint per value, so that
// a bad DYNAMODB_ENDPOINT is checked once per process and every later test
// fails at once with the same message.
var endpointChecks struct {
	mu   sync.Mutex
	done map[string]error
}

func checkEndpointOnce(ctx context.Context, ep string) error {
	endpointChecks.mu.Lock()
	defer endpointChecks.mu.Unlock()
	if err, ok := endpointChecks.done[ep]; ok {
		return err
	}
	err := checkEndpoint(ctx, ep)
	if endpointChecks.done == nil {
		endpointChecks.done = map[string]error{}
	}
	endpointChecks.done[ep] = err
	return err
}

// unavailable ends the test when no server can be had: it fails it, or skips
// it when DYNAMOTEST_SKIP_UNAVAILABLE asks for that outside CI. A bad
// DYNAMODB_ENDPOINT always fails.
func unavailable(tb testing.TB, err error) {
	tb.Helper()
	skip := isTrue(os.Getenv(envSkip))
	switch {
	case skip && !errors.Is(err, errBadEndpoint) && !inCI():
		tb.Skipf("%v\n(skipped, not failed, because %s is set)", err, envSkip)
	case skip && inCI():
		tb.Fatalf("%v\n(%s is ignored because %s is set: under CI a test without a server fails)", err, envSkip, envCI)
	default:
		tb.Fatalf("%v", err)
	}
}

// isTrue reports whether an environment value means yes.
func isTrue(v string) bool {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	return err == nil && b
}

// inCI reports whether the process runs under CI: CI is set to anything but
// a false value.
func inCI() bool {
	v := strings.TrimSpace(os.Getenv(envCI))
	if v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	return err != nil || b
}
