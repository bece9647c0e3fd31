package integration

// The fault suite: the mapper, lease, backfill and commitlog driven through
// dynamotest.Faults, which delays requests, drops responses after the
// server applied them, answers 500s and throttling errors, and resets
// connections. Each test checks its invariant on the data afterwards, read
// through a client without faults, and logs one "FAULTS" line with the
// figures RELIABILITY.md quotes:
//
//	go test ./integration -run Faults -count=1 -v | grep FAULTS
//	go test ./integration -run Faults -count=1 -v -faults.seed=7 -faults.scale=4
//
// A failing test prints the seed; the same seed gives the same sequence of
// fault decisions (which request meets which fault still depends on
// goroutine scheduling).

import (
	"errors"
	"flag"
	"testing"
	"time"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

var (
	faultSeed  = flag.Uint64("faults.seed", 1, "seed of the fault suite's fault decisions")
	faultScale = flag.Int("faults.scale", 1, "multiplies the number of operations of the fault suite")
)

// faultConfig is the suite's standard mix: about one request in four meets a
// fault, bounded to maxFaults faults within two minutes. Each transport of a
// test gets its own seed derived from the suite's seed and salt.
func faultConfig(t *testing.T, salt uint64, maxFaults int) dynamotest.FaultConfig {
	t.Helper()
	return dynamotest.FaultConfig{
		Seed:        *faultSeed*1000003 + salt,
		Delay:       0.06,
		MaxDelay:    40 * time.Millisecond,
		Drop:        0.06,
		ServerError: 0.05,
		Throttle:    0.04,
		Reset:       0.04,
		MaxFaults:   maxFaults,
		Duration:    2 * time.Minute,
	}
}

// scaled returns n times the -faults.scale flag.
func scaled(n int) int { return n * max(1, *faultScale) }

// faultReport holds the figures of one fault test.
type faultReport struct {
	Ops       int // operations tried
	Acked     int // operations acknowledged as done
	Anomalies int // invariant violations found
	Stats     dynamotest.FaultStats
}

// logFaults logs the figures of a fault test in the one-line form that
// RELIABILITY.md quotes, with the seed to reproduce it.
func logFaults(t *testing.T, r faultReport) {
	t.Helper()
	t.Logf("FAULTS %s seed=%d scale=%d: %d operations tried, %d acknowledged, %d anomalies; %v",
		t.Name(), *faultSeed, max(1, *faultScale), r.Ops, r.Acked, r.Anomalies, r.Stats)
	if r.Stats.Faults() == 0 {
		t.Errorf("no fault was injected: the test proved nothing (seed %d)", *faultSeed)
	}
	if r.Anomalies > 0 {
		t.Errorf("%d anomalies; reproduce with: go test ./integration -run '^%s$' -count=1 -v -faults.seed=%d -faults.scale=%d",
			r.Anomalies, t.Name(), *faultSeed, max(1, *faultScale))
	}
}

// reportAnomalies fails the test with the first 20 anomalies found.
func reportAnomalies(t *testing.T, anomalies []string) {
	t.Helper()
	for i, a := range anomalies {
		if i == 20 {
			t.Errorf("... and %d more", len(anomalies)-20)
			return
		}
		t.Error(a)
	}
}

// stopFaults stops the fault transports and returns what they injected,
// summed.
func stopFaults(transports []*dynamotest.Faults) dynamotest.FaultStats {
	var stats dynamotest.FaultStats
	for _, f := range transports {
		f.Stop()
		stats = stats.Add(f.Stats())
	}
	return stats
}

// readFinal reads each of keys from table name without faults (a
// consistent Load through a client of its own) and calls found with each
// item stored. With lin, each read is recorded as a Load by client.
func readFinal(t *testing.T, name string, keys []string, lin *linRecorder, client int, found func(k string, got faultCounter)) {
	t.Helper()
	clean, err := dynamo.NewTable[faultCounter](dynamo.NewMapper(dynamotest.Client(t)), name)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		var call *linCall
		if lin != nil {
			call = lin.begin(client, regInput{Key: k, Kind: regLoad})
		}
		got, err := clean.Load(t.Context(), faultCounter{Key: k}, dynamo.ConsistentRead())
		switch {
		case errors.Is(err, dynamo.ErrNotFound):
			if call != nil {
				call.ok(regState{})
			}
		case err != nil:
			t.Fatalf("reading the final item %s without faults: %v", k, err)
		default:
			if call != nil {
				call.ok(counterState(true, got))
			}
			found(k, got)
		}
	}
}
