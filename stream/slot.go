package stream

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/smithy-go"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/lease"
)

// shardRun is a shard a slot's holder reads.
type shardRun struct {
	id        string
	cp        checkpoint // as stored (Version 0: none yet)
	iter      string     // "" when one must be got
	fromStart bool
	idle      time.Duration
	due       time.Time
	failures  int
}

func (s *shardRun) seq() SequenceNumber {
	n, _ := ParseSequenceNumber(s.cp.Seq) // written by commit from a parsed number
	return n
}

// runSlot reads the ready shards of the slot l holds until l ends.
func (p *Processor[T]) runSlot(ctx context.Context, l *lease.Lease, arn string, h Handler[T]) error {
	slot := l.Key()
	runs := map[string]*shardRun{}
	var nextList time.Time
	for {
		if ctx.Err() != nil {
			return nil
		}
		now := p.o.clock.Now()
		if !now.Before(nextList) {
			if err := p.plan(ctx, l, arn, slot, runs); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			nextList = p.o.clock.Now().Add(p.o.refresh)
		}
		ids := make([]string, 0, len(runs))
		for id := range runs {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			s := runs[id]
			if p.o.clock.Now().Before(s.due) {
				continue
			}
			ended, err := p.step(ctx, l, arn, s, h)
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				return err
			}
			if ended {
				delete(runs, id)
				nextList = time.Time{} // its children may be ready
			}
		}
		wake := nextList
		for _, s := range runs {
			if s.due.Before(wake) {
				wake = s.due
			}
		}
		if d := wake.Sub(p.o.clock.Now()); d > 0 {
			if err := p.sleep(ctx, d); err != nil {
				return nil
			}
		}
	}
}

// plan lists the shards, reads the checkpoints of the slot's shards and
// their ancestors, and adds the slot's ready shards to runs.
func (p *Processor[T]) plan(ctx context.Context, l *lease.Lease, arn, slot string, runs map[string]*shardRun) error {
	listing, err := p.listShards(ctx, arn)
	if err != nil {
		return err
	}
	byID := map[string]shardInfo{}
	for _, s := range listing {
		byID[s.id] = s
	}
	want := map[string]bool{}
	for _, s := range listing {
		if p.slotOf(s.id) != slot {
			continue
		}
		for a := s.id; a != "" && !want[a]; a = byID[a].parent {
			want[a] = true
			if _, listed := byID[a]; !listed {
				break
			}
		}
	}
	keys := make([]checkpoint, 0, len(want))
	for id := range want {
		keys = append(keys, checkpoint{Key: p.cpKey(id)})
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Key < keys[j].Key })
	var loaded []checkpoint
	var found []bool
	if len(keys) == 0 {
		return nil
	}
	if err := p.retry(ctx, "BatchGetItem", func() error {
		var err error
		loaded, found, err = p.cps.BatchLoadIndexed(ctx, keys, dynamo.ConsistentRead())
		return err
	}); err != nil {
		return err
	}
	stored := map[string]checkpoint{}
	states := map[string]shardState{}
	for i, k := range keys {
		id := k.Key[len(p.cpKey("")):]
		if found[i] {
			stored[id] = loaded[i]
			states[id] = shardState{exists: true, seq: mustSeq(loaded[i].Seq), ended: loaded[i].Ended}
		}
	}
	pl := lineage(listing, states)
	for _, te := range pl.lost {
		if p.slotOf(te.Shard) != slot {
			continue // its own slot's holder reports it
		}
		if err := p.trimmed(te); err != nil {
			return err
		}
		cp := stored[te.Shard]
		cp.Key, cp.Name, cp.Shard, cp.Ended, cp.Token = p.cpKey(te.Shard), p.cfg.Name, te.Shard, true, l.Token()
		if err := l.WriteTx(ctx, []dynamo.TxOp{p.cps.TxSave(cp)}); err != nil {
			return fmt.Errorf("dynamo: stream: marking the trimmed shard %s read: %w", te.Shard, err)
		}
	}
	for _, id := range pl.ready {
		if p.slotOf(id) != slot || runs[id] != nil {
			continue
		}
		cp, ok := stored[id]
		if !ok {
			cp = checkpoint{Key: p.cpKey(id), Name: p.cfg.Name, Shard: id}
		}
		runs[id] = &shardRun{id: id, cp: cp, fromStart: pl.fromStart[id]}
	}
	return nil
}

func mustSeq(s string) SequenceNumber {
	if s == "" {
		return SequenceNumber{}
	}
	n, _ := ParseSequenceNumber(s)
	return n
}

// trimmed reports te to WithOnTrimmed: nil when the loss is accepted.
func (p *Processor[T]) trimmed(te *TrimmedError) error {
	if p.o.onTrimmed != nil {
		if err := p.o.onTrimmed(te); err == nil {
			p.log.Warn("stream: records trimmed before they were read; accepted by WithOnTrimmed", "processor", p.cfg.Name, "shard", te.Shard, "after", te.After.String())
			return nil
		} else if !errors.Is(err, ErrTrimmed) {
			return fmt.Errorf("%w (%w)", err, te)
		}
	}
	return te
}

// step reads one batch of shard s and hands it to h; it reports whether
// s was read to its end and that end checkpointed.
func (p *Processor[T]) step(ctx context.Context, l *lease.Lease, arn string, s *shardRun, h Handler[T]) (bool, error) {
	if s.iter == "" {
		it, err := p.iterator(ctx, arn, s)
		if err != nil {
			return false, err
		}
		if it == "" { // the shard is gone: its loss accepted
			return true, p.commit(ctx, l, s, s.cp.Seq, true, nil)
		}
		s.iter = it
	}
	var out *dynamodbstreams.GetRecordsOutput
	err := p.retry(ctx, "GetRecords", func() error {
		var err error
		out, err = p.cfg.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(s.iter), Limit: aws.Int32(int32(p.o.batch))})
		return err
	})
	var expired *st.ExpiredIteratorException
	var trimmed *st.TrimmedDataAccessException
	switch {
	case errors.As(err, &expired):
		s.iter = "" // got again from the checkpoint
		return false, nil
	case errors.As(err, &trimmed):
		if err := p.trimmed(&TrimmedError{Shard: s.id, After: s.seq(), Err: err}); err != nil {
			return false, err
		}
		s.iter, s.cp.Seq, s.fromStart = "", "", true // on from the oldest kept
		return false, nil
	case err != nil:
		return false, err
	}
	next := aws.ToString(out.NextShardIterator)
	if len(out.Records) == 0 {
		if next == "" {
			return true, p.commit(ctx, l, s, s.cp.Seq, true, nil)
		}
		s.iter = next
		s.idle = min(max(p.o.idleMin, 2*s.idle), p.o.idleMax)
		s.due = p.o.clock.Now().Add(s.idle)
		return false, nil
	}
	s.idle = 0
	b := &Batch[T]{Shard: s.id, Records: make([]Record[T], 0, len(out.Records)), lease: l}
	for _, r := range out.Records {
		raw, err := fromStreams(s.id, r)
		if err == nil {
			var rec Record[T]
			if rec, err = p.dec.decode(raw); err == nil {
				b.Records = append(b.Records, rec)
				continue
			}
		}
		return false, fmt.Errorf("dynamo: stream: processor %q: %w", p.cfg.Name, err)
	}
	if err := h(ctx, b); err != nil {
		if ctx.Err() != nil {
			return false, nil
		}
		p.log.Warn("stream: handler failed; the batch is handed again", "processor", p.cfg.Name, "shard", s.id, "err", err)
		s.iter = "" // read again from the checkpoint
		s.failures++
		s.due = p.o.clock.Now().Add(p.backoff(s.failures))
		return false, nil
	}
	s.failures = 0
	if len(b.ops) > maxOps {
		return false, fmt.Errorf("%w: stream: processor %q shard %s: the handler wrote %d ops for a batch of %d records; at most %d fit in the checkpoint's transaction: lower WithBatchSize",
			dynamo.ErrInvalidInput, p.cfg.Name, s.id, len(b.ops), len(b.Records), maxOps)
	}
	last := b.Records[len(b.Records)-1].Seq.String()
	if err := p.commit(ctx, l, s, last, next == "", b.ops); err != nil {
		return false, err
	}
	if s.iter == "" || next == "" {
		return next == "" && s.cp.Ended, nil
	}
	s.iter = next
	return false, nil
}

// iterator gets a shard iterator for s: after its checkpoint, or at its
// start position. "" means the shard is gone and its loss was accepted.
func (p *Processor[T]) iterator(ctx context.Context, arn string, s *shardRun) (string, error) {
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: aws.String(s.id)}
	switch {
	case s.cp.Seq != "":
		in.ShardIteratorType, in.SequenceNumber = st.ShardIteratorTypeAfterSequenceNumber, aws.String(s.cp.Seq)
	case s.fromStart || p.o.start == TrimHorizon:
		in.ShardIteratorType = st.ShardIteratorTypeTrimHorizon
	default:
		in.ShardIteratorType = st.ShardIteratorTypeLatest
	}
	var out *dynamodbstreams.GetShardIteratorOutput
	err := p.retry(ctx, "GetShardIterator", func() error {
		var err error
		out, err = p.cfg.Streams.GetShardIterator(ctx, in)
		return err
	})
	var trimmed *st.TrimmedDataAccessException
	var gone *st.ResourceNotFoundException
	switch {
	case errors.As(err, &trimmed):
		if err := p.trimmed(&TrimmedError{Shard: s.id, After: s.seq(), Err: err}); err != nil {
			return "", err
		}
		s.cp.Seq, s.fromStart = "", true
		return p.iterator(ctx, arn, s)
	case errors.As(err, &gone):
		if err := p.trimmed(&TrimmedError{Shard: s.id, After: s.seq(), Gone: true, Err: err}); err != nil {
			return "", err
		}
		return "", nil
	case err != nil:
		return "", err
	}
	it := aws.ToString(out.ShardIterator)
	if it == "" {
		return "", fmt.Errorf("dynamo: stream: GetShardIterator for shard %s returned no iterator", s.id)
	}
	return it, nil
}

// commit writes s's checkpoint at seq (ended: the shard's end) with ops, in
// one transaction guarded by l. When its outcome is unknown it reads the
// checkpoint back: written, or not (then the batch is read again from the
// stored checkpoint). A lost lease ends the slot (ctx is cancelled).
func (p *Processor[T]) commit(ctx context.Context, l *lease.Lease, s *shardRun, seq string, ended bool, ops []dynamo.TxOp) error {
	cp := s.cp
	cp.Key, cp.Name, cp.Shard, cp.Seq, cp.Ended, cp.Token = p.cpKey(s.id), p.cfg.Name, s.id, seq, ended, l.Token()
	op := p.cps.TxSave(cp)
	all := append(append(make([]dynamo.TxOp, 0, len(ops)+1), ops...), op)
	err := l.WriteTx(ctx, all)
	if err == nil {
		s.cp = op.Saved()
		return nil
	}
	if errors.Is(err, lease.ErrLost) {
		p.log.Info("stream: checkpoint refused, nothing written: the slot's lease moved", "processor", p.cfg.Name, "shard", s.id, "token", l.Token(), "err", err)
		return nil // the slot ends with l
	}
	if ctx.Err() != nil {
		return nil
	}
	if !maybeApplied(err) {
		return fmt.Errorf("dynamo: stream: processor %q shard %s: writing the checkpoint: %w", p.cfg.Name, s.id, err)
	}
	var cur checkpoint
	rerr := p.retry(ctx, "GetItem", func() error {
		var err error
		cur, err = p.cps.Load(ctx, checkpoint{Key: cp.Key}, dynamo.ConsistentRead())
		if errors.Is(err, dynamo.ErrNotFound) {
			cur, err = checkpoint{Key: cp.Key, Name: p.cfg.Name, Shard: s.id}, nil
		}
		return err
	})
	if rerr != nil {
		return nil // ctx done
	}
	if cur.Version == s.cp.Version+1 && cur.Seq == seq && cur.Token == l.Token() && cur.Ended == ended {
		s.cp = cur // it was written; its answer was lost
		return nil
	}
	p.log.Warn("stream: the checkpoint was not written; the batch is handed again", "processor", p.cfg.Name, "shard", s.id, "err", err)
	s.cp, s.iter = cur, ""
	s.failures++
	s.due = p.o.clock.Now().Add(p.backoff(s.failures))
	return nil
}

// maybeApplied reports whether a failed write may have landed: anything but
// a refusal before sending or a condition that failed.
func maybeApplied(err error) bool {
	switch {
	case errors.Is(err, dynamo.ErrUnknownOutcome):
		return true
	case errors.Is(err, dynamo.ErrInvalidInput):
		return false
	}
	return true
}

// retry runs f until it succeeds, fails with an error no retry changes, or
// ctx is done, with jittered exponential backoff: throttles, 5xx answers,
// resets.
func (p *Processor[T]) retry(ctx context.Context, op string, f func() error) error {
	for n := 1; ; n++ {
		err := f()
		if err == nil || ctx.Err() != nil || !transient(err) {
			return err
		}
		p.log.Debug("stream: retrying", "processor", p.cfg.Name, "op", op, "err", err)
		if err := p.sleep(ctx, p.backoff(n)); err != nil {
			return err
		}
	}
}

func transient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorFault() == smithy.FaultServer {
		return true // a 5xx answer, whatever its code
	}
	return retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary
}

// backoff is the n-th wait (n >= 1): 50 ms doubling up to 5 s, jittered
// over its upper half.
func (p *Processor[T]) backoff(n int) time.Duration {
	d := 50 * time.Millisecond << min(n-1, 16)
	d = min(d, p.o.backoffMax)
	return d/2 + rand.N(d/2+1)
}

func (p *Processor[T]) sleep(ctx context.Context, d time.Duration) error {
	t := p.o.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}
