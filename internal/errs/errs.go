// Package errs holds the sentinel errors and the error types that the root
// package and its internal packages share, so that an internal package can
// return the values users match with errors.Is. The root package re-exports
// each under the same name (var ErrNotFound = errs.ErrNotFound; type
// SchemaError = errs.SchemaError), and documents them there.
package errs

import (
	"errors"
	"fmt"
)

// The sentinels; see the root package's names for what each means.
var (
	ErrNotFound        = errors.New("dynamo: item not found")
	ErrVersionConflict = errors.New("dynamo: version conflict")
	ErrConditionFailed = errors.New("dynamo: condition failed")
	ErrUnknownOutcome  = errors.New("dynamo: outcome of the write unknown")
	ErrInvalidInput    = errors.New("dynamo: invalid input")
	ErrInvalidSchema   = errors.New("dynamo: invalid schema")
	// ErrReplicatedConflict: a write to a strongly consistent global table
	// (MRSC) refused because another Region wrote the item at the same time.
	ErrReplicatedConflict = errors.New("dynamo: replicated write conflict")
)

// SchemaError reports a struct whose tags do not describe a usable table. It
// wraps ErrInvalidSchema.
type SchemaError struct {
	Struct string // the Go type, e.g. "main.Book"
	Field  string // the Go field, "" when the problem is the whole struct
	Reason string // what is wrong and how to fix it
}

func (e *SchemaError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("dynamo: struct %s: %s", e.Struct, e.Reason)
	}
	return fmt.Sprintf("dynamo: struct %s field %s: %s", e.Struct, e.Field, e.Reason)
}

// Unwrap returns ErrInvalidSchema.
func (e *SchemaError) Unwrap() error { return ErrInvalidSchema }
