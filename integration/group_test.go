package integration

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/lease"
)

// Timing of the group under test: a silent worker's keys move within
// d × skew + 2 polls = 2.9 s of its last heartbeat.
const (
	grpDur   = 2 * time.Second
	grpBeat  = 500 * time.Millisecond
	grpPoll  = 200 * time.Millisecond
	grpSkew  = 1.25
	grpWrite = 100 * time.Millisecond // each key's work writes this often
)

// keyLog is what the work on a key writes, guarded by the key's lease: one
// entry "<token> <worker>" per write, appended under the version check.
type keyLog struct {
	Key     string   `dynamo:"key,hash"`
	Entries []string `dynamo:"entries"`
	Version int64    `dynamo:"version,version"`
}

// The environment of a group worker process.
const (
	envGroupWorker = "DYNAMO_GROUP_TEST_WORKER"
	envGroupTable  = "DYNAMO_GROUP_TEST_TABLE"
	envGroupLogs   = "DYNAMO_GROUP_TEST_LOGS"
	envGroupKeys   = "DYNAMO_GROUP_TEST_KEYS"
)

// groupWorkerMain runs a group worker when this process is one (started by
// TestGroupProcesses), and reports whether it was.
func groupWorkerMain() bool {
	name := os.Getenv(envGroupWorker)
	if name == "" {
		return false
	}
	n, _ := strconv.Atoi(os.Getenv(envGroupKeys))
	if err := runGroupWorker(name, os.Getenv(envGroupTable), os.Getenv(envGroupLogs), n); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	return true
}

// runGroupWorker works on the keys it is given until SIGINT, printing
// "hold <key> <token>", "drop <key>" and "refused <key> <token>" (a guarded
// write refused because the lease was lost).
func runGroupWorker(name, table, logs string, n int) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	m := dynamo.NewMapper(dynamotest.NewClient(os.Getenv("DYNAMODB_ENDPOINT")))
	lc, err := lease.New(m, table, lease.WithOwner(name), lease.WithLeaseDuration(grpDur),
		lease.WithHeartbeatInterval(grpBeat), lease.WithPollInterval(grpPoll), lease.WithClockSkewRate(grpSkew))
	if err != nil {
		return err
	}
	lt, err := dynamo.NewTable[keyLog](m, logs)
	if err != nil {
		return err
	}
	g, err := lc.Group("job", groupKeys(n))
	if err != nil {
		return err
	}
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	return g.Run(ctx, func(ctx context.Context, l *lease.Lease) error {
		say("hold %s %d", l.Key(), l.Token())
		defer say("drop %s", l.Key())
		for {
			time.Sleep(grpWrite) // a SIGSTOP lands here or in a write
			// Beyond ctx, and once more after it ends: a worker resumed
			// after its lease tries its write whichever of its goroutines
			// wakes first, so its refusal does not hang on the scheduler.
			cur, err := lt.Load(context.WithoutCancel(ctx), keyLog{Key: l.Key()}, dynamo.ConsistentRead())
			if err == nil || errors.Is(err, dynamo.ErrNotFound) {
				cur.Key = l.Key()
				cur.Entries = append(cur.Entries, fmt.Sprintf("%d %s", l.Token(), name))
				_, err = lease.Save(context.WithoutCancel(ctx), l, lt, cur)
				switch {
				case errors.Is(err, lease.ErrLost):
					say("refused %s %d", l.Key(), l.Token())
					return nil
				case err != nil && ctx.Err() == nil:
					fmt.Fprintf(os.Stderr, "%s: guarded write of %s: %v\n", name, l.Key(), err)
				}
			}
			if ctx.Err() != nil {
				return nil
			}
		}
	})
}

func groupKeys(n int) []string {
	var ks []string
	for i := range n {
		ks = append(ks, fmt.Sprintf("key-%02d", i))
	}
	return ks
}

// groupFleet is what the test knows of its worker processes, from their
// lines.
type groupFleet struct {
	mu      sync.Mutex
	holder  map[string]string // key → worker
	refused map[string]int    // worker → guarded writes refused
	changed chan struct{}
}

func (f *groupFleet) apply(worker, line string) {
	fs := strings.Fields(line)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case len(fs) == 3 && fs[0] == "hold":
		f.holder[fs[1]] = worker
	case len(fs) == 2 && fs[0] == "drop" && f.holder[fs[1]] == worker:
		delete(f.holder, fs[1])
	case len(fs) == 3 && fs[0] == "refused":
		f.refused[worker]++
	default:
		return
	}
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *groupFleet) forget(worker string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, w := range f.holder {
		if w == worker {
			delete(f.holder, k)
		}
	}
}

// balanced reports whether live hold every one of m keys, ⌊m/n⌋ or ⌈m/n⌉
// each.
func (f *groupFleet) balanced(live []string, m int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	count := map[string]int{}
	for _, w := range f.holder {
		if !slices.Contains(live, w) {
			return false
		}
		count[w]++
	}
	n := len(live)
	for _, w := range live {
		if count[w] < m/n || count[w] > (m+n-1)/n {
			return false
		}
	}
	return len(f.holder) == m
}

// await waits until balanced holds and returns how long it took.
func (f *groupFleet) await(t *testing.T, live []string, m int, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for !f.balanced(live, m) {
		f.mu.Lock()
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(limit - time.Since(start)):
			f.mu.Lock()
			defer f.mu.Unlock()
			t.Fatalf("not balanced over %v after %v: %v", live, limit, f.holder)
		}
	}
	return time.Since(start)
}

// Six worker processes share 64 keys; every write of the work is guarded by
// the key's lease and appends "<token> <worker>" to the key's log. One
// worker is killed (SIGKILL), another stopped (SIGSTOP) past its lease and
// resumed. Checked: balance within ±1 after each change, the keys of the
// silent workers taken within the documented bound (plus slack for a loaded
// machine), the resumed worker's writes refused, and in every key's log one
// holder's run after another with strictly increasing tokens.
func TestGroupProcesses(t *testing.T) {
	const workers, nkeys = 6, 64
	bound := time.Duration(float64(grpDur)*grpSkew) + 2*grpPoll
	const slack = 3 * time.Second // requests on a loaded machine, process start-up
	client := dynamotest.Client(t)
	m := dynamo.NewMapper(client)
	table := fmt.Sprintf("group-procs-%d", time.Now().UnixNano())
	lc, err := lease.New(m, table)
	if err != nil {
		t.Fatal(err)
	}
	if err := lc.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	logs, err := dynamo.NewTable[keyLog](m, table+"-logs")
	if err != nil {
		t.Fatal(err)
	}
	if err := logs.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = logs.DeleteTable(context.Background())
		_, _ = client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	})
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := &groupFleet{holder: map[string]string{}, refused: map[string]int{}, changed: make(chan struct{})}
	procs := map[string]*exec.Cmd{}
	var live []string
	var readers sync.WaitGroup
	defer func() {
		for _, p := range procs {
			_ = p.Process.Signal(syscall.SIGCONT)
			_ = p.Process.Signal(os.Interrupt)
		}
		for _, p := range procs {
			_ = p.Wait()
		}
		readers.Wait()
	}()
	for i := range workers {
		name := fmt.Sprintf("w%d", i+1)
		cmd := exec.Command(self, "-test.run=^$")
		cmd.Env = append(os.Environ(), envGroupWorker+"="+name, envGroupTable+"="+table, envGroupLogs+"="+logs.Name(),
			envGroupKeys+"="+strconv.Itoa(nkeys), "DYNAMODB_ENDPOINT="+dynamotest.Endpoint(t))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[name] = cmd
		live = append(live, name)
		readers.Add(1)
		go func() {
			defer readers.Done()
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				f.apply(name, sc.Text())
			}
		}()
	}
	took := f.await(t, live, nkeys, time.Minute)
	t.Logf("%d workers balanced over %d keys after %v", workers, nkeys, took)

	// SIGKILL w1: its keys move after its silence.
	if err := procs["w1"].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = procs["w1"].Wait()
	delete(procs, "w1")
	live = slices.DeleteFunc(live, func(w string) bool { return w == "w1" })
	f.forget("w1")
	took = f.await(t, live, nkeys, time.Minute)
	t.Logf("w1 killed: balanced over %d workers after %v (bound %v after its last heartbeat)", len(live), took, bound)
	if took > bound+slack {
		t.Errorf("a killed worker's keys moved after %v, want within %v (+%v slack)", took, bound, slack)
	}

	// SIGSTOP w2 past its lease: the others take its keys; resumed, its
	// writes are refused, and it joins again.
	if err := procs["w2"].Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	others := slices.DeleteFunc(slices.Clone(live), func(w string) bool { return w == "w2" })
	f.forget("w2")
	took = f.await(t, others, nkeys, time.Minute)
	t.Logf("w2 stopped: balanced over %d workers after %v", len(others), took)
	if took > bound+slack {
		t.Errorf("a stopped worker's keys moved after %v, want within %v (+%v slack)", took, bound, slack)
	}
	time.Sleep(max(0, 2*bound-time.Since(stopped)))
	if err := procs["w2"].Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	took = f.await(t, live, nkeys, time.Minute)
	t.Logf("w2 resumed: balanced over %d workers again after %v", len(live), took)
	f.mu.Lock()
	refused := f.refused["w2"]
	f.mu.Unlock()
	if refused == 0 {
		t.Errorf("the resumed worker had no guarded write refused")
	}

	// Leave: every worker hands its keys back and exits.
	for _, p := range procs {
		_ = p.Process.Signal(os.Interrupt)
	}
	for name, p := range procs {
		if err := p.Wait(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		delete(procs, name)
	}

	// Every key's log: one holder's run after another, tokens increasing.
	writes := 0
	for _, k := range groupKeys(nkeys) {
		kl, err := logs.Load(t.Context(), keyLog{Key: k}, dynamo.ConsistentRead())
		if err != nil {
			t.Errorf("log of %s: %v", k, err)
			continue
		}
		writes += len(kl.Entries)
		var lastTok int64
		lastWorker := ""
		for i, e := range kl.Entries {
			var tok int64
			var w string
			if _, err := fmt.Sscanf(e, "%d %s", &tok, &w); err != nil {
				t.Fatalf("log of %s entry %d: %q", k, i, e)
			}
			switch {
			case tok < lastTok, tok == lastTok && w != lastWorker:
				t.Errorf("log of %s entry %d: %q after token %d of %s: two holders", k, i, e, lastTok, lastWorker)
			}
			lastTok, lastWorker = tok, w
		}
	}
	t.Logf("%d guarded writes over %d keys; %d refused to the resumed worker", writes, nkeys, refused)
}
