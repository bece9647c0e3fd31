package s3test_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/ddbkit/dynamo/commitlog"
	"github.com/ddbkit/dynamo/commitlog/s3test"
)

// Outside of a test — an example program, a TestMain, a local tool — Start
// serves an empty in-memory S3 on 127.0.0.1 until stop is called. Requests
// go through the SDK's whole stack, conditional writes included.
func ExampleStart() {
	ctx := context.Background()
	endpoint, stop, err := s3test.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	client, closeIdle := s3test.NewClient(endpoint)
	defer closeIdle()

	bucket := s3test.BucketName("example")
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		log.Fatal(err)
	}
	put := func(body string) error {
		_, err := client.PutObject(ctx, &s3.PutObjectInput{
			Bucket: &bucket, Key: aws.String("greeting"), Body: strings.NewReader(body),
			IfNoneMatch: aws.String("*"), // create only
		})
		return err
	}
	fmt.Println("first put:", put("hello"))
	var ae smithy.APIError
	if err := put("hello again"); errors.As(err, &ae) {
		fmt.Println("second put:", ae.ErrorCode())
	}

	out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("greeting")})
	if err != nil {
		log.Fatal(err)
	}
	defer out.Body.Close()
	body, _ := io.ReadAll(out.Body)
	fmt.Println("stored:", string(body))
	// Output:
	// first put: <nil>
	// second put: PreconditionFailed
	// stored: hello
}

// In a test, Server, Client and Bucket clean up after themselves when the
// test ends.
func ExampleServer() {
	testManifest := func(t *testing.T) {
		client := s3test.Client(t, s3test.Server(t))
		bucket := s3test.Bucket(t, client) // named after the test, deleted at its end
		store := commitlog.NewS3Store(client, bucket).(commitlog.ConditionalStore)

		if _, err := store.PutIfNotExists(t.Context(), "_manifest.json", []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		_, err := store.PutIfNotExists(t.Context(), "_manifest.json", []byte(`{}`))
		if !errors.Is(err, commitlog.ErrExists) {
			t.Fatalf("second create: %v, want ErrExists", err)
		}
	}
	_ = testManifest
}

// BucketName turns any hint, such as a test's name, into a valid bucket
// name with a random suffix.
func ExampleBucketName() {
	name := s3test.BucketName("TestUpload/Large_Files")
	fmt.Println(strings.HasPrefix(name, "testupload-large-files-"), len(name) <= 63)
	// Output: true true
}
