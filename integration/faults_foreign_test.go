package integration

// The foreign writer of the fault suite: while mapper workers run Update
// (alone and combined, several goroutines on one Table), Transact and Add
// through faulty transports, a foreign writer puts, between the mapper's
// read and its write (inside the Update or Transact function, once per
// operation) and at random moments, one of the item states a mapper did
// not write — absent (a delete), version 0, no version attribute, a NULL
// version, another spelling of a number, a foreign write token
// (internal/itemstate), chosen by seed. Each foreign put carries a marker
// in the item's ops list. The checkers look for writes that land on a
// foreign state they were not computed from (the foreign write is lost),
// for foreign states resurrected after a later delete, for acknowledged
// writes missing from the final item, and for errors the faults do not
// explain.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/itemstate"
)

// foreignItem is the item the mapper workers write: Update and Transact
// increment Count and append their operation's id to Ops in one write; Add
// increments Adds. A foreign put holds count 1 and ops [its marker].
type foreignItem struct {
	Key     string   `dynamo:"key,hash"`
	Count   int64    `dynamo:"count"`
	Ops     []string `dynamo:"ops"`
	Adds    int64    `dynamo:"adds"`
	Version int64    `dynamo:"version,version"`
}

// foreignWrite is one write of the foreign writer.
type foreignWrite struct {
	N            int // its number; its marker is foreignMarker(N)
	Key          string
	State        itemstate.Kind
	Call, Return int64 // logical times
}

// foreignMarker is the ops entry of foreign write n.
func foreignMarker(n int) string { return "foreign-" + strconv.Itoa(n) }

// markerNumber returns the number of a foreign marker, or 0 for a mapper
// operation's id.
func markerNumber(id string) int {
	s, ok := strings.CutPrefix(id, "foreign-")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(s)
	return n
}

// foreignWriter puts foreign states, one at a time, through a client
// without faults.
type foreignWriter struct {
	client *dynamodb.Client
	table  string
	clk    *atomic.Int64

	mu     sync.Mutex
	rng    *rand.Rand // guarded by mu
	writes []foreignWrite
	err    error // the first failed put
}

// put leaves key in a foreign state chosen by the seed and returns the
// write's number (0 if it failed).
func (f *foreignWriter) put(ctx context.Context, key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.writes) + 1
	schema := itemstate.Schema{
		Version: "version",
		Token:   dynamo.DefaultWriteTokenAttribute,
		Attrs: map[string]types.AttributeValue{
			"count": &types.AttributeValueMemberN{Value: "1"},
			"ops":   &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: foreignMarker(n)}}},
		},
	}
	st := itemstate.Pick(schema, f.rng.IntN(1<<20))
	w := foreignWrite{N: n, Key: key, State: st.Kind, Call: f.clk.Add(1)}
	err := itemstate.Put(context.WithoutCancel(ctx), f.client, f.table, map[string]types.AttributeValue{"key": &types.AttributeValueMemberS{Value: key}}, st)
	w.Return = f.clk.Add(1)
	if err != nil {
		if f.err == nil {
			f.err = err
		}
		return 0
	}
	f.writes = append(f.writes, w)
	return n
}

// foreignOp is one mapper operation as its caller saw it.
type foreignOp struct {
	ID, Key, Via string
	Call, Return int64
	Injected     int // the foreign write put inside its function (0: none)
	Acked        bool
	Saved        foreignItem // when Acked (Update, Transact): the item written
	Err          error
}

// checkForeign checks the mapper operations against the foreign writes and
// the final items (read without faults):
//
//   - an acknowledged Update or Transact whose function met a foreign put
//     (made inside it) wrote an item computed from that state or a later
//     one: its ops hold no marker older than the put, and, when the put
//     left an item, a marker at least as new, or none when a later foreign
//     delete came before the write (else the write landed on the foreign
//     item it had not read: the foreign write is lost);
//   - no id twice in an item, count = len(ops);
//   - the final item of each key starts from its last foreign write: its
//     marker first when that write was a put, no marker when it was a
//     delete; every acknowledged operation called after that write
//     returned is in it.
//
// errors lists the errors of operations the faults do not explain.
func checkForeign(ops []foreignOp, writes []foreignWrite, final map[string]foreignItem, found map[string]bool, table string) (anomalies []string) {
	byN := map[int]foreignWrite{}
	last := map[string]foreignWrite{}
	for _, w := range writes {
		byN[w.N] = w
		if w.N > last[w.Key].N {
			last[w.Key] = w
		}
	}
	checkOps := func(what string, it foreignItem) {
		seen := map[string]bool{}
		for _, id := range it.Ops {
			if seen[id] {
				anomalies = append(anomalies, fmt.Sprintf("%s: id %s twice in ops %v", what, id, it.Ops))
			}
			seen[id] = true
		}
		if it.Count != int64(len(it.Ops)) {
			anomalies = append(anomalies, fmt.Sprintf("%s: count %d but %d ops %v", what, it.Count, len(it.Ops), it.Ops))
		}
	}
	for _, op := range ops {
		if op.Err != nil && !foreignErrorExplained(op.Err, table) {
			anomalies = append(anomalies, fmt.Sprintf("%s %s on %q (foreign put %d: %s): unexplained error: %v",
				op.Via, op.ID, op.Key, op.Injected, byN[op.Injected].State, op.Err))
		}
		if !op.Acked || op.Via == "add" {
			continue
		}
		what := fmt.Sprintf("%s %s on %q", op.Via, op.ID, op.Key)
		checkOps(what+" saved", op.Saved)
		if op.Injected == 0 {
			continue
		}
		w := byN[op.Injected]
		newest := 0
		for _, id := range op.Saved.Ops {
			if m := markerNumber(id); m > 0 && m < w.N {
				anomalies = append(anomalies, fmt.Sprintf("%s: wrote ops %v computed from a state older than foreign write %d (%s) made before its write: that write is lost",
					what, op.Saved.Ops, w.N, w.State))
			}
			newest = max(newest, markerNumber(id))
		}
		if w.State != itemstate.Absent && newest < w.N && !(newest == 0 && deletedAfter(writes, w, op.Return)) {
			anomalies = append(anomalies, fmt.Sprintf("%s: wrote ops %v over foreign write %d (%s) made between its read and its write: that write is lost",
				what, op.Saved.Ops, w.N, w.State))
		}
	}
	for key, it := range final {
		what := fmt.Sprintf("final item %q", key)
		if !found[key] {
			continue
		}
		checkOps(what, it)
		lw, ok := last[key]
		if !ok {
			continue
		}
		for i, id := range it.Ops {
			if m := markerNumber(id); m > 0 && (m != lw.N || i != 0) {
				anomalies = append(anomalies, fmt.Sprintf("%s: ops %v hold marker %d at %d; the last foreign write is %d (%s)", what, it.Ops, m, i, lw.N, lw.State))
			}
		}
		if lw.State != itemstate.Absent && (len(it.Ops) == 0 || it.Ops[0] != foreignMarker(lw.N)) {
			anomalies = append(anomalies, fmt.Sprintf("%s: ops %v do not start from the last foreign write %d (%s): it is lost", what, it.Ops, lw.N, lw.State))
		}
		for _, op := range ops {
			if op.Key == key && op.Acked && op.Via != "add" && op.Call > lw.Return && !slices.Contains(it.Ops, op.ID) {
				anomalies = append(anomalies, fmt.Sprintf("%s: acknowledged %s %s, called after the last foreign write, is missing from ops %v", what, op.Via, op.ID, it.Ops))
			}
		}
	}
	for key, lw := range last {
		if !found[key] && lw.State != itemstate.Absent {
			anomalies = append(anomalies, fmt.Sprintf("final item %q: gone, though the last foreign write %d put %s", key, lw.N, lw.State))
		}
	}
	return anomalies
}

// deletedAfter reports whether a foreign delete of w's key, later than w,
// was called before return: an item computed from absence (no marker) may
// then be written over w legitimately, after that delete.
func deletedAfter(writes []foreignWrite, w foreignWrite, ret int64) bool {
	for _, d := range writes {
		if d.Key == w.Key && d.State == itemstate.Absent && d.N > w.N && d.Call < ret {
			return true
		}
	}
	return false
}

// foreignErrorExplained reports whether the faults explain err (see
// updateErrorExplained; Transact's and Add's errors say the same).
func foreignErrorExplained(err error, table string) bool {
	if updateErrorExplained(err, table) {
		return true
	}
	msg := err.Error()
	return strings.HasPrefix(msg, "dynamo: ") && (errors.Is(err, dynamo.ErrUnknownOutcome) ||
		strings.Contains(msg, "exceeded maximum number of attempts") || strings.Contains(msg, "retry quota exceeded") ||
		(strings.Contains(msg, "gave up after") && errors.Is(err, dynamo.ErrVersionConflict)))
}

// TestFaultsForeignWriter runs mapper workers — two goroutines sharing a
// Table (combined Updates), an Update process, a Transact process and an
// Add process — through faulty transports while a foreign writer puts
// foreign item states between their reads and writes and at random moments,
// then checks with checkForeign.
func TestFaultsForeignWriter(t *testing.T) {
	keys := []string{"a", "b"}
	perWorker := scaled(30)
	foreignPhase := perWorker * 2 / 3 // operations after it meet no foreign write
	maxFaults := scaled(40)           // per transport
	const inject = 0.35               // the rate of functions that meet a foreign put

	clean := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, clean, "foreignwriter", "key", types.ScalarAttributeTypeS, "", "")
	var clk atomic.Int64
	fw := &foreignWriter{client: clean, table: name, clk: &clk, rng: rand.New(rand.NewPCG(*faultSeed, 0xf0))}

	var transports []*dynamotest.Faults
	newMapper := func(salt uint64) *dynamo.Mapper {
		f := dynamotest.NewFaults(faultConfig(t, 0xf00+salt, maxFaults), nil)
		transports = append(transports, f)
		return dynamo.NewMapper(f.Client(t, quickRetries))
	}
	table := func(m *dynamo.Mapper) *dynamo.Table[foreignItem] {
		tb, err := dynamo.NewTable[foreignItem](m, name)
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	shared := table(newMapper(1))
	workers := []struct {
		via string
		tb  *dynamo.Table[foreignItem]
		m   *dynamo.Mapper
	}{
		{via: "update-combined", tb: shared}, {via: "update-combined", tb: shared},
		{via: "update", tb: table(newMapper(2))},
		{via: "add", tb: table(newMapper(3))},
	}
	tm := newMapper(4)
	workers = append(workers, struct {
		via string
		tb  *dynamo.Table[foreignItem]
		m   *dynamo.Mapper
	}{via: "transact", tb: table(tm), m: tm})

	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	opsOf := make([][]foreignOp, len(workers))
	var wg sync.WaitGroup
	var foreignOn atomic.Bool
	foreignOn.Store(true)
	var phaseLeft atomic.Int64
	phaseLeft.Store(int64(len(workers)))
	for w, wk := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(*faultSeed, uint64(w)))
			for seq := range perWorker {
				if seq == foreignPhase && phaseLeft.Add(-1) == 0 {
					foreignOn.Store(false)
				}
				key := keys[rng.IntN(len(keys))]
				op := foreignOp{ID: fmt.Sprintf("w%d-%d", w, seq), Key: key, Via: wk.via}
				injectHere := seq < foreignPhase && rng.Float64() < inject
				meet := func() {
					if injectHere && op.Injected == 0 {
						op.Injected = -1 // once per operation, even if the put fails
						if n := fw.put(ctx, key); n > 0 {
							op.Injected = n
						}
					}
				}
				change := func(it foreignItem) foreignItem {
					it.Count++
					it.Ops = append(slices.Clip(it.Ops), op.ID)
					return it
				}
				op.Call = clk.Add(1)
				var err error
				switch wk.via {
				case "update", "update-combined":
					op.Saved, err = wk.tb.Update(ctx, foreignItem{Key: key}, func(it foreignItem) (foreignItem, error) {
						meet()
						return change(it), nil
					})
				case "transact":
					var saved foreignItem
					err = wk.m.Transact(ctx, func(tx *dynamo.Tx) error {
						v := wk.tb.In(tx)
						it, err := v.Load(foreignItem{Key: key})
						if errors.Is(err, dynamo.ErrNotFound) {
							it, err = foreignItem{Key: key}, nil
						}
						if err != nil {
							return err
						}
						meet()
						saved, err = v.Save(change(it))
						return err
					})
					op.Saved = saved
				case "add":
					_, err = wk.tb.Add(ctx, foreignItem{Key: key}, dynamo.Increment("adds", 1))
				}
				op.Return = clk.Add(1)
				if op.Injected < 0 {
					op.Injected = 0
				}
				op.Acked, op.Err = err == nil, err
				opsOf[w] = append(opsOf[w], op)
			}
		}()
	}
	// Foreign writes at random moments too, for Add and for the windows the
	// functions do not cover (a combined write's read, a lost answer's
	// settling read).
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(*faultSeed, 0xf1))
		for foreignOn.Load() && ctx.Err() == nil {
			fw.put(ctx, keys[rng.IntN(len(keys))])
			time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond) // pacing, not synchronisation
		}
	}()
	wg.Wait()
	if fw.err != nil {
		t.Fatalf("the foreign writer failed: %v", fw.err)
	}

	final := map[string]foreignItem{}
	found := map[string]bool{}
	for _, key := range keys {
		out, err := clean.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &name,
			Key: map[string]types.AttributeValue{"key": &types.AttributeValueMemberS{Value: key}}, ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		if out.Item == nil {
			continue
		}
		found[key] = true
		it, err := decodeForeign(out.Item)
		if err != nil {
			t.Errorf("final item %q does not decode: %v (%v)", key, err, out.Item)
		}
		final[key] = it
	}
	var all []foreignOp
	for _, o := range opsOf {
		all = append(all, o...)
	}
	anomalies := checkForeign(all, fw.writes, final, found, name)
	reportAnomalies(t, anomalies)
	classes := map[string]int{}
	for _, a := range anomalies {
		classes[anomalyClass(a, name)]++
	}
	for c, n := range classes {
		t.Logf("anomaly class (%d): %s", n, c)
	}

	var r faultReport
	r.Ops, r.Anomalies = len(all), len(anomalies)
	for _, op := range all {
		if op.Acked {
			r.Acked++
		}
	}
	for _, f := range transports {
		r.Stats = r.Stats.Add(f.Stats())
	}
	byState := map[itemstate.Kind]int{}
	injected := 0
	for _, w := range fw.writes {
		byState[w.State]++
	}
	for _, op := range all {
		if op.Injected > 0 {
			injected++
		}
	}
	t.Logf("foreign writes: %d (%d between a read and its write): %v", len(fw.writes), injected, byState)
	logFaults(t, r)
}

// decodeForeign reads the attributes the checker needs from a stored item,
// whatever the spelling of its numbers (a foreign state may hold "1E0").
func decodeForeign(item map[string]types.AttributeValue) (foreignItem, error) {
	var it foreignItem
	num := func(name string) (int64, error) {
		av, ok := item[name]
		if !ok {
			return 0, nil
		}
		switch v := av.(type) {
		case *types.AttributeValueMemberNULL:
			return 0, nil
		case *types.AttributeValueMemberN:
			f, err := strconv.ParseFloat(v.Value, 64)
			return int64(f), err
		}
		return 0, fmt.Errorf("attribute %s is %T, not a number", name, av)
	}
	var err error
	if it.Count, err = num("count"); err != nil {
		return it, err
	}
	if it.Adds, err = num("adds"); err != nil {
		return it, err
	}
	if it.Version, err = num("version"); err != nil {
		return it, err
	}
	if k, ok := item["key"].(*types.AttributeValueMemberS); ok {
		it.Key = k.Value
	}
	switch l := item["ops"].(type) {
	case nil, *types.AttributeValueMemberNULL:
	case *types.AttributeValueMemberL:
		for _, e := range l.Value {
			s, ok := e.(*types.AttributeValueMemberS)
			if !ok {
				return it, fmt.Errorf("ops holds %T", e)
			}
			it.Ops = append(it.Ops, s.Value)
		}
	default:
		return it, fmt.Errorf("ops is %T, not a list", l)
	}
	return it, nil
}

// TestFaultsForeignCheckerCatchesAnomalies shows that checkForeign is not a
// check that always passes: each kind of lost foreign write, resurrected
// state and lost acknowledged write is reported, and a clean history is not.
func TestFaultsForeignCheckerCatchesAnomalies(t *testing.T) {
	const table = "T"
	writes := []foreignWrite{
		{N: 1, Key: "a", State: itemstate.Version0, Call: 2, Return: 3},
		{N: 2, Key: "a", State: itemstate.Absent, Call: 6, Return: 7},
		{N: 3, Key: "b", State: itemstate.NullVersion, Call: 2, Return: 3},
	}
	clean := []foreignOp{
		{ID: "w0-0", Key: "a", Via: "update", Call: 1, Return: 4, Injected: 1, Acked: true, Saved: foreignItem{Count: 2, Ops: []string{"foreign-1", "w0-0"}}},
		{ID: "w0-1", Key: "a", Via: "transact", Call: 5, Return: 8, Injected: 2, Acked: true, Saved: foreignItem{Count: 1, Ops: []string{"w0-1"}}},
		{ID: "w0-2", Key: "a", Via: "update", Call: 9, Return: 10, Acked: true, Saved: foreignItem{Count: 2, Ops: []string{"w0-1", "w0-2"}}},
		{ID: "w1-0", Key: "b", Via: "update", Call: 4, Return: 5, Acked: true, Saved: foreignItem{Count: 2, Ops: []string{"foreign-3", "w1-0"}}},
		// Met foreign put 1, then wrote from absence after foreign delete 2.
		{ID: "w2-0", Key: "a", Via: "update", Call: 1, Return: 8, Injected: 1, Acked: true, Saved: foreignItem{Count: 1, Ops: []string{"w2-0"}}},
	}
	final := map[string]foreignItem{
		"a": {Count: 2, Ops: []string{"w0-1", "w0-2"}},
		"b": {Count: 2, Ops: []string{"foreign-3", "w1-0"}},
	}
	found := map[string]bool{"a": true, "b": true}
	if a := checkForeign(clean, writes, final, found, table); len(a) != 0 {
		t.Fatalf("a clean history has anomalies: %q", a)
	}
	for _, tc := range []struct {
		name  string
		edit  func(ops []foreignOp, final map[string]foreignItem)
		found string
	}{
		{"a write over the version-0 item it did not read", func(ops []foreignOp, _ map[string]foreignItem) {
			ops[0].Saved = foreignItem{Count: 1, Ops: []string{"w0-0"}}
		}, "that write is lost"},
		{"a write from absence over the put it met, before any delete", func(ops []foreignOp, _ map[string]foreignItem) {
			ops[4].Return = 5
		}, "w2-0 on \"a\": wrote ops [w2-0] over foreign write 1"},
		{"a state resurrected after a delete", func(ops []foreignOp, _ map[string]foreignItem) {
			ops[1].Saved = foreignItem{Count: 3, Ops: []string{"foreign-1", "w0-0", "w0-1"}}
		}, "older than foreign write 2"},
		{"the last foreign put lost", func(_ []foreignOp, final map[string]foreignItem) {
			final["b"] = foreignItem{Count: 1, Ops: []string{"w1-0"}}
		}, "do not start from the last foreign write 3"},
		{"an acknowledged write lost", func(_ []foreignOp, final map[string]foreignItem) {
			final["a"] = foreignItem{Count: 1, Ops: []string{"w0-1"}}
		}, "w0-2, called after the last foreign write, is missing"},
		{"an id twice", func(_ []foreignOp, final map[string]foreignItem) {
			final["a"] = foreignItem{Count: 3, Ops: []string{"w0-1", "w0-2", "w0-2"}}
		}, "twice"},
		{"an unexplained error", func(ops []foreignOp, _ map[string]foreignItem) {
			ops[2].Acked, ops[2].Err = false, errors.New("dynamo: decode table \"T\": strconv.ParseInt: parsing \"1.0\": invalid syntax")
		}, "unexplained error"},
	} {
		ops := slices.Clone(clean)
		fin := map[string]foreignItem{"a": final["a"], "b": final["b"]}
		tc.edit(ops, fin)
		a := checkForeign(ops, writes, fin, found, table)
		if !slices.ContainsFunc(a, func(s string) bool { return strings.Contains(s, tc.found) }) {
			t.Errorf("%s: anomalies %q; want one saying %q", tc.name, a, tc.found)
		}
	}
}

// anomalyClass is an anomaly without its operation, key and numbers, to
// count anomalies by kind.
func anomalyClass(a, table string) string {
	if _, e, ok := strings.Cut(a, "unexplained error: "); ok {
		a = "unexplained error: " + e
	} else if _, rest, ok := strings.Cut(a, ": "); ok && !strings.HasPrefix(a, "final") {
		a = rest
	}
	a = strings.ReplaceAll(a, table, "T")
	a = classDigits.ReplaceAllString(a, "N")
	a = classOps.ReplaceAllString(a, "[...]")
	return a
}

var (
	classDigits = regexp.MustCompile(`[0-9]+`)
	classOps    = regexp.MustCompile(`\[[^\]]*\]`)
)
