package integration

import (
	"context"
	"errors"
	"flag"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// Benchmarks against DynamoDB Local (or DYNAMODB_ENDPOINT). Compare the
// impl=... sub-benchmarks of one run with benchstat -col /impl; see
// BENCHMARKS.md and scripts/bench-local.sh.

// baselineFirst runs the hand-written baseline before the mapper;
// scripts/bench-local.sh alternates it between rounds, so that neither side
// always runs on a colder server.
var baselineFirst = flag.Bool("bench.baselinefirst", false, "run the baseline sub-benchmarks first")

// runOrdered runs the mapper's sub-benchmarks and the baseline's in the
// order baselineFirst says.
func runOrdered(b *testing.B, mapper, baseline []func(*testing.B), names ...string) {
	order := append(append([]func(*testing.B){}, mapper...), baseline...)
	nm := names
	if *baselineFirst {
		order = append(append([]func(*testing.B){}, baseline...), mapper...)
		nm = append(append([]string{}, names[len(mapper):]...), names[:len(mapper)]...)
	}
	for i, fn := range order {
		b.Run(nm[i], fn)
	}
}

type benchCounter struct {
	ID      string `dynamo:"id,hash"`
	N       int    `dynamo:"n"`
	Payload string `dynamo:"payload"`
	Version int64  `dynamo:"v,version"`
}

var avOpts = func(o *attributevalue.EncoderOptions) { o.TagKey = "dynamo" }

// BenchmarkSaveThroughput: sequential versioned saves of fresh items, the
// mapper versus the SDK sending the same conditional UpdateItem.
func BenchmarkSaveThroughput(b *testing.B) {
	client := dynamotest.Client(b)
	name := dynamotest.KeyTable(b, client, "bench-save", "id", types.ScalarAttributeTypeS, "", "")
	table, err := dynamo.NewTable[benchCounter](dynamo.NewMapper(client), name)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var seq atomic.Int64
	// Warm DynamoDB Local's JIT up so that the first sub-benchmark does not
	// pay for it.
	for i := range 2000 {
		if err := rawSave(ctx, client, name, benchCounter{ID: "w" + strconv.Itoa(i), Version: 1}, 0); err != nil {
			b.Fatal(err)
		}
	}
	mapper := func(b *testing.B) {
		for b.Loop() {
			id := "m" + strconv.FormatInt(seq.Add(1), 10)
			if _, err := table.Save(ctx, benchCounter{ID: id, N: 1, Payload: "some payload"}); err != nil {
				b.Fatal(err)
			}
		}
	}
	sdk := func(b *testing.B) {
		for b.Loop() {
			id := "s" + strconv.FormatInt(seq.Add(1), 10)
			item := benchCounter{ID: id, N: 1, Payload: "some payload", Version: 1}
			if err := rawSave(ctx, client, name, item, 0); err != nil {
				b.Fatal(err)
			}
		}
	}
	runOrdered(b, []func(*testing.B){mapper}, []func(*testing.B){sdk}, "impl=mapper", "impl=sdk")
}

// rawSave is what a user writes by hand: marshal, build the versioned
// condition and update, send.
func rawSave(ctx context.Context, c *dynamodb.Client, table string, item benchCounter, held int64) error {
	cond := expression.AttributeNotExists(expression.Name("v"))
	if held > 0 {
		cond = expression.Name("v").Equal(expression.Value(held))
	}
	upd := expression.Set(expression.Name("n"), expression.Value(item.N)).
		Set(expression.Name("payload"), expression.Value(item.Payload)).
		Set(expression.Name("v"), expression.Value(held+1))
	e, err := expression.NewBuilder().WithCondition(cond).WithUpdate(upd).Build()
	if err != nil {
		return err
	}
	key, err := attributevalue.MarshalMapWithOptions(struct {
		ID string `dynamo:"id"`
	}{item.ID}, avOpts)
	if err != nil {
		return err
	}
	_, err = c.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(table), Key: key,
		UpdateExpression: e.Update(), ConditionExpression: e.Condition(),
		ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	return err
}

// BenchmarkContendedUpdate: 16 goroutines increment one counter; ns/op is
// the time per successful increment (goodput⁻¹). impl=mapper shares one
// Table (one process); impl=mapper-separate gives each goroutine its own
// Mapper and Table (16 processes); impl=reread is the hand-written loop that
// re-reads the item after every conflict.
func BenchmarkContendedUpdate(b *testing.B) {
	const workers = 16
	client := dynamotest.Client(b)
	name := dynamotest.KeyTable(b, client, "bench-upd", "id", types.ScalarAttributeTypeS, "", "")
	ctx := context.Background()
	inc := func(c benchCounter) (benchCounter, error) { c.N++; return c, nil }
	run := func(b *testing.B, key string, work func(w int) error) {
		var next atomic.Int64
		n := int64(b.N)
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		b.ResetTimer()
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= n {
					if err := work(w); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	var round atomic.Int64
	many := dynamo.WithRetry(dynamo.RetryPolicy{MaxAttempts: 1000})
	shared := func(b *testing.B) {
		table, _ := dynamo.NewTable[benchCounter](dynamo.NewMapper(client, many), name)
		key := benchCounter{ID: "m" + strconv.FormatInt(round.Add(1), 10)}
		run(b, key.ID, func(int) error {
			_, err := table.Update(ctx, key, inc)
			return err
		})
	}
	separate := func(b *testing.B) {
		var tables [workers]*dynamo.Table[benchCounter]
		for i := range tables {
			tables[i], _ = dynamo.NewTable[benchCounter](dynamo.NewMapper(client, many), name)
		}
		key := benchCounter{ID: "p" + strconv.FormatInt(round.Add(1), 10)}
		run(b, key.ID, func(w int) error {
			_, err := tables[w].Update(ctx, key, inc)
			return err
		})
	}
	reread := func(b *testing.B) {
		id := "r" + strconv.FormatInt(round.Add(1), 10)
		run(b, id, func(int) error { return rereadIncrement(ctx, client, name, id) })
	}
	runOrdered(b, []func(*testing.B){shared, separate}, []func(*testing.B){reread},
		"impl=mapper", "impl=mapper-separate", "impl=reread")
}

// rereadIncrement is the loop users write by hand: read consistently,
// modify, save with the version condition; on conflict, read again.
func rereadIncrement(ctx context.Context, c *dynamodb.Client, table, id string) error {
	for {
		out, err := c.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id}},
		})
		if err != nil {
			return err
		}
		cur := benchCounter{ID: id}
		if out.Item != nil {
			if err := attributevalue.UnmarshalMapWithOptions(out.Item, &cur, func(o *attributevalue.DecoderOptions) { o.TagKey = "dynamo" }); err != nil {
				return err
			}
		}
		held := cur.Version
		cur.N++
		err = rawSave(ctx, c, table, cur, held)
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			continue
		}
		return err
	}
}
