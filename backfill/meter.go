package backfill

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
)

// Placeholders of the mark in the requests the meter rewrites. The mapper
// numbers its own (#0, :0, …), so these never meet them.
const (
	markName  = "#backfillMark"
	markValue = ":backfillMark"
)

// budget is a token bucket of capacity units: it fills at rate units per
// second up to one second's worth, requests wait while it is below zero, and
// each response takes the units DynamoDB says it consumed. A zero rate is no
// limit.
type budget struct {
	clk  clock.Clock
	rate float64

	mu    sync.Mutex
	avail float64
	last  time.Time
}

func newBudget(clk clock.Clock, rate float64) *budget {
	return &budget{clk: clk, rate: rate, avail: rate, last: clk.Now()}
}

// refill adds what the time since the last refill earned; b.mu is held.
func (b *budget) refill() {
	now := b.clk.Now()
	if d := now.Sub(b.last); d > 0 {
		b.avail = min(b.rate, b.avail+b.rate*d.Seconds())
	}
	b.last = now
}

// wait returns once the bucket is not in debt, or with ctx's error.
func (b *budget) wait(ctx context.Context) error {
	if b.rate <= 0 {
		return ctx.Err()
	}
	for {
		b.mu.Lock()
		b.refill()
		debt := -b.avail
		b.mu.Unlock()
		if debt <= 0 {
			return ctx.Err()
		}
		t := b.clk.NewTimer(time.Duration(debt / b.rate * float64(time.Second)))
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// spend takes units from the bucket (it may go into debt).
func (b *budget) spend(units float64) {
	if b.rate <= 0 {
		return
	}
	b.mu.Lock()
	b.refill()
	b.avail -= units
	b.mu.Unlock()
}

// meter is the dynamo.Client the migration's own mapper sends its requests
// through. It
//   - waits for the read or write budget before each Scan, Query, GetItem,
//     UpdateItem and PutItem, asks DynamoDB for the capacity consumed
//     (ReturnConsumedCapacity TOTAL) and charges it to the budget (one unit
//     when a response carries none, as a failed conditional write) — every
//     read, every write under a write budget, and without one a sample of
//     the writes (see usage);
//   - backs off and sends again a request DynamoDB refused for throttling,
//     after the SDK's own retries gave up (nothing was written then);
//   - writes the migration's mark (markAttr = id) with every UpdateItem and
//     PutItem, so that the change and the mark land together;
//   - counts the items scans read (before filters) and the units consumed.
//
// The mapper is the migration's own: every write through it is a write of
// the migration.
type meter struct {
	dynamo.Client
	markAttr, id  string
	unmark        bool // remove the mark instead of writing it (Clean)
	reads, writes *budget
	clk           clock.Clock
	maxBackoff    time.Duration
	scanned       atomic.Int64
	filtered      atomic.Int64
	readUse       usage // every read asks (readSample 1)
	writeUse      usage // writeSample without a write budget
	throttled     atomic.Int64
	// markAV is the mark's value (id), shared by every write: nobody
	// modifies an attribute value sent.
	markAV types.AttributeValue
	// marked is the last UpdateExpression rewritten and its rewrite: the
	// mapper sends the same expression for most writes of a type.
	marked atomic.Pointer[rewrite]
}

// Sampling of the capacity consumed, when no budget of the kind needs
// every request's: one request in that many asks (the first of each that
// many).
// DynamoDB Local spends about 0.1 ms of CPU more on a write that asks for
// its capacity, under concurrent writes (BENCHMARKS.md, "Backfill"): a
// quarter of a migration's rate on a small machine. Reads are a page's
// Scan or Query (one per PageSize items) or a conflict's GetItem: all ask.
const (
	readSample  = 1
	writeSample = 16
)

// usage counts the capacity one kind of request (reads or writes)
// consumed: the units DynamoDB reported for the requests that asked, and
// how many were sent and asked, so that units scales the ones asked to all.
type usage struct {
	milli atomic.Int64 // units × 1000 of the requests that asked
	sent  atomic.Int64 // requests sent (each try of a throttled one)
	asked atomic.Int64 // of which asked for their capacity
	calls atomic.Int64 // calls of ask
}

// ask reports whether the next request of u's kind asks DynamoDB for its
// capacity: every one under a limited budget b (it needs each charge),
// else one in every.
func (u *usage) ask(b *budget, every int64) bool {
	return b.rate > 0 || every <= 1 || u.calls.Add(1)%every == 1
}

// units is the capacity consumed: exact when every request asked, else
// the mean of those that asked times the requests sent.
func (u *usage) units() float64 {
	sent, asked, milli := u.sent.Load(), u.asked.Load(), u.milli.Load()
	if asked == 0 {
		return 0
	}
	return float64(milli) / 1000 * float64(max(sent, asked)) / float64(asked)
}

// rewrite is an UpdateExpression and the one the meter sends instead.
type rewrite struct {
	in  string
	out *string
}

// withMarkOf returns the UpdateExpression e with the mark written (or
// removed, unmark), from the cache when e is the last one rewritten.
func (m *meter) withMarkOf(e string) *string {
	if r := m.marked.Load(); r != nil && r.in == e {
		return r.out
	}
	out := withMark(e)
	if m.unmark {
		out = withoutMark(e)
	}
	m.marked.Store(&rewrite{in: e, out: &out})
	return &out
}

// throttleRetries bounds the meter's own retries of a throttled request.
const throttleRetries = 10

// isThrottle reports whether err is DynamoDB refusing a request for
// capacity.
func isThrottle(err error) bool {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return false
	}
	switch api.ErrorCode() {
	case "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded":
		return true
	}
	return false
}

// send runs call under the budget b and sends it again after a backoff
// while it is throttled; asked: the request asks for its capacity, which
// is then charged to b and counted in u.
func send[O any](ctx context.Context, m *meter, b *budget, u *usage, asked bool, call func() (*O, error), used func(*O) *types.ConsumedCapacity) (*O, error) {
	backoff := 50 * time.Millisecond
	for try := 0; ; try++ {
		if err := b.wait(ctx); err != nil {
			return nil, err
		}
		out, err := call()
		u.sent.Add(1)
		if asked {
			units := 1.0
			if err == nil {
				if cc := used(out); cc != nil && cc.CapacityUnits != nil {
					units = *cc.CapacityUnits
				}
			}
			b.spend(units)
			u.asked.Add(1)
			u.milli.Add(int64(units * 1000))
		}
		if err == nil || !isThrottle(err) || try >= throttleRetries {
			return out, err
		}
		m.throttled.Add(1)
		t := m.clk.NewTimer(backoff)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return out, err
		}
		backoff = min(2*backoff, m.maxBackoff)
	}
}

func (m *meter) Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	r := *in
	asked := m.readUse.ask(m.reads, readSample)
	if asked {
		r.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	}
	out, err := send(ctx, m, m.reads, &m.readUse, asked, func() (*dynamodb.ScanOutput, error) { return m.Client.Scan(ctx, &r, optFns...) },
		func(o *dynamodb.ScanOutput) *types.ConsumedCapacity { return o.ConsumedCapacity })
	if err == nil {
		m.scanned.Add(int64(out.ScannedCount))
		m.filtered.Add(int64(out.ScannedCount - out.Count))
		keepRead(ctx, out.Items)
	}
	return out, err
}

func (m *meter) Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	r := *in
	asked := m.readUse.ask(m.reads, readSample)
	if asked {
		r.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	}
	out, err := send(ctx, m, m.reads, &m.readUse, asked, func() (*dynamodb.QueryOutput, error) { return m.Client.Query(ctx, &r, optFns...) },
		func(o *dynamodb.QueryOutput) *types.ConsumedCapacity { return o.ConsumedCapacity })
	if err == nil {
		m.scanned.Add(int64(out.ScannedCount))
		m.filtered.Add(int64(out.ScannedCount - out.Count))
		keepRead(ctx, out.Items)
	}
	return out, err
}

// readKey is the context key of the items a page's Scans or Queries
// return (readItems), kept for the writes of their changes alone
// (dynamo.ChangedFrom).
type readKey struct{}

// readItems are the items, as stored, of the requests of one page read.
type readItems struct {
	items []map[string]types.AttributeValue
}

// withReadItems returns ctx carrying r: the Scans and Queries sent under
// it append the items they return to r.items.
func withReadItems(ctx context.Context, r *readItems) context.Context {
	return context.WithValue(ctx, readKey{}, r)
}

// keepRead appends items to the readItems ctx carries, if any.
func keepRead(ctx context.Context, items []map[string]types.AttributeValue) {
	if r, ok := ctx.Value(readKey{}).(*readItems); ok {
		r.items = append(r.items, items...)
	}
}

func (m *meter) GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	r := *in
	asked := m.readUse.ask(m.reads, readSample)
	if asked {
		r.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	}
	return send(ctx, m, m.reads, &m.readUse, asked, func() (*dynamodb.GetItemOutput, error) { return m.Client.GetItem(ctx, &r, optFns...) },
		func(o *dynamodb.GetItemOutput) *types.ConsumedCapacity { return o.ConsumedCapacity })
}

func (m *meter) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	r := *in
	asked := m.writeUse.ask(m.writes, writeSample)
	if asked {
		r.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	}
	if m.markAttr == "" {
		return send(ctx, m, m.writes, &m.writeUse, asked, func() (*dynamodb.UpdateItemOutput, error) { return m.Client.UpdateItem(ctx, &r, optFns...) },
			func(o *dynamodb.UpdateItemOutput) *types.ConsumedCapacity { return o.ConsumedCapacity })
	}
	// The mapper's expressions may share their maps between calls: copy.
	r.ExpressionAttributeNames = maps.Clone(in.ExpressionAttributeNames)
	if r.ExpressionAttributeNames == nil {
		r.ExpressionAttributeNames = map[string]string{}
	}
	r.ExpressionAttributeNames[markName] = m.markAttr
	if !m.unmark {
		r.ExpressionAttributeValues = maps.Clone(in.ExpressionAttributeValues)
		if r.ExpressionAttributeValues == nil {
			r.ExpressionAttributeValues = map[string]types.AttributeValue{}
		}
		r.ExpressionAttributeValues[markValue] = m.markAV
	}
	r.UpdateExpression = m.withMarkOf(aws.ToString(in.UpdateExpression))
	return send(ctx, m, m.writes, &m.writeUse, asked, func() (*dynamodb.UpdateItemOutput, error) { return m.Client.UpdateItem(ctx, &r, optFns...) },
		func(o *dynamodb.UpdateItemOutput) *types.ConsumedCapacity { return o.ConsumedCapacity })
}

func (m *meter) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	r := *in
	asked := m.writeUse.ask(m.writes, writeSample)
	if asked {
		r.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	}
	r.Item = maps.Clone(in.Item)
	switch {
	case m.markAttr == "":
	case m.unmark:
		delete(r.Item, m.markAttr)
	default:
		r.Item[m.markAttr] = m.markAV
	}
	return send(ctx, m, m.writes, &m.writeUse, asked, func() (*dynamodb.PutItemOutput, error) { return m.Client.PutItem(ctx, &r, optFns...) },
		func(o *dynamodb.PutItemOutput) *types.ConsumedCapacity { return o.ConsumedCapacity })
}

// withMark adds "#backfillMark = :backfillMark" to the SET clause of the
// UpdateExpression e (the mapper writes its clauses upper-case, SET first).
func withMark(e string) string {
	const set = "SET "
	action := markName + " = " + markValue
	if rest, ok := strings.CutPrefix(e, set); ok {
		return set + action + ", " + rest
	}
	if e == "" {
		return set + action
	}
	return set + action + " " + e
}

// withoutMark adds "#backfillMark" to the REMOVE clause of the
// UpdateExpression e.
func withoutMark(e string) string {
	const remove = "REMOVE "
	if i := strings.Index(e, remove); i == 0 || i > 0 && e[i-1] == ' ' {
		j := i + len(remove)
		return e[:j] + markName + ", " + e[j:]
	}
	if e == "" {
		return remove + markName
	}
	return e + " " + remove + markName
}

// TransactWriteItems sends a migration's commit under the write budget; it
// always asks for its capacity (one request per page).
func (m *meter) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	r := *in
	r.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	return send(ctx, m, m.writes, &m.writeUse, true, func() (*dynamodb.TransactWriteItemsOutput, error) {
		return m.Client.TransactWriteItems(ctx, &r, optFns...)
	}, func(o *dynamodb.TransactWriteItemsOutput) *types.ConsumedCapacity {
		var total float64
		for _, c := range o.ConsumedCapacity {
			if c.CapacityUnits != nil {
				total += *c.CapacityUnits
			}
		}
		return &types.ConsumedCapacity{CapacityUnits: &total}
	})
}
