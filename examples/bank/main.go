package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// Account is one bank account; Version makes every change version-checked.
type Account struct {
	ID      string `dynamo:"id,hash"`
	Balance int64  `dynamo:"balance"`
	Version int64  `dynamo:"version,version"`
}

func main() {
	accounts := flag.Int("accounts", 5, "number of accounts")
	workers := flag.Int("workers", 8, "concurrent workers")
	transfers := flag.Int("transfers", 25, "transfers per worker")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	endpoint, stop, err := dynamotest.Start(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	if err := run(ctx, os.Stdout, dynamotest.NewClient(endpoint), *accounts, *workers, *transfers); err != nil {
		stop()
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer, client *dynamodb.Client, nAccounts, workers, perWorker int) error {
	m := dynamo.NewMapper(client)
	accounts, err := dynamo.NewTable[Account](m, fmt.Sprintf("bank-%d", time.Now().UnixNano()))
	if err != nil {
		return err
	}
	if err := accounts.CreateTable(ctx); err != nil {
		return err
	}
	defer accounts.DeleteTable(context.WithoutCancel(ctx))

	const opening = 1000
	ids := make([]string, nAccounts)
	for i := range ids {
		ids[i] = fmt.Sprintf("acct-%02d", i+1)
		if _, err := accounts.Save(ctx, Account{ID: ids[i], Balance: opening}); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "%d accounts with %d each; %d workers make %d transfers each\n", nAccounts, opening, workers, perWorker)

	var mu sync.Mutex
	touched := map[string]int64{} // successful transfers per account
	runs := 0                     // runs of transfer functions, retries included
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perWorker {
				from, to := rand.IntN(nAccounts), rand.IntN(nAccounts-1)
				if to >= from {
					to++
				}
				n, err := transfer(ctx, m, accounts, ids[from], ids[to], rand.Int64N(50)+1)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				touched[ids[from]]++
				touched[ids[to]]++
				runs += n
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	fmt.Fprintf(w, "%d transfers in %v (%d re-runs after a conflict)\n", workers*perWorker, time.Since(start).Round(time.Millisecond), runs-workers*perWorker)

	var total int64
	ok := true
	for _, id := range ids {
		a, err := accounts.Load(ctx, Account{ID: id}, dynamo.ConsistentRead())
		if err != nil {
			return err
		}
		total += a.Balance
		want := 1 + touched[id]
		mark := "ok"
		if a.Version != want {
			mark, ok = "MISMATCH", false
		}
		fmt.Fprintf(w, "  %s balance %5d  version %3d = 1 + %3d transfers  %s\n", id, a.Balance, a.Version, touched[id], mark)
	}
	want := int64(nAccounts * opening)
	fmt.Fprintf(w, "total balance %d, at the start %d: ", total, want)
	if total != want {
		fmt.Fprintln(w, "MISMATCH")
		return errors.New("money was created or destroyed")
	}
	fmt.Fprintln(w, "ok")
	if !ok {
		return errors.New("an account's version does not match its transfers")
	}
	fmt.Fprintln(w, "every account's version equals 1 + the transfers that touched it: ok")
	return nil
}

// transfer moves amount (or what is left) from one account to another: one
// Transact call reads both accounts together, and commits both saves on
// condition that neither changed since; after a conflict it runs the
// function again on the accounts as they are now. It returns how many times
// the function ran.
func transfer(ctx context.Context, m *dynamo.Mapper, accounts *dynamo.Table[Account], fromID, toID string, amount int64) (int, error) {
	runs := 0
	err := m.Transact(ctx, func(tx *dynamo.Tx) error {
		runs++
		if err := tx.Prefetch(accounts.TxGet(Account{ID: fromID}), accounts.TxGet(Account{ID: toID})); err != nil {
			return err
		}
		from, err := accounts.In(tx).Load(Account{ID: fromID})
		if err != nil {
			return err
		}
		to, err := accounts.In(tx).Load(Account{ID: toID})
		if err != nil {
			return err
		}
		amt := min(amount, from.Balance)
		from.Balance -= amt
		to.Balance += amt
		if _, err := accounts.In(tx).Save(from); err != nil {
			return err
		}
		_, err = accounts.In(tx).Save(to)
		return err
	})
	return runs, err
}
