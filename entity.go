package dynamo

import (
	"context"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/schema"
)

// Several entity types in one table (single-table design).
//
// A type declares its entity with a string field tagged `entity=NAME`, e.g.
//
//	Kind string `dynamo:"kind,entity=order"`
//
// Its writes store NAME in that attribute and are conditioned on the key
// holding no item or an item of the same entity, its reads skip (or do not
// find) items of other entities, and Entities reads items of several types
// from one Query or Scan, each decoded as its own type.

// notOurs is the error of a read of table at key that found item (nil:
// none), an item of another entity than the type's: ErrNotFound naming
// both entities, as every read of the type reports it (Load, a Transact
// Load, Table.Current, ConditionError.Decode); nil when item is the
// type's or there is none.
func notOurs(s *schema.Schema, table string, key, item map[string]types.AttributeValue) error {
	other, ok := s.OtherEntity(item)
	if !ok {
		return nil
	}
	return fmt.Errorf("%w: table %q key %s holds an item of entity %s, not %q", ErrNotFound, table, formatKey(key), other, s.EntityName)
}

// withEntity returns boxed and v unchanged unless the type has an entity
// attribute and v's is empty; then a new copy of v with the entity name set,
// as stored (stampEntity) and as a Load returns it.
func (t *table) withEntity(boxed any, v reflect.Value) (any, reflect.Value) {
	s := t.p.S
	if s.Entity < 0 {
		return boxed, v
	}
	f := &s.Fields[s.Entity]
	if fv := v.FieldByIndex(f.Index); fv.String() != "" {
		return boxed, v // another name is refused by stampEntity
	}
	nv := reflect.New(s.Type)
	nv.Elem().Set(v)
	nv.Elem().FieldByIndex(f.Index).SetString(s.EntityName)
	return nv.Interface(), nv.Elem()
}

// entityKeyOf reports whether the entity attribute of the type (an entity
// type) is a key attribute of index (declared in its tags), where a Query
// cannot filter on it: DynamoDB refuses a filter on a key attribute of
// what it queries, so the key condition must fix it (checkEntityKeyTerm).
func (t *table) entityKeyOf(index string) bool {
	hash, rng, known := t.listingKey(index)
	return index != "" && known && slices.Contains(slices.Concat(hash, rng), t.p.S.Entity)
}

// checkEntityKeyTerm refuses the key condition kc of a Query of index,
// keyed by the entity attribute, unless it fixes that attribute to the
// type's entity name (plan.CheckEntityKeyTerm).
func (t *table) checkEntityKeyTerm(op, index string, kc *plan.KeyCond) error {
	return plan.CheckEntityKeyTerm(t.p.S, op, t.name, index, kc)
}

// UnknownItem is what Entities yields for an item that no member type
// claims: the item as stored.
type UnknownItem map[string]types.AttributeValue

// EntityMember is one type of an Entities: see Member.
type EntityMember interface {
	member() *entityMember
}

type entityMember struct {
	table   string
	keys    [2]string // the table's hash and range attribute names
	typ     string
	name    string // entity name, "" when told apart otherwise
	match   func(map[string]types.AttributeValue) bool
	decode  func(map[string]types.AttributeValue) (any, error)
	prepare func(op string, key *expression.KeyConditionBuilder, opts []QueryOption) *listing
	client  Client
	err     error // a refusal NewEntities returns (Member returns no error)
}

func (m *entityMember) member() *entityMember { return m }

// Member declares t's type a member of an Entities. Its items are told
// apart by its `entity=NAME` attribute; for a type without one (items
// written before the table held several types), by the first of match that
// is given: KeyPrefix or MatchFunc. Items yielded for it are Ts.
//
// A nil t, a MatchFunc(nil) or a KeyPrefix with an empty or invalid
// attribute name or prefix is refused by NewEntities.
func Member[T any](t *Table[T], match ...EntityMatch) EntityMember {
	if t == nil || t.p == nil {
		return &entityMember{typ: reflect.TypeFor[T]().String(), err: fmt.Errorf("%w: NewEntities: Member of a nil *Table[%s]: pass a Table from NewTable", ErrInvalidInput, reflect.TypeFor[T]())}
	}
	s := t.p.S
	m := &entityMember{table: t.name, typ: s.Type.String(), name: s.EntityName, client: t.m.client, prepare: t.prepareAll}
	m.keys[0] = s.Fields[s.Hash].Name
	if s.Range >= 0 {
		m.keys[1] = s.Fields[s.Range].Name
	}
	m.decode = func(item map[string]types.AttributeValue) (any, error) {
		// As Table.Query decodes: an *ItemDecodeError naming the item.
		var v T
		if err := (&itemDecoder[T]{t: t}).decodeItem(item, &v); err != nil {
			return nil, err
		}
		return v, nil
	}
	switch {
	case len(match) > 0 && match[0] != nil:
		m.match = match[0].match
		switch mt := match[0].(type) {
		case matchFunc:
			if mt == nil {
				m.err = fmt.Errorf("%w: NewEntities: %s: MatchFunc(nil): pass a function that reports whether an item is a %s", ErrInvalidInput, m.typ, m.typ)
			}
		case keyPrefix:
			switch {
			case mt.attr == "" || !utf8.ValidString(mt.attr):
				m.err = fmt.Errorf("%w: NewEntities: %s: KeyPrefix attribute %q: name an attribute (valid UTF-8, not empty), e.g. KeyPrefix(\"sk\", \"ORDER#\")", ErrInvalidInput, m.typ, mt.attr)
			case !utf8.ValidString(mt.prefix):
				m.err = fmt.Errorf("%w: NewEntities: %s: KeyPrefix prefix %q is not valid UTF-8, so no stored string can start with it: give a valid UTF-8 prefix", ErrInvalidInput, m.typ, mt.prefix)
			}
		}
	case s.Entity >= 0:
		m.match = func(item map[string]types.AttributeValue) bool { _, other := s.OtherEntity(item); return !other }
	}
	return m
}

// EntityMatch tells the items of a member type without an entity attribute
// apart: KeyPrefix or MatchFunc.
type EntityMatch interface {
	match(map[string]types.AttributeValue) bool
}

type matchFunc func(map[string]types.AttributeValue) bool

func (f matchFunc) match(item map[string]types.AttributeValue) bool { return f(item) }

// KeyPrefix matches the items whose attribute attr (typically the sort key,
// e.g. "sk" holding "ORDER#...") is a string starting with prefix.
// An empty or invalid UTF-8 attr or prefix is refused by NewEntities.
func KeyPrefix(attr, prefix string) EntityMatch {
	return keyPrefix{attr: attr, prefix: prefix}
}

type keyPrefix struct{ attr, prefix string }

func (k keyPrefix) match(item map[string]types.AttributeValue) bool {
	s, ok := item[k.attr].(*types.AttributeValueMemberS)
	return ok && strings.HasPrefix(s.Value, k.prefix)
}

// MatchFunc matches the items for which f returns true. f must not modify
// the item. A nil f is refused by NewEntities.
func MatchFunc(f func(item map[string]types.AttributeValue) bool) EntityMatch {
	return matchFunc(f)
}

// Entities reads a table that holds items of several types (single-table
// design): one Query or Scan yields each item decoded as the type of the
// first member that claims it, for a type switch:
//
//	for v, err := range shop.Query(ctx, expression.Key("pk").Equal(expression.Value("CUSTOMER#7"))) {
//		switch v := v.(type) {
//		case Customer: ...
//		case Order: ...
//		case dynamo.UnknownItem: ... // no member claims it
//		}
//	}
//
// Writes go through each type's own Table, with its version rules; a type
// with an `entity=NAME` attribute never writes over another entity's item.
// An Entities is safe for concurrent use.
type Entities struct {
	members []*entityMember
}

// NewEntities returns an Entities of the given members, which must be of
// one table (the same name and key attributes) and be told apart: each
// with an `entity=NAME` attribute (distinct names) or an EntityMatch.
// It sends nothing.
func NewEntities(members ...EntityMember) (*Entities, error) {
	if len(members) == 0 {
		return nil, fmt.Errorf("%w: NewEntities with no members: pass dynamo.Member(table) for each type", ErrInvalidInput)
	}
	e := &Entities{}
	names := map[string]string{}
	for i, mm := range members {
		if mm == nil {
			return nil, fmt.Errorf("%w: NewEntities member %d is nil", ErrInvalidInput, i)
		}
		m := mm.member()
		if m.err != nil {
			return nil, m.err
		}
		if m.match == nil {
			return nil, fmt.Errorf("%w: NewEntities: %s has no entity attribute: tag a string field `dynamo:\"kind,entity=NAME\"`, or pass dynamo.KeyPrefix or dynamo.MatchFunc to Member",
				ErrInvalidInput, m.typ)
		}
		if first := e.members; len(first) > 0 && (m.table != first[0].table || m.keys != first[0].keys) {
			return nil, fmt.Errorf("%w: NewEntities: %s is of table %q with keys %v, %s of table %q with keys %v: members share one table and its keys",
				ErrInvalidInput, first[0].typ, first[0].table, first[0].keys, m.typ, m.table, m.keys)
		}
		if m.name != "" {
			if other, dup := names[m.name]; dup {
				return nil, fmt.Errorf("%w: NewEntities: %s and %s are both entity %q: give each type its own name", ErrInvalidInput, other, m.typ, m.name)
			}
			names[m.name] = m.typ
		}
		e.members = append(e.members, m)
	}
	return e, nil
}

// classify decodes item as the first member that claims it.
func (e *Entities) classify(item map[string]types.AttributeValue) (any, error) {
	for _, m := range e.members {
		if m.match(item) {
			return m.decode(item)
		}
	}
	return UnknownItem(item), nil
}

// Query reads the items that key selects, as Table.Query does (same options,
// checks, paging and errors), and yields each decoded as its member's type
// (or as an UnknownItem). The key condition is checked against the table's
// keys, or the Index's as the first member's tags declare it.
//
// IAM: dynamodb:Query on the table (arn:…:table/T), or with Index on the
// index (arn:…:table/T/index/N).
func (e *Entities) Query(ctx context.Context, key expression.KeyConditionBuilder, opts ...QueryOption) iter.Seq2[any, error] {
	if e == nil || len(e.members) == 0 {
		return e.unmade(opQuery)
	}
	return e.iterate(ctx, e.members[0].prepare(opQuery, &key, opts))
}

// Scan reads every item of the table (or of the Index, or of one Segment),
// as Table.Scan does, and yields each decoded as its member's type (or as an
// UnknownItem).
//
// IAM: dynamodb:Scan on the table (arn:…:table/T), or with Index on the
// index (arn:…:table/T/index/N).
func (e *Entities) Scan(ctx context.Context, opts ...QueryOption) iter.Seq2[any, error] {
	if e == nil || len(e.members) == 0 {
		return e.unmade(opScan)
	}
	return e.iterate(ctx, e.members[0].prepare(opScan, nil, opts))
}

func (e *Entities) iterate(ctx context.Context, l *listing) iter.Seq2[any, error] {
	return iterateListing(ctx, l, e.members[0].client, func() func(map[string]types.AttributeValue, *any) error {
		return func(item map[string]types.AttributeValue, out *any) (err error) {
			*out, err = e.classify(item)
			return err
		}
	})
}

// unmade yields the refusal of a call on an Entities not made by
// NewEntities (the zero value has no members).
func (e *Entities) unmade(op string) iter.Seq2[any, error] {
	return func(yield func(any, error) bool) {
		yield(nil, fmt.Errorf("%w: Entities.%s on an Entities with no members: make it with dynamo.NewEntities", ErrInvalidInput, op))
	}
}

// schemaFor returns the schema of struct type t (For) with its entity
// condition compiled, refusing a type whose entity condition cannot be.
func schemaFor(t reflect.Type) (*schema.Schema, error) {
	s, err := schema.For(t)
	if err != nil || s.Entity < 0 {
		return s, err
	}
	if _, err := plan.EntityCondOf(s); err != nil {
		return nil, &SchemaError{Struct: t.String(), Field: s.Fields[s.Entity].GoName, Reason: fmt.Sprintf("entity condition: %v", err)}
	}
	return s, nil
}
