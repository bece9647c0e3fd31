package backfill

import (
	"bytes"
	"context"
	"fmt"
	"strings"
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
	m, err := New(stale, e.table, "stale", addMigrated,
		Fleet(e.leaseClient("w1"), e.leases), Segments(4), PageSize(50), PollInterval(50*time.Millisecond))
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
	m, err := New(counter, e.table, "strong", addMigrated, StronglyConsistent(),
		Fleet(e.leaseClient("w1"), e.leases), Segments(2), PageSize(50), PollInterval(50*time.Millisecond))
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
			Segments(1), CheckpointInterval(c.every))
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

// markInCondition reports whether the condition of in names the attribute
// mark.
func markInCondition(in *dynamodb.UpdateItemInput, mark string) bool {
	cond := aws.ToString(in.ConditionExpression)
	for ph, name := range in.ExpressionAttributeNames {
		if name != mark {
			continue
		}
		for i := strings.Index(cond, ph); i >= 0; i = strings.Index(cond, ph) {
			end := i + len(ph)
			if end == len(cond) || !isPlaceholderByte(cond[end]) {
				return true
			}
			cond = cond[end:]
		}
	}
	return false
}

func isPlaceholderByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// TestMarkConditionOnlyWhereTheWriteIsNotPinned: a write of an item
// scanned with a write token is pinned to the state scanned (version and
// token), which passed the scan's filter of marked items, so it leaves
// the mark's condition out; a write of an item scanned without a token
// (another client wrote it) keeps it. Every item is changed once either
// way.
func TestMarkConditionOnlyWhereTheWriteIsNotPinned(t *testing.T) {
	e := newEnv(t, 40)
	for i := range e.n / 2 { // half the items written by the mapper: holding a token
		if _, err := e.items.Update(t.Context(), account{ID: key(i)}, func(a account) (account, error) { return a, nil }); err != nil {
			t.Fatal(err)
		}
	}
	ins := runRecorded(t, e, "pinned")
	if len(ins) != e.n {
		t.Fatalf("%d UpdateItems, want one per item (%d)", len(ins), e.n)
	}
	for _, in := range ins {
		var i int
		fmt.Sscanf(in.Key["id"].(*types.AttributeValueMemberS).Value, "acct-%05d", &i)
		if want := i >= e.n/2; markInCondition(in, DefaultMark) != want {
			t.Errorf("%s (token read: %v): condition %q names the mark: %v, want %v",
				key(i), i < e.n/2, aws.ToString(in.ConditionExpression), !want, want)
		}
	}
}

// A stale scan returns an earlier incarnation of an item at the version
// that the item now stored — deleted, created again and changed by the
// migration since — holds with the mark: the migration must not change it
// again. Where the write is not pinned to the token read (tokens off, or
// none read) only the mark's condition stops it; with a token read, the
// token stored differs.
func TestMarkedIncarnationAtTheScannedVersionNotChangedAgain(t *testing.T) {
	num := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	tok := func(b byte) types.AttributeValue {
		return &types.AttributeValueMemberB{Value: bytes.Repeat([]byte{b}, 16)}
	}
	for _, tc := range []struct {
		name             string
		opts             []Option
		scanned, current types.AttributeValue // the write tokens (nil: none)
	}{
		{"tokens off", []Option{MapperOptions(dynamo.WithWriteTokenAttribute(""))}, tok(1), tok(2)},
		{"no token read or stored", nil, nil, nil},
		{"another token stored", nil, tok(1), tok(2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 1)
			put := func(item map[string]types.AttributeValue, token types.AttributeValue) {
				item["id"] = &types.AttributeValueMemberS{Value: key(0)}
				if token != nil {
					item[dynamo.DefaultWriteTokenAttribute] = token
				}
				if _, err := e.c.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: &e.table, Item: item}); err != nil {
					t.Fatal(err)
				}
			}
			put(map[string]types.AttributeValue{"version": num("2"), "hits": num("0"), "migrated": num("0")}, tc.scanned)
			stale := &staleScans{Client: e.c, table: e.table, snapshot: e.snapshot()}
			put(map[string]types.AttributeValue{"version": num("2"), "hits": num("3"), "migrated": num("5"),
				DefaultMark: &types.AttributeValueMemberS{Value: "incarnation"}}, tc.current)
			opts := append([]Option{Fleet(e.leaseClient("w1"), e.leases), Segments(1), PollInterval(50 * time.Millisecond)}, tc.opts...)
			m, err := New(stale, e.table, "incarnation", addMigrated, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Run(t.Context()); err != nil {
				t.Fatal(err)
			}
			got, err := e.items.Load(t.Context(), account{ID: key(0)}, dynamo.ConsistentRead())
			if err != nil {
				t.Fatal(err)
			}
			if got.Migrated != 5 || got.Hits != 3 || got.Version != 2 {
				t.Errorf("stored %+v: want it as it was (migrated 5, hits 3, version 2): it holds the mark", got)
			}
			if p := m.Progress(); p.Changed != 0 || p.Skipped != 1 {
				t.Errorf("progress %+v: want nothing changed, one item skipped", p)
			}
		})
	}
}
