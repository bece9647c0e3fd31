package codec

import (
	"maps"
	"reflect"
	"slices"
	"time"
	"unsafe"
)

// copyPlan is how CopyDecoded copies the fields of a struct: one entry per
// visible field, at its offset (no embedded pointers). nil when some field
// is of a kind CopyDecoded does not copy.
type copyPlan []copyField

type copyField struct {
	off  uintptr
	kind copyKind
	size uintptr // copyBytes: the field's size
}

type copyKind uint8

const (
	copyBytes  copyKind = iota + 1 // bool, integers: bits, no pointers
	copyString                     // string kinds
	copyTime                       // time.Time (not unixtime)
	copyStrSet                     // []string as a string set of plain strings
	copyStrMap                     // map[string]string without element tags
)

// compileCopy returns the copy plan of the struct node n, nil when a field
// is not one CopyDecoded copies: strings (not `string`), bools, integers,
// times (not `unixtime`), a []string string set of plain strings and a
// map[string]string without element tags; every attribute name valid, no
// field both omitempty and nullempty. Floats, pointers, structs,
// lists, binaries, text types and whatever attributevalue encodes are not:
// their values read back are not (cheaply) known to be the values written.
func compileCopy(n *node) copyPlan {
	if !n.namesOK {
		return nil // refused by the caller's checks
	}
	plan := make(copyPlan, 0, len(n.fields))
	for i := range n.fields {
		f := &n.fields[i]
		if len(f.hops) != 1 || f.hops[0].deref {
			return nil
		}
		c := copyField{off: f.hops[0].off}
		fn := f.n
		if fn.tag.omitEmpty && fn.tag.nullEmpty {
			return nil // a zero is refused
		}
		switch fn.kind {
		case kString:
			if fn.tag.asString {
				return nil
			}
			c.kind = copyString
		case kBool, kInt, kUint:
			c.kind, c.size = copyBytes, fn.size
		case kTime:
			if fn.tag.unixTime {
				return nil
			}
			c.kind = copyTime
		case kSlice:
			el := fn.elem
			if fn.typ != reflect.TypeFor[[]string]() || !fn.tag.strSet || fn.tag.binSet || fn.tag.numSet ||
				el.kind != kString || el.tag.omitEmpty || el.tag.nullEmpty || el.tag.asString {
				return nil
			}
			c.kind = copyStrSet
		case kMap:
			el := fn.elem
			if fn.typ != reflect.TypeFor[map[string]string]() || !fn.keyPlain ||
				el.kind != kString || el.tag.omitEmpty || el.tag.nullEmpty || el.tag.asString {
				return nil
			}
			c.kind = copyStrMap
		default:
			return nil
		}
		plan = append(plan, c)
	}
	return plan
}

// Copyable reports whether CopyDecoded can copy values of s: every field
// is of a kind it copies (see CopyDecoded).
func (s *Struct) Copyable() bool { return s.copy != nil }

// Year 0 and the last second of year 9999 in Unix seconds: RFC 3339 times
// within them are read back as written.
const (
	minRFC3339Unix = -62167219200
	maxRFC3339Unix = 253402300799
)

// CopyDecoded sets the zero struct at dst to what Decode makes of the item
// Encode makes of the struct at src — the value read back from its own
// encoding — without encoding or decoding, and reports whether it could.
// It copies structs whose visible fields are strings, bools, integers,
// times (not `unixtime`), string sets of []string and map[string]string
// (Copyable): a time is read back in UTC without its monotonic reading,
// an empty string set as nil, a map as a copy (nil stays nil); fields
// attributevalue does not see stay zero. The copy shares no slice or map
// with src (only strings, which never change). It returns false, with dst
// partly written (the caller discards it and decodes), when s is not
// Copyable or src holds a value whose encoding the caller's checks would
// change or refuse, or that does not read back as written: a string set
// with a duplicate element, a time not in UTC or outside years 0–9999.
func (s *Struct) CopyDecoded(dst, src unsafe.Pointer) bool {
	return s.copyDecoded(dst, src)
}

// CopyDecodedValue is CopyDecoded with dst and src pointers to the struct
// (reflect.Value of kind Pointer, not nil), for callers without unsafe;
// false when either is not a pointer to s's struct type.
func (s *Struct) CopyDecodedValue(dst, src reflect.Value) bool {
	if dst.Type() != src.Type() || dst.Type().Elem() != s.typ || dst.IsNil() || src.IsNil() {
		return false
	}
	return s.copyDecoded(dst.UnsafePointer(), src.UnsafePointer())
}

// CopyDecodedTo is CopyDecoded for typed pointers to s's struct type, for
// callers without unsafe: unlike CopyDecodedValue it lets neither pointer
// escape. False when T is not s's struct type.
func CopyDecodedTo[T any](s *Struct, dst, src *T) bool {
	if reflect.TypeFor[T]() != s.typ {
		return false
	}
	return s.copyDecoded(unsafe.Pointer(dst), unsafe.Pointer(src))
}

func (s *Struct) copyDecoded(dst, src unsafe.Pointer) bool {
	if s.copy == nil {
		return false
	}
	for _, c := range s.copy {
		d, p := unsafe.Add(dst, c.off), unsafe.Add(src, c.off)
		switch c.kind {
		case copyBytes:
			copy(unsafe.Slice((*byte)(d), c.size), unsafe.Slice((*byte)(p), c.size))
		case copyString:
			*(*string)(d) = *(*string)(p)
		case copyTime:
			t := *(*time.Time)(p)
			if t.Location() != time.UTC {
				return false
			}
			if u := t.Unix(); u < minRFC3339Unix || u > maxRFC3339Unix {
				return false
			}
			*(*time.Time)(d) = t.UTC() // as Parse makes it: no monotonic reading, loc nil
		case copyStrSet:
			ss := *(*[]string)(p)
			if len(ss) == 0 {
				continue // NULL (or left out), read back as nil
			}
			for i := 1; i < len(ss); i++ {
				if slices.Contains(ss[:i], ss[i]) {
					return false // the caller's check drops duplicates
				}
			}
			out := make([]string, len(ss)) // as Decode makes it: cap = len
			copy(out, ss)
			*(*[]string)(d) = out
		case copyStrMap:
			m := *(*map[string]string)(p)
			if m == nil {
				continue
			}
			if _, ok := m[""]; ok {
				return false // refused by Encode
			}
			*(*map[string]string)(d) = maps.Clone(m)
		}
	}
	return true
}
