package stream_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/smithy-go"

	"github.com/ddbkit/dynamo/stream"
)

// scripted is a stream whose shards, records and faults a test scripts,
// for what DynamoDB Local will not do (splits, trims, expired iterators,
// throttles). Records' images are Items; sequence numbers are 21 digits.
type scripted struct {
	mu     sync.Mutex
	shards []scriptShard
	page   int                // shards per DescribeStream page
	faults map[string][]error // op -> errors to return next, in order
	reads  map[string]int     // shard -> GetRecords calls
	calls  map[string]int     // op -> calls
}

type scriptShard struct {
	id, parent string
	closed     bool
	recs       []st.Record
	trimmedTo  int // records before this index are trimmed away
}

func newScripted(page int) *scripted {
	return &scripted{page: page, faults: map[string][]error{}, reads: map[string]int{}, calls: map[string]int{}}
}

func seqText(n int) string { return fmt.Sprintf("%021d", n) }

// add adds a shard whose records are changes of items "<id>-<i>"... with
// sequence numbers from first on.
func (s *scripted) add(id, parent string, closed bool, first int, items ...Item) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := scriptShard{id: id, parent: parent, closed: closed}
	for i, it := range items {
		img := map[string]st.AttributeValue{
			"customer": &st.AttributeValueMemberS{Value: it.Customer}, "id": &st.AttributeValueMemberS{Value: it.ID},
			"amount": &st.AttributeValueMemberN{Value: strconv.FormatInt(it.Amount, 10)}, "version": &st.AttributeValueMemberN{Value: strconv.FormatInt(it.Version, 10)},
		}
		sh.recs = append(sh.recs, st.Record{EventID: aws.String(fmt.Sprintf("%s-%d", id, i)), EventName: st.OperationTypeInsert,
			Dynamodb: &st.StreamRecord{SequenceNumber: aws.String(seqText(first + i)), NewImage: img,
				Keys: map[string]st.AttributeValue{"customer": img["customer"], "id": img["id"]}}})
	}
	s.shards = append(s.shards, sh)
}

func (s *scripted) fault(op string, errs ...error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[op] = append(s.faults[op], errs...)
}

func (s *scripted) next(op string) error {
	s.calls[op]++
	if f := s.faults[op]; len(f) > 0 {
		s.faults[op] = f[1:]
		return f[0]
	}
	return nil
}

func (s *scripted) DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.next("DescribeStream"); err != nil {
		return nil, err
	}
	start := 0
	if in.ExclusiveStartShardId != nil {
		for i, sh := range s.shards {
			if sh.id == *in.ExclusiveStartShardId {
				start = i + 1
			}
		}
	}
	d := &st.StreamDescription{StreamArn: in.StreamArn}
	end := min(start+s.page, len(s.shards))
	for _, sh := range s.shards[start:end] {
		r := &st.SequenceNumberRange{StartingSequenceNumber: aws.String(seqText(0))}
		if sh.closed {
			r.EndingSequenceNumber = aws.String(seqText(999999))
		}
		out := st.Shard{ShardId: aws.String(sh.id), SequenceNumberRange: r}
		if sh.parent != "" {
			out.ParentShardId = aws.String(sh.parent)
		}
		d.Shards = append(d.Shards, out)
	}
	if end < len(s.shards) {
		d.LastEvaluatedShardId = aws.String(s.shards[end-1].id)
	}
	return &dynamodbstreams.DescribeStreamOutput{StreamDescription: d}, nil
}

func (s *scripted) shard(id string) *scriptShard {
	for i := range s.shards {
		if s.shards[i].id == id {
			return &s.shards[i]
		}
	}
	return nil
}

func (s *scripted) GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.next("GetShardIterator"); err != nil {
		return nil, err
	}
	sh := s.shard(aws.ToString(in.ShardId))
	if sh == nil {
		return nil, &st.ResourceNotFoundException{Message: aws.String("no shard")}
	}
	pos := sh.trimmedTo
	switch in.ShardIteratorType {
	case st.ShardIteratorTypeLatest:
		pos = len(sh.recs)
	case st.ShardIteratorTypeAfterSequenceNumber:
		if len(aws.ToString(in.SequenceNumber)) < 21 {
			return nil, &smithy.GenericAPIError{Code: "ValidationException", Message: "sequenceNumber too short"}
		}
		want, _ := strconv.Atoi(strings.TrimLeft(aws.ToString(in.SequenceNumber), "0"))
		pos = -1
		for i, r := range sh.recs {
			if n, _ := strconv.Atoi(strings.TrimLeft(*r.Dynamodb.SequenceNumber, "0")); n == want {
				pos = i + 1
			}
		}
		if pos < 0 {
			return nil, &smithy.GenericAPIError{Code: "ValidationException", Message: "no such sequence number"}
		}
		if pos < sh.trimmedTo {
			return nil, &st.TrimmedDataAccessException{Message: aws.String("trimmed")}
		}
	}
	return &dynamodbstreams.GetShardIteratorOutput{ShardIterator: aws.String(fmt.Sprintf("%s|%d", sh.id, pos))}, nil
}

func (s *scripted) GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.next("GetRecords"); err != nil {
		return nil, err
	}
	id, p, _ := strings.Cut(aws.ToString(in.ShardIterator), "|")
	pos, _ := strconv.Atoi(p)
	sh := s.shard(id)
	s.reads[id]++
	if pos < sh.trimmedTo {
		return nil, &st.TrimmedDataAccessException{Message: aws.String("trimmed")}
	}
	end := min(pos+int(aws.ToInt32(in.Limit)), len(sh.recs))
	out := &dynamodbstreams.GetRecordsOutput{Records: sh.recs[pos:end]}
	if !sh.closed || end < len(sh.recs) {
		out.NextShardIterator = aws.String(fmt.Sprintf("%s|%d", id, end))
	}
	return out, nil
}

func items(prefix string, n int) []Item {
	out := make([]Item, n)
	for i := range out {
		out[i] = Item{Customer: prefix, ID: strconv.Itoa(i), Amount: int64(i), Version: 1}
	}
	return out
}

// scriptedProcessor is a processor of e's items table reading s.
func (e *env) scriptedProcessor(t *testing.T, s *scripted, owner string, opts ...stream.Option) *stream.Processor[Item] {
	t.Helper()
	opts = append([]stream.Option{stream.WithSlots(1), stream.WithIdleWait(5*time.Millisecond, 20*time.Millisecond), stream.WithBatchSize(2)}, opts...)
	p, err := stream.New(e.items, stream.Config{Streams: s, Leases: e.leaseClient(t, owner), Checkpoints: e.leases, Name: "totals"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A split, listed a shard per page: the parent's records all come before
// any child's, and each child's in order; every record once.
func TestSplitChildrenAfterParentAcrossPages(t *testing.T) {
	e := newEnv(t)
	s := newScripted(1)
	s.add("c-a", "p", false, 100, items("a", 3)...) // listed before its parent
	s.add("p", "", true, 1, items("p", 5)...)
	s.add("c-b", "p", false, 200, items("b", 4)...)
	c := newCollector()
	stop := run(t, e.scriptedProcessor(t, s, "w1"), c.handle)
	got := c.waitFor(t, 12)
	e.waitCheckpoint(t, "totals", got[len(got)-1].Seq)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	checkLineageOrder(t, got, 12)
}

func checkLineageOrder(t *testing.T, got []stream.Record[Item], n int) {
	t.Helper()
	seen := map[string]bool{}
	last := map[string]int{}
	parentDone := 0
	for i, r := range got {
		if seen[r.ID] {
			t.Fatalf("record %s handed twice", r.ID)
		}
		seen[r.ID] = true
		c := r.New.Customer
		id, _ := strconv.Atoi(r.New.ID)
		if prev, ok := last[c]; ok && id != prev+1 {
			t.Fatalf("%s: record %d after %d", c, id, prev)
		} else if !ok && id != 0 {
			t.Fatalf("%s: first record %d", c, id)
		}
		last[c] = id
		if c == "p" {
			parentDone = i
		} else if parentDone < 4 && c != "p" {
			t.Fatalf("child record %s before the parent's end", r.ID)
		}
	}
	if len(seen) != n {
		t.Fatalf("%d records, want %d", len(seen), n)
	}
}

// Expired iterators, throttles and 5xx answers cost nothing but time: every
// record once, in order.
func TestExpiredIteratorsAndThrottlesRetried(t *testing.T) {
	e := newEnv(t)
	s := newScripted(10)
	s.add("p", "", true, 1, items("p", 5)...)
	s.add("c", "p", false, 10, items("c", 3)...)
	s.fault("GetRecords", nil)
	s.fault("GetRecords", &st.ExpiredIteratorException{Message: aws.String("expired")})
	s.fault("GetRecords", &smithy.GenericAPIError{Code: "LimitExceededException", Message: "slow down"})
	s.fault("DescribeStream", &smithy.GenericAPIError{Code: "ThrottlingException", Message: "slow down"})
	s.fault("GetShardIterator", &st.InternalServerError{Message: aws.String("boom")})
	c := newCollector()
	stop := run(t, e.scriptedProcessor(t, s, "w1"), c.handle)
	got := c.waitFor(t, 8)
	e.waitCheckpoint(t, "totals", got[len(got)-1].Seq)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range got {
		if seen[r.ID] {
			t.Fatalf("record %s handed twice", r.ID)
		}
		seen[r.ID] = true
	}
	if len(seen) != 8 {
		t.Fatalf("%d records, want 8", len(seen))
	}
	if s.calls["GetShardIterator"] < 3 {
		t.Fatalf("GetShardIterator called %d times: the expired iterator was not got again", s.calls["GetShardIterator"])
	}
}

// Records trimmed before they were read stop Run with a *TrimmedError
// naming the shard and the checkpoint; WithOnTrimmed accepting the loss
// reads on from the oldest record kept.
func TestTrimmedRecordsStopRunUnlessAccepted(t *testing.T) {
	e := newEnv(t)
	s := newScripted(10)
	s.add("p", "", false, 1, items("p", 6)...)
	c := newCollector()
	p := e.scriptedProcessor(t, s, "w1")
	stop := run(t, p, c.handle)
	got := c.waitFor(t, 6)
	e.waitCheckpoint(t, "totals", got[5].Seq)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// More records; all but the last trimmed away before a restart read them.
	s.mu.Lock()
	sh := s.shard("p")
	more := items("q", 4)
	for i, it := range more {
		img := map[string]st.AttributeValue{"customer": &st.AttributeValueMemberS{Value: it.Customer}, "id": &st.AttributeValueMemberS{Value: it.ID},
			"amount": &st.AttributeValueMemberN{Value: "0"}, "version": &st.AttributeValueMemberN{Value: "1"}}
		sh.recs = append(sh.recs, st.Record{EventID: aws.String(fmt.Sprint("q-", i)), EventName: st.OperationTypeInsert,
			Dynamodb: &st.StreamRecord{SequenceNumber: aws.String(seqText(50 + i)), NewImage: img}})
	}
	sh.trimmedTo = 9
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := e.scriptedProcessor(t, s, "w2").Run(ctx, newCollector().handle)
	var te *stream.TrimmedError
	if !errors.As(err, &te) || !errors.Is(err, stream.ErrTrimmed) || te.Shard != "p" || te.After.Compare(got[5].Seq) != 0 {
		t.Fatalf("Run = %v, want a *TrimmedError of shard p after %s", err, got[5].Seq)
	}
	var accepted []*stream.TrimmedError
	c3 := newCollector()
	p3 := e.scriptedProcessor(t, s, "w3", stream.WithOnTrimmed(func(te *stream.TrimmedError) error { accepted = append(accepted, te); return nil }))
	stop = run(t, p3, c3.handle)
	got3 := c3.waitFor(t, 1)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if len(accepted) != 1 || len(got3) != 1 || got3[0].ID != "q-3" {
		t.Fatalf("accepted %v, read %d records (want q-3 only)", accepted, len(got3))
	}
}

// A worker whose slot was taken while it handled a batch writes nothing:
// its checkpoint and effects are refused; the batch is handed again under
// the new lease and its effects land once.
func TestCheckpointRefusedAfterLeaseMoved(t *testing.T) {
	e := newEnv(t)
	s := newScripted(10)
	s.add("p", "", false, 1, items("c0", 4)...)
	var mu sync.Mutex
	first := true
	var tokens []int64
	h := func(ctx context.Context, b *stream.Batch[Item]) error {
		mu.Lock()
		tokens = append(tokens, b.Lease().Token())
		steal := first
		first = false
		mu.Unlock()
		if steal { // another worker takes the slot over while we work
			_, err := e.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(e.leases),
				Key:                       map[string]dtypes.AttributeValue{"key": &dtypes.AttributeValueMemberS{Value: b.Lease().Key()}},
				UpdateExpression:          aws.String("SET #t = #t + :one"),
				ExpressionAttributeNames:  map[string]string{"#t": "token"},
				ExpressionAttributeValues: map[string]dtypes.AttributeValue{":one": &dtypes.AttributeValueMemberN{Value: "1"}}})
			if err != nil {
				return err
			}
		}
		return applyTotals(ctx, e.totals, b)
	}
	stop := run(t, e.scriptedProcessor(t, s, "w1"), h)
	deadline := time.Now().Add(30 * time.Second)
	for {
		cps, err := e.checkpoints("totals")
		if err != nil {
			t.Fatal(err)
		}
		if cps["p"].String() == seqText(4) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("checkpoint %v, want %s", cps, seqText(4))
		}
		time.Sleep(20 * time.Millisecond) // polling the table
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	tot, err := e.totals.Load(context.Background(), Total{Customer: "c0"})
	if err != nil {
		t.Fatal(err)
	}
	if tot.Sum != 0+1+2+3 || tot.Changes != 4 {
		t.Fatalf("total %+v: want sum 6 over 4 changes (the refused batch not applied)", tot)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tokens) < 3 || tokens[len(tokens)-1] <= tokens[0] {
		t.Fatalf("tokens %v: want the first batch handed again under a later token", tokens)
	}
}
