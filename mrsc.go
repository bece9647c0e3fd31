package dynamo

import (
	"fmt"
	"slices"
)

// Strongly consistent global tables (MRSC). DynamoDB serves them no
// transactions, no TTL and no local secondary indexes; a Mapper told which
// tables are MRSC (WithStrongGlobalTables) refuses those calls before
// sending, here, rather than letting DynamoDB refuse them with a
// ValidationException. The rules in depth: docs/limitations.md.

// WithStrongGlobalTables names the tables the Mapper's calls treat as
// strongly consistent global tables (MultiRegionConsistency STRONG). On
// them, WriteTx, ReadTx and Transact members, GuardedBy (on the write or
// as a check) and CreateTable of a type with a `ttl` field or a local
// index are refused with ErrInvalidInput before anything is sent. It sends
// no request: the Mapper does not read DescribeTable. Repeated options add
// up; "" is ignored.
func WithStrongGlobalTables(names ...string) Option {
	names = slices.Clone(names)
	return mapperOption(func(o *mapperOptions) {
		for _, n := range names {
			if n == "" {
				continue
			}
			if o.strong == nil {
				o.strong = map[string]bool{}
			}
			o.strong[n] = true
		}
	})
}

// strongTable reports whether m treats table as MRSC.
func (m *Mapper) strongTable(table string) bool { return m != nil && m.opts.strong[table] }

// refuseStrongTx refuses call (a transaction, or with guarded a write
// that GuardedBy makes one) when one of members' tables is MRSC; nil
// otherwise.
func (m *Mapper) refuseStrongTx(call string, guarded bool, members []*txMember) error {
	for _, mem := range members {
		if err := m.refuseStrong(call, mem.table, guarded); err != nil {
			return err
		}
	}
	return nil
}

// refuseStrong refuses call, a transaction (guarded: a write GuardedBy
// makes one), on table when m treats it as MRSC; nil otherwise.
func (m *Mapper) refuseStrong(call, table string, guarded bool) error {
	if !m.strongTable(table) {
		return nil
	}
	fix := "write each item with Save, Delete or Update"
	switch {
	case guarded:
		fix = "drop GuardedBy, or check items of a table that is not MRSC"
	case call == "ReadTx":
		fix = "read each item with Load and ConsistentRead"
	case call == "Transact":
		fix = "change each item with Update"
	}
	return fmt.Errorf("%w: %s on table %q: MRSC tables serve no transactions; %s", ErrInvalidInput, call, table, fix)
}

// refuseStrongCreate refuses CreateTable of t's type on an MRSC table when
// the type has a `ttl` field or a local secondary index; nil otherwise.
func (t *table) refuseStrongCreate() error {
	if !t.m.strongTable(t.name) {
		return nil
	}
	s := t.p.S
	if s.TTL >= 0 {
		return fmt.Errorf("%w: CreateTable of %q: MRSC tables have no TTL, and attribute %s is tagged ttl: drop the tag",
			ErrInvalidInput, t.name, s.Fields[s.TTL].Name)
	}
	for _, x := range s.Indexes {
		if x.Local {
			return fmt.Errorf("%w: CreateTable of %q: MRSC tables have no local secondary indexes, and %q is one: make it global (an index tag)",
				ErrInvalidInput, t.name, x.Name)
		}
	}
	return nil
}
