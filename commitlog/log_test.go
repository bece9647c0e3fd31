package commitlog

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// logTable creates a log table through Log.CreateTable, deleted when the
// test ends, and returns its name.
func logTable(t *testing.T) string {
	t.Helper()
	l, err := OpenLog(dynamo.NewMapper(dynamotest.Client(t)), uniqueTable("log"), NewMemStore(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.table.DeleteTable(context.Background()) })
	return l.table.Name()
}

func openLog(t *testing.T, table string, client *dynamodb.Client, s Store, name string, opts ...Option) *Log {
	t.Helper()
	if client == nil {
		client = dynamotest.Client(t)
	}
	l, err := OpenLog(dynamo.NewMapper(client), table, s, name, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// tempObjects lists the temporary objects of log name left in s.
func tempObjects(t *testing.T, s Store, name string) []string {
	t.Helper()
	var out []string
	for info, err := range s.List(t.Context(), name+"/_tmp/") {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, info.Path)
	}
	return out
}

func TestOpenLogRefusesBadInput(t *testing.T) {
	m := dynamo.NewMapper(noClient{})
	for _, name := range []string{"", "/a", "a/", "a\x00", strings.Repeat("n", 1025)} {
		if _, err := OpenLog(m, "t", NewMemStore(), name); err == nil {
			t.Errorf("OpenLog accepted name %q", name)
		}
	}
	if _, err := OpenLog(nil, "t", NewMemStore(), "a"); err == nil {
		t.Error("OpenLog accepted a nil mapper")
	}
	if _, err := OpenLog(m, "t", nil, "a"); err == nil {
		t.Error("OpenLog accepted a nil store")
	}
	l, err := OpenLog(m, "t", NewMemStore(), "logs/a")
	if err != nil {
		t.Fatal(err)
	}
	if p := l.Path(7); p != "logs/a/00000000000000000007.json" {
		t.Errorf("Path(7) = %q", p)
	}
	// Versions below 1 are refused before any request (the mapper has no
	// client: a request would panic).
	if _, err := l.Read(t.Context(), 0); err == nil {
		t.Error("Read(0) accepted")
	}
	if err := l.AppendAt(t.Context(), -1, nil); err == nil {
		t.Error("AppendAt(-1) accepted")
	}
	for _, err := range l.Entries(t.Context(), 0) {
		if err == nil {
			t.Error("Entries(0) accepted")
		}
	}
}

func TestLogAppendReadLatest(t *testing.T) {
	checkNoLeak(t)
	table := logTable(t)
	s := newHookStore(NewMemStore())
	client, ct := countingClient(t)
	l := openLog(t, table, client, s, "logs/a")
	ctx := t.Context()

	if v, err := l.Latest(ctx); err != nil || v != 0 {
		t.Fatalf("Latest of an empty log = %d, %v; want 0", v, err)
	}
	if _, err := l.Read(ctx, 1); !errors.Is(err, ErrNotExist) || !strings.Contains(err.Error(), "never appended") {
		t.Errorf("Read(1) of an empty log: %v", err)
	}
	for range l.Entries(ctx, 1) {
		t.Error("Entries of an empty log yielded")
	}
	for i := 1; i <= 5; i++ {
		before := ct.Count()
		v, err := l.Append(ctx, []byte(fmt.Sprintf(`{"n":%d}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		if v != int64(i) {
			t.Fatalf("append %d got version %d", i, v)
		}
		// After the first append the Log knows the next version: claim and
		// mark complete, no Query.
		if n := ct.Count() - before; i > 1 && n != 2 {
			t.Errorf("append %d: %d DynamoDB requests, want 2", i, n)
		}
	}
	if v, err := l.Latest(ctx); err != nil || v != 5 {
		t.Fatalf("Latest = %d, %v", v, err)
	}
	data, err := l.Read(ctx, 3)
	if err != nil || string(data) != `{"n":3}` {
		t.Fatalf("Read(3) = %q, %v", data, err)
	}
	if got, _, err := s.Get(ctx, "logs/a/00000000000000000003.json"); err != nil || string(got) != `{"n":3}` {
		t.Errorf("object of version 3: %q %v", got, err)
	}
	var versions []int64
	for e, err := range l.Entries(ctx, 2) {
		if err != nil {
			t.Fatal(err)
		}
		if string(e.Data) != fmt.Sprintf(`{"n":%d}`, e.Version) {
			t.Errorf("entry %d = %q", e.Version, e.Data)
		}
		versions = append(versions, e.Version)
	}
	if fmt.Sprint(versions) != "[2 3 4 5]" {
		t.Errorf("Entries(2) versions %v", versions)
	}
	if tmp := tempObjects(t, s, "logs/a"); len(tmp) != 0 {
		t.Errorf("temporary objects left: %v", tmp)
	}
	if _, err := l.Read(ctx, 6); !errors.Is(err, ErrNotExist) {
		t.Errorf("Read(6): %v", err)
	}
	for v := int64(1); v <= 5; v++ {
		r, err := l.table.Load(ctx, logRecord{Log: "logs/a", Version: v}, dynamo.ConsistentRead())
		if err != nil || !r.Complete || r.Rev != 2 {
			t.Errorf("claim %d: %+v %v", v, r, err)
		}
	}
	// A second Log of the same name (another process) starts from the latest.
	other := openLog(t, table, nil, s, "logs/a")
	if v, err := other.Append(ctx, []byte("6")); err != nil || v != 6 {
		t.Errorf("other Log appended %d, %v; want 6", v, err)
	}
	// and the first one, whose hint is stale, steps over it.
	if v, err := l.Append(ctx, []byte("7")); err != nil || v != 7 {
		t.Errorf("stale Log appended %d, %v; want 7", v, err)
	}
	// Logs are separate by name.
	b := openLog(t, table, nil, s, "logs/b")
	if v, err := b.Append(ctx, []byte("b1")); err != nil || v != 1 {
		t.Errorf("log b appended %d, %v; want 1", v, err)
	}
}

func TestLogAppendAt(t *testing.T) {
	checkNoLeak(t)
	table := logTable(t)
	s := NewMemStore()
	l := openLog(t, table, nil, s, "l")
	ctx := t.Context()
	if err := l.AppendAt(ctx, 2, []byte("x")); !errors.Is(err, ErrGap) {
		t.Errorf("AppendAt(2) of an empty log: %v, want ErrGap", err)
	}
	if err := l.AppendAt(ctx, 1, []byte("one")); err != nil {
		t.Fatal(err)
	}
	err := l.AppendAt(ctx, 1, []byte("uno"))
	if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "version 1") {
		t.Errorf("AppendAt(1) again: %v, want ErrExists", err)
	}
	if err := l.AppendAt(ctx, 3, []byte("x")); !errors.Is(err, ErrGap) || !strings.Contains(err.Error(), "append at 2") {
		t.Errorf("AppendAt(3): %v, want ErrGap", err)
	}
	if err := l.AppendAt(ctx, 2, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if data, err := l.Read(ctx, 1); err != nil || string(data) != "one" {
		t.Errorf("Read(1) = %q, %v", data, err)
	}
	// A race for one version: exactly one wins, the others get ErrExists.
	var wg sync.WaitGroup
	results := make(chan error, 4)
	for i := range 4 {
		w := openLog(t, table, nil, s, "l")
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- w.AppendAt(ctx, 3, []byte(fmt.Sprint("w", i)))
		}()
	}
	wg.Wait()
	close(results)
	won := 0
	for err := range results {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrExists):
			t.Errorf("AppendAt race: %v", err)
		}
	}
	if won != 1 {
		t.Errorf("%d writers won version 3", won)
	}
	if tmp := tempObjects(t, s, "l"); len(tmp) != 0 {
		t.Errorf("temporary objects left: %v", tmp)
	}
}

// dieAfterClaim does what a writer that dies after claiming version v and
// before copying leaves behind: the temporary object and an incomplete
// claim, made age ago.
func dieAfterClaim(t *testing.T, l *Log, v int64, data string, age time.Duration) logRecord {
	t.Helper()
	tmp := l.tempPath()
	if _, err := l.store.Put(t.Context(), tmp, []byte(data)); err != nil {
		t.Fatal(err)
	}
	r, err := l.table.Save(t.Context(), logRecord{Log: l.name, Version: v, Temp: tmp, Owner: "dead",
		Claimed: time.Now().Add(-age).UnixMilli()}, dynamo.WithSaveBehavior(dynamo.SavePut))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Another writer's incomplete claim counts as abandoned once it is older
// than the timeout × the clock skew rate (WithClockSkewRate applies to a
// Log): at 30 s old, with the 20 s timeout, it is young for the default rate
// 3 (copied, left incomplete to its writer) and abandoned for rate 1
// (completed).
func TestLogAbandonAfterSkewRate(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		rate     float64
		complete bool
	}{{DefaultClockSkewRate, false}, {1, true}} {
		s := NewMemStore()
		table := logTable(t)
		l := openLog(t, table, nil, s, "l", WithClockSkewRate(tc.rate))
		if _, err := l.Append(ctx, []byte("1")); err != nil { // l's hint is 2 now
			t.Fatal(err)
		}
		dieAfterClaim(t, l, 2, "dead 2", 30*time.Second)
		if v, err := l.Append(ctx, []byte("3")); err != nil || v != 3 {
			t.Fatalf("rate %v: Append = %d, %v; want 3", tc.rate, v, err)
		}
		r, err := l.table.Load(ctx, logRecord{Log: "l", Version: 2}, dynamo.ConsistentRead())
		if err != nil || r.Complete != tc.complete {
			t.Errorf("rate %v: claim 2 = %+v, %v; want Complete %v", tc.rate, r, err, tc.complete)
		}
		if data, _, err := s.Get(ctx, l.Path(2)); err != nil || string(data) != "dead 2" {
			t.Errorf("rate %v: entry 2 = %q, %v; want it copied", tc.rate, data, err)
		}
	}
}

// OpenLog refuses the options that do not apply to a Log, instead of
// ignoring them.
func TestOpenLogRefusesCommitterOptions(t *testing.T) {
	m := dynamo.NewMapper(&dynamodb.Client{})
	for _, tc := range []struct {
		opt  Option
		want string
	}{{WithTTL(2 * time.Hour), "WithTTL applies to a Committer only"}, {WithPollInterval(time.Second), "WithPollInterval applies to a Committer only"}} {
		_, err := OpenLog(m, "t", NewMemStore(), "l", tc.opt)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OpenLog: %v; want ErrInvalidInput saying %q", err, tc.want)
		}
	}
	if _, err := OpenLog(m, "t", NewMemStore(), "l", WithTimeout(time.Second), WithClockSkewRate(2), WithOwner("o")); err != nil {
		t.Errorf("OpenLog with options that apply: %v", err)
	}
}

// A writer that dies after claiming and before copying: its entry is
// completed by the next reader, or by the next writer, which then appends
// after it.
func TestLogDeadWriterCompleted(t *testing.T) {
	ctx := t.Context()
	t.Run("by a reader", func(t *testing.T) {
		checkNoLeak(t)
		s := NewMemStore()
		l := openLog(t, logTable(t), nil, s, "l")
		if _, err := l.Append(ctx, []byte("1")); err != nil {
			t.Fatal(err)
		}
		dead := dieAfterClaim(t, l, 2, "dead's entry", 0)
		if _, _, err := s.Get(ctx, l.Path(2)); !errors.Is(err, ErrNotExist) {
			t.Fatalf("entry 2 exists before completion: %v", err)
		}
		if v, _ := l.Latest(ctx); v != 2 {
			t.Errorf("Latest = %d, want 2 (claimed, incomplete)", v)
		}
		data, err := l.Read(ctx, 2)
		if err != nil || string(data) != "dead's entry" {
			t.Fatalf("Read(2) = %q, %v", data, err)
		}
		r, _ := l.table.Load(ctx, logRecord{Log: "l", Version: 2}, dynamo.ConsistentRead())
		if !r.Complete || r.Owner != "dead" || r.Temp != dead.Temp {
			t.Errorf("claim after Read %+v", r)
		}
		if _, err := s.Head(ctx, dead.Temp); !errors.Is(err, ErrNotExist) {
			t.Errorf("temporary object not deleted: %v", err)
		}
		if data, _, err := s.Get(ctx, l.Path(2)); err != nil || string(data) != "dead's entry" {
			t.Errorf("entry object %q %v", data, err)
		}
	})
	t.Run("by a writer", func(t *testing.T) {
		checkNoLeak(t)
		s := NewMemStore()
		table := logTable(t)
		l := openLog(t, table, nil, s, "l") // its hint will say 2
		if _, err := l.Append(ctx, []byte("1")); err != nil {
			t.Fatal(err)
		}
		claim := func(v int64) logRecord {
			r, err := l.table.Load(ctx, logRecord{Log: "l", Version: v}, dynamo.ConsistentRead())
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		entry := func(v int64) string {
			data, _, err := s.Get(ctx, l.Path(v))
			if err != nil {
				return err.Error()
			}
			return string(data)
		}
		// A fresh Log asks DynamoDB for the latest and completes it.
		dead := dieAfterClaim(t, l, 2, "dead 2", 0)
		if v, err := openLog(t, table, nil, s, "l").Append(ctx, []byte("3")); err != nil || v != 3 {
			t.Fatalf("Append = %d, %v; want 3", v, err)
		}
		if entry(2) != "dead 2" || !claim(2).Complete {
			t.Errorf("entry 2 %q, claim %+v: not completed", entry(2), claim(2))
		}
		if _, err := s.Head(ctx, dead.Temp); !errors.Is(err, ErrNotExist) {
			t.Errorf("temporary object of 2: %v", err)
		}
		// A Log whose hint is stale conflicts, reads the latest, copies
		// it, and — as it is older than the timeout — marks it complete.
		dead = dieAfterClaim(t, l, 4, "dead 4", 5*time.Minute)
		if v, err := l.Append(ctx, []byte("5")); err != nil || v != 5 {
			t.Fatalf("Append = %d, %v; want 5", v, err)
		}
		if entry(4) != "dead 4" || !claim(4).Complete {
			t.Errorf("entry 4 %q, claim %+v: not completed", entry(4), claim(4))
		}
		if _, err := s.Head(ctx, dead.Temp); !errors.Is(err, ErrNotExist) {
			t.Errorf("temporary object of 4: %v", err)
		}
		// A younger incomplete claim is most likely its live writer's: it is
		// copied (no hole below the next claim), the rest left to its writer.
		if v, err := l.Append(ctx, []byte("6")); err != nil || v != 6 { // hint 7 now
			t.Fatalf("Append = %d, %v; want 6", v, err)
		}
		dead = dieAfterClaim(t, l, 7, "young 7", 0)
		if v, err := l.Append(ctx, []byte("8")); err != nil || v != 8 {
			t.Fatalf("Append = %d, %v; want 8", v, err)
		}
		if entry(7) != "young 7" {
			t.Errorf("entry 7 %q: not copied", entry(7))
		}
		if claim(7).Complete {
			t.Errorf("claim 7 marked complete by a writer passing it young")
		}
		if tmp := tempObjects(t, s, "l"); len(tmp) != 1 || tmp[0] != dead.Temp {
			t.Errorf("temporary objects left: %v; want only the young claim's %s", tmp, dead.Temp)
		}
		// Readers find its object, and complete the claim.
		if data, err := l.Read(ctx, 7); err != nil || string(data) != "young 7" {
			t.Errorf("Read(7) = %q, %v", data, err)
		}
		if !claim(7).Complete {
			t.Errorf("claim 7 not completed by Read")
		}
		// No hole: every version up to the latest has its object.
		latest, _ := l.Latest(ctx)
		for v := int64(1); v <= latest; v++ {
			if _, err := s.Head(ctx, l.Path(v)); err != nil {
				t.Errorf("entry %d: %v", v, err)
			}
		}
		if tmp := tempObjects(t, s, "l"); len(tmp) != 0 {
			t.Errorf("temporary objects left after Read: %v", tmp)
		}
	})
	t.Run("by AppendAt", func(t *testing.T) {
		checkNoLeak(t)
		s := NewMemStore()
		l := openLog(t, logTable(t), nil, s, "l")
		dieAfterClaim(t, l, 1, "dead's entry", 0)
		if err := l.AppendAt(ctx, 1, []byte("x")); !errors.Is(err, ErrExists) {
			t.Errorf("AppendAt(1): %v", err)
		}
		if data, _, err := s.Get(ctx, l.Path(1)); err != nil || string(data) != "dead's entry" {
			t.Errorf("entry 1: %q %v", data, err)
		}
	})
	t.Run("temporary object lost", func(t *testing.T) {
		checkNoLeak(t)
		s := NewMemStore()
		l := openLog(t, logTable(t), nil, s, "l")
		r := dieAfterClaim(t, l, 1, "gone", 0)
		if err := s.Delete(ctx, r.Temp); err != nil {
			t.Fatal(err)
		}
		_, err := l.Read(ctx, 1)
		if err == nil || !strings.Contains(err.Error(), "cannot be completed") {
			t.Errorf("Read of an entry whose data is gone: %v", err)
		}
	})
}

// An entry claimed and copied, but not marked complete (its writer died
// between the two): a second copy writes the same data; the claim is then
// marked complete.
func TestLogCompleteIsIdempotent(t *testing.T) {
	checkNoLeak(t)
	s := NewMemStore()
	l := openLog(t, logTable(t), nil, s, "l")
	ctx := t.Context()
	r := dieAfterClaim(t, l, 1, "data", 0)
	if _, err := s.Copy(ctx, r.Temp, l.Path(1)); err != nil {
		t.Fatal(err)
	}
	if err := l.complete(ctx, r); err != nil {
		t.Fatal(err)
	}
	// A second completer with the stale claim: the copy finds the
	// temporary object gone, reads the claim, sees it complete.
	if err := l.complete(ctx, r); err != nil {
		t.Errorf("second completion: %v", err)
	}
	if data, err := l.Read(ctx, 1); err != nil || string(data) != "data" {
		t.Errorf("Read(1) = %q, %v", data, err)
	}
}

// 8 writers × 50 Appends: versions 1..400, each exactly once, each reading
// back what the writer that was told that version appended.
func TestLogConcurrentAppends(t *testing.T) {
	checkNoLeak(t)
	s := NewMemStore()
	table := logTable(t)
	checkConcurrentAppends(t, func(int) *Log { return openLog(t, table, nil, s, "l") }, 8, 50)
	if tmp := tempObjects(t, s, "l"); len(tmp) != 0 {
		t.Errorf("temporary objects left: %v", tmp)
	}
}

// checkConcurrentAppends runs writers goroutines, each appending rounds
// entries through its own Log from open, and checks the log.
func checkConcurrentAppends(t *testing.T, open func(writer int) *Log, writers, rounds int) {
	t.Helper()
	ctx := t.Context()
	logs := make([]*Log, writers)
	for i := range logs {
		logs[i] = open(i)
	}
	var mu sync.Mutex
	told := map[int64]string{} // version → the data its writer appended
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w, l := range logs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				data := fmt.Sprintf(`{"writer":%d,"i":%d}`, w, i)
				v, err := l.Append(ctx, []byte(data))
				if err != nil {
					errs <- fmt.Errorf("writer %d append %d: %w", w, i, err)
					return
				}
				mu.Lock()
				if prev, dup := told[v]; dup {
					errs <- fmt.Errorf("version %d given to %s and %s", v, prev, data)
				}
				told[v] = data
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n := int64(writers * rounds)
	if len(told) != int(n) {
		t.Fatalf("%d versions told, want %d", len(told), n)
	}
	if latest, err := logs[0].Latest(ctx); err != nil || latest != n {
		t.Fatalf("Latest = %d, %v; want %d", latest, err, n)
	}
	want := int64(1)
	for e, err := range logs[0].Entries(ctx, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Version != want {
			t.Fatalf("entry %d, want %d", e.Version, want)
		}
		if string(e.Data) != told[e.Version] {
			t.Errorf("entry %d reads %q; its writer appended %q", e.Version, e.Data, told[e.Version])
		}
		want++
	}
	if want != n+1 {
		t.Errorf("Entries stopped at %d", want-1)
	}
}

// A claim whose response was lost, retried by the SDK, is recognised as our
// own: the entry gets one version, not two.
func TestLogLostClaimResponse(t *testing.T) {
	checkNoLeak(t)
	table := logTable(t)
	drop := dynamotest.NewDropper("PutItem")
	s := newHookStore(NewMemStore())
	l := openLog(t, table, drop.Client(t), s, "l")
	ctx := t.Context()
	drop.Arm(1) // the claim
	v, err := l.Append(ctx, []byte("once"))
	if err != nil || v != 1 {
		t.Fatalf("Append = %d, %v", v, err)
	}
	if drop.Dropped() != 1 {
		t.Errorf("dropped %d", drop.Dropped())
	}
	s.onCopy = func() { drop.Arm(1) } // the completion mark, which follows the copy
	if v, err := l.Append(ctx, []byte("twice")); err != nil || v != 2 {
		t.Fatalf("Append = %d, %v", v, err)
	}
	if latest, _ := l.Latest(ctx); latest != 2 || drop.Dropped() != 2 {
		t.Errorf("Latest = %d, want 2; dropped %d, want 2", latest, drop.Dropped())
	}
	for v := int64(1); v <= 2; v++ {
		r, err := l.table.Load(ctx, logRecord{Log: "l", Version: v}, dynamo.ConsistentRead())
		if err != nil || !r.Complete {
			t.Errorf("claim %d %+v %v", v, r, err)
		}
	}
}

// A store that fails copies: the entry is appended (claimed) anyway, and
// completed by the next reader once the store works again.
func TestLogCopyFailureLeavesEntryForReaders(t *testing.T) {
	checkNoLeak(t)
	s := &failingCopyStore{Store: NewMemStore()}
	l := openLog(t, logTable(t), nil, s, "l")
	ctx := t.Context()
	s.fail.Store(true)
	v, err := l.Append(ctx, []byte("a"))
	if err != nil || v != 1 {
		t.Fatalf("Append = %d, %v; want 1 (claimed)", v, err)
	}
	if _, err := l.Read(ctx, 1); err == nil {
		t.Fatal("Read while copies fail succeeded")
	}
	s.fail.Store(false)
	if data, err := l.Read(ctx, 1); err != nil || string(data) != "a" {
		t.Fatalf("Read(1) = %q, %v", data, err)
	}
	if v, err := l.Append(ctx, []byte("b")); err != nil || v != 2 {
		t.Errorf("Append = %d, %v", v, err)
	}
}

type failingCopyStore struct {
	Store
	fail atomic.Bool
}

func (f *failingCopyStore) Copy(ctx context.Context, src, dst string) (ObjectInfo, error) {
	if f.fail.Load() {
		return ObjectInfo{}, errors.New("copy refused by the test")
	}
	return f.Store.Copy(ctx, src, dst)
}

// A claim whose response is lost is read back (by the mapper, which never
// resends it): it was applied and names our temporary object, so the append
// succeeded.
func TestLogClaimWithoutAnyResponse(t *testing.T) {
	checkNoLeak(t)
	table := logTable(t)
	drop := dynamotest.NewDropper("PutItem")
	s := NewMemStore()
	fast := drop.Client(t, func(o *dynamodb.Options) { // give up soon
		o.Retryer = retry.AddWithMaxBackoffDelay(retry.NewStandard(), 5*time.Millisecond)
	})
	l := openLog(t, table, fast, s, "l")
	ctx := t.Context()
	drop.Arm(100) // the claim and all of the SDK's retries of it
	s2 := newHookStore(s)
	l.store = s2
	s2.onCopy = func() { drop.Arm(0) } // let the completion mark through
	v, err := l.Append(ctx, []byte("x"))
	if err != nil || v != 1 {
		t.Fatalf("Append = %d, %v; want 1", v, err)
	}
	if drop.Dropped() < 1 {
		t.Errorf("dropped %d responses; want the claim's", drop.Dropped())
	}
	if data, err := l.Read(ctx, 1); err != nil || string(data) != "x" {
		t.Errorf("Read(1) = %q, %v", data, err)
	}
	if tmp := tempObjects(t, s, "l"); len(tmp) != 0 {
		t.Errorf("temporary objects left: %v", tmp)
	}
}

// Issue 11 case 12: a claim whose answers are all lost, and whose settling
// read fails too, may be in the log: Append says so with ErrUnknownOutcome
// (and keeps the temporary object the claim names).
func TestLogClaimUnknownOutcome(t *testing.T) {
	checkNoLeak(t)
	table := logTable(t)
	drop := dynamotest.NewRequestDropper(func(r *http.Request) bool {
		target := r.Header.Get("X-Amz-Target")
		return strings.HasSuffix(target, ".PutItem") || strings.HasSuffix(target, ".GetItem")
	})
	s := NewMemStore()
	fast := drop.Client(t, func(o *dynamodb.Options) {
		o.Retryer = retry.AddWithMaxBackoffDelay(retry.NewStandard(), 5*time.Millisecond)
	})
	l := openLog(t, table, fast, s, "l")
	ctx := t.Context()
	if _, err := l.Latest(ctx); err != nil { // the hint: no Query while armed
		t.Fatal(err)
	}
	drop.Arm(100)
	_, err := l.Append(ctx, []byte("x"))
	drop.Arm(0)
	if !errors.Is(err, ErrUnknownOutcome) || !errors.Is(err, dynamo.ErrUnknownOutcome) {
		t.Fatalf("Append: %v; want ErrUnknownOutcome", err)
	}
	if v, err := l.Latest(ctx); err != nil || v != 1 {
		t.Fatalf("Latest = %d, %v; the claim was applied", v, err)
	}
	if data, err := l.Read(ctx, 1); err != nil || string(data) != "x" {
		t.Errorf("Read(1) = %q, %v; the kept temporary object completes the entry", data, err)
	}
}

// noClient is a DynamoDB client for tests that must send nothing: any call
// panics (its embedded interface is nil).
type noClient struct{ dynamo.Client }

// Read completes an incomplete claim before reading it, even when its
// entry's object already exists: a writer that passed the claim while it
// was young copied the object, and the claim's writer died before marking
// it complete. After Read (and after Entries) the claim is complete and its
// temporary object is gone.
func TestLogReadCompletesPassedClaim(t *testing.T) {
	checkNoLeak(t)
	ctx := t.Context()
	for _, via := range []string{"Read", "Entries"} {
		t.Run(via, func(t *testing.T) {
			s := NewMemStore()
			l := openLog(t, logTable(t), nil, s, "l")
			if _, err := l.Append(ctx, []byte("1")); err != nil {
				t.Fatal(err)
			}
			young := dieAfterClaim(t, l, 2, "young 2", 0)
			// The next writer passes the young claim: it copies it only.
			if v, err := l.Append(ctx, []byte("3")); err != nil || v != 3 {
				t.Fatalf("Append = %d, %v; want 3", v, err)
			}
			if c, _ := l.table.Load(ctx, logRecord{Log: "l", Version: 2}, dynamo.ConsistentRead()); c.Complete {
				t.Fatalf("claim 2 completed by a writer passing it young: the test no longer sets up the case")
			}
			switch via {
			case "Read":
				if data, err := l.Read(ctx, 2); err != nil || string(data) != "young 2" {
					t.Fatalf("Read(2) = %q, %v", data, err)
				}
			case "Entries":
				var got []string
				for e, err := range l.Entries(ctx, 1) {
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, string(e.Data))
				}
				if fmt.Sprint(got) != "[1 young 2 3]" {
					t.Fatalf("Entries = %q", got)
				}
			}
			c, err := l.table.Load(ctx, logRecord{Log: "l", Version: 2}, dynamo.ConsistentRead())
			if err != nil || !c.Complete || c.Owner != "dead" {
				t.Errorf("claim 2 after %s: %+v, %v; want complete", via, c, err)
			}
			if _, err := s.Head(ctx, young.Temp); !errors.Is(err, ErrNotExist) {
				t.Errorf("temporary object of claim 2 after %s: %v; want deleted", via, err)
			}
			if tmp := tempObjects(t, s, "l"); len(tmp) != 0 {
				t.Errorf("temporary objects left: %v", tmp)
			}
		})
	}
}
