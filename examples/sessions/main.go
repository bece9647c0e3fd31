package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/examples/sessions/cart"
)

func main() {
	addr1 := flag.String("addr1", ":8081", "address of instance 1")
	addr2 := flag.String("addr2", ":8082", "address of instance 2")
	table := flag.String("table", "carts", "DynamoDB table of the carts (created if missing)")
	ttl := flag.Duration("ttl", cart.DefaultTTL, "how long a cart lives after its last change")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	endpoint, stopDB, err := dynamotest.Start(startCtx)
	if err != nil {
		log.Fatal(err)
	}
	defer stopDB()

	var lns []net.Listener
	for _, a := range []string{*addr1, *addr2} {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			stopDB()
			log.Fatalf("%v (pick other ports with -addr1 and -addr2)", err)
		}
		lns = append(lns, ln)
	}
	fmt.Printf("DynamoDB at %s\n", endpoint)
	if err := serve(ctx, os.Stdout, dynamotest.NewClient(endpoint), *table, *ttl, lns...); err != nil {
		stopDB()
		log.Fatal(err)
	}
}

// serve creates the table if needed and serves one cart instance, with
// its own mapper, on each listener until ctx is done; then it shuts them
// down gracefully and returns. It closes the listeners.
func serve(ctx context.Context, w io.Writer, client dynamo.Client, table string, ttl time.Duration, lns ...net.Listener) error {
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	var servers []*http.Server
	var urls []string
	for i, ln := range lns {
		// One mapper per instance, as separate processes would have.
		s, err := cart.New(dynamo.NewMapper(client), table, cart.WithTTL(ttl),
			cart.WithLogger(logger.With("instance", i+1)))
		if err != nil {
			return err
		}
		if i == 0 {
			if err := s.CreateTable(ctx); err != nil {
				return fmt.Errorf("creating the table %q: %w", table, err)
			}
		}
		servers = append(servers, &http.Server{
			Handler:           s,
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       10 * time.Second,
			WriteTimeout:      20 * time.Second,
			IdleTimeout:       time.Minute,
		})
		urls = append(urls, "http://"+hostPort(ln.Addr()))
	}

	for i, u := range urls {
		fmt.Fprintf(w, "instance %d: %s\n", i+1, u)
	}
	if len(urls) > 0 {
		a, b := urls[0], urls[len(urls)-1]
		fmt.Fprintf(w, `carts are kept in table %q; they expire %v after their last change.
Try (any instance serves any cart):
  curl -s -X POST %s/carts/alice/items -d '{"sku":"book","qty":1}'
  curl -s -X POST %s/carts/alice/items -d '{"sku":"pen","qty":2}'
  curl -s -X POST %s/carts/alice/items -H 'Idempotency-Key: order-1' -d '{"sku":"pen","qty":1}'
  curl -s %s/carts/alice
  curl -s -X DELETE %s/carts/alice/items/book
Stop with Ctrl-C.
`, table, ttl, a, b, a, b, a)
	}

	var wg sync.WaitGroup
	errs := make(chan error, len(servers))
	for i, hs := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := hs.Serve(lns[i]); !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("instance %d: %w", i+1, err)
			}
		}()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errs:
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for _, hs := range servers {
		if e := hs.Shutdown(shutdown); e != nil {
			_ = hs.Close()
		}
	}
	wg.Wait()
	if err == nil {
		fmt.Fprintln(w, "stopped")
	}
	return err
}

// hostPort is addr as a client would dial it: an unspecified host (":8081",
// "[::]:8081") becomes localhost.
func hostPort(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}
