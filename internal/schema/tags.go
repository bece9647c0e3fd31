package schema

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ddbkit/dynamo/internal/codec"
)

// tagOptions is the parsed form of one `dynamo:"name,opt,..."` struct tag.
// It is pure data: parseTag does no reflection and no I/O, so it is fuzzed
// on its own (FuzzParseTag).
type tagOptions struct {
	name    string // attribute name; "" means the Go field name
	skip    bool   // `dynamo:"-"`
	hash    bool
	Range   bool
	Version bool
	ttl     bool
	set     bool // guregu/dynamo compatibility; translated by element type

	OmitEmpty     bool
	omitEmptyElem bool
	nullEmpty     bool
	nullEmptyElem bool
	AsString      bool
	StringSet     bool
	NumberSet     bool
	BinarySet     bool
	UnixTime      bool

	// Java interop (see java.go): javaBool stores a bool as N 1/0, as
	// DynamoDBMapper does; javaDate stores a time.Time as DynamoDBMapper's
	// ISO-8601 string with milliseconds in UTC.
	JavaBool bool
	javaDate bool

	// entity is the NAME of `entity=NAME`: the field's attribute tells the
	// type's items apart from other types' in a table holding several
	// (entity.go); "" when not given.
	entity string

	// Version settings (only with version): versionStart is the first
	// version written (0: unset, the default 1), versionClock takes it from
	// the mapper's clock instead (Unix milliseconds), versionStep is what
	// every later write adds (0: unset, the default 1).
	VersionStart int64
	VersionClock bool
	VersionStep  int64

	// Timestamps the mapper writes from its clock: created on the write
	// that creates the item (never overwritten), modified on every write.
	created  bool
	modified bool
}

// tagOptionTable lists every option parseTag accepts, in the order error
// messages list them. An option is either a flag (flag returns the field
// it sets) or takes a value after '=' (value stores it). Users read what
// each one does in the package documentation (the root's doc.go, "Struct
// tags"): an option added here is documented there too.
var tagOptionTable = []tagOption{
	{name: "hash", flag: func(o *tagOptions) *bool { return &o.hash }},
	{name: "range", flag: func(o *tagOptions) *bool { return &o.Range }},
	{name: "version", flag: func(o *tagOptions) *bool { return &o.Version }},
	{name: "ttl", flag: func(o *tagOptions) *bool { return &o.ttl }},
	{name: "set", flag: func(o *tagOptions) *bool { return &o.set }},
	{name: "omitempty", flag: func(o *tagOptions) *bool { return &o.OmitEmpty }},
	{name: "omitemptyelem", flag: func(o *tagOptions) *bool { return &o.omitEmptyElem }},
	{name: "nullempty", flag: func(o *tagOptions) *bool { return &o.nullEmpty }},
	{name: "nullemptyelem", flag: func(o *tagOptions) *bool { return &o.nullEmptyElem }},
	{name: "string", flag: func(o *tagOptions) *bool { return &o.AsString }},
	{name: "stringset", flag: func(o *tagOptions) *bool { return &o.StringSet }},
	{name: "numberset", flag: func(o *tagOptions) *bool { return &o.NumberSet }},
	{name: "binaryset", flag: func(o *tagOptions) *bool { return &o.BinarySet }},
	{name: "unixtime", flag: func(o *tagOptions) *bool { return &o.UnixTime }},
	{name: "javabool", flag: func(o *tagOptions) *bool { return &o.JavaBool }},
	{name: "javadate", flag: func(o *tagOptions) *bool { return &o.javaDate }},
	{name: "versionstart", usage: "versionstart=N, versionstart=clock", value: func(o *tagOptions, val string) error {
		if val == "clock" {
			o.VersionClock = true
			return nil
		}
		n, err := parseVersionSetting(val)
		o.VersionStart = n
		return err
	}},
	{name: "versionstep", usage: "versionstep=N", value: func(o *tagOptions, val string) error {
		n, err := parseVersionSetting(val)
		o.VersionStep = n
		return err
	}},
	{name: "created", flag: func(o *tagOptions) *bool { return &o.created }},
	{name: "modified", flag: func(o *tagOptions) *bool { return &o.modified }},
	{name: "entity", usage: "entity=NAME", value: func(o *tagOptions, val string) error {
		switch {
		case val == "":
			return errors.New("empty entity name: name the type's items, e.g. entity=order")
		case !utf8.ValidString(val):
			return errors.New("the entity name is not valid UTF-8")
		}
		o.entity = val
		return nil
	}},
}

// tagOption is one entry of tagOptionTable.
type tagOption struct {
	name  string // as written before any '='
	usage string // for the list of known options ("": name)
	flag  func(*tagOptions) *bool
	value func(o *tagOptions, val string) error
}

// knownTagOptions lists every option parseTag accepts, for error messages.
var knownTagOptions = func() string {
	var b strings.Builder
	for i, opt := range tagOptionTable {
		if i > 0 {
			b.WriteString(", ")
		}
		if opt.usage != "" {
			b.WriteString(opt.usage)
		} else {
			b.WriteString(opt.name)
		}
	}
	return b.String()
}()

// parseTag parses the value of a `dynamo` struct tag. It rejects unknown
// and repeated options, which attributevalue would silently ignore, and
// options that contradict each other (tagOptions.check).
func ParseTag(tag string) (tagOptions, error) {
	o, err := parseTagOptions(tag)
	if err != nil {
		return tagOptions{}, err
	}
	if err := o.check(tag); err != nil {
		return tagOptions{}, err
	}
	return o, nil
}

// parseTagOptions parses one tag value option by option (tagOptionTable),
// without the checks across options.
func parseTagOptions(tag string) (tagOptions, error) {
	var o tagOptions
	name, rest, hasOpts := strings.Cut(tag, ",")
	o.name = name
	if !hasOpts {
		if name == "-" {
			o.name, o.skip = "", true
		}
		return o, nil
	}
	var seen []string
	for opt := range strings.SplitSeq(rest, ",") {
		if opt == "" {
			return tagOptions{}, fmt.Errorf("empty option in tag %q: remove the extra comma", tag)
		}
		key, val, hasVal := strings.Cut(opt, "=")
		i := slices.IndexFunc(tagOptionTable, func(e tagOption) bool { return e.name == key })
		if i < 0 || hasVal != (tagOptionTable[i].value != nil) {
			return tagOptions{}, fmt.Errorf("unknown option %q in tag %q: use one of %s", opt, tag, knownTagOptions)
		}
		if slices.Contains(seen, key) {
			return tagOptions{}, fmt.Errorf("option %q repeated in tag %q: give it once", key, tag)
		}
		seen = append(seen, key)
		e := tagOptionTable[i]
		if e.flag != nil {
			*e.flag(&o) = true
			continue
		}
		if err := e.value(&o, val); err != nil {
			return tagOptions{}, fmt.Errorf("option %q in tag %q: %v", opt, tag, err)
		}
	}
	if name == "-" {
		return tagOptions{}, fmt.Errorf("tag %q leaves the field out (\"-\"), so its options do nothing: write `-` alone", tag)
	}
	return o, nil
}

// check refuses options of tag that contradict each other.
func (o tagOptions) check(tag string) error {
	if o.hash && o.Range {
		return fmt.Errorf("tag %q has both hash and range: a field is one key or the other", tag)
	}
	if o.Version && (o.hash || o.Range) {
		return fmt.Errorf("tag %q makes a key the version: the version must be a separate attribute", tag)
	}
	if o.Version && o.AsString {
		return fmt.Errorf("tag %q stores the version as a string: remove \"string\"; versions are numbers", tag)
	}
	if o.Version && o.OmitEmpty {
		return fmt.Errorf("tag %q: remove omitempty from the version; the mapper always writes it", tag)
	}
	if (o.VersionStart != 0 || o.VersionClock || o.VersionStep != 0) && !o.Version {
		return fmt.Errorf("tag %q has versionstart or versionstep without version: add \"version\" or remove them", tag)
	}
	if o.created || o.modified {
		opt := "created"
		if o.modified {
			opt = "modified"
		}
		switch {
		case o.created && o.modified:
			return fmt.Errorf("tag %q has both created and modified, which differ after the first write: use two fields", tag)
		case o.hash || o.Range:
			return fmt.Errorf("tag %q makes a key the %s time: a key never changes; use a separate attribute", tag, opt)
		case o.Version:
			return fmt.Errorf("tag %q makes the version the %s time: use a separate attribute (or versionstart=clock on the version)", tag, opt)
		case o.ttl:
			return fmt.Errorf("tag %q makes the ttl the %s time, which would expire the item as it is written: use a separate attribute", tag, opt)
		case o.set || o.StringSet || o.NumberSet || o.BinarySet:
			return fmt.Errorf("tag %q has %s and a set option: a time is one value; remove the set option", tag, opt)
		case o.AsString:
			return fmt.Errorf("tag %q has %s and string: remove \"string\"; a time.Time is stored as a string already, an integer as Unix milliseconds", tag, opt)
		}
	}
	sets := btoi(o.set) + btoi(o.StringSet) + btoi(o.NumberSet) + btoi(o.BinarySet)
	if sets > 1 {
		return fmt.Errorf("tag %q names more than one set kind: keep one of set, stringset, numberset, binaryset", tag)
	}
	if o.entity != "" && (o.hash || o.Range || o.Version || o.ttl || o.OmitEmpty || o.nullEmpty || sets > 0 || o.JavaBool || o.javaDate || o.UnixTime || o.AsString) {
		return fmt.Errorf("tag %q: an entity attribute holds the entity name and nothing else; give it no other option", tag)
	}
	if o.JavaBool && o.javaDate {
		return fmt.Errorf("tag %q has both javabool and javadate: a field is a bool or a time; keep the one that fits its type", tag)
	}
	if o.JavaBool || o.javaDate {
		opt, what := "javabool", "a number 1 or 0"
		if o.javaDate {
			opt, what = "javadate", "an ISO-8601 string"
		}
		switch {
		case o.AsString:
			return fmt.Errorf("tag %q has both %s and string: %s already says how the value is stored (%s); remove \"string\"", tag, opt, opt, what)
		case o.UnixTime:
			return fmt.Errorf("tag %q has both %s and unixtime: %s stores %s, unixtime epoch seconds; keep one", tag, opt, opt, what)
		case sets > 0 && o.JavaBool:
			return fmt.Errorf("tag %q has javabool and a set option: DynamoDB has no sets of booleans; remove the set option", tag)
		case sets > 0:
			return fmt.Errorf("tag %q has javadate and a set option: DynamoDB has no sets of dates; use a list ([]time.Time) or a []string set", tag)
		}
	}
	return nil
}

// fieldTagOptions returns the mapper's options of struct field f: those of
// every tag attributevalue reads for it (codec.ReadTags, the one rule for
// which tag names a field), merged; the field's name and whether it is
// skipped are the codec's (f.Name, f.State). It refuses the combinations
// in which attributevalue's rule goes against what the tags say: a
// `dynamo` tag with options but no name replaces the name (or the "-") of
// the `dynamodbav` tag with the Go field name, and two tags giving one
// option different values.
func fieldTagOptions(f *codec.Field) (tagOptions, error) {
	var o tagOptions
	var err error
	var avName, avTag, last string
	n := 0
	codec.ReadTags(f.Tag, func(key, value string) {
		if err != nil {
			return
		}
		last = value
		p, perr := parseTagOptions(value)
		if perr != nil {
			err = perr
			return
		}
		if n++; n == 1 {
			o, avTag = p, value
			if key == codec.AVTagKey {
				avName = p.name
			}
			return
		}
		if avName != "" && p.name == "" && avName != f.Name {
			kept := "names it " + strconv.Quote(avName)
			if avName == "-" {
				kept = "leaves it out (\"-\")"
			}
			err = fmt.Errorf("its `%s` tag %s, but its `%s:%q` tag has no name (attributevalue would use %s): write `%s:\"%s%s\"` or drop a tag",
				codec.AVTagKey, kept, key, value, f.Name, key, strings.TrimPrefix(avName, "-"), value)
			return
		}
		err = o.merge(p, avTag, value)
	})
	if err != nil {
		return tagOptions{}, err
	}
	o.name, o.skip = "", false
	if f.State == codec.Visible || f.State == codec.Shadowed {
		o.name = f.Name
	}
	if err := o.check(last); err != nil { // quoting the tag that was read last
		return tagOptions{}, err
	}
	return o, nil
}

// merge adds to o the options of another tag of the same field: flags are
// set when either tag sets them, options with a value must agree.
func (o *tagOptions) merge(p tagOptions, tagO, tagP string) error {
	for _, e := range tagOptionTable {
		if e.flag != nil {
			*e.flag(o) = *e.flag(o) || *e.flag(&p)
		}
	}
	for _, v := range [...]struct {
		name string
		a, b *string
		x, y *int64
	}{
		{name: "entity", a: &o.entity, b: &p.entity},
		{name: "versionstart", x: &o.VersionStart, y: &p.VersionStart},
		{name: "versionstep", x: &o.VersionStep, y: &p.VersionStep},
	} {
		if v.a != nil && *v.a != "" && *v.b != "" && *v.a != *v.b || v.x != nil && *v.x != 0 && *v.y != 0 && *v.x != *v.y {
			return fmt.Errorf("tags %q and %q give option %s two values: give it in one tag", tagO, tagP, v.name)
		}
		if v.a != nil && *v.a == "" {
			*v.a = *v.b
		}
		if v.x != nil && *v.x == 0 {
			*v.x = *v.y
		}
	}
	o.VersionClock = o.VersionClock || p.VersionClock
	if o.VersionClock && o.VersionStart != 0 {
		return fmt.Errorf("tags %q and %q give option versionstart two values: give it in one tag", tagO, tagP)
	}
	return nil
}

// parseVersionSetting parses the N of versionstart=N and versionstep=N: a
// decimal integer from 1 to math.MaxInt64, written without sign, spaces or
// leading zeros.
func parseVersionSetting(val string) (int64, error) {
	if val == "" {
		return 0, fmt.Errorf("no value: write a whole number of 1 or more after '='")
	}
	for i := 0; i < len(val); i++ {
		if val[i] < '0' || val[i] > '9' {
			return 0, fmt.Errorf("%q is not a whole number: write digits only, 1 or more (versionstart also takes \"clock\")", val)
		}
	}
	if val[0] == '0' {
		if val == "0" {
			return 0, fmt.Errorf("0 is not allowed: version 0 means unsaved, so the first version written and the step are 1 or more")
		}
		return 0, fmt.Errorf("%q has a leading zero: write the number without it", val)
	}
	n, err := strconv.ParseInt(val, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is over 9223372036854775807 (math.MaxInt64), the largest version the mapper writes", val)
	}
	return n, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Struct tags that declare secondary indexes, as in guregu/dynamo:
// `index:"ByTitle,hash"` makes the field the hash (partition) key of the
// global secondary index ByTitle, `index:"ByTitle,range"` its range (sort)
// key; `localIndex:"ByDate,range"` makes it the range key of the local
// secondary index ByDate, whose hash key is the table's. One tag may name
// several indexes, separated by spaces: `index:"ByTitle,hash ByYear,range"`.
// A global index's key of several attributes numbers them in key order:
// `index:"ByTenantStatus,hash,1"`, `index:"ByTenantStatus,hash,2"`.
const (
	indexTagKey      = "index"
	localIndexTagKey = "localIndex"
)

// MaxKeyAttrs is the most attributes DynamoDB takes in each role (hash,
// range) of a global secondary index's key.
const MaxKeyAttrs = 4

// IndexKey is one entry of an `index` or `localIndex` struct tag: the field
// is a hash key attribute (Range false) or a range key attribute (Range
// true) of index Name, at position Order of that key (1-based; 0 when the
// tag gives none).
type IndexKey struct {
	Name  string
	Range bool
	Order int
}

// ParseIndexTag parses the value of an `index` or `localIndex` struct tag:
// space-separated entries "Name,hash" or "Name,range" ("partition" and "sort"
// are accepted too, as guregu/dynamo does), optionally followed by ",N", the
// attribute's position in a key of several. It checks index names the way
// DynamoDB does (3 to 255 of a-z A-Z 0-9 _ - .) and refuses an index named
// twice. Like parseTag it is pure data and fuzzed on its own
// (FuzzParseIndexTag); what depends on the struct (roles, orders, key
// types, local versus global) is checked by the schema.
func ParseIndexTag(tag string) ([]IndexKey, error) {
	entries := strings.Fields(tag)
	if len(entries) == 0 {
		return nil, nil
	}
	keys := make([]IndexKey, 0, len(entries))
	for _, e := range entries {
		name, role, ok := strings.Cut(e, ",")
		if !ok {
			return nil, fmt.Errorf("index entry %q in tag %q has no key role: write %q or %q", e, tag, name+",hash", name+",range")
		}
		if err := CheckIndexName(name); err != nil {
			return nil, fmt.Errorf("index entry %q in tag %q: %v", e, tag, err)
		}
		k := IndexKey{Name: name}
		if r, order, ok := strings.Cut(role, ","); ok && isIndexOrder(order) {
			role = r
			k.Order, _ = strconv.Atoi(order)
		}
		switch role {
		case "hash", "partition":
		case "range", "sort":
			k.Range = true
		default:
			return nil, fmt.Errorf("index entry %q in tag %q: unknown key role %q: use hash or range (add ,1 to ,%d to order a key of several), and separate indexes with spaces",
				e, tag, role, MaxKeyAttrs)
		}
		for _, prev := range keys {
			if prev.Name == name {
				return nil, fmt.Errorf("index %q named twice in tag %q: a field is one key attribute of an index, of its hash or its range key", name, tag)
			}
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// isIndexOrder reports whether s is the N of an entry's ",N": 1 to 99,
// digits only, no leading zero. Orders past MaxKeyAttrs are the schema's
// to refuse, with the struct's context.
func isIndexOrder(s string) bool {
	switch {
	case len(s) == 0 || len(s) > 2 || s[0] == '0':
		return false
	case len(s) == 2 && (s[1] < '0' || s[1] > '9'):
		return false
	}
	return '1' <= s[0] && s[0] <= '9'
}

// checkIndexName applies DynamoDB's rule for index names.
func CheckIndexName(name string) error {
	if len(name) < 3 || len(name) > 255 {
		return fmt.Errorf("index name %q has %d characters: DynamoDB wants 3 to 255", name, len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("index name %q contains %q: use only letters, digits, '_', '-' and '.'", name, name[i:i+1])
		}
	}
	return nil
}
