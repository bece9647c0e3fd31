package codec

import (
	"encoding"
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
)

var (
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	binaryUnmarshaler   = reflect.TypeFor[encoding.BinaryUnmarshaler]()
)

// IsText reports whether values of t are stored as text (a DynamoDB S): t
// is not time.Time (which keeps attributevalue's time encoding, `unixtime`
// included), neither t nor *t implements attributevalue.Marshaler or
// Unmarshaler (a type's own DynamoDB encoding wins), t or *t implements
// encoding.TextMarshaler, and *t implements encoding.TextUnmarshaler, so
// that what is written can be read back. uuid.UUID-style [16]byte types,
// netip.Addr, netip.Prefix, net.IP and big.Int are text types; a type with
// only one of the two methods is not. Neither is a struct that embeds a
// type with text methods (time.Time, a UUID) next to other fields the
// encoder sees: the methods it gets by promotion see only the embedded
// value, and storing their text would drop the other fields; it stays a map
// of its fields. A struct that only wraps such a type (struct{ netip.Addr })
// is a text type.
func IsText(t reflect.Type) bool {
	if t == nil || t == timeType || t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface {
		return false
	}
	pt := reflect.PointerTo(t)
	if !pt.Implements(textUnmarshalerType) || !pt.Implements(textMarshalerType) {
		return false
	}
	return !custom(t) && !embedsText(t)
}

// embedsText reports whether struct type t embeds a type (or a pointer to
// one) with a text method, which t may have by promotion, and has other
// fields the encoder sees.
func embedsText(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	embeds, others := false, 0
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.Anonymous {
			if f.IsExported() {
				others++
			}
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if pt := reflect.PointerTo(ft); !embeds && (pt.Implements(textMarshalerType) || pt.Implements(textUnmarshalerType)) {
			embeds = true
			continue
		}
		others++
	}
	return embeds && others > 0
}

var (
	binaryMarshalerType = reflect.TypeFor[encoding.BinaryMarshaler]()

	// avText and avTextDec are what the codec hands a value holding text
	// types to (a fallback): attributevalue with default options but for
	// UseEncodingMarshalers and UseEncodingUnmarshalers, so that text types
	// inside it are stored as text too. Immutable.
	avText = attributevalue.NewEncoder(func(o *attributevalue.EncoderOptions) {
		o.TagKey = TagKey
		o.UseEncodingMarshalers = true
	})
	avTextDec = attributevalue.NewDecoder(func(o *attributevalue.DecoderOptions) {
		o.TagKey = TagKey
		o.UseNumber = true
		o.UseEncodingUnmarshalers = true
	})
)

// Reach is what values of a type can hold, as far as the text rule goes
// (ReachOf).
type Reach struct {
	// Text is a text type values of the type can hold ("" path: the type
	// itself); nil when none.
	Text     reflect.Type
	TextPath string
	// Clash is a type that attributevalue's UseEncodingMarshalers and
	// UseEncodingUnmarshalers would store otherwise than the mapper does:
	// time.Time (text, whatever `unixtime` says), a type with only some
	// of the text and binary methods, or a text type whose MarshalText has
	// a pointer receiver (big.Int) where attributevalue cannot take the
	// address of the value (in a map value), so that it would store the
	// value by its kind, or an unnamed struct wrapping a text type
	// (struct{ netip.Addr }), whose pointer-receiver UnmarshalText
	// attributevalue does not find (it reads only named types' methods
	// through their address), so items could be written but not read;
	// nil when none.
	Clash     reflect.Type
	ClashPath string
}

// ReachOf walks type t as attributevalue would encode it (struct fields it
// sees, pointers, slices, arrays, map values; not into types with their
// own DynamoDB encoding, text types or interfaces, whose contents are only
// known at run time) and reports the first text type and the first clash
// it finds.
func ReachOf(t reflect.Type) Reach {
	var r Reach
	reach(t, "", true, map[openKey]bool{}, &r)
	return r
}

// reach walks t at path; addressable says whether attributevalue can take
// the address of values there (not in map values), as pointer-receiver
// MarshalText needs.
func reach(t reflect.Type, path string, addressable bool, seen map[openKey]bool, r *Reach) {
	if seen[openKey{t, addressable}] || r.Text != nil && r.Clash != nil {
		return
	}
	seen[openKey{t, addressable}] = true
	switch {
	case t.Kind() == reflect.Interface || t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Interface:
		return
	case IsText(t):
		if r.Text == nil {
			r.Text, r.TextPath = t, path
		}
		// attributevalue looks for pointer-receiver methods only on named
		// types it can take the address of: an unnamed struct wrapping a
		// text type (struct{ netip.Addr }) is written by its promoted
		// MarshalText but never read by its UnmarshalText.
		unnamed := t.Name() == ""
		if r.Clash == nil && (!t.Implements(textMarshalerType) && (!addressable || unnamed) || unnamed && !t.Implements(textUnmarshalerType)) {
			r.Clash, r.ClashPath = t, path
		}
		return
	case custom(t):
		return
	case t == timeType || clashes(t):
		if r.Clash == nil {
			r.Clash, r.ClashPath = t, path
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if e := t.Elem(); IsText(e) {
			// attributevalue finds every method of e through the pointer.
			if r.Text == nil {
				r.Text, r.TextPath = e, path
			}
			return
		}
		reach(t.Elem(), path, true, seen, r)
	case reflect.Slice:
		reach(t.Elem(), path+"[]", true, seen, r)
	case reflect.Array:
		reach(t.Elem(), path+"[]", addressable, seen, r)
	case reflect.Map:
		reach(t.Elem(), path+"[]", false, seen, r)
	case reflect.Struct:
		fs, ok := visibleFields(t)
		if !ok {
			return
		}
		for _, f := range fs {
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			reach(f.Type, p, addressable, seen, r)
		}
	}
}

// clashes reports whether attributevalue with UseEncodingMarshalers or
// UseEncodingUnmarshalers would treat values of t (not a text type, no
// DynamoDB encoding of its own) otherwise than without them.
func clashes(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return pt.Implements(textMarshalerType) || pt.Implements(textUnmarshalerType) ||
		pt.Implements(binaryMarshalerType) || pt.Implements(binaryUnmarshaler)
}

// LostEmbedded describes a struct type values of t can hold that embeds
// time.Time or a text type whose fields are all unexported (netip.Addr,
// big.Int) next to other fields: the struct is stored as a map of its
// fields, embedded structs flattened, which leaves nothing of the embedded
// value, so it would be lost. "" when there is none.
func LostEmbedded(t reflect.Type) string {
	return lostIn(t, map[reflect.Type]bool{})
}

func lostIn(t reflect.Type, seen map[reflect.Type]bool) string {
	if seen[t] || t == timeType || IsText(t) || custom(t) {
		return ""
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return lostIn(t.Elem(), seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if f.Anonymous && ft.Kind() == reflect.Struct && flattened(f.Tag) && (ft == timeType || IsText(ft)) && allUnexported(ft) {
				return fmt.Sprintf("%s embeds %s next to other fields, which would store it as a map of its fields, all unexported, losing it: give the field a name (e.g. At %s)", t, ft, f.Type)
			}
			if f.IsExported() || f.Anonymous {
				if d := lostIn(f.Type, seen); d != "" {
					return d
				}
			}
		}
	}
	return ""
}

// flattened reports whether an embedded struct field with tag tg is
// flattened (no attribute name of its own, not skipped).
func flattened(tg reflect.StructTag) bool {
	t := parseTags(tg)
	return !t.ignore && t.name == ""
}

func allUnexported(t reflect.Type) bool {
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).IsExported() {
			return false
		}
	}
	return true
}

// Fields returns the attributes of struct type t as attributevalue's
// encoder sees them (TagKey "dynamo"): embedded structs flattened, shadowed
// and skipped fields left out (the Fields of LayoutOf); nil when t is not a
// struct or its fields cannot be told (Layout.Opaque).
func Fields(t reflect.Type) []Field {
	if t.Kind() != reflect.Struct {
		return nil
	}
	fs, ok := visibleFields(t)
	if !ok {
		return nil
	}
	return fs
}
