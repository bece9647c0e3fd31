package commitlog

import "context"

// ConditionalStore is a Store that can make writes conditional by itself, without DynamoDB.
// NewMemStore, NewDirStore and NewS3Store return stores that implement it; use a type
// assertion to get at it:
//
//	cs, ok := store.(commitlog.ConditionalStore)
//
// Use the native methods when every writer of the paths goes through a store that supports
// them (Amazon S3, a local directory, memory): one request per write, no table, no
// timeouts. Use a Committer for S3-compatible servers that ignore If-None-Match and
// If-Match, for CopyIfNotExists, and for directories on network filesystems. Do not mix
// the two on the same paths. Errors wrap ErrExists and ErrPreconditionFailed, as the
// Committer's do. See docs/commitlog.md, Committer or native conditional writes.
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
