package integration

// The fault suite under replicated write conflicts: DynamoDB Local does not
// emulate strongly consistent global tables (MRSC), so dynamotest.Faults
// refuses writes with ReplicatedWriteConflictException as an MRSC table does
// while another Region writes the item, mixed with lost answers. Update must
// read again and call its function again — never report an unapplied
// change as done, never apply one twice.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/leaktest"
)

// TestFaultsReplicatedConflicts runs concurrent Update increments on two
// counters from four "processes" (the last with two goroutines on one
// Table, whose Updates of a key share writes) whose writes meet replicated
// write conflicts (one in five), lost answers and throttling, then checks the
// items with checkCounters: every acknowledged increment applied once at
// the position its saved copy says, nothing twice, and the history
// linearizable.
func TestFaultsReplicatedConflicts(t *testing.T) {
	leaktest.Check(t, "ddbkit/dynamo.")
	const procs, writers = 4, 5
	keys := []string{"a", "b"}
	perWriter := scaled(25)
	maxFaults := scaled(60)

	name := dynamotest.KeyTable(t, dynamotest.Client(t), "faultsmrsc", "key", types.ScalarAttributeTypeS, "", "")
	var transports []*dynamotest.Faults
	tables := make([]*dynamo.Table[faultCounter], procs)
	for i := range tables {
		f := dynamotest.NewFaults(dynamotest.FaultConfig{
			Seed:               *faultSeed*1000003 + 4300 + uint64(i),
			ReplicatedConflict: 0.2,
			Drop:               0.04,
			Throttle:           0.03,
			MaxFaults:          maxFaults,
			Duration:           2 * time.Minute,
		}, nil)
		transports = append(transports, f)
		tb, err := dynamo.NewTable[faultCounter](dynamo.NewMapper(f.Client(t, quickRetries), dynamo.WithStrongGlobalTables(name)), name)
		if err != nil {
			t.Fatal(err)
		}
		tables[i] = tb
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	var clk atomic.Int64
	opsOf := make([][]counterOp, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(*faultSeed, 4300+uint64(w)))
			for seq := range perWriter {
				id := fmt.Sprintf("w%d-%d", w, seq)
				key := keys[rng.IntN(len(keys))]
				op := counterOp{ID: id, Key: key, Client: w, Call: clk.Add(1)}
				saved, err := tables[min(w, procs-1)].Update(ctx, faultCounter{Key: key}, func(c faultCounter) (faultCounter, error) {
					c.Count++
					c.Ops = append(slices.Clip(c.Ops), id)
					return c, nil
				})
				op.Return = clk.Add(1)
				if err == nil {
					op.Acked, op.Count = true, saved.Count
				} else {
					op.Err = err
				}
				opsOf[w] = append(opsOf[w], op)
			}
		}()
	}
	wg.Wait()
	end := clk.Add(1)
	stats := stopFaults(transports)
	ops := slices.Concat(opsOf...)

	final := map[string]counterFinal{}
	for _, k := range keys {
		final[k] = counterFinal{}
	}
	readFinal(t, name, keys, nil, 0, func(k string, got faultCounter) {
		final[k] = counterFinal{Found: true, Count: got.Count, Version: got.Version, Ops: got.Ops}
	})
	check := checkCounters(ops, nil, final, end, 20*time.Second)
	reportAnomalies(t, check.Anomalies)
	anomalies := len(check.Anomalies)

	acked, replicated := 0, 0
	causes := map[string]int{}
	for _, op := range ops {
		if op.Acked {
			acked++
			continue
		}
		causes[errorCause(op.Err)]++
		if errors.Is(op.Err, dynamo.ErrReplicatedConflict) {
			replicated++
		}
		if !updateErrorExplained(op.Err, name) {
			anomalies++
			t.Errorf("Update %s on key %s failed with an error that does not say what happened: %v", op.ID, op.Key, op.Err)
		}
	}
	t.Logf("%d increments (%d acknowledged, %d failed of which %d found applied, %d with a replicated conflict); failures by cause: %v",
		len(ops), acked, len(ops)-acked, check.Applied, replicated, causes)
	if stats.Replicated == 0 {
		t.Errorf("no replicated write conflict was injected (seed %d): the test proved nothing", *faultSeed)
	}
	if acked == 0 {
		t.Errorf("no Update was acknowledged: the faults drowned the test")
	}
	logFaults(t, faultReport{Ops: len(ops), Acked: acked, Anomalies: anomalies, Stats: stats})
}
