package dynamo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/schema"
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
	provisioned bool
	read, write int64
	projections map[string]types.Projection
	stream      types.StreamViewType
	tags        map[string]string
	keyTypes    map[string]types.ScalarAttributeType
	ifNotExists bool
	retry       RetryPolicy // polling; when retrySet
	retrySet    bool
}

// WithProvisioned creates the table with provisioned capacity: read and
// write capacity units for the table and for each global secondary index.
// Both must be at least 1. The default is on-demand (PAY_PER_REQUEST).
func WithProvisioned(read, write int64) TableSpecOption {
	return specOption(func(o *createTableOptions) { o.provisioned, o.read, o.write = true, read, write })
}

// WithProjection sets which attributes are copied into the secondary index
// named index (declared with an `index` or `localIndex` tag). The default is
// every attribute (ProjectionType ALL). p is copied.
func WithProjection(index string, p types.Projection) TableSpecOption {
	p.NonKeyAttributes = slices.Clone(p.NonKeyAttributes)
	return specOption(func(o *createTableOptions) {
		if o.projections == nil {
			o.projections = map[string]types.Projection{}
		}
		o.projections[index] = p
	})
}

// WithStream enables a DynamoDB stream of the given view (KEYS_ONLY,
// NEW_IMAGE, OLD_IMAGE or NEW_AND_OLD_IMAGES). The default is no stream.
func WithStream(view types.StreamViewType) TableSpecOption {
	return specOption(func(o *createTableOptions) { o.stream = view })
}

// WithTags tags the new table with the given keys and values (added to those
// of earlier WithTags options). tags is copied. The default is no tags.
func WithTags(tags map[string]string) TableSpecOption {
	tags = maps.Clone(tags)
	return specOption(func(o *createTableOptions) {
		if o.tags == nil {
			o.tags = map[string]string{}
		}
		maps.Copy(o.tags, tags)
	})
}

// WithKeyType sets the DynamoDB type (S, N or B) of the key attribute named
// attribute, overriding the type told from its Go type. It is needed only
// for a key whose type implements attributevalue.Marshaler and whose zero
// value does not encode to a string, number or binary value; CreateTableInput
// says so when it is.
func WithKeyType(attribute string, t types.ScalarAttributeType) TableSpecOption {
	return specOption(func(o *createTableOptions) {
		if o.keyTypes == nil {
			o.keyTypes = map[string]types.ScalarAttributeType{}
		}
		o.keyTypes[attribute] = t
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
	b := &tableInput[T]{t: t, o: o, defined: map[int]bool{}, in: &dynamodb.CreateTableInput{
		TableName:   aws.String(t.name),
		BillingMode: types.BillingModePayPerRequest,
	}}
	if err := b.capacity(); err != nil {
		return nil, err
	}
	ks, err := b.keySchema(t.p.S.Hash, t.p.S.Range)
	if err != nil {
		return nil, err
	}
	b.in.KeySchema = ks
	if err := b.indexes(); err != nil {
		return nil, err
	}
	if err := b.checkKeyTypes(); err != nil {
		return nil, err
	}
	if err := b.streamAndTags(); err != nil {
		return nil, err
	}
	return b.in, nil
}

// tableInput is a CreateTableInput being built from table t's tags and
// options o, in phases: capacity, the keys, the indexes, the stream and
// tags. An error of any phase wraps ErrInvalidInput and names the option.
type tableInput[T any] struct {
	t  *Table[T]
	o  *createTableOptions
	in *dynamodb.CreateTableInput
	// defined holds the fields (indexes in the schema) given an attribute
	// definition: every key attribute of the table and its indexes, once,
	// in the order first used.
	defined map[int]bool
}

func (b *tableInput[T]) bad(format string, args ...any) error {
	return fmt.Errorf("%w: CreateTable %q: %s", ErrInvalidInput, b.t.name, fmt.Sprintf(format, args...))
}

// capacity sets the billing mode: on demand, or WithProvisioned's capacity.
func (b *tableInput[T]) capacity() error {
	o := b.o
	if o.provisioned {
		if o.read < 1 || o.write < 1 {
			return b.bad("WithProvisioned(%d, %d): provisioned capacity is at least 1 read and 1 write unit", o.read, o.write)
		}
		b.in.BillingMode = types.BillingModeProvisioned
		b.in.ProvisionedThroughput = &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(o.read), WriteCapacityUnits: aws.Int64(o.write)}
	}
	return nil
}

// define adds the attribute definition of field i, unless it has one.
func (b *tableInput[T]) define(i int) error {
	if b.defined[i] {
		return nil
	}
	b.defined[i] = true
	s := b.t.p.S
	at, err := s.KeyAttrType(b.t.name, &s.Fields[i], b.o.keyTypes, b.t.avEnc)
	if err != nil {
		return err
	}
	b.in.AttributeDefinitions = append(b.in.AttributeDefinitions,
		types.AttributeDefinition{AttributeName: aws.String(s.Fields[i].Name), AttributeType: at})
	return nil
}

// keySchema returns the key schema of fields hash and rng (-1: none),
// defining their attributes.
func (b *tableInput[T]) keySchema(hash, rng int) ([]types.KeySchemaElement, error) {
	hs, rs := []int{hash}, []int(nil)
	if rng >= 0 {
		rs = []int{rng}
	}
	return b.keySchemaOf(hs, rs)
}

// keySchemaOf returns the key schema of the fields hash and rng, each in
// key order: the HASH elements first, then the RANGE ones, as DynamoDB
// takes a multi-attribute key; it defines their attributes (once each).
func (b *tableInput[T]) keySchemaOf(hash, rng []int) ([]types.KeySchemaElement, error) {
	s := b.t.p.S
	ks := make([]types.KeySchemaElement, 0, len(hash)+len(rng))
	for _, role := range [...]struct {
		fields []int
		kt     types.KeyType
	}{{hash, types.KeyTypeHash}, {rng, types.KeyTypeRange}} {
		for _, i := range role.fields {
			ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(s.Fields[i].Name), KeyType: role.kt})
			if err := b.define(i); err != nil {
				return nil, err
			}
		}
	}
	return ks, nil
}

// indexes adds the secondary indexes the tags declare, with their
// projections (WithProjection, which must name one of them; default ALL)
// and, for global ones, the table's provisioned capacity.
func (b *tableInput[T]) indexes() error {
	s, o, in := b.t.p.S, b.o, b.in
	for name := range o.projections {
		if !slices.ContainsFunc(s.Indexes, func(x schema.SecondaryIndex) bool { return x.Name == name }) {
			return b.bad("WithProjection(%q): %s declares no such index (%s)", name, s.Type, indexNames(s.Indexes))
		}
	}
	for _, x := range s.Indexes {
		ks, err := b.keySchemaOf(x.Hash, x.Range)
		if err != nil {
			return err
		}
		proj := &types.Projection{ProjectionType: types.ProjectionTypeAll}
		if p, ok := o.projections[x.Name]; ok {
			if err := checkProjection(p); err != nil {
				return b.bad("WithProjection(%q): %v", x.Name, err)
			}
			if attr, ok := lacksEntity(s, x, p); ok {
				return b.bad("WithProjection(%q): %s leaves out the entity attribute %q, which reads of %s filter on (DynamoDB refuses the filter): add it to NonKeyAttributes (INCLUDE)",
					x.Name, p.ProjectionType, attr, s.Type)
			}
			proj = &types.Projection{ProjectionType: p.ProjectionType, NonKeyAttributes: slices.Clone(p.NonKeyAttributes)}
		}
		if x.Local {
			in.LocalSecondaryIndexes = append(in.LocalSecondaryIndexes, types.LocalSecondaryIndex{
				IndexName: aws.String(x.Name), KeySchema: ks, Projection: proj,
			})
			continue
		}
		gsi := types.GlobalSecondaryIndex{IndexName: aws.String(x.Name), KeySchema: ks, Projection: proj}
		if o.provisioned { // each global index has its own capacity
			gsi.ProvisionedThroughput = &types.ProvisionedThroughput{
				ReadCapacityUnits: aws.Int64(o.read), WriteCapacityUnits: aws.Int64(o.write),
			}
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, gsi)
	}
	return nil
}

// checkKeyTypes refuses a WithKeyType of an attribute that is no key of
// the table or of an index.
func (b *tableInput[T]) checkKeyTypes() error {
	s := b.t.p.S
	for attr := range b.o.keyTypes {
		if i, ok := s.ByName[attr]; !ok || !b.defined[i] {
			return b.bad("WithKeyType(%q): not a key attribute of the table or of an index of %s", attr, s.Type)
		}
	}
	return nil
}

// streamAndTags adds the stream (WithStream) and the tags (WithTags, in
// key order).
func (b *tableInput[T]) streamAndTags() error {
	o := b.o
	if o.stream != "" {
		if !slices.Contains(o.stream.Values(), o.stream) {
			return b.bad("WithStream(%q): use one of %v", o.stream, o.stream.Values())
		}
		b.in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: o.stream}
	}
	for _, k := range slices.Sorted(maps.Keys(o.tags)) {
		if k == "" {
			return b.bad("WithTags: a tag with an empty key")
		}
		b.in.Tags = append(b.in.Tags, types.Tag{Key: aws.String(k), Value: aws.String(o.tags[k])})
	}
	return nil
}

func indexNames(xs []schema.SecondaryIndex) string {
	if len(xs) == 0 {
		return "it has no `index` or `localIndex` tags"
	}
	names := make([]string, len(xs))
	for i, x := range xs {
		names[i] = x.Name
	}
	return "its indexes: " + strings.Join(names, ", ")
}

// lacksEntity returns the entity attribute of s when projection p of index
// x leaves it out (KEYS_ONLY, INCLUDE without it, and x not keyed by it).
func lacksEntity(s *schema.Schema, x schema.SecondaryIndex, p types.Projection) (string, bool) {
	if s.Entity < 0 || p.ProjectionType == types.ProjectionTypeAll || slices.Contains(slices.Concat(x.Hash, x.Range), s.Entity) {
		return "", false
	}
	attr := s.Fields[s.Entity].Name
	return attr, !slices.Contains(p.NonKeyAttributes, attr)
}

func checkProjection(p types.Projection) error {
	switch p.ProjectionType {
	case types.ProjectionTypeAll, types.ProjectionTypeKeysOnly:
		if len(p.NonKeyAttributes) > 0 {
			return fmt.Errorf("NonKeyAttributes go with ProjectionType INCLUDE, not %s", p.ProjectionType)
		}
	case types.ProjectionTypeInclude:
		if len(p.NonKeyAttributes) == 0 {
			return errors.New("ProjectionType INCLUDE needs NonKeyAttributes: the attributes to copy into the index")
		}
	default:
		return fmt.Errorf("ProjectionType %q: use ALL, KEYS_ONLY or INCLUDE", p.ProjectionType)
	}
	return nil
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
// with the request built from T's tags. Indexes the tags do not declare are
// allowed.
func (t *table) checkExisting(want *dynamodb.CreateTableInput, got *types.TableDescription) error {
	haveTypes, wantTypes := attrTypes(got.AttributeDefinitions), attrTypes(want.AttributeDefinitions)
	check := func(what string, have, want []types.KeySchemaElement, found bool) error {
		w, h := formatKeySchema(want, wantTypes), "missing"
		if found {
			h = formatKeySchema(have, haveTypes)
		}
		if h == w {
			return nil
		}
		return fmt.Errorf("%w: %q, but %s is %s where the tags of %s say %s: use another table name, or make the tags match the table",
			ErrTableExists, t.name, what, h, t.p.S.Type, w)
	}
	if err := check("its key", got.KeySchema, want.KeySchema, true); err != nil {
		return err
	}
	for _, x := range want.GlobalSecondaryIndexes {
		name := aws.ToString(x.IndexName)
		i := slices.IndexFunc(got.GlobalSecondaryIndexes, func(g types.GlobalSecondaryIndexDescription) bool { return aws.ToString(g.IndexName) == name })
		var have []types.KeySchemaElement
		if i >= 0 {
			have = got.GlobalSecondaryIndexes[i].KeySchema
		}
		if err := check("global index "+name, have, x.KeySchema, i >= 0); err != nil {
			return err
		}
	}
	for _, x := range want.LocalSecondaryIndexes {
		name := aws.ToString(x.IndexName)
		i := slices.IndexFunc(got.LocalSecondaryIndexes, func(l types.LocalSecondaryIndexDescription) bool { return aws.ToString(l.IndexName) == name })
		var have []types.KeySchemaElement
		if i >= 0 {
			have = got.LocalSecondaryIndexes[i].KeySchema
		}
		if err := check("local index "+name, have, x.KeySchema, i >= 0); err != nil {
			return err
		}
	}
	return nil
}

func attrTypes(defs []types.AttributeDefinition) map[string]types.ScalarAttributeType {
	m := make(map[string]types.ScalarAttributeType, len(defs))
	for _, d := range defs {
		m[aws.ToString(d.AttributeName)] = d.AttributeType
	}
	return m
}

// formatKeySchema renders a key schema for messages: "HASH id (S), RANGE n (N)".
func formatKeySchema(ks []types.KeySchemaElement, attrTypes map[string]types.ScalarAttributeType) string {
	var b strings.Builder
	for _, role := range [2]types.KeyType{types.KeyTypeHash, types.KeyTypeRange} {
		for _, k := range ks {
			if k.KeyType != role {
				continue
			}
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			name := aws.ToString(k.AttributeName)
			fmt.Fprintf(&b, "%s %s (%s)", role, name, attrTypes[name])
		}
	}
	return b.String()
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
