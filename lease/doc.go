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
// # Guarded writes
//
// A lease's Guard is a ConditionCheck of its record: our owner, token and
// acquisition, not released. A guarded write sends it in one transaction
// with the write, so the write lands only if the lease is still ours when
// DynamoDB applies it — whatever the holder's clock, pauses or network did:
//
//   - Update(ctx, l, table, key, fn) is Table.Update's read-modify-write
//     loop, each write guarded; version conflicts are retried as usual.
//   - l.Transact(ctx, fn) is Mapper.Transact with every commit guarded: a
//     fenced read-modify-write of several items, on any tables, in one call.
//   - l.WriteTx(ctx, ops), Save and Delete guard fixed writes.
//
// When the guard fails — another holder took the lease over, or its record
// is gone — nothing is written, no function runs again, the lease ends
// (Done closed) and the error wraps ErrLost with the reason. A lease that
// has already ended locally (lost, released, not extended in time) sends
// nothing: the error wraps its Err. Any other failure (a conflict Update
// gave up on, an If condition, ErrUnknownOutcome) is the mapper's error as
// without the guard. To guard a call yourself, pass
// dynamo.GuardedBy(l.Guard()) to it: its failure is then a *dynamo.TxError
// naming the check, and the lease ends at its next heartbeat.
//
// The guard fences writes made while holding; store the token on the
// resource too, so that anyone reading or writing it later can tell which
// holder wrote it: write Token() into the item and condition each write on
// the stored token being absent or not later than yours —
// expression.Name("token").LessThanEqual(expression.Value(l.Token())).
// With <= the holder writes the resource as often as it likes; only writers
// holding older tokens are refused. A condition of < would refuse the
// holder's own second write, the first thing a loop does.
//
// # Taking over without trusting clocks
//
// Nobody compares wall clocks. A holder measures its lease from the moment
// before it sent the heartbeat that extended it, on its own monotonic clock,
// and gives up at that moment plus the lease duration. A waiter that sees a
// record's incarnation unchanged for the lease duration × the clock-skew
// rate, measured on its own monotonic clock from after it read the record,
// takes it over with a write conditioned on that incarnation — the way
// Amazon's DynamoDB Lock Client does with a version number. As long as no
// clock runs faster than another by more than the skew rate, the holder has
// given up before the waiter takes over. A released record is taken at once.
//
// A record's incarnation is its version together with the random attempt id
// of the acquisition that wrote it, which the holder's heartbeats and release
// keep and check. A version alone is not an identity: a record deleted and
// created again starts again at version 1, and a waiter that had watched
// version 1 of the old record would take the new holder's over at once. The
// attempt id is never reused, so the waiter's wait starts again whenever
// the incarnation changes, and its takeover fails if the record is not the
// incarnation it watched. A write whose answer was lost (or that failed
// after an attempt that may have been applied, dynamo.ErrUnknownOutcome) is
// recognised by the same attempt id when the record is read again.
//
// # Tokens and the token record
//
// Every acquisition of a key writes, in one transaction with the record,
// the key's token record: an item of the same table under the key NUL
// "token:" key (lease keys may not start with a NUL byte), holding the
// highest token issued for the key, the holder's attempt id and duration,
// and whether it released. The transaction is conditioned on the stored
// token being below the new one, so tokens issued for a key strictly
// increase in the order holders got them — across releases, takeovers,
// deletions of the record and clocks set years apart. A takeover's token is
// the old one plus one; a new record's token is the time in milliseconds,
// or the token record's plus one if that is higher. The package never
// deletes token records and gives them no TTL: the table keeps one small
// item per key ever leased. The price: an acquisition is one
// TransactWriteItems of two small items (4 write units) instead of one
// PutItem, a release two writes (the record, then the token record), and a
// read of a missing record reads the token record too. Deleting a token record (or the table) gives up
// the guarantee for its key, down to the time-in-milliseconds floor. All
// clients of a table must run a version of this package that writes token
// records; older ones do not, and a key gets its token record at its first
// acquisition by a newer one.
//
// # Outcomes that cannot be told
//
// A write whose answer is lost may have been applied. Acquire and
// TryAcquire settle such a write of theirs by reading the record (the
// attempt id tells); a heartbeat whose outcome is unknown is followed by
// another sooner, which finds the earlier one's version and carries on from
// it; Release reads the record to tell whether its write landed. Where a
// call cannot tell, its error wraps dynamo.ErrUnknownOutcome — never a plain
// error that would mean nothing was written. Guarded writes return the
// mapper's errors, which say the same; Update and Lease.Transact first
// resend a transaction whose answer was lost under its request token, which
// settles most.
//
// # Deleting a record
//
// Records are never deleted by this package: release marks a record
// released. The ttl attribute lets DynamoDB clean up records nobody has
// written for a long time (see WithTTL). If a record is deleted anyway — by
// a user, or by TTL — while a holder may still hold it:
//
//   - the holder learns it at its next heartbeat, whose write finds the
//     record gone: its lease ends (ErrLost, Done closed), and then it marks
//     the token record released. Its guarded writes fail at once
//     (ErrLost), since their condition names a record that is gone;
//   - until then nobody is granted the key: the token record says a holder
//     has not released, so TryAcquire returns ErrHeld and Acquire waits —
//     until the token record says released, or for that holder's duration ×
//     skew rate from when it found the record missing, as for a silent
//     holder (by then the holder has given up);
//   - the next holder's token is above the old one, whatever its clock says.
//
// A record deleted after its holder released (its token record says so)
// is taken at once. So is a key with neither record nor token record.
//
// # Groups: keys shared by a fleet
//
// Client.Group shares a fixed set of M keys (partitions of a job, shards,
// tenants) among the N worker processes that call Group.Run with the same
// name and keys. Run runs the caller's function once per key the worker is
// given, with the key's *Lease: Token, Done, Context, Save, Delete, WriteTx
// and Guard work as for a single lease. At rest every live worker holds
// ⌊M/N⌋ or ⌈M/N⌉ keys; no key has two holders at any moment under the
// clock-skew rule above, and every later holder of a key gets a greater
// token (key records and token records are those of single leases, written
// by the same transaction).
//
// A group costs per worker, not per key. Each worker has one worker record
// (key NUL "group:" name NUL "worker:" owner), listing the keys it holds
// and those it asks for; its heartbeat rewrites it, one PutItem per
// heartbeat interval whatever the number of keys (its write units grow
// with the list: about 1 per KB). Key records are written only when a key
// changes hands (and, for a key held longer than half the TTL, once per
// half TTL, so that TTL never removes a held key's record), and carry the
// group's name and the worker's incarnation (a random id per Run's join)
// instead of a heartbeat. A roster record (NUL "group:" name) lists the
// workers. Every poll interval each worker
// reads the roster and the workers' records (a GetItem and a BatchGetItem
// per 100 workers) and, only when something changed, writes its own record
// at once.
//
// The rules, with d the lease duration, r the skew rate and p the poll
// interval:
//
//   - A worker measures its membership as a single lease: from the moment
//     before a write of its record that succeeded, plus d on its own clock.
//     When that passes without a newer one, every key's lease ends (ErrLost)
//     and Run joins again as a new incarnation.
//   - A worker whose record has not changed for d × r on another's clock,
//     measured from after reading it, is marked ended by that other, with a
//     write conditioned on the version watched, so that a late heartbeat
//     fails; its keys are then free. A worker whose record is missing, or
//     names another incarnation, is treated the same after d × r from when
//     it was first seen so.
//   - A key is taken, in one transaction, only if its record is released,
//     missing (and not held when deleted, as for single leases), or names
//     an ended incarnation; conditioned on that record's incarnation, the
//     token record's token, and the taker's own record being live.
//   - Balance: a worker takes free keys up to ⌈M/N⌉ (from its second
//     round on, so that workers starting together see each other; at its
//     first round when the roster, read after its join, shows no other
//     live worker: a worker alone starts at once). A round reads the
//     records of the keys it tries in batches and takes them at once (up
//     to 16 at a time, each its own transaction), so a worker's start
//     costs a few round trips whatever its share: its join (a PutItem
//     over any earlier record of its owner, and the roster's update, whose
//     answer the first round reads instead of the roster), the reads, the
//     takes. One
//     with at least two keys fewer than another asks it for keys (in its
//     record); the holder hands a key over while it keeps at least one key
//     more than the asker: it cancels the key's Context, waits for the
//     function to return, then marks the record released; only then can
//     the asker take it. A handover costs the holder two writes (the
//     record and the token record, as Release) and the taker one
//     transaction.
//
// Bounds: waits on the workers' clocks plus k round trips, k counting the
// requests sent one after another on the way (requests sent at once count
// once), each taking a request's time to be answered:
//
//   - the keys of a crashed worker are taken no sooner than d and no later
//     than d × r + 2p + 10 round trips after its last heartbeat that got
//     through: a taker's read that just missed it; the next round's reads
//     of the roster and the workers' records, from which the wait starts;
//     the same two reads d × r later; the write marking the worker ended;
//     the roster's update (a read and a write); the key's records (record
//     and token record at once); the take;
//   - the keys of a worker leaving (Run's ctx cancelled) are taken within
//     p + 9 round trips of its functions' return: a heartbeat in flight,
//     which the leave waits for; the write marking its record ended (each
//     key's release and the roster's update go at the same time); then, as
//     for a crash, a read that just missed it, two reads, the roster's
//     update, the key's records and the take;
//   - a worker joining a fleet at rest holds its share within 2p plus the
//     requests of its first rounds and of the holders' handovers.
//
// TestGroupCrashBoundCountsRoundTrips and TestGroupLeaveBoundCountsRoundTrips
// count them. With the defaults (d 20 s, heartbeat 5 s, p 1 s, r 1.25) a
// crashed worker's keys move within 27 s + 10 round trips. Views up to a
// round old add rounds while several moves are under way, as does a take
// that loses a race with the key's release: each, p and a round's
// requests more.
//
// Limits: all workers of a group pass the same keys; a key held by a single
// lease (Acquire) is left alone, and Acquire refuses a key a worker holds.
// A worker record holds the names of its keys: their total length must stay
// well under DynamoDB's 400 KB per item (tens of thousands of short keys
// per worker). Owner names (WithOwner) must be unique among live workers;
// a restarted worker may reuse its name. IAM: dynamodb:GetItem,
// BatchGetItem, PutItem, UpdateItem and ConditionCheckItem on the lease
// table.
//
// # Clocks beyond the skew rate
//
// The skew rate keeps the holders of a key one at a time; fencing does not
// rest on it. When a holder's clock runs slower than a waiter's by more
// than r (or the holder pauses past its lease: a clock standing still),
// the waiter takes the key over while the old holder still counts it as
// held: its Done is not closed yet, and its function (a group key's fn)
// runs on until its lease ends on its own clock, or until its next guarded
// write is refused, which ends it (ErrLost). What is lost is that two
// functions run at once for that while; no guarded write of the old
// holder lands, and tokens still rise, since DynamoDB checks the guard
// against the record whatever the clocks say. Work outside guarded writes
// (messages sent, files written) is not fenced: hand Token() to those
// systems. A group worker whose clock runs slower than the others' by more
// than d × r / heartbeat interval (5 with the defaults) is silent between
// two of its heartbeats in their eyes: it is declared dead at rest over and
// over, each time losing every key and joining again, with fencing held in
// every such run. TestPausedHolderCannotWrite and
// TestGroupPausedWorkerWritesRefused show the writes of a holder stood
// still past its lease refused, and integration's TestGroupProcesses the
// same of a SIGSTOPped worker process;
// TestGroupSlowClockBeyondTheRateKeepsFencing runs a worker whose clock is
// 6 times slow (6 incarnations in 120 s, tokens rising at every write).
//
// # Telemetry
//
// A client reports through the telemetry of the Mapper it was built on
// (dynamo.WithTracerProvider, WithMeterProvider, WithLogger): spans
// lease.Acquire, lease.TryAcquire and lease.Release, under which the
// mapper's spans nest, and lease.Lost with the event ddbkit.lease.lost when
// a held lease is lost; the metrics ddbkit.lease.held (up-down: the
// leases the client holds now, those of Acquire and TryAcquire and the keys
// its group workers hold, each counted in when taken and out once when it
// ends) and ddbkit.lease.lost (every lost lease, a group key lost with its
// worker's membership included, with the reason; such keys get no warning
// of their own: the membership's loss is logged once).
// The mapper's logger is used unless WithLogger is given here. Lease keys
// and owner ids (and error messages, which name them) are recorded on spans
// and logs only with the mapper's dynamo.WithTelemetryKeys; without it an
// error is logged by its class. A key taken, released or handed over is
// logged at Debug; losses and failures at Warn. See docs/telemetry.md.
//
// # Table
//
// The table has a string hash key "key"; Client.CreateTable creates it
// (on-demand, TTL on "expires"). Records and token records share it, so
// the table and IAM policy are the same as before token records existed.
// IAM: dynamodb:GetItem, PutItem, UpdateItem for Acquire (whose
// transaction needs no action of its own), heartbeats and Release; ConditionCheckItem on it for guarded
// writes, which also need the actions of their own writes on their tables
// (transactions have no IAM action of their own); CreateTable,
// DescribeTable, UpdateTimeToLive for CreateTable.
package lease
