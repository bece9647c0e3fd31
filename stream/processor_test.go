package stream_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/leaktest"
	"github.com/ddbkit/dynamo/lease"
	"github.com/ddbkit/dynamo/stream"
)

func TestMain(m *testing.M) {
	if fleetWorkerMain() {
		return
	}
	dynamotest.Main(m)
}

// Item is the source table's item: an order line of a customer.
type Item struct {
	Customer string `dynamo:"customer,hash"`
	ID       string `dynamo:"id,range"`
	Amount   int64  `dynamo:"amount"`
	Version  int64  `dynamo:"version,version"`
}

// Total is the exactly-once target: a customer's sum of amounts.
type Total struct {
	Customer string `dynamo:"customer,hash"`
	Sum      int64  `dynamo:"sum"`
	Changes  int64  `dynamo:"changes"`
	Version  int64  `dynamo:"version,version"`
}

type env struct {
	db      *dynamodb.Client
	streams *dynamodbstreams.Client
	m       *dynamo.Mapper
	items   *dynamo.Table[Item]
	totals  *dynamo.Table[Total]
	leases  string
}

func streamsClient(t testing.TB, endpoint string, optFns ...func(*dynamodbstreams.Options)) *dynamodbstreams.Client {
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = "us-east-1"
	}
	return dynamodbstreams.New(dynamodbstreams.Options{Region: region, BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("dummy", "dummy", "")}, optFns...)
}

var tableSeq struct {
	sync.Mutex
	n int
}

func tableName(t testing.TB, what string) string {
	tableSeq.Lock()
	defer tableSeq.Unlock()
	tableSeq.n++
	name := fmt.Sprintf("s41-%s-%d-%d", what, time.Now().UnixNano()%1e9, tableSeq.n)
	return name
}

func newEnv(t *testing.T) *env {
	t.Helper()
	db := dynamotest.Client(t)
	e := &env{db: db, streams: streamsClient(t, dynamotest.Endpoint(t)), m: dynamo.NewMapper(db)}
	ctx := context.Background()
	var err error
	if e.items, err = dynamo.NewTable[Item](e.m, tableName(t, "items")); err != nil {
		t.Fatal(err)
	}
	if err := e.items.CreateTable(ctx, dynamo.WithStream(types.StreamViewTypeNewAndOldImages)); err != nil {
		t.Fatal(err)
	}
	if e.totals, err = dynamo.NewTable[Total](e.m, tableName(t, "totals")); err != nil {
		t.Fatal(err)
	}
	if err := e.totals.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	e.leases = tableName(t, "leases")
	lc, err := lease.New(e.m, e.leases)
	if err != nil {
		t.Fatal(err)
	}
	if err := lc.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range []string{e.items.Name(), e.totals.Name(), e.leases} {
			e.db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(n)})
		}
	})
	return e
}

func (e *env) leaseClient(t *testing.T, owner string) *lease.Client {
	t.Helper()
	lc, err := lease.New(e.m, e.leases, lease.WithOwner(owner), lease.WithLeaseDuration(2*time.Second),
		lease.WithHeartbeatInterval(500*time.Millisecond), lease.WithPollInterval(200*time.Millisecond), lease.WithClockSkewRate(1.25))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lc.Close(context.Background()) })
	return lc
}

func (e *env) processor(t *testing.T, owner string, opts ...stream.Option) *stream.Processor[Item] {
	t.Helper()
	opts = append([]stream.Option{stream.WithSlots(2), stream.WithIdleWait(20*time.Millisecond, 100*time.Millisecond)}, opts...)
	p, err := stream.New(e.items, stream.Config{Streams: e.streams, Leases: e.leaseClient(t, owner), Checkpoints: e.leases, Name: "totals"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// collector records what a handler saw and wakes a waiter.
type collector struct {
	mu   sync.Mutex
	recs []stream.Record[Item]
	ch   chan struct{}
}

func newCollector() *collector { return &collector{ch: make(chan struct{}, 1)} }

func (c *collector) handle(ctx context.Context, b *stream.Batch[Item]) error {
	c.mu.Lock()
	c.recs = append(c.recs, b.Records...)
	c.mu.Unlock()
	select {
	case c.ch <- struct{}{}:
	default:
	}
	return nil
}

func (c *collector) waitFor(t *testing.T, n int) []stream.Record[Item] {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		c.mu.Lock()
		got := append([]stream.Record[Item](nil), c.recs...)
		c.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-c.ch:
		case <-deadline:
			t.Fatalf("saw %d records within 30 s, want %d", len(got), n)
		}
	}
}

// run runs p in a goroutine until the returned stop is called; stop
// returns Run's error.
func run(t *testing.T, p *stream.Processor[Item], h stream.Handler[Item]) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, h) }()
	return func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("Run did not return within 30 s of its ctx ending")
			return nil
		}
	}
}

func TestProcessorHandsChangesInOrderAndResumesAfterCheckpoint(t *testing.T) {
	leaktest.Check(t, "ddbkit/dynamo/stream.")
	leaktest.Check(t, "ddbkit/dynamo/lease.")
	e := newEnv(t)
	ctx := context.Background()
	a, err := e.items.Save(ctx, Item{Customer: "c1", ID: "a", Amount: 5})
	if err != nil {
		t.Fatal(err)
	}
	a.Amount = 7
	if a, err = e.items.Save(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := e.items.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	c := newCollector()
	stop := run(t, e.processor(t, "w1"), c.handle)
	got := c.waitFor(t, 3)
	e.waitCheckpoint(t, "totals", got[len(got)-1].Seq)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		kind     stream.Kind
		old, new int64
	}{{stream.Insert, 0, 1}, {stream.Modify, 1, 2}, {stream.Remove, 2, 0}}
	if len(got) != 3 {
		t.Fatalf("%d records, want 3: %+v", len(got), got)
	}
	for i, w := range want {
		r := got[i]
		if r.Kind != w.kind || r.OldVersion != w.old || r.NewVersion != w.new {
			t.Errorf("record %d: %v %d->%d, want %v %d->%d", i, r.Kind, r.OldVersion, r.NewVersion, w.kind, w.old, w.new)
		}
		if i > 0 && got[i-1].Seq.Compare(r.Seq) >= 0 {
			t.Errorf("record %d: sequence %s not after %s", i, r.Seq, got[i-1].Seq)
		}
	}
	if got[1].Old.Amount != 5 || got[1].New.Amount != 7 {
		t.Errorf("modify images %+v -> %+v", got[1].Old, got[1].New)
	}

	// A restart resumes after the checkpoint: only the new change.
	if _, err := e.items.Save(ctx, Item{Customer: "c2", ID: "b", Amount: 1}); err != nil {
		t.Fatal(err)
	}
	c2 := newCollector()
	stop = run(t, e.processor(t, "w2"), c2.handle)
	got = c2.waitFor(t, 1)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].New == nil || got[0].New.Customer != "c2" {
		t.Fatalf("after restart: %+v, want only c2's insert", got)
	}
}

func TestProcessorStartsAtLatest(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.items.Save(ctx, Item{Customer: "old", ID: "a"}); err != nil {
		t.Fatal(err)
	}
	c := newCollector()
	seen := make(chan struct{})
	var once sync.Once
	h := func(ctx context.Context, b *stream.Batch[Item]) error {
		once.Do(func() { close(seen) })
		return c.handle(ctx, b)
	}
	p := e.processor(t, "w1", stream.WithStart(stream.Latest))
	stop := run(t, p, h)
	// Write until the processor, started at LATEST, sees one.
	for i := 0; ; i++ {
		if _, err := e.items.Save(ctx, Item{Customer: "new", ID: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-seen:
		case <-time.After(200 * time.Millisecond):
			if i < 100 {
				continue
			}
			t.Fatal("nothing seen")
		}
		break
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, r := range c.recs {
		if r.New != nil && r.New.Customer == "old" {
			t.Fatal("a processor started at Latest handed a change made before it started")
		}
	}
}

// Effects written with Batch.Write land with the checkpoint: the target
// equals the source after handler failures and a second processor.
func TestEffectsWrittenExactlyOnceWithCheckpoint(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for i := range 20 {
		if _, err := e.items.Save(ctx, Item{Customer: fmt.Sprint("c", i%3), ID: fmt.Sprint(i), Amount: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	failed := 0
	seen := 0
	var last stream.SequenceNumber
	done := make(chan struct{})
	h := func(ctx context.Context, b *stream.Batch[Item]) error {
		if err := applyTotals(ctx, e.totals, b); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if failed < 2 { // fail after preparing the effects: nothing may land
			failed++
			return errors.New("injected")
		}
		seen += len(b.Records)
		last = b.Records[len(b.Records)-1].Seq
		if seen >= 20 {
			select {
			case <-done:
			default:
				close(done)
			}
		}
		return nil
	}
	stop := run(t, e.processor(t, "w1", stream.WithBatchSize(3)), h)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("not all records handled")
	}
	mu.Lock()
	upTo := last
	mu.Unlock()
	e.waitCheckpoint(t, "totals", upTo)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	checkTotals(t, e)
}

// applyTotals writes, for each customer of b, its new total: one versioned
// TxSave, committed with the checkpoint.
func applyTotals(ctx context.Context, totals *dynamo.Table[Total], b *stream.Batch[Item]) error {
	delta := map[string]*Total{}
	for _, r := range b.Records {
		var c string
		var d int64
		if r.Old != nil {
			c, d = r.Old.Customer, d-r.Old.Amount
		}
		if r.New != nil {
			c, d = r.New.Customer, d+r.New.Amount
		}
		t := delta[c]
		if t == nil {
			cur, err := totals.Load(ctx, Total{Customer: c}, dynamo.ConsistentRead())
			if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
				return err
			}
			cur.Customer = c
			t = &cur
			delta[c] = t
		}
		t.Sum += d
		t.Changes++
	}
	for _, t := range delta {
		b.Write(totals.TxSave(*t))
	}
	return nil
}

func checkTotals(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	want := map[string]int64{}
	for it, err := range e.items.Scan(ctx, dynamo.ConsistentRead()) {
		if err != nil {
			t.Fatal(err)
		}
		want[it.Customer] += it.Amount
	}
	got := map[string]int64{}
	for tt, err := range e.totals.Scan(ctx, dynamo.ConsistentRead()) {
		if err != nil {
			t.Fatal(err)
		}
		if tt.Sum != 0 {
			got[tt.Customer] = tt.Sum
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("totals %v, source %v", got, want)
	}
}

// waitCheckpoint waits until a checkpoint of processor name is at seq or
// beyond.
func (e *env) waitCheckpoint(t *testing.T, name string, seq stream.SequenceNumber) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		cps, err := e.checkpoints(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cps {
			if c.Compare(seq) >= 0 {
				return
			}
		}
		time.Sleep(20 * time.Millisecond) // polling the table: nothing to wait on
	}
	t.Fatalf("no checkpoint of %s reached %s within 30 s", name, seq)
}

// checkpoints reads the checkpoints of processor name, by shard.
func (e *env) checkpoints(name string) (map[string]stream.SequenceNumber, error) {
	out := map[string]stream.SequenceNumber{}
	prefix := "\x00stream:" + name + ":"
	var start map[string]types.AttributeValue
	for {
		page, err := e.db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(e.leases), ConsistentRead: aws.Bool(true), ExclusiveStartKey: start})
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			k, _ := it["key"].(*types.AttributeValueMemberS)
			sq, _ := it["seq"].(*types.AttributeValueMemberS)
			if k == nil || sq == nil || !strings.HasPrefix(k.Value, prefix) {
				continue
			}
			n, err := stream.ParseSequenceNumber(sq.Value)
			if err != nil {
				return nil, err
			}
			out[strings.TrimPrefix(k.Value, prefix)] = n
		}
		if start = page.LastEvaluatedKey; start == nil {
			return out, nil
		}
	}
}

func TestBadInputRefusedBeforeAnyRequest(t *testing.T) {
	e := newEnv(t)
	lc := e.leaseClient(t, "w")
	sc := &countingStreams{StreamsAPI: e.streams}
	cfg := stream.Config{Streams: sc, Leases: lc, Checkpoints: e.leases, Name: "p"}
	for _, c := range []struct {
		name string
		opts []stream.Option
		cfg  func(*stream.Config)
	}{
		{"batch 0", []stream.Option{stream.WithBatchSize(0)}, nil},
		{"batch 1001", []stream.Option{stream.WithBatchSize(1001)}, nil},
		{"slots 0", []stream.Option{stream.WithSlots(0)}, nil},
		{"start", []stream.Option{stream.WithStart(7)}, nil},
		{"no streams", nil, func(c *stream.Config) { c.Streams = nil }},
		{"no leases", nil, func(c *stream.Config) { c.Leases = nil }},
		{"no checkpoints", nil, func(c *stream.Config) { c.Checkpoints = "" }},
		{"no name", nil, func(c *stream.Config) { c.Name = "" }},
	} {
		cc := cfg
		if c.cfg != nil {
			c.cfg(&cc)
		}
		if _, err := stream.New(e.items, cc, c.opts...); !errors.Is(err, dynamo.ErrInvalidInput) {
			t.Errorf("%s: %v, want ErrInvalidInput", c.name, err)
		}
	}
	if _, err := stream.New(e.items, cfg, stream.WithBatchSize(5000)); err == nil || !strings.Contains(err.Error(), "use 1 to 1000") {
		t.Errorf("batch 5000: %v, want an error naming the range 1 to 1000", err)
	}
	// A table without a stream.
	plain, err := dynamo.NewTable[Item](e.m, e.totals.Name()+"-plain")
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.CreateTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer e.db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(plain.Name())})
	p, err := stream.New(plain, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(context.Background(), func(context.Context, *stream.Batch[Item]) error { return nil }); !errors.Is(err, stream.ErrNoStream) || !strings.Contains(err.Error(), "WithStream") {
		t.Errorf("table without a stream: %v, want ErrNoStream naming WithStream", err)
	}
	// A handler type whose keys are not the table's.
	type Other struct {
		K string `dynamo:"k,hash"`
	}
	other, err := dynamo.NewTable[Other](e.m, e.items.Name())
	if err != nil {
		t.Fatal(err)
	}
	po, err := stream.New(other, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := po.Run(context.Background(), func(context.Context, *stream.Batch[Other]) error { return nil }); !errors.Is(err, dynamo.ErrInvalidInput) || !strings.Contains(err.Error(), "keys") {
		t.Errorf("handler of another type: %v, want ErrInvalidInput naming the keys", err)
	}
	// A handler type with the table's key names but another key type.
	type WrongKind struct {
		Customer int64  `dynamo:"customer,hash"`
		ID       string `dynamo:"id,range"`
	}
	wrong, err := dynamo.NewTable[WrongKind](e.m, e.items.Name())
	if err != nil {
		t.Fatal(err)
	}
	pw, err := stream.New(wrong, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := pw.Run(context.Background(), func(context.Context, *stream.Batch[WrongKind]) error { return nil }); !errors.Is(err, dynamo.ErrInvalidInput) || !strings.Contains(err.Error(), "HASH (N)") {
		t.Errorf("handler whose hash key is a number, the table's a string: %v, want ErrInvalidInput naming HASH (N)", err)
	}
	if err := p.Run(context.Background(), nil); !errors.Is(err, dynamo.ErrInvalidInput) {
		t.Errorf("nil handler: %v", err)
	}
	if n := sc.calls.Load(); n != 0 {
		t.Errorf("%d DynamoDB Streams requests sent for bad input, want none", n)
	}
}

// countingStreams counts the requests sent to DynamoDB Streams.
type countingStreams struct {
	stream.StreamsAPI
	calls atomic.Int64
}

func (c *countingStreams) DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error) {
	c.calls.Add(1)
	return c.StreamsAPI.DescribeStream(ctx, in, optFns...)
}

func (c *countingStreams) GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	c.calls.Add(1)
	return c.StreamsAPI.GetShardIterator(ctx, in, optFns...)
}

func (c *countingStreams) GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	c.calls.Add(1)
	return c.StreamsAPI.GetRecords(ctx, in, optFns...)
}

// Commits whose answers are lost (applied, then the connection reset) are
// neither lost nor applied twice: the target equals the source.
func TestLostCommitAnswersApplyOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	drop := dynamotest.NewDropper("TransactWriteItems")
	dm := dynamo.NewMapper(drop.Client(t))
	items, err := dynamo.NewTable[Item](dm, e.items.Name())
	if err != nil {
		t.Fatal(err)
	}
	totals, err := dynamo.NewTable[Total](dm, e.totals.Name())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		if _, err := e.items.Save(ctx, Item{Customer: fmt.Sprint("c", i%2), ID: fmt.Sprint(i), Amount: int64(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	lc, err := lease.New(dm, e.leases, lease.WithOwner("w1"), lease.WithLeaseDuration(2*time.Second),
		lease.WithHeartbeatInterval(500*time.Millisecond), lease.WithPollInterval(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close(ctx)
	p, err := stream.New(items, stream.Config{Streams: e.streams, Leases: lc, Checkpoints: e.leases, Name: "totals"},
		stream.WithSlots(1), stream.WithBatchSize(2), stream.WithIdleWait(10*time.Millisecond, 50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var last stream.SequenceNumber
	n := 0
	h := func(ctx context.Context, b *stream.Batch[Item]) error {
		if err := applyTotals(ctx, totals, b); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if n%2 == 0 {
			drop.Arm(1) // this batch's commit lands, its answer is lost
		}
		n++
		last = b.Records[len(b.Records)-1].Seq
		return nil
	}
	stop := run(t, p, h)
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		l, batches := last, n
		mu.Unlock()
		cps, err := e.checkpoints("totals")
		if err != nil {
			t.Fatal(err)
		}
		done := false
		for _, c := range cps {
			done = done || (l.String() != "" && c.Compare(l) >= 0 && batches >= 6)
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("checkpoints %v after %d batches", cps, batches)
		}
		time.Sleep(20 * time.Millisecond) // polling the table
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if drop.Dropped() == 0 {
		t.Fatal("no answer was dropped")
	}
	checkTotals(t, e)
}
