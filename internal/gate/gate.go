// Package gate coordinates the Update calls of one Table, key by key: the
// per-key queue, the batch that runs the calls queued behind its lead, the
// wait for released callers (gather, bounded by the write round trip), the
// hand-off to the next batch, and the bounded cache of the items of quiet
// keys. The batch's reads and writes are the root's (Gate.Run); nothing
// here sends a request. K is the item identity, T the value type and O the
// root's write options, which the gate carries for the root, never reads.
package gate

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/plan"
)

// Gate coordinates the Update calls of one Table, key by key. Calls on one
// key form a queue; the call at its head runs a batch: it takes the calls
// queued behind it that can share a write, calls their functions one after
// another — each in its caller's goroutine, each on the item as the
// previous one left it — and writes the result once, advancing the version
// by one per change. A batch of several calls is run by a goroutine of its
// own, so that every caller waits only as long as its own ctx allows; a
// function that has not returned within cutAfter, while changes before it
// wait, is left to the next batch (it is called again there), so that it
// delays only the calls after it, never one whose change was taken. While
// that write is in flight, new calls queue up for the next batch, so a hot
// key gets one write per round trip however many goroutines update it, and
// the outcome is the one running the calls one after another would have.
//
// A batch does not leave the moment the previous one is answered: the
// callers that answer released are then still on their way back (a caller
// looping on Update calls it again microseconds later), and a batch that
// left without them would split the callers into two groups taking turns,
// each write carrying half of them. So the next batch first waits (gather)
// until every caller expected — those queued when the last batch ended, and
// the share of the callers it released that the batch before it saw come
// back (join again within returnWindow: Key.returning) — has queued, at
// most half the Table's recent write round trip (Gate.rtt), and not at all
// when the last batch released one caller and nobody was queued: a caller
// alone on a key never waits. Callers in an Update loop come back within
// microseconds; callers that make one Update and leave (a web request's)
// do not, and are not waited for once a window has seen them not return.
//
// The gate also remembers the item as this Table last stored it (in the
// key's state, kept within a bounded cache when the key goes quiet), so
// that an Update of a key this Table wrote last needs no read. It is only an
// optimisation: every write is conditioned on the stored item it was
// computed from, and writers in other processes (or other Tables) are
// caught by that condition as usual.
//
// The zero Gate is ready to use once Run is set.
type Gate[K comparable, T, O any] struct {
	mu sync.Mutex
	// keys holds the state of every key the gate knows: those with calls
	// inside Update, and the quiet ones whose item is cached (Key.cached,
	// linked in cache), so that an Update of a quiet key costs one lookup
	// when it joins and none when it leaves. Guarded by mu.
	keys  map[K]*Key[K, T, O]
	cache itemCache[K, T, O] // the order and bounds of the quiet keys in keys; guarded by mu
	// rtt is a moving average of how long this Table's Update writes took
	// (0: none measured yet), over the writes timed (TimeWrite); it bounds
	// gather's wait. Guarded by mu.
	rtt time.Duration
	// lone counts the writes of lone callers, one in RTTSample of which
	// is timed (TimeWrite).
	lone atomic.Uint32
	// Run runs the functions of the batch ws (ws[0] leads it) and writes
	// their changes, retrying on conflict, and fills res: the root's
	// Table.runBatch, set once when the Table is made.
	Run func(e *Key[K, T, O], ws []*Waiter[T, O], res []Outcome[T])
	// Clk times gather's wait and the writes (NoteRTT); nil: the real
	// clock. Never the mapper's WithClock, which drives only versions and
	// timestamps: a test's fake clock standing still must not hold a
	// batch. Tests of the gate set it before the first Update.
	Clk clock.Clock
	// NoGather: batches never wait for released callers (gather); set by
	// benchmarks comparing the gate without it, before the first Update.
	NoGather bool
}

// Timing returns the clock the gate times with (Gate.Clk).
func (g *Gate[K, T, O]) Timing() clock.Clock {
	if g.Clk == nil {
		return clock.Real()
	}
	return g.Clk
}

// Key is the state of one key while calls are inside Update, and of a
// quiet key while the cache keeps its item (cached). All fields are
// guarded by Gate.mu, except last, which only the running batch uses.
type Key[K comparable, T, O any] struct {
	key   K
	refs  int             // calls inside Update for this key
	busy  bool            // a batch runs
	queue []*Waiter[T, O] // calls waiting for a batch, oldest first
	// expect is how many callers the next batch waits for (gather): those
	// queued when the last batch ended, plus those it released, at most
	// returning of them once measured. At most 1: no wait.
	expect int
	// handedAt is when the last batch that released several callers, or
	// left others queued, handed the key on; zero once its return window
	// has closed. early counts the joins within the window (returnWindow),
	// of the released callers of that batch. returning of returnedOf is
	// what the last window closed saw, once measured: the share of released
	// callers that come back.
	handedAt              time.Time
	early, released       int
	returning, returnedOf int
	measured              bool
	// full, while a lead gathers, is closed by the join that makes
	// 1+len(queue) reach want.
	full chan struct{}
	want int
	// last is the item as this Table's last write stored it, nil when
	// unknown. Read and written by the running batch only (busy hands it
	// from batch to batch).
	last map[string]types.AttributeValue
	// lastSize is the size of last when known (counted when it was
	// written), 0 when not: the cache counts it then.
	lastSize int
	// lastOwn: last is a map the Table may write the next item into
	// (basis.own).
	lastOwn bool
	// LastVal, when not nil, is &LastRoom, which then holds exactly what
	// decoding last gives (Table.readBack): the next batch hands it to its
	// first function instead of decoding last. Nothing else refers to it:
	// it is handed out once, and forgotten whenever last changes.
	LastVal *T
	// LastRoom holds the value LastVal points to, zero otherwise. Used by
	// the running batch only.
	LastRoom T
	// newer and older link the Key of a quiet key in the gate's cache
	// (itemCache), nil otherwise; cached tells it is there (no call
	// inside Update, no batch running). Guarded by Gate.mu.
	newer, older *Key[K, T, O]
	cached       bool
	// keyMap is the key as the map an Update of it made (set by the first
	// join), which later Updates of a key whose fields tell its identity
	// (Table.fastKeyID: string keys, so the same K is the same map)
	// send again instead of making one: a request's key map is only read
	// (the SDK's, the mapper's), and an error carries its own copy
	// (ConditionError.Key, TxFailure.Key). Guarded by Gate.mu.
	keyMap map[string]types.AttributeValue
	// alone is the room of the outcome of a batch its lead runs alone
	// (Lead): nothing to allocate for it. Used by the running batch only,
	// zero otherwise.
	alone [1]Outcome[T]
}

// Waiter is one Update call as the batch that runs it sees it.
type Waiter[T, O any] struct {
	Ctx context.Context
	Fn  func(T) (T, error)
	Wo  *O // the call's options, only read (the root's noWriteOptions: none given)
	// Key is the call's key map, which the batch it leads sends.
	Key map[string]types.AttributeValue
	// msgs carries the running batch's requests to the caller's goroutine
	// (made by channels when it is first needed):
	// compute (call fn), result (the final outcome) and lead (run the next
	// batch). Capacity 4: the batch never blocks on a caller that stopped
	// listening or is still in a function the batch stopped waiting for (at
	// most two computes, one lead and one result are ever unread).
	msgs chan waiterMsg[T]
	// replies carries what fn returned back to the batch (capacity 1).
	replies chan Computed[T]
	// asked numbers the batch's requests to compute; a reply carries the
	// number of its request, so that the late reply to a request the
	// batch stopped waiting for is told apart. Used by the batch only.
	asked int
	// Inline: the batch is the caller's own, run in its goroutine: its
	// function is called directly.
	Inline bool
	// Share is 0 when the call's options keep its write to itself (the
	// root's coalescable), else the class of the calls it can share a
	// write with: those of the same save behaviour.
	Share uint8
	taken bool // taken from the queue into a batch; guarded by Gate.mu
	left  bool // returned from Update while taken; guarded by Gate.mu
	led   bool // handed the lead, not taken it yet; guarded by Gate.mu
	// batch is the room of a batch that lead runs alone (batchFor):
	// nothing to allocate for it.
	batch [1]*Waiter[T, O]
}

// channels makes w's channels, before w waits for a batch (queued) or
// waits for the batch it leads to run in a goroutine of its own: a call
// that runs its batch alone never needs them.
func (w *Waiter[T, O]) channels() {
	if w.msgs == nil {
		w.msgs, w.replies = make(chan waiterMsg[T], 4), make(chan Computed[T], 1)
	}
}

type msgKind int

const (
	msgCompute msgKind = iota // call fn with cur and reply
	msgResult                 // res is the call's outcome
	msgLead                   // run the next batch
)

type waiterMsg[T any] struct {
	kind msgKind
	cur  T
	seq  int // msgCompute: the request's number (Waiter.asked)
	// prep, for msgCompute, turns what fn returned into the change the
	// batch writes; it runs in the caller's goroutine before the reply.
	prep func(T) Prepared
	res  Outcome[T]
}

// Prepared is a function's result as a change of a batch (the root's
// computeBatch): Boxed and V as the root's changeOf returns them, and Item,
// the change encoded (checkAlone), nil when not needed; Err fails only its
// caller.
type Prepared struct {
	Boxed any
	V     reflect.Value
	Item  map[string]types.AttributeValue
	Err   error
}

// Computed is what a caller's function made of the item it was given.
type Computed[T any] struct {
	Next      T
	Prep      Prepared // what prep made of Next, when it ran (Prepped)
	Prepped   bool
	Err       error
	Panicked  bool
	PV        any  // the panic value
	Withdrawn bool // the caller's ctx ended before fn was called: no change
	Gone      bool // fn called runtime.Goexit: the caller left Update
	Cut       bool // fn did not return within cutAfter: left to the next batch
	started   bool // not an answer: fn is being called now
	seq       int  // the number of the request answered
}

// Outcome is the result of one Update call.
type Outcome[T any] struct {
	Saved    T
	Err      error
	Panicked bool
	PV       any
	Gone     bool // the caller left Update (runtime.Goexit): never ask it again
	// Requeue: the call's function was slow (cut), so neither it nor the
	// calls after it are in the batch's write: they go back to the queue.
	Requeue bool
	// Rides: the call's function returned ErrNoChange after changes of
	// others in the same write: its outcome is that write's.
	Rides bool
	// Ended: the caller's ctx ended while it waited (Err is ctx's error),
	// its change in no write unless Unknown: then a write carrying it may
	// have been applied. The root words the error.
	Ended, Unknown bool
}

// maxBatch bounds the changes of one write.
const maxBatch = 100

// cutAfter is how long a batch that holds changes already waits for the
// next caller's function, once it runs, before it writes without it: the function is
// called again in the next batch (its late answer was computed on an item
// that may not be the stored one by then). Functions are expected to take
// microseconds; this bounds the delay that a slow or blocked one (waiting
// for a lock held by a caller whose change was taken, say) causes to the
// callers before it.
const cutAfter = 50 * time.Millisecond

// Join registers w for key, whose key map is k. It returns the key's state
// and whether w runs a batch now (nobody else does); otherwise w is queued.
func (g *Gate[K, T, O]) Join(key K, k map[string]types.AttributeValue, w *Waiter[T, O]) (*Key[K, T, O], bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.keys == nil {
		g.keys = map[K]*Key[K, T, O]{}
	}
	e := g.keys[key]
	switch {
	case e == nil:
		e = &Key[K, T, O]{key: key}
		g.keys[key] = e
	case e.cached:
		// A quiet key's state comes back from the cache, with its item,
		// the value kept with it, its expect and its key map (forget left
		// the rest as a new Key's).
		g.cache.take(e)
	}
	if e.keyMap == nil {
		e.keyMap = k
	}
	if !e.handedAt.IsZero() {
		g.noteReturn(e)
	}
	e.refs++
	if !e.busy {
		e.busy = true
		w.taken = true
		return e, true
	}
	w.channels()
	e.queue = append(e.queue, w)
	if e.full != nil && 1+len(e.queue) >= e.want {
		close(e.full)
		e.full = nil
	}
	return e, false
}

// noteReturn counts a join within the return window of e's last handOff;
// past it, the window closes. g.mu is held.
func (g *Gate[K, T, O]) noteReturn(e *Key[K, T, O]) {
	if g.Timing().Now().Sub(e.handedAt) <= g.returnWindow() {
		e.early++
		return
	}
	e.closeWindow()
}

// closeWindow ends the return window of e's last handOff: the share of its
// released callers that joined is the share the next batches expect back.
func (e *Key[K, T, O]) closeWindow() {
	if e.released > 0 {
		e.returning, e.returnedOf, e.measured = min(e.early, e.released), e.released, true
	}
	e.handedAt, e.early = time.Time{}, 0
}

// returnWindow is how soon after a batch ends a caller that joins counts as
// one of its callers coming back: an eighth of the round trip, at least
// minReturnWindow. g.mu is held.
func (g *Gate[K, T, O]) returnWindow() time.Duration {
	return max(g.rtt/8, minReturnWindow)
}

// minReturnWindow bounds returnWindow from below: a goroutine on a busy
// machine may take that long to come back.
const minReturnWindow = time.Millisecond

// KeyMap returns the key map kept with key's state (Key.keyMap), in use
// or cached, nil when none.
func (g *Gate[K, T, O]) KeyMap(key K) map[string]types.AttributeValue {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e := g.keys[key]; e != nil {
		return e.keyMap
	}
	return nil
}

// gather is called by lead before it forms its batch: when the last batch
// of the key released several callers (or left others queued), it waits
// until the callers expected have queued (1+len(queue) reaches expect), for at
// most half the Table's recent write round trip, or until lead's ctx ends.
// It returns at once when the key had a single caller, when nothing was
// measured yet, or when lead's options keep its write to itself.
func (g *Gate[K, T, O]) gather(e *Key[K, T, O], lead *Waiter[T, O]) {
	g.mu.Lock()
	want := min(e.expect, maxBatch)
	wait := min(g.rtt/2, maxGather)
	if want <= 1 || 1+len(e.queue) >= want || wait <= 0 || g.NoGather || lead.Share == 0 {
		g.mu.Unlock()
		return
	}
	full := make(chan struct{})
	e.full, e.want = full, want
	g.mu.Unlock()
	timer := g.Timing().NewTimer(wait)
	select {
	case <-full:
	case <-timer.C():
	case <-lead.Ctx.Done():
	}
	timer.Stop()
	g.mu.Lock()
	if e.full == full {
		e.full = nil
	}
	g.mu.Unlock()
}

// maxGather bounds gather's wait, whatever the round trip.
const maxGather = 20 * time.Millisecond

// TimeWrite reports whether the write of a batch of n callers is timed
// (NoteRTT): every shared write is — the writes of the keys whose batches
// gather —, and the first and then one in RTTSample of the writes of a
// lone caller, so that the Updates of keys that each have one caller read
// the clock around few of their writes while the Table's round trip is
// still measured.
func (g *Gate[K, T, O]) TimeWrite(n int) bool {
	return n > 1 || g.lone.Add(1)%RTTSample == 1
}

// RTTSample: one in RTTSample writes of lone callers is timed.
const RTTSample = 16

// NoteRTT adds the duration of one write to the Table's moving average.
func (g *Gate[K, T, O]) NoteRTT(d time.Duration) {
	if d < 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.rtt == 0 {
		g.rtt = d
		return
	}
	g.rtt += (d - g.rtt) / 4
}

// batchFor returns the calls the batch of lead runs: lead, and when its
// options allow, the calls queued behind it with the same save behaviour,
// up to maxBatch, oldest first. Every type's writes are shared, timestamps
// included: the write stamps all its changes with one clock reading.
func (g *Gate[K, T, O]) batchFor(e *Key[K, T, O], lead *Waiter[T, O]) []*Waiter[T, O] {
	g.mu.Lock()
	defer g.mu.Unlock()
	lead.led = false
	ws := append(lead.batch[:0], lead)
	if lead.Share == 0 {
		return ws
	}
	n := 0
	for _, w := range e.queue {
		if len(ws) == maxBatch || w.Share != lead.Share {
			break
		}
		w.taken = true
		ws = append(ws, w)
		n++
	}
	e.queue = e.queue[n:]
	return ws
}

// leaveQueue is called by w when its ctx ends. It takes w out of the
// queue when it is still there (not taken into a batch) and reports whether
// it was; taken, w is marked as left, so that it is never queued again.
// led reports that w was handed the lead instead, which it must take.
func (g *Gate[K, T, O]) leaveQueue(e *Key[K, T, O], w *Waiter[T, O]) (removed, led bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if w.led {
		w.led = false
		return false, true
	}
	if w.taken {
		w.left = true
		return false, false
	}
	for i, q := range e.queue {
		if q == w {
			e.queue = append(e.queue[:i], e.queue[i+1:]...)
			break
		}
	}
	w.taken, w.left = true, true
	return true, false
}

// requeue puts ws, taken into a batch that wrote nothing, back at the head
// of the queue, in order.
func (g *Gate[K, T, O]) requeue(e *Key[K, T, O], ws []*Waiter[T, O]) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var back []*Waiter[T, O]
	for _, w := range ws {
		if !w.left {
			w.taken = false
			back = append(back, w)
		}
	}
	e.queue = append(back, e.queue...)
}

// handOff ends a batch that released released callers (their outcome is
// final and they may call again): the oldest queued call runs the next one,
// or, with none queued, the key is no longer busy. The next batch waits for
// those queued now and as many of the released callers as came back after
// the last batch (expect), and a new return window opens.
func (g *Gate[K, T, O]) handOff(e *Key[K, T, O], released int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !e.handedAt.IsZero() {
		e.closeWindow()
	}
	back := released
	if e.measured {
		// The share seen coming back, rounded up.
		back = (released*e.returning + e.returnedOf - 1) / e.returnedOf
	}
	e.expect = back + len(e.queue)
	if released > 1 || len(e.queue) > 0 {
		e.handedAt, e.early, e.released = g.Timing().Now(), 0, released
	}
	if len(e.queue) == 0 {
		e.busy = false
		if e.refs == 0 {
			// Every caller left while the batch ran (drive): forget the
			// key as the last one out would have.
			g.forget(e.key, e)
		}
		return
	}
	next := e.queue[0]
	e.queue = e.queue[1:]
	next.taken, next.led = true, true
	next.msgs <- waiterMsg[T]{kind: msgLead}
}

// Leave is called once by every call that joined, when it returns. The
// last one out forgets the key, keeping its item in the cache.
func (g *Gate[K, T, O]) Leave(key K, e *Key[K, T, O]) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e.refs--; e.refs == 0 && !e.busy {
		g.forget(key, e)
	}
}

// forget drops the state of key, keeping it in the cache when it holds an
// item. Nobody refers to e any more (no call inside Update, no batch
// running), so the cache may hand it to the next call that joins; what it
// referred to besides the item is dropped, so that a cached key keeps no
// waiter alive. g.mu is held.
func (g *Gate[K, T, O]) forget(key K, e *Key[K, T, O]) {
	e.queue, e.full, e.want = nil, nil, 0
	if e.last == nil || !g.cache.put(e, g.keys) {
		delete(g.keys, key)
	}
}

// Bounds of a Table's cache of items it stored, for Updates of keys that
// are quiet in between: entries, total size, and the size of one item.
const (
	CacheEntries  = 1024
	cacheBytes    = 4 << 20
	cacheItemSize = 64 << 10
)

// itemCache is the bounded LRU order of the quiet keys' states the gate
// keeps with their items (in Gate.keys, marked Key.cached): the Keys
// themselves, linked through their newer and older fields, so that a key
// going quiet and coming back allocates nothing and costs no map
// operation: the gate puts a key's Key here when the last call leaves
// (forget) and takes it back, with the item, its size, the value kept with
// it (lastVal) and expect, when a call joins again. Not safe for
// concurrent use: Gate.mu guards it. The zero itemCache is empty and ready
// to use.
type itemCache[K comparable, T, O any] struct {
	newest, oldest *Key[K, T, O]
	n              int
	bytes          int
}

// take unlinks e, a cached entry, and counts it out: e is in use again.
// Its lastSize is the size the cache counted.
func (c *itemCache[K, T, O]) take(e *Key[K, T, O]) {
	if e.newer != nil {
		e.newer.older = e.older
	} else {
		c.newest = e.older
	}
	if e.older != nil {
		e.older.newer = e.newer
	} else {
		c.oldest = e.newer
	}
	e.newer, e.older, e.cached = nil, nil, false
	c.n--
	c.bytes -= e.lastSize
}

// put caches e, the state of a quiet key holding an item (e.last; its size
// e.lastSize when known, else counted here) and held in keys, evicting the
// least recently stored items beyond the bounds: their states are deleted
// from keys. It reports whether e is kept: items over cacheItemSize are
// not (the caller deletes e from keys). e must not be cached already, and
// nothing else may use it until take returns it.
func (c *itemCache[K, T, O]) put(e *Key[K, T, O], keys map[K]*Key[K, T, O]) bool {
	if e.lastSize <= 0 {
		e.lastSize = av.ItemSize(e.last)
	}
	if e.lastSize > cacheItemSize {
		return false
	}
	e.older, e.newer, e.cached = c.newest, nil, true
	if c.newest != nil {
		c.newest.newer = e
	} else {
		c.oldest = e
	}
	c.newest = e
	c.n++
	c.bytes += e.lastSize
	for c.n > CacheEntries || c.bytes > cacheBytes {
		old := c.oldest
		c.take(old)
		delete(keys, old.key)
	}
	return true
}

// TakeLast returns the item e remembers as stored after its last write
// (nil when none), its size when known (else 0) and the struct decoding it
// gives when known (else nil), and forgets them until a write of the batch
// that takes them succeeds.
func (e *Key[K, T, O]) TakeLast() (*plan.Basis, int, *T) {
	var bs *plan.Basis
	size := 0
	if e.last != nil {
		bs, size = &plan.Basis{Item: e.last, Own: e.lastOwn}, e.lastSize
	}
	val := e.LastVal
	if bs == nil {
		val = nil
	}
	e.Remember(nil, 0, nil, false)
	return bs, size, val
}

// Remember sets what e remembers of the key's stored item (Key.last,
// lastSize, LastVal, lastOwn).
func (e *Key[K, T, O]) Remember(item map[string]types.AttributeValue, size int, val *T, own bool) {
	e.last, e.lastSize, e.LastVal, e.lastOwn = item, size, val, own
}

// KeyState is what State reports of a key's state, for tests.
type KeyState struct {
	ID                   any // the state itself: the same ID is the same state
	Refs, Queued, Expect int
	Busy, Cached         bool
	HoldsQueue           bool                            // Key.queue is not nil
	Gathering            bool                            // a lead waits (Key.full)
	Item                 map[string]types.AttributeValue // Key.last: only read
	Own                  bool                            // Key.lastOwn
}

// State returns the state of key, in use or cached, and whether the gate
// holds one.
func (g *Gate[K, T, O]) State(key K) (KeyState, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.keys[key]
	if e == nil {
		return KeyState{}, false
	}
	return KeyState{ID: e, Refs: e.refs, Queued: len(e.queue), Expect: e.expect, Busy: e.busy, Cached: e.cached,
		HoldsQueue: e.queue != nil, Gathering: e.full != nil, Item: e.last, Own: e.lastOwn}, true
}

// RTT returns the moving average of the writes' round trip (Gate.rtt).
func (g *Gate[K, T, O]) RTT() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.rtt
}
