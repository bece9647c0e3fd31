package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/gate"
)

// sentRecord is one request a recClient was sent.
type sentRecord struct {
	op   string
	in   any // the pointer sent
	snap any // a deep copy taken when sent
}

// recClient records every request with a deep copy taken when sent, and
// answers with deep copies (as the SDK answers with fresh maps).
type recClient struct {
	*fakeDB
	mu   sync.Mutex
	sent []sentRecord
}

// deepInput copies in, its item, key and value maps deeply.
func deepInput[I any](in *I) *I {
	c := new(I)
	*c = *in
	v := reflect.ValueOf(c).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if !f.CanInterface() {
			continue
		}
		if x, ok := f.Interface().(map[string]types.AttributeValue); ok {
			f.Set(reflect.ValueOf(av.CloneItem(x)))
		}
	}
	return c
}

func (r *recClient) rec(op string, in, snap any) {
	r.mu.Lock()
	r.sent = append(r.sent, sentRecord{op, in, snap})
	r.mu.Unlock()
}

func (r *recClient) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	r.rec("GetItem", in, deepInput(in))
	out, err := r.fakeDB.GetItem(ctx, in, o...)
	if out != nil {
		out = &dynamodb.GetItemOutput{Item: av.CloneItem(out.Item)}
	}
	return out, err
}

func (r *recClient) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	r.rec("PutItem", in, deepInput(in))
	out, err := r.fakeDB.PutItem(ctx, in, o...)
	return out, cloneErr(err)
}

func (r *recClient) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	r.rec("UpdateItem", in, deepInput(in))
	out, err := r.fakeDB.UpdateItem(ctx, in, o...)
	if out != nil {
		out = &dynamodb.UpdateItemOutput{Attributes: av.CloneItem(out.Attributes)}
	}
	return out, cloneErr(err)
}

func (r *recClient) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	r.rec("DeleteItem", in, deepInput(in))
	out, err := r.fakeDB.DeleteItem(ctx, in, o...)
	return out, cloneErr(err)
}

// cloneErr gives a failed condition's item as a map of its own, as the SDK
// does.
func cloneErr(err error) error {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		c := *ccf
		c.Item = av.CloneItem(ccf.Item)
		return &c
	}
	return err
}

// check fails t for every request that changed after it was sent.
func (r *recClient) check(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, s := range r.sent {
		if !reflect.DeepEqual(reflect.ValueOf(s.in).Elem().Interface(), reflect.ValueOf(s.snap).Elem().Interface()) {
			t.Errorf("request %d (%s) changed after it was sent:\nsent %+v\nnow  %+v", i, s.op, reflect.ValueOf(s.snap).Elem().Interface(), reflect.ValueOf(s.in).Elem().Interface())
		}
	}
}

// stressItem is of the kinds an Update encodes into the item it remembers
// (Table.readsBack): scalars (whose values an item encoded over its basis
// shares), a set and a map.
type stressItem struct {
	ID  string            `dynamo:"id,hash"`
	V   int64             `dynamo:"v,version"`
	N   int               `dynamo:"n"`
	S   string            `dynamo:"s"`
	Ok  bool              `dynamo:"ok"`
	Set []string          `dynamo:"set,stringset"`
	M   map[string]string `dynamo:"m"`
}

// jcopy copies v deeply (through JSON).
func jcopy[T any](v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// scramble changes in place the slices and maps of it, as a caller may
// change a value it was handed.
func scramble(it *stressItem) {
	if len(it.Set) > 0 {
		it.Set[0] = "scrambled"
	}
	if it.M != nil {
		it.M["scr"] = "x"
	}
}

// Nothing an Update sends, hands out or is handed is shared with what the
// Table keeps between calls (a key's last item, encoded into by the next
// Update: codec.Struct.EncodeInto, basis.own): over random sequences of
// Updates (struct and pointer T; SavePut, If, ALL_NEW behaviours; ErrNoChange,
// panics; a conflicting writer; Load and Save; deletions; four callers on one
// key, one cancelling; more keys than the cache holds) in which the caller
// changes in place every value it was handed and every ConditionError item,
// each Update's function is last given the item as stored, each Update
// returns what it stored, and no request changes after it was sent.
func TestUpdateSharesNothingSentOrHandedOut(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { shareRun(t, seed) })
	}
}

func shareRun(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	db := (&fakeDB{}).table("S", "id", "")
	rc := &recClient{fakeDB: db}
	tb := newTestTable[stressItem](t, rc, "S")
	ptb := newTestTable[*stressItem](t, rc, "S")
	fresh := newTestTable[stressItem](t, db, "S")
	if !tb.readsBack || !ptb.readsBack {
		t.Fatal("stressItem is not encoded into the item an Update remembers (readsBack): the test covers nothing")
	}
	ctx := context.Background()
	keys := []string{"a", "b", "c"}
	evicted := false
	var kept []*stressItem // values the caller keeps and scrambles later
	var keptMaps []map[string]types.AttributeValue
	load := func(id string) (stressItem, bool) {
		got, err := fresh.Load(ctx, stressItem{ID: id}, ConsistentRead())
		if errors.Is(err, ErrNotFound) {
			return stressItem{ID: id}, false
		}
		if err != nil {
			t.Fatal(err)
		}
		return got, true
	}
	mutate := func(cur *stressItem) {
		cur.N++
		cur.S = fmt.Sprint("s", r.IntN(3))
		cur.Ok = r.IntN(2) == 0
		if r.IntN(3) == 0 {
			cur.Set = nil
		}
		if r.IntN(2) == 0 {
			cur.Set = append(cur.Set, fmt.Sprint("e", r.Int64()))
		}
		if r.IntN(2) == 0 {
			if cur.M == nil {
				cur.M = map[string]string{}
			}
			cur.M[fmt.Sprint("k", r.IntN(3))] = fmt.Sprint(r.IntN(9))
		}
	}
	for step := 0; step < 60; step++ {
		id := keys[r.IntN(len(keys))]
		switch op := r.IntN(10); op {
		case 0, 1, 2, 3, 4:
			var opts []WriteOption
			switch r.IntN(5) {
			case 1:
				opts = append(opts, WithSaveBehavior(SavePut))
			case 2:
				opts = append(opts, If(expression.Name("n").LessThan(expression.Value(r.IntN(20)))))
			case 3:
				opts = append(opts, WithSaveBehavior([]SaveBehavior{SaveClobber, SaveAppendSet, SaveUpdateSkipNulls}[r.IntN(3)]))
			}
			var lastIn, lastStored stressItem
			var lastExists bool
			var given []*stressItem
			fn := func(cur stressItem) (stressItem, error) {
				lastIn = jcopy(cur)
				lastStored, lastExists = load(id)
				given = append(given, &cur)
				mutate(&cur)
				if r.IntN(8) == 0 {
					return cur, ErrNoChange
				}
				if r.IntN(12) == 0 {
					panic("boom")
				}
				return cur, nil
			}
			var saved stressItem
			var err error
			panicked := false
			func() {
				defer func() {
					if p := recover(); p != nil {
						panicked = true
					}
				}()
				if r.IntN(3) == 0 {
					var ps *stressItem
					ps, err = ptb.Update(ctx, &stressItem{ID: id}, func(cur *stressItem) (*stressItem, error) {
						c, e := fn(*cur)
						kept = append(kept, cur)
						return &c, e
					}, opts...)
					if ps != nil {
						saved = *ps
						kept = append(kept, ps)
					}
				} else {
					saved, err = tb.Update(ctx, stressItem{ID: id}, fn, opts...)
					kept = append(kept, &saved)
				}
			}()
			kept = append(kept, given...)
			if panicked {
				continue
			}
			var ce *ConditionError
			if errors.As(err, &ce) && ce.Item != nil {
				keptMaps = append(keptMaps, ce.Item)
			} else if err != nil && !errors.Is(err, ErrConditionFailed) {
				t.Fatalf("step %d: Update: %v", step, err)
			}
			if err == nil {
				lastStored.V = lastIn.V
				if !lastExists {
					lastStored = stressItem{ID: id}
				}
				if !reflect.DeepEqual(jcopy(lastStored), lastIn) {
					t.Fatalf("step %d: the function was last given\n%+v\nstored then\n%+v", step, lastIn, lastStored)
				}
				now, _ := load(id)
				if !reflect.DeepEqual(jcopy(now), jcopy(saved)) && len(opts) == 0 {
					t.Fatalf("step %d: Update returned\n%+v\nstored\n%+v", step, saved, now)
				}
			}
		case 5:
			// Another writer.
			o := newTestTable[stressItem](t, db, "S")
			if _, err := o.Update(ctx, stressItem{ID: id}, func(cur stressItem) (stressItem, error) { mutate(&cur); return cur, nil }); err != nil {
				t.Fatal(err)
			}
		case 6:
			got, err := tb.Load(ctx, stressItem{ID: id}, ConsistentRead())
			if err == nil {
				kept = append(kept, &got)
				if r.IntN(2) == 0 {
					mutate(&got)
					s, err := tb.Save(ctx, got)
					if err == nil {
						kept = append(kept, &s)
					}
				}
			}
		case 7:
			// More keys than the cache holds: the key's item is evicted.
			if evicted {
				continue
			}
			evicted = true
			for i := 0; i < gate.CacheEntries+10; i++ {
				if _, err := tb.Update(ctx, stressItem{ID: fmt.Sprint("z", seed, i)}, func(cur stressItem) (stressItem, error) { cur.N++; return cur, nil }); err != nil {
					t.Fatal(err)
				}
			}
		case 8:
			if r.IntN(3) == 0 {
				cur, ok := load(id)
				if ok {
					_ = fresh.Delete(ctx, cur)
				}
			}
		case 9:
			// Concurrent updates on one key.
			var wg sync.WaitGroup
			var mu sync.Mutex
			for g := 0; g < 4; g++ {
				wg.Add(1)
				cctx, cancel := context.WithCancel(ctx)
				doCancel := g == 2
				go func() {
					defer wg.Done()
					defer cancel()
					s, err := tb.Update(cctx, stressItem{ID: id}, func(cur stressItem) (stressItem, error) {
						if doCancel {
							cancel()
						}
						cur.N++
						cur.Set = append(cur.Set, fmt.Sprint("g", step, "-", g))
						if cur.M == nil {
							cur.M = map[string]string{}
						}
						cur.M["g"] = "1"
						return cur, nil
					})
					if err != nil {
						if !doCancel {
							t.Error(err)
						}
						return
					}
					mu.Lock()
					kept = append(kept, &s)
					mu.Unlock()
				}()
			}
			wg.Wait()
		}
		// The caller changes everything it was handed.
		for _, k := range kept {
			scramble(k)
		}
		for _, m := range keptMaps {
			m["n"] = &types.AttributeValueMemberN{Value: "999"}
			m["s"] = &types.AttributeValueMemberS{Value: "scrambled"}
		}
		kept, keptMaps = kept[:0], keptMaps[:0]
	}
	rc.check(t)
}
