// Package backfill changes every item of a live table — online, resumable,
// shared by a fleet, within a capacity budget — without losing the writes
// the service makes meanwhile.
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
// For a type with a version attribute, segments are scanned strongly
// consistent and each item is written back changed under the version the
// scan read (Table.Save). A live write landing in between makes the write
// conflict; the item is then changed through dynamo.Table.Update, which
// reads it again and runs the function on the stored item (counted in
// Progress.Reruns), and again after each further conflict. Types without a
// version attribute always go through Update, which guards them as it
// does (a condition on every attribute they model). Update's MustExist keeps an item deleted
// since the scan deleted. The function must have no side effects: it may
// run several times for one item.
//
// # Each item changed once
//
// The write that applies the change also sets the Mark attribute (default
// "backfill") to the migration's id, and is conditioned on the item not
// holding that id yet; scans filter out items that hold it. So an item
// already changed — by this run before a crash, by another process of the
// fleet, by a write whose answer was lost (which Run tries again: its
// condition then fails, and the item counts as changed) — is never changed
// again, whatever the function does. The mark is written by the migration's
// own mapper, whose client adds it to the SET clause of every UpdateItem
// (and to every PutItem's item); T must not model the attribute. Writers
// that replace whole items (SavePut) drop the mark: a page scanned again
// after a crash would change such an item again. A function returning
// dynamo.ErrNoChange writes nothing, not even the mark. Once a migration is
// done, Clean removes its mark from the items holding it (a migration of
// its own), or leave it: a few bytes per item.
//
// # Resumable, shared by a fleet
//
// A migration is cut into Segments scan segments. They are the keys of a
// lease group (lease.Client.Group) named after the migration: every process
// running the migration with the same id joins it and works on the
// segments it is given, one goroutine per segment. After each page the
// segment's checkpoint — its scan cursor, whether it is done, how many
// items it has read — is written to the checkpoint table with lease.Save,
// so only the segment's current holder can write it. A segment whose holder
// stops or dies is taken over by another process (see the lease package's
// "Groups" for when) and continued from its last checkpoint; at most one
// page is scanned again, and its changed items are skipped by the mark.
// Run reads every checkpoint each PollInterval and returns nil once all
// segments are done; a migration run again after its end returns at once.
//
// # Throttled
//
// The migration's requests go through a client that asks DynamoDB for the
// capacity each one consumed (ReturnConsumedCapacity TOTAL) and holds this
// process to Capacity read and write units per second: a token bucket of
// one second's worth, which a request waits for when the units consumed
// before it are not yet paid for. A request DynamoDB refuses for throughput
// (after the SDK's own retries) is sent again after a backoff from 50 ms
// doubling up to 5 s, at most 10 times. The budget is per process: give
// each process its share.
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
// # Costs
//
// Per item changed: its share of a strongly consistent scan and an
// UpdateItem (plus a GetItem and another UpdateItem per conflict; types
// without a version: a GetItem always); per page a TransactWriteItems of
// the checkpoint and the lease's guard. Items already marked cost only
// their share of the scan. See BENCHMARKS.md for the throughput against
// hand-written loops.
//
// # Limits
//
// Whole tables only: a migration of a Query's items is not offered. All
// processes of a migration must pass the same Segments, Mark and function.
// Writers that replace whole items (SavePut, PutItem from elsewhere) drop
// the mark (see above). A DryRun runs in one process, without leases.
// Capacity is a per-process budget. Progress counts are this process's
// (SegmentsDone and the estimate are the fleet's); a write cut short by
// ctx may land uncounted. Failure errors print the item with %+v: keep
// secrets out of them with a String method, or use SkipFailures and
// report Failure.Item's key yourself.
//
// IAM: dynamodb:Scan, GetItem, UpdateItem and DescribeTable on the table;
// on the lease table what lease.Group.Run needs; on the checkpoint table
// GetItem, UpdateItem and ConditionCheckItem (through the transaction).
package backfill
