// Command local measures, on one DynamoDB Local, sequential versioned saves/s
// and 16-writer goodput/s on one hot key for four implementations: this
// mapper, a raw SDK loop, Java's DynamoDBMapper (SDK v1) and the Java v2
// Enhanced Client (VersionedRecordExtension), the last two driven by
// benchmarks/java/Bench.java in one JVM. scripts/bench-peers-local.sh
// compiles Bench.java and runs this; see BENCHMARKS.md ("Peers on DynamoDB
// Local").
//
// All four use one server and one table (hash key id, S) and the same item
// {id, n, payload, v} with v the version:
//
//   - seq: one writer saves one item again and again, holding its version,
//     each save incrementing n (mapper: Table.Save of the returned copy;
//     SDK: UpdateItem with SET n, payload, v = held+1 on condition v = held;
//     DynamoDBMapper.save; Enhanced putItem).
//   - contended: 16 writers increment n of one item by read-modify-write and
//     retry on conflict (mapper: Table.Update through one shared Table; the
//     others: consistent read, n+1, versioned save, read again after a
//     ConditionalCheckFailedException). Goodput counts successful increments.
//
// Every run uses a fresh key, and afterwards the item's n is read back and
// must equal the successes the run reported (no lost or invented updates).
// Rounds rotate the order of the implementations. Each result is printed as
//
//	result round=R measure=M impl=I ops=N conflicts=C seconds=S rate=OPS_PER_S cpu-us/op=U
//
// (cpu-us/op: the client process's CPU time during the run per successful
// save, every thread and the garbage collector included; for the Java
// clients the JVM's, JIT compiler included), followed by a summary table: per
// measure and implementation the median rate over the rounds (min–max), the
// median (min–max) of the per-round ratios to the mapper, and the median
// client CPU per success.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

type counter struct {
	ID      string `dynamo:"id,hash"`
	N       int64  `dynamo:"n"`
	Payload string `dynamo:"payload"`
	V       int64  `dynamo:"v,version"`
}

const (
	payload = "some payload"
	region  = "us-east-1"
	// accessKey signs every request, Go's and Java's, so that both see the
	// same tables even on a server started without -sharedDb.
	accessKey = "peersbench"
)

var (
	rounds  = flag.Int("rounds", 5, "rounds; each runs every implementation once per measure")
	seconds = flag.Float64("seconds", 3, "seconds per run")
	warmup  = flag.Float64("warmup", 10, "seconds of unreported warm-up per implementation and measure, before round 1 (the JVM's JIT needs them)")
	workers = flag.Int("workers", 16, "writers of the contended measure")
	classes = flag.String("java-classes", "", "folder of the compiled benchmarks/java/Bench.java; empty: Go implementations only")
	lib     = flag.String("java-lib", "", "DynamoDB Local's DynamoDBLocal_lib folder (default: dynamotest.LocalDir)")
	only    = flag.String("impls", "", "comma-separated implementations to run (default: all)")
	which   = flag.String("measures", "seq,contended", "comma-separated measures to run")
	libOnly = flag.Bool("print-java-lib", false, "print DynamoDB Local's DynamoDBLocal_lib folder (installing DynamoDB Local if needed) and exit")
)

func main() {
	flag.Parse()
	if *libOnly {
		dir, err := javaLib(context.Background())
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench-peers-local:", err)
			os.Exit(1)
		}
		fmt.Println(dir)
		return
	}
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "bench-peers-local:", err)
		os.Exit(1)
	}
}

type impl struct {
	name string
	seq  func(ctx context.Context, id string, d time.Duration) (ops, conflicts int64, err error)
	cont func(ctx context.Context, id string, d time.Duration) (ops, conflicts int64, err error)
}

type result struct {
	round          int
	measure, impl  string
	ops, conflicts int64
	elapsed        time.Duration
	cpu            time.Duration // the client process's CPU time during the run
}

func (r result) rate() float64 { return float64(r.ops) / r.elapsed.Seconds() }

// cpuPerOp is the client's CPU time per successful save, in µs (0: not measured).
func (r result) cpuPerOp() float64 {
	if r.ops == 0 {
		return 0
	}
	return float64(r.cpu.Microseconds()) / float64(r.ops)
}

func run(ctx context.Context) error {
	// Flags are checked before any server is started or table created.
	known := []string{"mapper", "sdk", "dynamodbmapper", "enhanced"}
	if *only != "" {
		for _, name := range strings.Split(*only, ",") {
			if !slices.Contains(known, name) {
				return fmt.Errorf("-impls: unknown implementation %q (known: %s)", name, strings.Join(known, ", "))
			}
		}
	}
	measures := strings.Split(*which, ",")
	for _, m := range measures {
		if m != "seq" && m != "contended" {
			return fmt.Errorf("-measures: unknown measure %q (seq, contended)", m)
		}
	}
	if *rounds < 1 || *seconds <= 0 || *warmup < 0 || *workers < 1 {
		return fmt.Errorf("-rounds %d, -seconds %g, -warmup %g, -workers %d: need rounds ≥ 1, seconds > 0, warmup ≥ 0, workers ≥ 1",
			*rounds, *seconds, *warmup, *workers)
	}
	endpoint, stop, err := dynamotest.Start(ctx)
	if err != nil {
		return err
	}
	defer stop()
	client := dynamotest.NewClient(endpoint, func(o *dynamodb.Options) {
		o.Region = region
		o.Credentials = credentials.NewStaticCredentialsProvider(accessKey, accessKey, "")
	})
	table := fmt.Sprintf("peers-bench-%d", time.Now().UnixNano())
	if err := createTable(ctx, client, table); err != nil {
		return err
	}
	defer func() {
		_, _ = client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	}()
	fmt.Printf("# endpoint %s, table %s, %d rounds of %.1f s per run, %d contended writers\n", endpoint, table, *rounds, *seconds, *workers)

	impls := goImpls(client, table)
	if *classes != "" {
		j, err := startJava(ctx, endpoint, table)
		if err != nil {
			return err
		}
		defer j.close()
		impls = append(impls, j.impl("v1", "dynamodbmapper"), j.impl("v2", "enhanced"))
	}

	measure := func(round int, m string, im impl, d time.Duration) (result, error) {
		id := fmt.Sprintf("%s-%s-%d", im.name, m, round)
		f := im.seq
		if m == "contended" {
			f = im.cont
		}
		cpu0 := processCPU()
		start := time.Now()
		ops, conflicts, err := f(ctx, id, d)
		elapsed := time.Since(start)
		cpu := processCPU() - cpu0
		if err != nil {
			return result{}, fmt.Errorf("%s %s: %w", im.name, m, err)
		}
		if j, ok := javaTimes.LoadAndDelete(id); ok {
			elapsed, cpu = j.([2]time.Duration)[0], j.([2]time.Duration)[1] // the JVM's own clocks
		}
		n, err := readN(ctx, client, table, id)
		if err != nil {
			return result{}, err
		}
		if n != ops {
			return result{}, fmt.Errorf("%s %s: the item's n is %d after %d reported successes: lost or invented updates", im.name, m, n, ops)
		}
		return result{round, m, im.name, ops, conflicts, elapsed, cpu}, nil
	}

	if *only != "" {
		impls = slices.DeleteFunc(impls, func(im impl) bool { return !slices.Contains(strings.Split(*only, ","), im.name) })
	}
	if len(impls) == 0 {
		return fmt.Errorf("-impls %q names nothing to run (without -java-classes only mapper and sdk)", *only)
	}
	for _, m := range measures {
		for _, im := range impls {
			if _, err := measure(0, m, im, secondsDur(*warmup)); err != nil {
				return err
			}
		}
	}
	var results []result
	for r := 1; r <= *rounds; r++ {
		for _, m := range measures {
			for k := range impls {
				im := impls[(k+r)%len(impls)]
				res, err := measure(r, m, im, secondsDur(*seconds))
				if err != nil {
					return err
				}
				results = append(results, res)
				fmt.Printf("result round=%d measure=%s impl=%s ops=%d conflicts=%d seconds=%.3f rate=%.1f cpu-us/op=%.0f\n",
					r, m, im.name, res.ops, res.conflicts, res.elapsed.Seconds(), res.rate(), res.cpuPerOp())
			}
		}
	}
	summarize(os.Stdout, results, measures, impls)
	return nil
}

func secondsDur(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// summarize prints, per measure, each implementation's median rate (min–max
// over the rounds) and the median (min–max) of its per-round ratio to the
// mapper's rate in the same round.
func summarize(w io.Writer, results []result, measures []string, impls []impl) {
	fmt.Fprintln(w)
	for _, m := range measures {
		title := map[string]string{"seq": "sequential versioned saves/s (one writer, one item)",
			"contended": fmt.Sprintf("goodput/s, %d writers incrementing one item", *workers)}[m]
		fmt.Fprintf(w, "%s\n", title)
		fmt.Fprintf(w, "  %-16s %-24s %-46s %s\n", "impl", "rate: median (min–max)", "ratio to mapper, per round: median (min–max)", "client CPU µs/success: median")
		mapperRate := map[int]float64{}
		for _, r := range results {
			if r.measure == m && r.impl == "mapper" {
				mapperRate[r.round] = r.rate()
			}
		}
		for _, im := range impls {
			var rates, ratios, cpus []float64
			for _, r := range results {
				if r.measure == m && r.impl == im.name {
					rates = append(rates, r.rate())
					cpus = append(cpus, r.cpuPerOp())
					if base := mapperRate[r.round]; base > 0 {
						ratios = append(ratios, r.rate()/base)
					}
				}
			}
			fmt.Fprintf(w, "  %-16s %-24s %-46s %.0f\n", im.name, spread(rates, "%.0f"), spread(ratios, "%.2f"), median(cpus))
		}
		fmt.Fprintln(w)
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

func spread(xs []float64, f string) string {
	if len(xs) == 0 {
		return "-"
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf(f+" ("+f+"–"+f+")", med, s[0], s[len(s)-1])
}

func createTable(ctx context.Context, c *dynamodb.Client, name string) error {
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil {
		return fmt.Errorf("creating table %s: %w", name, err)
	}
	for range 100 {
		out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err == nil && out.Table.TableStatus == types.TableStatusActive {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("table %s not active after 10 s", name)
}

func readN(ctx context.Context, c *dynamodb.Client, table, id string) (int64, error) {
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id}},
	})
	if err != nil {
		return 0, err
	}
	var cur counter
	if err := attributevalue.UnmarshalMapWithOptions(out.Item, &cur, decOpts); err != nil {
		return 0, err
	}
	return cur.N, nil
}

func decOpts(o *attributevalue.DecoderOptions) { o.TagKey = dynamo.TagKey }

// ---- Go implementations --------------------------------------------------------

func goImpls(client *dynamodb.Client, table string) []impl {
	many := dynamo.WithRetry(dynamo.RetryPolicy{MaxAttempts: 1000})
	newTable := func() *dynamo.Table[counter] {
		t, err := dynamo.NewTable[counter](dynamo.NewMapper(client, many), table)
		if err != nil {
			panic(err) // the schema is fixed: cannot fail
		}
		return t
	}
	mapper := impl{
		name: "mapper",
		seq: func(ctx context.Context, id string, d time.Duration) (int64, int64, error) {
			t := newTable()
			c := counter{ID: id, Payload: payload}
			var ops int64
			for deadline := time.Now().Add(d); time.Now().Before(deadline); ops++ {
				c.N++
				var err error
				if c, err = t.Save(ctx, c); err != nil {
					return ops, 0, err
				}
			}
			return ops, 0, nil
		},
		cont: func(ctx context.Context, id string, d time.Duration) (int64, int64, error) {
			t := newTable()
			key := counter{ID: id}
			inc := func(c counter) (counter, error) { c.N++; c.Payload = payload; return c, nil }
			return parallel(d, func() (bool, error) {
				_, err := t.Update(ctx, key, inc)
				return err == nil, err
			})
		},
	}
	sdk := impl{
		name: "sdk",
		seq: func(ctx context.Context, id string, d time.Duration) (int64, int64, error) {
			c := counter{ID: id, Payload: payload}
			var ops int64
			for deadline := time.Now().Add(d); time.Now().Before(deadline); ops++ {
				c.N++
				if err := rawSave(ctx, client, table, c); err != nil {
					return ops, 0, err
				}
				c.V++
			}
			return ops, 0, nil
		},
		cont: func(ctx context.Context, id string, d time.Duration) (int64, int64, error) {
			return parallel(d, func() (bool, error) { return rawIncrement(ctx, client, table, id) })
		},
	}
	return []impl{mapper, sdk}
}

// parallel runs step on *workers goroutines until d has passed and counts
// the steps that succeeded (true) and those that met a conflict (false).
func parallel(d time.Duration, step func() (bool, error)) (int64, int64, error) {
	deadline := time.Now().Add(d)
	var ok, conflicts atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				done, err := step()
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				if done {
					ok.Add(1)
				} else {
					conflicts.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return ok.Load(), conflicts.Load(), first
}

// rawSave is the SDK loop's save: UpdateItem SET n, payload, v = held+1 on
// condition v = held (attribute_not_exists(v) for a new item), built with
// expression per call, ALL_OLD on failure.
func rawSave(ctx context.Context, c *dynamodb.Client, table string, item counter) error {
	held := item.V
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
	_, err = c.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(table),
		Key:                                 map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: item.ID}},
		UpdateExpression:                    e.Update(),
		ConditionExpression:                 e.Condition(),
		ExpressionAttributeNames:            e.Names(),
		ExpressionAttributeValues:           e.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	return err
}

// rawIncrement is one read-modify-write: consistent GetItem, n+1, rawSave;
// false on a conflict.
func rawIncrement(ctx context.Context, c *dynamodb.Client, table, id string) (bool, error) {
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id}},
	})
	if err != nil {
		return false, err
	}
	cur := counter{ID: id, Payload: payload}
	if out.Item != nil {
		if err := attributevalue.UnmarshalMapWithOptions(out.Item, &cur, decOpts); err != nil {
			return false, err
		}
	}
	cur.N++
	err = rawSave(ctx, c, table, cur)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return false, nil
	}
	return err == nil, err
}

// ---- Java implementations (benchmarks/java/Bench.java) --------------------------

// javaTimes holds, per run id, the elapsed and CPU time the JVM measured
// ([2]time.Duration).
var javaTimes sync.Map

type javaProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
	mu    sync.Mutex
}

func startJava(ctx context.Context, endpoint, table string) (*javaProc, error) {
	dir, err := javaLib(ctx)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("java", "-XX:+UseSerialGC", "-Xshare:auto",
		"-Dorg.apache.commons.logging.Log=org.apache.commons.logging.impl.NoOpLog",
		"-Daws.java.v1.disableDeprecationAnnouncement=true",
		"-cp", *classes+string(os.PathListSeparator)+filepath.Join(dir, "*"),
		"Bench", endpoint, region, accessKey, accessKey, table)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting java: %w", err)
	}
	j := &javaProc{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
	if !j.out.Scan() || j.out.Text() != "ready" {
		j.close()
		return nil, fmt.Errorf("java Bench did not start (%q)", j.out.Text())
	}
	return j, nil
}

// javaLib returns -java-lib, or the DynamoDBLocal_lib folder of the
// DynamoDB Local dynamotest installs.
func javaLib(ctx context.Context) (string, error) {
	if *lib != "" {
		return *lib, nil
	}
	d, err := dynamotest.LocalDir(ctx)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "DynamoDBLocal_lib"), nil
}

func (j *javaProc) close() {
	_, _ = io.WriteString(j.stdin, "quit\n")
	_ = j.stdin.Close()
	done := make(chan struct{})
	go func() { _ = j.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = j.cmd.Process.Kill()
		<-done
	}
}

// call sends one command and parses "ok <ops> <conflicts> <nanos> <CPU nanos>".
func (j *javaProc) call(id, cmd string) (int64, int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := io.WriteString(j.stdin, cmd+"\n"); err != nil {
		return 0, 0, err
	}
	if !j.out.Scan() {
		return 0, 0, fmt.Errorf("java Bench ended: %v", j.out.Err())
	}
	w := strings.Fields(j.out.Text())
	if len(w) != 5 || w[0] != "ok" {
		return 0, 0, fmt.Errorf("java Bench: %s", j.out.Text())
	}
	ops, err1 := strconv.ParseInt(w[1], 10, 64)
	conflicts, err2 := strconv.ParseInt(w[2], 10, 64)
	nanos, err3 := strconv.ParseInt(w[3], 10, 64)
	cpu, err4 := strconv.ParseInt(w[4], 10, 64)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return 0, 0, fmt.Errorf("java Bench answer %q: %w", j.out.Text(), err)
	}
	javaTimes.Store(id, [2]time.Duration{time.Duration(nanos), time.Duration(cpu)})
	return ops, conflicts, nil
}

func (j *javaProc) impl(client, name string) impl {
	secs := func(d time.Duration) string { return strconv.FormatFloat(math.Max(d.Seconds(), 0.1), 'f', 3, 64) }
	return impl{
		name: name,
		seq: func(_ context.Context, id string, d time.Duration) (int64, int64, error) {
			return j.call(id, fmt.Sprintf("run %s seq %s %s", client, id, secs(d)))
		},
		cont: func(_ context.Context, id string, d time.Duration) (int64, int64, error) {
			return j.call(id, fmt.Sprintf("run %s contended %s %s %d", client, id, secs(d), *workers))
		},
	}
}
