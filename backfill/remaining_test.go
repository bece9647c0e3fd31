package backfill

import (
	"testing"
	"time"

	"github.com/ddbkit/dynamo/clock"
)

// TestRemainingKnownOnceTheCountIsReached: once this process has done as
// many items as the table's item count while segments are still finishing
// (their last pages and checkpoints in flight, or a count that lags behind
// the table), the estimate stays known — not -1, which a progress bar shows
// as "?" at 100% (examples/backfill did at the end of every run).
// The estimate is then taken from the segments finished (here 1/7 of the
// time elapsed). (Found by the fault-suite session: at done == total it fell
// through to -1.)
func TestRemainingKnownOnceTheCountIsReached(t *testing.T) {
	clk := clock.NewFake(time.Unix(1e9, 0))
	m := &Migration[struct{}]{o: options{segments: 8, clock: clk}, meter: &meter{}, total: 1000, started: clk.Now()}
	clk.Advance(10 * time.Second)
	m.changed.Store(1000)
	m.fleet = fleetView{done: 7, scanned: 1000, first: 0, firstAt: clk.Now().Add(-10 * time.Second), at: clk.Now()}
	if r, want := m.Progress().Remaining, 10*time.Second/7; r != want {
		t.Errorf("1000 of 1000 items done, 7 of 8 segments after 10 s: Remaining %v, want %v", r, want)
	}
}
