package stream

import "sort"

// shardInfo is a shard as DescribeStream lists it.
type shardInfo struct {
	id, parent string
	closed     bool // it has an ending sequence number: no record will be added
}

// shardState is what a shard's checkpoint says (the zero value: none).
type shardState struct {
	exists bool           // a checkpoint was written
	seq    SequenceNumber // the last record handled; zero: none yet
	ended  bool           // read to its end and that end checkpointed
}

// plan is what lineage decides for a listing and its checkpoints.
type plan struct {
	// ready are the shards to read now, sorted: not ended, and every
	// ancestor still listed ended.
	ready []string
	// fromStart are the ready shards that must be read from their first
	// record whatever the start position: a shard whose lineage was read
	// before (a parent with a checkpoint), so that no child record is
	// skipped by starting at LATEST.
	fromStart map[string]bool
	// lost are the shards whose records were trimmed before they were
	// read: a parent no longer listed whose checkpoint is not its end.
	lost []*TrimmedError
}

// lineage decides which shards may be read now: a child only after each of
// its ancestors that is still listed was read to its end and checkpointed
// (DynamoDB keeps an item's changes in one lineage, so this keeps them in
// order). A parent no longer listed (trimmed, past retention) does not
// hold its child back, but if its checkpoint says it was not read to its
// end, the rest of it is reported lost. cps holds the checkpoints of the
// listed shards and of their parents.
func lineage(shards []shardInfo, cps map[string]shardState) plan {
	byID := make(map[string]*shardInfo, len(shards))
	for i := range shards {
		byID[shards[i].id] = &shards[i]
	}
	p := plan{fromStart: map[string]bool{}}
	lostSeen := map[string]bool{}
	for i := range shards {
		s := &shards[i]
		if cps[s.id].ended {
			continue
		}
		ok := true
		seen := map[string]bool{s.id: true} // a cycle would be a server bug: stop on it
		for a := s.parent; a != ""; {
			as, listed := byID[a]
			if !listed {
				if c := cps[a]; c.exists && !c.ended && !lostSeen[a] {
					lostSeen[a] = true
					p.lost = append(p.lost, &TrimmedError{Shard: a, After: c.seq, Gone: true})
				}
				break
			}
			if !cps[a].ended || seen[a] {
				ok = false
				break
			}
			seen[a] = true
			a = as.parent
		}
		if !ok {
			continue
		}
		p.ready = append(p.ready, s.id)
		if s.parent != "" && cps[s.parent].exists {
			p.fromStart[s.id] = true
		}
	}
	sort.Strings(p.ready)
	sort.Slice(p.lost, func(i, j int) bool { return p.lost[i].Shard < p.lost[j].Shard })
	return p
}
