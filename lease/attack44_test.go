package lease

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
)

// Two workers of one group on two clients join at once and race for more
// keys than one batched take carries: the fleet's work checks that no key
// has two workers at once and that every holder's token is above the last.
func TestAttack44TwoGroupsRaceForBatchedKeys(t *testing.T) {
	f := newFleet(t, 2*takesPerTx+3)
	now := time.Now()
	f.start("a", now)
	f.start("b", now)
	f.settle(time.Minute, f.balanced)
	f.awaitWrites(1)
	before := f.tokens()
	f.start("c", now)
	f.settle(2*time.Minute, f.balanced)
	for k, tok := range f.tokens() {
		if old, ok := before[k]; ok && tok < old {
			t.Errorf("key %q: token %d after %d", k, tok, old)
		}
	}
}

// A key held by a lone lease (Client.Acquire) is never taken by the group's
// batched takes while held; a key whose record exists but was released is
// taken with a token above the released one; once the lone lease is
// released the group takes its key too, with a higher token.
func TestAttack44GroupSkipsHeldAndTakesReleased(t *testing.T) {
	f := newFleet(t, takesPerTx+4)
	ctx := context.Background()
	soloClk := clock.NewFake(time.Now())
	solo := newClient(t, f.table, nil, WithOwner("solo"), WithClock(soloClk), WithLeaseDuration(time.Hour),
		WithHeartbeatInterval(20*time.Minute), WithPollInterval(gPoll), WithClockSkewRate(gSkew))
	held, released := f.keys[3], f.keys[5]
	gone, err := solo.Acquire(ctx, released)
	if err != nil {
		t.Fatal(err)
	}
	goneTok := gone.Token()
	if err := gone.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := solo.Acquire(ctx, held)
	if err != nil {
		t.Fatal(err)
	}
	w := f.start("w1", time.Now())
	all := func(n int) func() bool { return func() bool { return len(w.g.Keys()) == n } }
	f.settle(time.Minute, all(len(f.keys)-1))
	for range 30 {
		f.step(gPoll)
		if slices.Contains(w.g.Keys(), held) {
			t.Fatalf("the group took %q while a lone lease holds it (token %d)", held, l.Token())
		}
	}
	if tok := f.tokens()[released]; tok <= goneTok {
		t.Errorf("released key %q taken with token %d, want above %d", released, tok, goneTok)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	f.settle(time.Minute, all(len(f.keys)))
	if tok := f.tokens()[held]; tok <= l.Token() {
		t.Errorf("key %q taken after release with token %d, want above %d", held, tok, l.Token())
	}
}

// The answers to batched takes are lost after DynamoDB applied them — both
// transactions of a round, with the SDK's retry (which then finds the keys
// taken) or without it — while a second worker joins: every key ends held
// once, each holder's guarded write carries a higher token than the last
// (the fleet's work checks), and no key is worked on by two at once.
func TestAttack44LostBatchedTakeAnswers(t *testing.T) {
	for _, retries := range []int{1, 3} {
		t.Run(map[int]string{1: "no-retry", 3: "sdk-retry"}[retries], func(t *testing.T) {
			f := newFleet(t, 2*takesPerTx+2)
			drop := dynamotest.NewDropper("TransactWriteItems")
			drop.Arm(2)
			now := time.Now()
			f.startWith("a", now, drop.Client(t, func(o *dynamodb.Options) { o.RetryMaxAttempts = retries }))
			f.start("b", now)
			f.settle(2*time.Minute, f.balanced)
			if drop.Dropped() != 2 {
				t.Fatalf("dropped %d answers, want 2", drop.Dropped())
			}
			f.awaitWrites(1)
			f.mu.Lock()
			defer f.mu.Unlock()
			for _, k := range f.keys {
				seen := map[int64]bool{}
				for _, j := range f.writes[k] {
					if seen[j.Token] {
						t.Errorf("key %q: token %d issued twice: %v", k, j.Token, f.writes[k])
					}
					seen[j.Token] = true
				}
			}
		})
	}
}
