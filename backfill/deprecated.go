package backfill

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/lease"
)

// The package's old names, kept so that code written against them still
// compiles and works as before. Each says what to use instead.

// New is NewMigration over a client: its writes go through
// dynamo.NewMapper(c, opts...) with the options of MapperOptions.
//
// Deprecated: use NewMigration with the service's *dynamo.Mapper.
func New[T any](c dynamo.Client, table, id string, fn func(T) (T, error), opts ...Option) (*Migration[T], error) {
	return newMigration("New", nil, c, table, id, nil, fn, opts)
}

// NewQuery is NewQueryMigration over a client: its writes go through
// dynamo.NewMapper(c, opts...) with the options of MapperOptions.
//
// Deprecated: use NewQueryMigration with the service's *dynamo.Mapper.
func NewQuery[T any](c dynamo.Client, table, id string, key expression.KeyConditionBuilder, fn func(T) (T, error), opts ...Option) (*Migration[T], error) {
	return newQueryMigration("NewQuery", nil, c, table, id, key, fn, opts)
}

// Clean is NewCleanMigration over a client: its writes go through
// dynamo.NewMapper(c, opts...) with the options of MapperOptions.
//
// Deprecated: use NewCleanMigration with the service's *dynamo.Mapper.
func Clean[T any](c dynamo.Client, table, id string, opts ...Option) (*Migration[T], error) {
	return New(c, table, "clean:"+id, unchanged[T], cleaning(id, opts)...)
}

// MapperOptions are passed to the dynamo.NewMapper that New, NewQuery and
// Clean build for the migration's writes: give the options the service's
// own mapper uses (encoders, write token attribute, retry policy) so that
// items are written the same way. NewMigration, NewQueryMigration and
// NewCleanMigration take that mapper itself, and refuse MapperOptions.
//
// Deprecated: pass a *dynamo.Mapper built with these options to
// NewMigration, NewQueryMigration or NewCleanMigration.
func MapperOptions(opts ...dynamo.Option) Option {
	return func(o *options) { o.mapperOpts, o.mapperSet = append(o.mapperOpts, opts...), true }
}

// Fleet is the old name of WithFleet.
//
// Deprecated: use WithFleet.
func Fleet(leases *lease.Client, checkpoints string) Option { return WithFleet(leases, checkpoints) }

// Segments is the old name of WithSegments.
//
// Deprecated: use WithSegments.
func Segments(n int) Option { return WithSegments(n) }

// PageSize is the old name of WithPageSize.
//
// Deprecated: use WithPageSize.
func PageSize(n int) Option { return WithPageSize(n) }

// Capacity is the old name of WithCapacity.
//
// Deprecated: use WithCapacity.
func Capacity(read, write float64) Option { return WithCapacity(read, write) }

// DryRun is the old name of WithDryRun.
//
// Deprecated: use WithDryRun.
func DryRun() Option { return WithDryRun() }

// SkipFailures is the old name of WithSkipFailures.
//
// Deprecated: use WithSkipFailures.
func SkipFailures() Option { return WithSkipFailures() }

// Mark is the old name of WithMark.
//
// Deprecated: use WithMark.
func Mark(attr string) Option { return WithMark(attr) }

// PollInterval is the old name of WithPollInterval.
//
// Deprecated: use WithPollInterval.
func PollInterval(d time.Duration) Option { return WithPollInterval(d) }

// CheckpointInterval is the old name of WithCheckpointInterval.
//
// Deprecated: use WithCheckpointInterval.
func CheckpointInterval(d time.Duration) Option { return WithCheckpointInterval(d) }

// StronglyConsistent is the old name of WithStronglyConsistent.
//
// Deprecated: use WithStronglyConsistent.
func StronglyConsistent() Option { return WithStronglyConsistent() }

// Index is the old name of WithIndex.
//
// Deprecated: use WithIndex.
func Index(name string) Option { return WithIndex(name) }
