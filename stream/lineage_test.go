package stream

import (
	"slices"
	"testing"
)

func seq(t *testing.T, s string) SequenceNumber {
	t.Helper()
	n, err := ParseSequenceNumber(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A split: parent P closed, children A and B. The children wait until P is
// read to its end and checkpointed, then both are ready and read from their
// start.
func TestChildReadOnlyAfterParentEndCheckpointed(t *testing.T) {
	shards := []shardInfo{{id: "P", closed: true}, {id: "A", parent: "P"}, {id: "B", parent: "P"}}
	p := lineage(shards, map[string]shardState{})
	if !slices.Equal(p.ready, []string{"P"}) {
		t.Fatalf("nothing read: ready %v, want [P]", p.ready)
	}
	p = lineage(shards, map[string]shardState{"P": {exists: true, seq: seq(t, "100")}})
	if !slices.Equal(p.ready, []string{"P"}) {
		t.Fatalf("P read in part: ready %v, want [P]", p.ready)
	}
	p = lineage(shards, map[string]shardState{"P": {exists: true, seq: seq(t, "200"), ended: true}})
	if !slices.Equal(p.ready, []string{"A", "B"}) || !p.fromStart["A"] || !p.fromStart["B"] {
		t.Fatalf("P ended: ready %v from start %v, want [A B] both from start", p.ready, p.fromStart)
	}
}

// The parent's parent holds the grandchild back too, even when the parent
// (listed) were marked ended out of order.
func TestGrandparentHoldsGrandchild(t *testing.T) {
	shards := []shardInfo{{id: "G", closed: true}, {id: "P", parent: "G", closed: true}, {id: "C", parent: "P"}}
	p := lineage(shards, map[string]shardState{"P": {exists: true, ended: true}})
	if !slices.Equal(p.ready, []string{"G"}) {
		t.Fatalf("ready %v, want [G]", p.ready)
	}
	p = lineage(shards, map[string]shardState{"G": {exists: true, ended: true}, "P": {exists: true, ended: true}})
	if !slices.Equal(p.ready, []string{"C"}) {
		t.Fatalf("ready %v, want [C]", p.ready)
	}
}

// A parent trimmed away (no longer listed) does not hold its child: a new
// processor reads the child at its configured start; one that had read the
// parent to its end reads the child from its start; one that had not
// reports the parent's rest lost, and reads the child from its start.
func TestTrimmedParent(t *testing.T) {
	shards := []shardInfo{{id: "C", parent: "P"}}
	p := lineage(shards, map[string]shardState{})
	if !slices.Equal(p.ready, []string{"C"}) || p.fromStart["C"] || len(p.lost) != 0 {
		t.Fatalf("never read: %+v", p)
	}
	p = lineage(shards, map[string]shardState{"P": {exists: true, ended: true}})
	if !slices.Equal(p.ready, []string{"C"}) || !p.fromStart["C"] || len(p.lost) != 0 {
		t.Fatalf("parent ended: %+v", p)
	}
	p = lineage(shards, map[string]shardState{"P": {exists: true, seq: seq(t, "77")}})
	if len(p.lost) != 1 || p.lost[0].Shard != "P" || p.lost[0].After.String() != "77" || !p.lost[0].Gone {
		t.Fatalf("parent cut short: lost %+v", p.lost)
	}
	if !slices.Equal(p.ready, []string{"C"}) || !p.fromStart["C"] {
		t.Fatalf("parent cut short: ready %+v", p)
	}
}

// Ended shards are never ready again; two lineages proceed independently;
// the same trimmed parent is reported once.
func TestEndedShardsAndIndependentLineages(t *testing.T) {
	shards := []shardInfo{
		{id: "A1", closed: true}, {id: "A2", parent: "A1"},
		{id: "B2", parent: "B1"}, {id: "B3", parent: "B1"},
	}
	cps := map[string]shardState{"A1": {exists: true, ended: true}, "B1": {exists: true, seq: seq(t, "5")}, "B2": {exists: true, ended: true}}
	p := lineage(shards, cps)
	if !slices.Equal(p.ready, []string{"A2", "B3"}) {
		t.Fatalf("ready %v, want [A2 B3]", p.ready)
	}
	if len(p.lost) != 1 || p.lost[0].Shard != "B1" {
		t.Fatalf("lost %+v, want B1 once", p.lost)
	}
}

// A listing whose parents form a cycle (a server bug) readies nothing of it
// rather than looping.
func TestParentCycleReadiesNothing(t *testing.T) {
	shards := []shardInfo{{id: "X", parent: "Y"}, {id: "Y", parent: "X"}}
	cps := map[string]shardState{"X": {exists: true, ended: false}, "Y": {exists: true, ended: false}}
	if p := lineage(shards, cps); len(p.ready) != 0 {
		t.Fatalf("ready %v", p.ready)
	}
}
