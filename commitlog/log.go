package commitlog

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/internal/ident"
	"github.com/ddbkit/dynamo/internal/telemetry"
)

// ErrGap is returned by Log.AppendAt for a version more than one past the
// latest: appending there would leave a hole in the log. Append at
// Latest()+1, or use Append.
var ErrGap = errors.New("commitlog: version would leave a gap in the log")

// Log is an append-only log of numbered entries stored as objects
// <name>/00000000000000000001.json, <name>/00000000000000000002.json, ...
// (the number is zero-padded to 20 digits, so names sort in version order;
// the data is stored as given, whatever the .json suffix suggests). Versions
// are claimed in a DynamoDB table; see "The Log's protocol" in
// docs/commitlog.md. Writers never wait out a timeout and never overwrite each other.
//
// A Log is safe for concurrent use, and any number of Logs, in any number of
// processes, may write the same log (the same table, store and name).
type Log struct {
	name  string
	table *dynamo.Table[logRecord]
	store Store
	o     options
	log   *telemetry.Log // every line goes through it: paths and owners only with WithTelemetryKeys
	tel   *telemetry.T   // the mapper's

	mu        sync.Mutex
	next      int64 // a hint: the version after this Log's last append; 0: unknown; guarded by mu
	contended bool  // the last append met another writer; guarded by mu
}

// Entry is one entry of a Log.
type Entry struct {
	Version int64  // its number: 1, 2, ... with no gap
	Data    []byte // the payload appended
}

// OpenLog returns the log called name in the store s, whose versions are
// claimed in the DynamoDB table called table (hash key "log" (S), range key
// "version" (N), no TTL; Log.CreateTable creates it). One table holds any
// number of logs. It sends no request.
//
// name is the prefix of the log's objects: entries are <name>/<version>.json
// and temporary objects <name>/_tmp/<random>. It must neither start nor
// end with '/', and the store must accept those paths: OpenLog checks them
// with the store's own rules where it has them (a directory store refuses
// "../up" and "a//b"), so a bad name is an error wrapping ErrInvalidInput
// here, not at the first append. The table's claims and the
// store's objects of a log belong together: delete both or neither. Of the
// options, WithTimeout, WithClockSkewRate, WithClock, WithLogger and
// WithOwner apply to a Log; WithTTL and WithPollInterval, which do not, are
// refused with an error wrapping ErrInvalidInput.
func OpenLog(m *dynamo.Mapper, table string, s Store, name string, opts ...Option) (*Log, error) {
	if m == nil || s == nil {
		return nil, invalid("commitlog: OpenLog needs a mapper and a store (got mapper %v, store %v)", m != nil, s != nil)
	}
	if err := checkLogName(s, name); err != nil {
		return nil, err
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	if o.ttlSet {
		return nil, invalid("commitlog: OpenLog %q with WithTTL: a Log's claims are the log and never expire; WithTTL applies to a Committer only: drop it here", name)
	}
	if o.pollSet {
		return nil, invalid("commitlog: OpenLog %q with WithPollInterval: a Log never waits for another writer; WithPollInterval applies to a Committer only: drop it here", name)
	}
	tel := telemetry.OfMapper(m)
	t, err := dynamo.NewTable[logRecord](m, table)
	if err != nil {
		return nil, err
	}
	return &Log{table: t, store: s, name: name, o: o, log: newLog(o, tel, slog.String("table", table), telemetry.ID("log", name)), tel: tel}, nil
}

// pathChecker is a Store with rules of its own for paths (the directory
// store's): checkPath returns an error for a path it refuses.
type pathChecker interface {
	checkPath(path string) error
}

// checkLogName refuses a log name whose objects' paths the store s would
// refuse at the first append: it checks the paths of an entry and of a
// temporary object with the rules of every store (checkKey) and with the
// store's own (pathChecker).
func checkLogName(s Store, name string) error {
	const fix = `use '/'-separated segments that are neither empty nor "." or "..", e.g. "logs/orders"`
	if err := checkKey("open log", "name", name); err != nil {
		return err
	}
	if strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") {
		return invalid("commitlog: open log %q: a name must not start or end with '/': %s", name, fix)
	}
	pc, _ := s.(pathChecker)
	for _, p := range []string{fmt.Sprintf("%s/%020d.json", name, 1), name + "/_tmp/" + strings.Repeat("0", 32)} {
		if err := checkKey("open log", "object path", p); err != nil {
			return invalid("commitlog: open log %q: the name is too long for the paths of its objects (%d bytes of %q): use a name of at most %d bytes",
				name, len(p), p, maxKeyLen-len(p)+len(name))
		}
		if pc == nil {
			continue
		}
		if err := pc.checkPath(p); err != nil {
			return invalid("commitlog: open log %q: the store refuses the paths of its objects (%q: %v): %s", name, p, err, fix)
		}
	}
	return nil
}

// CreateTable creates the log table (on-demand, hash key "log", range key
// "version", no TTL) and waits until it is active. ctx bounds the whole
// call. An existing table is an error wrapping dynamo.ErrTableExists; pass
// dynamo.IfNotExists() to call it on every start. opts are those of
// dynamo.Table.CreateTable.
//
// IAM: dynamodb:CreateTable, dynamodb:DescribeTable.
func (l *Log) CreateTable(ctx context.Context, opts ...dynamo.CreateTableOption) error {
	return l.table.CreateTable(ctx, opts...)
}

// Name returns the log's name.
func (l *Log) Name() string { return l.name }

// Path returns the path of the object holding version v.
func (l *Log) Path(v int64) string { return fmt.Sprintf("%s/%020d.json", l.name, v) }

func (l *Log) tempPath() string { return l.name + "/_tmp/" + ident.RandomHex(16) }

// Append adds data to the log as its next entry and returns the entry's
// version. It writes data to a temporary object, claims the next version in
// DynamoDB, copies the temporary object to the entry's final name, marks
// the claim complete and deletes the temporary object: 5 round trips. It
// never waits for another writer: a version taken sends it to the one after
// the latest claim.
//
// The claim is the commit point: a failure after it is logged, not returned,
// and the next reader or writer completes the entry. An error means nothing
// was appended, except one wrapping ErrUnknownOutcome: the entry may be in
// the log (read it before appending it again). ctx bounds the whole call.
// See docs/commitlog.md, The Log's protocol.
//
// IAM: dynamodb:Query, dynamodb:PutItem, dynamodb:GetItem; s3:PutObject,
// s3:GetObject (the copy's read), s3:DeleteObject.
func (l *Log) Append(ctx context.Context, data []byte) (version int64, err error) {
	ctx, span := startSpan(ctx, l.tel, "commitlog.Append", l.table.Name(), telemetry.LogName.String(l.name))
	defer func() { endSpan(span, err, telemetry.LogVersion.Int64(version)) }()
	tmp := l.tempPath()
	if _, err := l.store.Put(ctx, tmp, data); err != nil {
		return 0, fmt.Errorf("commitlog: log %q: append: writing the temporary object: %w", l.name, err)
	}
	rec, err := l.claimNext(ctx, tmp)
	if err != nil {
		if !errors.Is(err, errUncertain) {
			l.deleteTemp(ctx, tmp) // no claim names it
		}
		return 0, err
	}
	l.finish(ctx, rec)
	return rec.Version, nil
}

// AppendAt adds data to the log as entry version, if that version is free
// and the one after the latest. It returns an error wrapping ErrExists when
// the version is taken (read it, and decide whether to append at the next
// one), and one wrapping ErrGap when it is beyond Latest()+1. Callers that
// resolve conflicts themselves (as a table format's commit does) use it
// instead of Append. It sends a Query for the latest claim first (and
// gives ErrExists or ErrGap without writing anything when the version is
// not the next); like Append, it makes sure the latest entry has its
// object before claiming the one after, and an error means nothing was
// appended unless it says the claim's outcome is unknown. ctx bounds the
// whole call.
//
// IAM: as Append.
func (l *Log) AppendAt(ctx context.Context, version int64, data []byte) (err error) {
	ctx, span := startSpan(ctx, l.tel, "commitlog.AppendAt", l.table.Name(), telemetry.LogName.String(l.name), telemetry.LogVersion.Int64(version))
	defer func() { endSpan(span, err) }()
	if version < 1 {
		return invalid("commitlog: log %q: append at version %d: versions start at 1", l.name, version)
	}
	free, err := l.afterLatest(ctx, false)
	if err != nil {
		return err
	}
	switch {
	case version < free:
		return fmt.Errorf("%w: log %q version %d (latest is %d)", ErrExists, l.name, version, free-1)
	case version > free:
		return fmt.Errorf("%w: log %q: append at version %d, but the latest is %d: append at %d", ErrGap, l.name, version, free-1, free)
	}
	tmp := l.tempPath()
	if _, err := l.store.Put(ctx, tmp, data); err != nil {
		return fmt.Errorf("commitlog: log %q: append at %d: writing the temporary object: %w", l.name, version, err)
	}
	rec, err := l.claim(ctx, version, tmp)
	if err != nil {
		if !errors.Is(err, errUncertain) {
			l.deleteTemp(ctx, tmp)
		}
		if errors.Is(err, dynamo.ErrVersionConflict) {
			return fmt.Errorf("%w: log %q version %d was appended by another writer first", ErrExists, l.name, version)
		}
		return err
	}
	l.finish(ctx, rec)
	return nil
}

// Latest returns the latest version of the log, 0 when it is empty: the
// highest version claimed, read from DynamoDB (a strongly consistent Query,
// not a LIST of the store). Its entry may still be incomplete; Read
// completes it. ctx bounds the request.
//
// IAM: dynamodb:Query.
func (l *Log) Latest(ctx context.Context) (int64, error) {
	rec, ok, err := l.latest(ctx)
	if err != nil || !ok {
		return 0, err
	}
	return rec.Version, nil
}

// latest reads the claim of the highest version; ok is false when the log
// is empty.
func (l *Log) latest(ctx context.Context) (logRecord, bool, error) {
	key := expression.Key("log").Equal(expression.Value(l.name))
	for rec, err := range l.table.Query(ctx, key, dynamo.Descending(), dynamo.Limit(1), dynamo.ConsistentRead()) {
		if err != nil {
			return logRecord{}, false, fmt.Errorf("commitlog: log %q: latest version: %w", l.name, err)
		}
		return rec, true, nil
	}
	return logRecord{}, false, nil
}

// Read returns the data of entry version. An entry whose claim is not
// marked complete (its writer stopped after claiming it, or after copying
// it) is completed first: copied to its final name if need be, marked
// complete, and its temporary object deleted. A version never appended is
// an error wrapping ErrNotExist. ctx bounds the whole call.
//
// Read sends one strongly consistent GetItem for the claim and one GET of
// the entry's object; completing an entry costs a copy, a PutItem and a
// DELETE more.
//
// IAM: s3:GetObject; dynamodb:GetItem (and, to complete an entry,
// dynamodb:PutItem, s3:PutObject, s3:DeleteObject).
func (l *Log) Read(ctx context.Context, version int64) ([]byte, error) {
	if version < 1 {
		return nil, invalid("commitlog: log %q: read version %d: versions start at 1", l.name, version)
	}
	rec, err := l.table.Load(ctx, logRecord{Log: l.name, Version: version}, dynamo.ConsistentRead())
	if errors.Is(err, dynamo.ErrNotFound) {
		return nil, fmt.Errorf("%w: log %q version %d was never appended (Latest tells the highest)", ErrNotExist, l.name, version)
	}
	if err != nil {
		return nil, fmt.Errorf("commitlog: log %q: read version %d: %w", l.name, version, err)
	}
	return l.readClaimed(ctx, rec)
}

// readClaimed returns the data of the entry of the claim rec, completing
// the entry first when the claim is not marked complete.
func (l *Log) readClaimed(ctx context.Context, rec logRecord) ([]byte, error) {
	if err := l.complete(ctx, rec); err != nil {
		return nil, err
	}
	data, _, err := l.store.Get(ctx, l.Path(rec.Version))
	if err != nil {
		return nil, fmt.Errorf("commitlog: log %q: read version %d: %w", l.name, rec.Version, err)
	}
	return data, nil
}

// Entries yields the entries from version from (at least 1) to the latest
// version when the iteration starts, in order, each read as Read reads it
// (an incomplete entry is completed first). An error is yielded once, after
// which the iteration stops. ctx bounds the whole iteration.
//
// The claims are read with strongly consistent Query pages (not one
// GetItem per entry); each entry's object with one GET.
//
// IAM: as Read, and dynamodb:Query.
func (l *Log) Entries(ctx context.Context, from int64) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		if from < 1 {
			yield(Entry{}, invalid("commitlog: log %q: entries from version %d: versions start at 1", l.name, from))
			return
		}
		latest, err := l.Latest(ctx)
		if err != nil {
			yield(Entry{}, err)
			return
		}
		if from > latest {
			return
		}
		key := expression.Key("log").Equal(expression.Value(l.name)).
			And(expression.Key("version").Between(expression.Value(from), expression.Value(latest)))
		v := from
		for rec, err := range l.table.Query(ctx, key, dynamo.ConsistentRead()) {
			if err != nil {
				yield(Entry{}, fmt.Errorf("commitlog: log %q: entries from version %d: %w", l.name, from, err))
				return
			}
			if rec.Version != v {
				// Claims are never removed; a missing one was deleted by hand.
				yield(Entry{}, fmt.Errorf("%w: log %q version %d has no claim (deleted by hand?)", ErrNotExist, l.name, v))
				return
			}
			data, err := l.readClaimed(ctx, rec)
			if err != nil {
				yield(Entry{}, err)
				return
			}
			if !yield(Entry{Version: v, Data: data}, nil) {
				return
			}
			v++
		}
		if v <= latest {
			yield(Entry{}, fmt.Errorf("%w: log %q version %d has no claim (deleted by hand?)", ErrNotExist, l.name, v))
		}
	}
}

// afterLatest returns the version after the latest claim (1 for an empty
// log), having made sure that the latest claim's entry has its object. An
// incomplete latest claim is copied; when full, or when the claim is older
// than the timeout × the skew rate by our clock (its writer has probably
// died), it is also marked
// complete and its temporary object deleted. A younger one is left to its
// writer, which is most likely still at work and would do the same.
func (l *Log) afterLatest(ctx context.Context, full bool) (int64, error) {
	rec, ok, err := l.latest(ctx)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 1, nil
	}
	if full || l.o.clock.Now().Sub(time.UnixMilli(rec.Claimed)) > l.abandonAfter() {
		err = l.complete(ctx, rec)
	} else {
		err = l.copyEntry(ctx, rec)
	}
	if err != nil {
		return 0, err
	}
	return rec.Version + 1, nil
}

// abandonAfter is the age, by this Log's clock, of another writer's
// incomplete claim after which it is taken as abandoned: the timeout × the
// skew rate (a writer whose clock runs slow stamps its claims early). The
// product is at most 24 h × 100, far from overflowing.
func (l *Log) abandonAfter() time.Duration {
	return time.Duration(float64(l.o.timeout) * l.o.skew)
}

func (l *Log) setNext(v int64) {
	l.mu.Lock()
	if v > l.next || v == 0 {
		l.next = v
	}
	l.mu.Unlock()
}

// claimNext claims the first free version for the temporary object tmp.
// The object of every version below the one it claims exists when it
// claims it.
//
// The hint (the version after this Log's last append) saves the Query
// while this Log appends alone. After an append that met another writer,
// the next one asks for the latest right away: the hint would be taken.
func (l *Log) claimNext(ctx context.Context, tmp string) (logRecord, error) {
	l.mu.Lock()
	next, contended := l.next, l.contended
	l.mu.Unlock()
	var err error
	if next == 0 || contended {
		// The first append of this Log completes the latest claim fully.
		if next, err = l.afterLatest(ctx, next == 0 && !contended); err != nil {
			return logRecord{}, err
		}
	}
	conflicted := false
	for {
		rec, err := l.claim(ctx, next, tmp)
		if err == nil {
			l.mu.Lock()
			l.contended = conflicted
			l.mu.Unlock()
			return rec, nil
		}
		if !errors.Is(err, dynamo.ErrVersionConflict) {
			return logRecord{}, err
		}
		// Taken: move on to the one after the latest. Claims below the
		// latest have their objects (their claimers made sure before
		// claiming the next).
		conflicted = true
		if next, err = l.afterLatest(ctx, false); err != nil {
			return logRecord{}, err
		}
	}
}

// errUncertain marks the error of a claim whose outcome is unknown: the
// request failed without an answer, and a read did not find it applied. It
// may still be applied, so the temporary object it names is kept. It wraps
// ErrUnknownOutcome.
var errUncertain = fmt.Errorf("the claim's outcome is unknown (%w)", ErrUnknownOutcome)

// claim writes the claim of version for the temporary object tmp, on
// condition that the version is unclaimed. A taken version is an error
// wrapping dynamo.ErrVersionConflict that carries the claim found. When the
// write fails without an answer (the SDK's retries exhausted, ctx done), a
// consistent read tells whether it was applied; if that cannot tell, the
// error wraps errUncertain.
func (l *Log) claim(ctx context.Context, version int64, tmp string) (logRecord, error) {
	rec, err := l.table.Save(ctx, logRecord{Log: l.name, Version: version, Temp: tmp, Owner: l.o.owner, Claimed: l.o.clock.Now().UnixMilli()},
		dynamo.WithSaveBehavior(dynamo.SavePut))
	if err == nil {
		return rec, nil
	}
	if errors.Is(err, dynamo.ErrVersionConflict) {
		// The claim found may be our own: applied, its response lost, and
		// completed (rewritten) by a reader or another writer before the
		// SDK's retry, so that the mapper's write token no longer matches.
		// The temporary object's name is unique to this append.
		cur, cerr := l.table.Current(err)
		if cerr == nil && cur.Temp == tmp {
			return cur, nil
		}
		if cerr == nil {
			// Another writer's claim: claims are never removed, so ours was
			// not applied and cannot be later — even if the mapper could not
			// tell (dynamo.ErrUnknownOutcome).
			return rec, fmt.Errorf("commitlog: log %q: version %d is claimed by %s: %w", l.name, version, cur.Owner, dynamo.ErrVersionConflict)
		}
		// No claim there now (deleted by hand?): read it to settle.
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.o.timeout)
	defer cancel()
	cur, lerr := l.table.Load(rctx, logRecord{Log: l.name, Version: version}, dynamo.ConsistentRead())
	if lerr == nil && cur.Temp == tmp {
		return cur, nil // applied: ours
	}
	if lerr == nil {
		// Another writer's claim: ours was not applied, and cannot be later.
		return logRecord{}, fmt.Errorf("commitlog: log %q: claiming version %d: version claimed by %s: %w", l.name, version, cur.Owner, dynamo.ErrVersionConflict)
	}
	return logRecord{}, fmt.Errorf("commitlog: log %q: claiming version %d: %w (%w: the entry may have been appended; its temporary object %q is kept)",
		l.name, version, err, errUncertain, tmp)
}

// finish completes the entry we claimed; failures are left to the next
// reader or writer. The hint moves past the entry only when it is complete.
func (l *Log) finish(ctx context.Context, rec logRecord) {
	if err := l.complete(ctx, rec); err != nil {
		l.log.Warn(ctx, "appended entry not completed; the next reader or writer completes it",
			slog.Int64("version", rec.Version), telemetry.ID("temp", rec.Temp), telemetry.Err("err", err))
		l.setNext(0)
		return
	}
	l.setNext(rec.Version + 1)
}

// complete makes the entry of rec complete if it is not: copies its
// temporary object to the final name, marks the claim complete (on
// condition of the claim's revision) and deletes the temporary object.
// Anyone may do this, any number of times: every copy writes the same data.
func (l *Log) complete(ctx context.Context, rec logRecord) error {
	if rec.Complete {
		return nil
	}
	if err := l.copyEntry(ctx, rec); err != nil {
		return err
	}
	done := rec
	done.Complete = true
	_, err := l.table.Save(ctx, done, dynamo.WithSaveBehavior(dynamo.SavePut))
	if err != nil {
		cur, cerr := l.table.Current(err)
		if cerr != nil && errors.Is(err, dynamo.ErrUnknownOutcome) {
			// The mark may have been applied: read the claim to see.
			cur, cerr = l.table.Load(ctx, logRecord{Log: l.name, Version: rec.Version}, dynamo.ConsistentRead())
		}
		if cerr != nil || !cur.Complete {
			return fmt.Errorf("commitlog: log %q: marking version %d complete: %w", l.name, rec.Version, err)
		}
		// Marked complete: by us (its answer lost) or by someone else first.
	}
	l.deleteTemp(ctx, rec.Temp)
	return nil
}

// copyEntry makes sure the object of rec's entry exists: unless rec is
// complete, it copies the temporary object to the entry's name.
func (l *Log) copyEntry(ctx context.Context, rec logRecord) error {
	if rec.Complete {
		return nil
	}
	copyCtx, cancel := context.WithTimeout(ctx, l.o.timeout)
	_, err := l.store.Copy(copyCtx, rec.Temp, l.Path(rec.Version))
	cancel()
	if errors.Is(err, ErrNotExist) {
		// The temporary object is gone: whoever deleted it had marked the
		// claim complete first.
		cur, lerr := l.table.Load(ctx, logRecord{Log: l.name, Version: rec.Version}, dynamo.ConsistentRead())
		if lerr == nil && cur.Complete {
			return nil
		}
		if lerr != nil {
			return fmt.Errorf("commitlog: log %q: completing version %d: %w", l.name, rec.Version, lerr)
		}
		if _, herr := l.store.Head(ctx, l.Path(rec.Version)); herr == nil {
			return nil // the entry's object was restored by hand
		}
		return fmt.Errorf("commitlog: version %d cannot be completed: temporary object %q is gone: restore it or write Log.Path(%d) by hand: %w",
			rec.Version, rec.Temp, rec.Version, err)
	}
	if err != nil {
		return fmt.Errorf("commitlog: log %q: completing version %d: copying %q: %w", l.name, rec.Version, rec.Temp, err)
	}
	return nil
}

// deleteTemp deletes a temporary object, best effort: a leftover costs
// storage, nothing else.
func (l *Log) deleteTemp(ctx context.Context, tmp string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.o.timeout)
	defer cancel()
	if err := l.store.Delete(ctx, tmp); err != nil {
		l.log.Warn(ctx, "temporary object not deleted", telemetry.ID("path", tmp), telemetry.Err("err", err))
	}
}
