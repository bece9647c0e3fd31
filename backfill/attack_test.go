package backfill

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
)

// TestFunctionChangingTheKeyWritesNoOtherItem pins that a function which
// returns its item under another key fails that item and writes nothing,
// as Table.Update refuses it: the versioned fast path (Save under the
// version scanned) must not write the changed copy over the item that
// holds the other key (here acct-00001, at the same version 1, unmarked).
func TestFunctionChangingTheKeyWritesNoOtherItem(t *testing.T) {
	e := newEnv(t, 2)
	m := e.migration("move-key", "p1", func(a account) (account, error) {
		if a.ID != key(0) {
			return a, dynamo.ErrNoChange
		}
		a.ID = key(1)
		a.Migrated = 100
		return a, nil
	}, Segments(1))
	err := m.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "key") {
		t.Errorf("Run = %v, want the item's failure for a changed key", err)
	}
	got, lerr := e.items.Load(context.Background(), account{ID: key(1)})
	if lerr != nil {
		t.Fatal(lerr)
	}
	if got.Migrated != 0 {
		t.Errorf("item %s = %+v: written over by the function's copy of %s", key(1), got, key(0))
	}
}

// TestMarkModeledByTheTypeRefused pins that New refuses a Mark attribute
// that T models (the doc: "T must not model the attribute"), before any
// request: the mark would be written over the field (or the key) in every
// change, or every write would fail only once Run is under way.
func TestMarkModeledByTheTypeRefused(t *testing.T) {
	e := newEnv(t, 0)
	for _, attr := range []string{"id", "version", "hits"} {
		_, err := New(e.c, e.table, "mark-"+attr, addMigrated, Fleet(e.leaseClient("p"), e.leases), Mark(attr))
		if err == nil {
			t.Errorf("New with Mark(%q), an attribute of account: no error", attr)
		}
	}
}

// TestVersionTheFunctionReturnsIgnored pins that the version a function
// returns is ignored, as Table.Update ignores it (New: "fn is called as
// Table.Update calls its function"): a function that builds a fresh item
// (version zero), moves the version, or sets it negative changes every
// item once, with no rerun (no live write ran) and no failure.
func TestVersionTheFunctionReturnsIgnored(t *testing.T) {
	for name, set := range map[string]func(*account){
		"zero":     func(a *account) { a.Version = 0 },
		"moved":    func(a *account) { a.Version += 5 },
		"negative": func(a *account) { a.Version = -1 },
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, 3)
			m := e.migration("version-"+name, "p", func(a account) (account, error) {
				set(&a)
				a.Migrated++
				return a, nil
			}, Segments(1))
			if err := m.Run(context.Background()); err != nil {
				t.Fatalf("Run = %v", err)
			}
			if p := m.Progress(); p.Changed != 3 || p.Reruns != 0 {
				t.Errorf("Progress: %d changed, %d reruns; want 3 changed, 0 reruns", p.Changed, p.Reruns)
			}
			for i := range 3 {
				a, err := e.items.Load(context.Background(), account{ID: key(i)})
				if err != nil || a.Migrated != 1 || a.Version != 2 {
					t.Errorf("item %s = %+v, %v; want migrated once, at version 2", key(i), a, err)
				}
			}
		})
	}
}

// TestCapacityNaNRefused pins that New refuses a capacity that is not a
// number, before any request: with it the budget never lets a request
// through and Run makes no progress at all until its ctx ends.
func TestCapacityNaNRefused(t *testing.T) {
	e := newEnv(t, 0)
	for _, c := range [][2]float64{{math.NaN(), 0}, {0, math.NaN()}} {
		if _, err := New(e.c, e.table, "nan", addMigrated, Fleet(e.leaseClient("p"), e.leases), Capacity(c[0], c[1])); err == nil {
			t.Errorf("New with Capacity(%g, %g): no error", c[0], c[1])
		}
	}
}

// TestSecondConcurrentRunRefusedLeavingTheFirstAlone pins that Run called
// while another Run of the same Migration is under way fails at once with
// an error saying so, without touching the first run's state: its start
// (Progress.Elapsed) and its stop signal, which its segments wait on to
// write their checkpoint when its ctx ends. The first run then finishes.
func TestSecondConcurrentRunRefusedLeavingTheFirstAlone(t *testing.T) {
	e := newEnv(t, 3)
	clk := clock.NewFake(time.Unix(1e9, 0))
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	m := e.migration("twice", "p", func(a account) (account, error) {
		once.Do(func() { close(entered); <-release })
		return addMigrated(a)
	}, Segments(1), WithClock(clk))
	first := make(chan error, 1)
	go func() { first <- m.Run(context.Background()) }()
	<-entered
	clk.Advance(time.Hour)
	err := m.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "running") {
		t.Errorf("second Run = %v, want it refused as running already", err)
	}
	if p := m.Progress(); p.Elapsed != time.Hour {
		t.Errorf("Progress.Elapsed = %v after the refused Run, want the first run's hour", p.Elapsed)
	}
	close(release)
	if err := <-first; err != nil {
		t.Errorf("first Run = %v", err)
	}
}

// TestUndecodableItemIsAFailureNamingIt: an item that does not decode into
// T (another writer stored "hits" as a string) does not stop the other
// items of its page. Without SkipFailures, Run stops with an error that
// names the item's key (so that it can be fixed or removed); with
// SkipFailures, the item is recorded as a failure — Failure.Item holds its
// key, Failure.Err names it — and every other item is changed once.
func TestUndecodableItemIsAFailureNamingIt(t *testing.T) {
	e := newEnv(t, 10)
	if _, err := e.c.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: "bad"}, "hits": &types.AttributeValueMemberS{Value: "x"}}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	m := e.migration("undecodable", "p", addMigrated, Segments(1))
	if err := m.Run(ctx); err == nil || !strings.Contains(err.Error(), `"bad"`) || ctx.Err() != nil {
		t.Errorf("Run = %v, want an error naming the key \"bad\" before the ctx ends", err)
	}
	m = e.migration("undecodable", "p", addMigrated, Segments(1), SkipFailures())
	if err := m.Run(ctx); err != nil {
		t.Fatalf("Run with SkipFailures = %v, want nil (the item recorded as failed)", err)
	}
	p := m.Progress()
	if p.Failed != 1 || len(p.Failures) != 1 || p.Failures[0].Item.ID != "bad" || !strings.Contains(fmt.Sprint(p.Failures[0].Err), `"bad"`) {
		t.Errorf("progress %+v, want one failure of item \"bad\" naming it", p)
	}
	for i := range e.n {
		a, err := e.items.Load(t.Context(), account{ID: key(i)}, dynamo.ConsistentRead())
		if err != nil || a.Migrated != 1 {
			t.Errorf("item %s: %+v, %v; want migrated once", key(i), a, err)
		}
	}
}

// TestFunctionChangingTheKeyInPlaceWritesNoOtherItem pins the same for a
// pointer type whose function changes the key of the item it was given in
// place: the key scanned is compared, not the (shared) item's.
func TestFunctionChangingTheKeyInPlaceWritesNoOtherItem(t *testing.T) {
	e := newEnv(t, 2)
	m, err := New(e.c, e.table, "move-key-ptr", func(a *account) (*account, error) {
		if a.ID != key(0) {
			return a, dynamo.ErrNoChange
		}
		a.ID, a.Migrated = key(1), 100
		return a, nil
	}, Fleet(e.leaseClient("p"), e.leases), Segments(1), PollInterval(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "key") {
		t.Errorf("Run = %v, want the item's failure for a changed key", err)
	}
	if got, err := e.items.Load(context.Background(), account{ID: key(1)}); err != nil || got.Migrated != 0 {
		t.Errorf("item %s = %+v, %v: written over by the function's copy of %s", key(1), got, err, key(0))
	}
}
