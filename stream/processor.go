package stream

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/lease"
)

// StreamsAPI is what a processor calls of DynamoDB Streams;
// *dynamodbstreams.Client satisfies it.
type StreamsAPI interface {
	DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

var _ StreamsAPI = (*dynamodbstreams.Client)(nil)

// Config names what a processor needs.
type Config struct {
	// Streams reads the stream: dynamodbstreams.NewFromConfig(cfg), or
	// for DynamoDB Local a client with the same BaseEndpoint.
	Streams StreamsAPI
	// Leases spreads the shards over the fleet; its owner (lease.WithOwner)
	// names this worker, unique among the live ones.
	Leases *lease.Client
	// Checkpoints is the table where checkpoints are kept: hash key "key",
	// a string. The lease table will do.
	Checkpoints string
	// Name names the processor: its lease group and checkpoints. Two
	// processors of one stream with different names read it independently.
	Name string
}

// Handler handles a batch of a shard's records, in stream order. Effects
// on DynamoDB passed to b.Write are written together with the batch's
// checkpoint; when the handler returns an error, nothing is written and
// the batch is handed again after a pause. The handler must return soon
// after ctx is cancelled (the shard moved to another worker).
type Handler[T any] func(ctx context.Context, b *Batch[T]) error

// Batch is a batch of records of one shard.
type Batch[T any] struct {
	Shard   string
	Records []Record[T]
	lease   *lease.Lease
	ops     []dynamo.TxOp
}

// maxOps is the most ops Batch.Write takes: TransactWriteItems' 100 members
// less the checkpoint and the lease's guard.
const maxOps = 98

// Write adds ops to be written in one transaction with the batch's
// checkpoint, under the shard's lease: all land, exactly once, or none do
// and the batch is handed again. At most 98 ops a batch.
func (b *Batch[T]) Write(ops ...dynamo.TxOp) { b.ops = append(b.ops, ops...) }

// Lease returns the lease the batch's shard is held under (nil for a Lambda
// event's batch): guard other writes with it (lease.Save, Lease.WriteTx) and
// hand its Token to systems that fence.
func (b *Batch[T]) Lease() *lease.Lease { return b.lease }

// checkpoint is a shard's checkpoint, in the checkpoint table.
type checkpoint struct {
	Key     string `dynamo:"key,hash"`
	Name    string `dynamo:"name"`
	Shard   string `dynamo:"shard"`
	Seq     string `dynamo:"seq,omitempty"` // the last record handled
	Ended   bool   `dynamo:"ended"`         // read to its end
	Token   int64  `dynamo:"token"`         // the fencing token of the lease that wrote it
	Version int64  `dynamo:"version,version"`
}

// cpPrefix starts checkpoint keys: lease keys may not start with NUL, and
// the lease package's own records start with NUL "group:" or "token:".
const cpPrefix = "\x00stream:"

// Processor reads one table's stream with a fleet of workers. Make one with
// New, and call Run in each worker process.
type Processor[T any] struct {
	table   *dynamo.Table[T]
	dec     *decoder[T]
	cfg     Config
	o       options
	cps     *dynamo.Table[checkpoint]
	log     *slog.Logger
	running sync.Mutex
}

// New returns a processor of table's stream; T's images are decoded with
// the table's codec. Bad input (a missing Config field, an option out of
// range) is refused here; New sends nothing.
func New[T any](table *dynamo.Table[T], cfg Config, opts ...Option) (*Processor[T], error) {
	o := defaults()
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: stream.New: "+format, append([]any{dynamo.ErrInvalidInput}, args...)...)
	}
	switch {
	case len(o.errs) > 0:
		return nil, bad("%w", errors.Join(o.errs...))
	case table == nil:
		return nil, bad("nil table: pass the *dynamo.Table whose stream to read")
	case cfg.Streams == nil:
		return nil, bad("Config.Streams is nil: pass dynamodbstreams.NewFromConfig(cfg)")
	case cfg.Leases == nil:
		return nil, bad("Config.Leases is nil: pass a *lease.Client (lease.New)")
	case cfg.Checkpoints == "":
		return nil, bad("Config.Checkpoints is empty: name the table for checkpoints (the lease table will do)")
	case cfg.Name == "" || len(cfg.Name) > 200:
		return nil, bad("Config.Name %q: name the processor (1 to 200 bytes)", cfg.Name)
	}
	cps, err := dynamo.NewTable[checkpoint](table.Mapper(), cfg.Checkpoints)
	if err != nil {
		return nil, err
	}
	return &Processor[T]{table: table, dec: newDecoder(table), cfg: cfg, o: o, cps: cps, log: slog.Default()}, nil
}

// streamOf reads the table's description: its latest stream's ARN, after
// checking that T's keys are the table's.
func (p *Processor[T]) streamOf(ctx context.Context) (string, error) {
	out, err := p.table.Mapper().Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(p.table.Name())})
	if err != nil {
		return "", fmt.Errorf("dynamo: stream: describing table %q: %w", p.table.Name(), err)
	}
	d := out.Table
	if d.StreamSpecification == nil || !aws.ToBool(d.StreamSpecification.StreamEnabled) || d.LatestStreamArn == nil {
		return "", fmt.Errorf("%w: table %q: enable one (CreateTable with dynamo.WithStream(types.StreamViewTypeNewAndOldImages), or UpdateTable)", ErrNoStream, p.table.Name())
	}
	got := map[string]string{}
	kinds := map[string]string{}
	for _, a := range d.AttributeDefinitions {
		kinds[aws.ToString(a.AttributeName)] = string(a.AttributeType)
	}
	for _, k := range d.KeySchema {
		name := aws.ToString(k.AttributeName)
		got[name] = fmt.Sprintf("%s (%s)", k.KeyType, kinds[name])
	}
	want := p.wantKeys()
	if !sameKeys(got, want) {
		return "", fmt.Errorf("%w: stream: table %q has keys %v, but the handler's type has %v: handle the table's own item type", dynamo.ErrInvalidInput, p.table.Name(), got, want)
	}
	return aws.ToString(d.LatestStreamArn), nil
}

// wantKeys returns T's key attributes as streamOf compares them: "HASH (S)".
// A key whose type the tags do not settle (a custom marshaler without
// WithKeyType) is compared by name and role only.
func (p *Processor[T]) wantKeys() map[string]string {
	a := p.table.Attributes()
	want := map[string]string{a.Hash: "HASH"}
	if a.Range != "" {
		want[a.Range] = "RANGE"
	}
	in, err := p.table.CreateTableInput() // sends nothing
	if err != nil {
		return want
	}
	kinds := map[string]string{}
	for _, d := range in.AttributeDefinitions {
		kinds[aws.ToString(d.AttributeName)] = string(d.AttributeType)
	}
	for name, role := range want {
		want[name] = fmt.Sprintf("%s (%s)", role, kinds[name])
	}
	return want
}

// sameKeys reports whether got, the table's keys, are want, T's; a key of
// want without a type ("HASH") matches on its role.
func sameKeys(got, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || (g != w && !strings.HasPrefix(g, w+" (")) {
			return false
		}
	}
	return true
}

// Run processes the stream until ctx is done: it joins the processor's
// lease group and, for each slot this worker is given, reads the slot's
// ready shards (lineage) batch by batch, calls h, and writes each batch's
// checkpoint (with its effects) under the slot's lease. It returns nil
// when ctx is done, after leaving the group; a *TrimmedError when records
// were lost and WithOnTrimmed did not accept it; ErrNoStream or an
// ErrInvalidInput error before any stream request for a table without a
// stream or a handler of another key schema. No goroutine of Run outlives
// it. Run may not run twice at once on one Processor.
//
// IAM: see docs/streams.md.
func (p *Processor[T]) Run(ctx context.Context, h Handler[T]) error {
	if h == nil {
		return fmt.Errorf("%w: stream: Run with a nil handler", dynamo.ErrInvalidInput)
	}
	if !p.running.TryLock() {
		return fmt.Errorf("%w: stream: Run is running already on this Processor", dynamo.ErrInvalidInput)
	}
	defer p.running.Unlock()
	arn, err := p.streamOf(ctx)
	if err != nil {
		return err
	}
	keys := make([]string, p.o.slots)
	for i := range keys {
		keys[i] = p.slotKey(i)
	}
	g, err := p.cfg.Leases.Group("stream:"+p.cfg.Name, keys)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var fatalMu sync.Mutex
	var fatal error
	gerr := g.Run(ctx, func(sctx context.Context, l *lease.Lease) error {
		err := p.runSlot(sctx, l, arn, h)
		if err != nil && sctx.Err() == nil {
			// Not transient (those are retried): a loss, an image that
			// does not decode, a handler writing too much, a refusal.
			fatalMu.Lock()
			if fatal == nil {
				fatal = err
			}
			fatalMu.Unlock()
			cancel(err)
		}
		if sctx.Err() != nil {
			return nil
		}
		return err
	})
	fatalMu.Lock()
	defer fatalMu.Unlock()
	if fatal != nil {
		return fatal
	}
	return gerr
}

func (p *Processor[T]) slotKey(i int) string {
	return "stream:" + p.cfg.Name + ":slot:" + strconv.Itoa(i)
}

func (p *Processor[T]) slotOf(shard string) string {
	h := fnv.New32a()
	h.Write([]byte(shard))
	return p.slotKey(int(h.Sum32() % uint32(p.o.slots)))
}

func (p *Processor[T]) cpKey(shard string) string { return cpPrefix + p.cfg.Name + ":" + shard }

// listShards lists every shard of the stream, page by page.
func (p *Processor[T]) listShards(ctx context.Context, arn string) ([]shardInfo, error) {
	var out []shardInfo
	var start *string
	for {
		var d *dynamodbstreams.DescribeStreamOutput
		err := p.retry(ctx, "DescribeStream", func() error {
			var err error
			d, err = p.cfg.Streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn), ExclusiveStartShardId: start})
			return err
		})
		if err != nil {
			return nil, err
		}
		if d.StreamDescription == nil {
			return out, nil
		}
		for _, s := range d.StreamDescription.Shards {
			closed := s.SequenceNumberRange != nil && s.SequenceNumberRange.EndingSequenceNumber != nil
			out = append(out, shardInfo{id: aws.ToString(s.ShardId), parent: aws.ToString(s.ParentShardId), closed: closed})
		}
		start = d.StreamDescription.LastEvaluatedShardId
		if start == nil {
			return out, nil
		}
	}
}
