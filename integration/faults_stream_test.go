package integration

// The stream part of the fault suite (see faults_test.go): processors of one
// table's stream (stream.Processor) keep a per-customer total and a per-item
// view of an items table in step, each worker over its own faulty
// transports, one for DynamoDB (its leases, checkpoints and effects) and one
// for DynamoDB Streams (DescribeStream, GetShardIterator, GetRecords), while
// two writers, through faults too, change the items. Handovers: the worker
// that handled a batch last leaves and a new one joins, scaled(2) times; then
// the holder's network is cut while its handler holds a batch, until another
// worker has handled the shard's records, and the batch is let go: its
// commit must be refused. Checked afterwards, without faults: each item's
// view lists the item's versions 1..v once each and in order (every change's
// effect applied exactly once, per item in order) and holds its amount; the
// totals equal the source; every version reached a handler, each batch in
// order; no checkpoint moved backwards.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
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

// fsItem is the source: an order line of a customer.
type fsItem struct {
	Customer string `dynamo:"customer,hash"`
	ID       string `dynamo:"id,range"`
	Amount   int64  `dynamo:"amount"`
	Version  int64  `dynamo:"version,version"`
}

// fsTotal is a customer's sum of amounts, kept from the stream.
type fsTotal struct {
	Customer string `dynamo:"customer,hash"`
	Sum      int64  `dynamo:"sum"`
	Rev      int64  `dynamo:"rev,version"`
}

// fsView is an item as the stream told it: its amount, and the versions
// whose effects were applied, in the order they were.
type fsView struct {
	Key      string  `dynamo:"key,hash"`
	Amount   int64   `dynamo:"amount"`
	Versions []int64 `dynamo:"versions"`
	Rev      int64   `dynamo:"rev,version"`
}

// fsBatch is a batch as a handler was handed it.
type fsBatch struct {
	worker string
	token  int64
	shard  string
	recs   []fsRec
}

type fsRec struct {
	seq      stream.SequenceNumber
	item     string
	old, new int64 // versions
}

const fsProcessor = "faults"

func TestFaultsStream(t *testing.T) {
	leaktest.Check(t, "ddbkit/dynamo/stream.")
	leaktest.Check(t, "ddbkit/dynamo/lease.")
	const leaseDur = time.Second
	clean := dynamotest.Client(t)
	cm := dynamo.NewMapper(clean)
	bg := context.Background()
	itemsName := fsTableName("items")
	totalsName, viewsName, leasesName := fsTableName("totals"), fsTableName("views"), fsTableName("leases")
	items := fsTable[fsItem](t, cm, itemsName)
	if err := items.CreateTable(bg, dynamo.WithStream(types.StreamViewTypeNewAndOldImages)); err != nil {
		t.Fatal(err)
	}
	totals, views := fsTable[fsTotal](t, cm, totalsName), fsTable[fsView](t, cm, viewsName)
	for _, create := range []func(context.Context, ...dynamo.CreateTableOption) error{totals.CreateTable, views.CreateTable} {
		if err := create(bg); err != nil {
			t.Fatal(err)
		}
	}
	lc0, err := lease.New(cm, leasesName)
	if err != nil {
		t.Fatal(err)
	}
	if err := lc0.CreateTable(bg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range []string{itemsName, totalsName, viewsName, leasesName} {
			clean.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(n)})
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	var mu sync.Mutex
	var rep faultReport
	var anomalies []string
	var transports []*dynamotest.Faults
	var batches []fsBatch
	handled := 0              // records handed to handlers
	var failures atomic.Int64 // batches whose handler failed
	progress := make(chan struct{}, 1)
	newFaults := func(salt uint64) *dynamotest.Faults {
		f := dynamotest.NewFaults(faultConfig(t, salt, scaled(200)), nil)
		mu.Lock()
		transports = append(transports, f)
		mu.Unlock()
		return f
	}
	anomaly := func(format string, args ...any) {
		mu.Lock()
		anomalies = append(anomalies, fmt.Sprintf(format, args...))
		mu.Unlock()
	}

	// Writers: versioned Updates of 16 items each, through faults.
	wctx, stopWriters := context.WithCancel(ctx)
	var wwg sync.WaitGroup
	for wi := range 2 {
		wt := fsTable[fsItem](t, dynamo.NewMapper(newFaults(uint64(1200+wi)).Client(t, dynamotest.RetryBudget(10))), itemsName)
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			r := rand.New(rand.NewPCG(*faultSeed, uint64(wi)))
			for wctx.Err() == nil {
				key := fsItem{Customer: fmt.Sprint("c", r.IntN(4)), ID: fmt.Sprint(wi, "-", r.IntN(4))}
				amount := int64(r.IntN(100))
				_, err := wt.Update(wctx, key, func(cur fsItem) (fsItem, error) {
					cur.Customer, cur.ID, cur.Amount = key.Customer, key.ID, amount
					return cur, nil
				})
				mu.Lock()
				rep.Ops++
				if err == nil {
					rep.Acked++
				}
				mu.Unlock()
				time.Sleep(40 * time.Millisecond) // pace the writers
			}
		}()
	}

	// Checkpoints never move back: read without faults every 20 ms.
	cpDone := make(chan struct{})
	go func() {
		defer close(cpDone)
		prev := map[string]fsCheckpoint{}
		for wctx.Err() == nil {
			cps, err := fsCheckpoints(clean, leasesName)
			if err == nil {
				for sh, c := range cps {
					p, ok := prev[sh]
					if ok && (c.seq.Compare(p.seq) < 0 || c.version < p.version || (p.ended && !c.ended)) {
						anomaly("checkpoint of shard %s moved back: %+v after %+v", sh, c, p)
					}
					prev[sh] = c
				}
			}
			time.Sleep(20 * time.Millisecond) // polling the table: nothing to wait on
		}
	}()

	// Workers.
	type worker struct {
		name   string
		cut    atomic.Bool   // its network is cut
		hold   atomic.Bool   // its handler holds the next batch until let go
		held   chan int64    // the token of the batch held
		letGo  chan struct{} // closed to let the held batch go
		lost   atomic.Bool   // the held batch's lease was lost when it was let go
		cancel context.CancelFunc
		done   chan error
	}
	var lastWorker *worker
	start := func(i int) *worker {
		w := &worker{name: fmt.Sprintf("w%d", i), held: make(chan int64, 1), letGo: make(chan struct{})}
		cutOpt := func(next http.RoundTripper) *http.Client {
			return &http.Client{Transport: fsCut{next: next, cut: &w.cut}}
		}
		fd, fs := newFaults(uint64(1300+2*i)), newFaults(uint64(1301+2*i))
		db := fd.Client(t, dynamotest.RetryBudget(5), func(o *dynamodb.Options) { o.HTTPClient = cutOpt(fd) })
		m := dynamo.NewMapper(db)
		lc, err := lease.New(m, leasesName, lease.WithOwner(w.name), lease.WithLeaseDuration(leaseDur),
			lease.WithHeartbeatInterval(leaseDur/4), lease.WithPollInterval(50*time.Millisecond), lease.WithClockSkewRate(1.25))
		if err != nil {
			t.Fatal(err)
		}
		src := fsTable[fsItem](t, m, itemsName)
		tt, vt := fsTable[fsTotal](t, m, totalsName), fsTable[fsView](t, m, viewsName)
		p, err := stream.New(src, stream.Config{Streams: fsStreams(dynamotest.Endpoint(t), cutOpt(fs)), Leases: lc, Checkpoints: leasesName, Name: fsProcessor},
			stream.WithSlots(4), stream.WithBatchSize(10), stream.WithIdleWait(10*time.Millisecond, 50*time.Millisecond),
			stream.WithShardRefresh(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		fail := rand.New(rand.NewPCG(*faultSeed, uint64(i)))
		h := func(ctx context.Context, b *stream.Batch[fsItem]) error {
			if err := fsApply(ctx, tt, vt, b); err != nil {
				return err
			}
			if fail.IntN(5) == 0 { // the handler fails after adding its effects: none may land
				failures.Add(1)
				return errors.New("a handler failure injected by the test")
			}
			fb := fsBatch{worker: w.name, token: b.Lease().Token(), shard: b.Shard}
			for _, r := range b.Records {
				it := r.New
				if it == nil {
					it = r.Old
				}
				fb.recs = append(fb.recs, fsRec{seq: r.Seq, item: it.Customer + "/" + it.ID, old: r.OldVersion, new: r.NewVersion})
			}
			mu.Lock()
			batches = append(batches, fb)
			handled += len(fb.recs)
			lastWorker = w
			mu.Unlock()
			select {
			case progress <- struct{}{}:
			default:
			}
			if w.hold.CompareAndSwap(true, false) {
				// A pause: its network cut, its lease runs out while it
				// holds the batch; ctx is not watched, as in a stopped
				// process.
				w.cut.Store(true)
				w.held <- b.Lease().Token()
				<-w.letGo
				w.lost.Store(b.Lease().Err() != nil)
				w.cut.Store(false)
			}
			return nil
		}
		rctx, rcancel := context.WithCancel(ctx)
		w.cancel, w.done = rcancel, make(chan error, 1)
		go func() {
			err := p.Run(rctx, h)
			lc.Close(context.Background())
			w.done <- err
		}()
		return w
	}
	stop := func(w *worker) {
		w.cancel()
		switch err := <-w.done; {
		case errors.Is(err, dynamo.ErrInvalidInput), errors.Is(err, stream.ErrTrimmed):
			anomaly("%s: Run: %v", w.name, err)
		case err != nil:
			t.Logf("%s: leaving through faults: %v", w.name, err) // its slots are taken after the lease runs out
		}
	}
	// waitHandled waits until handlers have been handed n records more
	// than now; not, when not nil, must not be the last to be handed any.
	waitHandled := func(n int, what string, not *worker) {
		mu.Lock()
		goal := handled + n
		mu.Unlock()
		deadline := time.After(30 * time.Second)
		for {
			mu.Lock()
			got, last := handled, lastWorker
			mu.Unlock()
			if got >= goal && (not == nil || last != not) {
				return
			}
			select {
			case <-progress:
			case <-deadline:
				t.Fatalf("%s: %d records handled in 30 s, want %d", what, got, goal)
			}
		}
	}

	ws := []*worker{start(0), start(1), start(2)}
	next := 3
	waitHandled(scaled(20), "start", nil)
	handovers := 0
	for range scaled(2) {
		mu.Lock()
		h := lastWorker
		mu.Unlock()
		i := slices.Index(ws, h)
		if i < 0 {
			t.Fatalf("%s handled the last batch but is not running", h.name)
		}
		stop(h) // leave: the shard is handed over at once
		ws = append(slices.Delete(ws, i, i+1), start(next))
		next++
		handovers++
		waitHandled(scaled(20), "after a handover", h)
	}
	// A pause: the holder's next batch is held with its network cut until
	// another worker has handled records of the shard.
	mu.Lock()
	paused := lastWorker
	mu.Unlock()
	paused.hold.Store(true)
	var heldToken int64
	select {
	case heldToken = <-paused.held:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s held no batch within 30 s", paused.name)
	}
	waitHandled(10, "while "+paused.name+" is paused", paused)
	close(paused.letGo)
	handovers++
	waitHandled(scaled(20), "after the pause", nil)
	stopWriters()
	wwg.Wait()
	<-cpDone

	// Wait for the target to catch up with the source, then stop.
	deadline := time.Now().Add(60 * time.Second)
	for len(fsCompare(t, items, totals, views)) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond) // polling the tables
	}
	for _, w := range ws {
		stop(w)
	}
	if !paused.lost.Load() {
		anomaly("%s's lease (token %d) was still live after its pause: the pause proved nothing", paused.name, heldToken)
	}

	// The target equals the source: every change applied once, per item
	// in order.
	anomalies = append(anomalies, fsCompare(t, items, totals, views)...)
	// Every version was handed to a handler; each batch in order.
	seen := map[string]map[int64]bool{}
	shards := map[string]bool{}
	again := 0 // batches starting at or before a record handed before
	upTo := map[string]stream.SequenceNumber{}
	for _, b := range batches {
		shards[b.shard] = true
		if b.recs[0].seq.Compare(upTo[b.shard]) <= 0 {
			again++
		}
		if l := b.recs[len(b.recs)-1].seq; l.Compare(upTo[b.shard]) > 0 {
			upTo[b.shard] = l
		}
		last := map[string]int64{}
		for i, r := range b.recs {
			if i > 0 && r.seq.Compare(b.recs[i-1].seq) <= 0 {
				anomalies = append(anomalies, fmt.Sprintf("%s token %d shard %s: record %s after %s", b.worker, b.token, b.shard, r.seq, b.recs[i-1].seq))
			}
			if l, ok := last[r.item]; ok && r.old != l {
				anomalies = append(anomalies, fmt.Sprintf("%s token %d: item %s changed from version %d after version %d in one batch", b.worker, b.token, r.item, r.old, l))
			}
			last[r.item] = r.new
			if seen[r.item] == nil {
				seen[r.item] = map[int64]bool{}
			}
			seen[r.item][r.new] = true
		}
	}
	for it, err := range items.Scan(bg, dynamo.ConsistentRead()) {
		if err != nil {
			t.Fatal(err)
		}
		key := it.Customer + "/" + it.ID
		for v := int64(1); v <= it.Version; v++ {
			if !seen[key][v] {
				anomalies = append(anomalies, fmt.Sprintf("item %s version %d never reached a handler", key, v))
			}
		}
	}
	for _, f := range transports {
		rep.Stats = rep.Stats.Add(f.Stats())
	}
	rep.Anomalies = len(anomalies)
	t.Logf("%d records handed in %d batches over %d shards, %d batches handed again; %d handler failures injected; %d handovers (%d leaving, 1 paused past its lease); %d workers in all",
		handled, len(batches), len(shards), again, failures.Load(), handovers, handovers-1, next)
	reportAnomalies(t, anomalies)
	logFaults(t, rep)
}

// fsApply adds b's effects to the totals and views, written by the
// processor with b's checkpoint.
func fsApply(ctx context.Context, totals *dynamo.Table[fsTotal], views *dynamo.Table[fsView], b *stream.Batch[fsItem]) error {
	// Read the batch's views and totals: two requests.
	vw, tot := map[string]*fsView{}, map[string]*fsTotal{}
	var vkeys []fsView
	var tkeys []fsTotal
	for _, r := range b.Records {
		it := r.New
		if it == nil {
			it = r.Old
		}
		if it == nil {
			return fmt.Errorf("record %s carries no image", r.Seq)
		}
		if k := it.Customer + "/" + it.ID; vw[k] == nil {
			vw[k] = &fsView{Key: k}
			vkeys = append(vkeys, fsView{Key: k})
		}
		if tot[it.Customer] == nil {
			tot[it.Customer] = &fsTotal{Customer: it.Customer}
			tkeys = append(tkeys, fsTotal{Customer: it.Customer})
		}
	}
	vs, vfound, err := views.BatchLoadIndexed(ctx, vkeys, dynamo.ConsistentRead())
	if err != nil {
		return err
	}
	for i, v := range vs {
		if vfound[i] {
			*vw[v.Key] = v
		}
	}
	ts, tfound, err := totals.BatchLoadIndexed(ctx, tkeys, dynamo.ConsistentRead())
	if err != nil {
		return err
	}
	for i, tt := range ts {
		if tfound[i] {
			*tot[tt.Customer] = tt
		}
	}
	for _, r := range b.Records {
		it := r.New
		if it == nil {
			it = r.Old
		}
		v, tt := vw[it.Customer+"/"+it.ID], tot[it.Customer]
		if r.Old != nil {
			tt.Sum -= r.Old.Amount
		}
		if r.New != nil {
			tt.Sum += r.New.Amount
			v.Amount = r.New.Amount
		}
		v.Versions = append(v.Versions, r.NewVersion)
	}
	for _, tt := range tot {
		b.Write(totals.TxSave(*tt))
	}
	for _, v := range vw {
		b.Write(views.TxSave(*v))
	}
	return nil
}

// fsCompare reads source and target without faults and returns how they
// differ: a view whose versions are not 1..v or whose amount is not the
// item's, a total that is not the sum of the customer's amounts.
func fsCompare(t *testing.T, items *dynamo.Table[fsItem], totals *dynamo.Table[fsTotal], views *dynamo.Table[fsView]) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	src := map[string]fsItem{}
	sums := map[string]int64{}
	for it, err := range items.Scan(ctx, dynamo.ConsistentRead()) {
		if err != nil {
			return []string{fmt.Sprintf("scanning the items: %v", err)}
		}
		src[it.Customer+"/"+it.ID] = it
		sums[it.Customer] += it.Amount
	}
	for v, err := range views.Scan(ctx, dynamo.ConsistentRead()) {
		if err != nil {
			return []string{fmt.Sprintf("scanning the views: %v", err)}
		}
		it, ok := src[v.Key]
		want := make([]int64, it.Version)
		for i := range want {
			want[i] = int64(i + 1)
		}
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("view of %s, an item that does not exist", v.Key))
		case !slices.Equal(v.Versions, want):
			out = append(out, fmt.Sprintf("view of %s applied versions %v, want 1..%d once each, in order", v.Key, v.Versions, it.Version))
		case v.Amount != it.Amount:
			out = append(out, fmt.Sprintf("view of %s has amount %d, the item %d", v.Key, v.Amount, it.Amount))
		}
		delete(src, v.Key)
	}
	for k := range src {
		out = append(out, fmt.Sprintf("item %s has no view", k))
	}
	for tt, err := range totals.Scan(ctx, dynamo.ConsistentRead()) {
		if err != nil {
			return []string{fmt.Sprintf("scanning the totals: %v", err)}
		}
		if tt.Sum != sums[tt.Customer] {
			out = append(out, fmt.Sprintf("total of %s is %d, its items sum to %d", tt.Customer, tt.Sum, sums[tt.Customer]))
		}
		delete(sums, tt.Customer)
	}
	for c := range sums {
		out = append(out, fmt.Sprintf("customer %s has no total", c))
	}
	slices.Sort(out)
	return out
}

// fsCheckpoint is a checkpoint as stored.
type fsCheckpoint struct {
	seq     stream.SequenceNumber
	version int64
	ended   bool
}

// fsCheckpoints reads the checkpoints of the test's processor, by shard.
func fsCheckpoints(c *dynamodb.Client, table string) (map[string]fsCheckpoint, error) {
	out := map[string]fsCheckpoint{}
	prefix := "\x00stream:" + fsProcessor + ":"
	var start map[string]types.AttributeValue
	for {
		page, err := c.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true), ExclusiveStartKey: start})
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			k, _ := it["key"].(*types.AttributeValueMemberS)
			if k == nil || !strings.HasPrefix(k.Value, prefix) {
				continue
			}
			var cp fsCheckpoint
			if s, ok := it["seq"].(*types.AttributeValueMemberS); ok {
				if cp.seq, err = stream.ParseSequenceNumber(s.Value); err != nil {
					return nil, err
				}
			}
			if v, ok := it["version"].(*types.AttributeValueMemberN); ok {
				fmt.Sscan(v.Value, &cp.version)
			}
			if e, ok := it["ended"].(*types.AttributeValueMemberBOOL); ok {
				cp.ended = e.Value
			}
			out[strings.TrimPrefix(k.Value, prefix)] = cp
		}
		if start = page.LastEvaluatedKey; start == nil {
			return out, nil
		}
	}
}

// fsStreams returns a DynamoDB Streams client for the test server over hc,
// retrying as dynamotest.RetryBudget(5) does (a few milliseconds apart, no
// retry quota).
func fsStreams(endpoint string, hc *http.Client) *dynamodbstreams.Client {
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = "us-east-1"
	}
	return dynamodbstreams.New(dynamodbstreams.Options{
		Region:       region,
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("dynamotest", "dynamotest", ""),
		HTTPClient:   hc,
		Retryer: retry.NewStandard(func(so *retry.StandardOptions) {
			so.Backoff = retry.BackoffDelayerFunc(func(attempt int, _ error) (time.Duration, error) {
				return rand.N(4 * time.Millisecond << min(max(attempt, 1), 4)), nil
			})
			so.MaxAttempts = 5
			so.RateLimiter = ratelimit.None
		}),
	})
}

// fsCut fails every request with a connection reset, before sending it,
// while cut is set: a worker cut off the network.
type fsCut struct {
	next http.RoundTripper
	cut  *atomic.Bool
}

func (c fsCut) RoundTrip(r *http.Request) (*http.Response, error) {
	if c.cut.Load() {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, errors.New("read tcp 127.0.0.1: connection reset by peer (the test cut this worker off)")
	}
	return c.next.RoundTrip(r)
}

func fsTable[T any](t *testing.T, m *dynamo.Mapper, name string) *dynamo.Table[T] {
	t.Helper()
	tb, err := dynamo.NewTable[T](m, name)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

var fsTables atomic.Int64

func fsTableName(what string) string {
	return fmt.Sprintf("faults-stream-%s-%d-%d", what, time.Now().UnixNano()%1e9, fsTables.Add(1))
}
