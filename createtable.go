package dynamo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/tabledef"
)

// Sentinel errors of table creation and deletion.
var (
	// ErrTableExists is returned by CreateTable when the table already exists
	// (and IfNotExists was not given), or exists with keys or indexes other
	// than the tags describe.
	ErrTableExists = errors.New("dynamo: table already exists")
	// ErrTableNotFound is returned by every call on a table that does not
	// exist (DynamoDB's ResourceNotFoundException): create it first
	// (Table.CreateTable), or check the name, region and endpoint.
	ErrTableNotFound = errors.New("dynamo: table not found")
)

// How CreateTable and DeleteTable poll DescribeTable by default (see
// RetryPolicy): the waits are bounded by tablePollMin, doubling up to
// tablePollMax. (The SDK's TableExistsWaiter sleeps at least 20 s; DynamoDB
// Local creates a table in about 0.1 s, DynamoDB in seconds.)
const (
	tablePollMin = 20 * time.Millisecond
	tablePollMax = time.Second
)

// CreateTableOption configures CreateTable: the TableSpecOptions, which say
// what table to create, and IfNotExists and WithRetry, which say how the
// call goes about it.
type CreateTableOption interface {
	applyCreateTable(*createTableOptions)
}

// TableSpecOption is a CreateTableOption that shapes the table created
// (WithProvisioned, WithProjection, WithStream, WithTags, WithKeyType); they
// alone configure CreateTableInput, which builds the request.
type TableSpecOption interface {
	CreateTableOption
	tableSpec()
}

type specOption func(*createTableOptions)

func (f specOption) applyCreateTable(o *createTableOptions) { f(o) }
func (specOption) tableSpec()                               {}

type callOption func(*createTableOptions)

func (f callOption) applyCreateTable(o *createTableOptions) { f(o) }

type createTableOptions struct {
	spec        tabledef.Options // what the TableSpecOptions set
	ifNotExists bool
	retry       RetryPolicy // polling; when retrySet
	retrySet    bool
}

// WithProvisioned creates the table with provisioned capacity: read and
// write capacity units for the table and for each global secondary index.
// Both must be at least 1. The default is on-demand (PAY_PER_REQUEST).
func WithProvisioned(read, write int64) TableSpecOption {
	return specOption(func(o *createTableOptions) { o.spec.Provisioned, o.spec.Read, o.spec.Write = true, read, write })
}

// WithProjection sets which attributes are copied into the secondary index
// named index (declared with an `index` or `localIndex` tag). The default is
// every attribute (ProjectionType ALL). p is copied.
func WithProjection(index string, p types.Projection) TableSpecOption {
	p.NonKeyAttributes = slices.Clone(p.NonKeyAttributes)
	return specOption(func(o *createTableOptions) {
		if o.spec.Projections == nil {
			o.spec.Projections = map[string]types.Projection{}
		}
		o.spec.Projections[index] = p
	})
}

// WithStream enables a DynamoDB stream of the given view (KEYS_ONLY,
// NEW_IMAGE, OLD_IMAGE or NEW_AND_OLD_IMAGES). The default is no stream.
func WithStream(view types.StreamViewType) TableSpecOption {
	return specOption(func(o *createTableOptions) { o.spec.Stream = view })
}

// WithTags tags the new table with the given keys and values (added to those
// of earlier WithTags options). tags is copied. The default is no tags.
func WithTags(tags map[string]string) TableSpecOption {
	tags = maps.Clone(tags)
	return specOption(func(o *createTableOptions) {
		if o.spec.Tags == nil {
			o.spec.Tags = map[string]string{}
		}
		maps.Copy(o.spec.Tags, tags)
	})
}

// WithKeyType sets the DynamoDB type (S, N or B) of the key attribute named
// attribute, overriding the type told from its Go type. It is needed only
// for a key whose type implements attributevalue.Marshaler and whose zero
// value does not encode to a string, number or binary value; CreateTableInput
// says so when it is.
func WithKeyType(attribute string, t types.ScalarAttributeType) TableSpecOption {
	return specOption(func(o *createTableOptions) {
		if o.spec.KeyTypes == nil {
			o.spec.KeyTypes = map[string]types.ScalarAttributeType{}
		}
		o.spec.KeyTypes[attribute] = t
	})
}

// IfNotExists makes CreateTable accept a table that already exists, as long
// as its key schema and the indexes the tags declare match T's tags: it waits
// until the table is ACTIVE and returns nil. The existing table is otherwise
// left as it is (its billing mode, TTL and other settings are not changed).
// Without IfNotExists an existing table is an error wrapping ErrTableExists.
func IfNotExists() CreateTableOption {
	return callOption(func(o *createTableOptions) { o.ifNotExists = true })
}

func applyCreateTableOptions[O CreateTableOption](opts []O) createTableOptions {
	var o createTableOptions
	applyOptions(&o, opts, O.applyCreateTable)
	return o
}

// CreateTable sends the request CreateTableInput returns, waits until the
// table and its indexes are ACTIVE (polling DescribeTable from 20 ms backing
// off to 1 s, never the SDK's 20 s waiter), and enables TTL on T's `ttl`
// attribute if it has one. An existing table is ErrTableExists unless
// IfNotExists is given; a failed TTL update leaves the table created and the
// error says so. ctx bounds the whole call. Details: docs/creating-tables.md.
//
// IAM: dynamodb:CreateTable, dynamodb:DescribeTable, dynamodb:UpdateTimeToLive
// (only with a `ttl` attribute); with WithTags also dynamodb:TagResource.
func (t *Table[T]) CreateTable(ctx context.Context, opts ...CreateTableOption) error {
	ctx, c := t.m.begin(ctx, "CreateTable", t.name)
	return c.end(t.createTable(ctx, opts))
}

func (t *Table[T]) createTable(ctx context.Context, opts []CreateTableOption) error {
	if err := t.refuseStrongCreate(); err != nil {
		return err
	}
	o := applyCreateTableOptions(opts)
	pol, err := t.m.retryPolicy(policyPoll, o.retry, o.retrySet, "CreateTable option WithRetry")
	if err != nil {
		return err
	}
	in, err := t.createTableInput(&o)
	if err != nil {
		return err
	}
	_, err = t.m.client.CreateTable(ctx, in)
	var inUse *types.ResourceInUseException
	switch {
	case errors.As(err, &inUse):
		if !o.ifNotExists {
			return fmt.Errorf("%w: %q (pass dynamo.IfNotExists() to accept an existing table): %w", ErrTableExists, t.name, err)
		}
		desc, err := t.waitActive(ctx, pol)
		if err != nil {
			return err
		}
		return t.checkExisting(in, desc)
	case err != nil:
		return fmt.Errorf("dynamo: CreateTable %q: %w", t.name, err)
	}
	s := t.p.S
	if _, err := t.waitActive(ctx, pol); err != nil {
		if s.TTL >= 0 {
			return fmt.Errorf("%w (the table was created; TTL on attribute %q is not enabled)", err, s.Fields[s.TTL].Name)
		}
		return err
	}
	if s.TTL < 0 {
		return nil
	}
	attr := s.Fields[s.TTL].Name
	_, err = t.m.client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(t.name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(attr),
			Enabled:       aws.Bool(true),
		},
	})
	if err != nil {
		return fmt.Errorf("dynamo: table %q was created, but enabling TTL on attribute %q failed (enable it with UpdateTimeToLive, or delete the table and create it again): %w", t.name, attr, err)
	}
	return nil
}

// CreateTableInput returns the request CreateTable sends, built from T's tags
// and opts, without sending it (DynamoDBMapper's generateCreateTableRequest):
// to inspect, adjust or generate infrastructure from. Key types come from Go
// types (strings S, numbers N, []byte B; WithKeyType names a marshaler's);
// bad options are errors wrapping ErrInvalidInput. Rules:
// docs/creating-tables.md.
func (t *Table[T]) CreateTableInput(opts ...TableSpecOption) (*dynamodb.CreateTableInput, error) {
	o := applyCreateTableOptions(opts)
	return t.createTableInput(&o)
}

func (t *Table[T]) createTableInput(o *createTableOptions) (*dynamodb.CreateTableInput, error) {
	return tabledef.Input(t.name, t.p.S, t.avEnc, &o.spec)
}

// waitActive polls DescribeTable until the table and its global secondary
// indexes are ACTIVE, and returns the table's description. A table that is
// not found yet is waited for: DescribeTable is eventually consistent, so it
// can miss a table CreateTable has just created.
func (t *table) waitActive(ctx context.Context, pol RetryPolicy) (*types.TableDescription, error) {
	status := "not found yet"
	for n := 0; ; n++ {
		if n > 0 {
			if pol.exhausted(n) {
				return nil, fmt.Errorf("dynamo: table %q is not ACTIVE (%s) after %d polls (the RetryPolicy's MaxAttempts): wait longer, or check the table in the console", t.name, status, n)
			}
			if err := pol.wait(ctx, n); err != nil {
				return nil, fmt.Errorf("dynamo: table %q is not ACTIVE (%s): %w", t.name, status, err)
			}
		}
		out, err := t.m.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.name)})
		var notFound *types.ResourceNotFoundException
		switch {
		case errors.As(err, &notFound):
			status = "not found yet"
			continue
		case err != nil:
			return nil, fmt.Errorf("dynamo: waiting for table %q to be ACTIVE: %w", t.name, err)
		case out.Table == nil:
			return nil, fmt.Errorf("dynamo: waiting for table %q to be ACTIVE: DescribeTable returned no table", t.name)
		}
		d := out.Table
		switch d.TableStatus {
		case types.TableStatusActive:
		case types.TableStatusCreating, types.TableStatusUpdating:
			status = "status " + string(d.TableStatus)
			continue
		default:
			return nil, fmt.Errorf("dynamo: table %q has status %s, not ACTIVE: wait until it is usable (or deleted) and try again", t.name, d.TableStatus)
		}
		busy := ""
		for _, g := range d.GlobalSecondaryIndexes {
			if g.IndexStatus == types.IndexStatusCreating || g.IndexStatus == types.IndexStatusUpdating {
				busy = aws.ToString(g.IndexName)
				break
			}
		}
		if busy != "" {
			status = "index " + busy + " not ACTIVE yet"
			continue
		}
		return d, nil
	}
}

// checkExisting compares the key schema and the indexes of an existing table
// with the request built from T's tags (tabledef.CheckExisting).
func (t *table) checkExisting(want *dynamodb.CreateTableInput, got *types.TableDescription) error {
	return tabledef.CheckExisting(t.name, t.p.S, want, got, ErrTableExists)
}

// DeleteTable deletes the table and waits until DescribeTable no longer
// finds it. ctx bounds the whole call, the waiting included. Deleting a
// table that does not exist is an error wrapping ErrTableNotFound. The
// table's items are lost: DeleteTable is meant for tests, examples and
// tools.
//
// IAM: dynamodb:DeleteTable, dynamodb:DescribeTable
func (t *table) DeleteTable(ctx context.Context) error {
	_, err := t.m.client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(t.name)})
	var notFound *types.ResourceNotFoundException
	switch {
	case errors.As(err, &notFound):
		return fmt.Errorf("%w: %q: %w", ErrTableNotFound, t.name, err)
	case err != nil:
		return fmt.Errorf("dynamo: DeleteTable %q: %w", t.name, err)
	}
	pol := defaultRetry(policyPoll)
	for n := 0; ; n++ {
		if n > 0 {
			if err := pol.wait(ctx, n); err != nil {
				return fmt.Errorf("dynamo: table %q is being deleted but still exists: %w", t.name, err)
			}
		}
		_, err := t.m.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.name)})
		switch {
		case errors.As(err, &notFound):
			return nil
		case err != nil:
			return fmt.Errorf("dynamo: waiting for table %q to be deleted: %w", t.name, err)
		}
	}
}
