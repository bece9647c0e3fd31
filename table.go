package dynamo

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/codec"
	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/schema"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Table is a typed view of one DynamoDB table whose items are T, a struct or
// a pointer to a struct tagged with `dynamo:"..."`. It is safe for concurrent
// use; its methods never modify the values passed to them.
type Table[T any] struct {
	table
	gate gate[T] // queues and combines Update calls per key; see gate.go
}

// table is what a Table holds that does not depend on T: the mapper, the
// name, the schema's plan and the codecs. Table[T] embeds it, and every
// method that needs neither T nor a method that does is a method of table.
type table struct {
	m *Mapper
	// name is the table's name; &name is the TableName of requests, one
	// pointer for all of them (the SDK only reads it): nothing to
	// allocate per call.
	name string
	p    *plan.Plan
	ptr  bool // T is a pointer to the struct
	// idemSeen is the window of idempotency keys last seen per item, the
	// first guess of a keyed Add (idem.go).
	idemSeen idemSeen
	// enc and dec are the compiled codec of the struct type when the
	// mapper may use it for encoding and decoding; nil otherwise.
	enc, dec *codec.Struct
	// avEnc and avDec are the attributevalue encoder and decoder for what
	// the codec does not do: the mapper's, or for a type that holds text
	// types (codec.IsText) its text ones (Mapper.encText, decText).
	avEnc *attributevalue.Encoder
	avDec *attributevalue.Decoder
	// textSets are the fields that are `set`s of a text type: attributevalue
	// reads a string set's elements without UnmarshalText, so for avDec
	// their SS is handed over as a list of S (avItem).
	textSets []int
	// textIndexKeys are the omitempty fields of a text type that key a
	// secondary index: left out of the item when their text is empty,
	// which DynamoDB refuses as an index key (an empty string field
	// tagged omitempty is left out too).
	textIndexKeys []int
	// nullIndexKeys are the fields that key a secondary index and not the
	// table: left out of the item when it holds them as NULL (a nil
	// pointer, a nullempty field's empty value), which DynamoDB refuses in
	// an index key ("Invalid attribute value type") — so that a put stores
	// what an update does (it REMOVEs a NULL): an item not in the index.
	nullIndexKeys []int
	// readsBack: what the compiled codec decodes from an item this Table
	// encoded from a value is known from the value alone (readBack), for
	// values CopyDecoded copies: the codec encodes and decodes the type, and
	// nothing else changes the item (no conversions, set translations,
	// entity, timestamps, text types).
	readsBack bool
	// valueNames, when not nil, is where a Save's SaveUpdate has the codec
	// write each field's attribute (codec.Named.Names, by the codec's
	// field order): the field's value placeholder (":a3") in the
	// UpdateItem's values, "" for the key attributes and the version, which
	// go to the key map (buildSaveValues). nil when a Save encodes an item
	// first (savesValues).
	valueNames []string
	// keptBit maps the codec's field i to its bit in plan.nonKeyNoVerFs
	// (-1: a key or the version), where valueNames is not nil.
	keptBit []int8
}

// NewTable returns the table called name whose items are T. T's schema is
// parsed (once per type, then cached) and checked: an unknown tag option
// (also in the tags of the structs T holds), a missing or repeated hash key,
// two versions, a non-integer version, a duplicate attribute name, or javabool
// or javadate on a field of another type is an error wrapping
// ErrInvalidSchema that names the struct, the field and the fix. NewTable
// sends no request.
func NewTable[T any](m *Mapper, name string) (*Table[T], error) {
	rt := reflect.TypeFor[T]()
	if m == nil {
		return nil, fmt.Errorf("%w: NewTable[%s] with a nil *Mapper: create one with dynamo.NewMapper(client)", ErrInvalidInput, rt)
	}
	if name == "" {
		return nil, fmt.Errorf("%w: NewTable[%s] with an empty table name", ErrInvalidInput, rt)
	}
	if m.client == nil {
		return nil, fmt.Errorf("%w: NewTable[%s] with a Mapper that has no client: create it with dynamo.NewMapper(client), e.g. dynamodb.NewFromConfig(cfg)", ErrInvalidInput, rt)
	}
	if m.opts.retrySet {
		if err := m.opts.retry.check("NewMapper option WithRetry"); err != nil {
			return nil, fmt.Errorf("%w (NewTable[%s])", err, rt)
		}
	}
	ptr := false
	if rt.Kind() == reflect.Pointer {
		rt, ptr = rt.Elem(), true
	}
	s, err := schemaFor(rt)
	if err != nil {
		return nil, err
	}
	if tok := m.opts.tokenAttr; tok != "" && s.Version >= 0 {
		if i, clash := s.ByName[tok]; clash {
			return nil, &SchemaError{Struct: rt.String(), Field: s.Fields[i].GoName,
				Reason: fmt.Sprintf("attribute %q is where the mapper keeps its write token: rename the attribute or pick another with dynamo.WithWriteTokenAttribute", tok)}
		}
	}
	t := &Table[T]{table: table{m: m, name: name, p: plan.NewPlan(s, m.opts.tokenAttr), ptr: ptr, avEnc: m.enc, avDec: m.dec}}
	c := codec.For(rt)
	if c != nil {
		if m.compiledEnc {
			t.enc = c
		}
		if m.compiledDec {
			t.dec = c
		}
	}
	t.nullIndexKeys = s.IndexOnlyKeys()
	if err := t.textCoders(c); err != nil {
		return nil, err
	}
	t.readsBack = t.enc != nil && t.dec == t.enc && c.Copyable() && len(s.JavaFields) == 0 && len(s.JavaDecFields) == 0 &&
		!s.ConvertsSets() && len(t.textSets) == 0 && len(t.textIndexKeys) == 0 && s.Entity < 0 && !s.HasStamps() &&
		!foldsAny(t.p.TokenAttr, s)
	t.valueNames, t.keptBit = t.savesValues()
	return t, nil
}

// savesValues returns Table.valueNames and keptBit: nil unless the compiled codec
// encodes the type, the type has a version (settling reads the write token,
// never the item: settleSave), its SaveUpdate expressions are cached
// (saveUpdateExpr), nothing changes the encoded item by name afterwards
// (text index keys, javabool and javadate, `set`s, the entity attribute:
// encodeItem, encodeSized), and the codec's fields are exactly the schema's.
func (t *table) savesValues() ([]string, []int8) {
	p, s := t.p, t.p.S
	if t.enc == nil || s.Version < 0 || len(p.NonKeyNoVerFs) > plan.MaxCachedFields || len(t.textIndexKeys) > 0 ||
		len(s.JavaFields) > 0 || s.ConvertsSets() || s.Entity >= 0 {
		return nil, nil
	}
	names := t.enc.Names()
	if len(names) != len(s.Fields) {
		return nil, nil
	}
	bit := make([]int8, len(names))
	for i, name := range names {
		j, ok := s.ByName[name]
		if !ok {
			return nil, nil
		}
		names[i], bit[i] = "", -1
		if j != s.Hash && j != s.Range && j != s.Version {
			names[i] = s.Fields[j].ValuePH
			bit[i] = int8(slices.Index(p.NonKeyNoVerFs, j))
		}
	}
	return names, bit
}

// keptAttrs returns the attributes a SaveUpdate computed from a basis may
// leave unwritten (buildUpdate's kept, bit n: nonKeyNoVerFs[n]): those the
// codec left as the basis held them (sz.kept, by the codec's fields), when
// sz still describes the item (nothing changed it after encoding) and the
// codec's fields are the schema's (keptBit). 0: write them all.
func (t *table) keptAttrs(sz itemSizes) uint64 {
	if !sz.ok || t.keptBit == nil {
		return 0
	}
	var kept uint64
	for m := sz.kept; m != 0; m &= m - 1 {
		if i := bits.TrailingZeros64(m); i < len(t.keptBit) && t.keptBit[i] >= 0 {
			kept |= 1 << t.keptBit[i]
		}
	}
	return kept
}

// foldsAny reports whether attr, an attribute the mapper adds to items,
// matches an attribute of s by case only: decoding would read it into that
// field (attributevalue matches names case-insensitively).
func foldsAny(attr string, s *schema.Schema) bool {
	for i := range s.Fields {
		if strings.EqualFold(s.Fields[i].Name, attr) {
			return true
		}
	}
	return false
}

// readBack sets room, the key's (hotKey.lastRoom: nothing to allocate), to
// a T holding what decoding the item saved is written as gives
// (codec.Struct.CopyDecoded), sharing no slice or map with saved, and
// returns room; nil when that is not known (!readsBack, or a value
// CopyDecoded does not copy). saved is the value a lone Update change
// wrote: the stored item is its encoding, with the version it holds. For a
// pointer T, room points to a new struct. The value's taker clears room
// (inputOf).
func (t *Table[T]) readBack(saved *T, room *T) *T {
	if !t.readsBack {
		return nil
	}
	var zero T
	*room = zero // CopyDecoded sets a zero struct
	if t.ptr {
		src := reflect.ValueOf(*saved)
		if src.IsNil() {
			return nil
		}
		dst := reflect.New(t.p.S.Type)
		if !t.dec.CopyDecodedValue(dst, src) {
			return nil
		}
		*room = dst.Interface().(T)
		return room
	}
	if !t.dec.CopyDecodedValue(reflect.ValueOf(room), reflect.ValueOf(saved)) {
		*room = zero
		return nil
	}
	return room
}

// textCoders chooses the attributevalue encoder and decoder of a type that
// holds text types, which the mapper stores as S (codec.IsText), and refuses
// the types it cannot store so: attributevalue stores text types as text
// only with its UseEncodingMarshalers and UseEncodingUnmarshalers options,
// which also change how it stores time.Time (as text, whatever `unixtime`
// says) and types with only some of the text and binary methods.
func (t *table) textCoders(c *codec.Struct) error {
	s := t.p.S
	if d := codec.LostEmbedded(s.Type); d != "" {
		return &SchemaError{Struct: s.Type.String(), Reason: d}
	}
	r := codec.ReachOf(s.Type)
	if r.Text == nil {
		return nil
	}
	for i := range s.Fields {
		if f := &s.Fields[i]; f.SetKind == 'S' && codec.IsText(schema.DerefType(f.Type.Elem())) {
			t.textSets = append(t.textSets, i)
		}
		if f := &s.Fields[i]; f.Opts.OmitEmpty && (f.GSI != nil || f.LSI != nil) && codec.IsText(schema.DerefType(f.Type)) {
			t.textIndexKeys = append(t.textIndexKeys, i)
		}
	}
	fail := func(reason string) error { return &SchemaError{Struct: s.Type.String(), Reason: reason} }
	if t.enc == nil || t.dec == nil {
		// attributevalue encodes or decodes the whole item.
		why := "NewMapper was given WithEncoderOptions or WithDecoderOptions, so items are encoded by attributevalue"
		if c == nil {
			why = "the mapper hands this type to attributevalue whole (it has an embedded pointer to an unexported struct, or a DynamoDB encoding of its own)"
		}
		if r.Clash != nil {
			return fail(fmt.Sprintf("%s at %q is stored as text (S), but %s, which would store %s at %q otherwise: drop those options, or give %s DynamoDB marshalers (docs/mapper.md, \"Text types\")",
				r.Text, r.TextPath, why, r.Clash, r.ClashPath, r.Text))
		}
		t.avEnc, t.avDec = t.m.encText, t.m.decText
		return nil
	}
	if c.Clash() != "" {
		return fail(c.Clash() + ": the mapper hands that field to attributevalue (arrays, maps with keys other than strings, pointers to pointers, a type that holds itself through a map value): use a slice or a string-keyed map, declare a named type for an unnamed struct wrapping a text type (struct{ netip.Addr }), which attributevalue cannot read back, or give the text type a MarshalDynamoDBAttributeValue and UnmarshalDynamoDBAttributeValue")
	}
	if r.Clash == nil {
		t.avEnc, t.avDec = t.m.encText, t.m.decText
	}
	return nil
}

// Name returns the table's name.
func (t *table) Name() string { return t.name }

// Mapper returns the mapper the table sends its requests through.
func (t *table) Mapper() *Mapper { return t.m }

// Current decodes the item carried by a ConditionError returned by this
// table's writes (Save, Delete, Update; for a transaction, pass
// TxError.Failure(i).Err): the item as it was when the write failed — or, for
// an ErrUnknownOutcome, as read afterwards — without another read. It returns
// an error wrapping ErrNotFound when the item did not exist or is another
// entity type's (as Load does), an error wrapping
// err when err carries no item, and one wrapping ErrInvalidInput for nil.
func (t *Table[T]) Current(err error) (T, error) {
	var zero T
	if err == nil {
		return zero, fmt.Errorf("%w: Current(nil): pass the error of a failed write of this table (a *ConditionError carries the item it found)", ErrInvalidInput)
	}
	ce, ok := asConditionError(err)
	if !ok {
		return zero, fmt.Errorf("dynamo: Current: %w carries no item (only a *ConditionError does)", err)
	}
	if ce.Item == nil {
		return zero, ce.Decode(nil)
	}
	if err := notOurs(t.p.S, t.name, ce.Key, ce.Item); err != nil {
		return zero, err
	}
	return t.decode(ce.Item)
}

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
// (schema.wrongVersion) for every call that reads items.
//
// An error that does not name the attribute it is about (attributevalue's
// "cannot unmarshal string into Go value type int") is given the name of
// the first attribute, in field order, that does not decode on its own.
func (t *Table[T]) decodeError(item map[string]types.AttributeValue, err error) error {
	key := " (item key " + formatKey(t.pickKey(item)) + ")"
	if name := t.failingAttr(item); name != "" && !strings.Contains(err.Error(), strconv.Quote(name)) {
		err = fmt.Errorf("attribute %q: %w", name, err)
	}
	if what, fix, wrong := wrongVersion(t.p.S, item); wrong {
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

// withVersion returns a shallow copy of the struct v with version n, as a T.
func (t *Table[T]) withVersion(v reflect.Value, n int64) T {
	s := t.p.S
	if !t.ptr && v.CanAddr() && (s.Version < 0 || s.Fields[s.Version].Type.Kind() != reflect.Pointer) {
		// T is the struct and the version a plain integer: copy the struct
		// into the result directly, without the two heap copies of
		// reflect.New and Interface (setIntValue keeps out on the stack).
		out := *v.Addr().Interface().(*T)
		if s.Version >= 0 {
			schema.SetIntValue(reflect.ValueOf(&out).Elem().FieldByIndex(s.Fields[s.Version].Index), n)
		}
		return out
	}
	nv := reflect.New(t.p.S.Type)
	nv.Elem().Set(v)
	if t.p.S.Version >= 0 {
		t.p.S.SetVersion(nv.Elem(), n)
	}
	if t.ptr {
		return nv.Interface().(T)
	}
	return nv.Elem().Interface().(T)
}

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
	s := t.p.S
	for n, i := range [2]int{s.Hash, s.Range} {
		if i < 0 {
			continue
		}
		f := &s.Fields[i]
		if f.Opts.AsString || f.Opts.UnixTime || f.Custom {
			return id, false
		}
		fv, ok := schema.FieldValue(v, f)
		if !ok || fv.Kind() != reflect.String || fv.Type() != schema.StringType && schema.NumberLike(fv.Type()) {
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
	s := t.p.S
	key = make(map[string]types.AttributeValue, 2)
	for _, i := range [2]int{s.Hash, s.Range} {
		if i < 0 {
			continue
		}
		f := &s.Fields[i]
		fv, ok := schema.FieldValue(v, f)
		if !ok {
			return nil, true, t.keyError(f, "is inside a nil embedded struct pointer", setIt)
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
	s := t.p.S
	for _, i := range [2]int{s.Hash, s.Range} {
		if i < 0 {
			continue
		}
		f := &s.Fields[i]
		if f.Opts.AsString || f.Opts.UnixTime || f.Custom {
			return false
		}
		fv, ok := schema.FieldValue(v, f)
		if !ok {
			return false
		}
		switch want := key[f.Name].(type) {
		case *types.AttributeValueMemberS:
			if fv.Kind() != reflect.String || fv.Type() != schema.StringType && schema.NumberLike(fv.Type()) || fv.String() != want.Value {
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
	s := t.p.S
	for _, i := range [2]int{s.Hash, s.Range} {
		if i < 0 {
			continue
		}
		f := &s.Fields[i]
		limit := maxPartitionKeyLen
		if i == s.Range {
			limit = maxSortKeyLen
		}
		if what, fix := keyValueFault(key[f.Name], limit, false); what != "" {
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
		for _, i := range [2]int{x.Hash, x.Range} {
			limit := maxPartitionKeyLen
			if i == x.Range {
				limit = maxSortKeyLen
			}
			if i < 0 || i == s.Range || (i == s.Hash && limit == maxPartitionKeyLen) {
				continue // none, or the table's own, checked by checkKey
			}
			f := &s.Fields[i]
			from, at := attrs, f.Name
			if i == s.Hash {
				from = key
			} else if byPlaceholder {
				at = f.ValuePH
			}
			if what, fix := keyValueFault(from[at], limit, true); what != "" {
				role := "hash"
				if i == x.Range {
					role = "range"
				}
				return fmt.Errorf("%w: table %q: index %q %s key %s (field %s.%s) %s: %s",
					ErrInvalidInput, t.name, x.Name, role, f.Name, s.Type, f.GoName, what, fix)
			}
		}
	}
	return nil
}

// keyValueFault says what DynamoDB would refuse in v as a key value of at
// most limit bytes, and how to fix it; "" when v is fine. absentOK: v may be
// absent or NULL (an index key: the item is then left out of the index).
func keyValueFault(v types.AttributeValue, limit int, absentOK bool) (what, fix string) {
	n := 0 // the bytes DynamoDB counts: a string's UTF-8, a binary's
	switch v := v.(type) {
	case nil, *types.AttributeValueMemberNULL:
		if !absentOK {
			return "is unset", setIt
		}
	case *types.AttributeValueMemberS:
		if v.Value == "" {
			if absentOK {
				return "is an empty string, which DynamoDB refuses in an index key", "set it, or tag the field omitempty (or make it a pointer left nil) to leave the item out of the index"
			}
			return "is an empty string, which DynamoDB refuses as a key", setIt
		}
		if !utf8.ValidString(v.Value) {
			// The SDK would send U+FFFD for each bad byte, so that
			// "k\xff" and "k\xfe" would address the same item.
			return fmt.Sprintf("%q is not valid UTF-8", schema.Truncate(v.Value, 40)),
				"the SDK would replace the bad bytes with U+FFFD, so other keys would address the same item; use a []byte key for binary data"
		}
		n = len(v.Value)
	case *types.AttributeValueMemberB:
		if len(v.Value) == 0 {
			if absentOK {
				return "is empty, which DynamoDB refuses in an index key", "set it, or tag the field omitempty (or leave it nil) to leave the item out of the index"
			}
			return "is empty, which DynamoDB refuses as a key", setIt
		}
		n = len(v.Value)
	case *types.AttributeValueMemberN:
	default:
		return fmt.Sprintf("encodes to %T; keys must be strings, numbers or binary", v), "give the field a string, number or []byte type (or a marshaler that returns one)"
	}
	if n > limit {
		return fmt.Sprintf("is %d bytes, over DynamoDB's %d for such a key", n, limit), "shorten it (store long values in another attribute, or a hash of them in the key)"
	}
	return "", ""
}

const setIt = "set it before the call"

// DynamoDB's limits on the size of key values, of tables and indexes.
const (
	maxPartitionKeyLen = 2048
	maxSortKeyLen      = 1024
)

func (t *table) keyError(f *schema.Field, what, fix string) error {
	role := "hash"
	if f.Opts.Range {
		role = "range"
	}
	return fmt.Errorf("%w: table %q: %s key %s (field %s.%s) %s: %s",
		ErrInvalidInput, t.name, role, f.Name, t.p.S.Type, f.GoName, what, fix)
}

// listToSet turns the list attributevalue produced for a `set` field into a
// DynamoDB set of the given kind. An empty list becomes NULL, as
// attributevalue does for empty sets. A nil element is an error: a set
// cannot hold it, and dropping it would store less than the caller passed.
// Duplicates are left for checkEncoded, which drops them.
func listToSet(av types.AttributeValue, kind byte) (types.AttributeValue, error) {
	l, ok := av.(*types.AttributeValueMemberL)
	if !ok {
		return av, nil
	}
	if len(l.Value) == 0 {
		return &types.AttributeValueMemberNULL{Value: true}, nil
	}
	bad := func(i int, e types.AttributeValue) error {
		if _, null := e.(*types.AttributeValueMemberNULL); null {
			return fmt.Errorf("holds a nil element at [%d], which a DynamoDB set cannot hold: remove it, or use a list (drop `set`) to keep nils", i)
		}
		return fmt.Errorf("holds an element at [%d] that encodes to %T, not the set's type", i, e)
	}
	switch kind {
	case 'S':
		ss := make([]string, len(l.Value))
		for i, e := range l.Value {
			s, ok := e.(*types.AttributeValueMemberS)
			if !ok {
				return nil, bad(i, e)
			}
			ss[i] = s.Value
		}
		return &types.AttributeValueMemberSS{Value: ss}, nil
	case 'N':
		ns := make([]string, len(l.Value))
		for i, e := range l.Value {
			n, ok := e.(*types.AttributeValueMemberN)
			if !ok {
				return nil, bad(i, e)
			}
			ns[i] = n.Value
		}
		return &types.AttributeValueMemberNS{Value: ns}, nil
	case 'B':
		bs := make([][]byte, len(l.Value))
		for i, e := range l.Value {
			b, ok := e.(*types.AttributeValueMemberB)
			if !ok || b.Value == nil {
				return nil, bad(i, e)
			}
			bs[i] = b.Value
		}
		return &types.AttributeValueMemberBS{Value: bs}, nil
	}
	return av, nil
}
