package integration

// The fault suite's incarnation test: concurrent Update appends on a few
// items through faulty transports while another process deletes the items
// at random moments (and the next Update creates them again), so that
// deletions and re-creations fall between writes, their lost answers and
// whatever settles them. Every incarnation the deleter removed is recorded
// (DeleteItem with ALL_OLD, through a client without faults), so that with
// the final items they hold every id ever applied.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/leaktest"
)

// incarnationOp is one Update append as its caller saw it.
type incarnationOp struct {
	ID, Key string
	Acked   bool
	Version int64 // when Acked: the saved copy's version
	Len     int   // when Acked: the saved copy's number of ids
	Err     error
}

// checkIncarnations checks the incarnations of each key (those deleted, in
// any order, and the final one) against the operations:
//
//   - within an incarnation, version = number of ids (one version per
//     applied Update, from 1 at creation);
//   - no id appears twice in all the incarnations of its key: a write applied
//     twice, or computed from one incarnation and landed on another, would
//     repeat the ids it carried;
//   - every acknowledged id appears, in an incarnation whose ids up to it
//     number the saved copy's version;
//   - an id whose Update failed without ErrUnknownOutcome does not appear.
func checkIncarnations(ops []incarnationOp, incs map[string][]faultCounter) []string {
	var out []string
	addf := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	where := map[string]map[string]int{} // key → id → position
	for key, list := range incs {
		where[key] = map[string]int{}
		for _, inc := range list {
			if inc.Version != int64(len(inc.Ops)) {
				addf("key %s: an incarnation holds version %d with %d ids %v", key, inc.Version, len(inc.Ops), inc.Ops)
			}
			for i, id := range inc.Ops {
				if _, dup := where[key][id]; dup {
					addf("key %s: id %s appears twice: applied twice, or across incarnations", key, id)
				}
				where[key][id] = i
			}
		}
	}
	for _, op := range ops {
		p, found := where[op.Key][op.ID]
		switch {
		case op.Acked && !found:
			addf("key %s: acknowledged %s is missing: a lost write", op.Key, op.ID)
		case op.Acked && int64(p)+1 != op.Version:
			addf("key %s: acknowledged %s saved version %d but sits at position %d", op.Key, op.ID, op.Version, p)
		case !op.Acked && found && !errors.Is(op.Err, dynamo.ErrUnknownOutcome):
			addf("key %s: %s failed without ErrUnknownOutcome (%v) but was applied", op.Key, op.ID, op.Err)
		}
	}
	return out
}

func TestFaultsMapperIncarnations(t *testing.T) {
	leaktest.Check(t, "ddbkit/dynamo.")
	const writers = 6
	keys := []string{"a", "b"}
	perWriter := scaled(25)
	maxFaults := scaled(40)

	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "faultincs", "key", types.ScalarAttributeTypeS, "", "")
	var transports []*dynamotest.Faults
	tables := make([]*dynamo.Table[faultCounter], writers)
	for i := range tables {
		f := dynamotest.NewFaults(faultConfig(t, uint64(100+i), maxFaults), nil)
		transports = append(transports, f)
		tb, err := dynamo.NewTable[faultCounter](dynamo.NewMapper(f.Client(t, quickRetries)), name)
		if err != nil {
			t.Fatal(err)
		}
		tables[i] = tb
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	progress := make(chan struct{}, writers*perWriter)
	lin := &linRecorder{} // the history for the register model (linear_test.go)
	opsOf := make([][]incarnationOp, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(*faultSeed, uint64(w)+77))
			for seq := range perWriter {
				id := fmt.Sprintf("w%d-%d", w, seq)
				key := keys[rng.IntN(len(keys))]
				call := lin.begin(w, regInput{Key: key, Kind: regUpdate, ID: id})
				saved, err := tables[w].Update(ctx, faultCounter{Key: key}, func(c faultCounter) (faultCounter, error) {
					c.Count++
					c.Ops = append(slices.Clip(c.Ops), id)
					return c, nil
				})
				op := incarnationOp{ID: id, Key: key, Err: err}
				if err == nil {
					op.Acked, op.Version, op.Len = true, saved.Version, len(saved.Ops)
					call.ok(counterState(true, saved))
				} else {
					call.failed(err, mapperNotApplied)
				}
				opsOf[w] = append(opsOf[w], op)
				progress <- struct{}{}
			}
		}()
	}
	// The deleter: after every few operations, delete a random key and
	// record what it removed.
	deleted := map[string][]faultCounter{}
	deletions := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		rng := rand.New(rand.NewPCG(*faultSeed, 99))
		for n := 0; n < writers*perWriter; n++ {
			<-progress
			if rng.IntN(4) != 0 {
				continue
			}
			key := keys[rng.IntN(len(keys))]
			call := lin.begin(writers, regInput{Key: key, Kind: regTake})
			out, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{
				TableName:    aws.String(name),
				Key:          map[string]types.AttributeValue{"key": &types.AttributeValueMemberS{Value: key}},
				ReturnValues: types.ReturnValueAllOld,
			})
			if err != nil {
				call.unknown(err)
				t.Errorf("deleter: %v", err)
				return
			}
			if out.Attributes == nil {
				call.ok(regState{})
				continue
			}
			var fc faultCounter
			if err := attributevalue.UnmarshalMapWithOptions(out.Attributes, &fc, func(o *attributevalue.DecoderOptions) { o.TagKey = "dynamo" }); err != nil {
				t.Errorf("deleter: %v", err)
				return
			}
			call.ok(counterState(true, fc))
			deleted[key] = append(deleted[key], fc)
			deletions++
		}
	}()
	wg.Wait()
	<-done

	stats := stopFaults(transports)
	incs := map[string][]faultCounter{}
	for _, k := range keys {
		incs[k] = deleted[k]
	}
	readFinal(t, name, keys, lin, writers+1, func(k string, got faultCounter) {
		incs[k] = append(incs[k], got)
	})
	ops := slices.Concat(opsOf...)
	anomalies := checkIncarnations(ops, incs)
	reportAnomalies(t, anomalies)
	nonLinear := checkLinear(t, "register", regModel, regPruneUpdates, lin.history(), linCap, 30*time.Second).Anomalies()
	acked, unknown := 0, 0
	for _, op := range ops {
		switch {
		case op.Acked:
			acked++
		case errors.Is(op.Err, dynamo.ErrUnknownOutcome):
			unknown++
		}
	}
	t.Logf("%d incarnations deleted, %d unknown outcomes", deletions, unknown)
	if deletions == 0 {
		t.Errorf("the deleter deleted nothing: the test proved nothing (seed %d)", *faultSeed)
	}
	logFaults(t, faultReport{Ops: len(ops), Acked: acked, Anomalies: len(anomalies) + nonLinear, Stats: stats})
}

// The checker finds what it is meant to find.
func TestCheckIncarnationsFindsAnomalies(t *testing.T) {
	inc := func(ops ...string) faultCounter { return faultCounter{Ops: ops, Version: int64(len(ops))} }
	cases := []struct {
		name string
		ops  []incarnationOp
		incs map[string][]faultCounter
		want int
	}{
		{"clean", []incarnationOp{{ID: "x", Key: "a", Acked: true, Version: 1}}, map[string][]faultCounter{"a": {inc("x")}}, 0},
		{"across incarnations", nil, map[string][]faultCounter{"a": {inc("x", "y"), inc("x", "y", "z")}}, 2},
		{"lost", []incarnationOp{{ID: "q", Key: "a", Acked: true, Version: 1}}, map[string][]faultCounter{"a": {inc("x")}}, 1},
		{"version off", nil, map[string][]faultCounter{"a": {{Ops: []string{"x"}, Version: 2}}}, 1},
		{"failed but applied", []incarnationOp{{ID: "x", Key: "a", Err: errors.New("boom")}}, map[string][]faultCounter{"a": {inc("x")}}, 1},
		{"unknown and applied", []incarnationOp{{ID: "x", Key: "a", Err: dynamo.ErrUnknownOutcome}}, map[string][]faultCounter{"a": {inc("x")}}, 0},
	}
	for _, tc := range cases {
		if got := checkIncarnations(tc.ops, tc.incs); len(got) != tc.want {
			t.Errorf("%s: %d anomalies %q, want %d", tc.name, len(got), got, tc.want)
		}
	}
}
