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
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/lease"
)

const (
	leaseDuration = 2 * time.Second
	heartbeat     = 500 * time.Millisecond
	pollInterval  = 200 * time.Millisecond
	skewRate      = 1.25
)

func main() {
	workers := flag.Int("workers", 4, "number of worker processes")
	partitions := flag.Int("partitions", 16, "number of partitions of the job")
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
	if err := run(ctx, os.Stdout, endpoint, *workers, *partitions); err != nil {
		stop()
		log.Fatal(err)
	}
}

// fleet is what the parent knows of who holds what, from its workers' lines
// ("hold <partition> <token>", "drop <partition>").
type fleet struct {
	mu      sync.Mutex
	holder  map[string]string // partition → worker
	tokens  map[string]int64  // partition → its holder's token
	changed chan struct{}     // closed and replaced on every change
}

func (f *fleet) apply(worker, line string) {
	fs := strings.Fields(line)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case len(fs) == 3 && fs[0] == "hold":
		tok, _ := strconv.ParseInt(fs[2], 10, 64)
		f.holder[fs[1]], f.tokens[fs[1]] = worker, tok
	case len(fs) == 2 && fs[0] == "drop" && f.holder[fs[1]] == worker:
		delete(f.holder, fs[1])
	default:
		return
	}
	close(f.changed)
	f.changed = make(chan struct{})
}

// forget drops what a killed worker held: it will print nothing more.
func (f *fleet) forget(worker string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for p, w := range f.holder {
		if w == worker {
			delete(f.holder, p)
		}
	}
}

// balanced reports whether every partition is held and each of the live
// workers holds ⌊M/N⌋ or ⌈M/N⌉ of them.
func (f *fleet) balanced(live []string, m int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.holder) != m {
		return false
	}
	n := len(live)
	count := map[string]int{}
	for _, w := range f.holder {
		count[w]++
	}
	for _, w := range live {
		if count[w] < m/n || count[w] > (m+n-1)/n {
			return false
		}
	}
	return true
}

// await waits until the fleet is balanced and has not changed for a poll
// interval × 5.
func (f *fleet) await(ctx context.Context, live []string, m int) error {
	for {
		f.mu.Lock()
		ch := f.changed
		f.mu.Unlock()
		if f.balanced(live, m) {
			select {
			case <-ch:
				continue
			case <-time.After(5 * pollInterval):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return errors.New("the partitions did not settle in time")
		}
	}
}

func (f *fleet) print(w io.Writer, live []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, name := range live {
		var ps []string
		for p, h := range f.holder {
			if h == name {
				ps = append(ps, fmt.Sprintf("%s(%d)", strings.TrimPrefix(p, "partition-"), f.tokens[p]%1000))
			}
		}
		slices.Sort(ps)
		fmt.Fprintf(w, "  %s holds %2d: %s\n", name, len(ps), strings.Join(ps, " "))
	}
}

func run(ctx context.Context, w io.Writer, endpoint string, n, m int) error {
	client := dynamotest.NewClient(endpoint)
	table := fmt.Sprintf("workers-demo-%d", time.Now().UnixNano())
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
	f := &fleet{holder: map[string]string{}, tokens: map[string]int64{}, changed: make(chan struct{})}
	procs := map[string]*exec.Cmd{}
	var live []string
	defer func() {
		for _, p := range procs {
			_ = p.Process.Signal(os.Interrupt) // leave: hand the partitions back
			_ = p.Wait()
		}
	}()
	for i := range n {
		name := "worker-" + strconv.Itoa(i+1)
		cmd := exec.CommandContext(ctx, self)
		cmd.Env = append(os.Environ(), "DYNAMODB_ENDPOINT="+endpoint, envWorker+"="+name, envTable+"="+table, envPartitions+"="+strconv.Itoa(m))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		procs[name] = cmd
		live = append(live, name)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				f.apply(name, sc.Text())
			}
		}()
	}
	fmt.Fprintf(w, "%d workers share %d partitions (lease %v, heartbeat %v, poll %v, skew rate %v); partition(token mod 1000):\n",
		n, m, leaseDuration, heartbeat, pollInterval, skewRate)
	if err := f.await(ctx, live, m); err != nil {
		return err
	}
	f.print(w, live)

	victim := live[0]
	f.mu.Lock()
	before := map[string]int64{} // the victim's partitions and tokens
	for p, h := range f.holder {
		if h == victim {
			before[p] = f.tokens[p]
		}
	}
	f.mu.Unlock()
	killed := time.Now()
	if err := procs[victim].Process.Kill(); err != nil {
		return err
	}
	_ = procs[victim].Wait()
	delete(procs, victim)
	live = live[1:]
	f.forget(victim)
	fmt.Fprintf(w, "killed %s (SIGKILL: it cannot hand its partitions over)\n", victim)
	if err := f.await(ctx, live, m); err != nil {
		return err
	}
	f.mu.Lock()
	for p, tok := range before {
		if f.tokens[p] <= tok {
			f.mu.Unlock()
			return fmt.Errorf("%s was taken over with token %d, not above %d", p, f.tokens[p], tok)
		}
	}
	f.mu.Unlock()
	fmt.Fprintf(w, "its partitions were taken over within %v of the kill (bound: lease × skew rate + 2 polls = %v after its last heartbeat), with greater tokens:\n",
		time.Since(killed).Round(100*time.Millisecond)-5*pollInterval, time.Duration(float64(leaseDuration)*skewRate)+2*pollInterval)
	f.print(w, live)
	return nil
}

// The environment of a worker process names it, its table and the number of
// partitions.
const (
	envWorker     = "WORKERS_DEMO_WORKER"
	envTable      = "WORKERS_DEMO_TABLE"
	envPartitions = "WORKERS_DEMO_PARTITIONS"
)

// workerMain runs the worker when this process is one, and reports whether
// it was.
func workerMain() bool {
	name := os.Getenv(envWorker)
	if name == "" {
		return false
	}
	m, _ := strconv.Atoi(os.Getenv(envPartitions))
	if err := runWorker(name, os.Getenv(envTable), m); err != nil {
		log.Fatal(err)
	}
	return true
}

// runWorker joins the group and works on the partitions it is given, printing
// "hold <partition> <token>" and "drop <partition>" as they come and go,
// until it is interrupted (then it leaves, handing them over) or killed.
func runWorker(name, table string, m int) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	lc, err := lease.New(dynamo.NewMapper(dynamotest.NewClient(os.Getenv("DYNAMODB_ENDPOINT"))), table,
		lease.WithOwner(name), lease.WithLeaseDuration(leaseDuration), lease.WithHeartbeatInterval(heartbeat),
		lease.WithPollInterval(pollInterval), lease.WithClockSkewRate(skewRate))
	if err != nil {
		return err
	}
	var keys []string
	for i := range m {
		keys = append(keys, fmt.Sprintf("partition-%02d", i))
	}
	g, err := lc.Group("job", keys)
	if err != nil {
		return err
	}
	var out sync.Mutex
	say := func(format string, args ...any) {
		out.Lock()
		defer out.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	return g.Run(ctx, func(ctx context.Context, l *lease.Lease) error {
		say("hold %s %d", l.Key(), l.Token())
		<-ctx.Done() // ... work on the partition, writes guarded by l (lease.Save) ...
		say("drop %s", l.Key())
		return nil
	})
}
