package cart_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/examples/sessions/cart"
	"github.com/ddbkit/dynamo/internal/leaktest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// instance is one cart server behind its own HTTP server, with its own
// DynamoDB client and mapper, as a separate process would have.
type instance struct {
	srv *cart.Server
	url string
}

func start(t *testing.T, table string, opts ...cart.Option) *instance {
	t.Helper()
	s, err := cart.New(dynamo.NewMapper(dynamotest.Client(t)), table, opts...)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return &instance{srv: s, url: hs.URL}
}

// cartTable returns a fresh, empty cart table (deleted when the test ends).
func cartTable(t *testing.T) string {
	return dynamotest.KeyTable(t, dynamotest.Client(t), "", "session", types.ScalarAttributeTypeS, "", "")
}

// response is what a request got back.
type response struct {
	status   int
	cart     cart.Cart
	err      string // the "error" of an error body
	replayed bool
}

func (in *instance) do(t *testing.T, method, path, body string, header ...string) response {
	t.Helper()
	r, err := in.try(t.Context(), method, path, body, header...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// try sends a request; header holds name, value pairs.
func (in *instance) try(ctx context.Context, method, path, body string, header ...string) (response, error) {
	req, err := http.NewRequestWithContext(ctx, method, in.url+path, strings.NewReader(body))
	if err != nil {
		return response{}, err
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	r := response{status: resp.StatusCode, replayed: resp.Header.Get("Idempotent-Replayed") == "true"}
	if resp.StatusCode == http.StatusOK {
		err = json.Unmarshal(data, &r.cart)
	} else if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		var e struct{ Error string }
		err = json.Unmarshal(data, &e)
		r.err = e.Error
	} else {
		r.err = string(data)
	}
	if err != nil {
		return r, fmt.Errorf("%s %s: %d %s: %w", method, path, resp.StatusCode, data, err)
	}
	return r, nil
}

func add(sku string, qty int) string { return fmt.Sprintf(`{"sku":%q,"qty":%d}`, sku, qty) }

func items(c cart.Cart) map[string]int {
	m := map[string]int{}
	for _, it := range c.Items {
		m[it.SKU] = it.Qty
	}
	return m
}

// Many concurrent adds to a few carts, through two instances alternately:
// every item is there afterwards with exactly the quantity added, and each
// cart's version is the number of adds (each written exactly once).
func TestConcurrentAddsThroughTwoInstances(t *testing.T) {
	leaktest.Check(t, "examples/sessions/")
	table := cartTable(t)
	ins := []*instance{start(t, table), start(t, table)}
	const goroutines, perGoroutine = 8, 25
	carts := []string{"alice", "bob", "carol"}

	type req struct {
		inst    int
		session string
		sku     string
		qty     int
	}
	want := map[string]map[string]int{}
	adds := map[string]int64{}
	plan := make([][]req, goroutines)
	for g := range goroutines {
		for i := range perGoroutine {
			r := req{inst: (g + i) % 2, session: carts[(g+i)%len(carts)], qty: 1 + (g*i)%3}
			if i%2 == 0 {
				r.sku = fmt.Sprintf("g%d-i%d", g, i) // added once
			} else {
				r.sku = fmt.Sprintf("shared-%d", i%4) // added by everyone
			}
			plan[g] = append(plan[g], r)
			if want[r.session] == nil {
				want[r.session] = map[string]int{}
			}
			want[r.session][r.sku] += r.qty
			adds[r.session]++
		}
	}

	var wg sync.WaitGroup
	errs := make(chan error, goroutines*perGoroutine)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, r := range plan[g] {
				got, err := ins[r.inst].try(t.Context(), "POST", "/carts/"+r.session+"/items", add(r.sku, r.qty))
				switch {
				case err != nil:
					errs <- err
				case got.status != http.StatusOK:
					errs <- fmt.Errorf("add %s×%d to %s: %d %s", r.sku, r.qty, r.session, got.status, got.err)
				case items(got.cart)[r.sku] < r.qty:
					errs <- fmt.Errorf("add %s×%d to %s returned %v", r.sku, r.qty, r.session, got.cart.Items)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	for _, s := range carts {
		for i, in := range ins {
			got := in.do(t, "GET", "/carts/"+s, "")
			if got.status != http.StatusOK {
				t.Fatalf("GET %s from instance %d: %d %s", s, i, got.status, got.err)
			}
			if g := items(got.cart); !maps.Equal(g, want[s]) {
				for sku, q := range want[s] {
					if g[sku] != q {
						t.Errorf("cart %s (instance %d): %s×%d, want ×%d", s, i, sku, g[sku], q)
					}
				}
				for sku, q := range g {
					if _, ok := want[s][sku]; !ok {
						t.Errorf("cart %s (instance %d): %s×%d was never added", s, i, sku, q)
					}
				}
			}
			if got.cart.Version != adds[s] {
				t.Errorf("cart %s (instance %d): version %d after %d adds", s, i, got.cart.Version, adds[s])
			}
		}
	}
	t.Logf("%d adds through two instances; version conflicts met and redone: %d and %d",
		goroutines*perGoroutine, ins[0].srv.Conflicts(), ins[1].srv.Conflicts())
}

// The same add, sent many times at once with one Idempotency-Key to both
// instances, is applied once; the others are answered as replays.
func TestIdempotencyKey(t *testing.T) {
	table := cartTable(t)
	ins := []*instance{start(t, table), start(t, table)}
	const n = 10
	var wg sync.WaitGroup
	results := make(chan response, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := ins[i%2].try(t.Context(), "POST", "/carts/dave/items", add("book", 2), "Idempotency-Key", "req-1")
			if err != nil {
				t.Error(err)
				return
			}
			results <- r
		}()
	}
	wg.Wait()
	close(results)
	replays := 0
	for r := range results {
		if r.status != http.StatusOK || items(r.cart)["book"] != 2 || r.cart.Version != 1 {
			t.Errorf("got %d %s %+v, want the cart with book×2 at version 1", r.status, r.err, r.cart)
		}
		if r.replayed {
			replays++
		}
	}
	if replays != n-1 {
		t.Errorf("%d replays, want %d", replays, n-1)
	}

	// Another key adds again; a cart remembers its latest RememberedKeys keys.
	if r := ins[0].do(t, "POST", "/carts/dave/items", add("book", 1), "Idempotency-Key", "req-2"); items(r.cart)["book"] != 3 || r.replayed {
		t.Fatalf("second key: %+v", r)
	}
	for i := range cart.RememberedKeys - 1 {
		ins[1].do(t, "POST", "/carts/dave/items", add("pen", 1), "Idempotency-Key", fmt.Sprint("other-", i))
	}
	if r := ins[0].do(t, "POST", "/carts/dave/items", add("book", 1), "Idempotency-Key", "req-2"); !r.replayed || items(r.cart)["book"] != 3 {
		t.Errorf("req-2 is among the latest %d keys and must replay: %+v", cart.RememberedKeys, r)
	}
	if r := ins[0].do(t, "POST", "/carts/dave/items", add("book", 1), "Idempotency-Key", "req-1"); r.replayed || items(r.cart)["book"] != 4 {
		t.Errorf("req-1 is older than the latest %d keys and is applied again: %+v", cart.RememberedKeys, r)
	}
}

// A cart whose expiry time has passed reads as absent although DynamoDB
// still holds it, and the next add starts a fresh cart. Each change pushes
// the expiry back.
func TestExpiry(t *testing.T) {
	c := dynamotest.Client(t)
	table := cartTable(t)
	// The fake clock starts at the real time: DynamoDB Local deletes items
	// whose TTL has passed by its own clock, and this test must show that
	// reads do not need that.
	clk := clock.NewFake(time.Now())
	const ttl = 10 * time.Minute
	a := start(t, table, cart.WithClock(clk), cart.WithTTL(ttl))
	b := start(t, table, cart.WithClock(clk), cart.WithTTL(ttl))

	first := a.do(t, "POST", "/carts/erin/items", add("book", 1))
	if want := clk.Now().Add(ttl).Truncate(time.Second); !first.cart.Expires.Equal(want) {
		t.Errorf("expires %v, want %v", first.cart.Expires, want)
	}
	clk.Advance(9 * time.Minute)
	second := b.do(t, "POST", "/carts/erin/items", add("pen", 1)) // refreshes the expiry
	if !second.cart.Expires.After(first.cart.Expires) {
		t.Errorf("expiry not refreshed: %v, then %v", first.cart.Expires, second.cart.Expires)
	}
	clk.Advance(9 * time.Minute) // past the first expiry, before the second
	if r := a.do(t, "GET", "/carts/erin", ""); r.status != http.StatusOK || len(r.cart.Items) != 2 || !r.cart.Expires.Equal(second.cart.Expires) {
		t.Fatalf("before expiry: %d %s %+v", r.status, r.err, r.cart)
	}

	clk.Advance(2 * time.Minute) // past the second expiry
	for _, in := range []*instance{a, b} {
		if r := in.do(t, "GET", "/carts/erin", ""); r.status != http.StatusNotFound || !strings.Contains(r.err, "expired") {
			t.Errorf("GET of an expired cart: %d %q, want 404 saying it may have expired", r.status, r.err)
		}
	}
	if r := b.do(t, "DELETE", "/carts/erin/items/book", ""); r.status != http.StatusNotFound {
		t.Errorf("DELETE from an expired cart: %d %q, want 404", r.status, r.err)
	}
	out, err := c.GetItem(t.Context(), &dynamodb.GetItemInput{
		TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"session": &types.AttributeValueMemberS{Value: "erin"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Item == nil {
		t.Fatal("the expired cart is gone from DynamoDB, so this test shows nothing: is the fake clock behind real time?")
	}

	fresh := a.do(t, "POST", "/carts/erin/items", add("mug", 1))
	if fresh.status != http.StatusOK || !maps.Equal(items(fresh.cart), map[string]int{"mug": 1}) {
		t.Errorf("add after expiry: %d %s %+v, want a fresh cart with mug×1 only", fresh.status, fresh.err, fresh.cart)
	}
	if fresh.cart.Version != second.cart.Version+1 {
		t.Errorf("version %d, want %d: the fresh cart replaces the stored one", fresh.cart.Version, second.cart.Version+1)
	}
	if r := b.do(t, "GET", "/carts/erin", ""); r.status != http.StatusOK || !maps.Equal(items(r.cart), map[string]int{"mug": 1}) {
		t.Errorf("GET of the fresh cart: %d %s %+v", r.status, r.err, r.cart)
	}
}

func TestDelete(t *testing.T) {
	table := cartTable(t)
	a, b := start(t, table), start(t, table)
	a.do(t, "POST", "/carts/frank/items", add("book", 2))
	b.do(t, "POST", "/carts/frank/items", add("pen", 1))

	r := b.do(t, "DELETE", "/carts/frank/items/book", "")
	if r.status != http.StatusOK || !maps.Equal(items(r.cart), map[string]int{"pen": 1}) || r.cart.Version != 3 {
		t.Fatalf("delete: %d %s %+v", r.status, r.err, r.cart)
	}
	if r := a.do(t, "DELETE", "/carts/frank/items/book", ""); r.status != http.StatusNotFound || !strings.Contains(r.err, `holds no "book"`) {
		t.Errorf("deleting it again: %d %q, want 404", r.status, r.err)
	}
	if r := a.do(t, "GET", "/carts/frank", ""); !maps.Equal(items(r.cart), map[string]int{"pen": 1}) || r.cart.Version != 3 {
		t.Errorf("after delete: %+v (a refused delete must write nothing)", r.cart)
	}
	if r := a.do(t, "DELETE", "/carts/frank/items/pen", ""); r.status != http.StatusOK || len(r.cart.Items) != 0 {
		t.Errorf("deleting the last item: %d %s %+v", r.status, r.err, r.cart)
	}
	if r := b.do(t, "GET", "/carts/frank", ""); r.status != http.StatusOK || len(r.cart.Items) != 0 || r.cart.Items == nil {
		t.Errorf("an emptied cart still exists, with items []: %d %s %+v", r.status, r.err, r.cart)
	}
	if r := b.do(t, "DELETE", "/carts/nobody/items/pen", ""); r.status != http.StatusNotFound || !strings.Contains(r.err, "no cart") {
		t.Errorf("delete from a missing cart: %d %q", r.status, r.err)
	}
	if r := b.do(t, "GET", "/carts/nobody", ""); r.status != http.StatusNotFound {
		t.Errorf("a refused delete created a cart: %d %+v", r.status, r.cart)
	}
}

// Bad requests are refused with 400 (413 for a body too big) and a
// message that names the fix, and write nothing.
func TestValidation(t *testing.T) {
	in := start(t, cartTable(t))
	for _, tc := range []struct {
		method, path, body string
		header             []string
		status             int
		msg                string
	}{
		{"POST", "/carts/bad.session/items", add("a", 1), nil, 400, "invalid session \"bad.session\": use 1 to 128 letters"},
		{"GET", "/carts/" + strings.Repeat("x", 129), "", nil, 400, "invalid session"},
		{"POST", "/carts/v/items", "", nil, 400, `empty body: send one item like {"sku":"book-42","qty":1}`},
		{"POST", "/carts/v/items", add("a", 0), nil, 400, "qty missing or 0: add 1 to 1000 at a time"},
		{"POST", "/carts/v/items", `{"sku":"a"}`, nil, 400, "qty missing or 0"},
		{"POST", "/carts/v/items", add("a", -3), nil, 400, "invalid qty -3"},
		{"POST", "/carts/v/items", add("a", cart.MaxQty+1), nil, 400, "invalid qty 1001"},
		{"POST", "/carts/v/items", `{"qty":1}`, nil, 400, `invalid sku "": use 1 to 64 letters`},
		{"POST", "/carts/v/items", add("a b", 1), nil, 400, `invalid sku "a b"`},
		{"POST", "/carts/v/items", add(strings.Repeat("s", 65), 1), nil, 400, "invalid sku"},
		{"POST", "/carts/v/items", `{"sku":"a","qty":1,"price":3}`, nil, 400, `unknown field "price"`},
		{"POST", "/carts/v/items", `{"sku":"a","qty":"1"}`, nil, 400, "invalid body"},
		{"POST", "/carts/v/items", `{"sku":"a","qty":1.5}`, nil, 400, "invalid body"},
		{"POST", "/carts/v/items", `[{"sku":"a","qty":1}]`, nil, 400, "send one JSON object"},
		{"POST", "/carts/v/items", add("a", 1) + add("b", 1), nil, 400, "more than one JSON value"},
		{"POST", "/carts/v/items", `{"sku":"a",`, nil, 400, "invalid body"},
		{"POST", "/carts/v/items", `{"sku":"` + strings.Repeat("a", 5000) + `","qty":1}`, nil, 413, "body over 4096 bytes"},
		{"POST", "/carts/v/items", add("a", 1), []string{"Idempotency-Key", "has space"}, 400, "invalid Idempotency-Key"},
		{"DELETE", "/carts/v/items/a%20b", "", nil, 400, `invalid sku "a b"`},
		{"PUT", "/carts/v", "", nil, 405, ""},
	} {
		r := in.do(t, tc.method, tc.path, tc.body, tc.header...)
		if r.status != tc.status || !strings.Contains(r.err, tc.msg) {
			t.Errorf("%s %s %.40s: %d %q, want %d %q", tc.method, tc.path, tc.body, r.status, r.err, tc.status, tc.msg)
		}
	}
	if r := in.do(t, "GET", "/carts/v", ""); r.status != http.StatusNotFound {
		t.Errorf("refused requests wrote a cart: %d %+v", r.status, r.cart)
	}
}

// A cart holds at most MaxItems SKUs and MaxLineQty of each: 409, and
// nothing written.
func TestLimits(t *testing.T) {
	in := start(t, cartTable(t))
	for range cart.MaxLineQty / cart.MaxQty {
		in.do(t, "POST", "/carts/g/items", add("bulk", cart.MaxQty))
	}
	if r := in.do(t, "POST", "/carts/g/items", add("bulk", 1)); r.status != http.StatusConflict || !strings.Contains(r.err, "would exceed 10000: add less") {
		t.Errorf("over MaxLineQty: %d %q", r.status, r.err)
	}
	for i := range cart.MaxItems - 1 {
		in.do(t, "POST", "/carts/g/items", add(fmt.Sprint("sku-", i), 1))
	}
	r := in.do(t, "POST", "/carts/g/items", add("one-too-many", 1))
	if r.status != http.StatusConflict || !strings.Contains(r.err, "holds 100 SKUs, the most it may: remove one first") {
		t.Errorf("over MaxItems: %d %q", r.status, r.err)
	}
	got := in.do(t, "GET", "/carts/g", "")
	if len(got.cart.Items) != cart.MaxItems || items(got.cart)["bulk"] != cart.MaxLineQty {
		t.Errorf("after refused adds: %d items, bulk×%d", len(got.cart.Items), items(got.cart)["bulk"])
	}
	if r := in.do(t, "POST", "/carts/g/items", add("sku-0", 1)); r.status != http.StatusOK {
		t.Errorf("adding to a SKU the full cart holds: %d %q", r.status, r.err)
	}
}

// A request whose context is done writes nothing.
func TestCancelledRequest(t *testing.T) {
	table := cartTable(t)
	in := start(t, table)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	rec := httptest.NewRecorder()
	in.srv.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, "POST", "/carts/h/items", strings.NewReader(add("a", 1))))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("cancelled request: %d %s", rec.Code, rec.Body)
	}
	if r := in.do(t, "GET", "/carts/h", ""); r.status != http.StatusNotFound {
		t.Errorf("a cancelled add wrote the cart: %d %+v", r.status, r.cart)
	}
}

// CreateTable makes a table with TTL on "expires", and accepts it when it
// exists already.
func TestCreateTable(t *testing.T) {
	c := dynamotest.Client(t)
	name := fmt.Sprintf("carts-create-%d", time.Now().UnixNano())
	s, err := cart.New(dynamo.NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	out, err := c.DescribeTimeToLive(t.Context(), &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	if d := out.TimeToLiveDescription; d.TimeToLiveStatus != types.TimeToLiveStatusEnabled || aws.ToString(d.AttributeName) != "expires" {
		t.Errorf("TTL: %s on %q, want ENABLED on \"expires\"", d.TimeToLiveStatus, aws.ToString(d.AttributeName))
	}
	if err := s.CreateTable(t.Context()); err != nil {
		t.Errorf("CreateTable of an existing table: %v", err)
	}
	if s.Table() != name {
		t.Errorf("Table() = %q", s.Table())
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	m := dynamo.NewMapper(dynamotest.NewClient("http://127.0.0.1:1")) // New sends nothing
	for _, opt := range []cart.Option{cart.WithTTL(time.Millisecond), cart.WithRequestTimeout(0), cart.WithClock(nil), cart.WithLogger(nil)} {
		if _, err := cart.New(m, "carts", opt); err == nil {
			t.Error("New accepted a bad option")
		}
	}
}
