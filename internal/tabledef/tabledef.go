// Package tabledef holds the rules of a table's definition: the
// CreateTableInput built from a type's schema and the CreateTable options
// (capacity, keys, indexes and their projections, stream, tags), and the
// comparison of an existing table with it. It is pure: no I/O, no client.
package tabledef

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/errs"
	"github.com/ddbkit/dynamo/internal/schema"
)

// Options is what the root's TableSpecOptions set.
type Options struct {
	Provisioned bool
	Read, Write int64
	Projections map[string]types.Projection
	Stream      types.StreamViewType
	Tags        map[string]string
	KeyTypes    map[string]types.ScalarAttributeType
}

// Input returns the CreateTableInput of table from schema s and the
// options o; enc is the mapper's encoder, which tells the type of a key
// with a custom encoding. Errors wrap ErrInvalidInput and name the option.
func Input(table string, s *schema.Schema, enc schema.Encoder, o *Options) (*dynamodb.CreateTableInput, error) {
	b := &tableInput{table: table, s: s, enc: enc, o: o, defined: map[int]bool{}, in: &dynamodb.CreateTableInput{
		TableName:   aws.String(table),
		BillingMode: types.BillingModePayPerRequest,
	}}
	if err := b.capacity(); err != nil {
		return nil, err
	}
	ks, err := b.keySchema(s.Hash, s.Range)
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
type tableInput struct {
	table string
	s     *schema.Schema
	enc   schema.Encoder
	o     *Options
	in    *dynamodb.CreateTableInput
	// defined holds the fields (indexes in the schema) given an attribute
	// definition: every key attribute of the table and its indexes, once,
	// in the order first used.
	defined map[int]bool
}

func (b *tableInput) bad(format string, args ...any) error {
	return fmt.Errorf("%w: CreateTable %q: %s", errs.ErrInvalidInput, b.table, fmt.Sprintf(format, args...))
}

// capacity sets the billing mode: on demand, or WithProvisioned's capacity.
func (b *tableInput) capacity() error {
	o := b.o
	if o.Provisioned {
		if o.Read < 1 || o.Write < 1 {
			return b.bad("WithProvisioned(%d, %d): provisioned capacity is at least 1 read and 1 write unit", o.Read, o.Write)
		}
		b.in.BillingMode = types.BillingModeProvisioned
		b.in.ProvisionedThroughput = &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(o.Read), WriteCapacityUnits: aws.Int64(o.Write)}
	}
	return nil
}

// define adds the attribute definition of field i, unless it has one.
func (b *tableInput) define(i int) error {
	if b.defined[i] {
		return nil
	}
	b.defined[i] = true
	s := b.s
	at, err := s.KeyAttrType(b.table, &s.Fields[i], b.o.KeyTypes, b.enc)
	if err != nil {
		return err
	}
	b.in.AttributeDefinitions = append(b.in.AttributeDefinitions,
		types.AttributeDefinition{AttributeName: aws.String(s.Fields[i].Name), AttributeType: at})
	return nil
}

// keySchema returns the key schema of fields hash and rng (-1: none),
// defining their attributes.
func (b *tableInput) keySchema(hash, rng int) ([]types.KeySchemaElement, error) {
	hs, rs := []int{hash}, []int(nil)
	if rng >= 0 {
		rs = []int{rng}
	}
	return b.keySchemaOf(hs, rs)
}

// keySchemaOf returns the key schema of the fields hash and rng, each in
// key order: the HASH elements first, then the RANGE ones, as DynamoDB
// takes a multi-attribute key; it defines their attributes (once each).
func (b *tableInput) keySchemaOf(hash, rng []int) ([]types.KeySchemaElement, error) {
	s := b.s
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
func (b *tableInput) indexes() error {
	s, o, in := b.s, b.o, b.in
	for name := range o.Projections {
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
		if p, ok := o.Projections[x.Name]; ok {
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
		if o.Provisioned { // each global index has its own capacity
			gsi.ProvisionedThroughput = &types.ProvisionedThroughput{
				ReadCapacityUnits: aws.Int64(o.Read), WriteCapacityUnits: aws.Int64(o.Write),
			}
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, gsi)
	}
	return nil
}

// checkKeyTypes refuses a WithKeyType of an attribute that is no key of
// the table or of an index.
func (b *tableInput) checkKeyTypes() error {
	s := b.s
	for attr := range b.o.KeyTypes {
		if i, ok := s.ByName[attr]; !ok || !b.defined[i] {
			return b.bad("WithKeyType(%q): not a key attribute of the table or of an index of %s", attr, s.Type)
		}
	}
	return nil
}

// streamAndTags adds the stream (WithStream) and the tags (WithTags, in
// key order).
func (b *tableInput) streamAndTags() error {
	o := b.o
	if o.Stream != "" {
		if !slices.Contains(o.Stream.Values(), o.Stream) {
			return b.bad("WithStream(%q): use one of %v", o.Stream, o.Stream.Values())
		}
		b.in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: o.Stream}
	}
	for _, k := range slices.Sorted(maps.Keys(o.Tags)) {
		if k == "" {
			return b.bad("WithTags: a tag with an empty key")
		}
		b.in.Tags = append(b.in.Tags, types.Tag{Key: aws.String(k), Value: aws.String(o.Tags[k])})
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

// CheckExisting compares the key schema and the indexes of table as got
// describes it with want, the request built from s; a mismatch is an error
// wrapping exists (the root's ErrTableExists). Indexes s does not declare
// are allowed.
func CheckExisting(table string, s *schema.Schema, want *dynamodb.CreateTableInput, got *types.TableDescription, exists error) error {
	haveTypes, wantTypes := AttrTypes(got.AttributeDefinitions), AttrTypes(want.AttributeDefinitions)
	check := func(what string, have, want []types.KeySchemaElement, found bool) error {
		w, h := FormatKeySchema(want, wantTypes), "missing"
		if found {
			h = FormatKeySchema(have, haveTypes)
		}
		if h == w {
			return nil
		}
		return fmt.Errorf("%w: %q, but %s is %s where the tags of %s say %s: use another table name, or make the tags match the table",
			exists, table, what, h, s.Type, w)
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

// AttrTypes returns the types of attribute definitions, by name.
func AttrTypes(defs []types.AttributeDefinition) map[string]types.ScalarAttributeType {
	m := make(map[string]types.ScalarAttributeType, len(defs))
	for _, d := range defs {
		m[aws.ToString(d.AttributeName)] = d.AttributeType
	}
	return m
}

// FormatKeySchema renders a key schema for messages: "HASH id (S), RANGE n (N)".
func FormatKeySchema(ks []types.KeySchemaElement, attrTypes map[string]types.ScalarAttributeType) string {
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
