// Package backfill changes every item of a live table, or every item a
// Query selects — online, resumable, shared by a fleet, within a capacity
// budget — without losing the writes the service makes meanwhile.
//
//	m, err := backfill.New(client, "Orders", "orders-adopt-entity", func(o legacyOrder) (legacyOrder, error) {
//		if o.Kind != "" {
//			return o, dynamo.ErrNoChange
//		}
//		o.Kind = "order"
//		return o, nil
//	}, backfill.Fleet(leases, "Leases"), backfill.Capacity(200, 100))
//	...
//	err = m.Run(ctx) // in every process that shares the work; nil when all is done
//
// # Live writes win
//
// For a type with a version attribute, each item is written back changed
// under the version the scan read (Table.Save), sending only what the
// function changed: dynamo.ChangedFrom of the item as the scan returned it
// (the attributes the function left as they were are not sent, and stay as
// stored — the version condition makes the stored item the one scanned, as
// long as live writers move the version; see below). A live write landing in
// between makes the write conflict, and so does an item deleted and created
// again since the scan at the version scanned (the write is pinned to the
// write token scanned too: a mapper's write stores a new one); the item is then changed through
// dynamo.Table.Update, which reads it again, strongly consistent, and runs
// the function on the stored item (counted in Progress.Reruns), and again
// after each further conflict. Scans are eventually consistent (half the
// read units of a strongly consistent one): an item read stale conflicts
// as one a live writer changed since, and is read again the same way. What
// an eventually consistent scan may miss is an item written within about a
// second before its page is read; StronglyConsistent closes that window
// (start the migration once no writer writes the old form: a strongly
// consistent scan misses the items written behind it too). Live writers
// must move the version when they write, as the mapper does: a write that
// leaves it as it was (a raw UpdateItem) of an attribute the function
// changes can be overwritten by the migration, between the read and the
// write — a window the eventually consistent read widens by its lag (one of
// an attribute the function leaves as it was is kept: it is not sent), and
// an item created again without a write token by such a writer, over an
// item scanned without one, is not told from the one scanned. Types
// without a version attribute
// always go through Update, which guards them as it does (a condition on
// every attribute they model). Update's MustExist keeps an item deleted
// since the scan deleted. The function must have no side effects: it may
// run several times for one item.
//
// # Each item changed once
//
// The write that applies the change also sets the Mark attribute (default
// "backfill") to the migration's id, and is conditioned on the item not
// holding that id yet; scans filter out items that hold it. (A write of an
// item scanned with a write token, while the mapper stores tokens, is
// conditioned on the version and the token scanned instead: every write of
// such a mapper, the migration's included, moves both, so the write lands
// only on the state the scan's filter found unmarked, and the mark's
// condition would add nothing; see "Live writes win" for writers that move
// neither.) So an item
// already changed — by this run before a crash, by another process of the
// fleet, by a write whose answer was lost (which Run tries again: its
// condition then fails, and the item counts as changed) — is never changed
// again, whatever the function does. The mark is written by the migration's
// own mapper, whose client adds it to the SET clause of every UpdateItem
// (and to every PutItem's item); T must not model the attribute. A
// function returning dynamo.ErrNoChange writes nothing, not even the mark.
// Once a migration is done, Clean removes its mark from the items holding
// it (a migration of its own), or leave it: a few bytes per item. Clean
// refuses to run before the migration is done (ErrNotDone): a migration
// resumed reads again the items it changed since its last checkpoint, and
// would change again those Clean had unmarked.
//
// One gap: a writer that replaces a whole item (SavePut, a PutItem from
// elsewhere) after the migration changed it drops the mark with the rest
// of the item — the mapper keeps no attribute T does not model in a
// PutItem. The item keeps its new form, but nothing says it changed. The
// function then runs on it again — on the stored item, under its version,
// so no write is lost — in two cases only: when its page is read again
// (the segment's next holder, after a crash, a stop, a handover or a
// failure, reads again what was read since the segment's last checkpoint;
// see Resumable below), and when the answer to the
// migration's own write was lost and the replacement landed before the
// write was tried again. A function that returns dynamo.ErrNoChange for
// an item already in the new form (as the recipes do) changes nothing
// then; one that is not idempotent (add one) changes such an item twice.
// A service that writes with SavePut can carry the mark through: model
// the attribute in the service's own type (`dynamo:"backfill,omitempty"`),
// so that an item it loaded is put back with it — the migration's T, which
// must not model it, being another type.
//
// # Resumable, shared by a fleet
//
// A migration is cut into Segments scan segments. They are the keys of a
// lease group (lease.Client.Group) named after the migration: every process
// running the migration with the same id joins it and works on the
// segments it is given, one goroutine per segment, which writes the items
// of one page while the next page is read (a segment this process knows no
// progress of reads its first page while it reads its checkpoint, and uses
// it only if the checkpoint says the segment starts at the beginning). A
// segment's goroutine is one writer of the process: when its page has no
// item left to take (the rest in flight) or its segment is done, it writes
// items of the pages of the process's other segments, so that the
// process keeps one write in flight per segment it holds until its last
// page is written, rather than waiting for its largest segment (segments
// are uneven: a scan splits the table by hash). A page counts as done, for
// the checkpoint, once every item of it is. The
// segment's checkpoint — its
// scan cursor, whether it is done, how many items it has read — is written
// to the checkpoint table with lease.Save, so only the segment's current
// holder can write it: after the first page that ends CheckpointInterval
// (default 1 s) or more after the last checkpoint, at the segment's end,
// and when Run stops (its ctx done, or an item failing) while the lease is
// held. A segment whose holder stops or dies is taken over by another
// process (see the lease package's "Groups" for when) and continued from
// its last checkpoint. What is read again is bounded: after a stop, the
// page the segment was in; after a crash, or a handover (the lease ends
// first, so no checkpoint can be written), the pages finished since the
// last checkpoint (at most CheckpointInterval of work) and the page in
// progress. (A stop that takes longer than 10 s is a crash.) Items
// changed already are skipped by the mark (the scan's filter drops them:
// they cost their share of the read units).
// Run learns the end from the segments it finishes and, each PollInterval,
// from the checkpoints of the segments others work on (read with
// BatchGetItem); it returns nil once all segments are done. A migration
// run again after its end returns at once.
//
// # Queries
//
// NewQuery makes a migration of the items one Query selects: a partition,
// optionally a condition on the sort key, optionally of a secondary index
// (Index). It keeps every guarantee above, with one segment: the query is
// read in order, its checkpoint is the query's cursor, and the fleet hands
// the segment from process to process as it would a scan's. The items of an
// index are read again from the table before they change (through Update):
// an index may project only some attributes, and may not project the mark,
// so an item already changed is not dropped by the query's filter: it is
// read again and given to the function, and the write of its result fails
// on the mark (counted as skipped; counted as unchanged when the function
// returns dynamo.ErrNoChange). Over an index the function must therefore
// accept items already in the new form, as the recipes do; one that returns
// an error for them stops Run (or is recorded as a failure, with
// SkipFailures). Progress.Remaining stays unknown (-1) until the end: the
// query's item count is not known beforehand.
//
// # Throttled
//
// The migration's requests go through a client that asks DynamoDB for the
// capacity each one consumed (ReturnConsumedCapacity TOTAL) and holds this
// process to Capacity read and write units per second: a token bucket of
// one second's worth, which a request waits for when the units consumed
// before it are not yet paid for. Without a write budget, only one write
// in 16 asks (DynamoDB Local spends noticeably more on a write that asks),
// and Progress.WriteUnits counts every write at their mean. A request
// DynamoDB refuses for throughput (after the SDK's own retries) is sent
// again after a backoff from 50 ms doubling up to 5 s, at most 10 times.
// The budget is per process: give each process its share.
//
// # Observable
//
// Progress returns what this process did — items scanned, changed,
// unchanged, skipped (already marked, or deleted), rerun after a conflict,
// failed with their items — the capacity consumed, the segments the fleet
// finished, and an estimate of the time left from the fleet's rate and the
// table's item count. DryRun scans and calls the function without writing
// anything. A failing function (or write) stops Run with the item's error,
// or, with SkipFailures, is recorded and skipped.
//
// An item that does not decode into T (another writer stored a field with
// another type) is a failed item too, and does not hold up the rest of its
// page (dynamo.PageDecodeError): without SkipFailures Run stops with an
// error that names the item's key, and stops there again until the item is
// fixed or removed; with SkipFailures it is recorded (Failure.Item holds
// its key fields only) and the run goes on. A function that panics brings the
// process down (it runs on a segment's goroutine): recover in fn and return
// an error to have it recorded.
//
// # Costs
//
// Per item changed: its share of an eventually consistent scan (or query)
// and an UpdateItem of what the function changed (plus a GetItem and another UpdateItem per conflict;
// types without a version, and items of an index: a GetItem always); per
// segment and CheckpointInterval a TransactWriteItems of the checkpoint and
// the lease's guard; per PollInterval a BatchGetItem of the checkpoints of
// segments other processes work on (none when this process holds every
// segment not done). Items already marked cost only their share of the
// scan. See BENCHMARKS.md for the throughput against hand-written loops.
//
// # Limits
//
// All processes of a migration must pass the same Segments (or query),
// Mark and function. Writers that replace whole items (SavePut, PutItem
// from elsewhere) drop the mark (see above). A DryRun runs in one process,
// without leases. Capacity is a per-process budget. Progress counts are
// this process's (SegmentsDone and the estimate are the fleet's). A segment
// whose lease ends finishes the item in hand, so its write is counted; a
// write cut short by Run's end (its ctx done and the item still unfinished
// 10 s later) may land uncounted. Failure errors print the item with %+v: keep
// secrets out of them with a String method, or use SkipFailures and
// report Failure.Item's key yourself.
//
// IAM: dynamodb:Scan (NewQuery: Query), GetItem, UpdateItem and
// DescribeTable on the table; on the lease table what lease.Group.Run
// needs; on the checkpoint table BatchGetItem, GetItem, UpdateItem and
// ConditionCheckItem (through the transaction).
package backfill
