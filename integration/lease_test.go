package integration

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/lease"
)

// Resource is what the lease protects: every holder writes its token into
// it with a guarded write, and the resource itself refuses older tokens.
type Resource struct {
	ID      string `dynamo:"id,hash"`
	Token   int64  `dynamo:"token"`
	Writes  int    `dynamo:"writes"`
	Writer  string `dynamo:"writer"`
	Version int64  `dynamo:"v,version"`
}

type holding struct {
	owner    string
	token    int64
	from, to time.Time // on this process's monotonic clock
	frozen   bool      // a holder that stopped heartbeating
	wrote    bool      // its guarded write succeeded
	refused  error     // why its guarded write failed
	lost     bool      // its lease ended (ErrLost) before it released it
}

// 8 clients × 25 acquisitions of one key, each holder doing a guarded write
// of its token. One more client is frozen: its clock stands still, so it
// never heartbeats; others take its lease over, and its guarded writes after
// that must fail. The checker proves tokens strictly increase, no two
// (live) holding intervals overlap, and every guarded write by a holder that
// had lost its lease failed.
func TestLeaseExclusivity(t *testing.T) {
	const clients, rounds = 8, 25
	const d = time.Second
	c := dynamotest.Client(t)
	m := dynamo.NewMapper(c)
	table := dynamotest.KeyTable(t, c, "leases", "key", types.ScalarAttributeTypeS, "", "")
	resName := dynamotest.KeyTable(t, c, "resource", "id", types.ScalarAttributeTypeS, "", "")
	res, err := dynamo.NewTable[Resource](m, resName)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	var mu sync.Mutex
	var log []holding
	// guardedWrite writes the holder's token into the resource, refused by
	// the resource if an equal or newer token was written before.
	guardedWrite := func(l *lease.Lease, owner string) error {
		cur, err := res.Load(ctx, Resource{ID: "r"}, dynamo.ConsistentRead())
		if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
			return err
		}
		cur.ID, cur.Token, cur.Writer = "r", l.Token(), owner
		cur.Writes++
		_, err = lease.Save(ctx, l, res, cur, dynamo.If(expression.Or(
			expression.AttributeNotExists(expression.Name("token")),
			expression.Name("token").LessThan(expression.Value(l.Token())))))
		return err
	}

	var wg sync.WaitGroup
	errs := make(chan error, clients+1)
	for i := range clients {
		lc, err := lease.New(m, table, lease.WithOwner(fmt.Sprintf("c%d", i)), lease.WithLeaseDuration(d),
			lease.WithHeartbeatInterval(d/4), lease.WithPollInterval(10*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		defer lc.Close(context.Background())
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				l, err := lc.Acquire(ctx, "job")
				if err != nil {
					errs <- err
					return
				}
				h := holding{owner: lc.Owner(), token: l.Token(), from: time.Now()}
				if err := guardedWrite(l, lc.Owner()); err != nil {
					h.refused = err
				} else {
					h.wrote = true
				}
				// A holder stalled (by a loaded machine) past its lease loses
				// it; then its write must have been refused or have landed
				// while the lease still held, and its interval may overlap.
				h.lost = errors.Is(l.Err(), lease.ErrLost)
				h.to = time.Now()
				if err := l.Release(ctx); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				log = append(log, h)
				mu.Unlock()
			}
		}()
	}
	// The frozen client: acquires twice; each time it waits until someone
	// took its lease over (its own clock never lets it notice), then tries
	// its guarded write.
	frozenClock := clock.NewFake(time.Now())
	fc, err := lease.New(m, table, lease.WithOwner("frozen"), lease.WithLeaseDuration(d), lease.WithClock(frozenClock))
	if err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 2 {
			var l *lease.Lease
			for l == nil { // Acquire would poll on the frozen clock; TryAcquire does not
				var err error
				l, err = fc.TryAcquire(ctx, "job")
				if err != nil && !errors.Is(err, lease.ErrHeld) {
					errs <- err
					return
				}
				if ctx.Err() != nil {
					errs <- ctx.Err()
					return
				}
			}
			h := holding{owner: "frozen", token: l.Token(), from: time.Now(), frozen: true}
			for { // until the record names a newer holder
				info, err := fc.Holder(ctx, "job")
				if err != nil {
					errs <- err
					return
				}
				if info.Token > l.Token() {
					break
				}
				if ctx.Err() != nil {
					errs <- ctx.Err()
					return
				}
			}
			if err := guardedWrite(l, "frozen"); err != nil {
				h.refused = err
			} else {
				h.wrote = true
			}
			h.to = time.Now()
			mu.Lock()
			log = append(log, h)
			mu.Unlock()
			frozenClock.Advance(2 * d) // its watchdog ends the stale lease
			<-l.Done()
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	sort.Slice(log, func(i, j int) bool { return log[i].token < log[j].token })
	writes, lost := 0, 0
	for i, h := range log {
		if i > 0 && h.token <= log[i-1].token {
			t.Errorf("token %d not above %d", h.token, log[i-1].token)
		}
		switch {
		case h.frozen && h.wrote:
			t.Errorf("frozen holder with token %d wrote after losing its lease", h.token)
		case h.frozen:
			if !errors.Is(h.refused, lease.ErrLost) {
				t.Errorf("frozen holder's write refused with %v, want ErrLost", h.refused)
			}
		case h.wrote:
			writes++
		case h.lost && errors.Is(h.refused, lease.ErrLost):
			lost++
		default:
			t.Errorf("holder %s token %d: guarded write failed: %v", h.owner, h.token, h.refused)
		}
	}
	if lost > len(log)/10 {
		t.Errorf("%d of %d leases were lost before release; a loaded machine explains a few, not this many", lost, len(log))
	}
	// Intervals of holders that kept their leases, in token order, must not
	// overlap.
	var live []holding
	for _, h := range log {
		if !h.frozen && !h.lost {
			live = append(live, h)
		}
	}
	for i := 1; i < len(live); i++ {
		if live[i].from.Before(live[i-1].to) {
			t.Errorf("holders %s (token %d) and %s (token %d) overlap", live[i-1].owner, live[i-1].token, live[i].owner, live[i].token)
		}
	}
	final, err := res.Load(ctx, Resource{ID: "r"}, dynamo.ConsistentRead())
	var lastWriter int64 // the highest token whose guarded write landed
	for _, h := range log {
		if h.wrote {
			lastWriter = h.token
		}
	}
	if err != nil || final.Writes != writes || final.Token != lastWriter {
		t.Errorf("resource %+v %v; want %d writes, the last by token %d", final, err, writes, lastWriter)
	}
	t.Logf("%d acquisitions, %d guarded writes, %d refused writes by stale holders, %d leases lost to stalls", len(log), writes, len(log)-writes-lost, lost)
}
