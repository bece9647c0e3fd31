package integration

// Idempotency keys in the fault suite: a usage-metering service. Events
// for a few customers arrive at two "instances" (own client, own Mapper and
// Table, own faulty transport), four goroutines each. Each event is counted
// with one call — Add (Increment the calls, AddToSet the event's id) or
// Update (the same change in a function) — given the event's id as its
// IdempotencyKey, and re-run with the key on any error (ErrUnknownOutcome
// among them) until it succeeds; one event in five is delivered again at
// once to the other instance (at-least-once delivery). Afterwards, read
// without faults, each customer's count must equal the number of distinct
// ids it holds (nothing counted twice), and every event sent must be there
// (every acknowledged-or-retried event counted exactly once).

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/leaktest"
)

// usageMeter is one customer's meter: Calls counts the events, Events holds
// their ids.
type usageMeter struct {
	Customer string   `dynamo:"customer,hash"`
	Calls    int64    `dynamo:"calls"`
	Events   []string `dynamo:"events,set,omitempty"`
	Version  int64    `dynamo:"version,version"`
}

// meterEvent is one event as the instances saw it.
type meterEvent struct {
	ID, Customer string
	Runs         int  // calls made for it, the redelivery's included
	Unknown      int  // of which ended in ErrUnknownOutcome
	Acked        bool // some run succeeded
	Err          error
}

func TestFaultsIdempotentMetering(t *testing.T) {
	leaktest.Check(t, "ddbkit/dynamo.")
	const (
		instances   = 2
		perInstance = 4 // goroutines
		maxRuns     = 25
	)
	customers := []string{"acme", "globex", "initech"}
	events := scaled(120) // per goroutine
	maxFaults := scaled(150)

	name := dynamotest.KeyTable(t, dynamotest.Client(t), "faultmeter", "customer", types.ScalarAttributeTypeS, "", "")
	var transports []*dynamotest.Faults
	tables := make([]*dynamo.Table[usageMeter], instances)
	for i := range tables {
		f := dynamotest.NewFaults(faultConfig(t, uint64(900+i), maxFaults), nil)
		transports = append(transports, f)
		tb, err := dynamo.NewTable[usageMeter](dynamo.NewMapper(f.Client(t, quickRetries)), name)
		if err != nil {
			t.Fatal(err)
		}
		tables[i] = tb
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	lin := &linRecorder{} // the history for the counter model (linear_test.go)
	// count runs one call for ev through tb until one succeeds.
	count := func(client int, tb *dynamo.Table[usageMeter], ev *meterEvent, useUpdate bool) {
		key := dynamo.IdempotencyKey(ev.ID)
		for ev.Runs < maxRuns && ctx.Err() == nil {
			ev.Runs++
			var err error
			var saved usageMeter
			call := lin.begin(client, ctrInput{Key: ev.Customer, N: 1, Elems: ev.ID, Once: ev.ID})
			if useUpdate {
				saved, err = tb.Update(ctx, usageMeter{Customer: ev.Customer}, func(m usageMeter) (usageMeter, error) {
					m.Calls++
					m.Events = append(slices.Clip(m.Events), ev.ID)
					return m, nil
				}, key)
			} else {
				saved, err = tb.Add(ctx, usageMeter{Customer: ev.Customer},
					dynamo.Increment("calls", 1).AddToSet("events", []string{ev.ID}), key)
			}
			if err == nil {
				call.okThenRead(ctrApplied{}, ctrInput{Key: ev.Customer, Read: true, Must: ev.ID}, meterState(saved))
				ev.Acked, ev.Err = true, nil
				return
			}
			call.failed(err, mapperNotApplied)
			if errors.Is(err, dynamo.ErrUnknownOutcome) {
				ev.Unknown++
			}
			ev.Err = err
		}
	}
	all := make([][]*meterEvent, instances*perInstance)
	var wg sync.WaitGroup
	start := time.Now()
	for g := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inst := g % instances
			rng := rand.New(rand.NewPCG(*faultSeed, uint64(g)))
			for i := range events {
				ev := &meterEvent{ID: fmt.Sprintf("ev-%d-%d", g, i), Customer: customers[rng.IntN(len(customers))]}
				all[g] = append(all[g], ev)
				useUpdate := rng.IntN(3) == 0
				count(g, tables[inst], ev, useUpdate)
				if rng.IntN(5) == 0 {
					// Delivered again, to the other instance.
					ev.Runs = min(ev.Runs, maxRuns-5)
					count(g, tables[(inst+1)%instances], ev, !useUpdate)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	stats := stopFaults(transports)

	clean, err := dynamo.NewTable[usageMeter](dynamo.NewMapper(dynamotest.Client(t)), name)
	if err != nil {
		t.Fatal(err)
	}
	final := map[string]usageMeter{}
	for _, c := range customers {
		call := lin.begin(len(all), ctrInput{Key: c, Read: true})
		m, err := clean.Load(t.Context(), usageMeter{Customer: c}, dynamo.ConsistentRead())
		if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
			t.Fatalf("reading %s without faults: %v", c, err)
		}
		call.ok(meterState(m))
		final[c] = m
	}

	var anomalies []string
	sent := map[string]string{} // id → customer
	ops, acked, runs, unknown, retried := 0, 0, 0, 0, 0
	for _, evs := range all {
		for _, ev := range evs {
			ops++
			runs += ev.Runs
			unknown += ev.Unknown
			sent[ev.ID] = ev.Customer
			if ev.Runs > 1 {
				retried++
			}
			if ev.Acked {
				acked++
			}
			held := slices.Contains(final[ev.Customer].Events, ev.ID)
			switch {
			case ev.Acked && !held:
				anomalies = append(anomalies, fmt.Sprintf("event %s acknowledged but not counted for %s", ev.ID, ev.Customer))
			case !ev.Acked:
				anomalies = append(anomalies, fmt.Sprintf("event %s never acknowledged in %d runs: %v", ev.ID, ev.Runs, ev.Err))
			}
		}
	}
	for c, m := range final {
		if int64(len(m.Events)) != m.Calls {
			anomalies = append(anomalies, fmt.Sprintf("customer %s: %d calls counted for %d distinct events: some event counted twice", c, m.Calls, len(m.Events)))
		}
		for _, id := range m.Events {
			if sent[id] != c {
				anomalies = append(anomalies, fmt.Sprintf("customer %s holds event %s, never sent to it", c, id))
			}
		}
	}
	reportAnomalies(t, anomalies)
	nonLinear := checkLinear(t, "counter", ctrModel, ctrPrune, lin.history(), linCap/2, 30*time.Second).Anomalies()
	t.Logf("%v: %d events, %d calls (%d ErrUnknownOutcome), %d events re-run or redelivered, %d acknowledged",
		elapsed.Round(time.Millisecond), ops, runs, unknown, retried, acked)
	for _, c := range customers {
		t.Logf("customer %s: %d calls, %d events, version %d", c, final[c].Calls, len(final[c].Events), final[c].Version)
	}
	logFaults(t, faultReport{Ops: runs, Acked: acked, Anomalies: len(anomalies) + nonLinear, Stats: stats})
}

// meterState is a usageMeter as the counter model shows it (a zero meter:
// not found).
func meterState(m usageMeter) ctrState {
	if m.Version == 0 {
		return ctrState{}
	}
	return ctrState{Found: true, Count: m.Calls, Set: setUnion("", strings.Join(m.Events, " "))}
}
