package dynamotest_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/ddbkit/dynamo/commitlog/s3test"
	"github.com/ddbkit/dynamo/dynamotest"
)

// countingServer answers 200 "ok" and counts the requests it received.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// outcome sends one request through f and classifies what the client saw.
func outcome(t *testing.T, f *dynamotest.Faults, url string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("x"))
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.PutItem")
	resp, err := f.RoundTrip(req)
	if err != nil {
		return "error"
	}
	defer resp.Body.Close()
	return resp.Status
}

func TestFaultsSameSeedSameSequence(t *testing.T) {
	srv, _ := countingServer(t)
	cfg := dynamotest.FaultConfig{Seed: 7, Drop: 0.2, ServerError: 0.2, Throttle: 0.2, Reset: 0.2, Delay: 0.1, MaxDelay: time.Millisecond}
	run := func(seed uint64) (seq []string) {
		c := cfg
		c.Seed = seed
		f := dynamotest.NewFaults(c, nil)
		defer f.CloseIdleConnections()
		for range 60 {
			seq = append(seq, outcome(t, f, srv.URL))
		}
		return seq
	}
	a, b, other := run(7), run(7), run(8)
	if strings.Join(a, ",") != strings.Join(b, ",") {
		t.Fatalf("same seed, different sequences:\n%v\n%v", a, b)
	}
	if strings.Join(a, ",") == strings.Join(other, ",") {
		t.Fatalf("seeds 7 and 8 gave the same sequence %v", a)
	}
}

func TestFaultsKindsAndBounds(t *testing.T) {
	cases := []struct {
		name        string
		cfg         dynamotest.FaultConfig
		wantStatus  string // what the client sees
		wantApplied int64  // requests the server received
		check       func(dynamotest.FaultStats) int
	}{
		{"drop", dynamotest.FaultConfig{Drop: 1}, "error", 1, func(s dynamotest.FaultStats) int { return s.Dropped }},
		{"reset", dynamotest.FaultConfig{Reset: 1}, "error", 0, func(s dynamotest.FaultStats) int { return s.Reset }},
		{"throttle", dynamotest.FaultConfig{Throttle: 1}, "400 Bad Request", 0, func(s dynamotest.FaultStats) int { return s.Throttled }},
		{"replicated conflict", dynamotest.FaultConfig{ReplicatedConflict: 1}, "400 Bad Request", 0, func(s dynamotest.FaultStats) int { return s.Replicated }},
		{"delay", dynamotest.FaultConfig{Delay: 1, MaxDelay: time.Millisecond}, "200 OK", 1, func(s dynamotest.FaultStats) int { return s.Delayed }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, applied := countingServer(t)
			tc.cfg.MaxFaults = 3
			f := dynamotest.NewFaults(tc.cfg, nil)
			defer f.CloseIdleConnections()
			for range 3 {
				if got := outcome(t, f, srv.URL); got != tc.wantStatus {
					t.Fatalf("client saw %q, want %q", got, tc.wantStatus)
				}
			}
			if got := applied.Load(); got != 3*tc.wantApplied {
				t.Errorf("server received %d requests, want %d", got, 3*tc.wantApplied)
			}
			// MaxFaults reached: the rest pass untouched.
			for range 5 {
				if got := outcome(t, f, srv.URL); got != "200 OK" {
					t.Fatalf("after MaxFaults the client saw %q, want 200 OK", got)
				}
			}
			st := f.Stats()
			if tc.check(st) != 3 || st.Faults() != 3 || st.Requests != 8 {
				t.Errorf("stats %v, want 3 faults of the kind in 8 requests", st)
			}
		})
	}
}

func TestFaultsServerErrorsHalfApplied(t *testing.T) {
	srv, applied := countingServer(t)
	f := dynamotest.NewFaults(dynamotest.FaultConfig{Seed: 1, ServerError: 1}, nil)
	defer f.CloseIdleConnections()
	for range 200 {
		if got := outcome(t, f, srv.URL); got != "500 Internal Server Error" {
			t.Fatalf("client saw %q, want a 500", got)
		}
	}
	st := f.Stats()
	if int64(st.AppliedServerError) != applied.Load() {
		t.Errorf("stats say %d 500s were applied, the server received %d", st.AppliedServerError, applied.Load())
	}
	if st.AppliedServerError < 60 || st.AppliedServerError > 140 {
		t.Errorf("%d of 200 server errors applied, want about half", st.AppliedServerError)
	}
}

func TestFaultsStopAndDurationAndMatch(t *testing.T) {
	srv, _ := countingServer(t)
	f := dynamotest.NewFaults(dynamotest.FaultConfig{Reset: 1}, nil)
	if got := outcome(t, f, srv.URL); got != "error" {
		t.Fatalf("client saw %q, want a reset", got)
	}
	f.Stop()
	if got := outcome(t, f, srv.URL); got != "200 OK" {
		t.Fatalf("after Stop the client saw %q, want 200 OK", got)
	}

	g := dynamotest.NewFaults(dynamotest.FaultConfig{Reset: 1, Duration: time.Nanosecond}, nil)
	outcome(t, g, srv.URL) // starts the clock
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) && outcome(t, g, srv.URL) != "200 OK" {
	}
	if got := outcome(t, g, srv.URL); got != "200 OK" {
		t.Fatalf("after Duration the client saw %q, want 200 OK", got)
	}

	h := dynamotest.NewFaults(dynamotest.FaultConfig{Reset: 1, Match: func(r *http.Request) bool {
		return strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".GetItem")
	}}, nil)
	if got := outcome(t, h, srv.URL); got != "200 OK" {
		t.Fatalf("a PutItem not matched by Match saw %q, want 200 OK", got)
	}
}

func TestFaultsRatesValidated(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "at most 1") {
			t.Fatalf("rates adding up to 1.5: recovered %v, want a panic naming the limit", r)
		}
	}()
	dynamotest.NewFaults(dynamotest.FaultConfig{Drop: 0.5, Reset: 0.5, Throttle: 0.5}, nil)
}

// The SDKs must read the injected errors as the real ones: a DynamoDB
// client retries them and reports the code when it gives up.
func TestFaultsDynamoDBErrorsAreRetriedAndDecoded(t *testing.T) {
	ctx := t.Context()
	f := dynamotest.NewFaults(dynamotest.FaultConfig{Throttle: 1, MaxFaults: 2}, nil)
	c := f.Client(t)
	table := dynamotest.KeyTable(t, dynamotest.Client(t), "faults", "id", types.ScalarAttributeTypeS, "", "")
	put := &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "a"}}}
	if _, err := c.PutItem(ctx, put); err != nil {
		t.Fatalf("PutItem after two throttles: %v (the SDK should retry them)", err)
	}
	if st := f.Stats(); st.Throttled != 2 || st.Requests != 3 {
		t.Errorf("stats %v, want 2 throttled of 3 requests", st)
	}

	for _, tc := range []struct {
		cfg  dynamotest.FaultConfig
		code string
	}{
		{dynamotest.FaultConfig{Throttle: 1}, "ThrottlingException"},
		{dynamotest.FaultConfig{ServerError: 1}, "InternalFailure"},
	} {
		g := dynamotest.NewFaults(tc.cfg, nil)
		c := g.Client(t, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
		_, err := c.PutItem(ctx, put)
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != tc.code {
			t.Errorf("PutItem through %+v: err %v, want API error %s", tc.cfg, err, tc.code)
		}
	}
}

func TestFaultsS3ErrorsAreRetriedAndDecoded(t *testing.T) {
	ctx := t.Context()
	endpoint := s3test.Server(t)
	bucket := s3test.Bucket(t, s3test.Client(t, endpoint))
	for _, tc := range []struct {
		cfg  dynamotest.FaultConfig
		code string
	}{
		{dynamotest.FaultConfig{Throttle: 1}, "SlowDown"},
		{dynamotest.FaultConfig{ServerError: 1}, "InternalError"},
	} {
		f := dynamotest.NewFaults(tc.cfg, nil)
		c := s3test.Client(t, endpoint)
		opts := func(o *s3.Options) { o.HTTPClient = f.HTTPClient(); o.RetryMaxAttempts = 1 }
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: bytes.NewReader([]byte("v"))}, opts)
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != tc.code {
			t.Errorf("PutObject through %+v: err %v, want API error %s", tc.cfg, err, tc.code)
		}
		f2 := dynamotest.NewFaults(dynamotest.FaultConfig{Throttle: tc.cfg.Throttle, ServerError: tc.cfg.ServerError, MaxFaults: 2}, nil)
		_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: bytes.NewReader([]byte("v"))},
			func(o *s3.Options) {
				o.HTTPClient = f2.HTTPClient()
				o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) { so.MaxBackoff = 10 * time.Millisecond })
			})
		if err != nil {
			t.Errorf("PutObject after two %s: %v (the SDK should retry them)", tc.code, err)
		}
	}
}

// sdkClient returns a DynamoDB client whose requests go through f to url,
// with the SDK's standard retryer retrying at once.
func sdkClient(f *dynamotest.Faults, url string) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:                          "eu-west-1",
		BaseEndpoint:                    aws.String(url),
		Credentials:                     credentials.NewStaticCredentialsProvider("test", "test", ""),
		HTTPClient:                      f.HTTPClient(),
		DisableValidateResponseChecksum: true,
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		}),
	})
}

// An injected ReplicatedWriteConflictException decodes as the SDK's modeled
// type, which the SDK's standard retryer does not retry (one request); reads
// are never refused with it (MRSC refuses writes only).
func TestFaultsReplicatedConflictIsDecodedNotRetried(t *testing.T) {
	srv, applied := countingServer(t)
	f := dynamotest.NewFaults(dynamotest.FaultConfig{ReplicatedConflict: 1}, nil)
	defer f.CloseIdleConnections()
	c := sdkClient(f, srv.URL)
	key := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "a"}}
	_, err := c.UpdateItem(t.Context(), &dynamodb.UpdateItemInput{TableName: aws.String("T"), Key: key})
	var rwc *types.ReplicatedWriteConflictException
	if !errors.As(err, &rwc) {
		t.Fatalf("UpdateItem: %v; want a *types.ReplicatedWriteConflictException", err)
	}
	if st := f.Stats(); st.Requests != 1 || st.Replicated != 1 || applied.Load() != 0 {
		t.Errorf("stats %v, server saw %d; want 1 request refused, none sent (the SDK does not retry the code)", st, applied.Load())
	}
	c.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String("T"), Key: key}) // the server's "ok" does not decode: only its arrival counts
	if st := f.Stats(); st.Replicated != 1 || applied.Load() != 1 {
		t.Errorf("after a GetItem: stats %v, server saw %d; want the read passed untouched", st, applied.Load())
	}
	if s := f.Stats().String(); !strings.Contains(s, "1 replicated write conflicts") {
		t.Errorf("Stats().String() = %q; want it to count the replicated write conflicts", s)
	}
}

// An injected ThrottlingException carries ThrottlingReasons as DynamoDB
// sends them: the SDK decodes the reason and the ARN of the request's table.
func TestFaultsThrottleCarriesReasons(t *testing.T) {
	srv, _ := countingServer(t)
	f := dynamotest.NewFaults(dynamotest.FaultConfig{Throttle: 1}, nil)
	defer f.CloseIdleConnections()
	c := sdkClient(f, srv.URL)
	key := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "a"}}
	for _, tc := range []struct {
		call   func() error
		reason string
	}{
		{func() error {
			_, err := c.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String("Books"), Item: key})
			return err
		}, "TableWriteKeyRangeThroughputExceeded"},
		{func() error {
			_, err := c.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String("Books"), Key: key})
			return err
		}, "TableReadKeyRangeThroughputExceeded"},
	} {
		var te *types.ThrottlingException
		if err := tc.call(); !errors.As(err, &te) || len(te.ThrottlingReasons) != 1 {
			t.Fatalf("err %v; want a ThrottlingException with one reason", err)
		}
		r := te.ThrottlingReasons[0]
		if aws.ToString(r.Reason) != tc.reason || aws.ToString(r.Resource) != "arn:aws:dynamodb:eu-west-1:000000000000:table/Books" {
			t.Errorf("reason %q resource %q; want %s on table Books in eu-west-1", aws.ToString(r.Reason), aws.ToString(r.Resource), tc.reason)
		}
	}
}
