package dynamo

// Tests of Update's turn-taking against DynamoDB Local: what the queue hands
// the next caller must not let it write over another incarnation of the
// item (deleted and created again) or over a write acknowledged in
// between.

import (
	"runtime"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
)

// waitQueued returns once n calls hold or wait for the turn on key.
func waitQueued[T any](tb *Table[T], key keyID, n int) {
	for {
		e, _ := tb.gate.State(key)
		refs := e.Refs
		if refs >= n {
			return
		}
		runtime.Gosched()
	}
}

// waitQuiet waits until no call uses key and no batch of it runs: the
// batch driving the last write hands its callers their outcomes before it
// hands the key off, so a caller can return (and a test look) before the
// key has gone quiet and into the cache.
func waitQuiet[T any](tb *Table[T], key keyID) {
	for {
		e, ok := tb.gate.State(key)
		inUse := ok && !e.Cached
		if !inUse {
			return
		}
		runtime.Gosched()
	}
}

type queuedJob struct {
	ID      string   `dynamo:"id,hash"`
	Jobs    []string `dynamo:"jobs"`
	Owner   string   `dynamo:"owner"`
	Version int64    `dynamo:"v,version"`
}

type plainCounter struct {
	ID   string            `dynamo:"id,hash"`
	N    int               `dynamo:"n"`
	Tags []string          `dynamo:"tags,set,omitempty"`
	Meta map[string]string `dynamo:"meta"`
	Note *string           `dynamo:"note"`
}

// Case 5: A's Update stores v1; while B waits for its turn, another client
// deletes the key and creates it again at v1. B starts from the item A
// stored, and its write holding v1 must not land on the new incarnation:
// it conflicts and runs again on the current item.
func TestUpdateQueueAcrossIncarnations(t *testing.T) {
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "queue", "id", types.ScalarAttributeTypeS, "", "")
	hc := &fakeDB{backend: c}
	tb, err := NewTable[queuedJob](NewMapper(hc), name)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewTable[queuedJob](NewMapper(c), name)
	ctx := t.Context()
	gk := keyIDOf(tb.p, map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "k"}})
	bDone := make(chan error, 1)
	hc.afterOnce("UpdateItem", func() {
		go func() {
			_, err := tb.Update(ctx, queuedJob{ID: "k"}, func(j queuedJob) (queuedJob, error) {
				j.Jobs = append(j.Jobs, "B")
				return j, nil
			})
			bDone <- err
		}()
		waitQueued(tb, gk, 2)
		if err := other.Delete(ctx, queuedJob{ID: "k"}, WithSaveBehavior(SaveClobber)); err != nil {
			t.Error(err)
		}
		if _, err := other.Save(ctx, queuedJob{ID: "k", Owner: "other", Jobs: []string{"O"}}); err != nil {
			t.Error(err)
		}
	})
	if _, err := tb.Update(ctx, queuedJob{ID: "k"}, func(j queuedJob) (queuedJob, error) {
		j.Owner, j.Jobs = "A", append(j.Jobs, "A")
		return j, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
	got, err := other.Load(ctx, queuedJob{ID: "k"}, ConsistentRead())
	if err != nil || got.Owner != "other" || !slices.Equal(got.Jobs, []string{"O", "B"}) || got.Version != 2 {
		t.Fatalf("stored %+v, %v; want the new incarnation kept with B's change on top (owner other, jobs [O B], v2)", got, err)
	}
}

// Issue 12, 2: within one Table, a Save acknowledged while a queued Update
// waits must not be overwritten with the item the queue hands over (a type
// without a version: the guard is the attributes read).
func TestUpdateQueueUnversionedKeepsSave(t *testing.T) {
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "queue", "id", types.ScalarAttributeTypeS, "", "")
	hc := &fakeDB{backend: c}
	tb, err := NewTable[plainCounter](NewMapper(hc), name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	gk := keyIDOf(tb.p, map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "k"}})
	bDone := make(chan error, 1)
	hc.afterOnce("UpdateItem", func() {
		go func() {
			_, err := tb.Update(ctx, plainCounter{ID: "k"}, func(p plainCounter) (plainCounter, error) {
				p.N++
				return p, nil
			})
			bDone <- err
		}()
		waitQueued(tb, gk, 2)
		if _, err := tb.Save(ctx, plainCounter{ID: "k", N: 100, Tags: []string{"x", "y"}, Meta: map[string]string{"a": "b"}}); err != nil {
			t.Error(err)
		}
	})
	if _, err := tb.Update(ctx, plainCounter{ID: "k"}, func(p plainCounter) (plainCounter, error) {
		p.N++
		return p, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
	got, err := tb.Load(ctx, plainCounter{ID: "k"}, ConsistentRead())
	if err != nil || got.N != 101 || len(got.Tags) != 2 || got.Meta["a"] != "b" {
		t.Fatalf("stored %+v, %v; want the acknowledged Save kept and incremented (101)", got, err)
	}
}
