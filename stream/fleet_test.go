package stream_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/lease"
	"github.com/ddbkit/dynamo/stream"
)

const (
	envFleetWorker = "STREAM_FLEET_WORKER"
	envFleetTables = "STREAM_FLEET_TABLES" // items,totals,leases
)

// fleetWorkerMain runs a fleet worker when this process is one (started by
// TestFleetOfProcesses), and reports whether it was. It prints a line
// "rec <token> <seq> <customer> <id> <version>" per record handled and
// logs the processor's refusals to stderr, until SIGINT.
func fleetWorkerMain() bool {
	name := os.Getenv(envFleetWorker)
	if name == "" {
		return false
	}
	if err := runFleetWorker(name, strings.Split(os.Getenv(envFleetTables), ",")); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	os.Exit(0)
	return true
}

func runFleetWorker(name string, tables []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	ep := os.Getenv("DYNAMODB_ENDPOINT")
	m := dynamo.NewMapper(dynamotest.NewClient(ep))
	items, err := dynamo.NewTable[Item](m, tables[0])
	if err != nil {
		return err
	}
	totals, err := dynamo.NewTable[Total](m, tables[1])
	if err != nil {
		return err
	}
	lc, err := lease.New(m, tables[2], lease.WithOwner(name), lease.WithLeaseDuration(2*time.Second),
		lease.WithHeartbeatInterval(500*time.Millisecond), lease.WithPollInterval(200*time.Millisecond), lease.WithClockSkewRate(1.25))
	if err != nil {
		return err
	}
	defer lc.Close(context.Background())
	p, err := stream.New(items, stream.Config{Streams: streamsClient(nil, ep), Leases: lc, Checkpoints: tables[2], Name: "totals"},
		stream.WithSlots(4), stream.WithBatchSize(5), stream.WithIdleWait(10*time.Millisecond, 50*time.Millisecond))
	if err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	// SIGUSR1: hold the next batch, printing "paused", until SIGUSR2 — so
	// that a SIGSTOP lands while a batch is in hand.
	usr1, usr2 := make(chan os.Signal, 1), make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	signal.Notify(usr2, syscall.SIGUSR2)
	return p.Run(ctx, func(ctx context.Context, b *stream.Batch[Item]) error {
		if err := applyTotals(ctx, totals, b); err != nil {
			return err
		}
		select {
		case <-usr1:
			mu.Lock()
			fmt.Fprintf(out, "paused %d\n", b.Lease().Token())
			out.Flush()
			mu.Unlock()
			<-usr2 // ctx is not watched: the batch's commit comes after the resume
		default:
		}
		mu.Lock()
		for _, r := range b.Records {
			it := r.New
			if it == nil {
				it = r.Old
			}
			fmt.Fprintf(out, "rec %d %s %s %s %d\n", b.Lease().Token(), r.Seq, it.Customer, it.ID, r.NewVersion)
		}
		out.Flush()
		mu.Unlock()
		time.Sleep(20 * time.Millisecond) // work: a stop lands in a batch more often than not
		return nil
	})
}

// fleetProc is a worker process and what it printed.
type fleetProc struct {
	name   string
	cmd    *exec.Cmd
	mu     sync.Mutex
	recs   []string // "rec ..." lines
	last   time.Time
	paused bool
	errb   strings.Builder
	done   chan struct{}
}

func startWorker(t *testing.T, name string, tables []string) *fleetProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envFleetWorker+"="+name, envFleetTables+"="+strings.Join(tables, ","),
		"DYNAMODB_ENDPOINT="+dynamotest.Endpoint(t))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	w := &fleetProc{name: name, cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			w.mu.Lock()
			if strings.HasPrefix(sc.Text(), "paused") {
				w.paused = true
			} else {
				w.recs = append(w.recs, sc.Text())
				w.last = time.Now()
			}
			w.mu.Unlock()
		}
	}()
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			w.mu.Lock()
			w.errb.WriteString(sc.Text() + "\n")
			w.mu.Unlock()
		}
	}()
	go func() { wg.Wait(); cmd.Wait(); close(w.done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-w.done })
	return w
}

// holder returns the worker that handled a record last.
func holder(ws []*fleetProc) *fleetProc {
	var h *fleetProc
	var at time.Time
	for _, w := range ws {
		w.mu.Lock()
		if w.last.After(at) {
			h, at = w, w.last
		}
		w.mu.Unlock()
	}
	return h
}

// Four worker processes handle a live table's stream while writers change
// items: one is killed, one stopped past its lease and resumed, one
// leaves, one joins. From the data: every change handled, per item in
// order under each lease, the exactly-once totals equal the source,
// checkpoints never move back, and the resumed worker's writes refused.
func TestFleetOfProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	e := newEnv(t)
	tables := []string{e.items.Name(), e.totals.Name(), e.leases}
	ws := []*fleetProc{startWorker(t, "w1", tables), startWorker(t, "w2", tables), startWorker(t, "w3", tables)}

	// Writers: each item's changes, by version.
	ctx, stopWriters := context.WithCancel(context.Background())
	var wmu sync.Mutex
	written := map[string]int64{} // customer/id -> last version written
	var wwg sync.WaitGroup
	for wi := range 2 {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			r := rand.New(rand.NewPCG(uint64(wi), 1))
			for ctx.Err() == nil {
				key := Item{Customer: fmt.Sprint("c", r.IntN(3)), ID: fmt.Sprint(wi, "-", r.IntN(4))}
				saved, err := e.items.Update(ctx, key, func(cur Item) (Item, error) {
					cur.Customer, cur.ID = key.Customer, key.ID
					cur.Amount = int64(r.IntN(100))
					return cur, nil
				})
				if err == nil {
					wmu.Lock()
					written[key.Customer+"/"+key.ID] = saved.Version
					wmu.Unlock()
				}
				time.Sleep(15 * time.Millisecond) // pace the writers
			}
		}()
	}
	// Checkpoints never move back.
	cpDone := make(chan struct{})
	var cpErr error
	go func() {
		defer close(cpDone)
		prev := map[string]stream.SequenceNumber{}
		for ctx.Err() == nil {
			cps, err := e.checkpoints("totals")
			if err == nil {
				for sh, s := range cps {
					if s.Compare(prev[sh]) < 0 && cpErr == nil {
						cpErr = fmt.Errorf("checkpoint of %s moved back from %s to %s", sh, prev[sh], s)
					}
					prev[sh] = s
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	pause := func(d time.Duration) { time.Sleep(d) } // the scenario's timeline
	pause(3 * time.Second)
	killed := holder(ws)
	if killed == nil {
		t.Fatal("no worker handled anything in 3 s")
	}
	killed.cmd.Process.Signal(syscall.SIGKILL)
	pause(5 * time.Second)
	stopped := holder(ws)
	stopped.cmd.Process.Signal(syscall.SIGUSR1)
	for i := 0; ; i++ {
		stopped.mu.Lock()
		p := stopped.paused
		stopped.mu.Unlock()
		if p {
			break
		}
		if i > 500 {
			t.Fatalf("%s did not hold a batch within 10 s", stopped.name)
		}
		time.Sleep(20 * time.Millisecond) // polling its output
	}
	stopped.cmd.Process.Signal(syscall.SIGSTOP)
	pause(5 * time.Second) // past its lease: 2 s × 1.25 + polls
	stopped.cmd.Process.Signal(syscall.SIGCONT)
	stopped.cmd.Process.Signal(syscall.SIGUSR2)
	pause(3 * time.Second)
	leaving := holder(ws)
	leaving.cmd.Process.Signal(syscall.SIGINT)
	ws = append(ws, startWorker(t, "w4", tables))
	pause(3 * time.Second)
	stopWriters()
	wwg.Wait()
	<-cpDone

	// Wait for the totals to catch up with the source.
	deadline := time.Now().Add(40 * time.Second)
	for !totalsMatch(e) {
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, w := range ws {
		w.cmd.Process.Signal(syscall.SIGINT)
	}
	for _, w := range ws {
		select {
		case <-w.done:
		case <-time.After(30 * time.Second):
			t.Errorf("%s did not leave within 30 s of SIGINT", w.name)
		}
	}
	t.Logf("killed %s, stopped %s, left %s", killed.name, stopped.name, leaving.name)
	checkTotals(t, e)
	if cpErr != nil {
		t.Error(cpErr)
	}
	// Every change handled; per item, in order under each lease token.
	handled := map[string]map[int64]bool{}
	for _, w := range ws {
		last := map[string]int64{}
		for _, line := range w.recs {
			f := strings.Fields(line)
			tok, item := f[1], f[3]+"/"+f[4]
			v, _ := strconv.ParseInt(f[5], 10, 64)
			if handled[item] == nil {
				handled[item] = map[int64]bool{}
			}
			handled[item][v] = true
			k := tok + " " + item
			if v <= last[k] {
				t.Errorf("%s: item %s version %d after %d under token %s", w.name, item, v, last[k], tok)
			}
			last[k] = v
		}
	}
	for item, v := range written {
		for i := int64(1); i <= v; i++ {
			if !handled[item][i] {
				t.Errorf("item %s version %d never handled", item, i)
			}
		}
	}
	stopped.mu.Lock()
	errs := stopped.errb.String()
	stopped.mu.Unlock()
	if !strings.Contains(errs, "checkpoint refused") {
		t.Errorf("the resumed worker %s's checkpoint was not refused: %s", stopped.name, errs)
	}
}

func totalsMatch(e *env) bool {
	ctx := context.Background()
	want := map[string]int64{}
	for it, err := range e.items.Scan(ctx, dynamo.ConsistentRead()) {
		if err != nil {
			return false
		}
		want[it.Customer] += it.Amount
	}
	for tt, err := range e.totals.Scan(ctx, dynamo.ConsistentRead()) {
		if err != nil {
			return false
		}
		if want[tt.Customer] != tt.Sum {
			return false
		}
		delete(want, tt.Customer)
	}
	return len(want) == 0
}
