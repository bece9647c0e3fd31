package s3test_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/ddbkit/dynamo/commitlog/s3test"
)

func code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// TestConditionalPut checks what the commitlog S3 store relies on: the server honours
// If-None-Match: * and If-Match on PutObject and answers 412 PreconditionFailed.
func TestConditionalPut(t *testing.T) {
	c := s3test.Client(t, s3test.Server(t))
	b := s3test.Bucket(t, c)
	ctx := t.Context()
	put := func(body string, ifNoneMatch, ifMatch *string) (*s3.PutObjectOutput, error) {
		return c.PutObject(ctx, &s3.PutObjectInput{
			Bucket: &b, Key: aws.String("k"), Body: strings.NewReader(body),
			IfNoneMatch: ifNoneMatch, IfMatch: ifMatch,
		})
	}
	first, err := put("one", aws.String("*"), nil)
	if err != nil {
		t.Fatalf("If-None-Match on an absent key: %v", err)
	}
	if _, err := put("two", aws.String("*"), nil); code(err) != "PreconditionFailed" {
		t.Fatalf("If-None-Match on an existing key: %v, want PreconditionFailed", err)
	}
	if _, err := put("two", nil, aws.String(`"0123"`)); code(err) != "PreconditionFailed" {
		t.Fatalf("If-Match with a wrong ETag: %v, want PreconditionFailed", err)
	}
	second, err := put("two", nil, first.ETag)
	if err != nil {
		t.Fatalf("If-Match with the current ETag: %v", err)
	}
	if aws.ToString(second.ETag) == aws.ToString(first.ETag) {
		t.Errorf("ETag did not change with the content: %s", aws.ToString(second.ETag))
	}
	if _, err := put("three", nil, first.ETag); code(err) != "PreconditionFailed" {
		t.Fatalf("If-Match with a stale ETag: %v, want PreconditionFailed", err)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &b, Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	if data, _ := io.ReadAll(out.Body); string(data) != "two" {
		t.Errorf("content %q, want %q", data, "two")
	}
}

// TestDefaultChecksums checks that a client with the SDK's default checksum settings
// (CRC32 on every PutObject, validation of responses) also works with the server, so
// users' own clients need no special configuration.
func TestDefaultChecksums(t *testing.T) {
	endpoint := s3test.Server(t)
	c := s3.New(s3.Options{
		Region:       s3test.Region,
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  s3test.Client(t, endpoint).Options().Credentials,
	})
	b := s3test.Bucket(t, c)
	data := bytes.Repeat([]byte("x"), 1<<16)
	if _, err := c.PutObject(t.Context(), &s3.PutObjectInput{Bucket: &b, Key: aws.String("k"), Body: bytes.NewReader(data)}); err != nil {
		t.Fatal(err)
	}
	out, err := c.GetObject(t.Context(), &s3.GetObjectInput{Bucket: &b, Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	got, err := io.ReadAll(out.Body)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, %v; want %d bytes", len(got), err, len(data))
	}
}

func TestStart(t *testing.T) {
	endpoint, stop, err := s3test.Start()
	if err != nil {
		t.Fatal(err)
	}
	c, closeIdle := s3test.NewClient(endpoint)
	b := s3test.BucketName("start")
	if _, err := c.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: &b}); err != nil {
		t.Fatal(err)
	}
	closeIdle()
	stop()
	if _, err := c.HeadBucket(t.Context(), &s3.HeadBucketInput{Bucket: &b}, func(o *s3.Options) { o.RetryMaxAttempts = 1 }); err == nil {
		t.Fatal("server still answers after stop")
	}
}

func TestBucketName(t *testing.T) {
	for _, hint := range []string{"", "TestX/sub_test#01", strings.Repeat("Long", 40), "---"} {
		n := s3test.BucketName(hint)
		if len(n) < 3 || len(n) > 63 || strings.Trim(n, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" || n[0] == '-' || n[len(n)-1] == '-' {
			t.Errorf("BucketName(%q) = %q: not a valid bucket name", hint, n)
		}
	}
	if a, b := s3test.BucketName("a"), s3test.BucketName("a"); a == b {
		t.Error("BucketName is not unique")
	}
}

// TestCopyIgnoresConditions records a limit of the server: it ignores If-None-Match on
// CopyObject and overwrites the destination (Amazon S3's API models the header on
// CopyObject, but a store cannot rely on servers honouring it). This is why package
// commitlog offers no native conditional copy.
func TestCopyIgnoresConditions(t *testing.T) {
	c := s3test.Client(t, s3test.Server(t))
	b := s3test.Bucket(t, c)
	ctx := t.Context()
	for _, k := range []string{"src", "dst"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &b, Key: aws.String(k), Body: strings.NewReader(k)}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &b, Key: aws.String("dst"), CopySource: aws.String(b + "/src"), IfNoneMatch: aws.String("*")})
	if code(err) == "PreconditionFailed" {
		t.Fatal("the server now honours If-None-Match on CopyObject: update the docs of package s3test and commitlog.ConditionalStore")
	}
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &b, Key: aws.String("dst")})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	if data, _ := io.ReadAll(out.Body); string(data) != "src" {
		t.Errorf("dst = %q after an ignored conditional copy, want %q", data, "src")
	}
}
