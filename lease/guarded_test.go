package lease

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/telemetry"
)

// Stock is a resource guarded writes change: Token is the fencing token of
// the holder that wrote it last.
type Stock struct {
	ID      string `dynamo:"id,hash"`
	Count   int    `dynamo:"count"`
	Token   int64  `dynamo:"token"`
	Version int64  `dynamo:"v,version"`
}

// tokenAtMost is the condition of the usual pattern: the stored token is
// no later than the writer's own, so the holder may write again and again,
// and any earlier holder is refused.
func tokenAtMost(mine int64) dynamo.WriteOption {
	return dynamo.If(expression.Or(
		expression.AttributeNotExists(expression.Name("token")),
		expression.Name("token").LessThanEqual(expression.Value(mine))))
}

// stockTable creates a table for Stock and returns it through a mapper on
// the client c (nil: a plain test client).
func stockTable(t *testing.T, c dynamo.Client) (*dynamo.Table[Stock], string) {
	t.Helper()
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "stock", "id", types.ScalarAttributeTypeS, "", "")
	if c == nil {
		c = dynamotest.Client(t)
	}
	st, err := dynamo.NewTable[Stock](dynamo.NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	return st, name
}

// counter counts the requests a client sends, of every operation.
func counter(t *testing.T) (*dynamotest.Dropper, dynamo.Client) {
	d := dynamotest.NewRequestDropper(func(*http.Request) bool { return true })
	return d, d.Client(t)
}

// takeOver has c acquire key from a silent holder: it advances clk, c's
// clock, from poll to poll (whenever c's only timer is due within poll: its
// poll timer, never the new lease's watchdog or heartbeat, which c's
// options must put further out) until c holds the key.
func takeOver(t *testing.T, c *Client, clk *clock.Fake, key string, poll time.Duration) *Lease {
	t.Helper()
	type result struct {
		l   *Lease
		err error
	}
	got := make(chan result, 1)
	go func() {
		l, err := c.Acquire(t.Context(), key)
		got <- result{l, err}
	}()
	start := clk.Now()
	for {
		changed := clk.Changed()
		if next, ok := clk.Next(); ok && clk.Timers() == 1 && next <= poll {
			if clk.Now().Sub(start) > time.Hour {
				t.Fatalf("%q not taken over after %v", key, clk.Now().Sub(start))
			}
			clk.Advance(next)
			continue
		}
		select {
		case r := <-got:
			if r.err != nil {
				t.Fatal(r.err)
			}
			return r.l
		case <-changed:
		}
	}
}

func load(t *testing.T, st *dynamo.Table[Stock], id string) Stock {
	t.Helper()
	s, err := st.Load(t.Context(), Stock{ID: id}, dynamo.ConsistentRead())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// While the lease is held, a guarded Update writes (through
// TransactWriteItems), retries its conflicts on the item the conflict
// carried, and the holder's second write under `token <= mine` succeeds —
// where `token < mine` refuses it. A guarded Transact re-runs on a conflict
// and commits both items.
func TestGuardedWritesWhileHeld(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	clk := clock.NewFake(time.Now()) // stands still: no heartbeat is needed
	c := newClient(t, table, nil, WithOwner("h"), WithClock(clk))
	l, err := c.TryAcquire(t.Context(), "restock")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	tx := dynamotest.NewDropper("TransactWriteItems")
	st, name := stockTable(t, tx.Client(t))
	other, err := dynamo.NewTable[Stock](dynamo.NewMapper(dynamotest.Client(t)), name) // a writer elsewhere
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := other.Save(ctx, Stock{ID: "a", Count: 10}); err != nil {
		t.Fatal(err)
	}

	calls := 0
	saved, err := Update(ctx, l, st, Stock{ID: "a"}, func(s Stock) (Stock, error) {
		calls++
		if calls == 1 { // another writer gets in first: a conflict
			if _, err := other.Save(ctx, Stock{ID: "a", Count: 100, Version: s.Version}); err != nil {
				t.Error(err)
			}
		}
		s.Count--
		s.Token = l.Token()
		return s, nil
	}, tokenAtMost(l.Token()))
	if err != nil {
		t.Fatalf("guarded Update while held: %v", err)
	}
	if calls != 2 || saved.Count != 99 || saved.Version != 3 {
		t.Errorf("guarded Update: fn called %d times, saved %+v; want 2 calls (a conflict retried), count 99, version 3", calls, saved)
	}
	if got := load(t, st, "a"); got != saved {
		t.Errorf("stored %+v, returned %+v", got, saved)
	}
	if tx.Sent() != 2 {
		t.Errorf("%d TransactWriteItems sent, want 2: each guarded write is one transaction", tx.Sent())
	}

	// The holder writes again: the stored token is its own.
	dec := func(s Stock) (Stock, error) { s.Count--; s.Token = l.Token(); return s, nil }
	if saved, err = Update(ctx, l, st, Stock{ID: "a"}, dec, tokenAtMost(l.Token())); err != nil || saved.Count != 98 {
		t.Fatalf("the holder's second write with token <= mine: %+v, %v", saved, err)
	}
	older := dynamo.If(expression.Name("token").LessThan(expression.Value(l.Token())))
	_, err = Update(ctx, l, st, Stock{ID: "a"}, dec, older)
	if !errors.Is(err, dynamo.ErrConditionFailed) || errors.Is(err, ErrLost) || l.Err() != nil {
		t.Fatalf("the holder's second write with token < mine: %v (lease %v); want ErrConditionFailed, lease held", err, l.Err())
	}

	// A fenced read-modify-write of two items, re-run once on a conflict.
	if _, err := other.Save(ctx, Stock{ID: "b"}); err != nil {
		t.Fatal(err)
	}
	runs := 0
	err = l.Transact(ctx, func(tx *dynamo.Tx) error {
		runs++
		a, err := st.In(tx).Load(Stock{ID: "a"})
		if err != nil {
			return err
		}
		b, err := st.In(tx).Load(Stock{ID: "b"})
		if err != nil {
			return err
		}
		if runs == 1 {
			if _, err := other.Save(ctx, Stock{ID: "b", Count: 5, Version: b.Version}); err != nil {
				t.Error(err)
			}
		}
		a.Count, b.Count = a.Count-3, b.Count+3
		a.Token, b.Token = l.Token(), l.Token()
		if _, err := st.In(tx).Save(a, tokenAtMost(l.Token())); err != nil {
			return err
		}
		_, err = st.In(tx).Save(b, tokenAtMost(l.Token()))
		return err
	})
	if err != nil {
		t.Fatalf("guarded Transact while held: %v", err)
	}
	if a, b := load(t, st, "a"), load(t, st, "b"); runs != 2 || a.Count != 95 || b.Count != 8 {
		t.Errorf("guarded Transact: %d runs, a=%+v b=%+v; want 2 runs, counts 95 and 8", runs, a, b)
	}
}

// A holder paused past its lease is taken over; its guarded Update and
// Transact then fail with ErrLost, naming the new holder, without writing
// anything or calling the function again, and its lease ends. Its next
// guarded write sends nothing. The new holder's guarded Transact (a
// fenced read-modify-write of two items) commits.
func TestGuardedWritesRefusedAfterTakeover(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	const d, poll = 4 * time.Second, 500 * time.Millisecond
	frozen := clock.NewFake(time.Now())
	paused := newClient(t, table, nil, WithOwner("paused"), WithClock(frozen), WithLeaseDuration(d))
	// One taker per key, each on a clock of its own that stops once it holds
	// the key (takeOver advances a clock with no other timers).
	taker := func() (*Client, *clock.Fake) {
		clk := clock.NewFake(time.Now())
		return newClient(t, table, nil, WithOwner("taker"), WithClock(clk), WithLeaseDuration(d),
			WithHeartbeatInterval(d/2), WithPollInterval(poll)), clk
	}
	taker1, clk1 := taker()
	taker2, clk2 := taker()
	reqs, rc := counter(t)
	st, _ := stockTable(t, rc)
	ctx := t.Context()
	for _, id := range []string{"a", "b"} {
		if _, err := st.Save(ctx, Stock{ID: id, Count: 10}); err != nil {
			t.Fatal(err)
		}
	}
	lp1, err := paused.TryAcquire(ctx, "k1")
	if err != nil {
		t.Fatal(err)
	}
	lp2, err := paused.TryAcquire(ctx, "k2")
	if err != nil {
		t.Fatal(err)
	}
	lt1 := takeOver(t, taker1, clk1, "k1", poll)
	defer lt1.Release(context.Background())
	lt2 := takeOver(t, taker2, clk2, "k2", poll)
	defer lt2.Release(context.Background())

	calls := 0
	dec := func(s Stock) (Stock, error) { calls++; s.Count--; s.Token = lp1.Token(); return s, nil }
	_, err = Update(ctx, lp1, st, Stock{ID: "a"}, dec, tokenAtMost(lp1.Token()))
	if !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "taken over by taker") {
		t.Fatalf("guarded Update after takeover: %v; want ErrLost naming the taker", err)
	}
	if calls != 1 || lp1.Context().Err() == nil || !errors.Is(lp1.Err(), ErrLost) {
		t.Errorf("fn called %d times (want 1); lease: %v, want ended with ErrLost", calls, lp1.Err())
	}

	runs := 0
	move := func(l *Lease) func(tx *dynamo.Tx) error {
		return func(tx *dynamo.Tx) error {
			runs++
			a, err := st.In(tx).Load(Stock{ID: "a"})
			if err != nil {
				return err
			}
			b, err := st.In(tx).Load(Stock{ID: "b"})
			if err != nil {
				return err
			}
			a.Count, b.Count, a.Token, b.Token = a.Count-1, b.Count+1, l.Token(), l.Token()
			if _, err := st.In(tx).Save(a, tokenAtMost(l.Token())); err != nil {
				return err
			}
			_, err = st.In(tx).Save(b, tokenAtMost(l.Token()))
			return err
		}
	}
	err = lp2.Transact(ctx, move(lp2))
	if !errors.Is(err, ErrLost) || runs != 1 || lp2.Context().Err() == nil {
		t.Fatalf("guarded Transact after takeover: %v after %d runs (lease %v); want ErrLost after 1 run, lease ended", err, runs, lp2.Err())
	}
	if a, b := load(t, st, "a"), load(t, st, "b"); a.Version != 1 || b.Version != 1 {
		t.Errorf("a refused write landed: a=%+v b=%+v", a, b)
	}

	sent := reqs.Sent()
	_, err = Update(ctx, lp1, st, Stock{ID: "a"}, dec)
	if !errors.Is(err, ErrLost) || reqs.Sent() != sent || calls != 1 {
		t.Errorf("guarded Update of a lease already lost: %v, %d requests, fn called %d times; want ErrLost, nothing sent, fn not called",
			err, reqs.Sent()-sent, calls-1)
	}

	runs = 0
	if err := lt1.Transact(ctx, move(lt1)); err != nil || runs != 1 {
		t.Fatalf("the new holder's guarded Transact: %v (%d runs)", err, runs)
	}
	if a, b := load(t, st, "a"), load(t, st, "b"); a.Count != 9 || b.Count != 11 || a.Token != lt1.Token() {
		t.Errorf("after the new holder's move: a=%+v b=%+v", a, b)
	}
	frozen.Advance(d) // the paused holder's clock runs again: nothing of it leaks
}

// A guarded write of a released lease sends nothing and does not call the
// function; its error wraps ErrReleased.
func TestGuardedWriteOfReleasedLeaseSendsNothing(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	c := newClient(t, table, nil, WithOwner("h"))
	l, err := c.TryAcquire(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	reqs, rc := counter(t)
	st, _ := stockTable(t, rc)
	ctx := t.Context()
	called := false
	fn := func(s Stock) (Stock, error) { called = true; return s, nil }
	errs := map[string]error{}
	_, errs["Update"] = Update(ctx, l, st, Stock{ID: "a"}, fn)
	errs["Transact"] = l.Transact(ctx, func(tx *dynamo.Tx) error { called = true; return nil })
	errs["WriteTx"] = l.WriteTx(ctx, []dynamo.TxOp{st.TxSave(Stock{ID: "a"})})
	_, errs["Save"] = Save(ctx, l, st, Stock{ID: "a"})
	for call, err := range errs {
		if !errors.Is(err, ErrReleased) || !strings.Contains(err.Error(), "nothing sent") {
			t.Errorf("%s of a released lease: %v; want ErrReleased, nothing sent", call, err)
		}
	}
	if reqs.Sent() != 0 || called {
		t.Errorf("%d requests sent, function called: %v; want none", reqs.Sent(), called)
	}
}

// A guarded Update or Transact whose ctx is done fails with the ctx's
// error, writes nothing, and leaves the lease held.
func TestGuardedWriteCancelled(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	c := newClient(t, table, nil, WithOwner("h"), WithClock(clock.NewFake(time.Now())))
	l, err := c.TryAcquire(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	st, _ := stockTable(t, nil)
	if _, err := st.Save(t.Context(), Stock{ID: "a", Count: 1}); err != nil {
		t.Fatal(err)
	}

	// Cancelled before the call.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = Update(ctx, l, st, Stock{ID: "a"}, func(s Stock) (Stock, error) { s.Count++; return s, nil })
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrLost) {
		t.Errorf("guarded Update with a cancelled ctx: %v", err)
	}
	err = l.Transact(ctx, func(tx *dynamo.Tx) error { return nil })
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrLost) {
		t.Errorf("guarded Transact with a cancelled ctx: %v", err)
	}

	// Cancelled while the function runs, before the write is sent.
	ctx, cancel = context.WithCancel(t.Context())
	_, err = Update(ctx, l, st, Stock{ID: "a"}, func(s Stock) (Stock, error) { cancel(); s.Count++; return s, nil })
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrLost) {
		t.Errorf("guarded Update cancelled in its function: %v", err)
	}
	ctx, cancel = context.WithCancel(t.Context())
	err = l.Transact(ctx, func(tx *dynamo.Tx) error {
		a, err := st.In(tx).Load(Stock{ID: "a"})
		if err != nil {
			return err
		}
		cancel()
		a.Count++
		_, err = st.In(tx).Save(a)
		return err
	})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrLost) {
		t.Errorf("guarded Transact cancelled in its function: %v", err)
	}
	if a := load(t, st, "a"); a.Version != 1 || l.Err() != nil {
		t.Errorf("after cancelled guarded writes: %+v (lease %v); want version 1, lease held", a, l.Err())
	}
}

// A guarded Update whose transaction's answer is lost is applied once:
// the resend under the same request token is acknowledged.
func TestGuardedUpdateLostAnswerAppliedOnce(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	c := newClient(t, table, nil, WithOwner("h"), WithClock(clock.NewFake(time.Now())))
	l, err := c.TryAcquire(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	drop := dynamotest.NewDropper("TransactWriteItems")
	st, _ := stockTable(t, drop.Client(t))
	drop.Arm(1)
	saved, err := Update(t.Context(), l, st, Stock{ID: "a"}, func(s Stock) (Stock, error) { s.Count++; return s, nil })
	if err != nil {
		t.Fatal(err)
	}
	if a := load(t, st, "a"); drop.Dropped() != 1 || a.Count != 1 || a.Version != 1 || saved != a {
		t.Errorf("dropped %d; stored %+v, returned %+v; want one drop and the change applied once", drop.Dropped(), a, saved)
	}
}

// A guarded Update or Lease.Transact whose function panics ends the
// mapper's span of the call (error.type panic); the panic reaches the
// caller with its value, and the lease is still held.
func TestGuardedCallWhoseFunctionPanicsEndsItsSpan(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	clk := clock.NewFake(time.Now()) // stands still: no heartbeat is needed
	c := newClient(t, table, nil, WithOwner("h"), WithClock(clk))
	l, err := c.TryAcquire(t.Context(), "restock")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	_, name := stockTable(t, nil)
	st, err := dynamo.NewTable[Stock](dynamo.NewMapper(dynamotest.Client(t), dynamo.WithTracerProvider(tp)), name)
	if err != nil {
		t.Fatal(err)
	}
	type boom struct{ call string }
	panicked := func(call string, run func()) {
		t.Helper()
		defer func() {
			t.Helper()
			if v := recover(); v != (boom{call}) {
				t.Errorf("%s: recovered %v; want the function's panic value", call, v)
			}
		}()
		run()
		t.Errorf("%s returned; want the function's panic", call)
	}
	panicked("Update", func() {
		_, _ = Update(t.Context(), l, st, Stock{ID: "a"}, func(Stock) (Stock, error) { panic(boom{"Update"}) })
	})
	lt, err := New(st.Mapper(), table, WithOwner("h"), WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lt.Close(context.Background()) })
	l2, err := lt.TryAcquire(t.Context(), "other")
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Release(context.Background())
	panicked("Transact", func() {
		_ = l2.Transact(t.Context(), func(tx *dynamo.Tx) error {
			if _, err := st.In(tx).Load(Stock{ID: "a"}); err != nil && !errors.Is(err, dynamo.ErrNotFound) {
				return err
			}
			panic(boom{"Transact"})
		})
	})
	for _, want := range []string{"Update " + name, "Transact"} {
		var got []sdktrace.ReadOnlySpan
		for _, s := range spans.Ended() {
			if s.Name() == want {
				got = append(got, s)
			}
		}
		if len(got) != 1 {
			t.Errorf("%d ended spans %q; want 1", len(got), want)
			continue
		}
		if v, _ := attrOf(got[0].Attributes(), telemetry.ErrorType); v.AsString() != "panic" {
			t.Errorf("%s: error.type %q; want panic", want, v.AsString())
		}
	}
	if l.Err() != nil || l2.Err() != nil {
		t.Errorf("leases ended: %v, %v; want both held", l.Err(), l2.Err())
	}
}

// The lease's guard is one of DynamoDB's 100 members of a transaction:
// Lease.WriteTx with 100 ops, and Lease.Transact whose run writes 100
// items, are refused before anything is sent, saying the guard is the
// 101st member and how far to split; 99 ops and the guard commit.
func TestGuardedTransactionCountsTheGuard(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	clk := clock.NewFake(time.Now()) // stands still: no heartbeat is needed
	tx := dynamotest.NewDropper("TransactWriteItems")
	c := newClient(t, table, tx.Client(t), WithOwner("h"), WithClock(clk))
	l, err := c.TryAcquire(t.Context(), "restock")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	st, _ := stockTable(t, nil)
	sent := tx.Sent()
	ops := func(n int) []dynamo.TxOp {
		var out []dynamo.TxOp
		for i := range n {
			out = append(out, st.TxSave(Stock{ID: fmt.Sprint(i), Count: 1}))
		}
		return out
	}
	refused := func(call string, err error, want string) {
		t.Helper()
		if !errors.Is(err, dynamo.ErrInvalidInput) || !strings.Contains(err.Error(), "the lease's guard, member 101") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s over the limit = %v; want ErrInvalidInput naming the lease's guard as member 101 and %q", call, err, want)
		}
	}
	refused("WriteTx", l.WriteTx(t.Context(), ops(100)), "at most 99 ops")
	refused("Transact", l.Transact(t.Context(), func(tx *dynamo.Tx) error {
		for i := range 100 {
			if _, err := st.In(tx).Save(Stock{ID: fmt.Sprint(i), Count: 1}); err != nil {
				return err
			}
		}
		return nil
	}), "at most 99 items read or written")
	if n := tx.Sent() - sent; n != 0 {
		t.Errorf("%d transactions sent; want none", n)
	}
	if err := l.WriteTx(t.Context(), ops(99)); err != nil {
		t.Fatalf("WriteTx of 99 ops and the guard = %v", err)
	}
	if got := load(t, st, "98"); got.Count != 1 {
		t.Errorf("stock 98 = %+v; want it written", got)
	}
}
