// Package commitlog makes writes to an object store conditional — create
// only if absent, replace only if unchanged — and builds a numbered,
// append-only commit log on top, synchronizing writers through DynamoDB
// where the store cannot do it itself.
//
//   - Store is an object store with ETags: NewS3Store (Amazon S3 and
//     S3-compatible servers), NewDirStore (a local directory) and
//     NewMemStore (memory). Its own writes are unconditional.
//   - Committer adds PutIfNotExists, PutIfMatch and CopyIfNotExists to any
//     Store, by the DynamoCommit protocol (a DynamoDB table of lock
//     records).
//   - Log is an append-only log of entries <name>/00000000000000000001.json,
//     ... whose writers never wait out a timeout and never overwrite each
//     other (a DynamoDB table of permanent version claims).
//   - ConditionalStore is a Store with native conditional writes (S3's
//     If-None-Match / If-Match, a local directory, memory), usable without
//     DynamoDB.
//
// A sketch:
//
//	store := commitlog.NewS3Store(s3Client, "my-bucket")
//	c, err := commitlog.NewCommitter(m, "commits", store) // c.CreateTable(ctx) once
//	_, err = c.PutIfNotExists(ctx, "t/_manifest.json", data) // ErrExists if there
//	l, err := commitlog.OpenLog(m, "logs", store, "t/_log") // l.CreateTable(ctx) once
//	v, err := l.Append(ctx, entry) // t/_log/<v, 20 digits>.json
//
// # Rules at a glance
//
//   - Committer: HEAD, fail fast on a precondition mismatch; create the
//     record (path, etag) in DynamoDB if absent; write the store once within
//     the holder's timeout, measured on its own monotonic clock; mark the
//     record done. A waiter reclaims a record not done after the holder's
//     timeout × the clock skew rate on its own clock, conditioned on the
//     record's generation and incarnation.
//   - A store write is sent once, never again; a failure is settled by a
//     HEAD (write ids where the store keeps them). An error wrapping
//     ErrUnknownOutcome means it may have landed; every other error of
//     PutIfNotExists, PutIfMatch and CopyIfNotExists means nothing was
//     written.
//   - Only Committers on the same table exclude each other: unconditional
//     writes, native conditional writes or another table on the same paths
//     race with them. A writer stalled past its timeout can still land its
//     write; pick a timeout (WithTimeout) far above a write's time.
//   - Log: Append claims version N in DynamoDB (permanent claims), copies its
//     temporary object to the entry and marks the claim complete. The claim
//     is the commit point; the next reader or writer completes an entry
//     whose writer died. AppendAt claims an exact version (ErrExists).
//   - Prefer native conditional writes (ConditionalStore) where every writer
//     can use them: one request, no table, no timeouts. Pick the Committer
//     for S3-compatible servers that ignore the headers, CopyIfNotExists and
//     network filesystems.
//   - Tables: the Committer's and the Log's are separate (CreateTable
//     creates them, on-demand). IAM: dynamodb:PutItem, GetItem (and Query
//     for the Log); s3:GetObject, PutObject, DeleteObject and ListBucket.
//   - Telemetry goes through the Mapper's: a span per conditional write and
//     per append; ddbkit.commitlog.reclaimed when a record is reclaimed.
//
// # Guide
//
// The rules in depth are in the repository's docs/commitlog.md, one section
// each:
//
//   - docs/commitlog.md#the-committers-protocol
//   - docs/commitlog.md#a-store-write-is-sent-once
//   - docs/commitlog.md#errors-of-the-committers-writes
//   - docs/commitlog.md#incarnations
//   - docs/commitlog.md#assumptions
//   - docs/commitlog.md#how-this-port-differs-from-object_stores-dynamocommit
//   - docs/commitlog.md#limits-of-the-protocol
//   - docs/commitlog.md#the-logs-protocol
//   - docs/commitlog.md#committer-or-native-conditional-writes
//   - docs/commitlog.md#directory-store
//   - docs/commitlog.md#s3-store
//   - docs/commitlog.md#tables
//   - docs/commitlog.md#telemetry
//   - docs/commitlog.md#permissions
//
// docs/iam.md has the policy per call, docs/telemetry.md the telemetry of
// every package.
package commitlog
