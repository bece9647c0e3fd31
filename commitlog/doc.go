// Package commitlog makes writes to an object store conditional — create
// only if absent, replace only if unchanged — and builds a numbered,
// append-only commit log on top, synchronizing writers through DynamoDB
// where the store cannot do it itself.
//
//   - Store is an object store with ETags: NewS3Store (Amazon S3 and
//     S3-compatible servers), NewDirStore (a local directory) and
//     NewMemStore (memory). Its own writes are unconditional.
//   - Committer adds PutIfNotExists, PutIfMatch and CopyIfNotExists to any
//     Store, by the DynamoCommit protocol below (a DynamoDB table of lock
//     records).
//   - Log is an append-only log of entries <name>/00000000000000000001.json,
//     ... whose writers never wait out a timeout and never overwrite each
//     other (a DynamoDB table of permanent version claims).
//   - ConditionalStore is a Store with native conditional writes (S3's
//     If-None-Match / If-Match, a local directory, memory), usable without
//     DynamoDB.
//
// # The Committer's protocol
//
// A conditional operation on the object path with precondition etag (the
// ETag held, or "*" for "must not exist") goes like this:
//
//  1. HEAD path; on a precondition mismatch fail at once (ErrExists,
//     ErrPreconditionFailed), writing nothing.
//  2. Create the record (path, etag) in DynamoDB, on condition that it does
//     not exist (the mapper's save of an unsaved versioned record:
//     attribute_not_exists(generation)). The record stores the holder's
//     timeout, a random incarnation id and a random holder id.
//     - On success the writer holds the record. Its deadline is the moment
//     before it sent the write plus its timeout, on its own monotonic clock.
//     If the deadline has passed when it is ready to write, it writes
//     nothing and returns ErrTimeout; otherwise it performs the store
//     operation once, bounded by the time left, tagged with a fresh write id
//     where the store keeps them (WriteIDStore), and marks the record done.
//     - On conflict the failed write returns the record (ALL_OLD; no extra
//     read). A record marked done is reclaimed at once. Otherwise the
//     writer waits, sending HEAD every poll interval (WithPollInterval) and
//     failing fast on a precondition mismatch, until the holder's timeout ×
//     the clock skew rate (WithClockSkewRate) has passed on its own
//     monotonic clock since it first saw this incarnation and generation of
//     the record; then it reclaims the record with a write holding both
//     (generation = :g AND incarnation = :i, writing generation + 1 and the
//     same incarnation), and starts again at "on success" or "on conflict".
//     - A record write whose outcome is unknown (an answer lost, the SDK's
//     retries exhausted, dynamo.ErrUnknownOutcome) is settled by reading the
//     record: it is ours if it carries our holder id.
//  3. A writer that met another writer's record on the way (a reclaim, a
//     record gone since), or that wrote its record a timeout or more after
//     its HEAD, sends HEAD again before writing: a previous holder may have
//     changed the object.
//
// # A store write is sent once
//
// A store write that failed may have landed, or may still land. Once it has
// landed, writers holding the object's new ETag go ahead (their records are
// other records), so a second copy of it arriving later would overwrite
// their writes — and a HEAD showing the ETag held proves nothing, since the
// content may have gone A→B→A. So the Committer never sends a store write
// twice, and the S3 store's client retries it only after answers that prove
// it was not applied (4xx, 503, a failed dial). A failure is settled by a
// HEAD:
//
//   - the object carries our write id: the write landed; a success;
//   - a write (or its settling HEAD) that returns after the holder's
//     deadline, on the Committer's clock: an error wrapping
//     ErrUnknownOutcome, never a success, since a waiter may have
//     reclaimed the record and written meanwhile;
//   - the store proved the write was not applied, or a copy's source is
//     missing: an error, nothing written, the record marked done;
//   - the object is no longer the one replaced (another write id; another
//     ETag where the store keeps no ids), seen before the deadline: ours
//     landed and was replaced by a writer that saw it; a success;
//   - otherwise (unchanged, absent after a create, the HEAD failed): an
//     error wrapping ErrUnknownOutcome. The record stays, so others wait
//     out timeout × skew rate before they HEAD and decide.
//
// Every other error of PutIfNotExists, PutIfMatch and CopyIfNotExists means
// nothing was written to the store.
//
// # Incarnations
//
// A generation is not an identity: it starts again at 1 when a record is
// deleted (by TTL, or by hand) and created again. A waiter that watched a
// stale generation-1 record would otherwise reclaim, holding generation 1, a
// fresh record that another writer has just created and is writing under —
// two holders. So every record carries an incarnation id, written when it is
// created and kept by reclaims and done marks; a waiter starts its wait
// again whenever the incarnation or the generation it sees changes, and
// reclaims and done marks are conditioned on both. Records written by
// earlier versions of this package have no incarnation and are reclaimed on
// condition that they still have none.
//
// # Assumptions
//
// The protocol assumes of the store that a write the Committer gave up on
// (its request failed without an answer, or was cancelled at the holder's
// deadline) lands, if ever, before any waiter reclaims the record: within
// timeout × (skew rate − 1) after the holder's deadline, on clocks that tick
// at the same rate (40 s with the defaults). The Committer bounds every
// store request by the holder's deadline (a context deadline), and
// in-process stores (MemStore, DirStore) never land a write after the call
// returned; for S3, whose servers may finish a request whose body they
// received after the client gave up, pick a timeout (WithTimeout) far above
// the time a write takes, and a skew rate above 1. Nothing else depends on
// late writes: since no write is sent twice, a late write can only land
// before anyone saw it, or — past the assumption — over a reclaimer's write.
//
// It assumes of DynamoDB's TTL that it deletes no record, done or not,
// written less than timeout × skew rate ago: records are written (and
// marked done) with a TTL of WithTTL (at least ten times that) on the
// writer's wall clock, so the wall clocks of writers must not run behind
// DynamoDB's by more than WithTTL minus timeout × skew rate (nearly 1 h with
// the defaults). A writer that meets another writer's record, or that
// writes its record a timeout or more after its first HEAD, sends HEAD
// again once it holds the record, so a finished record deleted in between
// cannot hide its holder's write. Do not delete records by hand while their
// holders may be writing: a deleted record lets the next writer in at once.
// Waiting and reclaiming do not depend on TTL (see Incarnations).
//
// # How this port differs from object_store's DynamoCommit
//
//   - A finished operation marks its record done, so deleting an object and
//     creating it again does not wait out a stale lock (the original leaves
//     the record for its TTL, 60 s by default).
//   - Reclaims are conditioned on the record's incarnation as well as its
//     generation. The original's reclaim holds the generation only, so a
//     record deleted by TTL and created again by another writer can be
//     reclaimed over that writer's live hold.
//   - A store write is sent once and settled by write id (see above); the
//     original lets the SDK retry it.
//   - A record write that DynamoDB applied but whose response was lost is
//     recognised as our own (the mapper's write token, or the holder id read
//     back) instead of becoming a conflict with ourselves; conflicts are
//     resolved from the item the failed write returns, without reading it
//     again.
//
// Nobody compares clocks across machines: as long as no clock ticks faster
// than another by more than the skew rate, a holder's deadline passes
// before any waiter reclaims its record. Only conditional operations that go
// through Committers on the same table exclude each other.
//
// # Limits of the protocol
//
// Say them plainly:
//
//   - Unconditional writers race. Store.Put, Store.Copy, Store.Delete, a
//     Committer on another table, or native conditional writes on the same
//     paths are invisible to the protocol and can overwrite or be
//     overwritten. Keep conditional and unconditional writes on different
//     paths.
//   - A writer stalled past its timeout can still land its write. The
//     holder checks its deadline before it starts and bounds the store
//     request with the time left, but a request already on the wire (or a
//     process paused between the check and the send, by GC, a VM freeze, a
//     full network buffer) may reach the store after a waiter reclaimed the
//     record and wrote (see Assumptions). No lock with a timeout can prevent
//     this; only the store can (native conditional writes, which are
//     checked where the data is). Pick a timeout far above the time a write
//     takes.
//   - A failed store write whose outcome is unknown (a timeout, a dropped
//     connection) is reported as ErrUnknownOutcome and leaves its record in
//     place, so others wait out timeout × skew rate before they can write
//     the path: 60 s with the defaults.
//   - A Store of your own whose client re-sends a write after an attempt
//     that may have landed (as the AWS SDK's retryer does) can overwrite
//     the write of another Committer that saw the landed one. NewS3Store's
//     store retries the Committer's writes only after answers that prove
//     they were not applied, even through a wrapper Store (the context
//     says so); wrap it rather than writing your own, or make your store's
//     writes single attempts. A Store without write ids (WriteIDStore)
//     reports ErrUnknownOutcome more often.
//   - DynamoDB's TTL removes records after WithTTL (1 h by default, often
//     days later in practice); only cleaning up depends on it (see
//     Assumptions for what it must not do).
//
// # The Log's protocol
//
// Append(data) writes data to a temporary object <name>/_tmp/<random>,
// claims version N in DynamoDB with a save of an unsaved record (on
// condition attribute_not_exists: claims are permanent, have no TTL, and
// name the temporary object), copies the temporary object to
// <name>/<N, 20 digits>.json, marks the claim complete and deletes the
// temporary object. The version tried first is the one after the writer's
// last append, or after the latest claim (a strongly consistent Query,
// descending, Limit 1 — never a LIST of the store). When it is taken, the
// writer reads the latest claim again and tries the version after it:
// writers never wait for each other, and no two get the same version.
//
// Before claiming N, a writer makes sure entry N-1 has its object, copying
// the claim's temporary object there if need be (every copy of a claim's
// temporary object writes the same data, so doing it twice is harmless).
// So the objects never have a hole below the latest claim, and a writer
// that died after claiming and before copying is completed by the next
// writer — or by the next reader: Read completes an incomplete claim before
// reading it. A writer that passes an incomplete claim younger than the
// timeout only copies it (its writer is most likely still at work and
// marks it complete itself); an older one it also marks complete.
//
// AppendAt claims an exact version and returns ErrExists when it is taken,
// for callers that resolve conflicts themselves. Latest comes from
// DynamoDB. A claim whose response was lost is recognised as our own (the
// mapper's write token, or a read of the claim when the SDK gave up), so an
// entry is never appended twice by one call; when even the read fails, the
// error wraps ErrUnknownOutcome. A log's name is checked at OpenLog with the
// store's rules for paths (a directory store refuses "../up" and "a//b").
//
// The claim is the commit point: once Append has claimed a version, the
// entry is in the log, even if the process dies before the copy. Entries'
// objects are written only by copies of their claim's temporary object;
// writing them by other means breaks the log. Temporary objects of writers
// that died before claiming (or after, when their entry was passed while
// young and never read) are left behind; they cost storage only. Do not
// expire <name>/_tmp/ with a lifecycle rule unless every log's latest entry
// is surely read or appended to (which completes it) well within the rule's
// age: the latest claim's data may exist only there.
//
// # Committer or native conditional writes
//
// Amazon S3 has honoured If-None-Match: * (since August 2024) and If-Match
// (since November 2024) on PutObject: one request, no table, no timeouts,
// and no stalled writer can land a write late, since the store checks the
// condition where the data is. Prefer them (ConditionalStore) when every
// writer of the paths can use them. Pick the Committer (or a Log) for
// S3-compatible servers that ignore those headers, for CopyIfNotExists (no
// native conditional copy here: S3-compatible servers ignore CopyObject's
// If-None-Match, and Amazon S3's support for it is recent), and for directories shared over a network
// filesystem. A log over native writes (PutIfNotExists of N.json, retrying
// N+1 on ErrExists) needs one request per append where the DynamoDB Log
// needs five; see BENCHMARKS.md.
//
// # Tables
//
// The Committer and the Log use separate tables, since their keys differ:
//
//	Committer: path (S, hash), etag (S, range), generation (N, the mapper's
//	           version), timeout (N, ms), ttl (N, epoch seconds; TTL),
//	           done (BOOL), owner (S), incarnation (S), holder (S),
//	           ddbkit_wt (B, the write token)
//	Log:       log (S, hash: the log's name), version (N, range), temp (S),
//	           complete (BOOL), owner (S), claimed (N, epoch ms),
//	           rev (N, the mapper's version), ddbkit_wt (B)
//
// Committer.CreateTable and Log.CreateTable create them (on-demand; TTL on
// the Committer's). One Log table holds any number of logs.
//
// # Telemetry
//
// Committers and Logs report through the telemetry of the Mapper they were
// built on (dynamo.WithTracerProvider, WithMeterProvider, WithLogger): a
// span per conditional write (commitlog.PutIfNotExists, PutIfMatch,
// CopyIfNotExists) and per append (commitlog.Append, AppendAt), under which
// the mapper's spans nest; the event and counter ddbkit.commitlog.reclaimed
// when a record another writer left is reclaimed, which is also logged at
// Warn. The mapper's logger is used unless WithLogger is given here. Paths,
// log names and owner ids (and error messages, which name them) are
// recorded on spans and logs only with the mapper's
// dynamo.WithTelemetryKeys; data never. See docs/telemetry.md.
//
// # Permissions
//
// DynamoDB: dynamodb:PutItem and dynamodb:GetItem (Committer and Log; the
// Committer reads a record only to settle a lost answer), dynamodb:Query
// (Log) on the tables; dynamodb:CreateTable,
// dynamodb:DescribeTable and dynamodb:UpdateTimeToLive for CreateTable. S3:
// s3:GetObject (HEAD, GET, and the source of a copy), s3:PutObject,
// s3:DeleteObject, and s3:ListBucket on the bucket (without it S3 answers
// 403 instead of 404 for a missing object, which breaks the HEAD checks).
// A bucket encrypted with SSE-KMS, or a table with a customer-managed key,
// also needs kms:GenerateDataKey and kms:Decrypt on that key.
package commitlog
