package commitlog

import "errors"

// Errors returned by the stores and by Committer and Log. They are wrapped with %w and
// context (the path, the ETag held, what to do next), so test for them with errors.Is.
var (
	// ErrExists is returned by a conditional write whose target object (or log version)
	// already exists: PutIfNotExists and CopyIfNotExists when the destination is present,
	// and a Log append at an exact version that someone else already wrote. Read the
	// existing object (or the next version) and decide again.
	ErrExists = errors.New("commitlog: object already exists")

	// ErrPreconditionFailed is returned by PutIfMatch when the object's current ETag is not
	// the one the caller holds, or the object is gone. Read the object again (Get or Head),
	// re-apply the change and retry with the ETag just read.
	ErrPreconditionFailed = errors.New("commitlog: precondition failed: the object's ETag is not the one held")

	// ErrNotExist is returned by Store.Head, Store.Get and Store.Copy (for the source) when
	// the object does not exist, and by Log.Read for a version that was never written.
	ErrNotExist = errors.New("commitlog: object does not exist")
)
