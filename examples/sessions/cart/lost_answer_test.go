package cart_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/examples/sessions/cart"
)

// startLossy starts an instance whose UpdateItem answers d can drop.
func startLossy(t *testing.T, table string) (*instance, *dynamotest.Dropper) {
	t.Helper()
	d := dynamotest.NewDropper("UpdateItem")
	s, err := cart.New(dynamo.NewMapper(d.Client(t)), table)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return &instance{srv: s, url: hs.URL}, d
}

// The answer to A's write is lost, and B changes the cart before the SDK
// resends A's write: whether A's change landed cannot be told from the
// conflict (dynamo.ErrUnknownOutcome). With an Idempotency-Key, A runs the
// add again and the key says it landed: added once. A remove is idempotent
// and runs again too. Without a key, A says it cannot tell.
func TestLostAnswerThenAnotherWrite(t *testing.T) {
	table := cartTable(t)
	a, drop := startLossy(t, table)
	b := start(t, table)
	b.do(t, http.MethodPost, "/carts/s/items", add("seed", 1))

	bWrites := func(sku string) func() {
		return func() {
			if r := b.do(t, http.MethodPost, "/carts/s/items", add(sku, 1)); r.status != http.StatusOK {
				t.Errorf("B's add: %d %s", r.status, r.err)
			}
		}
	}

	drop.ArmThen(bWrites("pen"))
	r := a.do(t, http.MethodPost, "/carts/s/items", add("book", 2), "Idempotency-Key", "k1")
	if r.status != http.StatusOK || !r.replayed {
		t.Fatalf("A's add with a key after a lost answer: %d %q replayed=%v; want 200, replayed", r.status, r.err, r.replayed)
	}
	want := map[string]int{"seed": 1, "pen": 1, "book": 2}
	if got := items(b.do(t, http.MethodGet, "/carts/s", "").cart); !equal(got, want) {
		t.Fatalf("cart %v, want %v: the book must be there exactly once", got, want)
	}

	drop.ArmThen(bWrites("cup"))
	r = a.do(t, http.MethodDelete, "/carts/s/items/book", "")
	if r.status != http.StatusOK || items(r.cart)["book"] != 0 {
		t.Fatalf("A's remove after a lost answer: %d %q %v; want 200 without the book", r.status, r.err, items(r.cart))
	}

	drop.ArmThen(bWrites("mug"))
	r = a.do(t, http.MethodPost, "/carts/s/items", add("lamp", 1))
	if r.status != http.StatusServiceUnavailable || !strings.Contains(r.err, "may or may not have been applied") ||
		!strings.Contains(r.err, "Idempotency-Key") {
		t.Fatalf("A's add without a key after a lost answer: %d %q; want 503 saying it cannot tell, naming the Idempotency-Key", r.status, r.err)
	}
	if drop.Dropped() != 3 {
		t.Errorf("dropped %d answers, want 3", drop.Dropped())
	}
}

func equal(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
