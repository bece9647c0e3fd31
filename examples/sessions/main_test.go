package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/examples/sessions/cart"
	"github.com/ddbkit/dynamo/internal/leaktest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// syncBuffer is a strings.Builder safe to read while serve writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServe runs the two instances as main does, adds items to one cart
// through both at once, reads it back from each, and stops them.
func TestServe(t *testing.T) {
	leaktest.Check(t, "examples/sessions")
	c := dynamotest.Client(t)
	table := dynamotest.KeyTable(t, c, "sessions-demo", "session", types.ScalarAttributeTypeS, "", "")
	var lns []net.Listener
	var urls []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		urls = append(urls, "http://"+ln.Addr().String())
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- serve(ctx, &out, c, table, time.Hour, lns...) }()

	// Requests queue on the listeners until serve serves them.
	const perInstance = 10
	var wg sync.WaitGroup
	for i := range 2 * perInstance {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"sku":"sku-%d","qty":%d}`, i%4, i%3+1)
			resp, err := http.Post(urls[i%2]+"/carts/alice/items", "application/json", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("POST %s: %s", body, resp.Status)
			}
		}()
	}
	wg.Wait()
	want := map[string]int{}
	for i := range 2 * perInstance {
		want[fmt.Sprintf("sku-%d", i%4)] += i%3 + 1
	}
	for _, u := range urls {
		resp, err := http.Get(u + "/carts/alice")
		if err != nil {
			t.Fatal(err)
		}
		var got cart.Cart
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != 2*perInstance || len(got.Items) != len(want) {
			t.Errorf("GET from %s: %+v, want version %d and %d items", u, got, 2*perInstance, len(want))
		}
		for _, it := range got.Items {
			if it.Qty != want[it.SKU] {
				t.Errorf("GET from %s: %s×%d, want ×%d", u, it.SKU, it.Qty, want[it.SKU])
			}
		}
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"instance 1: " + urls[0], "instance 2: " + urls[1],
		"curl -s -X POST " + urls[0] + `/carts/alice/items -d '{"sku":"book","qty":1}'`,
		"curl -s " + urls[1] + "/carts/alice", "stopped",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := http.Get(urls[0] + "/carts/alice"); err == nil {
		t.Error("instance 1 still answers after serve returned")
	}
	t.Log("\n" + out.String())
}

func TestHostPort(t *testing.T) {
	for in, want := range map[string]string{
		":8081": "localhost:8081", "0.0.0.0:8081": "localhost:8081", "[::]:8081": "localhost:8081",
		"127.0.0.1:8081": "127.0.0.1:8081", "[::1]:8081": "[::1]:8081",
	} {
		addr, err := net.ResolveTCPAddr("tcp", in)
		if err != nil {
			t.Fatal(err)
		}
		if got := hostPort(addr); got != want {
			t.Errorf("hostPort(%s) = %s, want %s", in, got, want)
		}
	}
}
