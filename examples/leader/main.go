package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/lease"
)

const (
	leaseDuration = 2 * time.Second
	skewRate      = 1.25
	pollInterval  = 100 * time.Millisecond
)

func main() {
	workers := flag.Int("workers", 3, "number of worker processes")
	flag.Parse()
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
	if err := run(ctx, os.Stdout, endpoint, *workers); err != nil {
		stop()
		log.Fatal(err)
	}
}

// event is a line a worker prints: "leader <token>" when it becomes leader.
type event struct {
	worker string
	token  int64
	at     time.Time
}

func run(ctx context.Context, w io.Writer, endpoint string, n int) error {
	client := dynamotest.NewClient(endpoint)
	table := fmt.Sprintf("leader-demo-%d", time.Now().UnixNano())
	lc, err := lease.New(dynamo.NewMapper(client), table)
	if err != nil {
		return err
	}
	if err := lc.CreateTable(ctx); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	events := make(chan event)
	procs := map[string]*exec.Cmd{}
	defer func() {
		for _, p := range procs {
			_ = p.Process.Kill()
			_ = p.Wait()
		}
	}()
	for i := range n {
		name := "worker-" + strconv.Itoa(i+1)
		cmd := exec.CommandContext(ctx, self)
		cmd.Env = append(os.Environ(), "DYNAMODB_ENDPOINT="+endpoint, envWorker+"="+name, envTable+"="+table)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		procs[name] = cmd
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				if len(f) == 2 && f[0] == "leader" {
					tok, _ := strconv.ParseInt(f[1], 10, 64)
					select {
					case events <- event{worker: name, token: tok, at: time.Now()}:
					case <-ctx.Done():
						return
					}
				}
			}
		}()
	}
	fmt.Fprintf(w, "%d workers compete for the lease %q (duration %v, skew rate %v, poll %v)\n", n, "leader", leaseDuration, skewRate, pollInterval)
	first, err := next(ctx, events)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s is leader with fencing token %d\n", first.worker, first.token)
	killed := time.Now()
	if err := procs[first.worker].Process.Kill(); err != nil {
		return err
	}
	_ = procs[first.worker].Wait()
	delete(procs, first.worker)
	fmt.Fprintf(w, "killed %s (SIGKILL: it cannot release)\n", first.worker)
	second, err := next(ctx, events)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s took over with fencing token %d, %v after the kill\n", second.worker, second.token, second.at.Sub(killed).Round(10*time.Millisecond))
	if second.token <= first.token {
		return fmt.Errorf("token %d is not above %d", second.token, first.token)
	}
	fmt.Fprintf(w, "the new token is greater: writes fenced with token %d are refused from now on\n", first.token)
	return nil
}

func next(ctx context.Context, events <-chan event) (event, error) {
	select {
	case e := <-events:
		return e, nil
	case <-ctx.Done():
		return event{}, errors.New("no leader elected in time")
	}
}

// The environment of a worker process names it and its table.
const (
	envWorker = "LEADER_DEMO_WORKER"
	envTable  = "LEADER_DEMO_TABLE"
)

// workerMain runs the worker when this process is one, and reports whether
// it was.
func workerMain() bool {
	name := os.Getenv(envWorker)
	if name == "" {
		return false
	}
	log.Fatal(runWorker(name, os.Getenv(envTable))) // runWorker returns only on failure
	return true
}

// runWorker acquires the lease and announces it; then it keeps leading (the
// lease heartbeats in the background) until it loses the lease, and competes
// again. It returns only on failure; the process ends by being killed.
func runWorker(name, table string) error {
	ctx := context.Background()
	lc, err := lease.New(dynamo.NewMapper(dynamotest.NewClient(os.Getenv("DYNAMODB_ENDPOINT"))), table,
		lease.WithOwner(name), lease.WithLeaseDuration(leaseDuration),
		lease.WithClockSkewRate(skewRate), lease.WithPollInterval(pollInterval))
	if err != nil {
		return err
	}
	for {
		l, err := lc.Acquire(ctx, "leader")
		if err != nil {
			return err
		}
		fmt.Printf("leader %d\n", l.Token())
		<-l.Done() // lead until the lease is lost
		fmt.Fprintf(os.Stderr, "%s: no longer leader: %v\n", name, l.Err())
	}
}
