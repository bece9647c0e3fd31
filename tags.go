package dynamo

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tagOptions is the parsed form of one `dynamo:"name,opt,..."` struct tag.
// It is pure data: parseTag does no reflection and no I/O, so it is fuzzed
// on its own (FuzzParseTag).
type tagOptions struct {
	name    string // attribute name; "" means the Go field name
	skip    bool   // `dynamo:"-"`
	hash    bool
	rng     bool
	version bool
	ttl     bool
	set     bool // guregu/dynamo compatibility; translated by element type

	omitEmpty     bool
	omitEmptyElem bool
	nullEmpty     bool
	nullEmptyElem bool
	asString      bool
	stringSet     bool
	numberSet     bool
	binarySet     bool
	unixTime      bool

	// Java interop (see java.go): javaBool stores a bool as N 1/0, as
	// DynamoDBMapper does; javaDate stores a time.Time as DynamoDBMapper's
	// ISO-8601 string with milliseconds in UTC.
	javaBool bool
	javaDate bool

	// entity is the NAME of `entity=NAME`: the field's attribute tells the
	// type's items apart from other types' in a table holding several
	// (entity.go); "" when not given.
	entity string

	// Version settings (only with version): versionStart is the first
	// version written (0: unset, the default 1), versionClock takes it from
	// the mapper's clock instead (Unix milliseconds), versionStep is what
	// every later write adds (0: unset, the default 1).
	versionStart int64
	versionClock bool
	versionStep  int64

	// Timestamps the mapper writes from its clock: created on the write
	// that creates the item (never overwritten), modified on every write.
	created  bool
	modified bool
}

// knownTagOptions lists every option parseTag accepts, for error messages.
// Users read what each one does in the package documentation (doc.go,
// "Struct tags"): an option added here is documented there too.
const knownTagOptions = "hash, range, version, ttl, set, omitempty, omitemptyelem, " +
	"nullempty, nullemptyelem, string, stringset, numberset, binaryset, unixtime, javabool, javadate, " +
	"versionstart=N, versionstart=clock, versionstep=N, created, modified, entity=NAME"

// parseTag parses the value of a `dynamo` struct tag. It rejects unknown
// and repeated options, which attributevalue would silently ignore.
func parseTag(tag string) (tagOptions, error) {
	var o tagOptions
	name, rest, hasOpts := strings.Cut(tag, ",")
	if name == "-" && !hasOpts {
		o.skip = true
		return o, nil
	}
	o.name = name
	if !hasOpts {
		return o, nil
	}
	seen := 0
	for opt := range strings.SplitSeq(rest, ",") {
		if name, ok := strings.CutPrefix(opt, "entity="); ok {
			switch {
			case o.entity != "":
				return tagOptions{}, fmt.Errorf("option entity repeated in tag %q: give it once", tag)
			case name == "":
				return tagOptions{}, fmt.Errorf("empty entity name in tag %q: name the type's items, e.g. entity=order", tag)
			case !utf8.ValidString(name):
				return tagOptions{}, fmt.Errorf("entity name in tag %q is not valid UTF-8", tag)
			}
			o.entity = name
			continue
		}
		var bit int
		var p *bool
		switch opt {
		case "hash":
			bit, p = 1, &o.hash
		case "range":
			bit, p = 2, &o.rng
		case "version":
			bit, p = 3, &o.version
		case "ttl":
			bit, p = 4, &o.ttl
		case "set":
			bit, p = 5, &o.set
		case "omitempty":
			bit, p = 6, &o.omitEmpty
		case "omitemptyelem":
			bit, p = 7, &o.omitEmptyElem
		case "nullempty":
			bit, p = 8, &o.nullEmpty
		case "nullemptyelem":
			bit, p = 9, &o.nullEmptyElem
		case "string":
			bit, p = 10, &o.asString
		case "stringset":
			bit, p = 11, &o.stringSet
		case "numberset":
			bit, p = 12, &o.numberSet
		case "binaryset":
			bit, p = 13, &o.binarySet
		case "unixtime":
			bit, p = 14, &o.unixTime
		case "javabool":
			bit, p = 15, &o.javaBool
		case "javadate":
			bit, p = 16, &o.javaDate
		case "created":
			bit, p = 19, &o.created
		case "modified":
			bit, p = 20, &o.modified
		case "":
			return tagOptions{}, fmt.Errorf("empty option in tag %q: remove the extra comma", tag)
		default:
			if key, val, ok := strings.Cut(opt, "="); ok && (key == "versionstart" || key == "versionstep") {
				bit = 17
				if key == "versionstep" {
					bit = 18
				}
				if seen&(1<<bit) != 0 {
					return tagOptions{}, fmt.Errorf("option %q repeated in tag %q: give it once", key, tag)
				}
				seen |= 1 << bit
				if key == "versionstart" && val == "clock" {
					o.versionClock = true
					continue
				}
				n, err := parseVersionSetting(val)
				if err != nil {
					return tagOptions{}, fmt.Errorf("option %q in tag %q: %v", opt, tag, err)
				}
				if key == "versionstart" {
					o.versionStart = n
				} else {
					o.versionStep = n
				}
				continue
			}
			return tagOptions{}, fmt.Errorf("unknown option %q in tag %q: use one of %s", opt, tag, knownTagOptions)
		}
		if seen&(1<<bit) != 0 {
			return tagOptions{}, fmt.Errorf("option %q repeated in tag %q: give it once", opt, tag)
		}
		seen |= 1 << bit
		*p = true
	}
	if o.hash && o.rng {
		return tagOptions{}, fmt.Errorf("tag %q has both hash and range: a field is one key or the other", tag)
	}
	if o.version && (o.hash || o.rng) {
		return tagOptions{}, fmt.Errorf("tag %q makes a key the version: the version must be a separate attribute", tag)
	}
	if o.version && o.asString {
		return tagOptions{}, fmt.Errorf("tag %q stores the version as a string: remove \"string\"; versions are numbers", tag)
	}
	if o.version && o.omitEmpty {
		return tagOptions{}, fmt.Errorf("tag %q: remove omitempty from the version; the mapper always writes it", tag)
	}
	if (o.versionStart != 0 || o.versionClock || o.versionStep != 0) && !o.version {
		return tagOptions{}, fmt.Errorf("tag %q has versionstart or versionstep without version: add \"version\" (e.g. `dynamo:\"v,version,versionstart=clock\"`) or remove them", tag)
	}
	if o.created || o.modified {
		opt := "created"
		if o.modified {
			opt = "modified"
		}
		switch {
		case o.created && o.modified:
			return tagOptions{}, fmt.Errorf("tag %q has both created and modified: the creation time is kept, the modification time changes on every write; use two fields", tag)
		case o.hash || o.rng:
			return tagOptions{}, fmt.Errorf("tag %q makes a key the %s time: a key never changes; use a separate attribute", tag, opt)
		case o.version:
			return tagOptions{}, fmt.Errorf("tag %q makes the version the %s time: use a separate attribute (or versionstart=clock on the version)", tag, opt)
		case o.ttl:
			return tagOptions{}, fmt.Errorf("tag %q makes the ttl the %s time, which would expire the item as it is written: use a separate attribute", tag, opt)
		case o.set || o.stringSet || o.numberSet || o.binarySet:
			return tagOptions{}, fmt.Errorf("tag %q has %s and a set option: a time is one value; remove the set option", tag, opt)
		case o.asString:
			return tagOptions{}, fmt.Errorf("tag %q has %s and string: remove \"string\"; a time.Time is stored as a string already, an integer as Unix milliseconds", tag, opt)
		}
	}
	sets := btoi(o.set) + btoi(o.stringSet) + btoi(o.numberSet) + btoi(o.binarySet)
	if sets > 1 {
		return tagOptions{}, fmt.Errorf("tag %q names more than one set kind: keep one of set, stringset, numberset, binaryset", tag)
	}
	if o.entity != "" && (o.hash || o.rng || o.version || o.ttl || o.omitEmpty || o.nullEmpty || sets > 0 || o.javaBool || o.javaDate || o.unixTime || o.asString) {
		return tagOptions{}, fmt.Errorf("tag %q: an entity attribute holds the entity name and nothing else; give it no other option", tag)
	}
	if o.javaBool && o.javaDate {
		return tagOptions{}, fmt.Errorf("tag %q has both javabool and javadate: a field is a bool or a time; keep the one that fits its type", tag)
	}
	if o.javaBool || o.javaDate {
		opt, what := "javabool", "a number 1 or 0"
		if o.javaDate {
			opt, what = "javadate", "an ISO-8601 string"
		}
		switch {
		case o.asString:
			return tagOptions{}, fmt.Errorf("tag %q has both %s and string: %s already says how the value is stored (%s); remove \"string\"", tag, opt, opt, what)
		case o.unixTime:
			return tagOptions{}, fmt.Errorf("tag %q has both %s and unixtime: %s stores %s, unixtime epoch seconds; keep one", tag, opt, opt, what)
		case sets > 0 && o.javaBool:
			return tagOptions{}, fmt.Errorf("tag %q has javabool and a set option: DynamoDB has no sets of booleans; remove the set option", tag)
		case sets > 0:
			return tagOptions{}, fmt.Errorf("tag %q has javadate and a set option: javadate applies to single times, slices and maps; use a list ([]time.Time, a List<Date> in Java) or a []string set of dates you format", tag)
		}
	}
	return o, nil
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
const (
	indexTagKey      = "index"
	localIndexTagKey = "localIndex"
)

// indexKey is one entry of an `index` or `localIndex` struct tag: the field
// is the hash key (rng false) or the range key (rng true) of index name.
type indexKey struct {
	name string
	rng  bool
}

// parseIndexTag parses the value of an `index` or `localIndex` struct tag:
// space-separated entries "Name,hash" or "Name,range" ("partition" and "sort"
// are accepted too, as guregu/dynamo does). It checks index names the way
// DynamoDB does (3 to 255 of a-z A-Z 0-9 _ - .) and refuses an index named
// twice. Like parseTag it is pure data and fuzzed on its own
// (FuzzParseIndexTag); what depends on the struct (roles, key types, local
// versus global) is checked by the schema.
func parseIndexTag(tag string) ([]indexKey, error) {
	entries := strings.Fields(tag)
	if len(entries) == 0 {
		return nil, nil
	}
	keys := make([]indexKey, 0, len(entries))
	for _, e := range entries {
		name, role, ok := strings.Cut(e, ",")
		if !ok {
			return nil, fmt.Errorf("index entry %q in tag %q has no key role: write %q or %q", e, tag, name+",hash", name+",range")
		}
		if err := checkIndexName(name); err != nil {
			return nil, fmt.Errorf("index entry %q in tag %q: %v", e, tag, err)
		}
		var k indexKey
		switch role {
		case "hash", "partition":
			k = indexKey{name: name}
		case "range", "sort":
			k = indexKey{name: name, rng: true}
		default:
			return nil, fmt.Errorf("index entry %q in tag %q: unknown key role %q: use hash or range, and separate indexes with spaces", e, tag, role)
		}
		for _, prev := range keys {
			if prev.name == name {
				return nil, fmt.Errorf("index %q named twice in tag %q: a field is one key of an index, its hash or its range key", name, tag)
			}
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// checkIndexName applies DynamoDB's rule for index names.
func checkIndexName(name string) error {
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
