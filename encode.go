package dynamo

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"

	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/codec"
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/schema"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// box returns item as an interface holding a pointer to the struct (for the
// encoder) and the struct as a reflect.Value. Nothing is copied from a
// pointer T; a struct T is boxed once.
func (t *Table[T]) box(item T, op string) (any, reflect.Value, error) {
	var boxed any
	if t.ptr {
		boxed = item
	} else {
		boxed = &item
	}
	v := reflect.ValueOf(boxed)
	if v.IsNil() {
		return nil, v, fmt.Errorf("%w: %s on table %q with a nil %T: pass a pointer to a struct", ErrInvalidInput, op, t.name, item)
	}
	return boxed, v.Elem(), nil
}

// structOf returns the struct *item is or points to, read in place. A
// pointer T must not be nil (decoded items never are).
func (t *Table[T]) structOf(item *T) reflect.Value {
	v := reflect.ValueOf(item).Elem()
	if t.ptr {
		v = v.Elem()
	}
	return v
}

// encode encodes the struct boxed points to, applying the mapper's `set`,
// `javabool` and `javadate` conversions, and checks the result as DynamoDB
// would (internal/schema/validate.go): every refusal wraps ErrInvalidInput
// and names the field. Duplicate set elements are dropped.
func (t *table) encode(boxed any) (map[string]types.AttributeValue, error) {
	item, _, err := t.encodeSized(boxed, nil, false)
	return item, err
}

// encodeSized is encode that also returns the item's sizes as the codec
// counted them while encoding (ok false: not counted). prev, when not nil,
// is an item the struct was computed from (an Update's basis): the values
// of it the codec would make again are shared, not made again
// (codec.Struct.EncodeOver); with into, the item is written into prev
// itself (codec.Struct.EncodeInto), which the caller owns and drops: its
// attributes no field names stay.
func (t *table) encodeSized(boxed any, prev map[string]types.AttributeValue, into bool) (map[string]types.AttributeValue, itemSizes, error) {
	item, clean, sz, err := t.encodeItem(boxed, prev, into)
	if err != nil {
		return nil, itemSizes{}, err
	}
	if !clean {
		if err := t.p.S.CheckEncoded(t.name, item); err != nil {
			return nil, itemSizes{}, err
		}
		sz = itemSizes{} // checkEncoded may have dropped set elements
	}
	if t.p.S.Entity >= 0 {
		if err := t.p.S.StampEntity(t.name, item); err != nil {
			return nil, itemSizes{}, err
		}
		sz = itemSizes{} // the entity attribute changed: count again
	}
	return item, sz, nil
}

// itemSizes are the sizes of an encoded item counted while encoding: total
// is what writtenSize would count for every attribute as it stands (names
// included), nulls the part of it of the NULL attributes.
type itemSizes struct {
	ok           bool
	total, nulls int
	// kept is the codec's Result.Kept of an item encoded over a basis:
	// bit i, the i-th of the codec's fields left the basis's attribute as
	// it was (Table.keptAttrs).
	kept uint64
}

// encodeUnchecked is encode without the checks of the encoded values (UTF-8,
// depth, set duplicates); the Go value is still checked, so that encoding
// cannot crash.
func (t *table) encodeUnchecked(boxed any) (map[string]types.AttributeValue, error) {
	item, _, _, err := t.encodeItem(boxed, nil, false)
	return item, err
}

var codecHooks = &codec.Hooks{Check: schema.ValidAV, Size: av.Size}

// encodeItem encodes the struct boxed points to, through the compiled codec
// where the table has one, else (and for the error of a value it refuses)
// through attributevalue. clean reports that the encoded values were checked
// as checkEncoded would check them and found valid, without duplicate set
// elements: checkEncoded has nothing left to do; sz, when ok, the item's
// sizes. prev and into are encodeSized's.
func (t *table) encodeItem(boxed any, prev map[string]types.AttributeValue, into bool) (item map[string]types.AttributeValue, clean bool, sz itemSizes, err error) {
	s := t.p.S
	if s.Walk {
		if err := s.CheckGo(t.name, reflect.ValueOf(boxed).Elem()); err != nil {
			return nil, false, sz, err
		}
	}
	if t.enc != nil {
		// An error falls through to attributevalue, which words it. Room
		// for the write token.
		var r codec.Result
		var err error
		if p := reflect.ValueOf(boxed).UnsafePointer(); into && t.readsBack {
			r, err = t.enc.EncodeInto(p, prev, t.m.enc, codecHooks)
		} else {
			r, err = t.enc.EncodeOver(p, prev, t.m.enc, codecHooks, 1)
		}
		if err == nil {
			item, clean = r.Item, r.Clean
			sz = itemSizes{ok: true, total: r.Size, nulls: r.NullSize, kept: r.Kept}
		} else if te := (*codec.TextError)(nil); errors.As(err, &te) {
			return nil, false, sz, fmt.Errorf("%w: table %q: encode %s: %w", ErrInvalidInput, t.name, s.Type, err)
		}
	}
	if item == nil {
		enc, err := codec.SafeEncode(t.avEnc, boxed)
		if err != nil {
			return nil, false, sz, fmt.Errorf("%w: table %q: encode %s: %w%s", ErrInvalidInput, t.name, s.Type, err, s.FailingField(t.avEnc, reflect.ValueOf(boxed).Elem()))
		}
		m, ok := enc.(*types.AttributeValueMemberM)
		if !ok {
			return nil, false, sz, fmt.Errorf("dynamo: %s encodes to %T, not a map: a table item must encode as a map", s.Type, enc)
		}
		// A copy: a marshaler of the item or of a field may return a
		// value it keeps, which the mapper writes into (version, write
		// token) and keeps between calls (a key's last item).
		item = av.CloneItem(m.Value)
	}
	for _, i := range t.textIndexKeys {
		if v, ok := item[s.Fields[i].Name].(*types.AttributeValueMemberS); ok && v.Value == "" {
			delete(item, s.Fields[i].Name)
			sz = itemSizes{}
		}
	}
	for _, i := range t.nullIndexKeys {
		if _, ok := item[s.Fields[i].Name].(*types.AttributeValueMemberNULL); ok {
			delete(item, s.Fields[i].Name)
			sz = itemSizes{}
		}
	}
	if len(s.JavaFields) > 0 {
		clean, sz = false, itemSizes{}
		if err := s.JavaEncode(item); err != nil {
			return nil, false, sz, fmt.Errorf("%w: encode %s: %w", ErrInvalidInput, s.Type, err)
		}
	}
	if s.HasSets {
		for i := range s.Fields {
			f := &s.Fields[i]
			if f.SetKind == 0 {
				continue
			}
			clean, sz = false, itemSizes{}
			if v, ok := item[f.Name]; ok {
				sv, err := listToSet(v, f.SetKind)
				if err != nil {
					return nil, false, sz, fmt.Errorf("%w: table %q: field %s.%s (attribute %q) %v", ErrInvalidInput, t.name, s.Type, f.GoName, f.Name, err)
				}
				item[f.Name] = sv
			}
		}
	}
	return item, clean, sz, nil
}

// decodeWritten decodes allNew, the item as stored after a write of op
// ("save to", "add to") that was applied (DynamoDB's ALL_NEW, or the item
// settling read). Its error says the write was applied, so that no caller
// takes it for a refusal and sends the write again (an Add would count
// twice), and names a version that is not a whole number (DynamoDB's
// conditions cannot tell one, so SaveClobber and Add land over it).
func (t *Table[T]) decodeWritten(op string, allNew map[string]types.AttributeValue) (T, error) {
	out, err := t.decode(allNew)
	if err == nil {
		return out, nil
	}
	// err names a version that is not a whole number (decodeError).
	return out, fmt.Errorf("dynamo: %s table %q key %s: the write was applied but the stored item does not decode; do not resend it: repair the item with a write of your own: %w",
		op, t.name, formatKey(t.pickKey(allNew)), err)
}

// decode decodes a stored item into a new T.
func (t *Table[T]) decode(item map[string]types.AttributeValue) (T, error) {
	out, err := t.decodeRaw(item)
	if err != nil {
		var zero T
		return zero, t.decodeError(item, err)
	}
	return out, nil
}

// decodeRaw is decode with the decoder's own error.
func (t *Table[T]) decodeRaw(item map[string]types.AttributeValue) (T, error) {
	var out T
	var err error
	if len(t.p.S.JavaDecFields) > 0 {
		var jitem map[string]types.AttributeValue
		if jitem, err = t.p.S.JavaDecode(item); err != nil {
			return out, err
		}
		item = jitem
	}
	if t.dec != nil {
		if t.ptr {
			pv := reflect.New(t.p.S.Type)
			if err = t.dec.DecodeValue(item, pv, t.m.dec); err == nil {
				return pv.Interface().(T), nil
			}
		} else if err = codec.DecodeTo(t.dec, item, &out, t.m.dec); err == nil {
			return out, nil
		}
		var zero T
		if te := (*codec.TextError)(nil); errors.As(err, &te) {
			return zero, err
		}
		// attributevalue words the error, on a fresh value.
		out = zero
	}
	// A copy: an unmarshaler of the item or of a field may keep the value
	// it is given, and item may be what the mapper keeps (a key's last).
	avItem := av.CloneItem(t.avItem(item))
	if t.ptr {
		pv := reflect.New(t.p.S.Type)
		err = codec.SafeDecode(t.avDec, &types.AttributeValueMemberM{Value: avItem}, pv.Interface())
		out = pv.Interface().(T)
	} else {
		err = codec.SafeDecode(t.avDec, &types.AttributeValueMemberM{Value: avItem}, &out)
	}
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}

// decodeError is the error of decoding item, a stored item, into T: the
// decoder's err, wrapped, with the table and the item's key, whichever
// call read it (Load, a query, a batch, a transaction, Update, Current).
// When no version of T can be read from the item's version attribute
// (another writer stored a string there, say), it names what is stored
// and the fix, as a write's ConditionError over the item does: one rule
// (plan.WrongVersion) for every call that reads items.
//
// An error that does not name the attribute it is about (attributevalue's
// "cannot unmarshal string into Go value type int") is given the name of
// the first attribute, in field order, that does not decode on its own.
func (t *Table[T]) decodeError(item map[string]types.AttributeValue, err error) error {
	key := " (item key " + formatKey(t.pickKey(item)) + ")"
	if name := t.failingAttr(item); name != "" && !strings.Contains(err.Error(), strconv.Quote(name)) {
		err = fmt.Errorf("attribute %q: %w", name, err)
	}
	if what, fix, wrong := plan.WrongVersion(t.p.S, item); wrong {
		return fmt.Errorf("dynamo: decode item of table %q into %s: %w%s; %s, and no %s loads from it: %s",
			t.name, t.p.S.Type, err, key, what, t.p.S.Type, fix)
	}
	return fmt.Errorf("dynamo: decode item of table %q into %s: %w%s", t.name, t.p.S.Type, err, key)
}

// failingAttr returns the name of the first attribute of item, in the
// order of T's fields, that does not decode into T alone; "" when each
// does, or when T decodes itself (its UnmarshalDynamoDBAttributeValue may
// refuse any part of an item). Only for errors: it decodes once per
// attribute.
func (t *Table[T]) failingAttr(item map[string]types.AttributeValue) string {
	if typ := t.p.S.Type; typ.Implements(schema.UnmarshalerType) || reflect.PointerTo(typ).Implements(schema.UnmarshalerType) {
		return ""
	}
	for i := range t.p.S.Fields {
		name := t.p.S.Fields[i].Name
		v, ok := item[name]
		if !ok {
			continue
		}
		if _, err := t.decodeRaw(map[string]types.AttributeValue{name: v}); err != nil {
			return name
		}
	}
	return ""
}

// avItem returns item as avDec can read it: the string sets of textSets as
// lists of S (copy on write; item itself when there are none).
func (t *table) avItem(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	out, copied := item, false
	for _, i := range t.textSets {
		ss, ok := item[t.p.S.Fields[i].Name].(*types.AttributeValueMemberSS)
		if !ok {
			continue
		}
		l := make([]types.AttributeValue, len(ss.Value))
		for j, v := range ss.Value {
			l[j] = &types.AttributeValueMemberS{Value: v}
		}
		if !copied {
			out, copied = maps.Clone(item), true
		}
		out[t.p.S.Fields[i].Name] = &types.AttributeValueMemberL{Value: l}
	}
	return out
}

func (t *Table[T]) decodeAny(item map[string]types.AttributeValue, out any) error {
	if ov := reflect.ValueOf(out); ov.Kind() == reflect.Pointer && !ov.IsNil() {
		// Into the table's own type: as Load decodes (compiled codec, text
		// types).
		switch ov.Type().Elem() {
		case reflect.TypeFor[T]():
			v, err := t.decode(item)
			if err == nil {
				*out.(*T) = v
			}
			return err
		case t.p.S.Type:
			v, err := t.decode(item)
			if err == nil {
				vv := reflect.ValueOf(&v).Elem()
				if t.ptr {
					vv = vv.Elem()
				}
				ov.Elem().Set(vv)
			}
			return err
		}
	}
	if len(t.p.S.JavaDecFields) > 0 {
		var err error
		if item, err = t.p.S.JavaDecode(item); err != nil {
			return fmt.Errorf("dynamo: decode item of table %q into %T: %w", t.name, out, err)
		}
	}
	dec := t.m.dec
	if rt := reflect.TypeOf(out); rt != nil && rt.Kind() == reflect.Pointer && schema.HoldsText(rt.Elem()) {
		dec = t.m.decText
	}
	// A copy, as decode gives its unmarshalers.
	if err := codec.SafeDecode(dec, &types.AttributeValueMemberM{Value: av.CloneItem(item)}, out); err != nil {
		return fmt.Errorf("dynamo: decode item of table %q into %T: %w", t.name, out, err)
	}
	return nil
}
