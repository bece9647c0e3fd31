package integration

// Linearizability of the fault suite's histories, checked by porcupine
// against small sequential models rather than by our own invariants.
//
// A linRecorder stamps each call with a monotonic counter when it is invoked
// and when it returns, and keeps its outcome: ok with what it returned, a
// typed failure that means "not applied" (linRefused), or unknown
// (linUnknown). An unknown call is pending forever (its return stamp is
// math.MaxInt64): it may take effect at any point after its call, or never.
// checkLinear partitions a history by key, caps each partition's length,
// runs porcupine on each with a timeout, and on a history that is not
// linearizable writes porcupine's visualisation (an HTML file) into the
// directory -faults.out names and fails the test with its path.
//
// The models read like the docs:
//
//   - regModel, a versioned register: Load (ConsistentRead), Save in each
//     behaviour, Update (a read-modify-write appending an id), Delete, and a
//     raw delete that returns the old item. An eventually consistent Load is
//     not linearizable and is not modelled: the suite's reads are consistent.
//   - ctrModel, a counter with a set: Add (increment and add to a set in one
//     UpdateItem) and consistent reads.
//   - leaseModel, a lease record with fencing tokens and the resource it
//     guards, as one object (a guarded write is a transaction over both):
//     acquire (taking over included: expiry is time, which the model does
//     not see, so any acquisition with a token above every earlier one is
//     legal), release, Holder reads, deletion of the record, guarded writes
//     (legal only while the record names the writer's token, unreleased)
//     and reads of the resource.
//   - logModel, an append-only log: Append, Read, Latest.

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/lease"
)

var faultOut = flag.String("faults.out", os.TempDir(), "directory for porcupine's visualisation of a history that is not linearizable")

// linUnknown is the output of a call whose outcome is unknown: it may have
// taken effect at any point after its call, or never.
type linUnknown struct{}

// linRefused is the output of a call that failed with an error meaning
// "not applied": it has no effect.
type linRefused struct{}

// linRecorder records calls for a linearizability check. It is safe for
// concurrent use.
type linRecorder struct {
	clock atomic.Int64
	mu    sync.Mutex
	ops   []porcupine.Operation
}

// linCall is one call in flight.
type linCall struct {
	r      *linRecorder
	client int
	input  any
	call   int64
}

// begin stamps the invocation of a call of client with input. On a nil
// recorder it returns nil, whose methods record nothing.
func (r *linRecorder) begin(client int, input any) *linCall {
	if r == nil {
		return nil
	}
	return &linCall{r: r, client: client, input: input, call: r.clock.Add(1)}
}

// now returns a fresh stamp of r's clock, for beginAt.
func (r *linRecorder) now() int64 { return r.clock.Add(1) }

// beginAt is begin for a call whose invocation the test does not see, only
// a moment before it, call (a stamp from now): the call is taken as invoked
// then, which only widens its interval.
func (r *linRecorder) beginAt(client int, input any, call int64) *linCall {
	return &linCall{r: r, client: client, input: input, call: call}
}

func (c *linCall) finish(output any, ret int64, meta string) {
	if c == nil {
		return
	}
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	c.r.ops = append(c.r.ops, porcupine.Operation{ClientId: c.client, Input: c.input, Call: c.call,
		Output: output, Return: ret, Metadata: meta})
}

// ok records that the call returned output.
func (c *linCall) ok(output any) { c.finish(output, c.stamp(), "") }

// refused records that the call failed with err, which means it was not
// applied.
func (c *linCall) refused(err error) { c.finish(linRefused{}, c.stamp(), shortErr(err)) }

func (c *linCall) stamp() int64 {
	if c == nil {
		return 0
	}
	return c.r.clock.Add(1)
}

// unknown records that the call failed with err, which leaves its outcome
// unknown: it is pending forever.
func (c *linCall) unknown(err error) {
	c.finish(linUnknown{}, math.MaxInt64, shortErr(err))
}

// okThenRead records that the call returned normally (output done) and
// what it returned as a separate read (input read, output seen) over the same
// interval: for calls that return the item as stored at some point after
// their own write — Add settling a lost answer with a read, a re-run that
// finds its IdempotencyKey — rather than as their write left it.
func (c *linCall) okThenRead(done, read, seen any) {
	if c == nil {
		return
	}
	ret := c.stamp()
	c.finish(done, ret, "")
	r := *c
	r.input = read
	r.finish(seen, ret, "what it returned")
}

// failed records err as refused when notApplied says so, else as unknown.
func (c *linCall) failed(err error, notApplied func(error) bool) {
	if notApplied(err) {
		c.refused(err)
	} else {
		c.unknown(err)
	}
}

// history returns the calls recorded so far.
func (r *linRecorder) history() []porcupine.Operation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ops)
}

func shortErr(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// mapperNotApplied reports whether err, returned by a mapper write, means
// that nothing was written: a version conflict, a failed condition or a
// missing item, without ErrUnknownOutcome. Anything else (the SDK gave up,
// a lost answer) may have been applied.
func mapperNotApplied(err error) bool {
	if errors.Is(err, dynamo.ErrUnknownOutcome) {
		return false
	}
	return errors.Is(err, dynamo.ErrVersionConflict) || errors.Is(err, dynamo.ErrConditionFailed) ||
		errors.Is(err, dynamo.ErrNotFound) || errors.Is(err, lease.ErrLost)
}

// linKeyed is an input that names the partition (the object) it belongs to.
type linKeyed interface {
	linKey() string
	readOnly() bool // a read: may be left out of a truncated history
}

// linCheck is what checkLinear found.
type linCheck struct {
	Histories int // partitions checked
	Ops       int // operations checked
	Pending   int // of which pending forever (outcome unknown)
	Pruned    int // calls of unknown outcome left out: nothing saw their effect
	Illegal   int // partitions that are not linearizable
	TimedOut  int // partitions whose check did not finish
	Truncated int // partitions longer than the cap, checked on their first part
	Longest   int // operations in the longest partition checked
	Elapsed   time.Duration
	Files     []string // visualisations of the illegal partitions
}

func (c linCheck) String() string {
	return fmt.Sprintf("%d histories (%d operations, %d pending forever, %d more unseen and left out, longest %d, %d truncated): %d not linearizable, %d timed out, checked in %v",
		c.Histories, c.Ops, c.Pending, c.Pruned, c.Longest, c.Truncated, c.Illegal, c.TimedOut, c.Elapsed.Round(time.Millisecond))
}

// Anomalies is the number of histories not shown linearizable.
func (c linCheck) Anomalies() int { return c.Illegal + c.TimedOut }

// linCap is the most operations of one partition checked at once.
const linCap = 2000

// checkLinear checks ops against model, partitioned by key, at most limit
// operations per partition and timeout per check; it logs a LINEAR line and
// fails t for each partition that is not shown linearizable, naming the
// visualisation it wrote into -faults.out.
func checkLinear(t *testing.T, what string, model porcupine.Model, prune linPrune, ops []porcupine.Operation, limit int, timeout time.Duration) linCheck {
	t.Helper()
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()) + "-" + what
	c, problems := linearize(name, model, prune, ops, limit, timeout)
	for _, p := range problems {
		t.Errorf("%s: %s (seed %d)", what, p, *faultSeed)
	}
	t.Logf("LINEAR %s seed=%d scale=%d %s: %v", t.Name(), *faultSeed, max(1, *faultScale), what, c)
	return c
}

// linPrune returns a partition without the calls of unknown outcome that
// cannot have taken effect before its end, and how many it left out; a
// history is linearizable if and only if its pruned one is (a call pending
// forever may always be placed last). Pending calls whose effect nothing
// observed make porcupine try them at every point: pruning them keeps the
// check's time bounded.
type linPrune func(h []porcupine.Operation) ([]porcupine.Operation, int)

// linearize checks ops against model, partition by partition (each pruned
// by prune, when not nil), and returns the figures and one line per
// partition not shown linearizable. The visualisation of an illegal
// partition goes to a file in -faults.out whose name starts with name.
func linearize(name string, model porcupine.Model, prune linPrune, ops []porcupine.Operation, limit int, timeout time.Duration) (linCheck, []string) {
	start := time.Now()
	var c linCheck
	var problems []string
	parts := map[string][]porcupine.Operation{}
	for _, op := range ops {
		k := op.Input.(linKeyed).linKey()
		parts[k] = append(parts[k], op)
	}
	keys := make([]string, 0, len(parts))
	for k := range parts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	model.Partition = nil
	for _, k := range keys {
		h := parts[k]
		if prune != nil {
			var n int
			h, n = prune(h)
			c.Pruned += n
		}
		if len(h) > limit {
			h = truncateHistory(h, limit)
			c.Truncated++
		}
		c.Histories++
		c.Ops += len(h)
		c.Longest = max(c.Longest, len(h))
		for _, op := range h {
			if op.Return == math.MaxInt64 {
				c.Pending++
			}
		}
		res, info := porcupine.CheckOperationsVerbose(model, h, timeout)
		setUnions.Clear() // the memo of one check
		switch res {
		case porcupine.Illegal:
			c.Illegal++
			msg := fmt.Sprintf("%q: the history of %d operations is not linearizable", k, len(h))
			f, err := os.CreateTemp(*faultOut, name+"-*.html")
			if err == nil {
				f.Close()
				err = porcupine.VisualizePath(model, info, f.Name())
			}
			if err != nil {
				msg += fmt.Sprintf("; writing porcupine's visualisation failed: %v", err)
			} else {
				c.Files = append(c.Files, f.Name())
				msg += "; porcupine's visualisation: " + f.Name()
				if txt := strings.TrimSuffix(f.Name(), ".html") + ".txt"; os.WriteFile(txt, []byte(historyText(model, h, info)), 0o644) == nil {
					c.Files = append(c.Files, txt)
					msg += " (as text: " + txt + ")"
				}
			}
			problems = append(problems, msg)
		case porcupine.Unknown:
			c.TimedOut++
			problems = append(problems, fmt.Sprintf("%q: the linearizability check of %d operations did not finish within %v", k, len(h), timeout))
		}
	}
	c.Elapsed = time.Since(start)
	return c, problems
}

// historyText is h as text, by call, and the longest linearization of it
// porcupine found, with the state after each step: the call after it is
// where the history stops being explainable.
func historyText(model porcupine.Model, h []porcupine.Operation, info porcupine.LinearizationInfo) string {
	var b strings.Builder
	stamp := func(t int64) string {
		if t == math.MaxInt64 {
			return "∞"
		}
		return strconv.FormatInt(t, 10)
	}
	h = slices.Clone(h)
	sort.SliceStable(h, func(i, j int) bool { return h[i].Call < h[j].Call })
	fmt.Fprintf(&b, "history (%d operations, by call):\n", len(h))
	for _, op := range h {
		fmt.Fprintf(&b, "  [%s, %s] client %d: %s  %v\n", stamp(op.Call), stamp(op.Return), op.ClientId,
			model.DescribeOperation(op.Input, op.Output), op.Metadata)
	}
	for _, part := range info.PartialLinearizationsOperations() {
		longest := []porcupine.Operation{}
		for _, l := range part {
			if len(l) > len(longest) {
				longest = l
			}
		}
		fmt.Fprintf(&b, "longest linearization found (%d operations):\n", len(longest))
		state := model.Init()
		for _, op := range longest {
			_, state = model.Step(state, op.Input, op.Output)
			fmt.Fprintf(&b, "  [%s, %s] %s  ⇒ %s\n", stamp(op.Call), stamp(op.Return),
				model.DescribeOperation(op.Input, op.Output), model.DescribeState(state))
		}
	}
	return b.String()
}

// truncateHistory returns the first part of h, the calls before a cut
// chosen so that about limit remain: calls that returned before the cut are
// kept; calls that were in flight at the cut become pending forever with an
// unknown outcome (writes) or are left out (reads); calls after the cut are
// left out. Every linearization of h gives one of the result, so a result
// that is not linearizable means h is not.
func truncateHistory(h []porcupine.Operation, limit int) []porcupine.Operation {
	h = slices.Clone(h)
	sort.Slice(h, func(i, j int) bool { return h[i].Call < h[j].Call })
	cut := h[limit-1].Call
	var out []porcupine.Operation
	for _, op := range h {
		switch {
		case op.Call > cut:
		case op.Return <= cut:
			out = append(out, op)
		case op.Input.(linKeyed).readOnly():
		default:
			op.Output, op.Return = linUnknown{}, math.MaxInt64
			out = append(out, op)
		}
	}
	return out
}

// outcome sorts a write's output: ok (returned normally), refused (not
// applied) or unknown (may be applied).
func outcome(output any) (ok, unknown bool) {
	switch output.(type) {
	case linRefused:
		return false, false
	case linUnknown:
		return false, true
	}
	return true, false
}

func describeOutput(output any) string {
	switch output.(type) {
	case linRefused:
		return "refused"
	case linUnknown:
		return "unknown"
	case nil:
		return "ok"
	}
	return fmt.Sprint(output)
}

// --- the versioned register ---

// regKind is an operation of the versioned register.
type regKind int

const (
	regLoad   regKind = iota // Load with ConsistentRead; output regState
	regSave                  // Save holding Held with Behavior, writing Value; output the saved version (int64)
	regUpdate                // Update appending ID to the value; output the saved regState
	regDelete                // Delete holding Held (SaveClobber: no condition); output nil
	regTake                  // an unconditional delete returning the old item (ALL_OLD); output regState
)

// regInput is an operation on the register of Key.
type regInput struct {
	Key      string
	Kind     regKind
	Behavior dynamo.SaveBehavior
	Held     int64  // the version the caller holds (0: none, the item is new)
	Value    string // what a Save writes
	ID       string // what an Update appends
}

func (in regInput) linKey() string { return in.Key }
func (in regInput) readOnly() bool { return in.Kind == regLoad }

// regState is an item as the register holds it: absent, or at a version
// with a value (for items whose ops list is the value: the ids, space
// separated).
type regState struct {
	Found   bool
	Version int64
	Value   string
}

// regAppend returns value with id appended.
func regAppend(value, id string) string {
	if value == "" {
		return id
	}
	return value + " " + id
}

// regModel is the mapper's versioned register, per key:
//
//   - a Load returns the item as it is;
//   - a Save holding version h (0: a new item) applies only when the stored
//     version is h (h = 0: the item is absent), and stores version h+1 —
//     except SaveClobber, which has no condition and stores the version
//     after the stored one;
//   - an Update reads, appends its id, and stores version+1 (1 when it
//     creates the item), atomically;
//   - a Delete holding h applies only at version h (SaveClobber: always);
//     a raw delete removes whatever is there and returns it.
//
// A refused write (version conflict, failed condition) has no effect; a
// write with an unknown outcome applies at some point after its call, or
// never.
var regModel = porcupine.Model{
	Init: func() any { return regState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in := state.(regState), input.(regInput)
		if in.Kind == regLoad {
			got, isState := output.(regState)
			return isState && got == s, s
		}
		ok, unknown := outcome(output)
		if !ok && !unknown {
			return true, s
		}
		holds := in.Behavior == dynamo.SaveClobber ||
			(in.Held == 0 && !s.Found) || (in.Held != 0 && s.Found && s.Version == in.Held)
		switch in.Kind {
		case regSave:
			next := regState{Found: true, Version: in.Held + 1, Value: in.Value}
			if in.Behavior == dynamo.SaveClobber {
				next.Version = s.Version + 1
			}
			if unknown {
				return true, pick(holds, next, s)
			}
			return holds && output == next.Version, next
		case regUpdate:
			next := regState{Found: true, Version: s.Version + 1, Value: regAppend(s.Value, in.ID)}
			if unknown {
				return true, next
			}
			return output == next, next
		case regDelete:
			if unknown {
				return true, pick(holds, regState{}, s)
			}
			return holds, regState{}
		case regTake:
			if unknown {
				return true, regState{}
			}
			return output == s, regState{}
		}
		return false, s
	},
	DescribeOperation: func(input, output any) string {
		in := input.(regInput)
		out := describeOutput(output)
		switch in.Kind {
		case regLoad:
			return fmt.Sprintf("load(%s) → %s", in.Key, out)
		case regSave:
			return fmt.Sprintf("save(%s, %v holding v%d, %q) → %s", in.Key, in.Behavior, in.Held, in.Value, out)
		case regUpdate:
			return fmt.Sprintf("update(%s, +%s) → %s", in.Key, in.ID, out)
		case regDelete:
			return fmt.Sprintf("delete(%s holding v%d) → %s", in.Key, in.Held, out)
		}
		return fmt.Sprintf("take(%s) → %s", in.Key, out)
	},
	DescribeState: func(state any) string { return fmt.Sprint(state) },
}

// regPruneUpdates is the register's linPrune for a partition of Updates,
// Loads and raw deletes only (each of which returns the whole item), as the
// fault suite's: an Update of unknown outcome whose id no output holds was
// not applied before the end. Had it been, every output from then on would
// hold its id until a raw delete, whose output holds it too. A partition
// with other calls is returned whole.
func regPruneUpdates(h []porcupine.Operation) ([]porcupine.Operation, int) {
	seen := map[string]bool{}
	for _, op := range h {
		switch op.Input.(regInput).Kind {
		case regUpdate, regLoad, regTake:
		default:
			return h, 0
		}
		if st, ok := op.Output.(regState); ok {
			for _, id := range strings.Fields(st.Value) {
				seen[id] = true
			}
		}
	}
	out := h[:0:0]
	for _, op := range h {
		in := op.Input.(regInput)
		if _, unknown := op.Output.(linUnknown); unknown && in.Kind == regUpdate && !seen[in.ID] {
			continue
		}
		out = append(out, op)
	}
	return out, len(h) - len(out)
}

func pick[T any](cond bool, a, b T) T {
	if cond {
		return a
	}
	return b
}

// --- the counter with a set ---

// ctrInput is an operation on the counter of Key: an Add of N and of the
// elements Elems (sorted, space separated), or (Read) a consistent Load.
// Once is the call's IdempotencyKey, if any (an Update with one changes the
// item as its Add would). A read that is what an Add returned (okThenRead)
// has the Add's elements as Must: it comes after the Add's write.
type ctrInput struct {
	Key   string
	Read  bool
	N     int64
	Elems string
	Once  string
	Must  string
}

func (in ctrInput) linKey() string { return in.Key }
func (in ctrInput) readOnly() bool { return in.Read }

// ctrState is a counter item: its count, its set (sorted, space separated)
// and the idempotency keys applied (sorted, space separated). The item's
// window forgets a key after dynamo.IdempotencyWindow later keyed writes;
// the model's never does, which holds while the runs of one change come
// within the window, as the suite's do (its re-runs follow at once): a key
// re-applied after that fails the check. A set, not the window's order,
// keeps the states of writes in either order equal, and the check fast.
// Outputs are ctrStates without the keys.
type ctrState struct {
	Found bool
	Count int64
	Set   string
	Keys  string
}

// view is s as a caller sees it: without the window.
func (s ctrState) view() ctrState { s.Keys = ""; return s }

// setHas reports whether the sorted, space-separated set holds every
// element of elems.
func setHas(set, elems string) bool {
	for _, e := range strings.Fields(elems) {
		if !strings.Contains(" "+set+" ", " "+e+" ") {
			return false
		}
	}
	return true
}

// setUnions memoizes setUnion for the model's steps: porcupine's search
// takes the same step again and again.
var setUnions sync.Map

// setUnionMemo is setUnion, memoized.
func setUnionMemo(a, b string) string {
	if setHas(a, b) {
		return a
	}
	k := a + "|" + b
	if u, ok := setUnions.Load(k); ok {
		return u.(string)
	}
	u := setUnion(a, b)
	setUnions.Store(k, u)
	return u
}

// setUnion returns the union of two sorted, space-separated sets.
func setUnion(a, b string) string {
	m := map[string]bool{}
	for _, e := range strings.Fields(a + " " + b) {
		m[e] = true
	}
	return strings.Join(slices.Sorted(func(yield func(string) bool) {
		for e := range m {
			if !yield(e) {
				return
			}
		}
	}), " ")
}

// ctrApplied is the output of an Add that returned normally, recorded with
// okThenRead: what it returned is a read of its own.
type ctrApplied struct{}

// ctrModel is Table.Add's counter with a set, per key: an Add adds N to the
// count and its elements to the set in one step, creating the item, and
// returns the item as stored afterwards (output ctrApplied: recorded as a
// read of its own, since "afterwards" may be after later writes); a read
// returns it as it is. A call with an IdempotencyKey already applied
// changes nothing and returns the item as stored.
var ctrModel = porcupine.Model{
	Init: func() any { return ctrState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in := state.(ctrState), input.(ctrInput)
		if in.Read {
			got, isState := output.(ctrState)
			return isState && got == s.view() && setHas(s.Set, in.Must), s
		}
		ok, unknown := outcome(output)
		if !ok && !unknown {
			return true, s
		}
		_, applied := output.(ctrApplied)
		if in.Once != "" && setHas(s.Keys, in.Once) {
			return unknown || applied || output == s.view(), s
		}
		next := ctrState{Found: true, Count: s.Count + in.N, Set: setUnionMemo(s.Set, in.Elems), Keys: s.Keys}
		if in.Once != "" {
			next.Keys = setUnionMemo(s.Keys, in.Once)
		}
		return unknown || applied || output == next.view(), next
	},
	DescribeOperation: func(input, output any) string {
		in := input.(ctrInput)
		if in.Read {
			return fmt.Sprintf("read(%s) → %s", in.Key, describeOutput(output))
		}
		return fmt.Sprintf("add(%s, %d, {%s}, key %q) → %s", in.Key, in.N, in.Elems, in.Once, describeOutput(output))
	},
	DescribeState: func(state any) string { return fmt.Sprint(state) },
}

// ctrPrune is the counter's linPrune:
//
//   - sets only grow, so a call of unknown outcome whose elements no
//     output's set holds was not applied before the end: it is left out;
//   - of the calls of unknown outcome with one IdempotencyKey, the first
//     called stands for the others (it may take effect wherever a later one
//     could; the others then find its key): they are left out;
//   - when a call with that key returned normally after the first was
//     called, the key was applied by then, so the first took effect before
//     that return or finds its key: its return is set to that one's.
//
// The last two hold while a key stays in the window between the runs of
// one change (fewer than dynamo.IdempotencyWindow keyed writes come
// between), as in TestFaultsIdempotentMetering, whose runs follow at once.
func ctrPrune(h []porcupine.Operation) ([]porcupine.Operation, int) {
	seen := map[string]bool{}
	first := map[string]int64{} // idempotency key → call of its first unknown call
	for _, op := range h {
		if st, ok := op.Output.(ctrState); ok {
			for _, e := range strings.Fields(st.Set) {
				seen[e] = true
			}
		}
		in := op.Input.(ctrInput)
		if _, unknown := op.Output.(linUnknown); unknown && in.Once != "" {
			if c, ok := first[in.Once]; !ok || op.Call < c {
				first[in.Once] = op.Call
			}
		}
	}
	applied := map[string]int64{} // idempotency key → return of its first normal return after first[key]
	for _, op := range h {
		in := op.Input.(ctrInput)
		c, ok := first[in.Once]
		_, isState := op.Output.(ctrState)
		_, isApplied := op.Output.(ctrApplied)
		if !ok || !(isState || isApplied) || in.Read || op.Call < c {
			continue
		}
		if r, ok := applied[in.Once]; !ok || op.Return < r {
			applied[in.Once] = op.Return
		}
	}
	out := h[:0:0]
	for _, op := range h {
		in := op.Input.(ctrInput)
		if _, unknown := op.Output.(linUnknown); unknown {
			elems := strings.Fields(in.Elems)
			if len(elems) > 0 && !slices.ContainsFunc(elems, func(e string) bool { return seen[e] }) {
				continue
			}
			if in.Once != "" && op.Call != first[in.Once] {
				continue
			}
			if r, ok := applied[in.Once]; ok && in.Once != "" {
				op.Return = r
			}
		}
		out = append(out, op)
	}
	return out, len(h) - len(out)
}

// --- the lease register with fencing tokens ---

// leaseKind is an operation of the lease model.
type leaseKind int

const (
	lkAcquire leaseKind = iota // Acquire/TryAcquire by Owner; output the token (int64)
	lkRenew                    // a heartbeat of Owner's lease Token; output nil
	lkRelease                  // Release of Owner's lease Token; output nil
	lkHolder                   // Client.Holder; output leaseView
	lkDelete                   // the record deleted (ALL_OLD); output leaseView of what was there
	lkWrite                    // a guarded write of Owner's Token, from resource From to To; output nil
	lkReadRes                  // a consistent read of the resource; output its value (string)
)

// leaseInput is an operation on the lease of Key and the resource it guards.
type leaseInput struct {
	Key      string
	Kind     leaseKind
	Owner    string
	Token    int64
	From, To string // lkWrite: the resource's value read, and written
}

func (in leaseInput) linKey() string { return in.Key }
func (in leaseInput) readOnly() bool { return in.Kind == lkHolder || in.Kind == lkReadRes }

// leaseView is a lease record as read: absent, or naming a holder and
// token, released or not.
type leaseView struct {
	Found    bool   `dynamo:"-"`
	Owner    string `dynamo:"owner"`
	Token    int64  `dynamo:"token"`
	Released bool   `dynamo:"released"`
}

// leaseState is the record, the highest token ever given (token records
// outlive deleted records), and the resource. Token -1 is a record written
// by an Acquire whose outcome is unknown: some token above Max, not yet
// seen, released or not.
type leaseState struct {
	Rec leaseView
	Max int64
	Res string
}

// leaseResolve returns whether the record of s can read as v, and the state
// in which it does (an unknown acquisition's token seen).
func leaseResolve(s leaseState, v leaseView) (bool, leaseState) {
	if s.Rec.Token != -1 {
		return s.Rec == v, s
	}
	if !v.Found || v.Owner != s.Rec.Owner || v.Token <= s.Max {
		return false, s
	}
	s.Rec, s.Max = v, v.Token
	return true, s
}

// leaseModel is the lease package's record with fencing tokens, per key,
// together with the resource its guarded writes change:
//
//   - an acquisition (taking a free key, or taking over: when a lease has
//     expired is time, which the model does not see) is legal with a token
//     above every token given before, and makes its owner the holder;
//   - a renewal (heartbeat) succeeds only while the record names the
//     lease's owner and token, unreleased; a release marks it released;
//   - Holder returns the record as it is; a deletion removes it (tokens go
//     on from the highest given);
//   - a guarded write applies only while the record names the writer's
//     owner and token, unreleased, and the resource holds what the write was
//     computed from; it is refused otherwise (ErrLost, a conflict);
//   - a read of the resource returns it as it is.
var leaseModel = porcupine.Model{
	Init: func() any { return leaseState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in := state.(leaseState), input.(leaseInput)
		held := s.Rec.Found && !s.Rec.Released && s.Rec.Owner == in.Owner && s.Rec.Token == in.Token
		switch in.Kind {
		case lkHolder:
			v, isView := output.(leaseView)
			if !isView {
				return false, s
			}
			return leaseResolve(s, v)
		case lkReadRes:
			return output == s.Res, s
		}
		ok, unknown := outcome(output)
		if !ok && !unknown {
			return true, s
		}
		switch in.Kind {
		case lkAcquire:
			if unknown {
				s.Rec = leaseView{Found: true, Owner: in.Owner, Token: -1}
				return true, s
			}
			t, _ := output.(int64)
			if t <= s.Max {
				return false, s
			}
			s.Rec, s.Max = leaseView{Found: true, Owner: in.Owner, Token: t}, t
			return true, s
		case lkRenew:
			return unknown || held, s
		case lkRelease:
			if held {
				s.Rec.Released = true
			}
			return true, s
		case lkDelete:
			if unknown {
				s.Rec = leaseView{}
				return true, s
			}
			v, isView := output.(leaseView)
			if !isView {
				return false, s
			}
			legal, s := leaseResolve(s, v)
			s.Rec = leaseView{}
			return legal, s
		case lkWrite:
			applies := held && s.Res == in.From
			if applies {
				s.Res = in.To
			}
			return unknown || applies, s
		}
		return false, s
	},
	DescribeOperation: func(input, output any) string {
		in := input.(leaseInput)
		out := describeOutput(output)
		switch in.Kind {
		case lkAcquire:
			return fmt.Sprintf("acquire(%s, %s) → %s", in.Key, in.Owner, out)
		case lkRenew:
			return fmt.Sprintf("renew(%s, %s #%d) → %s", in.Key, in.Owner, in.Token, out)
		case lkRelease:
			return fmt.Sprintf("release(%s, %s #%d) → %s", in.Key, in.Owner, in.Token, out)
		case lkHolder:
			return fmt.Sprintf("holder(%s) → %s", in.Key, out)
		case lkDelete:
			return fmt.Sprintf("delete record(%s) → %s", in.Key, out)
		case lkWrite:
			return fmt.Sprintf("guarded write(%s, %s #%d, %q → %q) → %s", in.Key, in.Owner, in.Token, in.From, in.To, out)
		}
		return fmt.Sprintf("read resource(%s) → %q", in.Key, out)
	},
	DescribeState: func(state any) string { return fmt.Sprintf("%+v", state) },
}

// leaseHiddenTakes returns h with the takes an Acquire call made but did
// not report: a take whose record was deleted before the call could
// recognise it as its own is followed by another take, and the call returns
// only the last token. A deletion (or Holder read) that saw a record with a
// token no call returned, of an owner whose Acquire was in flight then,
// shows such a take: it is added as a call of its own, over that Acquire's
// interval, returning the token seen. A record that no Acquire in flight
// explains is left for the check to refuse.
func leaseHiddenTakes(h []porcupine.Operation) ([]porcupine.Operation, int) {
	known := map[int64]bool{}
	var acquires []porcupine.Operation
	for _, op := range h {
		if in := op.Input.(leaseInput); in.Kind == lkAcquire {
			acquires = append(acquires, op)
			if t, ok := op.Output.(int64); ok {
				known[t] = true
			}
		}
	}
	out := slices.Clone(h)
	added := 0
	for _, op := range h {
		in := op.Input.(leaseInput)
		v, isView := op.Output.(leaseView)
		if (in.Kind != lkDelete && in.Kind != lkHolder) || !isView || !v.Found || known[v.Token] {
			continue
		}
		var during []porcupine.Operation
		for _, a := range acquires {
			if a.Input.(leaseInput).Owner == v.Owner && a.Call < op.Return && a.Return > op.Call {
				during = append(during, a)
			}
		}
		if len(during) != 1 {
			continue
		}
		a := during[0]
		a.Output, a.Metadata = v.Token, "a take this Acquire did not report (its record was deleted)"
		out = append(out, a)
		known[v.Token] = true
		added++
	}
	return out, added
}

// --- the append-only log ---

// logKind is an operation of the log model.
type logKind int

const (
	logAppendOp logKind = iota // Append of Data; output the version (int64)
	logReadOp                  // Read of Version; output the data (string)
	logLatestOp                // Latest; output the version (int64)
)

// logInput is an operation on the log Name.
type logInput struct {
	Name    string
	Kind    logKind
	Data    string
	Version int64
}

func (in logInput) linKey() string { return in.Name }
func (in logInput) readOnly() bool { return in.Kind != logAppendOp }

// logModelState is the log's entries, newline separated (payloads hold no
// newline), and their number.
type logModelState struct {
	N       int64
	Entries string
}

func (s logModelState) entry(v int64) (string, bool) {
	if v < 1 || v > s.N {
		return "", false
	}
	return strings.Split(s.Entries, "\n")[v-1], true
}

// logPruneAppends is the log's linPrune: when the history ends with a
// Latest called after every Append was called, and Reads of every version
// up to it called after it returned, an Append of unknown outcome whose data
// no Read returned was not applied before that Latest: had it been, a
// version up to it would hold its data, and its final Read would have
// returned that. Otherwise the history is returned whole.
func logPruneAppends(h []porcupine.Operation) ([]porcupine.Operation, int) {
	var last *porcupine.Operation
	var lastAppend int64
	for i := range h {
		switch in := h[i].Input.(logInput); in.Kind {
		case logLatestOp:
			if last == nil || h[i].Call > last.Call {
				last = &h[i]
			}
		case logAppendOp:
			lastAppend = max(lastAppend, h[i].Call)
		}
	}
	if last == nil || last.Call < lastAppend {
		return h, 0
	}
	n, _ := last.Output.(int64)
	final := map[int64]bool{}
	seen := map[string]bool{}
	for _, op := range h {
		in := op.Input.(logInput)
		if in.Kind != logReadOp {
			continue
		}
		if d, ok := op.Output.(string); ok {
			seen[d] = true
			if op.Call > last.Return {
				final[in.Version] = true
			}
		}
	}
	for v := int64(1); v <= n; v++ {
		if !final[v] {
			return h, 0
		}
	}
	out := h[:0:0]
	for _, op := range h {
		in := op.Input.(logInput)
		if _, unknown := op.Output.(linUnknown); unknown && in.Kind == logAppendOp && !seen[in.Data] {
			continue
		}
		out = append(out, op)
	}
	return out, len(h) - len(out)
}

// logModel is commitlog.Log: an Append claims the next version (Latest+1)
// and that version holds its data for ever; Read returns a version's data;
// Latest returns the highest version claimed.
var logModel = porcupine.Model{
	Init: func() any { return logModelState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in := state.(logModelState), input.(logInput)
		switch in.Kind {
		case logReadOp:
			d, found := s.entry(in.Version)
			return found && output == d, s
		case logLatestOp:
			return output == s.N, s
		}
		ok, unknown := outcome(output)
		if !ok && !unknown {
			return true, s
		}
		next := logModelState{N: s.N + 1, Entries: s.Entries + "\n" + in.Data}
		if s.N == 0 {
			next.Entries = in.Data
		}
		return unknown || output == next.N, next
	},
	DescribeOperation: func(input, output any) string {
		in := input.(logInput)
		out := describeOutput(output)
		switch in.Kind {
		case logReadOp:
			return fmt.Sprintf("read(%s, %d) → %s", in.Name, in.Version, out)
		case logLatestOp:
			return fmt.Sprintf("latest(%s) → %s", in.Name, out)
		}
		return fmt.Sprintf("append(%s, %s) → %s", in.Name, in.Data, out)
	},
	DescribeState: func(state any) string {
		s := state.(logModelState)
		return fmt.Sprintf("%d: %s", s.N, strings.ReplaceAll(s.Entries, "\n", " | "))
	},
}

// --- the models' own tests: a broken client's history is refused ---

// lop is one operation of a hand-built history: client, call and return
// stamps (ret 0: pending forever), input and output.
func lop(client int, call, ret int64, input, output any) porcupine.Operation {
	if ret == 0 {
		ret, output = math.MaxInt64, linUnknown{}
	}
	return porcupine.Operation{ClientId: client, Call: call, Return: ret, Input: input, Output: output}
}

// linCase is a hand-built history and whether the model must accept it.
type linCase struct {
	name  string
	ops   []porcupine.Operation
	legal bool
}

// runLinCases checks each case with model, pruned by prune when not nil.
func runLinCases(t *testing.T, model porcupine.Model, prune linPrune, cases []linCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, problems := linearize("model-test", model, prune, tc.ops, linCap, 5*time.Second)
			for _, f := range c.Files {
				os.Remove(f)
			}
			switch {
			case c.TimedOut > 0:
				t.Fatalf("check timed out: %q", problems)
			case tc.legal && c.Illegal > 0:
				t.Errorf("a correct history was refused: %q", problems)
			case !tc.legal && c.Illegal == 0:
				t.Errorf("a broken client's history was accepted (%v)", c)
			}
		})
	}
}

// TestLinearRegisterRefusesBrokenClients: the versioned register accepts
// what the mapper promises — an Update whose answer was lost applied once,
// or not at all — and refuses what a broken client does: an Update resent
// blindly after its answer was lost (its id twice), a Save resent without
// its condition over another client's acknowledged write, a Load from a
// stale cache, a Delete that "succeeded" on a version it did not hold.
func TestLinearRegisterRefusesBrokenClients(t *testing.T) {
	upd := func(id string) regInput { return regInput{Key: "k", Kind: regUpdate, ID: id} }
	load := regInput{Key: "k", Kind: regLoad}
	st := func(v int64, value string) regState { return regState{Found: true, Version: v, Value: value} }
	save := func(b dynamo.SaveBehavior, held int64, value string) regInput {
		return regInput{Key: "k", Kind: regSave, Behavior: b, Held: held, Value: value}
	}
	cases := []linCase{
		{"updates and reads", []porcupine.Operation{
			lop(0, 1, 4, upd("x"), st(1, "x")),
			lop(1, 2, 5, upd("y"), st(2, "x y")),
			lop(2, 3, 3, load, st(1, "x")),
			lop(2, 6, 7, load, st(2, "x y")),
		}, true},
		{"lost answer, not applied", []porcupine.Operation{
			lop(0, 1, 0, upd("x"), nil),
			lop(1, 2, 3, load, regState{}),
			lop(1, 4, 5, upd("y"), st(1, "y")),
		}, true},
		{"lost answer, applied later", []porcupine.Operation{
			lop(0, 1, 0, upd("x"), nil),
			lop(1, 2, 3, load, regState{}),
			lop(1, 4, 5, upd("y"), st(2, "x y")),
		}, true},
		{"blind resend of a lost update", []porcupine.Operation{
			// The first attempt applied, its answer was lost; the
			// client resent the write blindly and reported success.
			lop(0, 1, 4, upd("x"), st(2, "x x")),
			lop(1, 5, 6, load, st(2, "x x")),
		}, false},
		{"blind resend of a lost update, failed", []porcupine.Operation{
			// Reported as unknown, but applied twice all the same.
			lop(0, 1, 0, upd("x"), nil),
			lop(1, 5, 6, load, st(2, "x x")),
		}, false},
		{"versioned saves", []porcupine.Operation{
			lop(0, 1, 2, save(dynamo.SaveUpdate, 0, "a"), int64(1)),
			lop(1, 3, 4, save(dynamo.SavePut, 1, "b"), int64(2)),
			lop(0, 5, 6, save(dynamo.SaveUpdate, 1, "c"), linRefused{}),
			lop(0, 7, 8, save(dynamo.SaveClobber, 1, "d"), int64(3)),
			lop(2, 9, 10, load, st(3, "d")),
		}, true},
		{"save resent without its condition", []porcupine.Operation{
			// A's create was applied and its answer lost; B saved over
			// it; A's resend, without the condition, put its item back.
			lop(0, 1, 6, save(dynamo.SaveUpdate, 0, "a"), int64(1)),
			lop(1, 3, 4, save(dynamo.SaveUpdate, 1, "b"), int64(2)),
			lop(2, 7, 8, load, st(1, "a")),
		}, false},
		{"read from a stale cache", []porcupine.Operation{
			lop(0, 1, 2, upd("x"), st(1, "x")),
			lop(0, 3, 4, upd("y"), st(2, "x y")),
			lop(1, 5, 6, load, st(1, "x")),
		}, false},
		{"delete holding the wrong version", []porcupine.Operation{
			lop(0, 1, 2, upd("x"), st(1, "x")),
			lop(0, 3, 4, upd("y"), st(2, "x y")),
			lop(1, 5, 6, regInput{Key: "k", Kind: regDelete, Held: 1}, nil),
		}, false},
		{"raw delete returns what is there", []porcupine.Operation{
			lop(0, 1, 2, upd("x"), st(1, "x")),
			lop(1, 3, 4, regInput{Key: "k", Kind: regTake}, st(1, "x")),
			lop(0, 5, 6, upd("y"), st(1, "y")),
		}, true},
		{"an update computed from a deleted incarnation", []porcupine.Operation{
			lop(0, 1, 2, upd("x"), st(1, "x")),
			lop(1, 3, 4, regInput{Key: "k", Kind: regTake}, st(1, "x")),
			lop(0, 5, 6, upd("y"), st(2, "x y")),
		}, false},
		{"lost answer, applied, deleted", []porcupine.Operation{
			lop(0, 1, 0, upd("x"), nil),
			lop(1, 2, 0, upd("y"), nil),
			lop(2, 3, 4, regInput{Key: "k", Kind: regTake}, st(1, "x")),
			lop(3, 5, 6, load, regState{}),
		}, true},
		{"lost answer, applied after a delete", []porcupine.Operation{
			lop(0, 1, 0, upd("x"), nil),
			lop(2, 3, 4, regInput{Key: "k", Kind: regTake}, regState{}),
			lop(3, 5, 6, load, st(1, "x")),
		}, true},
	}
	runLinCases(t, regModel, nil, cases)
	// Pruning the Updates nothing saw changes no verdict.
	t.Run("pruned", func(t *testing.T) {
		var onlyUpdates []linCase
		for _, tc := range cases {
			if !slices.ContainsFunc(tc.ops, func(op porcupine.Operation) bool {
				k := op.Input.(regInput).Kind
				return k == regSave || k == regDelete
			}) {
				onlyUpdates = append(onlyUpdates, tc)
			}
		}
		runLinCases(t, regModel, regPruneUpdates, onlyUpdates)
		pruned, n := regPruneUpdates(cases[1].ops)
		if n != 1 || len(pruned) != 2 {
			t.Errorf("an unseen Update of unknown outcome: pruned %d of %d, want 1 of 3", n, len(cases[1].ops))
		}
	})
}

// TestLinearCounterRefusesBrokenClients: an Add whose answer was lost counts
// once or not at all; a blind resend counts twice and is refused, as is a
// read from a stale cache.
func TestLinearCounterRefusesBrokenClients(t *testing.T) {
	add := func(n int64, elems string) ctrInput { return ctrInput{Key: "k", N: n, Elems: elems} }
	read := ctrInput{Key: "k", Read: true}
	st := func(n int64, set string) ctrState { return ctrState{Found: true, Count: n, Set: set} }
	cases := []linCase{
		{"adds and reads", []porcupine.Operation{
			lop(0, 1, 4, add(1, "a"), st(1, "a")),
			lop(1, 2, 5, add(2, "b"), st(3, "a b")),
			lop(2, 6, 7, read, st(3, "a b")),
		}, true},
		{"lost answer, applied once", []porcupine.Operation{
			lop(0, 1, 0, add(1, "a"), nil),
			lop(1, 2, 3, add(1, "b"), st(1, "b")),
			lop(2, 4, 5, read, st(2, "a b")),
		}, true},
		{"blind resend of a lost add", []porcupine.Operation{
			lop(0, 1, 0, add(1, "a"), nil),
			lop(2, 4, 5, read, st(2, "a")),
		}, false},
		{"read from a stale cache", []porcupine.Operation{
			lop(0, 1, 2, add(1, "a"), st(1, "a")),
			lop(0, 3, 4, add(1, "b"), st(2, "a b")),
			lop(1, 5, 6, read, st(1, "a")),
		}, false},
	}
	once := func(id string) ctrInput { return ctrInput{Key: "k", N: 1, Elems: id, Once: id} }
	cases = append(cases, []linCase{
		{"idempotent re-runs", []porcupine.Operation{
			lop(0, 1, 0, once("e1"), nil),
			lop(0, 2, 3, once("e1"), st(1, "e1")),
			lop(1, 4, 5, once("e2"), st(2, "e1 e2")),
			lop(0, 6, 7, once("e1"), st(2, "e1 e2")), // redelivered: finds its key, returns the item as stored
			lop(2, 8, 9, read, st(2, "e1 e2")),
		}, true},
		{"returned as stored after a later write", []porcupine.Operation{
			lop(0, 1, 6, once("e1"), ctrApplied{}),
			lop(0, 1, 6, ctrInput{Key: "k", Read: true, Must: "e1"}, st(2, "e1 e2")),
			lop(1, 2, 3, once("e2"), st(1, "e2")),
		}, true},
		{"returned as stored before its write", []porcupine.Operation{
			lop(0, 1, 6, once("e1"), ctrApplied{}),
			lop(0, 1, 6, ctrInput{Key: "k", Read: true, Must: "e1"}, st(1, "e2")),
			lop(1, 2, 3, once("e2"), st(1, "e2")),
			lop(2, 7, 8, read, st(2, "e1 e2")),
		}, false},
		{"idempotent re-run applied again", []porcupine.Operation{
			lop(0, 1, 0, once("e1"), nil),
			lop(0, 2, 3, once("e1"), st(1, "e1")),
			lop(0, 4, 5, once("e1"), st(2, "e1")),
		}, false},
	}...)
	runLinCases(t, ctrModel, nil, cases)
	t.Run("pruned", func(t *testing.T) { runLinCases(t, ctrModel, ctrPrune, cases) })
	if _, n := ctrPrune(cases[len(cases)-2].ops); n != 0 {
		t.Errorf("pruned %d calls of a seen key, want 0", n)
	}
}

// TestLinearLeaseRefusesBrokenClients: tokens increase, a takeover ends the
// old holder's renewals and guarded writes; a lease renewed after another
// client took it over, a guarded write accepted from a holder whose lease
// was taken over, or a token given twice is refused.
func TestLinearLeaseRefusesBrokenClients(t *testing.T) {
	acq := func(owner string) leaseInput { return leaseInput{Key: "k", Kind: lkAcquire, Owner: owner} }
	renew := func(owner string, tok int64) leaseInput {
		return leaseInput{Key: "k", Kind: lkRenew, Owner: owner, Token: tok}
	}
	write := func(owner string, tok int64, from, to string) leaseInput {
		return leaseInput{Key: "k", Kind: lkWrite, Owner: owner, Token: tok, From: from, To: to}
	}
	readRes := leaseInput{Key: "k", Kind: lkReadRes}
	holder := leaseInput{Key: "k", Kind: lkHolder}
	runLinCases(t, leaseModel, nil, []linCase{
		{"holders one after another", []porcupine.Operation{
			lop(0, 1, 2, acq("a"), int64(1)),
			lop(0, 3, 4, renew("a", 1), nil),
			lop(0, 5, 6, write("a", 1, "", "1"), nil),
			lop(1, 7, 8, acq("b"), int64(2)), // a's lease expired: taken over
			lop(0, 9, 10, write("a", 1, "1", "1 1"), linRefused{}),
			lop(1, 11, 12, write("b", 2, "1", "1 2"), nil),
			lop(2, 13, 14, readRes, "1 2"),
			lop(1, 15, 16, leaseInput{Key: "k", Kind: lkRelease, Owner: "b", Token: 2}, nil),
			lop(2, 17, 18, holder, leaseView{Found: true, Owner: "b", Token: 2, Released: true}),
			lop(3, 19, 20, leaseInput{Key: "k", Kind: lkDelete}, leaseView{Found: true, Owner: "b", Token: 2, Released: true}),
			lop(0, 21, 22, acq("a"), int64(3)),
		}, true},
		{"acquire with an unknown outcome seen later", []porcupine.Operation{
			lop(0, 1, 0, acq("a"), nil),
			lop(2, 3, 4, holder, leaseView{Found: true, Owner: "a", Token: 1}),
			lop(1, 5, 6, acq("b"), int64(2)),
		}, true},
		{"lease renewed after its expiry", []porcupine.Operation{
			lop(0, 1, 2, acq("a"), int64(1)),
			lop(1, 3, 4, acq("b"), int64(2)),
			lop(0, 5, 6, renew("a", 1), nil),
		}, false},
		{"guarded write accepted after a takeover", []porcupine.Operation{
			lop(0, 1, 2, acq("a"), int64(1)),
			lop(1, 3, 4, acq("b"), int64(2)),
			lop(0, 5, 6, write("a", 1, "", "1"), nil),
		}, false},
		{"guarded write after the record was deleted", []porcupine.Operation{
			lop(0, 1, 2, acq("a"), int64(1)),
			lop(1, 3, 4, leaseInput{Key: "k", Kind: lkDelete}, leaseView{Found: true, Owner: "a", Token: 1}),
			lop(0, 5, 6, write("a", 1, "", "1"), nil),
		}, false},
		{"token given twice", []porcupine.Operation{
			lop(0, 1, 2, acq("a"), int64(1)),
			lop(0, 3, 4, leaseInput{Key: "k", Kind: lkRelease, Owner: "a", Token: 1}, nil),
			lop(1, 5, 6, acq("b"), int64(1)),
		}, false},
		{"a take an Acquire did not report, seen by a deletion", func() []porcupine.Operation {
			h, _ := leaseHiddenTakes([]porcupine.Operation{
				lop(0, 1, 6, acq("a"), int64(3)),
				lop(3, 2, 3, leaseInput{Key: "k", Kind: lkDelete}, leaseView{Found: true, Owner: "a", Token: 2}),
				lop(2, 7, 8, holder, leaseView{Found: true, Owner: "a", Token: 3}),
			})
			return h
		}(), true},
		{"a record no Acquire explains", func() []porcupine.Operation {
			h, _ := leaseHiddenTakes([]porcupine.Operation{
				lop(0, 1, 2, acq("a"), int64(3)),
				lop(3, 4, 5, leaseInput{Key: "k", Kind: lkDelete}, leaseView{Found: true, Owner: "a", Token: 2}),
			})
			return h
		}(), false},
		{"a write resent blindly over a newer one", []porcupine.Operation{
			lop(0, 1, 2, acq("a"), int64(1)),
			lop(0, 3, 4, write("a", 1, "", "1"), nil),
			lop(2, 5, 6, readRes, ""),
		}, false},
	})
}

// TestLinearLogRefusesBrokenClients: versions are claimed one after another
// and never change; an append applied twice (its claim resent blindly after
// a lost answer), a version read with another payload, or a Latest from a
// stale cache is refused.
func TestLinearLogRefusesBrokenClients(t *testing.T) {
	app := func(data string) logInput { return logInput{Name: "l", Kind: logAppendOp, Data: data} }
	read := func(v int64) logInput { return logInput{Name: "l", Kind: logReadOp, Version: v} }
	latest := logInput{Name: "l", Kind: logLatestOp}
	runLinCases(t, logModel, nil, []linCase{
		{"appends and reads", []porcupine.Operation{
			lop(0, 1, 4, app("a"), int64(2)),
			lop(1, 2, 3, app("b"), int64(1)),
			lop(2, 5, 6, latest, int64(2)),
			lop(2, 7, 8, read(1), "b"),
			lop(2, 9, 10, read(2), "a"),
		}, true},
		{"unknown append seen", []porcupine.Operation{
			lop(0, 1, 0, app("a"), nil),
			lop(2, 2, 3, latest, int64(0)),
			lop(1, 4, 5, app("b"), int64(2)),
			lop(2, 6, 7, read(1), "a"),
		}, true},
		{"append applied twice", []porcupine.Operation{
			lop(0, 1, 2, app("a"), int64(1)),
			lop(2, 3, 4, read(2), "a"),
		}, false},
		{"a version rewritten", []porcupine.Operation{
			lop(0, 1, 2, app("a"), int64(1)),
			lop(2, 3, 4, read(1), "a"),
			lop(1, 5, 6, app("b"), int64(1)),
		}, false},
		{"latest from a stale cache", []porcupine.Operation{
			lop(0, 1, 2, app("a"), int64(1)),
			lop(0, 3, 4, app("b"), int64(2)),
			lop(2, 5, 6, latest, int64(1)),
		}, false},
	})
	// Pruning: an unknown Append that the final reads do not show is left
	// out; one they show is kept, and a payload at two versions is still
	// refused.
	final := []porcupine.Operation{
		lop(0, 1, 0, app("a"), nil),
		lop(1, 2, 0, app("b"), nil),
		lop(1, 3, 4, app("c"), int64(1)),
		lop(3, 5, 6, latest, int64(2)),
		lop(3, 7, 8, read(1), "c"),
		lop(3, 9, 10, read(2), "b"),
	}
	if pruned, n := logPruneAppends(final); n != 1 || slices.ContainsFunc(pruned, func(op porcupine.Operation) bool { return op.Input.(logInput).Data == "a" }) {
		t.Errorf("pruned %d appends, want 1 (a)", n)
	}
	runLinCases(t, logModel, logPruneAppends, []linCase{
		{"final reads, pruned", final, true},
		{"final reads, a payload twice", append(slices.Clone(final[:3]),
			lop(3, 5, 6, latest, int64(2)),
			lop(3, 7, 8, read(1), "c"),
			lop(3, 9, 10, read(2), "c")), false},
	})
}

// TestLinearTruncatedHistory: a partition longer than the cap is checked on
// its first part, with the calls in flight at the cut pending forever; a
// violation before the cut is still found.
func TestLinearTruncatedHistory(t *testing.T) {
	var ops []porcupine.Operation
	value := ""
	for i := range 50 {
		id := fmt.Sprintf("x%d", i)
		value = regAppend(value, id)
		call := int64(3 * i)
		// Each update overlaps the next one's call.
		ops = append(ops, lop(i%3, call+1, call+4, regInput{Key: "k", Kind: regUpdate, ID: id},
			regState{Found: true, Version: int64(i + 1), Value: value}))
	}
	c, problems := linearize("model-test", regModel, nil, ops, 20, 5*time.Second)
	if c.Truncated != 1 || c.Ops > 21 || len(problems) != 0 {
		t.Fatalf("a correct long history: %v, %q; want it truncated to about 20 operations and accepted", c, problems)
	}
	// A stale read early on.
	ops = append(ops, lop(5, 8, 9, regInput{Key: "k", Kind: regLoad}, regState{}))
	c, problems = linearize("model-test", regModel, nil, ops, 20, 5*time.Second)
	for _, f := range c.Files {
		os.Remove(f)
	}
	if c.Illegal != 1 {
		t.Fatalf("a stale read before the cut: %v, %q; want it refused", c, problems)
	}
}

// --- the bank: transactions over several keys ---

// bankAccounts is the most accounts the bank model holds.
const bankAccounts = 16

// bankInput is a transfer of up to Amount from account From to account To
// (indexes), one Transact run; or (Audit) a read of every balance.
type bankInput struct {
	Audit    bool
	ID       string
	From, To int
	Amount   int64
}

func (bankInput) linKey() string    { return "bank" }
func (in bankInput) readOnly() bool { return in.Audit }

// bankBalances is the state of the bank model: every account's balance.
type bankBalances [bankAccounts]int64

// bankView is what an audit returned: the balances, and (for the final read
// only) the ids of the transfers the accounts' lists show applied.
type bankView struct {
	Balances bankBalances
	Applied  []string
}

// bankModel is the accounts that TestFaultsTransactBank's transactions
// change, n of them opening with opening each, as one object (a transfer
// touches two, an audit all): a transfer moves min(Amount, the balance of
// From) and returns what it moved; an audit returns every balance.
func bankModel(n int, opening int64) porcupine.Model {
	return porcupine.Model{
		Init: func() any {
			var b bankBalances
			for i := range n {
				b[i] = opening
			}
			return b
		},
		Step: func(state, input, output any) (bool, any) {
			b, in := state.(bankBalances), input.(bankInput)
			if in.Audit {
				v, isView := output.(bankView)
				return isView && v.Balances == b, b
			}
			ok, unknown := outcome(output)
			if !ok && !unknown {
				return true, b
			}
			moved := min(in.Amount, b[in.From])
			b[in.From] -= moved
			b[in.To] += moved
			return unknown || output == moved, b
		},
		DescribeOperation: func(input, output any) string {
			in := input.(bankInput)
			if in.Audit {
				if v, isView := output.(bankView); isView {
					return fmt.Sprintf("audit → %v", v.Balances[:n])
				}
				return "audit → " + describeOutput(output)
			}
			return fmt.Sprintf("transfer %s: ≤%d from %d to %d → %s", in.ID, in.Amount, in.From, in.To, describeOutput(output))
		},
		DescribeState: func(state any) string {
			b := state.(bankBalances)
			return fmt.Sprint(b[:n])
		},
	}
}

// bankPrune is the bank's linPrune: with a final audit called after every
// transfer was called, whose Applied lists the transfers the accounts show,
// a transfer of unknown outcome not in that list was not applied before it
// (the accounts' lists only grow). Otherwise the history is returned whole.
func bankPrune(h []porcupine.Operation) ([]porcupine.Operation, int) {
	var final *bankView
	var finalCall, lastTransfer int64
	for _, op := range h {
		in := op.Input.(bankInput)
		if !in.Audit {
			lastTransfer = max(lastTransfer, op.Call)
			continue
		}
		if v, ok := op.Output.(bankView); ok && v.Applied != nil && op.Call > finalCall {
			final, finalCall = &v, op.Call
		}
	}
	if final == nil || finalCall < lastTransfer {
		return h, 0
	}
	applied := map[string]bool{}
	for _, id := range final.Applied {
		applied[id] = true
	}
	out := h[:0:0]
	for _, op := range h {
		in := op.Input.(bankInput)
		if _, unknown := op.Output.(linUnknown); unknown && !in.Audit && !applied[in.ID] {
			continue
		}
		out = append(out, op)
	}
	return out, len(h) - len(out)
}

// TestLinearBankRefusesBrokenClients: transfers move what the sender has,
// atomically over both accounts; a transfer applied twice (resent blindly),
// half applied, or an audit from a stale cache is refused.
func TestLinearBankRefusesBrokenClients(t *testing.T) {
	tr := func(id string, from, to int, amount int64) bankInput {
		return bankInput{ID: id, From: from, To: to, Amount: amount}
	}
	audit := bankInput{Audit: true}
	view := func(b ...int64) bankView {
		var v bankView
		copy(v.Balances[:], b)
		return v
	}
	final := func(v bankView, applied ...string) bankView { v.Applied = append([]string{}, applied...); return v }
	model := bankModel(3, 100)
	runLinCases(t, model, bankPrune, []linCase{
		{"transfers and audits", []porcupine.Operation{
			lop(0, 1, 4, tr("a", 0, 1, 30), int64(30)),
			lop(1, 2, 5, tr("b", 1, 2, 200), int64(130)),
			lop(2, 3, 3, audit, view(70, 130, 100)),
			lop(2, 6, 7, audit, final(view(70, 0, 230), "a", "b")),
		}, true},
		{"unknown outcome, applied", []porcupine.Operation{
			lop(0, 1, 0, tr("a", 0, 1, 30), nil),
			lop(1, 2, 0, tr("b", 0, 2, 30), nil),
			lop(2, 6, 7, audit, final(view(70, 130, 100), "a")),
		}, true},
		{"transfer resent blindly", []porcupine.Operation{
			lop(0, 1, 0, tr("a", 0, 1, 30), nil),
			lop(2, 6, 7, audit, final(view(40, 160, 100), "a")),
		}, false},
		{"half applied", []porcupine.Operation{
			lop(0, 1, 2, tr("a", 0, 1, 30), int64(30)),
			lop(2, 3, 4, audit, view(70, 100, 100)),
		}, false},
		{"moved more than the balance", []porcupine.Operation{
			lop(0, 1, 2, tr("a", 0, 1, 300), int64(300)),
		}, false},
		{"audit from a stale cache", []porcupine.Operation{
			lop(0, 1, 2, tr("a", 0, 1, 30), int64(30)),
			lop(2, 3, 4, audit, view(100, 100, 100)),
		}, false},
	})
}

// --- backfill: each item a register whose migration step applies once ---

// bfKind is an operation on one item of TestFaultsBackfill.
type bfKind int

const (
	bkHit     bfKind = iota // a live Update adding one hit; output the saved bfView
	bkPut                   // a live SavePut of From with one more hit, holding From's version; output the saved version
	bkRead                  // a consistent Load or the final Scan; output bfView
	bkMigrate               // a migration's step: Second false adds 1 to migrated, true to second; pending forever
)

// bfInput is an operation on the item Key.
type bfInput struct {
	Key    string
	Kind   bfKind
	Second bool   // bkMigrate: the second migration
	From   bfView // bkPut: the item as loaded
}

func (in bfInput) linKey() string { return in.Key }
func (in bfInput) readOnly() bool { return in.Kind == bkRead }

// bfView is an item as read or saved; Second is -1 when the reader's type
// does not model it.
type bfView struct {
	Version, Hits, Migrated, Second int64
}

// bfModel is one item of a table being backfilled, per key: created at
// version 1 before the run; each live Update adds a hit, each SavePut holding
// the version it loaded writes what it loaded with one more hit (refused at
// another version), each migration's step adds 1 to its counter — every
// write advancing the version by one. A migration's step is one call, pending
// from the start: it can take effect once, or (until the final read says
// otherwise) not yet; twice is no linearization.
var bfModel = porcupine.Model{
	Init: func() any { return bfView{Version: 1} },
	Step: func(state, input, output any) (bool, any) {
		s, in := state.(bfView), input.(bfInput)
		if in.Kind == bkRead {
			v, isView := output.(bfView)
			return isView && bfSees(v, s), s
		}
		ok, unknown := outcome(output)
		if !ok && !unknown {
			return true, s
		}
		switch in.Kind {
		case bkHit:
			next := s
			next.Version++
			next.Hits++
			v, isView := output.(bfView)
			return unknown || isView && bfSees(v, next), next
		case bkPut:
			if s.Version != in.From.Version || !bfSees(in.From, s) {
				return unknown, s
			}
			next := s
			next.Version++
			next.Hits++
			return unknown || output == next.Version, next
		case bkMigrate:
			next := s
			next.Version++
			if in.Second {
				next.Second++
			} else {
				next.Migrated++
			}
			return true, next
		}
		return false, s
	},
	DescribeOperation: func(input, output any) string {
		in := input.(bfInput)
		out := describeOutput(output)
		switch in.Kind {
		case bkHit:
			return fmt.Sprintf("hit(%s) → %s", in.Key, out)
		case bkPut:
			return fmt.Sprintf("put(%s, %+v + hit) → %s", in.Key, in.From, out)
		case bkRead:
			return fmt.Sprintf("read(%s) → %s", in.Key, out)
		}
		return fmt.Sprintf("migrate(%s, second %v) → %s", in.Key, in.Second, out)
	},
	DescribeState: func(state any) string { return fmt.Sprintf("%+v", state) },
}

// bfSees reports whether v is what a reader of s would see (Second -1: not
// modelled by the reader's type).
func bfSees(v, s bfView) bool {
	if v.Second == -1 {
		v.Second = s.Second
	}
	return v == s
}

// TestLinearBackfillRefusesBrokenClients: each migration's step applies
// at most once between live writes; a step applied twice (a page resent
// blindly), a live put resent over the step, or a stale read is refused.
func TestLinearBackfillRefusesBrokenClients(t *testing.T) {
	mig := func(second bool) bfInput { return bfInput{Key: "k", Kind: bkMigrate, Second: second} }
	hit := bfInput{Key: "k", Kind: bkHit}
	read := bfInput{Key: "k", Kind: bkRead}
	runLinCases(t, bfModel, nil, []linCase{
		{"steps and live writes", []porcupine.Operation{
			lop(8, 1, 0, mig(false), nil),
			lop(9, 2, 0, mig(true), nil),
			lop(0, 3, 4, hit, bfView{2, 1, 0, -1}),
			lop(1, 5, 6, read, bfView{3, 1, 1, 0}),
			lop(1, 7, 8, bfInput{Key: "k", Kind: bkPut, From: bfView{3, 1, 1, 0}}, int64(4)),
			lop(2, 9, 10, read, bfView{5, 2, 1, 1}),
		}, true},
		{"a step applied twice", []porcupine.Operation{
			lop(8, 1, 0, mig(false), nil),
			lop(2, 9, 10, read, bfView{3, 0, 2, 0}),
		}, false},
		{"a put resent over the step", []porcupine.Operation{
			// The put of version 1 landed, its answer was lost; the step
			// applied; the put, resent without its condition, undid it.
			lop(8, 1, 0, mig(false), nil),
			lop(1, 2, 3, read, bfView{1, 0, 0, 0}),
			lop(1, 4, 9, bfInput{Key: "k", Kind: bkPut, From: bfView{1, 0, 0, 0}}, int64(2)),
			lop(2, 10, 11, read, bfView{2, 1, 0, 0}),
			lop(2, 12, 13, read, bfView{3, 1, 1, 0}),
			lop(2, 14, 15, read, bfView{2, 1, 0, 0}),
		}, false},
		{"a stale read", []porcupine.Operation{
			lop(0, 1, 2, hit, bfView{2, 1, 0, -1}),
			lop(2, 3, 4, read, bfView{1, 0, 0, 0}),
		}, false},
	})
}
