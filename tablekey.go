package dynamo

import (
	"bytes"
	"fmt"
	"reflect"
	"unicode/utf8"

	"github.com/ddbkit/dynamo/internal/schema"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// keyOfItem returns the primary key of *item, checked; op names the call in
// the error of a nil item. A struct T is read in place (item is a pointer
// so that the caller's copy is the one read): boxing it would copy the
// whole struct to the heap.
func (t *Table[T]) keyOfItem(item *T, op string) (map[string]types.AttributeValue, error) {
	if !t.ptr {
		if key, ok, err := t.fastKeyOf(reflect.ValueOf(item).Elem()); ok {
			return key, err
		}
	}
	_, v, err := t.box(*item, op)
	if err != nil {
		return nil, err
	}
	return t.keyOf(v)
}

// fastKeyID returns the keyID of *item's key without making its key map,
// for key fields of a string kind stored as S (what fastKeyValue makes of
// them) holding a valid key — not empty, valid UTF-8, as checkKey wants —
// so that the key map, when made, is the same text for the same keyID; ok
// is false otherwise (keyOfItem tells the key, or the error). *item is
// read in place.
func (t *Table[T]) fastKeyID(item *T) (id keyID, ok bool) {
	v := reflect.ValueOf(item).Elem()
	if t.ptr {
		if v.IsNil() {
			return id, false
		}
		v = v.Elem()
	}
	for n, f := range t.keyFields {
		fv, ok := plainKeyValue(v, f)
		if !ok || !isStringS(fv) {
			return id, false
		}
		str := fv.String()
		if str == "" || !utf8.ValidString(str) {
			return id, false
		}
		if n == 0 {
			id.hashType, id.hash = 'S', str
		} else {
			id.rangeType, id.rng = 'S', str
		}
	}
	return id, true
}

// keyFields yields the hash key field (n 0) and, when the table has one,
// the range key field (n 1).
func (t *table) keyFields(yield func(n int, f *schema.Field) bool) {
	s := t.p.S
	for n, i := range [2]int{s.Hash, s.Range} {
		if i >= 0 && !yield(n, &s.Fields[i]) {
			return
		}
	}
}

// plainKeyValue is the value in the struct v of the key field f when its
// Go value is what is stored (no string, unixtime or custom encoding):
// what the fast paths compare and encode in place. ok is false otherwise,
// or when f is inside a nil embedded struct pointer.
func plainKeyValue(v reflect.Value, f *schema.Field) (fv reflect.Value, ok bool) {
	if f.Opts.AsString || f.Opts.UnixTime || f.Custom {
		return fv, false
	}
	return schema.FieldValue(v, f)
}

// isStringS reports whether a plain key value fv is stored as S: a Go
// string kind, and not a named string type that encodes as a number.
func isStringS(fv reflect.Value) bool {
	return fv.Kind() == reflect.String && (fv.Type() == schema.StringType || !schema.NumberLike(fv.Type()))
}

// keyOf returns the primary key of the struct v, checked.
func (t *table) keyOf(v reflect.Value) (map[string]types.AttributeValue, error) {
	if key, ok, err := t.fastKeyOf(v); ok {
		return key, err
	}
	return t.keyFromEncoded(v)
}

// fastKeyOf is keyOf for key fields that fastKeyValue encodes; ok is false
// when one of them needs the general encoder (keyFromEncoded). It does not
// retain v, so a caller's struct need not escape to the heap.
func (t *table) fastKeyOf(v reflect.Value) (key map[string]types.AttributeValue, ok bool, err error) {
	key = make(map[string]types.AttributeValue, 2)
	for _, f := range t.keyFields {
		fv, ok := schema.FieldValue(v, f)
		if !ok {
			return nil, true, t.keyError(f, "is inside a nil embedded struct pointer", schema.SetIt)
		}
		av, ok := schema.FastKeyValue(fv, f)
		if !ok {
			return nil, false, nil
		}
		key[f.Name] = av
	}
	return key, true, t.checkKey(key)
}

// sameKey reports whether the key fields of the struct v hold key, a key
// keyOf returned (so checked), when that is quick to tell: string and
// binary key fields stored as S and B, compared in place, without
// encoding. false means not the same, or not known: ask keyOf.
func (t *table) sameKey(key map[string]types.AttributeValue, v reflect.Value) bool {
	for _, f := range t.keyFields {
		fv, ok := plainKeyValue(v, f)
		if !ok {
			return false
		}
		switch want := key[f.Name].(type) {
		case *types.AttributeValueMemberS:
			if !isStringS(fv) || fv.String() != want.Value {
				return false
			}
		case *types.AttributeValueMemberB:
			if fv.Kind() != reflect.Slice || fv.Type() != schema.ByteSliceType || !bytes.Equal(fv.Bytes(), want.Value) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// keyFromEncoded encodes the whole struct and picks the key (for key types
// with custom encodings).
func (t *table) keyFromEncoded(v reflect.Value) (map[string]types.AttributeValue, error) {
	// Only the key attributes are sent: the others are not checked.
	item, err := t.encodeUnchecked(v.Addr().Interface())
	if err != nil {
		return nil, err
	}
	return t.keyFromItem(item)
}

// keyFromItem picks the primary key out of an encoded item, checked.
func (t *table) keyFromItem(item map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	key := t.pickKey(item)
	return key, t.checkKey(key)
}

// pickKey returns the primary key attributes of an encoded item, unchecked.
func (t *table) pickKey(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	key := make(map[string]types.AttributeValue, 2)
	key[t.p.KeyNames[0]] = item[t.p.KeyNames[0]]
	if t.p.HasRangeKey {
		key[t.p.KeyNames[1]] = item[t.p.KeyNames[1]]
	}
	return key
}

// reusesKey reports whether key (nil: none) holds exactly the key
// attributes of the encoded item — the same types and text, so a request
// sending key is byte for byte the one sending pickKey(item) — for key
// attributes of S or B.
func (t *table) reusesKey(key, item map[string]types.AttributeValue) bool {
	n := 1
	if t.p.HasRangeKey {
		n = 2
	}
	if len(key) != n {
		return false
	}
	for _, name := range t.p.KeyNames[:n] {
		switch a := key[name].(type) {
		case *types.AttributeValueMemberS:
			b, ok := item[name].(*types.AttributeValueMemberS)
			if !ok || a.Value != b.Value {
				return false
			}
		case *types.AttributeValueMemberB:
			b, ok := item[name].(*types.AttributeValueMemberB)
			if !ok || !bytes.Equal(a.Value, b.Value) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// checkKey refuses keys DynamoDB would refuse, before anything is sent. key
// may also be a whole encoded item: only the key attributes are looked at.
func (t *table) checkKey(key map[string]types.AttributeValue) error {
	for n, f := range t.keyFields {
		limit := schema.MaxPartitionKeyLen
		if n == 1 {
			limit = schema.MaxSortKeyLen
		}
		if what, fix := schema.KeyValueFault(key[f.Name], limit, false); what != "" {
			return t.keyError(f, what, fix)
		}
	}
	return nil
}

// checkItemKeys refuses an item DynamoDB would refuse for its keys: those
// of the table (checkKey), and those of the secondary indexes the tags
// declare that the item holds — an item without an index's key attribute
// (or with it NULL) is simply not in that index, but one holding it empty,
// over the size limit or not a string, number or binary fails the write.
func (t *table) checkItemKeys(item map[string]types.AttributeValue) error {
	if err := t.checkKey(item); err != nil {
		return err
	}
	return t.checkIndexKeys(item, item, false)
}

// checkIndexKeys is checkItemKeys' check of the index keys, read from
// attrs by attribute name, or by value placeholder (byPlaceholder: attrs
// is an UpdateItem's values a Save encoded straight into, buildSaveValues),
// the table's key attributes from key by name. The table's keys, checked
// by checkKey, are checked again only where an index limits them more: the
// table's partition key as an index's sort key (1024 bytes, not 2048).
func (t *table) checkIndexKeys(attrs, key map[string]types.AttributeValue, byPlaceholder bool) error {
	s := t.p.S
	for j := range s.Indexes {
		x := &s.Indexes[j]
		for r, i := range x.KeyRoles() {
			limit := schema.MaxPartitionKeyLen
			if r {
				limit = schema.MaxSortKeyLen
			}
			if i == s.Range || (i == s.Hash && limit == schema.MaxPartitionKeyLen) {
				continue // none, or the table's own, checked by checkKey
			}
			f := &s.Fields[i]
			from, at := attrs, f.Name
			if i == s.Hash {
				from = key
			} else if byPlaceholder {
				at = f.ValuePH
			}
			if what, fix := schema.KeyValueFault(from[at], limit, true); what != "" {
				role := "hash"
				if r {
					role = "range"
				}
				return fmt.Errorf("%w: table %q: index %q %s key %s (field %s.%s) %s: %s",
					ErrInvalidInput, t.name, x.Name, role, f.Name, s.Type, f.GoName, what, fix)
			}
		}
	}
	return nil
}

func (t *table) keyError(f *schema.Field, what, fix string) error {
	role := "hash"
	if f.Opts.Range {
		role = "range"
	}
	return fmt.Errorf("%w: table %q: %s key %s (field %s.%s) %s: %s",
		ErrInvalidInput, t.name, role, f.Name, t.p.S.Type, f.GoName, what, fix)
}
