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
	conflicts := 0
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
				retries, err := transfer(ctx, m, accounts, ids[from], ids[to], rand.Int64N(50)+1)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				touched[ids[from]]++
				touched[ids[to]]++
				conflicts += retries
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	fmt.Fprintf(w, "%d transfers in %v (%d retried after a version conflict)\n", workers*perWorker, time.Since(start).Round(time.Millisecond), conflicts)

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

// transfer moves amount (or what is left) from one account to another in a
// transaction that checks both versions, retrying after a conflict with the
// current items. It returns the number of retries.
func transfer(ctx context.Context, m *dynamo.Mapper, accounts *dynamo.Table[Account], fromID, toID string, amount int64) (int, error) {
	from, err := accounts.Load(ctx, Account{ID: fromID}, dynamo.ConsistentRead())
	if err != nil {
		return 0, err
	}
	to, err := accounts.Load(ctx, Account{ID: toID}, dynamo.ConsistentRead())
	if err != nil {
		return 0, err
	}
	for retries := 0; ; retries++ {
		amt := min(amount, from.Balance)
		from.Balance -= amt
		to.Balance += amt
		err := m.WriteTx(ctx, []dynamo.TxOp{accounts.TxSave(from), accounts.TxSave(to)})
		if err == nil {
			return retries, nil
		}
		var te *dynamo.TxError
		if !errors.Is(err, dynamo.ErrVersionConflict) || !errors.As(err, &te) || retries > 100 {
			return retries, err
		}
		// Start again from the stored accounts: the error carries those
		// that conflicted; read the other.
		if from, err = current(ctx, accounts, te, 0, fromID); err != nil {
			return retries, err
		}
		if to, err = current(ctx, accounts, te, 1, toID); err != nil {
			return retries, err
		}
		time.Sleep(time.Duration(rand.IntN(5)) * time.Millisecond)
	}
}

// current returns member i's account as stored: from the transaction's
// error when that member failed, else by a consistent read.
func current(ctx context.Context, accounts *dynamo.Table[Account], te *dynamo.TxError, i int, id string) (Account, error) {
	if f := te.Failure(i); f != nil && f.Err != nil {
		if a, err := accounts.Current(f.Err); err == nil {
			return a, nil
		}
	}
	return accounts.Load(ctx, Account{ID: id}, dynamo.ConsistentRead())
}
