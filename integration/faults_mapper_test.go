package integration

// The mapper's part of the fault suite: concurrent Table.Update increments
// and consistent reads of a few counters, each worker with its own client
// through its own dynamotest.Faults transport, as separate processes would
// have — except five goroutines of one "process" sharing a Table, whose
// Updates of one key are combined into shared writes. Afterwards the items, read without faults, must hold every
// acknowledged increment exactly once, nothing twice and nothing that was
// never sent, and the history of increments and reads must be linearizable
// (checked with porcupine).

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/leaktest"
)

// faultCounter is one counter item: Count is incremented and the operation's
// id appended to Ops in the same Update, so the list tells which increments
// were applied, how often and in which order.
type faultCounter struct {
	Key     string   `dynamo:"key,hash"`
	Count   int64    `dynamo:"count"`
	Ops     []string `dynamo:"ops"`
	Version int64    `dynamo:"version,version"`
}

// counterOp is one Update increment as its caller saw it.
type counterOp struct {
	ID           string
	Key          string
	Client       int   // the goroutine that sent it
	Call, Return int64 // logical times just before the call and just after it returned
	Acked        bool  // Update returned nil
	Count        int64 // when Acked: the saved copy's counter
	Err          error // when not Acked: the outcome is unknown
}

// counterRead is one consistent Load that succeeded (failed reads are not
// recorded: they tell nothing).
type counterRead struct {
	Key          string
	Client       int
	Call, Return int64
	Count        int64 // 0 for ErrNotFound
}

// counterFinal is a counter item as read through a client without faults
// after the run.
type counterFinal struct {
	Found   bool
	Count   int64
	Version int64
	Ops     []string
}

// counterCheck is what checkCounters found.
type counterCheck struct {
	Anomalies []string // invariant violations, one line each
	Applied   int      // failed (unknown-outcome) increments found applied
	Result    porcupine.CheckResult
	Info      porcupine.LinearizationInfo
	Ops       int // operations in the linearizability history
}

// counterInput is the input of a porcupine operation.
type counterInput struct {
	Key  string
	Read bool // false: an increment
}

// counterModel is a register per key holding the counter: an increment with
// output v is legal in state v-1 and leaves v; a read with output v is legal
// in state v.
var counterModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range h {
			k := op.Input.(counterInput).Key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		sort.Strings(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() any { return int64(0) },
	Step: func(state, input, output any) (bool, any) {
		s, v := state.(int64), output.(int64)
		if input.(counterInput).Read {
			return s == v, s
		}
		return v == s+1, v
	},
	DescribeOperation: func(input, output any) string {
		in := input.(counterInput)
		if in.Read {
			return fmt.Sprintf("read(%s) -> %d", in.Key, output)
		}
		return fmt.Sprintf("increment(%s) -> %d", in.Key, output)
	},
	DescribeState: func(state any) string { return fmt.Sprint(state) },
}

// checkCounters checks the recorded operations against the final items:
//
//   - every acknowledged increment's id is in its item exactly once, at the
//     position the saved copy's counter says (counter = position + 1);
//   - no id is in an item twice, and no id is there that was never sent to
//     that key (failed increments: at most once);
//   - each item's counter and version equal its number of ids (the first
//     Update creates the item with version 1; each later one adds 1);
//   - the history — acknowledged increments, failed increments found applied
//     (returning at end, with the output their position gives), successful
//     reads — is linearizable for a counter (porcupine, within timeout).
func checkCounters(ops []counterOp, reads []counterRead, final map[string]counterFinal, end int64, timeout time.Duration) counterCheck {
	var c counterCheck
	addf := func(format string, args ...any) { c.Anomalies = append(c.Anomalies, fmt.Sprintf(format, args...)) }

	sent := map[string]map[string]bool{} // key → ids sent to it
	for _, op := range ops {
		if sent[op.Key] == nil {
			sent[op.Key] = map[string]bool{}
		}
		sent[op.Key][op.ID] = true
	}
	keys := make([]string, 0, len(final))
	for k := range final {
		keys = append(keys, k)
	}
	for k := range sent {
		if _, ok := final[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	pos := map[string]map[string]int{} // key → id → first position
	for _, k := range keys {
		f := final[k]
		pos[k] = map[string]int{}
		seen := map[string]int{}
		for i, id := range f.Ops {
			seen[id]++
			if _, ok := pos[k][id]; !ok {
				pos[k][id] = i
			}
			if !sent[k][id] {
				addf("key %s: id %s at position %d was never sent to this key", k, id, i)
			}
		}
		for _, id := range slices.Sorted(func(yield func(string) bool) {
			for id := range seen {
				if !yield(id) {
					return
				}
			}
		}) {
			if n := seen[id]; n > 1 {
				addf("key %s: id %s appears %d times: an increment was applied more than once", k, id, n)
			}
		}
		n := int64(len(f.Ops))
		if !f.Found && n > 0 {
			addf("key %s: item missing but %d ids recorded", k, n)
		}
		if f.Count != n {
			addf("key %s: counter is %d but the item holds %d ids", k, f.Count, n)
		}
		if f.Version != n {
			addf("key %s: version is %d but the item holds %d ids (one version per applied Update)", k, f.Version, n)
		}
	}

	var hist []porcupine.Operation
	for _, op := range ops {
		p, applied := pos[op.Key][op.ID]
		switch {
		case op.Acked && !applied:
			addf("key %s: acknowledged increment %s (counter %d) is missing: a lost write", op.Key, op.ID, op.Count)
		case op.Acked && op.Count != int64(p)+1:
			addf("key %s: acknowledged increment %s returned counter %d but is at position %d (counter %d)", op.Key, op.ID, op.Count, p, p+1)
		}
		switch {
		case op.Acked:
			hist = append(hist, porcupine.Operation{ClientId: op.Client, Input: counterInput{Key: op.Key},
				Call: op.Call, Output: op.Count, Return: op.Return, Metadata: op.ID})
		case applied:
			// Unknown outcome, found applied: it took effect some time
			// after its call, with the counter its position gives.
			c.Applied++
			hist = append(hist, porcupine.Operation{ClientId: op.Client, Input: counterInput{Key: op.Key},
				Call: op.Call, Output: int64(p) + 1, Return: end, Metadata: op.ID + " (failed, found applied)"})
		}
	}
	for _, r := range reads {
		hist = append(hist, porcupine.Operation{ClientId: r.Client, Input: counterInput{Key: r.Key, Read: true},
			Call: r.Call, Output: r.Count, Return: r.Return})
	}
	c.Ops = len(hist)
	c.Result, c.Info = porcupine.CheckOperationsVerbose(counterModel, hist, timeout)
	switch c.Result {
	case porcupine.Illegal:
		addf("the history of %d increments and reads is not linearizable for a counter", len(hist))
	case porcupine.Unknown:
		addf("the linearizability check of %d operations did not finish within %v", len(hist), timeout)
	}
	return c
}

// updateErrorExplained reports whether err, returned by a Table.Update under
// faults, says what happened: it names the table, and the cause is one the
// faults explain — the SDK's attempts or retry quota used up, Update's own
// attempts used up (a version conflict), or a write whose outcome is unknown
// (dynamo.ErrUnknownOutcome, which comes with a version conflict, or says
// that the read that would have settled it failed).
func updateErrorExplained(err error, table string) bool {
	msg := err.Error()
	if !strings.HasPrefix(msg, "dynamo: ") || !strings.Contains(msg, fmt.Sprintf("%q", table)) {
		return false
	}
	switch {
	case errors.Is(err, dynamo.ErrUnknownOutcome):
		// A conflict carrying the item read to settle the write, or the
		// read that would have settled it failed.
		// Or (MRSC) the resend of a write settled as not applied met a
		// replicated write conflict.
		return strings.Contains(msg, "may have been applied") &&
			(errors.Is(err, dynamo.ErrVersionConflict) || strings.Contains(msg, "reading the item to find out failed") ||
				errors.Is(err, dynamo.ErrReplicatedConflict))
	case strings.Contains(msg, "gave up after"):
		return errors.Is(err, dynamo.ErrVersionConflict) || errors.Is(err, dynamo.ErrReplicatedConflict)
	case errors.Is(err, dynamo.ErrVersionConflict), errors.Is(err, dynamo.ErrConditionFailed),
		errors.Is(err, dynamo.ErrNotFound), errors.Is(err, dynamo.ErrInvalidInput):
		return false
	}
	return strings.Contains(msg, "exceeded maximum number of attempts") || // the SDK's retryer gave up
		strings.Contains(msg, "retry quota exceeded") // the SDK's retry token bucket is empty
}

// quickRetries makes the SDK retry after a few milliseconds rather than the
// default's up to seconds, so that a test with hundreds of faults runs in
// seconds; the number of attempts (3) and the retry quota stay the SDK's
// defaults.
func quickRetries(o *dynamodb.Options) {
	o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
		so.Backoff = retry.BackoffDelayerFunc(func(attempt int, _ error) (time.Duration, error) {
			return rand.N(4 * time.Millisecond << min(attempt, 4)), nil
		})
	})
}

// TestFaultsMapperCounters runs concurrent Update increments and consistent
// reads on three counters through faulty transports: nine "processes" (own
// client, own Mapper and Table), the last of which runs two goroutines on
// one Table (Update's in-Table turn-taking), and two readers.
func TestFaultsMapperCounters(t *testing.T) {
	leaktest.Check(t, "ddbkit/dynamo.")

	const (
		procs   = 6  // writer processes; the last one has five goroutines, whose Updates share writes
		writers = 10 // writer goroutines
		readers = 2
	)
	keys := []string{"a", "b", "c"}
	perWriter := scaled(30)
	perReader := scaled(100) // at most: readers stop when the writers are done
	maxFaults := scaled(60)  // per transport

	name := dynamotest.KeyTable(t, dynamotest.Client(t), "faultcounters", "key", types.ScalarAttributeTypeS, "", "")
	var transports []*dynamotest.Faults
	newTable := func(salt uint64) *dynamo.Table[faultCounter] {
		f := dynamotest.NewFaults(faultConfig(t, salt, maxFaults), nil)
		transports = append(transports, f)
		tb, err := dynamo.NewTable[faultCounter](dynamo.NewMapper(f.Client(t, quickRetries)), name)
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	tables := make([]*dynamo.Table[faultCounter], procs+readers)
	for i := range tables {
		tables[i] = newTable(uint64(i + 1))
	}

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	var clk atomic.Int64  // logical time: Add(1) before each call and after it returns
	lin := &linRecorder{} // the history for the register model (linear_test.go)
	opsOf := make([][]counterOp, writers)
	readsOf := make([][]counterRead, readers)
	failedReads := make([]int, readers)
	var wg, writing sync.WaitGroup
	writersDone := make(chan struct{})
	start := time.Now()
	for w := range writers {
		wg.Add(1)
		writing.Add(1)
		go func() {
			defer wg.Done()
			defer writing.Done()
			tb := tables[min(w, procs-1)]
			rng := rand.New(rand.NewPCG(*faultSeed, uint64(w)))
			for seq := range perWriter {
				id := fmt.Sprintf("w%d-%d", w, seq)
				key := keys[rng.IntN(len(keys))]
				op := counterOp{ID: id, Key: key, Client: w, Call: clk.Add(1)}
				call := lin.begin(w, regInput{Key: key, Kind: regUpdate, ID: id})
				saved, err := tb.Update(ctx, faultCounter{Key: key}, func(c faultCounter) (faultCounter, error) {
					c.Count++
					c.Ops = append(slices.Clip(c.Ops), id)
					return c, nil
				})
				op.Return = clk.Add(1)
				if err == nil {
					op.Acked, op.Count = true, saved.Count
					call.ok(counterState(true, saved))
				} else {
					op.Err = err
					call.failed(err, mapperNotApplied)
				}
				opsOf[w] = append(opsOf[w], op)
			}
		}()
	}
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tb := tables[procs+r]
			for i := range perReader {
				select {
				case <-writersDone:
					return
				default:
				}
				key := keys[(i+r)%len(keys)]
				call := clk.Add(1)
				lcall := lin.begin(writers+r, regInput{Key: key, Kind: regLoad})
				got, err := tb.Load(ctx, faultCounter{Key: key}, dynamo.ConsistentRead())
				ret := clk.Add(1)
				switch {
				case err == nil:
					lcall.ok(counterState(true, got))
					readsOf[r] = append(readsOf[r], counterRead{Key: key, Client: writers + r, Call: call, Return: ret, Count: got.Count})
				case errors.Is(err, dynamo.ErrNotFound):
					lcall.ok(regState{})
					readsOf[r] = append(readsOf[r], counterRead{Key: key, Client: writers + r, Call: call, Return: ret})
				default:
					failedReads[r]++
				}
			}
		}()
	}
	writing.Wait()
	close(writersDone)
	wg.Wait()
	elapsed := time.Since(start)
	end := clk.Add(1)

	stats := stopFaults(transports)
	ops := slices.Concat(opsOf...)
	reads := slices.Concat(readsOf...)

	final := map[string]counterFinal{}
	for _, k := range keys {
		final[k] = counterFinal{}
	}
	readFinal(t, name, keys, lin, writers+readers, func(k string, got faultCounter) {
		final[k] = counterFinal{Found: true, Count: got.Count, Version: got.Version, Ops: got.Ops}
	})

	check := checkCounters(ops, reads, final, end, 20*time.Second)
	reportAnomalies(t, check.Anomalies)
	anomalies := len(check.Anomalies)
	// The same calls against the versioned register, failed Updates pending
	// forever rather than placed by what the final items show.
	anomalies += checkLinear(t, "register", regModel, regPruneUpdates, lin.history(), linCap, 30*time.Second).Anomalies()

	acked, unexplained := 0, 0
	causes := map[string]int{}
	for _, op := range ops {
		if op.Acked {
			acked++
			continue
		}
		causes[errorCause(op.Err)]++
		if !updateErrorExplained(op.Err, name) {
			unexplained++
			if unexplained <= 5 {
				t.Errorf("Update %s on key %s failed with an error that does not say what happened: %v", op.ID, op.Key, op.Err)
			}
		}
	}
	anomalies += unexplained
	if check.Result != porcupine.Ok {
		if f, err := os.CreateTemp("", "faults-mapper-*.html"); err == nil {
			f.Close()
			if err := porcupine.VisualizePath(counterModel, check.Info, f.Name()); err == nil {
				t.Logf("porcupine visualization: %s", f.Name())
			}
		}
	}
	nFailedReads := 0
	for _, n := range failedReads {
		nFailedReads += n
	}
	t.Logf("%v: %d increments (%d acknowledged, %d failed of which %d found applied), %d reads (%d failed), "+
		"linearizability %s on %d operations; failures by cause: %v",
		elapsed.Round(time.Millisecond), len(ops), acked, len(ops)-acked, check.Applied, len(reads)+nFailedReads, nFailedReads,
		check.Result, check.Ops, causes)
	for _, k := range keys {
		t.Logf("key %s: counter %d, version %d", k, final[k].Count, final[k].Version)
	}
	if acked == 0 {
		t.Errorf("no Update was acknowledged: the faults drowned the test")
	}
	logFaults(t, faultReport{Ops: len(ops) + len(reads) + nFailedReads, Acked: acked + len(reads), Anomalies: anomalies, Stats: stats})
}

// counterState is a faultCounter as the register model holds it: its
// version, and its ids as the value.
func counterState(found bool, c faultCounter) regState {
	if !found {
		return regState{}
	}
	return regState{Found: true, Version: c.Version, Value: strings.Join(c.Ops, " ")}
}

// errorCause names the cause of a failed Update for the log.
func errorCause(err error) string {
	msg := err.Error()
	for _, c := range []string{"retry quota exceeded", "exceeded maximum number of attempts", "gave up after", "may have been applied"} {
		if strings.Contains(msg, c) {
			return c
		}
	}
	return "other"
}

// TestFaultsCheckerCatchesAnomalies shows that checkCounters is not a check
// that cannot fail: a consistent history passes, and each doctored one —
// an id applied twice, an acknowledged id missing, an unknown id, a wrong
// counter or version, a counter that disagrees with the position, a stale
// read — is reported. No server is needed.
func TestFaultsCheckerCatchesAnomalies(t *testing.T) {
	// Two writers, one key: x1 [1,4] → 1, y1 [2,5] → 2, x2 [6,9] failed but
	// applied (3), y2 [7,8] failed and not applied; reads [3,3] → 0 or 1,
	// [10,11] → 3.
	base := func() ([]counterOp, []counterRead, map[string]counterFinal) {
		ops := []counterOp{
			{ID: "x1", Key: "k", Client: 0, Call: 1, Return: 4, Acked: true, Count: 1},
			{ID: "y1", Key: "k", Client: 1, Call: 2, Return: 5, Acked: true, Count: 2},
			{ID: "x2", Key: "k", Client: 0, Call: 6, Return: 9, Err: errors.New("lost")},
			{ID: "y2", Key: "k", Client: 1, Call: 7, Return: 8, Err: errors.New("lost")},
		}
		reads := []counterRead{
			{Key: "k", Client: 2, Call: 3, Return: 3, Count: 1},
			{Key: "k", Client: 2, Call: 10, Return: 11, Count: 3},
		}
		final := map[string]counterFinal{"k": {Found: true, Count: 3, Version: 3, Ops: []string{"x1", "y1", "x2"}}}
		return ops, reads, final
	}
	const end = 100
	ops, reads, final := base()
	if c := checkCounters(ops, reads, final, end, 5*time.Second); len(c.Anomalies) != 0 || c.Result != porcupine.Ok || c.Applied != 1 {
		t.Fatalf("a consistent history: anomalies %q, result %s, applied %d; want none, Ok, 1", c.Anomalies, c.Result, c.Applied)
	}

	cases := []struct {
		name   string
		doctor func(ops []counterOp, reads []counterRead, final map[string]counterFinal) ([]counterOp, []counterRead)
		want   string // in some anomaly
	}{
		{"applied twice", func(o []counterOp, r []counterRead, f map[string]counterFinal) ([]counterOp, []counterRead) {
			f["k"] = counterFinal{Found: true, Count: 4, Version: 4, Ops: []string{"x1", "y1", "x2", "x2"}}
			return o, r
		}, "appears 2 times"},
		{"acknowledged missing", func(o []counterOp, r []counterRead, f map[string]counterFinal) ([]counterOp, []counterRead) {
			f["k"] = counterFinal{Found: true, Count: 2, Version: 2, Ops: []string{"x1", "x2"}}
			return o, r
		}, "acknowledged increment y1 (counter 2) is missing"},
		{"never sent", func(o []counterOp, r []counterRead, f map[string]counterFinal) ([]counterOp, []counterRead) {
			f["k"] = counterFinal{Found: true, Count: 4, Version: 4, Ops: []string{"x1", "y1", "x2", "z9"}}
			return o, r
		}, "id z9 at position 3 was never sent"},
		{"counter off", func(o []counterOp, r []counterRead, f map[string]counterFinal) ([]counterOp, []counterRead) {
			g := f["k"]
			g.Count = 4
			f["k"] = g
			return o, r
		}, "counter is 4 but the item holds 3 ids"},
		{"version off", func(o []counterOp, r []counterRead, f map[string]counterFinal) ([]counterOp, []counterRead) {
			g := f["k"]
			g.Version = 5
			f["k"] = g
			return o, r
		}, "version is 5 but the item holds 3 ids"},
		{"saved copy disagrees with position", func(o []counterOp, r []counterRead, f map[string]counterFinal) ([]counterOp, []counterRead) {
			o[1].Count = 3
			return o, r
		}, "returned counter 3 but is at position 1"},
		{"stale read", func(o []counterOp, r []counterRead, f map[string]counterFinal) ([]counterOp, []counterRead) {
			// After y1 returned (5), a read that starts at 6 sees 1.
			return o, append(r, counterRead{Key: "k", Client: 3, Call: 6, Return: 7, Count: 1})
		}, "not linearizable"},
		{"read from the future", func(o []counterOp, r []counterRead, f map[string]counterFinal) ([]counterOp, []counterRead) {
			// Before any increment was called, a read sees 2.
			return o, append([]counterRead{{Key: "k", Client: 3, Call: 0, Return: 0, Count: 2}}, r...)
		}, "not linearizable"},
		{"increments out of order", func(o []counterOp, r []counterRead, f map[string]counterFinal) ([]counterOp, []counterRead) {
			// x1 and y1 swapped in the item while y1 started after x1
			// returned: positions agree with the counters returned,
			// but y1 → 1 after x1 → 2 had returned is impossible.
			o[0].Count, o[1].Count = 2, 1
			o[1].Call = 5
			f["k"] = counterFinal{Found: true, Count: 3, Version: 3, Ops: []string{"y1", "x1", "x2"}}
			return o, r[1:]
		}, "not linearizable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ops, reads, final := base()
			ops, reads = tc.doctor(ops, reads, final)
			c := checkCounters(ops, reads, final, end, 5*time.Second)
			if !slices.ContainsFunc(c.Anomalies, func(a string) bool { return strings.Contains(a, tc.want) }) {
				t.Errorf("anomalies %q (result %s); want one containing %q", c.Anomalies, c.Result, tc.want)
			}
		})
	}

	// The error check: an error explains itself when it names the table
	// and carries a cause the faults can produce, with the right sentinels.
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{errors.New(`dynamo: save to table "T" key {key: "a"}: operation error DynamoDB: UpdateItem, exceeded maximum number of attempts, 3`), true},
		{errors.New(`dynamo: load from table "T" key {key: "a"}: operation error DynamoDB: GetItem, failed to get rate limit token, retry quota exceeded, 0 available, 5 requested`), true},
		{fmt.Errorf(`dynamo: Update gave up after 100 attempts: %w on table "T"`, dynamo.ErrVersionConflict), true},
		{fmt.Errorf(`dynamo: Update stopped: %w, %w on table "T" — may have been applied`, dynamo.ErrVersionConflict, dynamo.ErrUnknownOutcome), true},
		{errors.New("operation error DynamoDB: UpdateItem, exceeded maximum number of attempts, 3"), false},     // no table
		{errors.New(`dynamo: save to table "U" key {key: "a"}: exceeded maximum number of attempts, 3`), false}, // another table
		{fmt.Errorf(`dynamo: %w on table "T"`, dynamo.ErrVersionConflict), false},                               // a bare conflict
		{fmt.Errorf(`dynamo: gave up after 3 attempts: %w on table "T"`, dynamo.ErrNotFound), false},            // wrong sentinel
		{fmt.Errorf(`dynamo: %w on table "T": may have been applied`, dynamo.ErrUnknownOutcome), false},         // no conflict
		{fmt.Errorf(`dynamo: save to table "T" key {key: "a"}: %w: the write may have been applied (reset), and reading the item to find out failed: throttled`, dynamo.ErrUnknownOutcome), true},
		{errors.New(`dynamo: save to table "T" key {key: "a"}: connection reset by peer`), false},                 // SDK did not say it gave up
		{fmt.Errorf(`dynamo: table "T": %w: exceeded maximum number of attempts`, dynamo.ErrInvalidInput), false}, // wrong sentinel
	} {
		if got := updateErrorExplained(tc.err, "T"); got != tc.want {
			t.Errorf("updateErrorExplained(%q) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
