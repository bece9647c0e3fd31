package backfill

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// staleScans serves the scans of table from snapshot, a copy of the table
// as it was earlier: an eventually consistent read at its stalest. It
// records whether the scans asked for strongly consistent reads.
type staleScans struct {
	dynamo.Client
	table, snapshot string

	mu         sync.Mutex
	consistent []bool
}

func (s *staleScans) Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	s.mu.Lock()
	s.consistent = append(s.consistent, aws.ToBool(in.ConsistentRead))
	s.mu.Unlock()
	r := *in
	if aws.ToString(in.TableName) == s.table {
		r.TableName = aws.String(s.snapshot)
	}
	return s.Client.Scan(ctx, &r, optFns...)
}

// snapshot copies the env's table into a new table and returns its name.
func (e *env) snapshot() string {
	e.t.Helper()
	name := dynamotest.KeyTable(e.t, e.c, "", "id", types.ScalarAttributeTypeS, "", "")
	out, err := e.c.Scan(e.t.Context(), &dynamodb.ScanInput{TableName: &e.table, ConsistentRead: aws.Bool(true)})
	if err != nil || out.LastEvaluatedKey != nil {
		e.t.Fatalf("copying the table: %v (or more than a page)", err)
	}
	for i := 0; i < len(out.Items); i += 25 {
		var reqs []types.WriteRequest
		for _, it := range out.Items[i:min(i+25, len(out.Items))] {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		}
		for len(reqs) > 0 {
			res, err := e.c.BatchWriteItem(e.t.Context(), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{name: reqs}})
			if err != nil {
				e.t.Fatal(err)
			}
			reqs = res.UnprocessedItems[name]
		}
	}
	return name
}

// TestStaleScanOnlyConflicts: scans are eventually consistent by default,
// and an item the scan reads stale — here every item, 50 of them changed
// by live writes since — is written under the version read, conflicts,
// and is changed once on the stored item: no live write is lost.
func TestStaleScanOnlyConflicts(t *testing.T) {
	e := newEnv(t, 200)
	snap := e.snapshot()
	hits := make([]int64, e.n)
	for i := range 50 {
		if _, err := e.items.Update(t.Context(), account{ID: key(i * 4)}, func(a account) (account, error) {
			a.Hits++
			return a, nil
		}); err != nil {
			t.Fatal(err)
		}
		hits[i*4] = 1
	}
	stale := &staleScans{Client: e.c, table: e.table, snapshot: snap}
	m, err := NewMigration(dynamo.NewMapper(stale), e.table, "stale", addMigrated,
		WithFleet(e.leaseClient("w1"), e.leases), WithSegments(4), WithPageSize(50), WithPollInterval(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.check(hits)
	if p := m.Progress(); p.Changed != 200 || p.Reruns != 50 {
		t.Errorf("progress %+v: want 200 changed, 50 reruns (the items read stale)", p)
	}
	for _, c := range stale.consistent {
		if c {
			t.Fatal("a scan asked for a strongly consistent read: the default is eventually consistent")
		}
	}
}

// TestStronglyConsistentScans: with StronglyConsistent every scan asks
// for strongly consistent reads.
func TestStronglyConsistentScans(t *testing.T) {
	e := newEnv(t, 100)
	counter := &staleScans{Client: e.c, table: e.table, snapshot: e.table}
	m, err := NewMigration(dynamo.NewMapper(counter), e.table, "strong", addMigrated, WithStronglyConsistent(),
		WithFleet(e.leaseClient("w1"), e.leases), WithSegments(2), WithPageSize(50), WithPollInterval(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.check(nil)
	if len(counter.consistent) == 0 {
		t.Fatal("no scan seen")
	}
	for _, c := range counter.consistent {
		if !c {
			t.Fatal("a scan read eventually consistent despite StronglyConsistent")
		}
	}
}

// TestCheckpointsEachInterval: a segment writes its checkpoint after every
// page with a zero CheckpointInterval, and only at its end when the
// interval is longer than the run (the checkpoint's version counts its
// writes).
func TestCheckpointsEachInterval(t *testing.T) {
	e := newEnv(t, 500)
	for _, c := range []struct {
		id       string
		every    time.Duration
		min, max int64
	}{
		{"every-page", 0, 10, 11}, // 10 pages of 50, and maybe an empty last one
		{"at-end", time.Hour, 1, 1},
	} {
		m := e.migration(c.id, "w1", func(a account) (account, error) { return a, dynamo.ErrNoChange },
			WithSegments(1), WithCheckpointInterval(c.every))
		if err := m.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		cp, err := m.cps.Load(t.Context(), checkpoint{Key: m.checkpointKey(0)}, dynamo.ConsistentRead())
		if err != nil {
			t.Fatal(err)
		}
		if !cp.Done || cp.Scanned != 500 || cp.Version < c.min || cp.Version > c.max {
			t.Errorf("%s: checkpoint %+v: want done, 500 scanned, written %d to %d times", c.id, cp, c.min, c.max)
		}
	}
}
