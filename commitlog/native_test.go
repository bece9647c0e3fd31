package commitlog_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ddbkit/dynamo/commitlog"
	"github.com/ddbkit/dynamo/commitlog/s3test"
)

// A compare-and-swap loop on one object with a store's native conditional writes: no
// DynamoDB table needed.
func ExampleConditionalStore() {
	ctx := context.Background()
	store := commitlog.NewMemStore().(commitlog.ConditionalStore)

	if _, err := store.PutIfNotExists(ctx, "config.json", []byte(`{"v":1}`)); err != nil {
		log.Fatal(err)
	}
	_, err := store.PutIfNotExists(ctx, "config.json", []byte(`{"v":1}`))
	fmt.Println("second create:", errors.Is(err, commitlog.ErrExists))

	// Read, change, write back only if nobody wrote in between; on
	// ErrPreconditionFailed, read again and retry.
	data, info, err := store.Get(ctx, "config.json")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("read %s\n", data)
	if _, err := store.PutIfMatch(ctx, "config.json", []byte(`{"v":2}`), info.ETag); err != nil {
		log.Fatal(err)
	}
	_, err = store.PutIfMatch(ctx, "config.json", []byte(`{"v":3}`), info.ETag)
	fmt.Println("write with a stale ETag:", errors.Is(err, commitlog.ErrPreconditionFailed))
	// Output:
	// second create: true
	// read {"v":1}
	// write with a stale ETag: true
}

func ExampleNewMemStore() {
	ctx := context.Background()
	store := commitlog.NewMemStore()
	info, err := store.Put(ctx, "greeting", []byte("hello"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Path, info.ETag, info.Size)
	_, err = store.Head(ctx, "missing")
	fmt.Println(errors.Is(err, commitlog.ErrNotExist))
	// Output:
	// greeting "5d41402abc4b2a76b9719d911017c592" 5
	// true
}

func ExampleNewDirStore() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "commitlog-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := commitlog.NewDirStore(dir)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range []string{"log/2.json", "log/1.json", "other"} {
		if _, err := store.Put(ctx, p, []byte(p)); err != nil {
			log.Fatal(err)
		}
	}
	for info, err := range store.List(ctx, "log/") {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(info.Path, info.ETag)
	}
	// Output:
	// log/1.json "e1c202c19d23d50c48868ecf152158c4"
	// log/2.json "4978781db6e106d30fb63e5bba958c1c"
}

// An S3 store on the in-process server of package s3test; with Amazon S3, pass a client
// made from your AWS configuration instead.
func ExampleNewS3Store() {
	ctx := context.Background()
	endpoint, stop, err := s3test.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	client, closeIdle := s3test.NewClient(endpoint)
	defer closeIdle()
	bucket := "example-bucket"
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		log.Fatal(err)
	}

	store := commitlog.NewS3Store(client, bucket)
	if _, err := store.Put(ctx, "greeting", []byte("hello")); err != nil {
		log.Fatal(err)
	}
	info, err := store.Head(ctx, "greeting")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Path, info.ETag, info.Size)

	// S3 (and this server) also honour native conditional writes.
	_, err = store.(commitlog.ConditionalStore).PutIfNotExists(ctx, "greeting", []byte("again"))
	fmt.Println(errors.Is(err, commitlog.ErrExists))
	// Output:
	// greeting "5d41402abc4b2a76b9719d911017c592" 5
	// true
}
