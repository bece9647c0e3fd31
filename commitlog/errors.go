package commitlog

import (
	"errors"
	"fmt"

	"github.com/ddbkit/dynamo"
)

// Errors returned by the stores and by Committer and Log. They are wrapped with %w and
// context (the path, the ETag held, what to do next), so test for them with errors.Is.
var (
	// ErrUnknownOutcome is returned by a Committer's write, and by a Log's append, after an
	// attempt that may have been applied and that could not be settled: the store write
	// (or the log's claim) was sent, no answer said whether it took effect, and nothing
	// read since proves either way. The write may be in the store, or may still land
	// (see "Assumptions" in docs/commitlog.md); it is never sent again. Read the
	// object (or the log) before deciding to write again.
	//
	// It is the same value as dynamo.ErrUnknownOutcome, so errors.Is matches either.
	// Every other error of PutIfNotExists, PutIfMatch, CopyIfNotExists and Append means
	// that nothing was written.
	ErrUnknownOutcome = dynamo.ErrUnknownOutcome

	// ErrInvalidInput is wrapped by the errors of calls refused before anything was sent:
	// a bad path, log name, ETag or option. The message names the argument and the fix.
	// It is the same value as dynamo.ErrInvalidInput.
	ErrInvalidInput = dynamo.ErrInvalidInput

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

// inputError is an error wrapping ErrInvalidInput whose message is only its own (not the
// sentinel's text).
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }
func (e *inputError) Unwrap() error { return ErrInvalidInput }

// invalid returns an error wrapping ErrInvalidInput with the message format gives.
func invalid(format string, args ...any) error {
	return &inputError{msg: fmt.Sprintf(format, args...)}
}

// notApplied marks a store error that proves the write was not applied and never will
// be: the store answered with a refusal (an S3 4xx or 503), the request never left the
// process (a failed dial), or an in-process store failed before touching the object. A
// Committer releases its record at once after such an error, and reports it as a plain
// failure (nothing written).
type notApplied struct{ err error }

func (e *notApplied) Error() string { return e.err.Error() }
func (e *notApplied) Unwrap() error { return e.err }

// markNotApplied wraps err (non-nil) as a proof that the write was not applied.
func markNotApplied(err error) error { return &notApplied{err: err} }

// isNotApplied reports whether err proves that the write was not applied.
func isNotApplied(err error) bool {
	var na *notApplied
	return errors.As(err, &na)
}
