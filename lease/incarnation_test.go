package lease

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
)

// deleteRecord deletes the record of key behind the package's back, as a
// user (or TTL) would.
func deleteRecord(t *testing.T, table, key string) {
	t.Helper()
	_, err := dynamotest.Client(t).DeleteItem(t.Context(), &dynamodb.DeleteItemInput{
		TableName: aws.String(table),
		Key:       map[string]types.AttributeValue{"key": &types.AttributeValueMemberS{Value: key}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

type acquired struct {
	l   *Lease
	err error
}

// Issue 11 case 7: a waiter watched A's record at version 1; the record is
// deleted and B creates it again, at version 1 too. The waiter must not take
// B's record over when its patience with A's runs out: its wait starts again
// from B's incarnation, and only B's silence for a whole duration × rate
// lets it take over.
func TestWaiterRestartsOnNewIncarnation(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	const d = 10 * time.Second
	frozen := clock.NewFake(time.Now()) // A and B never heartbeat
	wclk := clock.NewFake(time.Now())
	a := newClient(t, table, nil, WithOwner("a"), WithClock(frozen), WithLeaseDuration(d))
	b := newClient(t, table, nil, WithOwner("b"), WithClock(frozen), WithLeaseDuration(d))
	w := newClient(t, table, nil, WithOwner("w"), WithClock(wclk), WithLeaseDuration(d),
		WithClockSkewRate(1), WithPollInterval(time.Hour))
	ctx := t.Context()
	la, err := a.TryAcquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan acquired, 1)
	go func() {
		l, err := w.Acquire(ctx, "k")
		got <- acquired{l, err}
	}()
	wclk.BlockUntil(ctx.Done(), 1) // w read A's record and waits d

	// A's record deleted; A gives up; B creates the key again, version 1.
	deleteRecord(t, table, "k")
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	lb, err := b.TryAcquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if rec, _ := b.table.Load(ctx, record{Key: "k"}, dynamo.ConsistentRead()); rec.Version != 1 {
		t.Fatalf("B's record is at version %d; the case needs version 1 again", rec.Version)
	}

	wclk.Advance(d) // w's patience with A's record runs out
	wclk.BlockUntil(ctx.Done(), 1)
	info, err := b.Holder(ctx, "k")
	if err != nil || info.Owner != "b" || info.Token != lb.Token() {
		t.Fatalf("after the waiter's patience with A's record ran out, Holder = %+v, %v; want B's record untouched (two live holders)", info, err)
	}
	if lb.Err() != nil {
		t.Fatalf("B lost its lease: %v", lb.Err())
	}

	wclk.Advance(d) // B has now been silent for d on w's clock
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.l.Token() <= lb.Token() {
		t.Errorf("w's token %d, want above B's %d", r.l.Token(), lb.Token())
	}
	_ = r.l.Release(ctx)
	frozen.Advance(2 * d) // B's watchdog ends its lease
	<-lb.Done()
}

// Issue 11 case 8: a holder's token T; its record is deleted; the next
// holder's clock is years behind. Its token must be above T — whether the
// old holder released before the deletion was seen, or the record was
// deleted under a live holder (then the next holder also waits the old
// holder's duration × rate, by which time the old holder has given up).
func TestTokenGrowsAcrossDeletion(t *testing.T) {
	behind := time.Now().Add(-10 * 365 * 24 * time.Hour)
	const d = 4 * time.Second

	t.Run("released", func(t *testing.T) {
		checkNoLeak(t)
		table := leaseTable(t)
		a := newClient(t, table, nil, WithOwner("a"))
		b := newClient(t, table, nil, WithOwner("b"), WithClock(clock.NewFake(behind)))
		la, err := a.TryAcquire(t.Context(), "k")
		if err != nil {
			t.Fatal(err)
		}
		if err := la.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
		deleteRecord(t, table, "k") // e.g. by TTL, long after the release
		lb, err := b.TryAcquire(t.Context(), "k")
		if err != nil {
			t.Fatal(err)
		}
		defer lb.Release(context.Background())
		if lb.Token() <= la.Token() {
			t.Fatalf("token after deletion %d, not above the old holder's %d", lb.Token(), la.Token())
		}
	})

	// The holder died (its clock stands still): the next holder waits its
	// duration × rate from when it found the record missing.
	t.Run("held by a dead holder", func(t *testing.T) {
		checkNoLeak(t)
		table := leaseTable(t)
		aclk := clock.NewFake(time.Now())
		bclk := clock.NewFake(behind)
		a := newClient(t, table, nil, WithOwner("a"), WithClock(aclk), WithLeaseDuration(d))
		b := newClient(t, table, nil, WithOwner("b"), WithClock(bclk), WithLeaseDuration(d), WithClockSkewRate(1.5))
		ctx := t.Context()
		la, err := a.TryAcquire(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		deleteRecord(t, table, "k")
		// Nobody may take the key at once: A does not know yet.
		if _, err := b.TryAcquire(ctx, "k"); !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "deleted") {
			t.Fatalf("TryAcquire of a key whose record was deleted under its holder: %v, want ErrHeld", err)
		}
		got := make(chan acquired, 1)
		go func() {
			l, err := b.Acquire(ctx, "k")
			got <- acquired{l, err}
		}()
		for { // advance B's clock poll by poll until it holds the lease
			changed := bclk.Changed()
			if n, ok := bclk.Next(); ok && bclk.Timers() == 1 {
				bclk.Advance(n)
				continue
			}
			select {
			case <-changed:
				continue
			case r := <-got:
				if r.err != nil {
					t.Fatal(r.err)
				}
				if r.l.Token() <= la.Token() {
					t.Fatalf("token after deletion %d, not above the old holder's %d", r.l.Token(), la.Token())
				}
				if waited := r.l.acquired.Sub(behind); waited < time.Duration(1.5*float64(d)) {
					t.Errorf("B took the key after %v, before A's duration × rate %v", waited, time.Duration(1.5*float64(d)))
				}
				_ = r.l.Release(ctx)
			}
			break
		}
		aclk.Advance(2 * d) // A's heartbeat and watchdog end its lease
		<-la.Done()
	})

	// The holder's next heartbeat finds the record gone: its lease ends,
	// it says so in the token record, and the key is free at once.
	t.Run("held by a live holder", func(t *testing.T) {
		checkNoLeak(t)
		table := leaseTable(t)
		aclk := clock.NewFake(time.Now())
		a := newClient(t, table, nil, WithOwner("a"), WithClock(aclk), WithLeaseDuration(d))
		b := newClient(t, table, nil, WithOwner("b"), WithClock(clock.NewFake(behind)))
		ctx := t.Context()
		la, err := a.TryAcquire(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		deleteRecord(t, table, "k")
		aclk.BlockUntil(ctx.Done(), 2)
		aclk.Advance(d / 4) // the heartbeat
		<-la.Done()
		if !errors.Is(la.Err(), ErrLost) || !strings.Contains(la.Err().Error(), "deleted") {
			t.Errorf("A's lease ended with %v, want ErrLost naming the deletion", la.Err())
		}
		// The token record is marked released after the lease ended, by
		// the heartbeat goroutine: wait for it (Release waits for it too).
		if err := la.Release(ctx); err != nil {
			t.Fatal(err)
		}
		lb, err := b.TryAcquire(ctx, "k")
		if err != nil {
			t.Fatalf("TryAcquire after the holder learnt of the deletion: %v", err)
		}
		defer lb.Release(context.Background())
		if lb.Token() <= la.Token() {
			t.Fatalf("token after deletion %d, not above the old holder's %d", lb.Token(), la.Token())
		}
	})
}

// A record deleted and written again with the same owner, token and
// version, but another acquisition's attempt id, is another incarnation:
// the old lease's heartbeat must not extend it.
func TestHeartbeatNeverExtendsAnotherIncarnation(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	clk := clock.NewFake(time.Now())
	c := newClient(t, table, nil, WithOwner("h"), WithClock(clk), WithLeaseDuration(8*time.Second))
	ctx := t.Context()
	l, err := c.TryAcquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	deleteRecord(t, table, "k")
	other := l.rec
	other.Version, other.Attempt = 0, "someone-else"
	if _, err := c.table.Save(ctx, other); err != nil {
		t.Fatal(err)
	}
	clk.BlockUntil(ctx.Done(), 2)
	clk.Advance(2 * time.Second) // the heartbeat
	// Either the lease ends, or the heartbeat succeeded and waits again.
	clk.BlockUntil(l.Done(), 2)
	if !errors.Is(l.Err(), ErrLost) {
		t.Fatalf("Err = %v after the heartbeat, want ErrLost", l.Err())
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	stored, _ := c.table.Load(ctx, record{Key: "k"}, dynamo.ConsistentRead())
	if stored.Attempt != "someone-else" || stored.Released || stored.Version != 1 {
		t.Errorf("the other incarnation was written by the old lease: %+v", stored)
	}
}

// Issue 11 case 12: TryAcquire whose write landed but whose answer was
// lost (no SDK retry) reads the record and returns the lease; when even that
// read fails, the error says the outcome is unknown.
func TestTryAcquireSettlesUnknownOutcome(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	oneAttempt := func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }

	drop := dynamotest.NewDropper("TransactWriteItems")
	c := newClient(t, table, drop.Client(t, oneAttempt), WithOwner("c"))
	drop.Arm(1)
	l, err := c.TryAcquire(t.Context(), "k")
	if err != nil {
		t.Fatalf("TryAcquire after a lost answer: %v", err)
	}
	if info, _ := c.Holder(t.Context(), "k"); info.Token != l.Token() || info.Owner != "c" {
		t.Errorf("Holder = %+v, want c with token %d", info, l.Token())
	}
	if err := l.Release(t.Context()); err != nil {
		t.Fatal(err)
	}

	// Every answer from the write on is lost.
	var writing atomic.Bool
	all := dynamotest.NewRequestDropper(func(r *http.Request) bool {
		if r.Header.Get("X-Amz-Target") == "DynamoDB_20120810.TransactWriteItems" {
			writing.Store(true)
		}
		return writing.Load()
	})
	u := newClient(t, table, all.Client(t, oneAttempt), WithOwner("u"))
	all.Arm(3) // the write, the re-read, and the settling read
	_, err = u.TryAcquire(t.Context(), "k")
	if !errors.Is(err, dynamo.ErrUnknownOutcome) {
		t.Fatalf("TryAcquire whose write and re-reads got no answer: %v, want ErrUnknownOutcome", err)
	}
	t.Log(err)
}

// An Acquire whose ctx ends while its write is in flight does not leave a
// record naming it with nobody heartbeating: the write landed, so it marks
// the record released before returning ctx's error.
func TestCancelledAcquireReleasesItsLandedWrite(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	drop := dynamotest.NewDropper("TransactWriteItems")
	c := newClient(t, table, drop.Client(t), WithOwner("c"))
	ctx, cancel := context.WithCancel(t.Context())
	drop.ArmThen(cancel)
	_, err := c.Acquire(ctx, "k")
	if !errors.Is(err, context.Canceled) || errors.Is(err, dynamo.ErrUnknownOutcome) {
		t.Fatalf("Acquire cancelled mid-write: %v, want context.Canceled, outcome settled", err)
	}
	info, err := c.Holder(t.Context(), "k")
	if err != nil || info.Owner != "c" || !info.Released {
		t.Fatalf("Holder = %+v, %v; want c's landed write marked released", info, err)
	}
}

// A Release whose write landed but whose answer was lost (no SDK retry)
// reads the record, finds it released by itself, and returns nil.
func TestReleaseSettlesUnknownOutcome(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	drop := dynamotest.NewDropper("UpdateItem")
	c := newClient(t, table, drop.Client(t, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }), WithOwner("c"))
	l, err := c.TryAcquire(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	drop.Arm(1)
	if err := l.Release(t.Context()); err != nil {
		t.Fatalf("Release whose answer was lost: %v", err)
	}
	if drop.Dropped() != 1 {
		t.Fatalf("dropped %d answers, want 1", drop.Dropped())
	}
	if info, _ := c.Holder(t.Context(), "k"); !info.Released {
		t.Errorf("record not released: %+v", info)
	}
}

// Issue 12 item 7: options whose wait would overflow or be absurd, and
// sub-millisecond durations, are refused naming the option; a duration is
// stored rounded up to whole milliseconds; a record's duration too large to
// wait out saturates instead of wrapping around to a negative wait.
func TestOptionBounds(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		want string
	}{
		{[]Option{WithLeaseDuration(500 * time.Microsecond)}, "WithLeaseDuration(500µs)"},
		{[]Option{WithLeaseDuration(math.MaxInt64)}, "WithLeaseDuration"},
		{[]Option{WithLeaseDuration(MaxLeaseDuration + time.Second)}, "lease.MaxLeaseDuration"},
		{[]Option{WithLeaseDuration(MaxLeaseDuration), WithClockSkewRate(MaxClockSkewRate), WithTTL(10 * 365 * 24 * time.Hour)}, "lease.MaxWait"},
		{[]Option{WithClockSkewRate(math.NaN())}, "WithClockSkewRate"},
		{[]Option{WithClockSkewRate(math.Inf(1))}, "WithClockSkewRate"},
		{[]Option{WithClockSkewRate(1e300)}, "WithClockSkewRate"},
		{[]Option{WithHeartbeatInterval(-time.Second)}, "WithHeartbeatInterval"},
	} {
		_, err := buildOptions(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one naming %q", err, tc.want)
		}
	}
	if _, err := buildOptions([]Option{WithLeaseDuration(time.Hour), WithClockSkewRate(MaxClockSkewRate), WithTTL(2000 * time.Hour)}); err != nil {
		t.Errorf("an hour × 100 (100 h, within MaxWait): %v", err)
	}
	for d, ms := range map[time.Duration]int64{time.Millisecond: 1, 1500 * time.Microsecond: 2, 20 * time.Second: 20000, 20*time.Second + 1: 20001} {
		if got := durationMS(d); got != ms {
			t.Errorf("durationMS(%v) = %d, want %d (rounded up)", d, got, ms)
		}
	}
	c := &Client{o: options{duration: time.Second, skew: MaxClockSkewRate}}
	for _, ms := range []int64{math.MaxInt64, math.MaxInt64 / 1000, 1 << 50} {
		if p := c.patience(view{rec: &record{DurationMS: ms}}); p <= 0 {
			t.Errorf("patience with a record's duration of %d ms = %v, want a long wait, never negative", ms, p)
		}
	}
}

// A 1.5 ms lease is stored as 2 ms, never truncated to 1.
func TestDurationStoredRoundedUp(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	clk := clock.NewFake(time.Now()) // no heartbeat or watchdog runs
	c := newClient(t, table, nil, WithClock(clk), WithLeaseDuration(1500*time.Microsecond), WithHeartbeatInterval(time.Millisecond))
	l, err := c.TryAcquire(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := c.Holder(t.Context(), "k"); info.Duration != 2*time.Millisecond {
		t.Errorf("stored duration %v, want 2ms", info.Duration)
	}
	_ = l.Release(t.Context())
}

// Keys that would collide with token records, or that DynamoDB would
// store as another key, are refused before anything is sent.
func TestKeyChecks(t *testing.T) {
	c, err := New(dynamo.NewMapper(dynamotest.Client(t)), "t")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"", "\x00token:k", "k\xff", strings.Repeat("k", maxKeyBytes+1)} {
		if _, err := c.TryAcquire(t.Context(), k); err == nil {
			t.Errorf("TryAcquire(%q) accepted", k)
		}
	}
}

// Issue 11 case 7, the write: a waiter decided to take A's silent record
// over; between its read and its write the record is deleted and B creates
// it again (version 1 again). The takeover must fail — it is conditioned on
// the incarnation the waiter watched — and the waiter waits on B's.
func TestTakeoverConditionedOnIncarnation(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	const d = 10 * time.Second
	frozen := clock.NewFake(time.Now())
	wclk := clock.NewFake(time.Now())
	a := newClient(t, table, nil, WithOwner("a"), WithClock(frozen), WithLeaseDuration(d))
	b := newClient(t, table, nil, WithOwner("b"), WithClock(frozen), WithLeaseDuration(d))
	ctx := t.Context()
	la, err := a.TryAcquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	var lb *Lease
	var once atomic.Bool
	// Before the waiter's write is sent: delete, release, re-create.
	hook := dynamotest.NewRequestDropper(func(r *http.Request) bool {
		switch r.Header.Get("X-Amz-Target") {
		case "DynamoDB_20120810.TransactWriteItems", "DynamoDB_20120810.PutItem":
			if once.CompareAndSwap(false, true) {
				deleteRecord(t, table, "k")
				if err := la.Release(ctx); err != nil {
					t.Error(err)
				}
				var err error
				if lb, err = b.TryAcquire(ctx, "k"); err != nil {
					t.Error(err)
				}
			}
		}
		return false
	})
	w := newClient(t, table, hook.Client(t), WithOwner("w"), WithClock(wclk), WithLeaseDuration(d),
		WithClockSkewRate(1), WithPollInterval(time.Hour))
	wctx, cancel := context.WithCancel(ctx)
	got := make(chan acquired, 1)
	go func() {
		l, err := w.Acquire(wctx, "k")
		got <- acquired{l, err}
	}()
	wclk.BlockUntil(ctx.Done(), 1) // w read A's record and waits d
	wclk.Advance(d)                // A silent for d: w writes, after the hook
	wclk.BlockUntil(ctx.Done(), 1) // w waits again
	if !once.Load() || lb == nil {
		t.Fatal("the waiter's write was never sent, or B did not get the key")
	}
	info, err := b.Holder(ctx, "k")
	if err != nil || info.Owner != "b" || info.Token != lb.Token() || lb.Err() != nil {
		t.Fatalf("Holder = %+v, %v, B's lease %v; want B holding, untouched by the waiter's takeover", info, err, lb.Err())
	}
	cancel()
	if r := <-got; r.err == nil {
		_ = r.l.Release(ctx)
		t.Fatal("the waiter acquired")
	}
	_ = lb.Release(ctx)
}
