package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Region is the region Client configures; the server accepts any.
const Region = "us-east-1"

// Handler returns a new, empty in-memory S3 server as an http.Handler, for callers that
// serve it themselves (for instance behind a handler that injects faults).
func Handler() http.Handler {
	return gofakes3.New(s3mem.New()).Server()
}

// Server starts an empty in-memory S3 server on 127.0.0.1 for the duration of the test
// and returns its endpoint ("http://127.0.0.1:port"). The server is closed when the test
// and its subtests end. Each call starts a separate server with separate buckets.
func Server(tb testing.TB) (endpoint string) {
	tb.Helper()
	ts := httptest.NewServer(Handler())
	tb.Cleanup(ts.Close)
	return ts.URL
}

// Start starts an empty in-memory S3 server on 127.0.0.1 outside of a test (examples,
// TestMain, local tools) and returns its endpoint and a function that stops it. stop
// closes the listener and all connections, and returns once the server's goroutine has
// ended; call it exactly once.
func Start() (endpoint string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("s3test: listening on 127.0.0.1: %w", err)
	}
	srv := &http.Server{Handler: Handler(), ReadHeaderTimeout: time.Minute}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	stop = func() {
		_ = srv.Close()
		<-done
	}
	return "http://" + ln.Addr().String(), stop, nil
}

// Client returns an S3 client for endpoint, configured for a local server: path-style
// addressing, static dummy credentials, region us-east-1, and request checksums and
// response checksum validation only where an operation requires them. Its idle
// connections are closed when the test ends.
func Client(tb testing.TB, endpoint string) *s3.Client {
	tb.Helper()
	c, closeIdle := NewClient(endpoint)
	tb.Cleanup(closeIdle)
	return c
}

// NewClient is Client outside of a test: it returns the client and a function that closes
// its idle connections, to call when done with it.
func NewClient(endpoint string) (client *s3.Client, closeIdle func()) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	c := s3.New(s3.Options{
		Region:                     Region,
		BaseEndpoint:               aws.String(endpoint),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider("s3test", "s3test", ""),
		HTTPClient:                 &http.Client{Transport: tr},
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	return c, tr.CloseIdleConnections
}

// Bucket creates a bucket with a unique name derived from the test's name and returns
// the name. When the test ends, the bucket's objects and the bucket are deleted (errors
// are logged, not failed: the server may be gone already).
func Bucket(tb testing.TB, client *s3.Client) string {
	tb.Helper()
	name := BucketName(tb.Name())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &name}); err != nil {
		tb.Fatalf("s3test: creating bucket %q: %v", name, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := deleteBucket(ctx, client, name); err != nil {
			tb.Logf("s3test: deleting bucket %q: %v", name, err)
		}
	})
	return name
}

var notBucketChars = regexp.MustCompile(`[^a-z0-9]+`)

// BucketName returns a valid, unique bucket name that starts with a cleaned-up form of
// hint (lower-case letters, digits and hyphens, at most 63 characters in all).
func BucketName(hint string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	suffix := hex.EncodeToString(b[:])
	h := strings.Trim(notBucketChars.ReplaceAllString(strings.ToLower(hint), "-"), "-")
	if max := 63 - len(suffix) - 1; len(h) > max {
		h = strings.TrimRight(h[:max], "-")
	}
	if h == "" {
		h = "s3test"
	}
	return h + "-" + suffix
}

func deleteBucket(ctx context.Context, client *s3.Client, name string) error {
	pages := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: &name})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, o := range page.Contents {
			if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &name, Key: o.Key}); err != nil {
				return err
			}
		}
	}
	_, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &name})
	return err
}
