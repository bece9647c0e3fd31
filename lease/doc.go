// Package lease provides distributed leases (locks with a time limit) on
// DynamoDB, with fencing tokens, built on versioned records written through
// the dynamo mapper.
//
// A Client acquires leases on string keys; each key is one item of the
// lease table. A Lease stays held while its holder's heartbeats extend it.
// Its loss — taken over, released, or not extended in time — closes Done()
// and cancels Context() before another holder can take it over, and Err()
// says why. Token() is a fencing token: strictly greater for every later
// holder of the key, across releases too. Guarded writes — Update,
// Lease.Transact, Lease.WriteTx, Save and Delete — make mapper writes
// conditional on still holding the lease, in one TransactWriteItems, so a
// paused or partitioned former holder can never write after its lease is
// gone.
//
// A sketch:
//
//	lc, err := lease.New(m, "Leases")           // sends nothing; lc.CreateTable(ctx) once
//	l, err := lc.Acquire(ctx, "nightly-report") // waits until held (or ctx is done)
//	defer l.Release(context.Background())
//	saved, err := lease.Save(ctx, l, reports, report) // lands only while l is held
//	if errors.Is(err, lease.ErrLost) {
//		// taken over: nothing written, l.Done() is closed, l.Err() says why
//	}
//
// # Rules at a glance
//
// With d the lease duration (WithLeaseDuration, 20 s), r the clock-skew rate
// (WithClockSkewRate, 1.25) and p the poll interval (WithPollInterval):
//
//   - Guarded writes: a lease's Guard is a ConditionCheck of its record,
//     sent in one transaction with the write. When it fails nothing is
//     written, the lease ends and the error wraps ErrLost; a lease already
//     ended locally sends nothing. Store Token() on the resource too and
//     condition writes on token <= yours.
//   - Takeover trusts no wall clock: a holder gives up d after the moment
//     before its last successful heartbeat, on its own monotonic clock; a
//     waiter takes over a record whose incarnation (version and attempt id)
//     has not changed for d × r on its own clock. A released record is taken
//     at once.
//   - Tokens rise strictly per key, across releases, takeovers, deletions
//     and clocks: every acquisition is one transaction with the key's token
//     record (key NUL "token:" key), which nothing deletes. An acquisition
//     costs one TransactWriteItems of two small items (4 write units).
//   - A call that cannot tell whether its write landed returns an error
//     wrapping dynamo.ErrUnknownOutcome, never a plain error.
//   - A held record that someone deletes is not free: the next holder waits
//     until the old holder gives up (its next heartbeat, or d × r).
//   - Groups (Client.Group, Group.Run) share M keys among N workers,
//     ⌊M/N⌋ or ⌈M/N⌉ each, at one PutItem per worker per heartbeat
//     interval whatever M. A crashed worker's keys move within
//     d × r + 2p + 10 round trips, a leaver's within p + 9.
//   - Beyond the skew rate (a clock slower than another's by more than r,
//     a holder paused past its lease) two functions may run at once for a
//     while, but no guarded write of the old holder lands and tokens still
//     rise. Work outside guarded writes is not fenced: hand Token() on.
//   - Not on MRSC: every acquisition and guarded write is a transaction,
//     which a strongly consistent global table lacks; on a table named in
//     dynamo.WithStrongGlobalTables they are refused before sending, and
//     Group.Run returns the refusal (docs/limitations.md#global-tables). Fence
//     writes to such a table by Token().
//   - The table has a string hash key "key" (Client.CreateTable, on-demand,
//     TTL on "expires"). IAM: dynamodb:GetItem, PutItem and UpdateItem on
//     it; guarded writes add ConditionCheckItem and their writes' actions;
//     groups add BatchGetItem.
//   - Telemetry goes through the Mapper's: spans lease.Acquire,
//     lease.TryAcquire, lease.Release, lease.Lost; metrics
//     ddbkit.lease.held and ddbkit.lease.lost.
//
// # Guide
//
// The rules in depth are in the repository's docs/leases.md, one section
// each:
//
//   - docs/leases.md#acquiring
//   - docs/leases.md#guarded-writes
//   - docs/leases.md#taking-over-without-trusting-clocks
//   - docs/leases.md#tokens-and-the-token-record
//   - docs/leases.md#outcomes-that-cannot-be-told
//   - docs/leases.md#deleting-a-record
//   - docs/leases.md#groups-many-keys-shared-by-a-fleet (running a group,
//     rules, bounds, limits)
//   - docs/leases.md#clocks-beyond-the-skew-rate
//   - docs/leases.md#telemetry
//   - docs/leases.md#table-and-iam
//
// docs/iam.md has the policy per call, docs/telemetry.md the telemetry of
// every package.
package lease
