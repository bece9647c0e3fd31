package schema

import (
	"fmt"
	"go/token"
	"iter"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/codec"
	"github.com/ddbkit/dynamo/internal/errs"
)

// field is one attribute of a schema.
type Field struct {
	GoName string // Go path for messages, e.g. "Base.ID"
	Name   string // attribute name
	Index  []int  // reflect index path from the top struct
	Type   reflect.Type
	Opts   tagOptions
	// setKind is 'S', 'N' or 'B' when the `set` option asks the mapper to turn
	// the list attributevalue produces into a DynamoDB set; 0 otherwise.
	SetKind byte
	// viaPtr reports whether index passes through an embedded pointer.
	viaPtr bool
	// ph is the expression name placeholder for this attribute ("#a3"), and
	// vph the value placeholder (":a3"); computed once per type.
	NamePH, ValuePH string
	// custom reports whether typ (or, for a pointer, the type it points to)
	// has an encoding of its own: attributevalue.Marshaler, or a text type
	// (codec.IsText); computed once per type so that fastKeyValue needs no
	// reflection on types per call.
	Custom bool
	// gsi and lsi are the field's `index` and `localIndex` tags, parsed.
	GSI, LSI []IndexKey
	// conv converts the field's javabool and javadate values, its own or
	// those of the structs it holds (java.go); nil when there are none.
	Conv *javaConv
	// walk reports whether values of the field's type can hold a cycle, a
	// func or chan, or nest too deep, so that checkGo must look at them
	// before encoding (checkgo.go); computed once per type.
	walk bool
}

// secondaryIndex is a secondary index declared with `index` or `localIndex`
// struct tags.
type SecondaryIndex struct {
	Name  string
	Local bool // a local secondary index: its hash key is the table's
	// Hash and Range are the key's attributes (indexes into fields) in key
	// order: one hash attribute (for a local index, Schema.Hash) and at most
	// one range attribute, or for a global index up to MaxKeyAttrs of each
	// (a multi-attribute key, numbered in the tags); Range is empty when the
	// index has no range key.
	Hash, Range []int
}

// Multi reports whether x has a key of several attributes in a role.
func (x *SecondaryIndex) Multi() bool { return len(x.Hash) > 1 || len(x.Range) > 1 }

// Keys returns x's key attributes: its hash attributes, then its range ones.
func (x *SecondaryIndex) Keys() []int { return append(slices.Clip(x.Hash), x.Range...) }

// KeyRoles yields x's key attributes without allocating: whether each is
// a range attribute, and the field; hash attributes first, in key order.
func (x *SecondaryIndex) KeyRoles() iter.Seq2[bool, int] {
	return func(yield func(bool, int) bool) {
		for r, fields := range [2][]int{x.Hash, x.Range} {
			for _, i := range fields {
				if !yield(r == 1, i) {
					return
				}
			}
		}
	}
}

// IsRange reports whether field i is one of x's range key attributes.
func (x *SecondaryIndex) IsRange(i int) bool { return slices.Contains(x.Range, i) }

// schema is everything the mapper knows about a struct type. It is built
// once per type (For) and never modified afterwards, so it is shared
// by all tables and goroutines without locking.
type Schema struct {
	Type    reflect.Type // the struct type (never a pointer)
	Fields  []Field      // in struct order, embedded structs flattened
	ByName  map[string]int
	Hash    int // index into fields
	Range   int // -1 when the table has no sort key
	Version int // -1 when the type is not versioned
	TTL     int // -1 when no ttl attribute
	// entity is the index of the field whose attribute holds entityName,
	// telling this type's items apart in a table of several types; -1 when
	// the type declares none (entity.go).
	Entity     int
	EntityName string
	// created and modified are the timestamp fields (-1: none).
	Created, Modified int
	HasSets           bool
	// hasText reports whether a field holds values of a text type
	// (holdsText): values compared with its attributes may need converting.
	hasText bool
	// walk reports whether any field has walk set: checkGo has work to do.
	Walk bool
	// javaFields are the fields with a conv (java.go), javaDecFields those
	// of them whose stored values decoding must rewrite; both empty for
	// types without javabool and javadate fields.
	JavaFields, JavaDecFields []int
	// indexes are the secondary indexes the tags declare, in the order
	// their names first appear in the struct.
	Indexes []SecondaryIndex
}

var schemaCache sync.Map // reflect.Type → schemaResult; immutable values

type schemaResult struct {
	s   *Schema
	err error
}

// For returns the schema of struct type t, parsing it on first use. The
// result (or the error) is cached per type: later calls cost a map lookup.
func For(t reflect.Type) (*Schema, error) {
	if r, ok := schemaCache.Load(t); ok {
		res := r.(schemaResult)
		return res.s, res.err
	}
	s, err := Build(t)
	r, _ := schemaCache.LoadOrStore(t, schemaResult{s, err})
	res := r.(schemaResult)
	return res.s, res.err
}

var (
	TimeType      = reflect.TypeFor[time.Time]()
	ByteSliceType = reflect.TypeFor[[]byte]()
	marshalerType = reflect.TypeFor[attributevalue.Marshaler]()
)

func Build(t reflect.Type) (*Schema, error) {
	s := &Schema{Type: t, ByName: map[string]int{}, Hash: -1, Range: -1, Version: -1, TTL: -1, Entity: -1, Created: -1, Modified: -1}
	fail := func(f, format string, args ...any) error {
		return &errs.SchemaError{Struct: t.String(), Field: f, Reason: fmt.Sprintf(format, args...)}
	}
	if t.Kind() != reflect.Struct {
		return nil, fail("", "is of kind %s: tables map structs or pointers to structs", t.Kind())
	}
	if err := s.collect(t, fail); err != nil {
		return nil, err
	}
	for i := range s.Fields {
		f := &s.Fields[i]
		if prev, dup := s.ByName[f.Name]; dup {
			return nil, fail(f.GoName, "attribute name %q is also used by field %s: give one of them another name with `dynamo:\"name\"`",
				f.Name, s.Fields[prev].GoName)
		}
		s.ByName[f.Name] = i
		f.NamePH = "#a" + strconv.Itoa(i)
		f.ValuePH = ":a" + strconv.Itoa(i)
		if f.Type.Kind() == reflect.Pointer {
			f.Custom = hasOwnEncoding(f.Type.Elem())
		} else {
			f.Custom = hasOwnEncoding(f.Type)
		}
		if err := s.checkField(i, fail); err != nil {
			return nil, err
		}
		if f.walk = walkInfo(f.Type).walk; f.walk {
			s.Walk = true
		}
		if HoldsText(f.Type) {
			s.hasText = true
		}
	}
	if s.Hash < 0 {
		return nil, fail("", "has no hash key: tag one field `dynamo:\"name,hash\"`")
	}
	if err := s.buildIndexes(fail); err != nil {
		return nil, err
	}
	if err := s.buildJava(fail); err != nil {
		return nil, err
	}
	return s, nil
}

// collect appends the fields of struct type t (codec.LayoutOf: embedded
// structs flattened the way attributevalue does), and refuses tags that
// would do nothing. Fields attributevalue leaves out because another has
// their name are appended too: Build refuses the name used twice.
func (s *Schema) collect(t reflect.Type, fail func(string, string, ...any) error) error {
	l := codec.LayoutOf(t)
	for i := range l.All {
		cf := &l.All[i]
		if name := cf.GoName[strings.LastIndexByte(cf.GoName, '.')+1:]; cf.State == codec.Embedded && cf.Type.Kind() == reflect.Pointer && !token.IsExported(name) {
			// attributevalue encodes the fields of *t but, decoding, cannot
			// allocate an unexported t (it panics): every Load would fail.
			return fail(cf.GoName, "embeds a pointer to unexported %s, which attributevalue cannot allocate to read it back: embed it by value, or export the type",
				cf.Type.Elem())
		}
		if cf.State == codec.Unexported {
			if cf.Anonymous {
				continue
			}
			// The encoder cannot see unexported fields: a tag on one would be
			// silently ignored, and the attribute never stored.
			for _, key := range [...]string{codec.TagKeys[0], codec.TagKeys[1], indexTagKey, localIndexTagKey} {
				if tag, ok := cf.Tag.Lookup(key); ok && tag != "-" {
					name := cf.GoName[strings.LastIndexByte(cf.GoName, '.')+1:]
					return fail(cf.GoName, "is unexported, so the encoder cannot see it and its `%s:%q` tag does nothing: export it (%s) or remove the tag",
						key, tag, strings.ToUpper(name[:1])+name[1:])
				}
			}
			continue
		}
		opts, err := fieldTagOptions(cf)
		if err != nil {
			return fail(cf.GoName, "%v", err)
		}
		gsi, lsi, err := parseIndexTags(cf.Tag)
		if err != nil {
			return fail(cf.GoName, "%v", err)
		}
		hasIndexTags := gsi != nil || lsi != nil
		switch cf.State {
		case codec.Skipped:
			if hasIndexTags {
				return fail(cf.GoName, "has index tags but `dynamo:\"-\"` leaves it out of the item: remove one or the other")
			}
			continue
		case codec.Embedded:
			if opts != (tagOptions{}) {
				return fail(cf.GoName, "options on an embedded struct have no effect: tag its fields instead, or name it to store it as a map")
			}
			if hasIndexTags {
				return fail(cf.GoName, "index tags on an embedded struct have no effect: tag its fields instead")
			}
			continue
		}
		s.Fields = append(s.Fields, Field{GoName: cf.GoName, Name: cf.Name, Index: cf.Index, Type: cf.Type, Opts: opts, viaPtr: cf.ViaPtr, GSI: gsi, LSI: lsi})
	}
	return nil
}

func (s *Schema) checkField(i int, fail func(string, string, ...any) error) error {
	f := &s.Fields[i]
	o := f.Opts
	if err := s.checkKeyField(i, fail); err != nil {
		return err
	}
	if o.Version {
		if err := s.checkVersionField(i, fail); err != nil {
			return err
		}
	}
	if o.entity != "" {
		if err := s.checkEntityField(i, fail); err != nil {
			return err
		}
	}
	if o.ttl {
		if err := s.checkTTLField(i, fail); err != nil {
			return err
		}
	}
	if o.created || o.modified {
		if err := s.checkStampField(i, fail); err != nil {
			return err
		}
	}
	if o.set {
		kind, err := setKindOf(f.Type)
		if err != nil {
			return fail(f.GoName, "%v", err)
		}
		f.SetKind = kind
		s.HasSets = true
	}
	if o.StringSet || o.NumberSet || o.BinarySet || f.Type == reflect.TypeFor[[][]byte]() {
		s.HasSets = true
	}
	return nil
}

// checkKeyField records field i as the hash or range key, if tagged so:
// one of each at most, of a type a key can have.
func (s *Schema) checkKeyField(i int, fail func(string, string, ...any) error) error {
	f := &s.Fields[i]
	o := f.Opts
	switch {
	case o.hash:
		if s.Hash >= 0 {
			return fail(f.GoName, "second hash key (the first is %s): a table has exactly one; make this one `range` or drop `hash`", s.Fields[s.Hash].GoName)
		}
		s.Hash = i
	case o.Range:
		if s.Range >= 0 {
			return fail(f.GoName, "second range key (the first is %s): a table has at most one", s.Fields[s.Range].GoName)
		}
		s.Range = i
	}
	if o.hash || o.Range {
		if err := CheckKeyType(f); err != nil {
			return fail(f.GoName, "%v", err)
		}
	}
	return nil
}

// checkVersionField records field i, tagged version, as the version: the
// only one, an integer not inside an embedded pointer, whose type holds
// versionstart, versionstep and clock starts.
func (s *Schema) checkVersionField(i int, fail func(string, string, ...any) error) error {
	f := &s.Fields[i]
	o := f.Opts
	if s.Version >= 0 {
		return fail(f.GoName, "second version attribute (the first is %s): a table has at most one", s.Fields[s.Version].GoName)
	}
	if !isIntegerType(f.Type) {
		return fail(f.GoName, "version attribute of type %s: use an integer type such as int64 (or a pointer to one)", f.Type)
	}
	if f.viaPtr {
		return fail(f.GoName, "version attribute inside an embedded pointer: embed the struct by value")
	}
	s.Version = i
	limit, bt := s.MaxVersion(), DerefType(f.Type)
	switch {
	case o.VersionClock && limit < math.MaxInt64:
		return fail(f.GoName, "versionstart=clock on a version of type %s: clock starts (Unix ms, about 1.8e12) need 64 bits: use int64", f.Type)
	case o.VersionStart > limit:
		return fail(f.GoName, "versionstart=%d does not fit the version's type %s (at most %d): lower it or use int64", o.VersionStart, bt, limit)
	case o.VersionStep > limit:
		return fail(f.GoName, "versionstep=%d does not fit the version's type %s (at most %d): lower it or use int64", o.VersionStep, bt, limit)
	}
	return nil
}

// checkEntityField records field i, tagged entity=name, as the entity
// attribute: the only one, a string not inside an embedded pointer.
func (s *Schema) checkEntityField(i int, fail func(string, string, ...any) error) error {
	f := &s.Fields[i]
	if s.Entity >= 0 {
		return fail(f.GoName, "second entity attribute (the first is %s): a type has at most one", s.Fields[s.Entity].GoName)
	}
	if f.Type.Kind() != reflect.String || f.viaPtr {
		return fail(f.GoName, "entity attribute of type %s: use a string field, not in an embedded pointer (Kind string `dynamo:\"kind,entity=order\"`)", f.Type)
	}
	s.Entity, s.EntityName = i, f.Opts.entity
	return nil
}

// checkTTLField records field i, tagged ttl, as the TTL attribute: the
// only one, stored as a number of epoch seconds.
func (s *Schema) checkTTLField(i int, fail func(string, string, ...any) error) error {
	f := &s.Fields[i]
	if s.TTL >= 0 {
		return fail(f.GoName, "second ttl attribute (the first is %s)", s.Fields[s.TTL].GoName)
	}
	bt := DerefType(f.Type)
	switch {
	case codec.IsText(bt):
		return fail(f.GoName, "ttl attribute of type %s, stored as text, but TTL reads epoch seconds: use time.Time with `unixtime` or an integer type without MarshalText", f.Type)
	case isIntegerType(bt):
	case bt == TimeType && f.Opts.UnixTime:
	case bt == TimeType:
		return fail(f.GoName, "ttl attribute of type time.Time needs `unixtime`: DynamoDB TTL reads epoch seconds, e.g. `dynamo:\"expires,ttl,unixtime\"`")
	default:
		return fail(f.GoName, "ttl attribute of type %s: use time.Time with `unixtime` or an integer of epoch seconds", f.Type)
	}
	s.TTL = i
	return nil
}

// checkStampField records field i, tagged created or modified, as that
// timestamp: the only one of its kind, a time.Time or an int64 of Unix
// milliseconds (or a pointer to one), set in a copy of the item.
func (s *Schema) checkStampField(i int, fail func(string, string, ...any) error) error {
	f := &s.Fields[i]
	o := f.Opts
	opt, prev := "created", &s.Created
	if o.modified {
		opt, prev = "modified", &s.Modified
	}
	if *prev >= 0 {
		return fail(f.GoName, "second %s attribute (the first is %s): a table has at most one", opt, s.Fields[*prev].GoName)
	}
	if f.viaPtr {
		return fail(f.GoName, "%s attribute inside an embedded pointer: embed the struct by value (the mapper sets it in a copy of the item)", opt)
	}
	bt := DerefType(f.Type)
	switch {
	case f.Custom:
		return fail(f.GoName, "%s attribute of type %s, which encodes itself: use time.Time (or an int64 of Unix milliseconds)", opt, f.Type)
	case bt == TimeType:
	case (bt.Kind() == reflect.Int64 || bt.Kind() == reflect.Uint64 || bt.Kind() == reflect.Int || bt.Kind() == reflect.Uint) && bt.Size() == 8:
		if o.UnixTime || o.javaDate {
			return fail(f.GoName, "%s attribute of type %s with unixtime or javadate: those encode a time.Time; an integer %s time is Unix milliseconds", opt, f.Type, opt)
		}
	default:
		return fail(f.GoName, "%s attribute of type %s: use time.Time (RFC 3339; unixtime or javadate change the form) or int64 (Unix milliseconds)", opt, f.Type)
	}
	if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Pointer {
		return fail(f.GoName, "%s attribute of type %s: use time.Time or *time.Time", opt, f.Type)
	}
	*prev = i
	return nil
}

// parseIndexTags parses a field's `index` and `localIndex` tags.
func parseIndexTags(tag reflect.StructTag) (gsi, lsi []IndexKey, err error) {
	if gsi, err = ParseIndexTag(tag.Get(indexTagKey)); err != nil {
		return nil, nil, fmt.Errorf("`%s` tag: %w", indexTagKey, err)
	}
	if lsi, err = ParseIndexTag(tag.Get(localIndexTagKey)); err != nil {
		return nil, nil, fmt.Errorf("`%s` tag: %w", localIndexTagKey, err)
	}
	return gsi, lsi, nil
}

// indexOnlyKeys returns the fields that key a secondary index and not the
// table, each once.
func (s *Schema) IndexOnlyKeys() []int {
	var out []int
	for j := range s.Indexes {
		for _, i := range s.Indexes[j].Keys() {
			if i != s.Hash && i != s.Range && !slices.Contains(out, i) {
				out = append(out, i)
			}
		}
	}
	return out
}

// indexMember is one field of an index key being collected: the field and
// the order its tag gives it (0: none).
type indexMember struct{ field, order int }

// buildIndexes collects the secondary indexes the fields' tags declare and
// checks that each is one DynamoDB accepts: a global index has one hash key
// and at most one range key, or up to MaxKeyAttrs of each numbered 1 to n;
// a local index one range key (its hash key is the table's, so the table
// needs a range key too); every key is of a key type, and no name is both
// a global and a local index.
func (s *Schema) buildIndexes(fail func(string, string, ...any) error) error {
	pos := map[string]int{}        // index name → position in s.indexes
	var members [][2][]indexMember // per index: hash members, range members
	for i := range s.Fields {
		f := &s.Fields[i]
		for _, local := range [2]bool{false, true} {
			keys, tagKey := f.GSI, indexTagKey
			if local {
				keys, tagKey = f.LSI, localIndexTagKey
			}
			for _, k := range keys {
				role := "hash"
				if k.Range {
					role = "range"
				}
				if err := CheckKeyType(f); err != nil {
					return fail(f.GoName, "%s key of index %q: %v; remove it from the `%s` tag", role, k.Name, err, tagKey)
				}
				j, seen := pos[k.Name]
				if !seen {
					j = len(s.Indexes)
					pos[k.Name] = j
					s.Indexes = append(s.Indexes, SecondaryIndex{Name: k.Name, Local: local})
					members = append(members, [2][]indexMember{})
				}
				x := &s.Indexes[j]
				if x.Local != local {
					return fail(f.GoName, "index %q is declared both global (`index` tag) and local (`localIndex` tag): rename one", k.Name)
				}
				if local && !k.Range {
					return fail(f.GoName, "local index %q with a hash key: a local index shares the table's hash key (%s); tag it `localIndex:\"%s,range\"` or use `index`",
						k.Name, s.Fields[s.Hash].GoName, k.Name)
				}
				if local && k.Order != 0 {
					return fail(f.GoName, "local index %q with a numbered key: only a global index has keys of several attributes; write `localIndex:\"%s,range\"`", k.Name, k.Name)
				}
				m := &members[j][btoi(k.Range)]
				if local && len(*m) > 0 {
					return fail(f.GoName, "second range key of local index %q (the first is %s): a local index has one; use a global index (`index` tag) for a key of several",
						k.Name, s.Fields[(*m)[0].field].GoName)
				}
				*m = append(*m, indexMember{field: i, order: k.Order})
			}
		}
	}
	for j := range s.Indexes {
		x := &s.Indexes[j]
		for r, role := range [2]string{"hash", "range"} {
			ord, err := s.orderKey(x.Name, role, members[j][r], fail)
			if err != nil {
				return err
			}
			if r == 0 {
				x.Hash = ord
			} else {
				x.Range = ord
			}
		}
		switch {
		case x.Local && s.Range < 0:
			return fail(s.Fields[x.Range[0]].GoName, "local index %q on a table without a range key: add `dynamo:\",range\"` to a field, or make it global with `index:\"%s,hash\"`", x.Name, x.Name)
		case x.Local && x.Range[0] == s.Range:
			return fail(s.Fields[x.Range[0]].GoName, "local index %q has the table's range key as its range key: it would repeat the table; index another attribute", x.Name)
		case x.Local:
			x.Hash = []int{s.Hash}
		case len(x.Hash) == 0:
			return fail(s.Fields[x.Range[0]].GoName, "index %q has a range key but no hash key: tag the attribute that partitions it `index:\"%s,hash\"`", x.Name, x.Name)
		}
	}
	return nil
}

// orderKey returns the fields of the role (hash or range) key of index name
// in key order, refusing what DynamoDB and the tags' numbering rule refuse:
// more than MaxKeyAttrs attributes, several attributes not each numbered,
// numbers repeated or other than 1 to n.
func (s *Schema) orderKey(name, role string, ms []indexMember, fail func(string, string, ...any) error) ([]int, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	if len(ms) > MaxKeyAttrs {
		return nil, fail(s.Fields[ms[MaxKeyAttrs].field].GoName, "index %q has %d %s key attributes: DynamoDB takes at most %d; remove some from the `index` tags", name, len(ms), role, MaxKeyAttrs)
	}
	if len(ms) > 1 {
		for n, m := range ms {
			if m.order != 0 {
				continue
			}
			other := ms[0]
			if n == 0 {
				other = ms[1]
			}
			if other.order == 0 {
				return nil, fail(s.Fields[ms[max(n, 1)].field].GoName, "second %s key of index %q (the first is %s): for a key of several attributes, number each: `index:\"%s,%s,1\"`, `…,%s,2`",
					role, name, s.Fields[ms[0].field].GoName, name, role, role)
			}
			return nil, fail(s.Fields[m.field].GoName, "%s key of index %q without a number while %s has one: number every attribute of the key, e.g. `index:\"%s,%s,%d\"`",
				role, name, s.Fields[other.field].GoName, name, role, len(ms))
		}
	}
	out := make([]int, len(ms))
	for _, m := range ms {
		o := max(m.order, 1) // a single attribute may leave its number out
		if o > len(ms) && len(ms) == 1 {
			return nil, fail(s.Fields[m.field].GoName, "%s key of index %q numbered %d, but the key has 1 attribute: number it 1, or leave the number out", role, name, o)
		}
		if o > len(ms) {
			return nil, fail(s.Fields[m.field].GoName, "%s key of index %q numbered %d, but the key has %d attributes: number them 1 to %d, in key order", role, name, o, len(ms), len(ms))
		}
		if prev := out[o-1]; prev != 0 {
			return nil, fail(s.Fields[m.field].GoName, "%s key of index %q numbered %d, as is %s: number the attributes 1 to %d, once each", role, name, o, s.Fields[prev-1].GoName, len(ms))
		}
		out[o-1] = m.field + 1 // +1: 0 marks a free position
	}
	for o := range out {
		out[o]--
	}
	return out, nil
}

func DerefType(t reflect.Type) reflect.Type {
	for i := 0; t.Kind() == reflect.Pointer && i < maxHops; i++ { // bounded: type P *P
		t = t.Elem()
	}
	return t
}

func isIntegerType(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

func HasCustomMarshaler(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(marshalerType) || pt.Implements(marshalerType)
}

// hasOwnEncoding reports whether values of t are encoded their own way: a
// custom attributevalue.Marshaler, or MarshalText for a text type (stored
// as S).
func hasOwnEncoding(t reflect.Type) bool {
	return HasCustomMarshaler(t) || codec.IsText(t)
}

// checkKeyType accepts the Go types that encode to S, N or B.
func CheckKeyType(f *Field) error {
	t := DerefType(f.Type)
	if hasOwnEncoding(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil
		}
	case reflect.Struct:
		if t == TimeType {
			return nil
		}
	}
	return fmt.Errorf("key of type %s: keys must be strings, numbers or []byte (or text types, or attributevalue.Marshalers)", f.Type)
}

// storedSetKind returns the kind of set ('S', 'N' or 'B') f is stored as,
// 0 when it is not stored as a set: also for bytes ([]byte, [N]byte, of any
// uint8 kind) and a text type, which a set option leaves one value, as
// attributevalue and the codec store them (a B; the text, an S).
func (f *Field) StoredSetKind() byte {
	if t := DerefType(f.Type); OneValueWhateverSet(t) {
		return 0
	}
	switch {
	case f.Opts.StringSet:
		return 'S'
	case f.Opts.NumberSet:
		return 'N'
	case f.Opts.BinarySet, f.Type == reflect.TypeFor[[][]byte]():
		return 'B'
	}
	return f.SetKind
}

// oneValueWhateverSet reports whether a field of type t (not a pointer) is
// stored as one value even when tagged stringset, numberset, binaryset or
// set: bytes (attributevalue writes any slice or array of a uint8 kind as
// one binary value before it looks at the tag) and text types (the codec
// writes their text).
func OneValueWhateverSet(t reflect.Type) bool {
	return codec.IsText(t) || (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && t.Elem().Kind() == reflect.Uint8
}

// setKindOf maps the element type of a `set` field to the DynamoDB set type.
func setKindOf(t reflect.Type) (byte, error) {
	t = DerefType(t)
	if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
		return 0, fmt.Errorf("`set` on a %s: use a slice such as []string, []int or [][]byte", t)
	}
	et := DerefType(t.Elem())
	if codec.IsText(et) {
		return 'S', nil // stored as text
	}
	switch et.Kind() {
	case reflect.String:
		return 'S', nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		if t.Elem().Kind() == reflect.Uint8 {
			return 0, fmt.Errorf("`set` on %s (bytes): a []byte is a binary value; use [][]byte for a binary set", t)
		}
		return 'N', nil
	case reflect.Slice:
		if et.Elem().Kind() == reflect.Uint8 {
			return 'B', nil
		}
	}
	return 0, fmt.Errorf("`set` on %s: sets hold strings, numbers or []byte", t)
}

// fieldValue returns the value of field f in the struct value v, and false
// when an embedded pointer on the way is nil.
func FieldValue(v reflect.Value, f *Field) (reflect.Value, bool) { return fieldByIndex(v, f.Index) }

// fieldByIndex is reflect's FieldByIndex, reporting false at a nil
// embedded pointer instead of panicking.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for n, i := range index {
		if n > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(i)
	}
	return v, true
}

// versionOf reads the version of struct value v: 0 for unsaved (zero or nil).
func (s *Schema) VersionOf(v reflect.Value) int64 {
	if s.Version < 0 {
		return 0
	}
	fv, ok := FieldValue(v, &s.Fields[s.Version])
	if !ok {
		return 0
	}
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return 0
		}
		fv = fv.Elem()
	}
	if fv.CanInt() {
		return fv.Int()
	}
	u := fv.Uint()
	if u > 1<<63-1 {
		return -1 // reported by checkVersion
	}
	return int64(u)
}

// setVersion stores n in the version field of the addressable struct value v.
func (s *Schema) SetVersion(v reflect.Value, n int64) {
	fv := v.FieldByIndex(s.Fields[s.Version].Index) // never via a pointer (checkField)
	if fv.Kind() == reflect.Pointer {
		p := reflect.New(fv.Type().Elem())
		fv.Set(p)
		fv = p.Elem()
	}
	SetIntValue(fv, n)
}

// setIntValue stores n in the settable integer value fv.
func SetIntValue(fv reflect.Value, n int64) {
	if fv.CanInt() {
		fv.SetInt(n)
	} else {
		fv.SetUint(uint64(n))
	}
}

// fastKeyValue encodes a key field without the general encoder when its type
// allows (string, integers, []byte, unannotated); ok is false otherwise. fv
// is the value of f (of type f.typ), so f.custom says whether it, or what it
// points to, has a custom encoding.
func FastKeyValue(fv reflect.Value, f *Field) (av types.AttributeValue, ok bool) {
	if f.Opts.AsString || f.Opts.UnixTime || f.Custom {
		return nil, false
	}
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return &types.AttributeValueMemberNULL{Value: true}, true
		}
		fv = fv.Elem()
	}
	switch fv.Kind() {
	case reflect.String:
		if fv.Type() != StringType && NumberLike(fv.Type()) {
			return &types.AttributeValueMemberN{Value: fv.String()}, true
		}
		return &types.AttributeValueMemberS{Value: fv.String()}, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(fv.Int(), 10)}, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &types.AttributeValueMemberN{Value: strconv.FormatUint(fv.Uint(), 10)}, true
	case reflect.Slice:
		if fv.Type() == ByteSliceType {
			return &types.AttributeValueMemberB{Value: append([]byte(nil), fv.Bytes()...)}, true
		}
	}
	return nil, false
}

// numberLike reports whether values of type t are written as numbers (N)
// though t is of the string kind: attributevalue writes json.Number,
// attributevalue.Number and any string type with methods Float64, Int64
// and String so, their text being the number (S with the `string` option).
func NumberLike(t reflect.Type) bool {
	return t.Kind() == reflect.String && t.Implements(numbererType)
}

var (
	StringType   = reflect.TypeFor[string]()
	numbererType = reflect.TypeFor[interface {
		Float64() (float64, error)
		Int64() (int64, error)
		String() string
	}]()
)

// maxVersion returns the largest version the version field's type holds
// (math.MaxInt64 for the 64-bit kinds: versions are int64 in the mapper).
func (s *Schema) MaxVersion() int64 {
	t := DerefType(s.Fields[s.Version].Type)
	bits := t.Bits() // an integer kind (checkVersionField); int and uint: the platform's
	if k := t.Kind(); k >= reflect.Int && k <= reflect.Int64 {
		bits-- // the sign
	}
	if bits >= 63 {
		return math.MaxInt64
	}
	return 1<<bits - 1
}

// widen says how to make room for more versions in the version field.
func (s *Schema) Widen() string {
	if s.MaxVersion() == math.MaxInt64 {
		return "versions stop at math.MaxInt64: delete the item and save it again as unsaved, or copy it to a new key"
	}
	return "widen it (int64) so that the version can advance"
}

// projection returns the ProjectionExpression naming every attribute of s,
// and tokenAttr when not "" (as the placeholder tokenPH), and its names; "" when the
// type's reads must take whole items (it decodes itself, or the expression
// would be over DynamoDB's limit).
func (s *Schema) Projection(tokenPH, tokenAttr string) (string, map[string]string) {
	if reflect.PointerTo(s.Type).Implements(UnmarshalerType) || s.Type.Implements(UnmarshalerType) {
		return "", nil // it decodes itself, from whatever the item holds
	}
	var b strings.Builder
	names := make(map[string]string, len(s.Fields))
	for i := range s.Fields {
		ph := "#p" + strconv.Itoa(i)
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(ph)
		names[ph] = s.Fields[i].Name
	}
	if tokenAttr != "" {
		b.WriteString(", " + tokenPH)
		names[tokenPH] = tokenAttr
	}
	if b.Len() > MaxExprLen {
		return "", nil
	}
	return b.String(), names
}

var UnmarshalerType = reflect.TypeFor[attributevalue.Unmarshaler]()

// convertsSets reports whether a field of s is a `set`, which encodeItem
// turns from the list the codec makes into a set (listToSet).
func (s *Schema) ConvertsSets() bool {
	for i := range s.Fields {
		if s.Fields[i].SetKind != 0 {
			return true
		}
	}
	return false
}

// maxExprLen is DynamoDB's limit on the length of an expression string.
const MaxExprLen = 4096
