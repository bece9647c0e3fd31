package dynamotest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// FaultConfig says which faults a Faults transport injects, how often, and
// for how long. The rates are probabilities per request; a request gets at
// most one fault, so they must add up to at most 1. The zero FaultConfig
// injects nothing.
type FaultConfig struct {
	// Seed fixes the sequence of decisions: the n-th request to reach the
	// transport gets the same fault in every run with the same seed. (Which
	// request is the n-th depends on goroutine scheduling when requests run
	// concurrently.)
	Seed uint64

	// Delay is the rate of requests held back for up to MaxDelay, half of
	// them before they are sent and half after the server answered (a slow
	// network either way). The request itself succeeds.
	Delay float64
	// MaxDelay bounds each delay. Default 50ms.
	MaxDelay time.Duration
	// Drop is the rate of requests that are sent and applied by the server,
	// whose response is then thrown away and replaced by a connection reset:
	// the client cannot tell whether its write happened.
	Drop float64
	// ServerError is the rate of requests answered with HTTP 500
	// (InternalFailure for DynamoDB, InternalError for S3); half of them are
	// sent and applied by the server first, as a real 500 may have been.
	ServerError float64
	// Throttle is the rate of requests refused without being sent:
	// HTTP 400 ThrottlingException for DynamoDB, carrying one
	// ThrottlingReasons entry (Table{Read,Write}KeyRangeThroughputExceeded
	// on the request's table), HTTP 503 SlowDown for S3.
	Throttle float64
	// Reset is the rate of requests that fail with a connection reset before
	// they are sent.
	Reset float64
	// ReplicatedConflict is the rate of DynamoDB item writes (PutItem,
	// UpdateItem, DeleteItem, BatchWriteItem) refused without being sent
	// with HTTP 400 ReplicatedWriteConflictException, as a strongly
	// consistent global table (MRSC) refuses a write while another Region
	// writes the item; other requests drawn for it pass untouched (S3
	// requests: 503 SlowDown). DynamoDB Local does not emulate MRSC.
	ReplicatedConflict float64

	// MaxFaults bounds the number of faults injected; later requests pass
	// untouched. 0 means no bound.
	MaxFaults int
	// Duration bounds the time, from the first request, during which faults
	// are injected; later requests pass untouched. 0 means no bound.
	Duration time.Duration
	// Match selects the requests eligible for faults; nil means all.
	Match func(*http.Request) bool
}

// FaultStats counts what a Faults transport did.
type FaultStats struct {
	Requests    int // requests that reached the transport
	Delayed     int // held back before sending or after the answer
	Dropped     int // applied by the server, answer replaced by a reset
	ServerError int // answered 500, AppliedServerError of them after the server applied them
	Throttled   int // refused with a throttling error without being sent
	Reset       int // reset before being sent
	Replicated  int // refused with ReplicatedWriteConflictException without being sent

	AppliedServerError int // 500s given after the server applied the request
}

// Faults returns the number of faults injected.
func (s FaultStats) Faults() int {
	return s.Delayed + s.Dropped + s.ServerError + s.Throttled + s.Reset + s.Replicated
}

// String formats the counts for logs and reports.
func (s FaultStats) String() string {
	return fmt.Sprintf("%d requests, %d faults: %d delayed, %d responses dropped after the write applied, "+
		"%d server errors (%d after the write applied), %d throttled, %d connections reset before sending",
		s.Requests, s.Faults(), s.Delayed, s.Dropped, s.ServerError, s.AppliedServerError, s.Throttled, s.Reset) + s.replicated()
}

// replicated is String's part about replicated write conflicts: "" when
// none was injected, so that reports without them read as before.
func (s FaultStats) replicated() string {
	if s.Replicated == 0 {
		return ""
	}
	return fmt.Sprintf(", %d replicated write conflicts", s.Replicated)
}

// Add returns the sum of s and o.
func (s FaultStats) Add(o FaultStats) FaultStats {
	return FaultStats{
		Requests: s.Requests + o.Requests, Delayed: s.Delayed + o.Delayed, Dropped: s.Dropped + o.Dropped,
		ServerError: s.ServerError + o.ServerError, Throttled: s.Throttled + o.Throttled, Reset: s.Reset + o.Reset,
		Replicated:         s.Replicated + o.Replicated,
		AppliedServerError: s.AppliedServerError + o.AppliedServerError,
	}
}

// Faults is an http.RoundTripper that injects the network and server faults
// a client of DynamoDB or S3 meets in production — delays, responses lost
// after the server applied the request, 500s, throttling and connection
// resets — seeded and bounded in count and time, for tests that check
// nothing is lost or applied twice when they happen. It works for any
// AWS-style HTTP API: error bodies are DynamoDB JSON for requests with an
// X-Amz-Target header and S3 XML otherwise. It is safe for concurrent use.
type Faults struct {
	cfg  FaultConfig
	next http.RoundTripper

	mu    sync.Mutex
	rng   *rand.Rand // guarded by mu
	start time.Time  // first request; guarded by mu
	off   bool       // faults turned off by Stop; guarded by mu
	stats FaultStats // guarded by mu
}

type faultKind int

const (
	noFault faultKind = iota
	delayBefore
	delayAfter
	dropAfter
	errorBefore
	errorAfter
	throttle
	resetBefore
	replicated
)

// NewFaults returns a Faults transport forwarding to next (a clone of
// http.DefaultTransport when nil). It panics if a rate is negative or the
// rates add up to more than 1.
func NewFaults(cfg FaultConfig, next http.RoundTripper) *Faults {
	sum := 0.0
	for _, r := range []float64{cfg.Delay, cfg.Drop, cfg.ServerError, cfg.Throttle, cfg.Reset, cfg.ReplicatedConflict} {
		if r < 0 {
			panic("dynamotest: negative fault rate in FaultConfig")
		}
		sum += r
	}
	if sum > 1+1e-9 {
		panic(fmt.Sprintf("dynamotest: FaultConfig rates add up to %.3f; they must add up to at most 1", sum))
	}
	if cfg.MaxDelay <= 0 {
		cfg.MaxDelay = 50 * time.Millisecond
	}
	if next == nil {
		next = http.DefaultTransport.(*http.Transport).Clone()
	}
	return &Faults{cfg: cfg, next: next, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}
}

// Client returns a client for the test server whose requests go through f.
// Idle connections are closed when the test ends.
//
// The client retries as [FastRetries] says: after a few milliseconds rather
// than the SDK's default backoff (up to 20 s, typically a second or two per
// retry), so a workload under faults runs at the speed of the server; the
// SDK's attempt count and retry quota stay. optFns are applied after that, so
// a test that wants the SDK's own backoff passes, for example,
//
//	f.Client(t, func(o *dynamodb.Options) { o.Retryer = retry.NewStandard() })
func (f *Faults) Client(tb testing.TB, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	tb.Helper()
	tb.Cleanup(f.CloseIdleConnections)
	return ClientWith(tb, append([]func(*dynamodb.Options){FastRetries, func(o *dynamodb.Options) {
		o.HTTPClient = f.HTTPClient()
	}}, optFns...)...)
}

// FastRetries is an option for [NewClient], [ClientWith] and the Client
// methods of [Faults] and [Dropper]: it gives the client the SDK's standard
// retryer (same attempt count, same retry quota) with a backoff of a few
// milliseconds instead of the default one, which sleeps up to 20 s: before
// retry n it waits a random time below 4ms·2^min(n,4) (8 ms, 16 ms, ... at
// most 64 ms). [Faults.Client] applies it by default.
func FastRetries(o *dynamodb.Options) {
	o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
		so.Backoff = retry.BackoffDelayerFunc(fastBackoff)
	})
}

// RetryBudget is an option for [Faults.Client] (and [NewClient], [ClientWith],
// [Dropper.Client]): the client makes up to attempts attempts per call, all
// retrying after a few milliseconds as [FastRetries] does, without the SDK's
// retry quota (a token bucket that a burst of faults empties, after which
// calls fail at once with "retry quota exceeded").
//
// Your own calls through a Faults client need it: with the SDK's 3 attempts,
// at the examples' rates (5% drops, 5% throttling) about one call in a
// thousand meets a fault at all three and fails with "exceeded maximum number
// of attempts" although your code is right. Give the client a budget the
// fault rate cannot exhaust, or handle those errors as production code must:
//
//	c := f.Client(t, dynamotest.RetryBudget(10)) // 10% faults: one call in 10^10 fails
//
// It panics if attempts is below 1.
func RetryBudget(attempts int) func(*dynamodb.Options) {
	if attempts < 1 {
		panic(fmt.Sprintf("dynamotest: RetryBudget(%d): give at least 1 attempt (the SDK's default is 3)", attempts))
	}
	return func(o *dynamodb.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.Backoff = retry.BackoffDelayerFunc(fastBackoff)
			so.MaxAttempts = attempts
			so.RateLimiter = ratelimit.None
		})
		o.RetryMaxAttempts = 0 // the retryer's count holds
	}
}

// fastBackoff is the delay before retry attempt (1 for the first retry).
func fastBackoff(attempt int, _ error) (time.Duration, error) {
	return rand.N(fastBackoffBase << min(max(attempt, 1), 4)), nil
}

// fastBackoffBase is half the largest delay before the first retry of
// [FastRetries].
const fastBackoffBase = 4 * time.Millisecond

// HTTPClient returns an *http.Client whose requests go through f, for any
// SDK client (for S3: s3.Options.HTTPClient).
func (f *Faults) HTTPClient() *http.Client { return &http.Client{Transport: f} }

// CloseIdleConnections closes the idle connections of the transport f
// forwards to, when it has any.
func (f *Faults) CloseIdleConnections() {
	if c, ok := f.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Stop turns faults off: later requests pass untouched. Requests already
// delayed finish their delay.
func (f *Faults) Stop() {
	f.mu.Lock()
	f.off = true
	f.mu.Unlock()
}

// Stats returns what f has done so far.
func (f *Faults) Stats() FaultStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

// decide picks the fault for the next request and counts it.
func (f *Faults) decide(r *http.Request) (faultKind, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stats.Requests++
	now := time.Now()
	if f.start.IsZero() {
		f.start = now
	}
	c := &f.cfg
	if f.off || (c.Match != nil && !c.Match(r)) ||
		(c.MaxFaults > 0 && f.stats.Faults() >= c.MaxFaults) ||
		(c.Duration > 0 && now.Sub(f.start) >= c.Duration) {
		return noFault, 0
	}
	// Draw the same number of values for every eligible request, so that the
	// sequence of decisions depends on the seed alone.
	p, half, frac := f.rng.Float64(), f.rng.IntN(2) == 0, f.rng.Float64()
	delay := time.Duration(frac * float64(c.MaxDelay))
	switch {
	case p < c.Delay:
		f.stats.Delayed++
		if half {
			return delayBefore, delay
		}
		return delayAfter, delay
	case p < c.Delay+c.Drop:
		f.stats.Dropped++
		return dropAfter, 0
	case p < c.Delay+c.Drop+c.ServerError:
		f.stats.ServerError++
		if half {
			f.stats.AppliedServerError++
			return errorAfter, 0
		}
		return errorBefore, 0
	case p < c.Delay+c.Drop+c.ServerError+c.Throttle:
		f.stats.Throttled++
		return throttle, 0
	case p < c.Delay+c.Drop+c.ServerError+c.Throttle+c.Reset:
		f.stats.Reset++
		return resetBefore, 0
	case p < c.Delay+c.Drop+c.ServerError+c.Throttle+c.Reset+c.ReplicatedConflict:
		if !itemWrite(r) {
			return noFault, 0 // MRSC refuses writes only
		}
		f.stats.Replicated++
		return replicated, 0
	}
	return noFault, 0
}

// errFaultReset is what a reset or dropped request reports; the SDKs treat
// it as a failed send and retry it.
var errFaultReset = errors.New("read tcp 127.0.0.1: connection reset by peer (injected by dynamotest.Faults)")

// RoundTrip implements http.RoundTripper.
func (f *Faults) RoundTrip(r *http.Request) (*http.Response, error) {
	kind, delay := f.decide(r)
	switch kind {
	case noFault:
		return f.next.RoundTrip(r)
	case delayBefore:
		if err := sleepReq(r, delay); err != nil {
			closeBody(r)
			return nil, err
		}
		return f.next.RoundTrip(r)
	case throttle, errorBefore, resetBefore, replicated:
		table := requestTable(r, kind)
		closeBody(r)
		if kind == resetBefore {
			return nil, errFaultReset
		}
		return errorResponse(r, kind, table), nil
	}
	resp, err := f.next.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	switch kind {
	case delayAfter:
		if err := sleepReq(r, delay); err != nil {
			discard(resp)
			return nil, err
		}
		return resp, nil
	case dropAfter:
		discard(resp)
		return nil, errFaultReset
	default: // errorAfter
		discard(resp)
		return errorResponse(r, kind, ""), nil
	}
}

func sleepReq(r *http.Request, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-r.Context().Done():
		return r.Context().Err()
	}
}

func closeBody(r *http.Request) {
	if r.Body != nil {
		r.Body.Close()
	}
}

func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// itemWrite reports whether r is a DynamoDB write of items outside a
// transaction (PutItem, UpdateItem, DeleteItem, BatchWriteItem), or an S3
// request: what a replicated write conflict can refuse.
func itemWrite(r *http.Request) bool {
	target := r.Header.Get("X-Amz-Target")
	if target == "" {
		return true
	}
	for _, w := range []string{".PutItem", ".UpdateItem", ".DeleteItem", ".BatchWriteItem"} {
		if strings.HasSuffix(target, w) {
			return true
		}
	}
	return false
}

// requestTable returns the TableName of a DynamoDB request that a throttle
// answers, "" for other requests and faults (or none named: batches and
// transactions); it reads the body, which is not sent.
func requestTable(r *http.Request, kind faultKind) string {
	if kind != throttle || r.Header.Get("X-Amz-Target") == "" || r.Body == nil {
		return ""
	}
	var in struct{ TableName string }
	if b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20)); err == nil {
		_ = json.Unmarshal(b, &in)
	}
	return in.TableName
}

// throttlingReasons is the throttlingReasons member of an injected
// ThrottlingException: the request's table's key range over its throughput
// (the hot partition), read or write by the operation.
func throttlingReasons(r *http.Request, table string) string {
	op := "Write"
	target := r.Header.Get("X-Amz-Target")
	for _, read := range []string{".GetItem", ".BatchGetItem", ".Query", ".Scan", ".TransactGetItems"} {
		if strings.HasSuffix(target, read) {
			op = "Read"
		}
	}
	if table == "" {
		table = "*"
	}
	reason := map[string]string{
		"reason":   "Table" + op + "KeyRangeThroughputExceeded",
		"resource": "arn:aws:dynamodb:" + regionOf(r) + ":000000000000:table/" + table,
	}
	b, _ := json.Marshal([]map[string]string{reason})
	return string(b)
}

// regionOf returns the region a signed request names, "local" when none.
func regionOf(r *http.Request) string {
	// Authorization: AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, ...
	a := r.Header.Get("Authorization")
	if i := strings.Index(a, "Credential="); i >= 0 {
		if parts := strings.Split(a[i:], "/"); len(parts) > 2 {
			return parts[2]
		}
	}
	return "local"
}

// errorResponse builds the error answer a real service gives: DynamoDB's
// JSON for requests with an X-Amz-Target header, S3's XML otherwise. table
// is the table a throttled request named.
func errorResponse(r *http.Request, kind faultKind, table string) *http.Response {
	status, code, msg := http.StatusInternalServerError, "InternalFailure", "We encountered an internal error. Please try again. (injected by dynamotest.Faults)"
	dynamo := r.Header.Get("X-Amz-Target") != ""
	extra := ""
	switch {
	case kind == throttle && dynamo:
		status, code, msg = http.StatusBadRequest, "ThrottlingException", "Rate of requests exceeds the allowed throughput. (injected by dynamotest.Faults)"
		extra = `,"throttlingReasons":` + throttlingReasons(r, table)
	case kind == replicated && dynamo:
		status, code, msg = http.StatusBadRequest, "ReplicatedWriteConflictException",
			"One or more items in this request are being modified by a request in another Region. (injected by dynamotest.Faults)"
	case kind == throttle || kind == replicated:
		status, code, msg = http.StatusServiceUnavailable, "SlowDown", "Please reduce your request rate. (injected by dynamotest.Faults)"
	case !dynamo:
		code = "InternalError"
	}
	h := http.Header{}
	var body string
	if dynamo {
		h.Set("Content-Type", "application/x-amz-json-1.0")
		body = fmt.Sprintf(`{"__type":"com.amazonaws.dynamodb.v20120810#%s","message":%q%s}`, code, msg, extra)
	} else {
		h.Set("Content-Type", "application/xml")
		if r.Method != http.MethodHead {
			body = fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<Error><Code>%s</Code><Message>%s</Message><RequestId>dynamotest</RequestId></Error>`, code, msg)
		}
	}
	h.Set("X-Amzn-Requestid", "dynamotest-fault")
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       r,
	}
}
