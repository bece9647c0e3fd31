package commitlog

import "context"

// ConditionalStore is a Store that can make writes conditional by itself, without DynamoDB.
// NewMemStore, NewDirStore and NewS3Store return stores that implement it; use a type
// assertion to get at it:
//
//	cs, ok := store.(commitlog.ConditionalStore)
//
// # Native conditions or a Committer
//
// Use the native methods when every writer of the paths goes through a store that supports
// them:
//
//   - Amazon S3 (conditional PutObject with If-None-Match since August 2024, with If-Match
//     since November 2024): one request per write, no DynamoDB table, no timeouts.
//   - A local directory (NewDirStore) shared by the processes of one machine.
//   - Memory (NewMemStore), within one process.
//
// Use a Committer (DynamoDB-synchronized, the DynamoCommit protocol) instead when:
//
//   - the store is S3-compatible but does not honour If-None-Match / If-Match on PutObject
//     (many self-hosted and older servers ignore the headers and overwrite silently — check
//     yours with a test before relying on native conditions);
//   - you need CopyIfNotExists: ConditionalStore has no conditional copy. S3-compatible
//     servers ignore conditions on CopyObject (gofakes3 does: see package s3test), and
//     support in Amazon S3 itself is recent (the SDK models If-None-Match on CopyObject),
//     so a copy that must not overwrite goes through the Committer (or a Log, which is
//     built on it);
//   - the directory is on a network filesystem (NFS, SMB) or shared between machines, where
//     the DirStore's locking is not reliable.
//
// Do not mix the two on the same paths: the Committer does not see native conditional
// writes and the store does not see the Committer's records.
//
// Native conditional writes return errors wrapping ErrExists and ErrPreconditionFailed, the
// same sentinels as the Committer's, so code written against one switches to the other.
type ConditionalStore interface {
	Store

	// PutIfNotExists writes data to path only if no object exists there. It returns an
	// error wrapping ErrExists, and writes nothing, when one does. Of several concurrent
	// calls on the same absent path exactly one succeeds.
	PutIfNotExists(ctx context.Context, path string, data []byte) (ObjectInfo, error)

	// PutIfMatch replaces the object at path with data only if its current ETag equals
	// etag (compared as strings, quotes included). It returns an error wrapping
	// ErrPreconditionFailed, and writes nothing, when the ETag differs or the object does
	// not exist. Of several concurrent calls holding the same ETag at most one succeeds.
	PutIfMatch(ctx context.Context, path string, data []byte, etag string) (ObjectInfo, error)
}
