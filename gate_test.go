package dynamo

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestGateTakesTurnsAndForgetsQuietKeys(t *testing.T) {
	var g gate
	ctx := context.Background()
	a, err := g.enter(ctx, kid("k"))
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.enter(cctx, kid("k")); !errors.Is(err, context.Canceled) {
		t.Fatalf("enter while held with a done ctx: %v", err)
	}
	other, err := g.enter(ctx, kid("other")) // other keys do not wait
	if err != nil {
		t.Fatal(err)
	}
	g.leave(kid("other"), other)
	entered := make(chan *gateEntry)
	go func() {
		e, _ := g.enter(ctx, kid("k"))
		entered <- e
	}()
	for { // wait until the goroutine waits for the turn
		g.mu.Lock()
		waiting := g.keys[kid("k")].refs == 2
		g.mu.Unlock()
		if waiting {
			break
		}
		runtime.Gosched()
	}
	a.last = map[string]types.AttributeValue{"x": str("1")}
	g.leave(kid("k"), a)
	b := <-entered
	if b != a || b.last == nil {
		t.Fatal("the waiter did not get the entry and its item")
	}
	g.leave(kid("k"), b)
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.keys) != 0 {
		t.Errorf("gate keeps %d quiet keys", len(g.keys))
	}
}

// Updates of one key through one Table run one after another, and each
// starts from what the previous one stored: one read in all, no conflict.
func TestUpdatesOfOneKeyTakeTurns(t *testing.T) {
	var mu sync.Mutex
	stored := map[string]types.AttributeValue{"ISBN": str("1"), "title": str(""), "version": n("1")}
	c := &stubClient{}
	c.onGet = func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		mu.Lock()
		defer mu.Unlock()
		return &dynamodb.GetItemOutput{Item: stored}, nil
	}
	c.onUpd = func(in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		mu.Lock()
		defer mu.Unlock()
		if held := in.ExpressionAttributeValues[":v0"]; held.(*types.AttributeValueMemberN).Value != stored["version"].(*types.AttributeValueMemberN).Value {
			return nil, ccf(stored)
		}
		stored = map[string]types.AttributeValue{"ISBN": str("1"), "title": in.ExpressionAttributeValues[":a1"], "version": in.ExpressionAttributeValues[":v1"]}
		return &dynamodb.UpdateItemOutput{}, nil
	}
	books := newBooks(t, c, WithRetry(RetryPolicy{MaxAttempts: 1}))
	const workers, each = 8, 25
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := books.Update(context.Background(), Book{ISBN: "1"}, func(b Book) (Book, error) {
					b.Title += "x"
					return b, nil
				}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := len(stored["title"].(*types.AttributeValueMemberS).Value); got != workers*each {
		t.Errorf("title has %d x, want %d", got, workers*each)
	}
	if len(c.upds) != workers*each {
		t.Errorf("%d writes for %d updates: some conflicted", len(c.upds), workers*each)
	}
	if len(c.gets) > workers*each {
		t.Errorf("%d reads", len(c.gets))
	}
}

// kid is the keyID of a string hash key.
func kid(s string) keyID { return keyID{hashType: 'S', hash: s} }
