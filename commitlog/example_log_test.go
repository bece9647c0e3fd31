package commitlog_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/commitlog"
)

// Clients configured elsewhere (aws-sdk-go-v2's config.LoadDefaultConfig).
var (
	ddbClient *dynamodb.Client
	s3Client  *s3.Client
)

func ExampleNewCommitter() {
	ctx := context.Background()
	store := commitlog.NewS3Store(s3Client, "my-bucket")
	c, err := commitlog.NewCommitter(dynamo.NewMapper(ddbClient), "commits", store,
		commitlog.WithTimeout(10*time.Second)) // sends nothing
	if err != nil {
		log.Fatal(err)
	}
	if err := c.CreateTable(ctx); err != nil { // once, e.g. at deployment
		log.Fatal(err)
	}
	_, err = c.PutIfNotExists(ctx, "tables/orders/_manifest.json", []byte(`{"schema":1}`))
	if errors.Is(err, commitlog.ErrExists) {
		fmt.Println("someone else created it first")
	}
}

// A read-modify-write loop on one object: PutIfMatch fails with
// ErrPreconditionFailed when someone wrote since the read; read again.
func ExampleCommitter_PutIfMatch() {
	ctx := context.Background()
	store := commitlog.NewS3Store(s3Client, "my-bucket")
	c, _ := commitlog.NewCommitter(dynamo.NewMapper(ddbClient), "commits", store)
	for {
		data, info, err := store.Get(ctx, "counters/visits")
		if err != nil {
			log.Fatal(err)
		}
		n, _ := strconv.Atoi(string(data))
		_, err = c.PutIfMatch(ctx, "counters/visits", []byte(strconv.Itoa(n+1)), info.ETag)
		if errors.Is(err, commitlog.ErrPreconditionFailed) {
			continue // another writer was first: start from its value
		}
		if err != nil {
			log.Fatal(err)
		}
		break
	}
}

// S3 has no conditional CopyObject; the Committer adds one.
func ExampleCommitter_CopyIfNotExists() {
	ctx := context.Background()
	store := commitlog.NewS3Store(s3Client, "my-bucket")
	c, _ := commitlog.NewCommitter(dynamo.NewMapper(ddbClient), "commits", store)
	_, err := c.CopyIfNotExists(ctx, "staging/report.csv", "published/2024-06/report.csv")
	switch {
	case errors.Is(err, commitlog.ErrExists):
		fmt.Println("already published")
	case errors.Is(err, commitlog.ErrNotExist):
		fmt.Println("nothing staged")
	case err != nil:
		log.Fatal(err)
	}
}

func ExampleOpenLog() {
	ctx := context.Background()
	store := commitlog.NewS3Store(s3Client, "my-bucket")
	l, err := commitlog.OpenLog(dynamo.NewMapper(ddbClient), "logs", store, "tables/orders/_log")
	if err != nil {
		log.Fatal(err)
	}
	if err := l.CreateTable(ctx); err != nil { // once; one table holds many logs
		log.Fatal(err)
	}
	v, err := l.Append(ctx, []byte(`{"add":"part-00001.parquet"}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("appended as version", v, "at", l.Path(v))
}

// Read the whole log in order.
func ExampleLog_Entries() {
	ctx := context.Background()
	store := commitlog.NewS3Store(s3Client, "my-bucket")
	l, _ := commitlog.OpenLog(dynamo.NewMapper(ddbClient), "logs", store, "tables/orders/_log")
	for e, err := range l.Entries(ctx, 1) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%d: %s\n", e.Version, e.Data)
	}
}

// A writer that must build its entry on the state at a known version (as a
// table format's commit does) appends at exactly the next version, and on
// ErrExists reads what was appended, rebuilds and tries again.
func ExampleLog_AppendAt() {
	ctx := context.Background()
	store := commitlog.NewS3Store(s3Client, "my-bucket")
	l, _ := commitlog.OpenLog(dynamo.NewMapper(ddbClient), "logs", store, "tables/orders/_log")
	for {
		latest, err := l.Latest(ctx)
		if err != nil {
			log.Fatal(err)
		}
		entry := []byte(fmt.Sprintf(`{"after":%d}`, latest)) // built on the state at latest
		err = l.AppendAt(ctx, latest+1, entry)
		if errors.Is(err, commitlog.ErrExists) {
			continue // someone committed first: look at their entry and rebuild
		}
		if err != nil {
			log.Fatal(err)
		}
		break
	}
}

// Without DynamoDB: a store with native conditional writes (Amazon S3 since
// 2024, a local directory, memory).
func ExampleConditionalStore_log() {
	ctx := context.Background()
	store := commitlog.NewMemStore()
	cs := store.(commitlog.ConditionalStore)
	for v := 1; ; v++ {
		_, err := cs.PutIfNotExists(ctx, fmt.Sprintf("log/%020d.json", v), []byte(`{"op":1}`))
		if errors.Is(err, commitlog.ErrExists) {
			continue // taken: try the next version
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("appended as version", v)
		break
	}
	// Output: appended as version 1
}
