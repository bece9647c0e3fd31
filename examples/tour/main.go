package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/commitlog"
	"github.com/ddbkit/dynamo/commitlog/s3test"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/examples/sessions/cart"
	"github.com/ddbkit/dynamo/lease"
)

func main() {
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	endpoint, stop, err := dynamotest.Start(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	fmt.Printf("DynamoDB at %s, ready after %v.\n", endpoint, time.Since(began).Round(100*time.Millisecond))
	if err := run(ctx, os.Stdout, dynamotest.NewClient(endpoint)); err != nil {
		stop()
		log.Fatal(err)
	}
	fmt.Printf("\nThe tour took %v in all.\n", time.Since(began).Round(100*time.Millisecond))
}

// tour prints numbered steps and remembers the tables to delete.
type tour struct {
	w          io.Writer
	client     *dynamodb.Client
	suffix     string
	tables     []string
	part, step int
}

func (t *tour) title(s string) {
	t.part++
	t.step = 0
	fmt.Fprintf(t.w, "\n%d. %s\n", t.part, s)
}

// say prints the next numbered step.
func (t *tour) say(format string, args ...any) {
	t.step++
	fmt.Fprintf(t.w, "%d.%d %s\n", t.part, t.step, fmt.Sprintf(format, args...))
}

// more prints a line that belongs to the step before.
func (t *tour) more(format string, args ...any) {
	fmt.Fprintf(t.w, "    %s\n", fmt.Sprintf(format, args...))
}

// table returns a name for a new table and remembers to delete it.
func (t *tour) table(name string) string {
	n := "tour-" + name + "-" + t.suffix
	t.tables = append(t.tables, n)
	return n
}

func run(ctx context.Context, w io.Writer, client *dynamodb.Client) error {
	t := &tour{w: w, client: client, suffix: fmt.Sprintf("%08x", rand.Uint32())}
	defer func() {
		for _, name := range t.tables {
			_, _ = client.DeleteTable(context.WithoutCancel(ctx), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		}
	}()
	for _, part := range []func(context.Context) error{t.versions, t.lostAnswer, t.carts, t.leader, t.commitLog} {
		if err := part(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Book is an item of the books table; Version makes it optimistically locked.
type Book struct {
	ISBN    string   `dynamo:"ISBN,hash"`
	Title   string   `dynamo:"title"`
	Tags    []string `dynamo:"tags,set,omitempty"`
	Version int64    `dynamo:"version,version"`
}

// versions: a save, two writers in conflict, and Update.
func (t *tour) versions(ctx context.Context) error {
	t.title("One versioned item")
	books, err := dynamo.NewTable[Book](dynamo.NewMapper(t.client), t.table("books"))
	if err != nil {
		return err
	}
	if err := books.CreateTable(ctx); err != nil {
		return err
	}
	draft := Book{ISBN: "978-0134190440", Title: "The Go Programming Language"}
	saved, err := books.Save(ctx, draft)
	if err != nil {
		return err
	}
	t.say("Save a new book: the argument is untouched (version %d); the saved copy has version %d.", draft.Version, saved.Version)

	alice, err := books.Load(ctx, Book{ISBN: draft.ISBN}, dynamo.ConsistentRead())
	if err != nil {
		return err
	}
	bob := alice
	alice.Tags = []string{"golang"}
	if alice, err = books.Save(ctx, alice); err != nil {
		return err
	}
	bob.Title += " (2nd printing)"
	_, err = books.Save(ctx, bob)
	if !errors.Is(err, dynamo.ErrVersionConflict) {
		return fmt.Errorf("bob's save: got %v, want a version conflict", err)
	}
	current, cerr := books.Current(err)
	if cerr != nil {
		return cerr
	}
	t.say("Alice and Bob both load version 1. Alice saves version %d; Bob's save is refused:", alice.Version)
	t.more("%v", err)
	t.more("The error carries the stored item (version %d, tags %v): no read needed to see why.", current.Version, current.Tags)

	final, err := books.Update(ctx, Book{ISBN: draft.ISBN}, func(b Book) (Book, error) {
		b.Title = bob.Title
		return b, nil
	})
	if err != nil {
		return err
	}
	t.say("Update applies Bob's change to what is stored: %q, tags %v, version %d — both changes kept.", final.Title, final.Tags, final.Version)
	return nil
}

// lostAnswer: a write DynamoDB applied whose answer never arrived, as the
// SDK alone (and so DynamoDBMapper and the Enhanced Client) reports it, and
// as the mapper does.
func (t *tour) lostAnswer(ctx context.Context) error {
	t.title("A write whose answer is lost")
	// Both clients reach DynamoDB through a network that loses the answer
	// to the next UpdateItem once armed: the server applies it, the client
	// sees a reset connection.
	drop := dynamotest.NewDropper("UpdateItem")
	defer drop.CloseIdleConnections()
	lossy := dynamodb.New(t.client.Options(), func(o *dynamodb.Options) { o.HTTPClient = drop.HTTPClient() })
	books, err := dynamo.NewTable[Book](dynamo.NewMapper(lossy), t.table("lost"))
	if err != nil {
		return err
	}
	if err := books.CreateTable(ctx); err != nil {
		return err
	}
	java, err := books.Save(ctx, Book{ISBN: "java", Title: "Effective Java"})
	if err != nil {
		return err
	}
	gopher, err := books.Save(ctx, Book{ISBN: "go", Title: "The Go Programming Language"})
	if err != nil {
		return err
	}
	t.say("Two books at version 1. The network will lose the answer to the next write of each.")

	// What DynamoDBMapper sends: UpdateItem of version+1 under version = held.
	drop.Arm(1)
	_, err = lossy.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(books.Name()),
		Key:                       map[string]types.AttributeValue{"ISBN": &types.AttributeValueMemberS{Value: java.ISBN}},
		UpdateExpression:          aws.String("SET title = :t, version = :next"),
		ConditionExpression:       aws.String("version = :held"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberS{Value: java.Title + " (3rd ed.)"}, ":next": &types.AttributeValueMemberN{Value: "2"}, ":held": &types.AttributeValueMemberN{Value: "1"}},
	})
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return fmt.Errorf("the SDK's resend of an applied write: got %v, want ConditionalCheckFailedException", err)
	}
	stored, err := books.Load(ctx, Book{ISBN: java.ISBN}, dynamo.ConsistentRead())
	if err != nil {
		return err
	}
	t.say("The SDK alone, as DynamoDBMapper and the Enhanced Client use it (version 1 → 2):")
	t.more("the answer is lost, the SDK resends, DynamoDB refuses the resend (the version is")
	t.more("2 now) and the caller is told: ConditionalCheckFailedException — a conflict.")
	t.more("Yet the table holds its change: %q, version %d. Retry it, and it is made twice.", stored.Title, stored.Version)

	drop.Arm(1)
	gopher.Title += " (2nd printing)"
	saved, err := books.Save(ctx, gopher)
	if err != nil {
		return fmt.Errorf("the mapper's save whose answer was lost: %w", err)
	}
	if drop.Dropped() != 2 {
		return fmt.Errorf("%d answers lost, want 2", drop.Dropped())
	}
	t.say("The mapper, same loss (version 1 → 2): it does not resend; it reads the item, finds")
	t.more("the token its write stored, and reports the success it was: %q, version %d.", saved.Title, saved.Version)
	return nil
}

// carts: two stateless cart servers change one cart at the same moment.
func (t *tour) carts(ctx context.Context) error {
	t.title("Shopping carts kept by two stateless servers (examples/sessions)")
	table := t.table("carts")
	// Server B's first write is held back until A's has landed, so that
	// the two writes really collide.
	held := &holdFirstWrite{Client: t.client, arrived: make(chan struct{}), release: make(chan struct{})}
	a, err := cart.New(dynamo.NewMapper(t.client), table)
	if err != nil {
		return err
	}
	b, err := cart.New(dynamo.NewMapper(held), table)
	if err != nil {
		return err
	}
	if err := a.CreateTable(ctx); err != nil {
		return err
	}
	urlA, stopA, err := serve(a)
	if err != nil {
		return err
	}
	defer stopA()
	urlB, stopB, err := serve(b)
	if err != nil {
		return err
	}
	defer stopB()
	hc := &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	add := func(url, session, sku string, qty int, header ...string) (reply, error) {
		return call(ctx, hc, "POST", url+"/carts/"+session+"/items", fmt.Sprintf(`{"sku":%q,"qty":%d}`, sku, qty), header...)
	}
	t.say("Cart servers A (%s) and B (%s) share the table %s", urlA, urlB, table)
	t.more("and keep nothing themselves, like two processes behind a load balancer.")

	// B adds a pen: it reads the (missing) cart, and its write waits.
	type result struct {
		r   reply
		err error
	}
	pen := make(chan result, 1)
	go func() {
		r, err := add(urlB, "alice", "pen", 1)
		pen <- result{r, err}
	}()
	select {
	case <-held.arrived:
	case r := <-pen:
		return fmt.Errorf("server B's add returned before its write was held: %+v", r)
	case <-ctx.Done():
		return ctx.Err()
	}
	book, err := add(urlA, "alice", "book", 1)
	close(held.release)
	res := <-pen
	if err == nil {
		err = res.err
	}
	if err != nil {
		return err
	}
	penR := res.r
	if err := errors.Join(book.check(), penR.check()); err != nil {
		return err
	}
	if b.Conflicts() != 1 {
		return fmt.Errorf("server B met %d version conflicts, want 1", b.Conflicts())
	}
	t.say("At the same moment, A adds a book and B adds a pen to the cart \"alice\"")
	t.more("(the tour holds B's write back until A's has landed, so that they collide):")
	t.more("A: version %d: %s", book.cart.Version, items(book.cart))
	t.more("B: version %d: %s", penR.cart.Version, items(penR.cart))
	t.more("B's write was refused (a version conflict: A's came first); Update applied B's")
	t.more("change again to the cart the conflict carried — no extra read — and saved it.")
	got, err := call(ctx, hc, "GET", urlA+"/carts/alice", "")
	if err != nil {
		return err
	}
	if err := got.check(); err != nil {
		return err
	}
	t.say("GET from A: version %d: %s — both changes kept.", got.cart.Version, items(got.cart))

	// A burst: many adds through both servers at once.
	const n, skus = 40, 4
	before := a.Conflicts() + b.Conflicts()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			url := urlA
			if i%2 == 1 {
				url = urlB
			}
			r, err := add(url, "bob", fmt.Sprint("item-", i%skus), 1)
			if err == nil {
				err = r.check()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	got, err = call(ctx, hc, "GET", urlB+"/carts/bob", "")
	if err != nil {
		return err
	}
	if err := got.check(); err != nil {
		return err
	}
	for _, it := range got.cart.Items {
		if it.Qty != n/skus {
			return fmt.Errorf("cart bob: %s×%d, want ×%d", it.SKU, it.Qty, n/skus)
		}
	}
	if len(got.cart.Items) != skus || got.cart.Version != n {
		return fmt.Errorf("cart bob: %d items at version %d, want %d at version %d", len(got.cart.Items), got.cart.Version, skus, n)
	}
	t.say("%d adds to the cart \"bob\" at once, half through each server: all 200 OK.", n)
	t.more("Adds on one server share its writes and never conflict with each other; %d", a.Conflicts()+b.Conflicts()-before)
	t.more("conflicts between the two servers were redone. Cart: version %d: %s", got.cart.Version, items(got.cart))
	t.more("— %d adds, none lost, none doubled.", n)

	first, err := add(urlA, "alice", "pen", 2, "Idempotency-Key", "order-7")
	if err != nil {
		return err
	}
	again, err := add(urlB, "alice", "pen", 2, "Idempotency-Key", "order-7")
	if err != nil {
		return err
	}
	if err := errors.Join(first.check(), again.check()); err != nil {
		return err
	}
	if !again.replayed || again.cart.Version != first.cart.Version {
		return fmt.Errorf("a retried add was applied again: %+v, then %+v", first, again)
	}
	t.say("A client sends \"add 2 pens\" with Idempotency-Key order-7 to A, then retries it at B:")
	t.more("both answer version %d: %s — added once (B answers Idempotent-Replayed: true).", again.cart.Version, items(again.cart))

	// A server whose clock is 31 minutes ahead: the carts expired for it.
	later, err := cart.New(dynamo.NewMapper(t.client), table, cart.WithClock(clock.NewFake(time.Now().Add(31*time.Minute))))
	if err != nil {
		return err
	}
	urlL, stopL, err := serve(later)
	if err != nil {
		return err
	}
	defer stopL()
	exp, err := call(ctx, hc, "GET", urlL+"/carts/alice", "")
	if err != nil {
		return err
	}
	if exp.status != http.StatusNotFound {
		return fmt.Errorf("GET of an expired cart: %d %+v", exp.status, exp.cart)
	}
	t.say("Carts expire %v after their last change (DynamoDB TTL). A server whose clock", cart.DefaultTTL)
	t.more("reads 31 minutes later gets %d:", exp.status)
	t.more("  %s", exp.err)
	t.more("The item is still in the table: DynamoDB deletes expired items when it gets to")
	t.more("it (on AWS, within days), so reads check the expiry time themselves.")
	return nil
}

// holdFirstWrite is a dynamo.Client whose first UpdateItem waits until
// release is closed, after closing arrived.
type holdFirstWrite struct {
	dynamo.Client
	once             sync.Once
	arrived, release chan struct{}
}

func (h *holdFirstWrite) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	first := false
	h.once.Do(func() { first = true })
	if first {
		close(h.arrived)
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return h.Client.UpdateItem(ctx, in, opts...)
}

// serve serves h on a free loopback port until stop is called.
func serve(h http.Handler) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close(); <-done }, nil
}

// reply is a cart server's answer.
type reply struct {
	status   int
	cart     cart.Cart
	err      string
	replayed bool
}

// check returns an error unless r is a 200 OK.
func (r reply) check() error {
	if r.status != http.StatusOK {
		return fmt.Errorf("cart server answered %d: %s", r.status, r.err)
	}
	return nil
}

func call(ctx context.Context, hc *http.Client, method, url, body string, header ...string) (reply, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := hc.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, replayed: resp.Header.Get("Idempotent-Replayed") == "true"}
	if resp.StatusCode == http.StatusOK {
		err = json.NewDecoder(resp.Body).Decode(&r.cart)
	} else {
		var e struct{ Error string }
		err = json.NewDecoder(resp.Body).Decode(&e)
		r.err = e.Error
	}
	if err != nil {
		return r, fmt.Errorf("%s %s: %d: %w", method, url, resp.StatusCode, err)
	}
	return r, nil
}

// items formats a cart's lines as "book×1, pen×1".
func items(c cart.Cart) string {
	var s []string
	for _, it := range c.Items {
		s = append(s, fmt.Sprintf("%s×%d", it.SKU, it.Qty))
	}
	return strings.Join(s, ", ")
}

// Report is what the leader writes, fenced by its lease.
type Report struct {
	Name    string `dynamo:"name,hash"`
	Writer  string `dynamo:"writer"`
	Token   int64  `dynamo:"token"`
	Version int64  `dynamo:"version,version"`
}

const (
	leaseDuration = time.Second
	skewRate      = 1.25
)

// leader: a lease with failover and fenced writes.
func (t *tour) leader(ctx context.Context) error {
	t.title("A leader lease with failover")
	leases, reportsName := t.table("leases"), t.table("reports")
	// node-1's requests go through a network that the tour can cut.
	net1 := &cuttable{}
	c1 := dynamodb.New(t.client.Options(), func(o *dynamodb.Options) {
		net1.next = o.HTTPClient
		if net1.next == nil {
			net1.next = http.DefaultClient
		}
		o.HTTPClient = net1
	})
	m1, m2 := dynamo.NewMapper(c1), dynamo.NewMapper(t.client)
	opts := []lease.Option{lease.WithLeaseDuration(leaseDuration), lease.WithClockSkewRate(skewRate), lease.WithPollInterval(50 * time.Millisecond)}
	node1, err := lease.New(m1, leases, append(opts, lease.WithOwner("node-1"))...)
	if err != nil {
		return err
	}
	node2, err := lease.New(m2, leases, append(opts, lease.WithOwner("node-2"))...)
	if err != nil {
		return err
	}
	if err := node1.CreateTable(ctx); err != nil {
		return err
	}
	reports1, err := dynamo.NewTable[Report](m1, reportsName)
	if err != nil {
		return err
	}
	reports2, err := dynamo.NewTable[Report](m2, reportsName)
	if err != nil {
		return err
	}
	if err := reports2.CreateTable(ctx); err != nil {
		return err
	}
	defer func() {
		net1.cut.Store(false)
		_ = node1.Close(context.WithoutCancel(ctx))
		_ = node2.Close(context.WithoutCancel(ctx))
	}()

	t.say("node-1 and node-2 want the lease \"report-writer\": %v long, renewed every %v;", leaseDuration, leaseDuration/4)
	t.more("a lease not renewed for %v × %v is taken over.", leaseDuration, skewRate)
	l1, err := node1.TryAcquire(ctx, "report-writer")
	if err != nil {
		return err
	}
	type acquired struct {
		l   *lease.Lease
		err error
		at  time.Time
	}
	second := make(chan acquired, 1)
	waitCtx, stopWaiting := context.WithCancel(ctx)
	defer stopWaiting()
	go func() {
		l, err := node2.Acquire(waitCtx, "report-writer") // waits for node-1 to go
		second <- acquired{l, err, time.Now()}
	}()
	r1, err := lease.Save(ctx, l1, reports1, Report{Name: "daily", Writer: "node-1", Token: l1.Token()})
	if err != nil {
		return err
	}
	t.say("node-1 holds it with fencing token %d, and writes the report fenced — in one", l1.Token())
	t.more("transaction with a check that the lease is still its own: report version %d by %s.", r1.Version, r1.Writer)

	net1.cut.Store(true)
	cut := time.Now()
	t.say("node-1 freezes: its network is cut. No heartbeat, no release.")
	select {
	case <-l1.Done():
	case <-ctx.Done():
		return ctx.Err()
	}
	t.more("%v later, node-1 gives up on its own clock:", time.Since(cut).Round(10*time.Millisecond))
	t.more("  %v", l1.Err())

	var a2 acquired
	select {
	case a2 = <-second:
	case <-ctx.Done():
		return ctx.Err()
	}
	if a2.err != nil {
		return a2.err
	}
	l2 := a2.l
	cur, err := reports2.Load(ctx, Report{Name: "daily"}, dynamo.ConsistentRead())
	if err != nil {
		return err
	}
	cur.Writer, cur.Token = "node-2", l2.Token()
	r2, err := lease.Save(ctx, l2, reports2, cur)
	if err != nil {
		return err
	}
	t.say("node-2 took over %v after the cut, with fencing token %d, and writes the report:", a2.at.Sub(cut).Round(10*time.Millisecond), l2.Token())
	t.more("version %d by %s.", r2.Version, r2.Writer)

	net1.cut.Store(false)
	stale, err := reports1.Load(ctx, Report{Name: "daily"}, dynamo.ConsistentRead())
	if err != nil {
		return err
	}
	stale.Writer, stale.Token = "node-1", l1.Token()
	_, err = lease.Save(ctx, l1, reports1, stale)
	if !errors.Is(err, lease.ErrLost) {
		return fmt.Errorf("node-1's write after losing its lease: got %v, want ErrLost", err)
	}
	t.say("node-1's network comes back. It reads the report and writes with its old lease.")
	t.more("Refused before sending — its lease ended on its own clock:")
	t.more("  %v", err)
	err = m1.WriteTx(ctx, []dynamo.TxOp{reports1.TxSave(stale), l1.Guard()})
	if !errors.Is(err, dynamo.ErrConditionFailed) {
		return fmt.Errorf("node-1's write with the guard of its lost lease: got %v, want a failed condition", err)
	}
	var te *dynamo.TxError
	if !errors.As(err, &te) || te.Failure(0) != nil || te.Failure(1) == nil {
		return fmt.Errorf("node-1's write with the guard of its lost lease: got %v, want the guard (and only it) to fail", err)
	}
	t.more("Had node-1 been paused between that check and the send, DynamoDB refuses it:")
	t.more("the lease record no longer names node-1 with token %d (%s).", l1.Token(), te.Failure(1).Code)
	after, err := reports2.Load(ctx, Report{Name: "daily"}, dynamo.ConsistentRead())
	if err != nil {
		return err
	}
	if l2.Token() <= l1.Token() {
		return fmt.Errorf("token %d after %d: not increasing", l2.Token(), l1.Token())
	}
	t.say("Fencing tokens: node-1 %d < node-2 %d. The report is still version %d by %s.",
		l1.Token(), l2.Token(), after.Version, after.Writer)
	return l2.Release(ctx)
}

// cuttable is an HTTP client that fails every request while cut.
type cuttable struct {
	next interface {
		Do(*http.Request) (*http.Response, error)
	}
	cut atomic.Bool
}

func (c *cuttable) Do(r *http.Request) (*http.Response, error) {
	if c.cut.Load() {
		return nil, errors.New("network cut by the tour")
	}
	return c.next.Do(r)
}

// commitLog: writers append to one log at once.
func (t *tour) commitLog(ctx context.Context) error {
	const writers, appends = 4, 3
	t.title("A commit log with concurrent writers")
	s3URL, stopS3, err := s3test.Start()
	if err != nil {
		return err
	}
	defer stopS3()
	s3Client, closeIdle := s3test.NewClient(s3URL)
	defer closeIdle()
	bucket := s3test.BucketName("tour")
	if _, err := s3Client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return err
	}
	store := commitlog.NewS3Store(s3Client, bucket)
	table := t.table("log")
	m := dynamo.NewMapper(t.client)
	reader, err := commitlog.OpenLog(m, table, store, "orders")
	if err != nil {
		return err
	}
	if err := reader.CreateTable(ctx); err != nil {
		return err
	}
	t.say("%d writers append %d entries each to the log \"orders\" at once: entries are objects", writers, appends)
	t.more("in an S3 bucket (in-process server), their numbers claimed in DynamoDB.")

	var mu sync.Mutex
	appended := map[int64]string{}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for wr := 1; wr <= writers; wr++ {
		l, err := commitlog.OpenLog(m, table, store, "orders", commitlog.WithOwner(fmt.Sprint("writer-", wr)))
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= appends; i++ {
				data := fmt.Sprintf(`{"writer":%d,"n":%d}`, wr, i)
				v, err := l.Append(ctx, []byte(data))
				if err != nil {
					errs <- fmt.Errorf("writer-%d: %w", wr, err)
					return
				}
				mu.Lock()
				appended[v] = data
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	t.say("The log, read back in order:")
	next := int64(1)
	lastOf := map[int]int{} // writer → the number of its last entry read
	for e, err := range reader.Entries(ctx, 1) {
		if err != nil {
			return err
		}
		if e.Version != next || string(e.Data) != appended[e.Version] {
			return fmt.Errorf("entry %d holds %s; expected entry %d, holding what its writer appended (%s)", e.Version, e.Data, next, appended[e.Version])
		}
		var d struct{ Writer, N int }
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		if d.N <= lastOf[d.Writer] {
			return fmt.Errorf("writer-%d's entry %d comes after its entry %d", d.Writer, d.N, lastOf[d.Writer])
		}
		lastOf[d.Writer] = d.N
		t.more("%s  %s", reader.Path(e.Version), e.Data)
		next++
	}
	n := len(appended)
	if n != writers*appends || int(next-1) != n {
		return fmt.Errorf("%d entries read, %d appended, want %d", next-1, n, writers*appends)
	}
	t.say("%d entries, numbered 1..%d: each number given out exactly once, no gap, each", n, n)
	t.more("writer's entries in the order it appended them.")
	return nil
}
