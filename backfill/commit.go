package backfill

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/codec"
	"github.com/ddbkit/dynamo/lease"
)

// The exactly-once commit: each page's changes are written in one
// TransactWriteItems with the segment's checkpoint advanced past the page and
// the segment's lease guard (see "Each item changed once" in the package
// doc).

const (
	// maxChunk is the most items one commit writes: a transaction's members
	// less the checkpoint and the lease guard. Pages are read at most this
	// long.
	maxChunk = dynamo.MaxTxItems - 2
	// maxChunkBytes is what the items of one commit may weigh (as read):
	// DynamoDB takes 4 MB in a transaction, and a change may grow an item.
	maxChunkBytes = 3 << 20
	// maxRecorded is the most failed items a segment's checkpoint records.
	maxRecorded = 100
	// unknownCommits bounds how often a commit whose outcome stayed unknown,
	// and that the checkpoint shows did not land, is sent again.
	unknownCommits = 5
	// commitTimeout bounds each commit, which a stop of Run (a failure
	// elsewhere, its ctx done) does not cut short: it is finished, so that
	// it is counted.
	commitTimeout = 30 * time.Second
)

// errSplit is commitPage's error when the page is to be read again shorter
// (too large for one transaction, or contended past the retries).
var errSplit = errors.New("backfill: page to be read again shorter")

// errHandedOver is commitPage's error when the segment's lease or checkpoint
// moved to another holder: nothing of the page was written.
var errHandedOver = errors.New("backfill: segment handed over")

// failedKey is an item recorded as failed in a segment's checkpoint: its key,
// and when it was recorded (unix ms), so that a later Run retries it.
type failedKey struct {
	Key map[string]types.AttributeValue
	At  int64
}

// failedKeys is the checkpoint's list of failed items.
type failedKeys []failedKey

// MarshalDynamoDBAttributeValue stores the list as a list of maps.
func (f failedKeys) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	l := make([]types.AttributeValue, len(f))
	for i, k := range f {
		l[i] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"k":  &types.AttributeValueMemberM{Value: k.Key},
			"at": &types.AttributeValueMemberN{Value: strconv.FormatInt(k.At, 10)},
		}}
	}
	return &types.AttributeValueMemberL{Value: l}, nil
}

// UnmarshalDynamoDBAttributeValue reads what MarshalDynamoDBAttributeValue
// stores.
func (f *failedKeys) UnmarshalDynamoDBAttributeValue(a types.AttributeValue) error {
	*f = nil
	l, ok := a.(*types.AttributeValueMemberL)
	if !ok {
		return nil // NULL or absent
	}
	for _, e := range l.Value {
		m, ok := e.(*types.AttributeValueMemberM)
		if !ok {
			return fmt.Errorf("backfill: checkpoint: failed item %T is not a map", e)
		}
		k, _ := m.Value["k"].(*types.AttributeValueMemberM)
		if k == nil {
			return errors.New("backfill: checkpoint: failed item without its key")
		}
		var at int64
		if n, ok := m.Value["at"].(*types.AttributeValueMemberN); ok {
			at, _ = strconv.ParseInt(n.Value, 10, 64)
		}
		*f = append(*f, failedKey{Key: k.Value, At: at})
	}
	return nil
}

// shape is what a migration's resume depends on, recorded in the checkpoint
// table when its first Run starts and compared by every later one.
type shape struct {
	Key      string `dynamo:"key,hash"`
	Version  int64  `dynamo:"version,version"`
	Format   int    `dynamo:"format"`
	Table    string `dynamo:"table"`
	Segments int    `dynamo:"segments"`
	Query    string `dynamo:"query,omitempty"`
	Index    string `dynamo:"index,omitempty"`
}

// shapeFormat is the checkpoints' format: 2 is the transactional commit.
const shapeFormat = 2

// shapeKey is the key of the shape record of the migration id.
func shapeKey(id string) string { return "\x00backfill:" + id + "\x00shape" }

// ErrShapeChanged is the error of a Run whose options differ from those the
// migration was started with in what its checkpoints mean: the table, the
// number of segments, the query or its index.
var ErrShapeChanged = errors.New("backfill: the migration was started with other options")

// myShape is this migration's shape.
func (m *Migration[T]) myShape() shape {
	s := shape{Key: shapeKey(m.id), Format: shapeFormat, Table: m.table.Name(), Segments: m.o.segments, Index: m.o.index}
	if m.query != nil {
		if e, err := expressionOf(*m.query); err == nil {
			s.Query = e
		}
	}
	return s
}

// checkShape records the migration's shape at its first Run, and refuses a
// Run whose shape differs from the one recorded (ErrShapeChanged), or a
// migration an older release started (it checkpointed with marks).
func (m *Migration[T]) checkShape(ctx context.Context) error {
	want := m.myShape()
	for try := 0; ; try++ {
		got, err := m.shapes.Load(ctx, shape{Key: want.Key}, dynamo.ConsistentRead())
		switch {
		case errors.Is(err, dynamo.ErrNotFound):
			if _, err := m.cps.Load(ctx, checkpoint{Key: m.checkpointKey(0)}, dynamo.ConsistentRead()); err == nil {
				return fmt.Errorf("%w: %q has an earlier release's checkpoints: finish it with that release, or use a new id", ErrShapeChanged, m.id)
			} else if !errors.Is(err, dynamo.ErrNotFound) {
				return fmt.Errorf("backfill: migration %q: reading its checkpoints: %w", m.id, err)
			}
			if _, err := m.shapes.Save(ctx, want); err == nil {
				return nil
			} else if !errors.Is(err, dynamo.ErrVersionConflict) || try > 0 {
				return fmt.Errorf("backfill: migration %q: recording its options: %w", m.id, err)
			}
			continue // another process recorded it first: compare
		case err != nil:
			return fmt.Errorf("backfill: migration %q: reading its options: %w", m.id, err)
		}
		var diff string
		switch {
		case got.Format != shapeFormat:
			diff = fmt.Sprintf("checkpoint format %d (this release writes %d)", got.Format, shapeFormat)
		case got.Table != want.Table:
			diff = fmt.Sprintf("table %q", got.Table)
		case got.Segments != want.Segments:
			diff = fmt.Sprintf("WithSegments(%d)", got.Segments)
		case got.Index != want.Index:
			diff = fmt.Sprintf("WithIndex(%q)", got.Index)
		case got.Query != want.Query:
			diff = fmt.Sprintf("query %s", got.Query)
		default:
			return nil
		}
		return fmt.Errorf("%w: %q started with %s: resume with that (a new id would change every item again)", ErrShapeChanged, m.id, diff)
	}
}

// expressionOf renders a key condition with its names and values, for
// comparing two.
func expressionOf(kc expression.KeyConditionBuilder) (string, error) {
	e, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s %v %v", *e.KeyCondition(), e.Names(), avString(e.Values())), nil
}

// avString renders attribute values by value.
func avString(vs map[string]types.AttributeValue) string {
	var b []byte
	keys := make([]string, 0, len(vs))
	for k := range vs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var v any
		_ = attributevalue.Unmarshal(vs[k], &v)
		b = fmt.Appendf(b, "%s=%T:%v ", k, vs[k], v)
	}
	return string(b)
}

// change is one item of a page the function changes.
type change[T any] struct {
	key T // as scanned
	out T // the function's result from it
}

// tally is what a commit did, counted once it landed.
type tally[T any] struct {
	changed, unchanged, skipped, reruns int64
	failures                            []Failure[T]
}

// txSegment works on segment seg of lease l from checkpoint cp until it is
// done, the lease ends (ctx) or Run stops (errStopping), committing each
// page's changes together with the checkpoint past it; pages without
// changes move the checkpoint on in memory, saved each CheckpointInterval
// (a crash reads them again: nothing of them was written). cp.Failed
// recorded before this Run started are tried again first.
func (m *Migration[T]) txSegment(ctx, wctx context.Context, l *lease.Lease, seg int, cp checkpoint) error {
	m.mu.Lock()
	stopping, started := m.stopping, m.started
	m.mu.Unlock()
	if err := m.retryFailed(ctx, wctx, l, &cp, started); err != nil {
		return err
	}
	lastSave := m.o.clock.Now()
	saved := cp // as stored
	flush := func() error {
		if saved.Cursor == cp.Cursor && saved.Done == cp.Done {
			return nil
		}
		next := cp
		next.Token, next.Segments = l.Token(), m.o.segments
		s, err := lease.Save(ctx, l, m.cps, next)
		if err != nil {
			return err
		}
		cp, saved, lastSave = s, s, m.o.clock.Now()
		return nil
	}
	full := min(m.o.pageSize, maxChunk)
	limit := full
	var r *pageReader[T]
	defer func() {
		if r != nil {
			r.stop()
		}
	}()
	for !cp.Done {
		if r == nil {
			r = m.startReadingN(ctx, seg, cp.Cursor, limit)
		}
		p, err := nextPage(ctx, r, stopping, flush)
		if err != nil {
			return err
		}
		cctx, cancel := commitContext(wctx)
		wrote, n, err := m.commitPage(cctx, l, &cp, p)
		cancel()
		switch {
		case errors.Is(err, errSplit):
			r.stop()
			r, limit = nil, max(1, n)
			continue
		case err != nil:
			if f := (*failed)(nil); errors.As(err, &f) {
				_ = flushQuiet(ctx, flush)
			}
			return err
		}
		if wrote {
			saved, lastSave = cp, m.o.clock.Now()
		}
		if limit != full { // a shortened page is done: read full pages again
			r.stop()
			r, limit = nil, full
		}
		if err := m.scanned(seg, cp, lastSave, flush); err != nil {
			return err
		}
	}
	return nil
}

// scanned records that segment seg has scanned up to cp and saves the
// checkpoint (flush) when the segment is done or CheckpointInterval has
// passed since lastSave.
func (m *Migration[T]) scanned(seg int, cp checkpoint, lastSave time.Time, flush func() error) error {
	m.mu.Lock()
	m.segs[seg].scanned = cp.Scanned
	m.mu.Unlock()
	if cp.Done || m.o.clock.Now().Sub(lastSave) >= m.o.cpEvery {
		return flush()
	}
	return nil
}

// nextPage waits for r's next page. When the migration is stopping it
// flushes the checkpoint and returns errStopping, even with a page read.
func nextPage[T any](ctx context.Context, r *pageReader[T], stopping <-chan struct{}, flush func() error) (page[T], error) {
	select {
	case p := <-r.pages:
		if p.err != nil {
			return p, p.err
		}
		select {
		case <-stopping:
			return p, errors.Join(errStopping, flushQuiet(ctx, flush))
		default:
			return p, nil
		}
	case <-stopping:
		return page[T]{}, errors.Join(errStopping, flushQuiet(ctx, flush))
	case <-ctx.Done():
		return page[T]{}, ctx.Err()
	}
}

// commitContext returns the context of one commit: not cancelled when Run
// stops (a commit in flight is finished, so that it is counted), and
// bounded by commitTimeout from now.
func commitContext(wctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(wctx), commitTimeout)
}

// flushQuiet saves the checkpoint while ctx lasts, reporting a failure.
func flushQuiet(ctx context.Context, flush func() error) error {
	if ctx.Err() != nil {
		return nil
	}
	if err := flush(); err != nil {
		return fmt.Errorf("backfill: checkpoint on stopping: %w", err)
	}
	return nil
}

// commitPage applies the function to page p (read from cp's cursor) and
// commits its changes with the checkpoint advanced past it, in one
// transaction under ctx guarded by l; cp is then the checkpoint as stored,
// and wrote true. A page nothing of which changes moves cp on in memory
// only (wrote false). errSplit, with the number of items to read instead,
// asks for the page to be read again shorter.
func (m *Migration[T]) commitPage(ctx context.Context, l *lease.Lease, cp *checkpoint, p page[T]) (wrote bool, n int, err error) {
	next := *cp
	next.Cursor, next.Done = string(p.next), p.next == ""
	next.Scanned += int64(len(p.items) + len(p.undecoded))
	var pre tally[T]
	var newFailed failedKeys
	for _, f := range p.undecoded {
		var it T
		_ = f.DecodeKey(&it)
		if !m.o.skipFailures {
			return false, 0, &failed{fmt.Errorf("backfill: migration %q: item %+v: %w", m.id, it, f)}
		}
		pre.failures = append(pre.failures, Failure[T]{Item: it, Err: fmt.Errorf("backfill: migration %q: item %+v: %w", m.id, it, f)})
		newFailed = append(newFailed, failedKey{Key: f.Key, At: m.o.clock.Now().UnixMilli()})
	}
	var changes []change[T]
	var known []map[string]types.AttributeValue
	size := 0
	for i, it := range p.items {
		var raw map[string]types.AttributeValue
		if p.read != nil {
			raw = p.read[i]
		}
		if m.reread {
			changes = append(changes, change[T]{key: it})
			continue
		}
		out, err := m.fn(shallowCopy(it))
		switch {
		case errors.Is(err, dynamo.ErrNoChange):
			pre.unchanged++
			continue
		case err == nil && !keepsKey(it, out, m.keys):
			err = fmt.Errorf("%w: the function changed the item's key: return the item under the key it was given", dynamo.ErrInvalidInput)
		}
		if err != nil {
			ferr := fmt.Errorf("backfill: migration %q: item %+v: %w", m.id, it, err)
			if !m.o.skipFailures {
				return false, 0, &failed{ferr}
			}
			pre.failures = append(pre.failures, Failure[T]{Item: it, Err: ferr})
			newFailed = append(newFailed, failedKey{Key: m.keyOf(it, raw), At: m.o.clock.Now().UnixMilli()})
			continue
		}
		if raw != nil {
			size += av.ItemSize(raw)
			if size > maxChunkBytes && len(changes) > 0 {
				return false, i, errSplit
			}
			known = append(known, raw)
		}
		changes = append(changes, change[T]{key: it, out: out})
	}
	if len(cp.Failed)+len(newFailed) > maxRecorded {
		return false, 0, &failed{fmt.Errorf("backfill: migration %q: over %d failed items in one segment: fix the function (or the items) and run again, which retries them", m.id, maxRecorded)}
	}
	next.Failed = append(slices.Clip(cp.Failed), newFailed...)
	if len(changes) == 0 && len(newFailed) == 0 {
		*cp = next
		m.count(pre)
		return false, 0, nil
	}
	t, saved, err := m.commit(ctx, l, cp, next, changes, known, m.reread)
	if err != nil {
		if errors.Is(err, errSplit) {
			return false, max(1, len(p.items)/2), err
		}
		return false, 0, err
	}
	t.unchanged += pre.unchanged
	t.failures = append(pre.failures, t.failures...)
	*cp = saved
	m.count(t)
	return true, 0, nil
}

// commit writes changes (of items known as read, when known) and the
// checkpoint next over cp in one transaction guarded by l, with the function
// run again on the stored items after a conflict; it returns what landed and
// the checkpoint as stored. An outcome left unknown is settled by reading
// the checkpoint: it moved with the commit.
func (m *Migration[T]) commit(ctx context.Context, l *lease.Lease, cp *checkpoint, next checkpoint, changes []change[T], known []map[string]types.AttributeValue, reread bool) (tally[T], checkpoint, error) {
	next.Token, next.Segments = l.Token(), m.o.segments
	var t tally[T]
	var saved checkpoint
	opts := []dynamo.TxOption{dynamo.GuardedBy(l.Guard())}
	if len(known) > 0 {
		opts = append(opts, m.table.TxKnown(known...))
	}
	fn := func(tx *dynamo.Tx) error {
		t = tally[T]{}
		view := m.table.In(tx)
		rec := next
		if reread && tx.Run() == 1 {
			gets := make([]dynamo.TxGetOp, len(changes))
			for i, c := range changes {
				gets[i] = m.table.TxGet(c.key)
			}
			if err := tx.Prefetch(gets...); err != nil {
				return err
			}
		}
		for _, c := range changes {
			out, keep := c.out, true
			if tx.Run() > 1 || reread {
				var err error
				if out, keep, err = m.redo(view, c, reread, tx.Run() > 1, &t, &rec); err != nil {
					return err
				}
			}
			if !keep {
				continue
			}
			if _, err := view.Save(out); err != nil {
				return err
			}
			t.changed++
		}
		if len(rec.Failed) > maxRecorded {
			return &failed{fmt.Errorf("backfill: migration %q: over %d failed items in one segment: fix the function (or the items) and run again, which retries them", m.id, maxRecorded)}
		}
		s, err := m.cps.In(tx).Save(rec)
		saved = s
		return err
	}
	for try := 0; ; try++ {
		err := m.table.Mapper().Transact(ctx, fn, opts...)
		switch {
		case err == nil:
			return t, saved, nil
		case errors.Is(err, dynamo.ErrUnknownOutcome):
			got, lerr := m.cps.Load(ctx, checkpoint{Key: cp.Key}, dynamo.ConsistentRead())
			switch {
			case lerr == nil && got.Version == saved.Version && got.Token == l.Token() && got.Cursor == saved.Cursor:
				return t, got, nil // it landed
			case lerr == nil && got.Version == cp.Version && try < unknownCommits:
				continue // it did not: send it again
			case lerr == nil || errors.Is(lerr, dynamo.ErrNotFound):
				return t, saved, errHandedOver
			}
			return t, saved, err
		case m.handedOver(err, l, cp.Key):
			return t, saved, errHandedOver
		case errors.Is(err, dynamo.ErrVersionConflict) && len(changes) > 1,
			errors.Is(err, dynamo.ErrInvalidInput) && len(changes) > 1:
			return t, saved, errSplit
		}
		return t, saved, err
	}
}

// redo is what commit saves for c when the transaction runs again or
// rereads the items: the function's result from the item as stored now (c.out
// when that is still the item c was computed from), keep false when nothing
// is saved for c. It counts into t and records a skipped failure in rec.
func (m *Migration[T]) redo(view dynamo.TxTable[T], c change[T], reread, rerun bool, t *tally[T], rec *checkpoint) (out T, keep bool, err error) {
	cur, err := view.Load(c.key)
	switch {
	case errors.Is(err, dynamo.ErrNotFound):
		t.skipped++ // deleted since it was read
		return out, false, nil
	case err != nil:
		return out, false, err
	case !reread && reflect.DeepEqual(cur, c.key):
		// Not what the last run's conflict was about: the function's
		// result from the same item stands.
		return c.out, true, nil
	}
	if rerun {
		t.reruns++
	}
	out, err = m.fn(shallowCopy(cur))
	switch {
	case errors.Is(err, dynamo.ErrNoChange):
		t.unchanged++
		return out, false, nil
	case err == nil && !keepsKey(cur, out, m.keys):
		err = fmt.Errorf("%w: the function changed the item's key: return the item under the key it was given", dynamo.ErrInvalidInput)
	case err == nil && m.movesIndexSort(cur, out) != "":
		err = fmt.Errorf("%w: the function changed %q, the sort key of the queried index %q: leave it, or migrate with NewMigration (a scan)", dynamo.ErrInvalidInput, m.movesIndexSort(cur, out), m.o.index)
	}
	if err == nil {
		return out, true, nil
	}
	ferr := fmt.Errorf("backfill: migration %q: item %+v: %w", m.id, cur, err)
	if !m.o.skipFailures {
		return out, false, &failed{ferr}
	}
	t.failures = append(t.failures, Failure[T]{Item: cur, Err: ferr})
	rec.Failed = append(slices.Clip(rec.Failed), failedKey{Key: m.keyOf(cur, nil), At: m.o.clock.Now().UnixMilli()})
	return out, false, nil
}

// handedOver reports whether err is a commit refused because the segment has
// another holder now: its lease guard or its checkpoint failed.
func (m *Migration[T]) handedOver(err error, l *lease.Lease, cpKey string) bool {
	var te *dynamo.TxError
	if !errors.As(err, &te) {
		return false
	}
	for _, f := range te.Failures {
		if k, ok := f.Key["key"].(*types.AttributeValueMemberS); ok && (k.Value == l.Key() || k.Value == cpKey) {
			return true
		}
	}
	return false
}

// retryFailed tries again, once, the failed items cp records from before
// this Run started (started): those that change now are written, with cp, in
// one commit; those that fail again stay recorded, as of now.
func (m *Migration[T]) retryFailed(ctx, wctx context.Context, l *lease.Lease, cp *checkpoint, started time.Time) error {
	for {
		var again, keep failedKeys
		for _, f := range cp.Failed {
			if f.At < started.UnixMilli() {
				again = append(again, f)
			} else {
				keep = append(keep, f)
			}
		}
		if len(again) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		part := again[:min(len(again), maxChunk)]
		changes := make([]change[T], 0, len(part))
		for _, f := range part {
			var it T
			if err := attributevalue.UnmarshalMapWithOptions(f.Key, &it, func(o *attributevalue.DecoderOptions) { o.TagKey = "dynamo" }); err != nil {
				return fmt.Errorf("backfill: migration %q: a failed item's key %v: %w", m.id, f.Key, err)
			}
			changes = append(changes, change[T]{key: it})
		}
		next := *cp
		next.Failed = append(keep, again[len(part):]...)
		cctx, cancel := commitContext(wctx)
		t, saved, err := m.commit(cctx, l, cp, next, changes, nil, true)
		cancel()
		if err != nil {
			return err
		}
		*cp = saved
		m.count(t)
	}
}

// count adds what a commit did to the progress.
func (m *Migration[T]) count(t tally[T]) {
	m.changed.Add(t.changed)
	m.unchanged.Add(t.unchanged)
	m.skipped.Add(t.skipped)
	m.reruns.Add(t.reruns)
	m.failed.Add(int64(len(t.failures)))
	if len(t.failures) == 0 {
		return
	}
	m.mu.Lock()
	for _, f := range t.failures {
		if len(m.failures) < m.o.maxFailures {
			m.failures = append(m.failures, f)
		}
	}
	m.mu.Unlock()
}

// keyOf returns the primary key of it: from raw, the item as read, when
// given, else encoded from its key fields.
func (m *Migration[T]) keyOf(it T, raw map[string]types.AttributeValue) map[string]types.AttributeValue {
	k := make(map[string]types.AttributeValue, len(m.keyNames))
	for i, name := range m.keyNames {
		if raw != nil && raw[name] != nil {
			k[name] = raw[name]
			continue
		}
		if v := fieldAt(it, m.keys[i]); v.IsValid() && v.CanInterface() {
			if a, err := attributevalue.Marshal(v.Interface()); err == nil {
				k[name] = a
			}
		}
	}
	return k
}

// keyFieldNames returns the attribute names of the key fields of the struct
// type t (or *t), in keyFields' order.
func keyFieldNames(t reflect.Type, paths [][]int) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	names := make([]string, len(paths))
	for _, f := range codec.LayoutOf(t).Fields {
		for i, p := range paths {
			if slices.Equal(p, f.Index) {
				names[i] = f.Name
			}
		}
	}
	return names
}

// keepsKey reports whether out holds the key in's key fields hold (false
// when it cannot tell).
func keepsKey[T any](in, out T, paths [][]int) bool {
	k, ok := keyValues(in, paths)
	return ok && sameKey(k, out, paths)
}

// readIndexSortKey learns the sort key attribute of the index a query
// migration reads (DescribeTable): an item whose function changes it would
// move along the query, past its cursor, and be found again.
func (m *Migration[T]) readIndexSortKey(ctx context.Context) error {
	d, err := m.meter.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(m.table.Name())})
	if err != nil {
		return fmt.Errorf("backfill: migration %q: describing table %q for its index: %w", m.id, m.table.Name(), err)
	}
	var schema []types.KeySchemaElement
	found := false
	for _, g := range d.Table.GlobalSecondaryIndexes {
		if aws.ToString(g.IndexName) == m.o.index {
			schema, found = g.KeySchema, true
		}
	}
	for _, l := range d.Table.LocalSecondaryIndexes {
		if aws.ToString(l.IndexName) == m.o.index {
			schema, found = l.KeySchema, true
		}
	}
	if !found {
		return fmt.Errorf("%w: backfill: migration %q: table %q has no index %q: give Index the name of one of its secondary indexes", dynamo.ErrInvalidInput, m.id, m.table.Name(), m.o.index)
	}
	m.indexSort = nil
	for _, k := range schema {
		if k.KeyType == types.KeyTypeRange {
			m.indexSort = append(m.indexSort, aws.ToString(k.AttributeName))
		}
	}
	return nil
}

// movesIndexSort returns the first of the index's sort key attributes of
// which out holds another value than cur (both encoded as the key would
// be), "" when none.
func (m *Migration[T]) movesIndexSort(cur, out T) string {
	if len(m.indexSort) == 0 {
		return ""
	}
	enc := func(v T) map[string]types.AttributeValue {
		item, _ := attributevalue.MarshalMapWithOptions(v, func(o *attributevalue.EncoderOptions) { o.TagKey = "dynamo" })
		return item
	}
	ci, oi := enc(cur), enc(out)
	for _, n := range m.indexSort {
		a, b := ci[n], oi[n]
		if a == nil || b == nil {
			if a != b {
				return n
			}
			continue
		}
		if !av.Equal(a, b) {
			return n
		}
	}
	return ""
}
