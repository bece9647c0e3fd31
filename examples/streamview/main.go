package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/lease"
	"github.com/ddbkit/dynamo/stream"
)

// Line is an order line: the source table, with a stream.
type Line struct {
	Customer string `dynamo:"customer,hash"`
	ID       string `dynamo:"id,range"`
	Amount   int64  `dynamo:"amount"`
	Version  int64  `dynamo:"version,version"`
}

// Total is the view: a customer's sum of its lines' amounts.
type Total struct {
	Customer string `dynamo:"customer,hash"`
	Sum      int64  `dynamo:"sum"`
	Version  int64  `dynamo:"version,version"`
}

const (
	envWorker = "STREAMVIEW_WORKER"
	envSuffix = "STREAMVIEW_SUFFIX"
)

func main() {
	if workerMain() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	endpoint, stop, err := dynamotest.Start(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	if err := run(ctx, os.Stdout, endpoint); err != nil {
		stop()
		log.Fatal(err)
	}
}

type tables struct {
	lines  *dynamo.Table[Line]
	totals *dynamo.Table[Total]
	leases string
}

func open(endpoint, suffix string) (*dynamo.Mapper, tables, error) {
	m := dynamo.NewMapper(dynamotest.NewClient(endpoint))
	var t tables
	var err error
	if t.lines, err = dynamo.NewTable[Line](m, "Lines"+suffix); err != nil {
		return nil, t, err
	}
	if t.totals, err = dynamo.NewTable[Total](m, "Totals"+suffix); err != nil {
		return nil, t, err
	}
	t.leases = "Leases" + suffix
	return m, t, nil
}

func streamsClient(endpoint string) *dynamodbstreams.Client {
	return dynamodbstreams.New(dynamodbstreams.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("dummy", "dummy", "")})
}

// run creates the tables, starts two workers, writes order lines, kills
// the worker that holds the shard, writes more, and waits for the view to
// equal the source.
func run(ctx context.Context, out io.Writer, endpoint string) error {
	suffix := fmt.Sprint("-", time.Now().UnixNano())
	m, t, err := open(endpoint, suffix)
	if err != nil {
		return err
	}
	if err := t.lines.CreateTable(ctx, dynamo.WithStream(types.StreamViewTypeNewAndOldImages)); err != nil {
		return err
	}
	if err := t.totals.CreateTable(ctx); err != nil {
		return err
	}
	lc, err := lease.New(m, t.leases)
	if err != nil {
		return err
	}
	if err := lc.CreateTable(ctx); err != nil {
		return err
	}
	handled := make(chan string, 1) // the name of a worker that handled a batch
	var procs []*exec.Cmd
	for _, name := range []string{"worker-1", "worker-2"} {
		cmd, err := startWorker(endpoint, name, suffix, handled)
		if err != nil {
			return err
		}
		procs = append(procs, cmd)
	}
	defer func() {
		for _, p := range procs {
			p.Process.Signal(os.Interrupt)
			p.Wait()
		}
	}()
	write := func(n int) error {
		for range n {
			l := Line{Customer: fmt.Sprint("customer-", rand.IntN(3)), ID: fmt.Sprint(rand.IntN(5))}
			if _, err := t.lines.Update(ctx, l, func(cur Line) (Line, error) {
				cur.Customer, cur.ID, cur.Amount = l.Customer, l.ID, int64(rand.IntN(100))
				return cur, nil
			}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := write(40); err != nil {
		return err
	}
	// The worker that handled the last batch holds the shard (the slots
	// are balanced while the workers join: wait until batches settle).
	<-handled
	for quiet := time.After(500 * time.Millisecond); ; {
		select {
		case <-handled:
			continue
		case <-quiet:
		}
		break
	}
	if err := write(10); err != nil {
		return err
	}
	holder := <-handled
	start := time.Now()
	for i, p := range procs {
		if fmt.Sprint("worker-", i+1) == holder {
			p.Process.Signal(syscall.SIGKILL)
			p.Wait()
			procs = append(procs[:i], procs[i+1:]...)
			fmt.Fprintf(out, "killed %s, which held the shard\n", holder)
			break
		}
	}
	if err := write(40); err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		src, view, err := compare(ctx, t)
		if err != nil {
			return err
		}
		if src == view {
			fmt.Fprintf(out, "view in step with the source %.1f s after the kill: %s\n", time.Since(start).Seconds(), view)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("view %s, source %s after 60 s", view, src)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// compare returns the per-customer sums of the source and of the view.
func compare(ctx context.Context, t tables) (src, view string, err error) {
	s := map[string]int64{}
	for l, err := range t.lines.Scan(ctx, dynamo.ConsistentRead()) {
		if err != nil {
			return "", "", err
		}
		s[l.Customer] += l.Amount
	}
	v := map[string]int64{}
	for tt, err := range t.totals.Scan(ctx, dynamo.ConsistentRead()) {
		if err != nil {
			return "", "", err
		}
		v[tt.Customer] = tt.Sum
	}
	return fmt.Sprint(s), fmt.Sprint(v), nil
}

func startWorker(endpoint, name, suffix string, handled chan<- string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envWorker+"="+name, envSuffix+"="+suffix, "DYNAMODB_ENDPOINT="+endpoint)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "batch") {
				select {
				case handled <- name:
				default: // the parent is not listening
				}
			}
		}
	}()
	return cmd, nil
}

func workerMain() bool {
	name := os.Getenv(envWorker)
	if name == "" {
		return false
	}
	if err := runWorker(name, os.Getenv(envSuffix)); err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
	os.Exit(0)
	return true
}

// runWorker keeps the view: each batch's changes to the totals are written
// with Batch.Write, in the checkpoint's transaction.
func runWorker(name, suffix string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	endpoint := os.Getenv("DYNAMODB_ENDPOINT")
	m, t, err := open(endpoint, suffix)
	if err != nil {
		return err
	}
	lc, err := lease.New(m, t.leases, lease.WithOwner(name), lease.WithLeaseDuration(2*time.Second),
		lease.WithHeartbeatInterval(500*time.Millisecond), lease.WithPollInterval(200*time.Millisecond), lease.WithClockSkewRate(1.25))
	if err != nil {
		return err
	}
	defer lc.Close(context.Background())
	p, err := stream.New(t.lines, stream.Config{Streams: streamsClient(endpoint), Leases: lc, Checkpoints: t.leases, Name: "totals"},
		stream.WithSlots(2), stream.WithBatchSize(10), stream.WithIdleWait(20*time.Millisecond, 200*time.Millisecond))
	if err != nil {
		return err
	}
	return p.Run(ctx, func(ctx context.Context, b *stream.Batch[Line]) error {
		sums := map[string]*Total{}
		for _, r := range b.Records {
			var c string
			var d int64
			if r.Old != nil {
				c, d = r.Old.Customer, -r.Old.Amount
			}
			if r.New != nil {
				c, d = r.New.Customer, d+r.New.Amount
			}
			tot := sums[c]
			if tot == nil {
				cur, err := t.totals.Load(ctx, Total{Customer: c}, dynamo.ConsistentRead())
				if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
					return err
				}
				cur.Customer = c
				tot = &cur
				sums[c] = tot
			}
			tot.Sum += d
		}
		for _, tot := range sums {
			b.Write(t.totals.TxSave(*tot))
		}
		fmt.Printf("batch %d records\n", len(b.Records))
		return nil
	})
}
