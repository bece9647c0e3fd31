package integration

// Mapper.Transact on DynamoDB Local: concurrent random transfers among ten
// accounts, each a Transact run, plus auditors that sum all balances in
// read-only runs — first on plain clients, then through the fault suite's
// transports. Each transfer appends "<id>:<delta>" to both accounts it
// touches, so the final items tell which transfers were applied, how often
// and in which order; checkBank checks that against what the callers were
// told.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// bankAccount is one account; Ops lists the transfers applied to it, in
// order, as "<transfer id>:<signed amount>".
type bankAccount struct {
	ID      string   `dynamo:"id,hash"`
	Balance int64    `dynamo:"balance"`
	Ops     []string `dynamo:"ops"`
	Version int64    `dynamo:"version,version"`
}

// bankTransfer is one transfer as its caller saw it.
type bankTransfer struct {
	ID       string
	From, To string
	Moved    int64 // when Acked: the amount the committed run moved
	Acked    bool
	Err      error // when not Acked
}

// bankFinal is an account as read without faults after the run.
type bankFinal struct {
	Found   bool
	Balance int64
	Version int64
	Ops     []string
}

// bankHistory is what the workers and auditors recorded.
type bankHistory struct {
	Opening   int64 // each account's opening balance
	Accounts  []string
	Transfers []bankTransfer
	Audits    []int64 // the sums the successful audits saw
}

// bankCheck is what checkBank found.
type bankCheck struct {
	Anomalies []string
	Applied   int // transfers applied: acknowledged, or unknown outcome found applied
	Unknown   int // unknown outcomes found applied
}

// checkBank checks a history against the final accounts:
//
//   - every audit saw exactly the opening total, and so does the end;
//   - each account's version is 1 + the number of transfers in its list,
//     its balance the opening plus their amounts, never negative on the way;
//   - each transfer is in both its accounts with opposite amounts, or in
//     neither (atomic), at most once, and only if it was sent;
//   - an acknowledged transfer is there, with the amount it reported; a
//     failed one is there only if its outcome was unknown;
//   - the orders of the accounts' lists agree: some serial order of the
//     transfers explains them all (no cycle).
func checkBank(h bankHistory, final map[string]bankFinal) bankCheck {
	var c bankCheck
	addf := func(format string, args ...any) { c.Anomalies = append(c.Anomalies, fmt.Sprintf(format, args...)) }
	total := h.Opening * int64(len(h.Accounts))
	for i, s := range h.Audits {
		if s != total {
			addf("audit %d saw a total of %d, not %d", i, s, total)
		}
	}
	byID := map[string]*bankTransfer{}
	for i := range h.Transfers {
		byID[h.Transfers[i].ID] = &h.Transfers[i]
	}
	type seen struct {
		account string
		delta   int64
	}
	found := map[string][]seen{}
	next := map[string][]string{} // transfer → transfers after it on some account
	var sum int64
	for _, a := range h.Accounts {
		f := final[a]
		if !f.Found {
			addf("account %s is missing", a)
			continue
		}
		sum += f.Balance
		if f.Version != 1+int64(len(f.Ops)) {
			addf("account %s: version %d, but %d transfers applied (want 1 + %d)", a, f.Version, len(f.Ops), len(f.Ops))
		}
		bal := h.Opening
		inList := map[string]bool{}
		for i, op := range f.Ops {
			id, d, ok := strings.Cut(op, ":")
			delta, err := strconv.ParseInt(d, 10, 64)
			if !ok || err != nil {
				addf("account %s: malformed entry %q", a, op)
				continue
			}
			if inList[id] {
				addf("account %s: transfer %s applied twice", a, id)
			}
			inList[id] = true
			if bal += delta; bal < 0 {
				addf("account %s: balance %d after transfer %s", a, bal, id)
			}
			found[id] = append(found[id], seen{a, delta})
			if i > 0 {
				prev, _, _ := strings.Cut(f.Ops[i-1], ":")
				next[prev] = append(next[prev], id)
			}
		}
		if bal != f.Balance {
			addf("account %s: balance %d, but its transfers add up to %d", a, f.Balance, bal)
		}
	}
	if sum != total {
		addf("the accounts hold %d in all, not %d: money was created or destroyed", sum, total)
	}
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range found {
			if !yield(id) {
				return
			}
		}
	}) {
		s := found[id]
		tr := byID[id]
		if tr == nil {
			addf("transfer %s was never sent", id)
			continue
		}
		if len(s) != 2 || s[0].delta != -s[1].delta ||
			!(s[0].account == tr.From && s[1].account == tr.To || s[0].account == tr.To && s[1].account == tr.From) ||
			s[0].delta != 0 && (s[0].account == tr.From) != (s[0].delta < 0) {
			addf("transfer %s (%s → %s) is applied as %v: not atomic", id, tr.From, tr.To, s)
			continue
		}
		moved := s[0].delta
		if moved < 0 {
			moved = -moved
		}
		switch {
		case tr.Acked:
			c.Applied++
			if moved != tr.Moved {
				addf("transfer %s reported %d moved, but %d is applied", id, tr.Moved, moved)
			}
		case errors.Is(tr.Err, dynamo.ErrUnknownOutcome):
			c.Applied++
			c.Unknown++
		default:
			addf("transfer %s failed (%v) but is applied", id, tr.Err)
		}
	}
	for _, tr := range h.Transfers {
		if tr.Acked && len(found[tr.ID]) == 0 {
			addf("acknowledged transfer %s (%s → %s, %d) is not applied: a lost write", tr.ID, tr.From, tr.To, tr.Moved)
		}
	}
	// Serializable: the per-account orders must not contradict each other.
	state := map[string]int{} // 1: on the path, 2: done
	var cycle []string
	var visit func(id string) bool
	visit = func(id string) bool {
		switch state[id] {
		case 1:
			cycle = append(cycle, id)
			return false
		case 2:
			return true
		}
		state[id] = 1
		for _, n := range next[id] {
			if !visit(n) {
				cycle = append(cycle, id)
				return false
			}
		}
		state[id] = 2
		return true
	}
	ids := make([]string, 0, len(next))
	for id := range next {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !visit(id) {
			slices.Reverse(cycle)
			addf("the accounts order transfers in a cycle %v: no serial order explains them", cycle)
			break
		}
	}
	return c
}

// bankRun is one run of the bank workload.
type bankRun struct {
	accounts  []string
	workers   int
	perWorker int
	auditors  int
	// table returns the Table worker (or auditor, numbered after the
	// workers) i sends through.
	table func(i int) *dynamo.Table[bankAccount]
	opts  []dynamo.TxOption
	lin   *linRecorder // when not nil, records the transfers and audits for the bank model
}

// run makes the transfers and audits, and returns what they recorded; audit
// errors are counted, not recorded.
func (r bankRun) run(ctx context.Context, seed uint64) (h bankHistory, auditErrs []error) {
	h.Accounts = r.accounts
	transfers := make([][]bankTransfer, r.workers)
	audits := make([][]int64, r.auditors)
	aErrs := make([][]error, r.auditors)
	var wg, writing sync.WaitGroup
	done := make(chan struct{})
	for w := range r.workers {
		wg.Add(1)
		writing.Add(1)
		go func() {
			defer wg.Done()
			defer writing.Done()
			tb := r.table(w)
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for seq := range r.perWorker {
				n := len(r.accounts)
				f, to := rng.IntN(n), rng.IntN(n-1)
				if to >= f {
					to++
				}
				tr := bankTransfer{ID: fmt.Sprintf("w%d-%d", w, seq), From: r.accounts[f], To: r.accounts[to]}
				amount := rng.Int64N(300) + 1
				var moved int64
				call := r.lin.begin(w, bankInput{ID: tr.ID, From: f, To: to, Amount: amount})
				err := tb.Mapper().Transact(ctx, func(tx *dynamo.Tx) error {
					from, to := bankAccount{ID: tr.From}, bankAccount{ID: tr.To}
					if err := tx.Prefetch(tb.TxGet(from), tb.TxGet(to)); err != nil {
						return err
					}
					v := tb.In(tx)
					from, err := v.Load(from)
					if err != nil {
						return err
					}
					to, err = v.Load(to)
					if err != nil {
						return err
					}
					moved = min(amount, from.Balance)
					from.Balance -= moved
					to.Balance += moved
					from.Ops = append(slices.Clip(from.Ops), fmt.Sprintf("%s:%d", tr.ID, -moved))
					to.Ops = append(slices.Clip(to.Ops), fmt.Sprintf("%s:%d", tr.ID, moved))
					if _, err := v.Save(from); err != nil {
						return err
					}
					_, err = v.Save(to)
					return err
				}, r.opts...)
				if err == nil {
					tr.Acked, tr.Moved = true, moved
					call.ok(moved)
				} else {
					tr.Err = err
					call.failed(err, mapperNotApplied)
				}
				transfers[w] = append(transfers[w], tr)
			}
		}()
	}
	for a := range r.auditors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tb := r.table(r.workers + a)
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				var sum int64
				var seen bankView
				call := r.lin.begin(r.workers+a, bankInput{Audit: true})
				err := tb.Mapper().Transact(ctx, func(tx *dynamo.Tx) error {
					sum = 0
					v := tb.In(tx)
					if (a+i)%2 == 0 { // one snapshot
						gets := make([]dynamo.TxGetOp, len(r.accounts))
						for j, id := range r.accounts {
							gets[j] = tb.TxGet(bankAccount{ID: id})
						}
						if err := tx.Prefetch(gets...); err != nil {
							return err
						}
					} // else one GetItem per account, checked together at the end
					for j, id := range r.accounts {
						acc, err := v.Load(bankAccount{ID: id})
						if err != nil {
							return err
						}
						sum += acc.Balance
						seen.Balances[j] = acc.Balance
					}
					return nil
				}, r.opts...)
				if err != nil {
					aErrs[a] = append(aErrs[a], err)
					continue
				}
				call.ok(seen)
				audits[a] = append(audits[a], sum)
			}
		}()
	}
	writing.Wait()
	close(done)
	wg.Wait()
	return bankHistory{Accounts: r.accounts, Transfers: slices.Concat(transfers...), Audits: slices.Concat(audits...)}, slices.Concat(aErrs...)
}

// bankSetup creates the accounts table with n accounts of opening each,
// through a client without faults.
func bankSetup(t *testing.T, n int, opening int64) (string, []string) {
	t.Helper()
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "bank", "id", types.ScalarAttributeTypeS, "", "")
	tb, err := dynamo.NewTable[bankAccount](dynamo.NewMapper(dynamotest.Client(t)), name)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("acct-%02d", i)
		if _, err := tb.Save(t.Context(), bankAccount{ID: ids[i], Balance: opening}); err != nil {
			t.Fatal(err)
		}
	}
	return name, ids
}

// bankFinalState reads the accounts without faults.
func bankFinalState(t *testing.T, name string, ids []string) map[string]bankFinal {
	t.Helper()
	tb, err := dynamo.NewTable[bankAccount](dynamo.NewMapper(dynamotest.Client(t)), name)
	if err != nil {
		t.Fatal(err)
	}
	final := map[string]bankFinal{}
	for _, id := range ids {
		a, err := tb.Load(t.Context(), bankAccount{ID: id}, dynamo.ConsistentRead())
		switch {
		case errors.Is(err, dynamo.ErrNotFound):
			final[id] = bankFinal{}
		case err != nil:
			t.Fatalf("reading account %s without faults: %v", id, err)
		default:
			final[id] = bankFinal{Found: true, Balance: a.Balance, Version: a.Version, Ops: a.Ops}
		}
	}
	return final
}

// TestTransactBank: 8 workers make random transfers among 10 accounts with
// Transact while 2 auditors sum all balances in read-only runs. No call
// fails; every audit sees the opening total; every account's version is 1
// plus the acknowledged transfers that touched it.
func TestTransactBank(t *testing.T) {
	const opening = 1000
	name, ids := bankSetup(t, 10, opening)
	tb, err := dynamo.NewTable[bankAccount](dynamo.NewMapper(dynamotest.Client(t)), name)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	h, auditErrs := bankRun{accounts: ids, workers: 8, perWorker: 25, auditors: 2,
		table: func(int) *dynamo.Table[bankAccount] { return tb }}.run(ctx, 1)
	h.Opening = opening
	elapsed := time.Since(start)
	for _, tr := range h.Transfers {
		if !tr.Acked && ctx.Err() == nil {
			t.Errorf("transfer %s failed: %v", tr.ID, tr.Err)
		}
	}
	for _, err := range auditErrs {
		if ctx.Err() == nil {
			t.Errorf("audit failed: %v", err)
		}
	}
	final := bankFinalState(t, name, ids)
	check := checkBank(h, final)
	reportAnomalies(t, check.Anomalies)
	touched := map[string]int64{}
	for _, tr := range h.Transfers {
		if tr.Acked {
			touched[tr.From]++
			touched[tr.To]++
		}
	}
	for _, id := range ids {
		if final[id].Version != 1+touched[id] {
			t.Errorf("account %s: version %d, want 1 + %d acknowledged transfers", id, final[id].Version, touched[id])
		}
	}
	if len(h.Audits) == 0 {
		t.Error("no audit ran")
	}
	t.Logf("%d transfers, %d audits (all saw %d) in %v", len(h.Transfers), len(h.Audits), opening*len(ids), elapsed.Round(time.Millisecond))
}

// transactErrorExplained reports whether err, from Transact under faults,
// says what happened: an unknown outcome, or the SDK's attempts or retry
// quota used up (a read or a commit that certainly was not applied).
func transactErrorExplained(err error) bool {
	msg := err.Error()
	if !strings.HasPrefix(msg, "dynamo: ") {
		return false
	}
	switch {
	case errors.Is(err, dynamo.ErrUnknownOutcome):
		return strings.Contains(msg, "may have been applied")
	case strings.Contains(msg, "gave up after"):
		return errors.Is(err, dynamo.ErrVersionConflict)
	case errors.Is(err, dynamo.ErrVersionConflict), errors.Is(err, dynamo.ErrConditionFailed),
		errors.Is(err, dynamo.ErrNotFound), errors.Is(err, dynamo.ErrInvalidInput):
		return false
	}
	return strings.Contains(msg, "exceeded maximum number of attempts") || strings.Contains(msg, "retry quota exceeded")
}

// TestFaultsTransactBank is TestTransactBank with every worker and auditor
// on its own client through its own dynamotest.Faults transport (lost
// responses after the write applied, 500s before and after applying,
// throttling, resets, delays). checkBank must find no anomaly: no transfer
// lost, none applied twice or half, every audit the opening total, a serial
// order explaining every account; failures must say what happened.
func TestFaultsTransactBank(t *testing.T) {
	const (
		opening  = 1000
		workers  = 8
		auditors = 2
	)
	name, ids := bankSetup(t, 10, opening)
	maxFaults := scaled(40)
	var transports []*dynamotest.Faults
	tables := make([]*dynamo.Table[bankAccount], workers+auditors)
	for i := range tables {
		f := dynamotest.NewFaults(faultConfig(t, uint64(100+i), maxFaults), nil)
		transports = append(transports, f)
		tb, err := dynamo.NewTable[bankAccount](dynamo.NewMapper(f.Client(t, quickRetries)), name)
		if err != nil {
			t.Fatal(err)
		}
		tables[i] = tb
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	lin := &linRecorder{} // the history for the bank model (linear_test.go)
	h, auditErrs := bankRun{accounts: ids, workers: workers, perWorker: scaled(25), auditors: auditors,
		table: func(i int) *dynamo.Table[bankAccount] { return tables[i] }, lin: lin}.run(ctx, *faultSeed)
	h.Opening = opening
	elapsed := time.Since(start)
	stats := stopFaults(transports)
	call := lin.begin(workers+auditors, bankInput{Audit: true})
	final := bankFinalState(t, name, ids)
	view := bankView{Applied: []string{}}
	for i, id := range ids {
		view.Balances[i] = final[id].Balance
		for _, op := range final[id].Ops {
			view.Applied = append(view.Applied, op[:strings.LastIndexByte(op, ':')])
		}
	}
	call.ok(view)
	check := checkBank(h, final)
	reportAnomalies(t, check.Anomalies)
	anomalies := len(check.Anomalies)
	anomalies += checkLinear(t, "bank", bankModel(len(ids), opening), bankPrune, lin.history(), linCap, 30*time.Second).Anomalies()
	acked, unknown := 0, 0
	for _, tr := range h.Transfers {
		if tr.Acked {
			acked++
			continue
		}
		if errors.Is(tr.Err, dynamo.ErrUnknownOutcome) {
			unknown++
		}
		if !transactErrorExplained(tr.Err) {
			anomalies++
			t.Errorf("transfer %s failed with an error that does not say what happened: %v", tr.ID, tr.Err)
		}
	}
	for _, err := range auditErrs {
		if !transactErrorExplained(err) {
			anomalies++
			t.Errorf("audit failed with an error that does not say what happened: %v", err)
		}
	}
	t.Logf("%v: %d transfers (%d acknowledged, %d unknown of which %d found applied, %d failed and not applied), %d audits (%d failed)",
		elapsed.Round(time.Millisecond), len(h.Transfers), acked, unknown, check.Unknown, len(h.Transfers)-acked-unknown, len(h.Audits), len(auditErrs))
	if acked == 0 || len(h.Audits) == 0 {
		t.Errorf("no transfer or no audit succeeded: the faults drowned the test")
	}
	logFaults(t, faultReport{Ops: len(h.Transfers) + len(h.Audits) + len(auditErrs), Acked: acked + len(h.Audits), Anomalies: anomalies, Stats: stats})
}

// TestBankCheckerCatchesAnomalies shows that checkBank can fail: a
// consistent history passes, and each doctored one is reported. No server
// is needed.
func TestBankCheckerCatchesAnomalies(t *testing.T) {
	unknown := fmt.Errorf("lost: %w", dynamo.ErrUnknownOutcome)
	// a, b, c open with 10. t1 a→b 5 (acked), t2 b→c 7 (acked), t3 c→a 3
	// (unknown, applied), t4 a→c 1 (unknown, not applied), t5 b→a 2
	// (failed for good, not applied).
	base := func() (bankHistory, map[string]bankFinal) {
		h := bankHistory{Opening: 10, Accounts: []string{"a", "b", "c"},
			Transfers: []bankTransfer{
				{ID: "t1", From: "a", To: "b", Moved: 5, Acked: true},
				{ID: "t2", From: "b", To: "c", Moved: 7, Acked: true},
				{ID: "t3", From: "c", To: "a", Err: unknown},
				{ID: "t4", From: "a", To: "c", Err: unknown},
				{ID: "t5", From: "b", To: "a", Err: errors.New("gave up")},
			},
			Audits: []int64{30, 30},
		}
		final := map[string]bankFinal{
			"a": {Found: true, Balance: 8, Version: 3, Ops: []string{"t1:-5", "t3:3"}},
			"b": {Found: true, Balance: 8, Version: 3, Ops: []string{"t1:5", "t2:-7"}},
			"c": {Found: true, Balance: 14, Version: 3, Ops: []string{"t2:7", "t3:-3"}},
		}
		return h, final
	}
	h, final := base()
	if c := checkBank(h, final); len(c.Anomalies) != 0 || c.Applied != 3 || c.Unknown != 1 {
		t.Fatalf("a consistent history: anomalies %q, applied %d, unknown %d; want none, 3, 1", c.Anomalies, c.Applied, c.Unknown)
	}
	cases := []struct {
		name   string
		doctor func(h *bankHistory, f map[string]bankFinal)
		want   string
	}{
		{"audit off", func(h *bankHistory, f map[string]bankFinal) { h.Audits[1] = 25 }, "audit 1 saw a total of 25"},
		{"applied twice", func(h *bankHistory, f map[string]bankFinal) {
			f["a"] = bankFinal{Found: true, Balance: 3, Version: 4, Ops: []string{"t1:-5", "t3:3", "t1:-5"}}
		}, "transfer t1 applied twice"},
		{"half applied", func(h *bankHistory, f map[string]bankFinal) {
			f["c"] = bankFinal{Found: true, Balance: 17, Version: 2, Ops: []string{"t2:7"}}
		}, "not atomic"},
		{"acknowledged lost", func(h *bankHistory, f map[string]bankFinal) {
			f["b"] = bankFinal{Found: true, Balance: 3, Version: 2, Ops: []string{"t2:-7"}}
			f["a"] = bankFinal{Found: true, Balance: 13, Version: 2, Ops: []string{"t3:3"}}
		}, "acknowledged transfer t1"},
		{"failed but applied", func(h *bankHistory, f map[string]bankFinal) {
			h.Transfers[0].Acked, h.Transfers[0].Err = false, errors.New("gave up")
		}, "transfer t1 failed (gave up) but is applied"},
		{"never sent", func(h *bankHistory, f map[string]bankFinal) { h.Transfers = h.Transfers[1:] }, "transfer t1 was never sent"},
		{"version off", func(h *bankHistory, f map[string]bankFinal) {
			g := f["a"]
			g.Version = 4
			f["a"] = g
		}, "account a: version 4, but 2 transfers applied"},
		{"money created", func(h *bankHistory, f map[string]bankFinal) {
			g := f["a"]
			g.Balance = 9
			f["a"] = g
		}, "money was created"},
		{"wrong amount reported", func(h *bankHistory, f map[string]bankFinal) { h.Transfers[1].Moved = 6 }, "transfer t2 reported 6 moved"},
		{"not serializable", func(h *bankHistory, f map[string]bankFinal) {
			// b orders t1 before t2, c orders t2 before t3, a orders t3
			// before t1: a cycle, each list fine on its own.
			f["a"] = bankFinal{Found: true, Balance: 8, Version: 3, Ops: []string{"t3:3", "t1:-5"}}
		}, "cycle"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, final := base()
			tc.doctor(&h, final)
			c := checkBank(h, final)
			if !slices.ContainsFunc(c.Anomalies, func(a string) bool { return strings.Contains(a, tc.want) }) {
				t.Errorf("anomalies %q; want one containing %q", c.Anomalies, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("dynamo: Transact, run 1: the commit may have been applied: %w", dynamo.ErrUnknownOutcome), true},
		{errors.New("dynamo: Transact: load from table \"T\" key {id: \"a\"}: operation error DynamoDB: GetItem, exceeded maximum number of attempts, 3"), true},
		{fmt.Errorf("dynamo: Transact gave up after 100 runs: %w", dynamo.ErrVersionConflict), true},
		{fmt.Errorf("dynamo: Transact: %w", dynamo.ErrVersionConflict), false},
		{errors.New("operation error DynamoDB: GetItem, exceeded maximum number of attempts, 3"), false},
	} {
		if got := transactErrorExplained(tc.err); got != tc.want {
			t.Errorf("transactErrorExplained(%q) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// lostTransfer runs one transfer of 10 from acct-00 to acct-01 through a
// client whose TransactWriteItems answers drop drops, and returns how often
// the function ran and Transact's error.
func lostTransfer(t *testing.T, drop *dynamotest.Dropper, name string) (int, error) {
	t.Helper()
	tb, err := dynamo.NewTable[bankAccount](dynamo.NewMapper(drop.Client(t, quickRetries)), name)
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	err = tb.Mapper().Transact(t.Context(), func(tx *dynamo.Tx) error {
		runs++
		v := tb.In(tx)
		from, err := v.Load(bankAccount{ID: "acct-00"})
		if err != nil {
			return err
		}
		to, err := v.Load(bankAccount{ID: "acct-01"})
		if err != nil {
			return err
		}
		from.Balance -= 10
		to.Balance += 10
		if _, err := v.Save(from); err != nil {
			return err
		}
		_, err = v.Save(to)
		return err
	}, dynamo.WithRetry(dynamo.RetryPolicy{BackoffBase: time.Millisecond, BackoffMax: time.Millisecond}))
	return runs, err
}

// TestTransactLostCommitAnswers: a commit DynamoDB applied whose answers
// were lost is a success when a resend under its request token gets
// through (the SDK's, or Transact's own after the SDK gave up), and
// ErrUnknownOutcome — without running the function again — when none does.
// Either way it is applied exactly once.
func TestTransactLostCommitAnswers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		drops   int
		unknown bool
	}{
		{"the SDK's resend", 1, false},
		{"Transact's resend", 3, false}, // the SDK's 3 attempts all lost
		{"never settled", 3 * 4, true},  // and Transact's 3 resends too
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, _ := bankSetup(t, 2, 100)
			drop := dynamotest.NewDropper("TransactWriteItems")
			drop.Arm(tc.drops)
			runs, err := lostTransfer(t, drop, name)
			if drop.Dropped() != tc.drops {
				t.Fatalf("dropped %d answers; the test needs %d", drop.Dropped(), tc.drops)
			}
			if runs != 1 {
				t.Errorf("the function ran %d times, want once", runs)
			}
			switch {
			case tc.unknown && !errors.Is(err, dynamo.ErrUnknownOutcome):
				t.Errorf("err %v, want ErrUnknownOutcome", err)
			case !tc.unknown && err != nil:
				t.Errorf("err %v, want success", err)
			}
			final := bankFinalState(t, name, []string{"acct-00", "acct-01"})
			if a, b := final["acct-00"], final["acct-01"]; a.Balance != 90 || b.Balance != 110 || a.Version != 2 || b.Version != 2 {
				t.Errorf("accounts %+v, %+v; want the transfer applied once (90 and 110 at version 2)", a, b)
			}
		})
	}
}
