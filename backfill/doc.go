// Package backfill changes every item of a live table, or every item a
// Query selects — online, resumable, shared by a fleet, within a capacity
// budget — changing each item exactly once per migration, without losing
// the writes the service makes meanwhile.
//
//	m, err := backfill.NewMigration(mapper, "Orders", "orders-adopt-entity", func(o legacyOrder) (legacyOrder, error) {
//		if o.Kind != "" {
//			return o, dynamo.ErrNoChange
//		}
//		o.Kind = "order"
//		return o, nil
//	}, backfill.WithFleet(leases, "Leases"), backfill.WithCapacity(200, 100))
//	...
//	err = m.Run(ctx) // in every process that shares the work; nil when all is done
//
// The migration writes items as mapper (the service's *dynamo.Mapper)
// does. Constructor options are With* names; the earlier New, NewQuery,
// Clean (over a dynamo.Client, with MapperOptions) and bare option names
// are kept, deprecated (docs/backfill.md, "Constructors and names").
//
// # Each item changed once
//
// A migration is cut into WithSegments scan segments, the keys of a lease
// group (lease.Client.Group) named after the migration id: every process
// running the id joins it and works on the segments it is given. A segment
// reads a page (at most WithPageSize and 98 items), runs the function on
// each item, and commits the page in one TransactWriteItems: each changed
// item, conditioned on the item as scanned (its version and write token;
// for a type without a version, every attribute it models), the segment's
// checkpoint advanced past the page, and the lease's fencing guard. The change of an item lands
// if and only if the checkpoint moves past it, and only under the
// segment's current lease: whatever stops a process — a crash, a stop, a
// handover, a lost answer, a failed item — the next Run continues from the
// checkpoint and never changes an item of a committed page again. No mark
// is written: migrations of one table, run one after another or at once,
// each change each item once.
//
// A live write between the scan and the commit fails the commit's
// condition; the function then runs again on the item as stored (counted in
// Progress.Reruns) and the page is committed again. Every write of this
// library moves the version or the write token, so none is lost or undone;
// T must model the version attribute the service's types use. Writers
// outside this library, and query migrations of an index (a function may
// not move the index's sort key), are in docs/backfill.md. The function must have no
// side effects: it may run several times for one item.
//
// A migration's Table, WithSegments, query and WithIndex are recorded at its first
// Run; a later Run with others is refused with ErrShapeChanged, naming the
// options to give. Other options may change between runs.
//
// # Failures, stops and progress
//
// A function (or write) that fails stops Run with the item's error. With
// WithSkipFailures the item is recorded in its segment's checkpoint (at most 100
// per segment) and the run goes on; the next Run tries the recorded items
// again first, so "fix and rerun" retries them, even after the migration
// finished. Progress counts what this process committed; a commit in flight
// when Run stops is finished (within 30 s) and counted.
//
// # Costs
//
// Per page with changes: one TransactWriteItems of its changed items, the
// checkpoint and the guard (a transactional write costs twice the write
// units of a plain one); per item, its share of an eventually consistent
// scan (WithStronglyConsistent: twice that); per conflict, a strongly
// consistent read and a commit again. Pages with nothing to change write
// nothing but a checkpoint each WithCheckpointInterval. WithCapacity holds
// each process to a read and write budget; WithPollInterval sets how often Run
// reads the checkpoints of segments other processes work on. See
// BENCHMARKS.md for throughput.
//
// IAM: dynamodb:Scan (NewQueryMigration: Query), GetItem, UpdateItem and
// DescribeTable on the table; on the lease table what lease.Group.Run needs
// and ConditionCheckItem (the guard); on the checkpoint table GetItem,
// BatchGetItem and UpdateItem. Members of a transaction are authorized by
// these actions (docs/iam.md).
//
// The rules in depth — live writers outside this library, queries over
// indexes, what is read again after a crash, the checkpoint table's records,
// NewCleanMigration — are in docs/backfill.md.
package backfill
