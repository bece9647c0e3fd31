package stream

import (
	"errors"
	"fmt"
)

// ErrBadSequence is wrapped by the error of a sequence number that is not
// one.
var ErrBadSequence = errors.New("dynamo: stream: not a sequence number")

// ErrNoStream is wrapped by New's error for a table without a stream.
var ErrNoStream = errors.New("dynamo: stream: the table has no stream")

// ErrTrimmed is wrapped by a *TrimmedError.
var ErrTrimmed = errors.New("dynamo: stream: records were trimmed before they were read")

// TrimmedError reports records of a shard that DynamoDB trimmed (kept past
// its 24 hours) before the processor read them: after the checkpoint After
// (zero: from the shard's start) up to the shard's oldest record still kept,
// or the whole rest of a shard no longer listed. Run stops with it unless
// WithOnTrimmed accepts the loss.
type TrimmedError struct {
	Shard string
	After SequenceNumber
	// Gone: the shard itself is no longer listed (everything after After
	// is lost).
	Gone bool
	Err  error // DynamoDB's TrimmedDataAccessException, when it said so
}

func (e *TrimmedError) Error() string {
	where := "after sequence number " + e.After.String()
	if e.After.IsZero() {
		where = "from its start"
	}
	msg := fmt.Sprintf("dynamo: stream: shard %s: records %s were trimmed before they were read", e.Shard, where)
	if e.Gone {
		msg += " (the shard is no longer listed)"
	}
	msg += "; restart from the trim horizon with WithOnTrimmed to accept the loss"
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns ErrTrimmed and DynamoDB's error.
func (e *TrimmedError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrTrimmed, e.Err}
	}
	return []error{ErrTrimmed}
}
