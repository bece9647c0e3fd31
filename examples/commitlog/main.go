package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/commitlog"
	"github.com/ddbkit/dynamo/commitlog/s3test"
	"github.com/ddbkit/dynamo/dynamotest"
)

func main() {
	writers := flag.Int("writers", 4, "number of concurrent writers")
	appends := flag.Int("appends", 5, "appends per writer")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := start(ctx, os.Stdout, *writers, *appends); err != nil {
		log.Fatal(err)
	}
}

// start starts the servers, runs the demo and stops them.
func start(ctx context.Context, w io.Writer, writers, appends int) error {
	endpoint, stopDynamo, err := dynamotest.Start(ctx)
	if err != nil {
		return err
	}
	defer stopDynamo()
	s3Endpoint, stopS3, err := s3test.Start()
	if err != nil {
		return err
	}
	defer stopS3()
	s3Client, closeIdle := s3test.NewClient(s3Endpoint)
	defer closeIdle()
	return run(ctx, w, dynamotest.NewClient(endpoint), s3Client, writers, appends)
}

// run creates a bucket and a log table, lets writers append concurrently,
// then reads the log back in order and checks it.
func run(ctx context.Context, w io.Writer, ddb *dynamodb.Client, s3Client *s3.Client, writers, appends int) error {
	bucket := s3test.BucketName("commitlog-demo")
	if _, err := s3Client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return fmt.Errorf("creating bucket %s: %w", bucket, err)
	}
	store := commitlog.NewS3Store(s3Client, bucket)
	m := dynamo.NewMapper(ddb)
	table := fmt.Sprintf("commitlog-demo-%d", time.Now().UnixNano())
	setup, err := commitlog.OpenLog(m, table, store, "logs/orders")
	if err != nil {
		return err
	}
	if err := setup.CreateTable(ctx); err != nil {
		return err
	}
	defer func() {
		t, err := dynamo.NewTable[struct {
			Log string `dynamo:"log,hash"`
		}](m, table)
		if err == nil {
			_ = t.DeleteTable(context.WithoutCancel(ctx))
		}
	}()
	fmt.Fprintf(w, "%d writers append %d entries each to log %q (table %s, bucket %s)\n", writers, appends, "logs/orders", table, bucket)

	// Each writer opens the log itself, as separate processes would.
	type told struct {
		writer, i int
		version   int64
	}
	var mu sync.Mutex
	var results []told
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for wr := range writers {
		l, err := commitlog.OpenLog(m, table, store, "logs/orders", commitlog.WithOwner(fmt.Sprint("writer-", wr+1)))
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range appends {
				data := fmt.Sprintf(`{"writer":%d,"seq":%d}`, wr+1, i+1)
				v, err := l.Append(ctx, []byte(data))
				if err != nil {
					errs <- fmt.Errorf("writer-%d: %w", wr+1, err)
					return
				}
				mu.Lock()
				results = append(results, told{wr + 1, i + 1, v})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := errors.Join(drain(errs)...); err != nil {
		return err
	}

	reader, err := commitlog.OpenLog(m, table, store, "logs/orders")
	if err != nil {
		return err
	}
	latest, err := reader.Latest(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "latest version: %d\n", latest)
	want := map[int64]string{}
	for _, r := range results {
		want[r.version] = fmt.Sprintf(`{"writer":%d,"seq":%d}`, r.writer, r.i)
	}
	next := int64(1)
	for e, err := range reader.Entries(ctx, 1) {
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s  %s\n", reader.Path(e.Version), e.Data)
		if e.Version != next {
			return fmt.Errorf("read version %d, expected %d", e.Version, next)
		}
		if string(e.Data) != want[e.Version] {
			return fmt.Errorf("version %d holds %s, but its writer appended %s", e.Version, e.Data, want[e.Version])
		}
		next++
	}
	if got := int(next - 1); got != writers*appends || len(want) != got {
		return fmt.Errorf("read %d entries (%d distinct versions told), expected %d", got, len(want), writers*appends)
	}
	// Each writer's entries are in the order it appended them.
	sort.Slice(results, func(i, j int) bool { return results[i].version < results[j].version })
	last := map[int]int{}
	for _, r := range results {
		if r.i <= last[r.writer] {
			return fmt.Errorf("writer-%d's entry %d comes after its entry %d", r.writer, r.i, last[r.writer])
		}
		last[r.writer] = r.i
	}
	fmt.Fprintf(w, "%d entries, versions 1..%d each given out once, every entry reads back as its writer appended it, each writer's entries in its order\n",
		writers*appends, latest)
	return nil
}

func drain(errs <-chan error) []error {
	var out []error
	for err := range errs {
		out = append(out, err)
	}
	return out
}
