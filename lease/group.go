package lease

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/internal/ident"
	"github.com/ddbkit/dynamo/internal/telemetry"
)

// Group shares a fixed set of keys among the worker processes that run it:
// each key is held by at most one worker at a time, as a Lease with a
// fencing token, and the keys are spread evenly over the live workers. Make
// one with Client.Group and call Run; see "Groups" in docs/leases.md.
type Group struct {
	c       *Client
	name    string
	keys    []string // sorted, distinct
	keySet  map[string]bool
	workers *dynamo.Table[workerRecord] // the lease table
	rosters *dynamo.Table[rosterRecord] // the lease table

	running atomic.Bool

	mu  sync.Mutex
	cur *member // the incarnation Run runs now; guarded by mu
}

// workerRecord is a group worker's record: its liveness (one write per
// heartbeat interval, whatever the number of keys it holds), the keys it
// holds and the keys it asks others to hand over.
type workerRecord struct {
	Key        string   `dynamo:"key,hash"`
	Owner      string   `dynamo:"owner"`
	Attempt    string   `dynamo:"attempt"`     // the incarnation: random per Run's join
	DurationMS int64    `dynamo:"duration_ms"` // the worker's lease duration
	Held       []string `dynamo:"held,stringset,omitempty"`
	Asks       []string `dynamo:"asks,stringset,omitempty"`
	Ended      bool     `dynamo:"ended"` // left, or declared dead: its keys are free
	Expires    int64    `dynamo:"expires,ttl"`
	Version    int64    `dynamo:"version,version"`
}

// rosterRecord lists a group's workers, by owner name.
type rosterRecord struct {
	Key     string   `dynamo:"key,hash"`
	Members []string `dynamo:"members,stringset,omitempty"`
	Version int64    `dynamo:"version,version"`
}

// groupPrefix starts the keys of a group's roster and worker records. Lease
// keys may not start with a NUL byte, and token records start with
// tokenPrefix, so none of them meet.
const groupPrefix = "\x00group:"

// Group returns the group called name sharing keys among the workers that
// run it (each calls Run). Workers of a group must pass the same keys; a key
// of a group must not be acquired with Acquire or TryAcquire (they refuse a
// key a worker holds), nor belong to two groups. The worker is this
// client's owner (WithOwner: unique among live workers) and uses its lease
// duration, heartbeat and poll intervals, clock skew rate and clock. It
// sends no request.
func (c *Client) Group(name string, keys []string) (*Group, error) {
	switch {
	case name == "":
		return nil, errors.New("lease: Group: empty name: name the work the group shares")
	case !utf8.ValidString(name) || strings.ContainsRune(name, 0):
		return nil, fmt.Errorf("lease: Group: name %q must be valid UTF-8 without NUL bytes", name)
	case len(name)+len(c.o.owner) > 1024:
		return nil, fmt.Errorf("lease: Group: name %q and owner %q are too long together: use at most 1024 bytes", name, c.o.owner)
	case len(keys) == 0:
		return nil, fmt.Errorf("lease: Group %q: no keys: pass the keys the workers share", name)
	}
	g := &Group{c: c, name: name, keySet: make(map[string]bool, len(keys))}
	for _, k := range keys {
		if err := checkKey(k); err != nil {
			return nil, fmt.Errorf("lease: Group %q: %w", name, err)
		}
		if g.keySet[k] {
			return nil, fmt.Errorf("lease: Group %q: key %q given twice: pass each key once", name, k)
		}
		g.keySet[k] = true
		g.keys = append(g.keys, k)
	}
	sort.Strings(g.keys)
	m := c.table.Mapper()
	var err error
	if g.workers, err = dynamo.NewTable[workerRecord](m, c.table.Name()); err != nil {
		return nil, err
	}
	if g.rosters, err = dynamo.NewTable[rosterRecord](m, c.table.Name()); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *Group) rosterKey() string             { return groupPrefix + g.name }
func (g *Group) workerKey(owner string) string { return groupPrefix + g.name + "\x00worker:" + owner }

// Keys returns the keys this worker holds now, sorted: those whose Lease
// has not ended. It is empty when Run is not running.
func (g *Group) Keys() []string {
	g.mu.Lock()
	m := g.cur
	g.mu.Unlock()
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k, l := range m.held {
		if l.Err() == nil {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Run joins the group and runs fn(ctx, l) in a goroutine of its own for
// every key this worker is given, with the key's Lease l, until that lease
// ends — handed over to balance the load, lost, or the group left — which
// cancels ctx (l.Context()); fn's error is logged and the key released.
// Guard fn's writes with the lease (Save, Delete, Lease.WriteTx) and hand
// l.Token() to the systems it writes. A worker writes once per heartbeat
// interval, whatever its number of keys.
//
// Run returns when ctx is done, after leaving the group: it cancels every
// key's ctx and waits for every fn, which must return soon after. It returns
// other errors (no table, access denied; a take refused before sending, as
// on an MRSC table) at once, and ErrClosed after
// Client.Close. One Run per group name and client at a time. See
// docs/leases.md, Running a group.
//
// IAM: dynamodb:GetItem, BatchGetItem, PutItem, UpdateItem, ConditionCheckItem.
func (g *Group) Run(ctx context.Context, fn func(ctx context.Context, l *Lease) error) error {
	if !g.running.CompareAndSwap(false, true) {
		return fmt.Errorf("lease: Group %q: Run is running already: run one per Group", g.name)
	}
	defer g.running.Store(false)
	c := g.c
	if err := c.enter(g.name); err != nil {
		return err
	}
	defer c.exit(g.name)
	for {
		if err := c.checkOpen(); err != nil {
			return err
		}
		m, err := g.join(ctx)
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return nil
			case !transient(err) && !maybeApplied(err):
				return err // no table, access denied, ...
			}
			c.log.Warn(ctx, "joining the group failed; trying again", slog.String("group", g.name), telemetry.Err("err", err))
			if err := c.pause(ctx, g.name, c.o.poll); err != nil {
				return nil
			}
			continue
		}
		g.mu.Lock()
		g.cur = m
		g.mu.Unlock()
		err = m.run(ctx, fn)
		g.mu.Lock()
		g.cur = nil
		g.mu.Unlock()
		if ctx.Err() != nil || errors.Is(err, dynamo.ErrInvalidInput) {
			return err // a refusal (an MRSC table) is the same at every join
		}
		if cerr := c.checkOpen(); cerr != nil {
			return errors.Join(cerr, err)
		}
		c.log.Warn(ctx, "lost the membership of the group; joining again", slog.String("group", g.name), slog.String("reason", lostClass(err)), telemetry.Err("err", err))
	}
}

// enter records that a Run of the group name runs on c, refusing a second:
// two would be two workers of one owner, each writing over the other's
// worker record.
func (c *Client) enter(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.groups[name] {
		return fmt.Errorf("lease: Group %q: another Group of this name runs on this client (owner %s): give it a client with another WithOwner", name, c.o.owner)
	}
	if c.groups == nil {
		c.groups = map[string]bool{}
	}
	c.groups[name] = true
	return nil
}

// exit records that a Run of the group name entered on c has returned.
func (c *Client) exit(name string) {
	c.mu.Lock()
	delete(c.groups, name)
	c.mu.Unlock()
}

// member is one incarnation of this worker in the group, from join to
// leave or loss.
type member struct {
	g       *Group
	attempt string // the incarnation id, in the worker record and the keys it holds

	ctx    context.Context // the membership: cancelled, with the reason, when it ends
	cancel context.CancelCauseFunc

	beatCtx  context.Context // the heartbeat's; cancelled to stop it
	stopBeat context.CancelFunc
	beatDone chan struct{}

	work    sync.WaitGroup // the goroutines running fn and releasing its key (serve)
	fns     sync.WaitGroup // the calls of fn under way
	writeMu sync.Mutex     // serialises writes of the worker record

	// The balancer's own state (its goroutine only).
	watches map[string]watch // per roster worker: the record's state seen and since when
	silence map[string]watch // other things watched for silence (see silent)
	pending map[string]bool  // keys whose take had no clear answer
	known   map[string]bool  // keys whose records may exist: listed by a worker, read or tried (see readKeys)
	floors  map[string]int64 // per key: the least token to issue next
	rounds  int              // rounds run
	due     time.Time        // the earliest watch's patience end seen this round (see wait)
	refused error            // a take refused before sending (ErrInvalidInput: an MRSC table): Run returns it
	// joined is the roster as the join wrote it, read by the first round
	// instead of reading it again (nil after).
	joined *rosterRecord

	mu         sync.Mutex
	rec        workerRecord      // as last written; guarded by mu
	deadline   time.Time         // on the clock: when the membership ends unless extended; guarded by mu
	watchdog   clock.Timer       // guarded by mu
	held       map[string]*Lease // guarded by mu
	leaving    map[string]bool   // keys being handed over; guarded by mu
	unreleased map[string]*Lease // keys let go whose release failed; guarded by mu
	asks       []string          // keys to ask for at the next heartbeat; guarded by mu

	relMu      sync.Mutex   // guards the release queue (see release)
	relQueue   []releaseReq // keys let go, waiting for a batch; guarded by relMu
	relSenders int          // callers of release sending batches; guarded by relMu
}

// watch is what a worker saw of another's record.
type watch struct {
	state string    // attempt and version, "ended", or "missing"
	since time.Time // when state was first seen, on the clock
	ms    int64     // that worker's lease duration
	seen  time.Time // last seen (silence entries unseen for long are dropped)
}

// join writes a new incarnation of this worker's record (over any earlier
// one of the same owner) and adds the owner to the roster. The membership
// runs from before the write of the record that succeeded: its watchdog
// and its heartbeat start from that moment, before the roster is updated,
// so that a slow roster update cannot cost the membership.
func (g *Group) join(ctx context.Context) (*member, error) {
	c := g.c
	clk := c.o.clock
	key := g.workerKey(c.o.owner)
	m := &member{g: g, attempt: ident.RandomHex(8), held: map[string]*Lease{}, leaving: map[string]bool{}, unreleased: map[string]*Lease{},
		watches: map[string]watch{}, silence: map[string]watch{}, pending: map[string]bool{}, known: map[string]bool{}, floors: map[string]int64{}, beatDone: make(chan struct{})}
	rec := workerRecord{Key: key, Owner: c.o.owner, Attempt: m.attempt, DurationMS: durationMS(c.o.duration)}
	// The record is written over any earlier one of the owner, under the
	// version that one has: first as if there were none (a new owner's
	// join is one write), then under the version its conflict carries.
	var saved workerRecord
	var sentAt time.Time
	var err error
	for try := 0; ; try++ {
		rec.Expires = clk.Now().Add(c.o.ttl).Unix()
		sentAt = clk.Now()
		saved, err = g.workers.Save(ctx, rec, dynamo.WithSaveBehavior(dynamo.SavePut))
		if err == nil || !errors.Is(err, dynamo.ErrVersionConflict) || try >= 3 {
			break
		}
		old, cerr := g.workers.Current(err)
		if cerr != nil {
			if old, cerr = g.workers.Load(ctx, workerRecord{Key: key}, dynamo.ConsistentRead()); cerr != nil && !errors.Is(cerr, dynamo.ErrNotFound) {
				break
			}
		}
		rec.Version = old.Version
	}
	if err != nil {
		return nil, fmt.Errorf("lease: group %q: join: %w", g.name, err)
	}
	m.ctx, m.cancel = context.WithCancelCause(context.Background())
	m.beatCtx, m.stopBeat = context.WithCancel(m.ctx)
	m.mu.Lock()
	m.rec = saved
	m.deadline = sentAt.Add(c.o.duration)
	m.arm()
	m.mu.Unlock()
	go m.heartbeat()
	r, err := g.roster(ctx, c.o.owner, nil)
	if err != nil {
		// No key is held yet: stop the incarnation; its record, left
		// without heartbeats, is ended by others or written over by the
		// next join.
		m.stopBeat()
		<-m.beatDone
		m.mu.Lock()
		m.watchdog.Stop()
		m.mu.Unlock()
		m.cancel(err)
		return nil, err
	}
	m.joined = &r
	c.log.Info(ctx, "joined the group", slog.String("group", g.name), telemetry.ID("incarnation", m.attempt))
	return m, nil
}

// roster adds add (when not "") to the group's roster and removes drop,
// and returns the roster as written (or read, when it had nothing to
// change).
func (g *Group) roster(ctx context.Context, add string, drop []string) (rosterRecord, error) {
	r, err := g.rosters.Update(ctx, rosterRecord{Key: g.rosterKey()}, func(r rosterRecord) (rosterRecord, error) {
		n := len(r.Members)
		r.Members = slices.DeleteFunc(slices.Clone(r.Members), func(o string) bool { return slices.Contains(drop, o) })
		changed := len(r.Members) != n
		if add != "" && !slices.Contains(r.Members, add) {
			r.Members = append(r.Members, add)
			changed = true
		}
		if !changed {
			return r, dynamo.ErrNoChange
		}
		return r, nil
	})
	if err != nil {
		return rosterRecord{}, fmt.Errorf("lease: group %q: roster: %w", g.name, err)
	}
	return r, nil
}

// arm (re)starts the watchdog that ends the membership at its deadline;
// m.mu is held.
func (m *member) arm() {
	clk := m.g.c.o.clock
	if m.watchdog != nil {
		m.watchdog.Stop()
	}
	m.watchdog = clk.AfterFunc(m.deadline.Sub(clk.Now()), func() {
		m.end(fmt.Errorf("%w: worker %s of group %q was not extended within its %v: others may take its keys",
			ErrLost, m.g.c.o.owner, m.g.name, m.g.c.o.duration))
	})
}

// end ends the membership, and with it every key's lease, for reason.
func (m *member) end(reason error) {
	if m.ctx.Err() != nil {
		return
	}
	m.cancel(reason)
	m.mu.Lock()
	if m.watchdog != nil {
		m.watchdog.Stop()
	}
	for _, l := range m.held {
		l.end(reason) // ended with m.ctx: counts it out of ddbkit.lease.held now, not once fn returns
	}
	m.mu.Unlock()
	if !errors.Is(reason, ErrReleased) {
		m.g.c.log.Warn(context.Background(), "group membership lost", slog.String("group", m.g.name), slog.String("reason", lostClass(reason)), telemetry.Err("err", reason))
	}
}

// run runs the incarnation: its heartbeat, and a balancing round every poll
// interval, until ctx is done (then it leaves) or the membership ends.
func (m *member) run(ctx context.Context, fn func(context.Context, *Lease) error) error {
	clk := m.g.c.o.clock
	for {
		if m.g.c.checkOpen() != nil {
			return m.leave() // Client.Close: leave as when ctx ends
		}
		if m.round(ctx, fn) && ctx.Err() == nil && m.ctx.Err() == nil && m.refused == nil {
			continue // keys left to take: at once
		}
		if m.refused != nil {
			return errors.Join(m.refused, m.leave())
		}
		t := clk.NewTimer(m.wait())
		select {
		case <-ctx.Done():
			t.Stop()
			return m.leave()
		case <-m.ctx.Done():
			t.Stop()
			m.stopBeat()
			<-m.beatDone
			m.work.Wait()
			return context.Cause(m.ctx)
		case <-t.C():
		}
	}
}

// heartbeat writes the worker record every heartbeat interval, each beat
// timed from before the write that last extended the membership (the
// first: from before the join's write), as the deadline is.
func (m *member) heartbeat() {
	defer close(m.beatDone)
	beats(m.beatCtx, m.g.c.o, m.nextBeat, m.extend, m.end, func(err error) {
		m.g.c.log.Warn(m.beatCtx, "group heartbeat failed", slog.String("group", m.g.name), telemetry.Err("err", err))
	})
}

// nextBeat is the wait until the next heartbeat: a heartbeat interval from
// before the write that set the deadline, at once when that has passed.
func (m *member) nextBeat() time.Duration {
	o := m.g.c.o
	m.mu.Lock()
	at := m.deadline.Add(o.heartbeat - o.duration)
	m.mu.Unlock()
	return max(at.Sub(o.clock.Now()), 0)
}

// extend writes the worker record again — the keys held and asked for —
// on condition that it is the version last written, and moves the
// deadline to the moment before sending plus the lease duration.
func (m *member) extend() error {
	g, o := m.g, m.g.c.o
	m.writeMu.Lock() // the heartbeat and publish
	defer m.writeMu.Unlock()
	m.mu.Lock()
	next := m.rec
	next.Held = m.heldLocked()
	next.Asks = slices.Clone(m.asks)
	m.mu.Unlock()
	next.Expires = o.clock.Now().Add(o.ttl).Unix()
	sentAt := o.clock.Now()
	// Bounded by the membership, not by the heartbeat's stop: a write
	// stopped half-way may have been applied, leaving m.rec behind.
	saved, err := g.workers.Save(m.ctx, next, dynamo.WithSaveBehavior(dynamo.SavePut))
	if err != nil {
		if !errors.Is(err, dynamo.ErrVersionConflict) {
			return err
		}
		cur, derr := g.workers.Current(err)
		if derr == nil && cur.Attempt == m.attempt && !cur.Ended {
			// An earlier heartbeat of ours landed although its call failed:
			// carry on from its version; the deadline stays.
			m.mu.Lock()
			m.rec = cur
			m.mu.Unlock()
			return fmt.Errorf("lease: group %q: heartbeat found its own earlier write (version %d); extending again", g.name, cur.Version)
		}
		return fmt.Errorf("%w: worker %s of group %q: its record was ended or replaced by another", ErrLost, o.owner, g.name)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ctx.Err() != nil {
		return nil
	}
	m.rec = saved
	m.deadline = sentAt.Add(o.duration)
	m.arm()
	return nil
}

// heldLocked returns the keys held, sorted; m.mu is held.
func (m *member) heldLocked() []string {
	out := make([]string, 0, len(m.held))
	for k := range m.held {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// view is one round's reading of the group: the roster's workers' records.
type groupView struct {
	workers map[string]workerRecord // by owner: the records found
	live    []string                // owners of live workers, this one included, sorted
	holder  map[string]string       // key → the live owner whose record lists it
}

// alive records the worker w of owner as live, holding the keys it lists.
func (v *groupView) alive(owner string, w workerRecord) {
	v.live = append(v.live, owner)
	for _, k := range w.Held {
		v.holder[k] = owner
	}
}

// look reads the roster and its workers' records and updates the watches.
func (m *member) look(ctx context.Context) (groupView, error) {
	g, c := m.g, m.g.c
	me := c.o.owner
	var r rosterRecord
	if m.joined != nil {
		// The first round: the roster as the join wrote it, a moment ago.
		r, m.joined = *m.joined, nil
	} else {
		var err error
		r, err = g.rosters.Load(ctx, rosterRecord{Key: g.rosterKey()}, dynamo.ConsistentRead())
		if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
			return groupView{}, err
		}
	}
	keys, recs, found, err := m.readOthers(ctx, r.Members)
	if err != nil {
		return groupView{}, err
	}
	v := groupView{workers: map[string]workerRecord{}, holder: map[string]string{}}
	now := c.o.clock.Now()
	var drop []string
	for i, k := range keys {
		owner := strings.TrimPrefix(k.Key, g.workerKey(""))
		var w workerRecord
		if found[i] {
			w = recs[i]
			for _, k := range w.Held {
				m.known[k] = true
			}
		}
		if m.judge(ctx, &v, owner, w, found[i], now) {
			drop = append(drop, owner)
		}
	}
	m.forget(r.Members, now)
	if err := m.tidyRoster(ctx, r.Members, drop); err != nil {
		return groupView{}, err
	}
	v.live = append(v.live, me)
	sort.Strings(v.live)
	return v, nil
}

// readOthers reads the records of the roster's members other than this
// worker: found[i] says whether the record of keys[i] exists, recs[i] is it.
func (m *member) readOthers(ctx context.Context, members []string) (keys, recs []workerRecord, found []bool, err error) {
	g := m.g
	for _, o := range members {
		if o != g.c.o.owner {
			keys = append(keys, workerRecord{Key: g.workerKey(o)})
		}
	}
	if len(keys) > 0 {
		// In requests of up to dynamo.MaxBatchGetKeys records.
		if recs, found, err = g.workers.BatchLoadIndexed(ctx, keys, dynamo.ConsistentRead()); err != nil {
			return nil, nil, nil, err
		}
	}
	return keys, recs, found, nil
}

// judge updates the watch of owner's worker from its record w (found says
// whether there is one) and adds it to v: its record, and whether it is
// live. It reports whether the worker is to be dropped from the roster:
// ended, missing for long, or silent for its duration × skew rate (its
// record is then marked ended).
func (m *member) judge(ctx context.Context, v *groupView, owner string, w workerRecord, found bool, now time.Time) (drop bool) {
	c := m.g.c
	state, ms := "missing", int64(0)
	if found {
		v.workers[owner] = w
		state, ms = w.Attempt+" v"+fmt.Sprint(w.Version), w.DurationMS
		if w.Ended {
			state = "ended"
		}
	}
	if wa, ok := m.watches[owner]; !ok || wa.state != state {
		m.watches[owner] = watch{state: state, since: now, ms: ms}
	}
	wa := m.watches[owner]
	if state != "ended" {
		m.dueAt(wa.since.Add(c.patienceFor(wa.ms)))
	}
	switch {
	case state == "ended" || (state == "missing" && now.Sub(wa.since) >= c.patienceFor(0)):
		return true
	case state != "missing" && now.Sub(wa.since) >= c.patienceFor(wa.ms):
		// Silent for its duration × skew rate: it has given up. Say so
		// in its record, on condition that it is the version watched,
		// so that a heartbeat it sends after all fails.
		if !m.endSilent(ctx, w) {
			v.alive(owner, w) // it wrote again: alive after all
			return false
		}
		w.Ended = true
		w.Version++
		v.workers[owner] = w
		m.watches[owner] = watch{state: "ended", since: now}
		return true
	case state != "missing":
		v.alive(owner, w)
	}
	return false
}

// forget drops the watches of workers no longer in the roster (members),
// and the silence watches unseen for long.
func (m *member) forget(members []string, now time.Time) {
	for o := range m.watches {
		if !slices.Contains(members, o) {
			delete(m.watches, o)
		}
	}
	for id, wa := range m.silence {
		if now.Sub(wa.seen) > 2*m.g.c.patienceFor(wa.ms) {
			delete(m.silence, id) // a wait that starts again is only longer
		}
	}
}

// tidyRoster removes the workers of drop from the roster (a failure is
// logged: the next round tries again) and adds this worker if members
// lacks it.
func (m *member) tidyRoster(ctx context.Context, members, drop []string) error {
	g, c := m.g, m.g.c
	if len(drop) > 0 {
		if _, err := g.roster(ctx, "", drop); err != nil {
			c.log.Warn(ctx, "removing ended workers from the roster failed", slog.String("group", g.name), telemetry.Err("err", err))
		}
	}
	if !slices.Contains(members, c.o.owner) {
		_, err := g.roster(ctx, c.o.owner, nil)
		return err
	}
	return nil
}

// count returns how many keys owner holds per the view; for this worker,
// the keys it holds and is not handing over.
func (m *member) count(v groupView, owner string) int {
	if owner == m.g.c.o.owner {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.held) - len(m.leaving)
	}
	return len(v.workers[owner].Held)
}

// round is one balancing round: read the group, hand over what others ask
// for and this worker can spare, take free keys up to its share, and
// choose what to ask for.
//
// It reports whether it left keys to take for a round run at once.
func (m *member) round(ctx context.Context, fn func(context.Context, *Lease) error) (more bool) {
	g, c := m.g, m.g.c
	if m.ctx.Err() != nil {
		return false
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(m.ctx, cancel)
	defer stop()
	m.releaseAgain(rctx)
	m.due = time.Time{}
	v, err := m.look(rctx)
	if err != nil {
		c.log.Warn(ctx, "reading the group failed", slog.String("group", g.name), telemetry.Err("err", err))
		return false
	}
	m.grant(v)
	n, total := len(v.live), len(g.keys)
	upper := (total + n - 1) / n
	if m.rounds > 0 || n == 1 {
		// Not at the first round, unless alone: workers starting
		// together see each other before taking free keys, rather than
		// one taking them all and handing most of them over. A worker
		// that finds no other on the roster after its own join takes
		// them at once: one joining after this read sees it, and asks.
		more = m.takeFree(rctx, v, upper, fn)
	}
	m.rounds++
	m.plan(v, upper)
	m.publish()
	m.refreshKeys(rctx)
	return more
}

// refreshKeys moves on the expiry (WithTTL) of the records of the keys
// held whose expiry is less than half the TTL away: a key record has no
// heartbeat of its own, and TTL must not remove the record of a key held
// for long (its guarded writes would then fail). One conditional write per
// key and half TTL; it stops after a poll interval, leaving the rest to
// the next rounds, and a failed write is tried again at the next round.
func (m *member) refreshKeys(ctx context.Context) {
	c := m.g.c
	clk := c.o.clock
	start := clk.Now()
	m.mu.Lock()
	ls := slices.Collect(maps.Values(m.held))
	m.mu.Unlock()
	for _, l := range ls {
		if ctx.Err() != nil || clk.Now().Sub(start) >= c.o.poll {
			return
		}
		l.mu.Lock()
		next := l.rec
		l.mu.Unlock()
		now := clk.Now()
		if l.Err() != nil || time.Unix(next.Expires, 0).Sub(now) > c.o.ttl/2 {
			continue
		}
		next.Expires = now.Add(c.o.ttl).Unix()
		saved, err := c.table.Save(ctx, next, dynamo.If(ownedBy(c.o.owner, l.token, l.attempt)))
		if err != nil {
			if cur, ok := l.ownRecord(err); ok {
				saved = cur // a write of ours landed unanswered: the next round goes on from it
			} else {
				c.log.Warn(ctx, "moving a held key's record expiry on failed; trying again at the next round", slog.String("group", m.g.name), telemetry.ID("key", l.key), telemetry.Err("err", err))
				continue
			}
		}
		l.mu.Lock()
		if l.ctx.Err() == nil {
			l.rec = saved
		}
		l.mu.Unlock()
	}
}

// publish writes the worker record at once when the keys held or asked
// for changed since it was last written, so that others see moves at their
// next round rather than after a heartbeat interval. A fleet at rest
// changes nothing: only heartbeats write.
func (m *member) publish() {
	m.mu.Lock()
	same := slices.Equal(m.heldLocked(), m.rec.Held) && slices.Equal(m.asks, m.rec.Asks)
	m.mu.Unlock()
	if same || m.ctx.Err() != nil {
		return
	}
	switch err := m.extend(); {
	case errors.Is(err, ErrLost):
		m.end(err)
	case err != nil:
		m.g.c.log.Warn(context.Background(), "writing the worker record failed", slog.String("group", m.g.name), telemetry.Err("err", err))
	}
}

// releaseAgain releases the keys whose release failed when they were let
// go, in batches (Client.releaseMany).
func (m *member) releaseAgain(ctx context.Context) {
	m.mu.Lock()
	ls := slices.Collect(maps.Values(m.unreleased))
	m.mu.Unlock()
	for _, c := range chunks(len(ls), releasesPerTx) {
		errs := m.g.c.releaseMany(ctx, ls[c[0]:c[1]])
		m.mu.Lock()
		for i, l := range ls[c[0]:c[1]] {
			if errs[i] == nil {
				delete(m.unreleased, l.key)
			}
		}
		m.mu.Unlock()
	}
}

// grant hands over keys others ask for, while this worker keeps at least
// one key more than the asker would have: the holder decides, so that
// askers that ask at once do not strip it below its share.
func (m *member) grant(v groupView) {
	me := m.g.c.o.owner
	m.mu.Lock()
	defer m.mu.Unlock()
	mine := len(m.held) - len(m.leaving)
	type asker struct {
		owner string
		have  int
		keys  []string
	}
	var askers []*asker
	for _, o := range v.live {
		if o == me {
			continue
		}
		a := &asker{owner: o, have: len(v.workers[o].Held)}
		for _, k := range v.workers[o].Asks {
			if _, ok := m.held[k]; ok && !m.leaving[k] {
				a.keys = append(a.keys, k)
			}
		}
		if len(a.keys) > 0 {
			askers = append(askers, a)
		}
	}
	for granted := true; granted; {
		granted = false
		for _, a := range askers {
			if len(a.keys) == 0 || mine < a.have+2 {
				continue
			}
			k := a.keys[0]
			a.keys = a.keys[1:]
			if m.leaving[k] {
				continue
			}
			m.leaving[k] = true
			mine--
			a.have++
			granted = true
			m.g.c.log.Debug(context.Background(), "handing a key over", slog.String("group", m.g.name), telemetry.ID("key", k), telemetry.ID("to", a.owner))
			m.held[k].end(fmt.Errorf("%w: %q handed over to %s, which asked for it", ErrReleased, k, a.owner))
		}
	}
}

// takeFree takes keys no live worker lists, up to upper keys in all: keys
// never taken or released, and keys of workers that ended or went silent;
// and keys it asked for that their holder has released since its last
// heartbeat.
//
// It reports whether it stopped before trying every key worth trying, to
// run a round again without waiting.
func (m *member) takeFree(ctx context.Context, v groupView, upper int, fn func(context.Context, *Lease) error) (more bool) {
	g := m.g
	me := g.c.o.owner
	want := upper - m.count(v, me)
	if want <= 0 && len(m.pending) == 0 {
		return false
	}
	m.mu.Lock()
	asked := make(map[string]bool, len(m.asks))
	for _, k := range m.asks {
		asked[k] = true // its holder may have released it since its last heartbeat
	}
	var cands []string
	for _, k := range g.keys {
		_, held := m.held[k]
		_, letGo := m.unreleased[k] // its release is retried, not undone
		if !held && !letGo && (v.holder[k] == "" || m.pending[k] || asked[k]) {
			cands = append(cands, k)
		}
	}
	m.mu.Unlock()
	// Start at a place of this worker's own, so that workers taking at
	// once try different keys: as far into the candidates as this worker
	// is into the live workers, so that a fleet starting together, seeing
	// the same candidates, takes disjoint runs of them.
	if len(cands) > 0 {
		rank, _ := slices.BinarySearch(v.live, me)
		i := rank * len(cands) / len(v.live)
		cands = append(cands[i:], cands[:i]...)
	}
	others := map[string]*workerRecord{} // worker records read this round, by owner
	clk := g.c.o.clock
	start := clk.Now()
	for len(cands) > 0 && ctx.Err() == nil {
		if clk.Now().Sub(start) >= g.c.o.poll {
			return true // the rest at a next round, at once, after handing over what others ask for
		}
		// This pass: the pending keys (reading one tells whether our take
		// landed) and as many others as this worker still wants, up to
		// takesAtOnce, tried at once; a key that proves taken leaves its
		// place to the next pass.
		var batch, rest []string
		wanted := 0
		for _, k := range cands {
			switch {
			case len(batch) >= takesAtOnce:
				rest = append(rest, k)
			case m.pending[k]:
				batch = append(batch, k)
			case wanted < want:
				batch = append(batch, k)
				wanted++
			default:
				rest = append(rest, k)
			}
		}
		if len(batch) == 0 {
			break
		}
		cands = rest
		if want -= m.takeSome(ctx, v, others, batch, fn); want <= 0 {
			// Only the pending keys left to try.
			cands = slices.DeleteFunc(cands, func(k string) bool { return !m.pending[k] })
		} else if len(cands) > 0 {
			// The rest at a next round, at once: its view shows the
			// workers that joined meanwhile (a worker that started alone
			// takes a pass's worth, not every key) and the keys others took.
			return true
		}
	}
	return more
}

// takesAtOnce bounds the keys a round's pass reads and takes at once: as
// many as txAtOnce transactions carry.
const takesAtOnce = takesPerTx * txAtOnce

// inParallel runs f(0) … f(n-1) in goroutines of their own and returns once
// all have returned.
func inParallel(n int, f func(i int)) {
	if n == 1 {
		f(0)
		return
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i)
		}()
	}
	wg.Wait()
}

// takeSome takes the keys it can of keys, which are free — missing or
// released, or held by a worker incarnation that ended or is silent — or
// already its own (a take whose answer was lost), and returns how many
// this worker holds now of them. The keys' records are read at once (in
// batches: Client.readAll), and the free ones written in transactions of
// up to takesPerTx keys, several at once (Client.writeMany): each key's
// take is conditioned as a single one is (see Client.write), so a key goes
// to at most one worker whatever the others do meanwhile; only the
// balancer's own state is touched here alone, between the two.
func (m *member) takeSome(ctx context.Context, v groupView, others map[string]*workerRecord, keys []string, fn func(context.Context, *Lease) error) (got int) {
	g, c := m.g, m.g.c
	views, err := m.readKeys(ctx, keys)
	if err != nil {
		c.log.Warn(ctx, "reading the keys failed", slog.String("group", g.name), slog.Int("keys", len(keys)), telemetry.Err("err", err))
		return 0 // the pending ones stay pending
	}
	for _, k := range keys {
		m.known[k] = true // read, or tried: a take that fails names what is there
	}
	var free []int // indexes into keys
	for i, key := range keys {
		delete(m.pending, key)
		switch ours, ok := m.isFree(ctx, v, others, key, views[i]); {
		case ours:
			// Our own take, whose answer was lost, landed.
			m.hold(*views[i].rec, c.o.clock.Now(), fn)
			got++
		case ok:
			free = append(free, i)
		}
	}
	if len(free) == 0 {
		return got
	}
	fkeys := make([]string, len(free))
	fviews := make([]view, len(free))
	floors := make([]int64, len(free))
	m.mu.Lock()
	for j, i := range free {
		fkeys[j], fviews[j], floors[j] = keys[i], views[i], m.floors[keys[i]]
	}
	m.mu.Unlock()
	results := make([]taken, len(free))
	inBatches(len(free), takesPerTx, txAtOnce, func(lo, hi int) {
		copy(results[lo:hi], c.writeMany(ctx, fkeys[lo:hi], fviews[lo:hi], floors[lo:hi], g.claim(m.attempt)))
		for _, r := range results[lo:hi] {
			if r.err == nil {
				m.hold(r.rec, r.sentAt, fn) // at once, not after the other batches
			}
		}
	})
	var failed []error
	for j, i := range free {
		key, r := keys[i], results[j]
		if r.least > 0 {
			m.floors[key] = r.least
		}
		switch err := r.err; {
		case err == nil:
			delete(m.floors, key)
			got++
		case errors.Is(err, errClaimRefused):
			m.end(fmt.Errorf("%w: worker %s of group %q: its record was ended by others", ErrLost, c.o.owner, g.name))
		case r.p != nil:
			m.pending[key] = true // the next round's read tells
		case errors.Is(err, dynamo.ErrInvalidInput):
			m.refused = err // no round would take it: Run leaves and returns it
		case !errors.Is(err, errRace):
			failed = append(failed, err)
		}
	}
	if len(failed) > 0 {
		// One line per round, not per key: a transaction fails for all its keys.
		c.log.Warn(ctx, "taking keys failed", slog.String("group", g.name), slog.Int("keys", len(failed)), telemetry.Err("err", failed[0]))
	}
	return got
}

// claim is what a take by this client's worker incarnation attempt adds to
// its transaction: the check that its worker record is still that live
// incarnation. One per transaction: transactions sent at once share none.
func (g *Group) claim(attempt string) *claim {
	check := g.workers.TxCheck(workerRecord{Key: g.workerKey(g.c.o.owner)},
		dynamo.WithSaveBehavior(dynamo.SaveClobber),
		dynamo.If(expression.And(
			expression.Name("attempt").Equal(expression.Value(attempt)),
			expression.Name("ended").Equal(expression.Value(false)))))
	return &claim{group: g.name, worker: attempt, check: check}
}

// readKeys returns the views of keys: read (Client.readAll) for the keys
// this incarnation has known to have records — listed by a worker, read or
// tried before — and pending ones; for the others, as if missing with no
// token record, which is what a fleet's first takes find. A take of such a
// key is conditioned on both records being missing, so that one that is
// there after all cancels it, and the next pass reads it.
func (m *member) readKeys(ctx context.Context, keys []string) ([]view, error) {
	var read []string
	var at []int
	for i, k := range keys {
		if m.known[k] || m.pending[k] {
			read, at = append(read, k), append(at, i)
		}
	}
	views := make([]view, len(keys))
	if len(read) == 0 {
		return views, nil
	}
	got, err := m.g.c.readAll(ctx, read)
	if err != nil {
		return nil, err
	}
	for j, i := range at {
		views[i] = got[j]
	}
	return views, nil
}

// isFree reports whether key, whose records read kv, is this worker's
// already (ours: a take of its own whose answer was lost landed), or free
// to take (ok): missing or released, or held by a worker incarnation that
// ended or is silent.
func (m *member) isFree(ctx context.Context, v groupView, others map[string]*workerRecord, key string, kv view) (ours, ok bool) {
	g, c := m.g, m.g.c
	switch r := kv.rec; {
	case r == nil:
		// Deleted: as for a single lease, free once released, or once its
		// token record has not changed for that holder's duration × skew.
		return false, kv.tok == nil || kv.tok.Released || m.silent("key "+key, kv.incarnation(), kv.tok.DurationMS)
	case r.Released:
		return false, true
	case r.Group != g.name:
		// A single lease, or another group's: not this group's to take.
		if r.Group == "" && !r.Released {
			c.log.Debug(ctx, "a key of the group is held by a single lease", slog.String("group", g.name), telemetry.ID("key", key), telemetry.ID("holder", r.Owner))
		}
		return false, false
	case r.Worker == m.attempt:
		return true, false
	default:
		return false, !m.alive(ctx, v, others, r.Owner, r.Worker, r.DurationMS)
	}
}

// alive reports whether the worker owner's incarnation inc may still be
// running. It may not when its record says ended; when its record is
// missing or of another incarnation and has been so for the holder's
// duration (ms) × skew rate on this worker's clock; or when its record has
// not changed for its duration × skew rate, once this worker has marked it
// ended (so that a heartbeat it sends after all fails). Records of workers
// not on the roster are read here, once per round (others).
func (m *member) alive(ctx context.Context, v groupView, others map[string]*workerRecord, owner, inc string, ms int64) bool {
	g, c := m.g, m.g.c
	w, ok := v.workers[owner]
	inRoster := ok
	if !ok && owner != c.o.owner {
		p, read := others[owner]
		if !read {
			r, err := g.workers.Load(ctx, workerRecord{Key: g.workerKey(owner)}, dynamo.ConsistentRead())
			switch {
			case err == nil:
				p = &r
			case !errors.Is(err, dynamo.ErrNotFound):
				return true // cannot tell: wait
			}
			others[owner] = p
		}
		if p != nil {
			w, ok = *p, true
		}
	}
	if !ok || w.Attempt != inc {
		return !m.silent("gone "+owner+" "+inc, "gone", ms)
	}
	switch {
	case w.Ended:
		return false
	case inRoster:
		return true // look ends silent workers of the roster
	case m.silent("worker "+owner, w.Attempt+" v"+fmt.Sprint(w.Version), w.DurationMS):
		return !m.endSilent(ctx, w)
	}
	return true
}

// silent reports whether the thing id names has been in state for ms
// milliseconds (the holder's lease duration) × the skew rate, on this
// worker's clock, since this worker first saw it so.
func (m *member) silent(id, state string, ms int64) bool {
	now := m.g.c.o.clock.Now()
	wa, ok := m.silence[id]
	if !ok || wa.state != state {
		wa = watch{state: state, since: now, ms: ms}
	}
	wa.seen = now
	m.silence[id] = wa
	m.dueAt(wa.since.Add(m.g.c.patienceFor(ms)))
	return now.Sub(wa.since) >= m.g.c.patienceFor(ms)
}

// dueAt notes that a watch's patience ends at t: the next round runs then,
// if sooner than a poll interval away, so that a silent worker's keys move
// as soon as its silence is long enough rather than up to a poll later.
func (m *member) dueAt(t time.Time) {
	if m.due.IsZero() || t.Before(m.due) {
		m.due = t
	}
}

// wait is how long run waits before the next round: a poll interval, or
// less when a watch's patience ends sooner (a moment after it, so that
// the round finds it over). A patience over already was acted on by the
// round that saw it: the next round waits a poll interval.
func (m *member) wait() time.Duration {
	poll := m.g.c.o.poll
	d := m.due.Sub(m.g.c.o.clock.Now())
	if m.due.IsZero() || d <= 0 {
		return poll
	}
	return min(poll, d+time.Millisecond)
}

// endSilent marks the worker record w ended, on condition that it is still
// the version watched, and reports whether it is ended now (by this write,
// or by another worker's a moment before).
func (m *member) endSilent(ctx context.Context, w workerRecord) bool {
	g, c := m.g, m.g.c
	w.Ended = true
	if _, err := g.workers.Save(ctx, w, dynamo.WithSaveBehavior(dynamo.SavePut)); err != nil {
		if cur, cerr := g.workers.Current(err); cerr == nil && cur.Attempt == w.Attempt && cur.Ended {
			return true // another worker, whose patience ran out too, marked it first
		}
		if !errors.Is(err, dynamo.ErrVersionConflict) {
			c.log.Warn(ctx, "marking a silent worker ended failed", slog.String("group", g.name), telemetry.ID("worker", w.Owner), telemetry.Err("err", err))
		}
		return false
	}
	c.log.Info(ctx, "declared a silent worker ended", slog.String("group", g.name), telemetry.ID("worker", w.Owner), telemetry.ID("incarnation", w.Attempt))
	return true
}

// hold makes a Lease of rec, which this worker wrote at sentAt, and runs fn
// on it. It may be called from several goroutines of a round at once.
func (m *member) hold(rec record, sentAt time.Time, fn func(context.Context, *Lease) error) {
	l := newGroupLease(m.g.c, rec, sentAt, m.ctx)
	m.mu.Lock()
	m.held[rec.Key] = l
	m.mu.Unlock()
	m.g.c.log.Debug(context.Background(), "took a key", slog.String("group", m.g.name), telemetry.ID("key", rec.Key), slog.Int64("token", rec.Token))
	m.work.Add(1)
	m.fns.Add(1)
	go m.serve(l, fn)
}

// serve runs fn on l, then — once l has ended — releases l's record.
func (m *member) serve(l *Lease, fn func(context.Context, *Lease) error) {
	defer m.work.Done()
	c := m.g.c
	err := fn(l.Context(), l)
	m.fns.Done()
	if err != nil && l.Err() == nil {
		c.log.Warn(context.Background(), "the work on a key failed; releasing it", slog.String("group", m.g.name), telemetry.ID("key", l.key), telemetry.Err("err", err))
		l.end(fmt.Errorf("%w: %q: the work on it returned: %w", ErrReleased, l.key, err))
	}
	<-l.Done()
	err = m.release(l) // batched with the other keys let go meanwhile
	m.mu.Lock()
	if m.held[l.key] == l {
		delete(m.held, l.key)
		delete(m.leaving, l.key)
	}
	if err != nil {
		// The record still names this worker, which others leave alone while
		// it lives: release it again at the next rounds.
		c.log.Warn(context.Background(), "releasing a key failed; trying again at the next round", slog.String("group", m.g.name), telemetry.ID("key", l.key), telemetry.Err("err", err))
		m.unreleased[l.key] = l
	}
	m.mu.Unlock()
}

// plan chooses the keys to ask for (written by publish): while a live
// worker holds at least two keys more than this one, one of its keys, up
// to upper keys in all. Keys asked for before, which their holders may be
// handing over, are kept and count as held, so that asks stay put while
// holders' lists change. Keys no live worker lists are taken, not asked
// for: it asks only for the part of its share they cannot fill, so that a
// fleet starting together does not hand over what it could take.
func (m *member) plan(v groupView, upper int) {
	me := m.g.c.o.owner
	mine := m.count(v, me)
	have := map[string]int{}
	avail := map[string][]string{} // per owner: its keys worth asking for, those asked before first
	m.mu.Lock()
	for _, k := range m.g.keys {
		if _, mineNow := m.held[k]; !mineNow && v.holder[k] == "" {
			upper--
		}
	}
	before := map[string]bool{}
	for _, k := range m.asks {
		before[k] = true
	}
	for _, o := range v.live {
		if o == me {
			continue
		}
		have[o] = len(v.workers[o].Held)
		var again, rest []string
		for _, k := range v.workers[o].Held {
			switch _, mineNow := m.held[k]; {
			case mineNow || m.pending[k]:
			case before[k]:
				again = append(again, k)
			default:
				rest = append(rest, k)
			}
		}
		if len(rest) > 0 {
			h := fnv.New32a()
			h.Write([]byte(me))
			i := int(h.Sum32() % uint32(len(rest)))
			rest = append(rest[i:], rest[:i]...) // askers at once mostly ask for different keys
		}
		avail[o] = append(again, rest...)
	}
	m.mu.Unlock()
	var asks []string
	// Asks made before whose keys their holder still lists may be on their
	// way: keep those the holder would still grant (see grant), and count
	// them as good as held.
	held := mine
	for _, o := range v.live {
		h, a := have[o], held
		for _, k := range avail[o] {
			if !before[k] || mine >= upper || h < a+2 {
				break
			}
			asks = append(asks, k)
			avail[o] = avail[o][1:]
			h, a = h-1, a+1
			have[o]--
			mine++
		}
	}
	for mine < upper {
		top, most := "", -1
		for _, o := range v.live {
			if o != me && len(avail[o]) > 0 && have[o] > most {
				top, most = o, have[o]
			}
		}
		if top == "" || most < mine+2 {
			break
		}
		asks = append(asks, avail[top][0])
		avail[top] = avail[top][1:]
		have[top]--
		mine++
	}
	sort.Strings(asks)
	m.mu.Lock()
	m.asks = asks
	m.mu.Unlock()
}

// leave hands every key back and marks the worker record ended.
func (m *member) leave() error {
	g, c := m.g, m.g.c
	m.mu.Lock()
	for k, l := range m.held {
		m.leaving[k] = true
		l.end(fmt.Errorf("%w: %q: worker %s is leaving group %q", ErrReleased, k, c.o.owner, g.name))
	}
	m.mu.Unlock()
	// Once every fn has returned, nothing of this worker writes under its
	// keys: its record is marked ended, and its name taken off the roster,
	// while the keys' releases are on their way (each conditioned on the
	// key's record still being this worker's, so that one taken meanwhile
	// by another, who saw this worker ended, stays taken). The roster's
	// update does not wait for the record's: a worker off the roster whose
	// record is not ended still holds its keys (alive reads its record), and
	// a new incarnation of the same owner that joined meanwhile, taken off
	// with it, adds itself back at its next round (tidyRoster); only the
	// balance can wait a round, never a key's exclusivity.
	m.fns.Wait()
	m.stopBeat()
	<-m.beatDone
	m.mu.Lock()
	next := m.rec
	m.mu.Unlock()
	var err error
	if m.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
		defer cancel()
		var rosterErr error
		var tidied sync.WaitGroup
		tidied.Add(1)
		go func() {
			defer tidied.Done()
			_, rosterErr = g.roster(ctx, "", []string{c.o.owner})
		}()
		for range 3 {
			next.Ended, next.Held, next.Asks = true, nil, nil
			if _, err = g.workers.Save(ctx, next, dynamo.WithSaveBehavior(dynamo.SavePut)); err == nil || !errors.Is(err, dynamo.ErrVersionConflict) {
				break
			}
			cur, derr := g.workers.Current(err)
			if derr == nil && cur.Attempt == m.attempt && cur.Ended {
				err = nil // ended already (by others, or by a write of ours)
				break
			}
			if derr == nil && cur.Attempt != m.attempt {
				// A new incarnation of this owner (a restart) wrote its
				// record over ours: nothing of ours is left to end, and
				// its keys went through their releases.
				err = nil
				break
			}
			if derr != nil {
				break // gone: say so
			}
			next = cur // a write of ours landed unanswered: end that version
		}
		if err != nil {
			err = fmt.Errorf("lease: group %q: marking worker %s ended: %w", g.name, c.o.owner, err)
		}
		tidied.Wait()
		if rosterErr != nil {
			c.log.Warn(ctx, "leaving the roster failed", slog.String("group", g.name), telemetry.Err("err", rosterErr))
		}
	}
	m.work.Wait() // every key released (or its release failed)
	m.end(fmt.Errorf("%w: worker %s left group %q", ErrReleased, c.o.owner, g.name))
	if err == nil {
		c.log.Info(context.Background(), "left the group", slog.String("group", g.name))
	}
	return err
}
