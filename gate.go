package dynamo

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// gate queues the Update calls of one Table on one key, so that goroutines
// of one process take turns instead of failing each other's version checks,
// and hands each the item its predecessor stored, so that it need not read
// it. It is only an optimisation: the version condition still decides, and
// writers in other processes (or other Tables) conflict as usual.
//
// The zero gate is ready to use. Entries live while some call holds or
// waits for them, so the gate holds nothing once a key is quiet.
type gate struct {
	mu   sync.Mutex
	keys map[keyID]*gateEntry // guarded by mu
}

type gateEntry struct {
	turn chan struct{} // capacity 1; holding the turn = having sent into it
	refs int           // calls holding or waiting; guarded by gate.mu
	// last is the item as stored by the previous holder's successful write,
	// nil when unknown. Read and written only while holding the turn.
	last map[string]types.AttributeValue
}

// enter waits for the turn on key, or until ctx is done.
func (g *gate) enter(ctx context.Context, key keyID) (*gateEntry, error) {
	g.mu.Lock()
	if g.keys == nil {
		g.keys = map[keyID]*gateEntry{}
	}
	e := g.keys[key]
	if e == nil {
		e = &gateEntry{turn: make(chan struct{}, 1)}
		g.keys[key] = e
	}
	e.refs++
	g.mu.Unlock()
	select {
	case e.turn <- struct{}{}:
		return e, nil
	case <-ctx.Done():
		g.release(key, e)
		return nil, ctx.Err()
	}
}

// leave gives up the turn taken by enter.
func (g *gate) leave(key keyID, e *gateEntry) {
	<-e.turn
	g.release(key, e)
}

func (g *gate) release(key keyID, e *gateEntry) {
	g.mu.Lock()
	if e.refs--; e.refs == 0 {
		delete(g.keys, key)
	}
	g.mu.Unlock()
}
