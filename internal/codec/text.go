package codec

import (
	"encoding"
	"reflect"
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
// only one of the two methods is not.
func IsText(t reflect.Type) bool {
	if t == nil || t == timeType || t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface {
		return false
	}
	pt := reflect.PointerTo(t)
	if !pt.Implements(textUnmarshalerType) || !pt.Implements(textMarshalerType) {
		return false
	}
	return !custom(t)
}
