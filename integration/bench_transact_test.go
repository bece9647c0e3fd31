package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// benchAccount is examples/bank's account.
type benchAccount struct {
	ID      string `dynamo:"id,hash"`
	Balance int64  `dynamo:"balance"`
	Version int64  `dynamo:"version,version"`
}

// BenchmarkBankTransfer: 8 goroutines make random transfers among 10
// accounts, as examples/bank does; one op is one successful transfer, so
// transfers/s is the goodput; requests/transfer counts the HTTP requests
// (reads and commits, conflicts included). impl=transact is one Mapper.Transact call
// (examples/bank today); impl=handwritten is the loop examples/bank had
// before it: load both, WriteTx two TxSaves, on a version conflict take the
// stored accounts from the TxError (reading the other), sleep 0–4 ms, again.
//
//	ROUNDS=6 BENCH=BankTransfer BENCHTIME=400x scripts/bench-local.sh
func BenchmarkBankTransfer(b *testing.B) {
	const workers, nAccounts, opening = 8, 10, 1 << 40
	counter := dynamotest.NewCounter(nil)
	client := counter.Client(b)
	name := dynamotest.KeyTable(b, client, "bench-bank", "id", types.ScalarAttributeTypeS, "", "")
	m := dynamo.NewMapper(client)
	accounts, err := dynamo.NewTable[benchAccount](m, name)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var round atomic.Int64
	run := func(b *testing.B, transfer func(from, to string, amount int64) error) {
		prefix := "r" + strconv.FormatInt(round.Add(1), 10) + "-"
		ids := make([]string, nAccounts)
		for i := range ids {
			ids[i] = prefix + strconv.Itoa(i)
			if _, err := accounts.Save(ctx, benchAccount{ID: ids[i], Balance: opening}); err != nil {
				b.Fatal(err)
			}
		}
		var next atomic.Int64
		n := int64(b.N)
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		b.ResetTimer()
		start, requests := time.Now(), counter.Count()
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= n {
					f, t := rand.IntN(nAccounts), rand.IntN(nAccounts-1)
					if t >= f {
						t++
					}
					if err := transfer(ids[f], ids[t], rand.Int64N(50)+1); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "transfers/s")
		b.ReportMetric(float64(counter.Count()-requests)/float64(b.N), "requests/transfer")
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	transact := func(b *testing.B) {
		run(b, func(fromID, toID string, amount int64) error {
			return m.Transact(ctx, func(tx *dynamo.Tx) error {
				if err := tx.Prefetch(accounts.TxGet(benchAccount{ID: fromID}), accounts.TxGet(benchAccount{ID: toID})); err != nil {
					return err
				}
				v := accounts.In(tx)
				from, err := v.Load(benchAccount{ID: fromID})
				if err != nil {
					return err
				}
				to, err := v.Load(benchAccount{ID: toID})
				if err != nil {
					return err
				}
				amt := min(amount, from.Balance)
				from.Balance -= amt
				to.Balance += amt
				if _, err := v.Save(from); err != nil {
					return err
				}
				_, err = v.Save(to)
				return err
			})
		})
	}
	handwritten := func(b *testing.B) {
		run(b, func(fromID, toID string, amount int64) error {
			return handTransfer(ctx, m, accounts, fromID, toID, amount)
		})
	}
	runOrdered(b, []func(*testing.B){transact}, []func(*testing.B){handwritten}, "impl=transact", "impl=handwritten")
}

// handTransfer is examples/bank's transfer before Transact.
func handTransfer(ctx context.Context, m *dynamo.Mapper, accounts *dynamo.Table[benchAccount], fromID, toID string, amount int64) error {
	from, err := accounts.Load(ctx, benchAccount{ID: fromID}, dynamo.ConsistentRead())
	if err != nil {
		return err
	}
	to, err := accounts.Load(ctx, benchAccount{ID: toID}, dynamo.ConsistentRead())
	if err != nil {
		return err
	}
	for retries := 0; ; retries++ {
		amt := min(amount, from.Balance)
		from.Balance -= amt
		to.Balance += amt
		err := m.WriteTx(ctx, []dynamo.TxOp{accounts.TxSave(from), accounts.TxSave(to)})
		if err == nil {
			return nil
		}
		var te *dynamo.TxError
		if !errors.Is(err, dynamo.ErrVersionConflict) || !errors.As(err, &te) || retries > 100 {
			return fmt.Errorf("after %d retries: %w", retries, err)
		}
		if from, err = handCurrent(ctx, accounts, te, 0, fromID); err != nil {
			return err
		}
		if to, err = handCurrent(ctx, accounts, te, 1, toID); err != nil {
			return err
		}
		time.Sleep(time.Duration(rand.IntN(5)) * time.Millisecond)
	}
}

func handCurrent(ctx context.Context, accounts *dynamo.Table[benchAccount], te *dynamo.TxError, i int, id string) (benchAccount, error) {
	if f := te.Failure(i); f != nil && f.Err != nil {
		if a, err := accounts.Current(f.Err); err == nil {
			return a, nil
		}
	}
	return accounts.Load(ctx, benchAccount{ID: id}, dynamo.ConsistentRead())
}
