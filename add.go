package dynamo

import (
	"bytes"
	"context"
	"encoding"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/codec"
	"github.com/ddbkit/dynamo/internal/schema"
)

// Delta is the list of changes of one Table.Add: numbers added to numeric
// attributes and elements added to or deleted from set attributes. Build it
// with Increment, AddToSet or DeleteFromSet and chain more:
//
//	dynamo.Increment("views", 1).Increment("likes", -1).AddToSet("tags", []string{"go"})
//
// A Delta is a value: each method returns a new one and leaves its receiver
// as it was, so a Delta may be reused and shared.
type Delta struct {
	ops []deltaOp
}

type deltaOp struct {
	kind byte // 'n' number, 'a' add to set, 'd' delete from set
	attr string
	val  any
}

// Increment returns a Delta that adds n to the numeric attribute attr (a
// negative n subtracts). n is an integer or a floating-point number of any
// Go type, or an attributevalue.Number.
func Increment(attr string, n any) Delta { return Delta{}.Increment(attr, n) }

// AddToSet returns a Delta that adds the elements of elems (a slice or
// array of strings, numbers or []byte) to the set attribute attr. Elements
// of a text type (a uuid-style [16]byte, netip.Addr: see the package
// documentation) are added to a set of strings as the text their
// MarshalText returns, which is how a `set` field of a text type stores
// them; strings are added as they are. For such a field, an element whose
// text the field's type does not read back (its UnmarshalText refuses it)
// is refused with ErrInvalidInput before anything is sent. Numbers are
// added as the field's element type stores them (converted to it: a
// float32 field's elements as float32s); one it cannot hold (a fraction
// for an integer type, a value out of its range) is refused with
// ErrInvalidInput before anything is sent, and so is a nil []byte (an
// empty one is an element). An attributevalue.Number or json.Number is a
// number as written, refused with ErrInvalidInput unless DynamoDB stores
// it, and converted to a field of Go numbers as other numbers are. A field
// of bytes ([]byte, [N]byte) or of a text type is stored as one value
// whatever its set option (as attributevalue stores it): its changes are
// refused with ErrInvalidInput.
func AddToSet(attr string, elems any) Delta { return Delta{}.AddToSet(attr, elems) }

// DeleteFromSet returns a Delta that deletes the elements of elems from the
// set attribute attr; elements are taken as AddToSet takes them.
func DeleteFromSet(attr string, elems any) Delta { return Delta{}.DeleteFromSet(attr, elems) }

// Increment adds n to the numeric attribute attr; see the function Increment.
func (d Delta) Increment(attr string, n any) Delta { return d.with('n', attr, n) }

// AddToSet adds elems to the set attribute attr; see the function AddToSet.
func (d Delta) AddToSet(attr string, elems any) Delta { return d.with('a', attr, elems) }

// DeleteFromSet deletes elems from the set attribute attr; see the function
// DeleteFromSet.
func (d Delta) DeleteFromSet(attr string, elems any) Delta { return d.with('d', attr, elems) }

func (d Delta) with(kind byte, attr string, v any) Delta {
	ops := make([]deltaOp, len(d.ops), len(d.ops)+1)
	copy(ops, d.ops)
	return Delta{ops: append(ops, deltaOp{kind: kind, attr: attr, val: v})}
}

// Add applies the changes of delta to the item with key's primary key in
// one UpdateItem, without reading it first, and returns the item as stored
// afterwards. Only key's key fields are used; a missing item is created.
// Concurrent Adds all count and never conflict; a versioned item's version
// advances, so that copies read before conflict on their next write. With
// MustExist a missing item is an error satisfying errors.Is(err,
// ErrNotFound) and nothing is written; a failed If condition is a
// *ConditionError wrapping ErrConditionFailed. A lost answer is settled by
// a read, never by sending the ADD again: when the outcome cannot be told,
// the error satisfies errors.Is(err, ErrUnknownOutcome). ctx bounds the
// requests and the settling read.
//
// The rules — attributes named as stored, NULLs, the guards that keep
// integer and float32 fields loadable, entity types, what is refused
// before sending — are in docs/mapper.md, "Counters without a read".
//
// IAM: dynamodb:UpdateItem, and dynamodb:GetItem to settle a lost answer.
func (t *Table[T]) Add(ctx context.Context, key T, delta Delta, opts ...WriteOption) (T, error) {
	ctx, c := t.m.begin(ctx, "Add", t.name)
	saved, err := t.add(ctx, key, delta, opts)
	return saved, c.end(err)
}

func (t *Table[T]) add(ctx context.Context, key T, delta Delta, opts []WriteOption) (T, error) {
	var zero T
	var wo writeOptions
	if len(opts) > 0 {
		wo = applyWriteOptions(opts)
	}
	if err := wo.refuse(callAdd, t.name); err != nil {
		return zero, err
	}
	_, v, err := t.box(key, "Add")
	if err != nil {
		return zero, err
	}
	k, err := t.keyOf(v)
	if err != nil {
		return zero, err
	}
	if wo.mustExist {
		// Checked in the same request: the item's hash key exists.
		hash := expression.NameNoDotSplit(t.p.s.Fields[t.p.s.Hash].Name)
		wo.conds = append(slices.Clip(wo.conds), expression.AttributeExists(hash))
	}
	wo.behavior = SaveClobber // no version condition: ALL_NEW, failures are ErrConditionFailed
	var blind []string        // what Add changes without reading it (storedNulls)
	for _, op := range delta.ops {
		blind = append(blind, op.attr)
	}
	if t.p.s.Version >= 0 {
		blind = append(blind, t.p.versionAttr[0])
	}
	var once *addOnce[T] // with IdempotencyKey
	if wo.idemSet {
		var done map[string]types.AttributeValue
		if once, done, err = t.newAddOnce(ctx, k, wo.idemKey); err != nil {
			return zero, err
		}
		if done != nil {
			return t.decodeWritten("add to", done)
		}
	}
	for attempt := 1; ; attempt++ {
		r, err := t.buildAdd(k, delta, &wo)
		if err != nil {
			return zero, err
		}
		if once != nil {
			once.write().update(&r.up)
			if err := t.checkCondLen(r.up.cond, nil); err != nil {
				return zero, err
			}
		}
		allNew, err := t.sendSave(ctx, &r, &wo, nil)
		if err != nil && once != nil {
			again, done, ferr := once.failed(ctx, err)
			switch {
			case done != nil:
				return t.decodeWritten("add to", done)
			case ferr != nil:
				return zero, ferr
			case again:
				attempt-- // not a NULL's attempt (storedNulls)
				continue
			}
		}
		if err != nil {
			if ce, ok := asConditionError(err); ok && wo.mustExist && !ce.Exists && !ce.unknown {
				return zero, fmt.Errorf("%w: Add to table %q key %s with MustExist: the key holds no item: %w", ErrNotFound, t.name, formatKey(k), err)
			}
			// A NULL where the request assumed none (or the reverse) failed
			// its condition, certainly not applied: send it again for the
			// item as stored.
			if nulls := storedNulls(err, blind, wo.nulls, t.p.zeroIsNoVersion()); nulls != nil {
				if attempt < maxNullAttempts {
					wo.nulls = nulls
					continue
				}
				nullsKeptChanging(err, attempt)
			}
			return zero, err
		}
		if once != nil {
			once.stored(allNew)
		}
		return t.decodeWritten("add to", allNew)
	}
}

// addBound is the guard of an integer or float32 field's result: the
// stored value must stay within [min, max] after n is added.
type addBound struct {
	f   *schema.Field
	n   string   // the number added, for messages
	lim *big.Int // the value the stored one is compared with
	max bool     // the bound is an upper one
	// fromZero: n itself is in range, so a missing attribute (0) may take it.
	fromZero bool
}

// cond returns the condition that the stored value leaves the result of
// the Add in range, and writes its value to eb.
func (b *addBound) cond(eb *exprBuilder) string {
	f := b.f
	bph := ":x" + f.ValuePH[2:]
	eb.values[bph] = &types.AttributeValueMemberN{Value: b.lim.String()}
	cmp := " <= "
	if !b.max {
		cmp = " >= "
	}
	c := f.NamePH + cmp + bph
	if b.fromZero {
		// A missing attribute counts from 0, which n leaves in range.
		c = "attribute_not_exists(" + f.NamePH + ") OR " + c
	}
	return c
}

// buildAdd checks delta against the schema and builds the UpdateItem of an
// Add of the item with key k. wo.nulls names the changed attributes (and
// the version) that the stored item holds as NULL (a set or counter SavePut
// wrote from a nil value, or another client): a change treats NULL as
// missing, as DynamoDB's ADD and DELETE refuse it. The request assumes that
// those, and only those, hold NULL; when that no longer holds it fails its
// condition (see storedNulls).
func (t *Table[T]) buildAdd(k map[string]types.AttributeValue, delta Delta, wo *writeOptions) (saveRequest, error) {
	p, s := t.p, t.p.s
	if len(delta.ops) == 0 {
		return saveRequest{}, fmt.Errorf("%w: Add on table %q with an empty Delta: name a change, e.g. dynamo.Increment(\"views\", 1)", ErrInvalidInput, t.name)
	}
	uc, err := compileConds(s, wo.conds)
	if err != nil {
		return saveRequest{}, fmt.Errorf("%w: If condition for table %q: %w", ErrInvalidInput, t.name, err)
	}
	eb := exprBuilder{values: map[string]types.AttributeValue{}, names: map[string]string{}, owned: true}
	var conds []string // the changes' conditions, ANDed in this order before the version's
	var bounds []addBound
	seen := map[string]bool{}
	written := make(map[string]types.AttributeValue, len(delta.ops)+3) // for checkIndexKeys
	for _, op := range delta.ops {
		if seen[op.attr] {
			return saveRequest{}, t.badAdd(op.attr, "changed twice in one Delta: combine the changes into one")
		}
		seen[op.attr] = true
		c, b, err := t.addChange(&eb, op, wo.nulls[op.attr], written)
		if err != nil {
			return saveRequest{}, err
		}
		conds = append(conds, c...)
		if b != nil {
			bounds = append(bounds, *b)
		}
	}
	for _, c := range conds {
		eb.and(c, nil)
	}
	// What every write does: the version, the token, the timestamps.
	r := saveRequest{key: k, uc: uc, allNew: true, noResend: true}
	now := t.m.opts.clock.Now()
	if s.Version >= 0 {
		eb.and(p.advanceVersion(&eb, p.firstVersion(now.UnixMilli()), wo.nulls[p.versionAttr[0]]), p.versionNames)
		if p.tokenAttr != "" {
			r.token = newToken()
			p.writeToken(&eb, r.token)
		}
	}
	if err := t.addStamps(&eb, now, written); err != nil {
		return saveRequest{}, err
	}
	// The index keys it writes, as every write checks them: the key (the
	// table's partition key may be an index's sort key, of 1024 bytes), the
	// changes, the entity name. k itself passed checkKey (keyOf).
	if err := t.checkIndexKeys(written, k, false); err != nil {
		return saveRequest{}, err
	}
	r.up = eb.updateParts(uc)
	r.bounds = bounds
	if len(r.up.cond) > schema.MaxExprLen {
		return saveRequest{}, fmt.Errorf("%w: Add on table %q: the condition expression is %d bytes, over DynamoDB's 4 KB limit: shorten the If conditions", ErrInvalidInput, t.name, len(r.up.cond))
	}
	return r, nil
}

// badAdd is the error of a change of attr that Add refuses.
func (t *Table[T]) badAdd(attr, format string, args ...any) error {
	return fmt.Errorf("%w: Add on table %q, attribute %q: %s", ErrInvalidInput, t.name, attr, fmt.Sprintf(format, args...))
}

// addChange checks one change of a Delta against the schema, writes its
// action and values to eb, and returns its conditions and, for an integer
// or float32 field, the bound that keeps the result in the field's range.
// null: the stored item holds the attribute as NULL (see storedNulls). It
// records in written, by attribute name, the value it sends (ADD or SET).
func (t *Table[T]) addChange(eb *exprBuilder, op deltaOp, null bool, written map[string]types.AttributeValue) ([]string, *addBound, error) {
	s := t.p.s
	i, ok := s.ByName[op.attr]
	if !ok {
		for j := range s.Fields {
			if s.Fields[j].GoName == op.attr {
				return nil, nil, t.badAdd(op.attr, "not an attribute of %s; field %s is stored as %q: name the attribute", s.Type, op.attr, s.Fields[j].Name)
			}
		}
		return nil, nil, t.badAdd(op.attr, "not an attribute of %s: Add changes the attributes the type models", s.Type)
	}
	switch i {
	case s.Hash, s.Range:
		return nil, nil, t.badAdd(op.attr, "is a key, which never changes: Add changes other attributes of the item with that key")
	case s.Version:
		return nil, nil, t.badAdd(op.attr, "is the version, which Add advances itself")
	case s.Created, s.Modified:
		return nil, nil, t.badAdd(op.attr, "is a created or modified time, which the mapper sets itself")
	}
	f := &s.Fields[i]
	vph := ":d" + f.ValuePH[2:]
	eb.name(f.NamePH, f.Name)
	var av types.AttributeValue
	var bound *addBound
	var cond string // the bound's condition
	if op.kind == 'n' {
		nav, b, err := addNumber(f, op.val)
		if err != nil {
			return nil, nil, t.badAdd(op.attr, "%v", err)
		}
		av, bound = nav, b
		if b != nil {
			cond = b.cond(eb)
		}
	} else {
		sav, err := setElems(f, op.val)
		if err != nil {
			return nil, nil, t.badAdd(op.attr, "%v", err)
		}
		av = sav
	}
	checked := map[string]types.AttributeValue{f.Name: av}
	if err := s.CheckEncoded(t.name, checked); err != nil { // drops duplicate elements
		return nil, nil, err
	}
	av = checked[f.Name]
	eb.values[vph] = av
	written[f.Name] = av
	if null && (bound == nil || bound.fromZero) {
		// Stored as NULL: the change is made as to a missing attribute
		// (from 0, from the empty set; the bound holds from 0), on
		// condition that the attribute still holds NULL.
		delete(eb.values, ":x"+f.ValuePH[2:]) // the bound's value, unused now
		eb.values[nullTypePH] = nullTypeAV
		if op.kind == 'd' {
			delete(eb.values, vph)
			delete(written, f.Name)
			eb.remove(f.NamePH)
		} else {
			eb.set(f.NamePH, vph)
		}
		return []string{"attribute_type(" + f.NamePH + ", " + nullTypePH + ")"}, bound, nil
	}
	if cond == "" {
		// DynamoDB refuses ADD and DELETE on NULL (ValidationException):
		// a NULL fails the condition instead, with the stored item, and
		// Add sends the change again for it. A bound's comparison is
		// already false on NULL.
		cond = "NOT attribute_type(" + f.NamePH + ", " + nullTypePH + ")"
		eb.values[nullTypePH] = nullTypeAV
	}
	clause := clauseAdd
	if op.kind == 'd' {
		clause = clauseDelete
	}
	eb.addTo(clause, f.NamePH, vph)
	return []string{cond}, bound, nil
}

// addStamps writes to eb what an Add sets besides its changes, as a Save
// would: the type's entity name and the modified and created times (now);
// and to written, by attribute name, the values it sets.
func (t *Table[T]) addStamps(eb *exprBuilder, now time.Time, written map[string]types.AttributeValue) error {
	s := t.p.s
	if s.Entity >= 0 {
		// An item Add creates is of the type's entity (the entity
		// condition keeps others' items out).
		f := &s.Fields[s.Entity]
		eb.set(f.NamePH, f.ValuePH)
		eb.values[f.ValuePH] = &types.AttributeValueMemberS{Value: s.EntityName}
		written[f.Name] = eb.values[f.ValuePH]
		eb.name(f.NamePH, f.Name)
	}
	if !s.HasStamps() {
		return nil
	}
	// Encode the times as a write of the struct would (unixtime, javadate):
	// stamp a zero item and pick them out.
	z := reflect.New(s.Type)
	boxed, _ := t.stamp(z.Interface(), z.Elem(), now)
	item, err := t.encodeUnchecked(boxed)
	if err != nil {
		return err
	}
	for _, i := range [2]int{s.Modified, s.Created} {
		if i < 0 {
			continue
		}
		f := &s.Fields[i]
		if i == s.Created {
			eb.setIfAbsent(f.NamePH, f.ValuePH)
		} else {
			eb.set(f.NamePH, f.ValuePH)
		}
		eb.values[f.ValuePH] = item[f.Name]
		written[f.Name] = item[f.Name]
		eb.name(f.NamePH, f.Name)
	}
	return nil
}

// addNumber checks that n may be added to field f and returns it as a
// DynamoDB number, with the bound that keeps an integer or float32 field's
// result within its Go type, so that the item always loads (nil for
// float64, which holds every number DynamoDB stores).
func addNumber(f *schema.Field, n any) (types.AttributeValue, *addBound, error) {
	ft := schema.DerefType(f.Type)
	switch {
	case codec.IsText(ft):
		return nil, nil, fmt.Errorf("field %s (%s) is stored as text (the string its MarshalText returns), not a number: Increment adds to numbers (N); use Table.Update to change it", f.GoName, f.Type)
	case f.Opts.AsString || f.Custom || f.Opts.JavaBool:
		return nil, nil, fmt.Errorf("field %s is not stored as a number: Increment adds to numbers (N)", f.GoName)
	case ft.Kind() >= reflect.Int && ft.Kind() <= reflect.Float64 && ft.Kind() != reflect.Uintptr:
	default:
		return nil, nil, fmt.Errorf("field %s is of type %s, not a number: Increment adds to integer and floating-point fields", f.GoName, f.Type)
	}
	var text string
	rv := reflect.ValueOf(n)
	switch {
	case n == nil:
		return nil, nil, fmt.Errorf("Increment by nil: pass a number")
	case rv.Type() == reflect.TypeFor[attributevalue.Number]():
		text = rv.String()
		if _, _, _, ok := av.Scan(text); !ok {
			return nil, nil, fmt.Errorf("Increment by %q, which is not a number", text)
		}
	case rv.CanInt():
		text = strconv.FormatInt(rv.Int(), 10)
	case rv.CanUint():
		text = strconv.FormatUint(rv.Uint(), 10)
	case rv.CanFloat():
		x := rv.Float()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, nil, fmt.Errorf("Increment by %v: DynamoDB stores no NaN or infinity", x)
		}
		text = strconv.FormatFloat(x, 'g', -1, 64)
	default:
		return nil, nil, fmt.Errorf("Increment by a %T: pass an integer or a floating-point number", n)
	}
	if p := av.Problem(text); p != "" {
		return nil, nil, fmt.Errorf("Increment by %s: the value %s; pass a number DynamoDB stores (at most %d significant digits)", av.Short(text), p, av.MaxDigits)
	}
	num := &types.AttributeValueMemberN{Value: text}
	lo, hi := intRange(ft)
	if lo == nil {
		return num, nil, nil // float64 holds every number DynamoDB stores
	}
	var by *big.Rat
	b := &addBound{f: f, n: text}
	if ft.Kind() == reflect.Float32 {
		by, _ = av.Rat(text) // Problem passed: math/big builds it
	} else {
		i, ok := av.Int(text)
		if !ok {
			return nil, nil, fmt.Errorf("Increment by %s, not a whole number, of the integer field %s (%s): add whole numbers, or make the field a float64", text, f.GoName, f.Type)
		}
		by, b.n = new(big.Rat).SetInt(i), i.String()
	}
	b.fromZero = by.Cmp(new(big.Rat).SetInt(lo)) >= 0 && by.Cmp(new(big.Rat).SetInt(hi)) <= 0
	if by.Sign() >= 0 {
		b.lim, b.max = limit(new(big.Rat).Sub(new(big.Rat).SetInt(hi), by), false), true
	} else {
		b.lim = limit(new(big.Rat).Sub(new(big.Rat).SetInt(lo), by), true)
	}
	if b.max && b.lim.Cmp(lo) < 0 || !b.max && b.lim.Cmp(hi) > 0 {
		return nil, nil, fmt.Errorf("Increment by %s is beyond what field %s (%s) holds", text, f.GoName, f.Type)
	}
	return num, b, nil
}

// limit returns the bound r of an Add's condition as a number DynamoDB
// takes (an integer of at most 38 significant digits), rounded up for a
// lower bound and down for an upper one, so that the condition never lets
// a result out of range (a float32 counter within a few units of 3.4E38
// stops a little early). Integer fields' bounds are exact.
func limit(r *big.Rat, up bool) *big.Int {
	i := new(big.Int).Div(r.Num(), r.Denom()) // floor (Euclidean, positive divisor)
	if up && !r.IsInt() {
		i.Add(i, big.NewInt(1))
	}
	if d := len(new(big.Int).Abs(i).String()); d > av.MaxDigits {
		q := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d-av.MaxDigits)), nil)
		m := new(big.Int).Mod(i, q)
		i.Sub(i, m) // floor to a multiple of q
		if up && m.Sign() != 0 {
			i.Add(i, q)
		}
	}
	return i
}

// intRange returns the smallest and largest values of integer type t; for
// float32, the largest number that loads into one (float32Max) and its
// negation; nil for float64, which holds every number DynamoDB stores.
func intRange(t reflect.Type) (*big.Int, *big.Int) {
	switch t.Kind() {
	case reflect.Float64:
		return nil, nil
	case reflect.Float32:
		return new(big.Int).Neg(float32Max), new(big.Int).Set(float32Max)
	}
	bits := uint(t.Size() * 8)
	one := big.NewInt(1)
	if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
		return big.NewInt(0), new(big.Int).Sub(new(big.Int).Lsh(one, bits), one)
	}
	hi := new(big.Int).Sub(new(big.Int).Lsh(one, bits-1), one)
	return new(big.Int).Neg(new(big.Int).Add(hi, one)), hi
}

// float32Max is the largest number that loads into a float32: a stored
// number is parsed as a float64 (rounded to the nearest, ties to even) and
// refused when that is beyond math.MaxFloat32, so every number up to
// halfway to the float64 after math.MaxFloat32 loads — as math.MaxFloat32.
// The bound is not math.MaxFloat32 itself: Go writes a float32 counter at
// its maximum as 3.4028234663852886e+38, its shortest float64 form, which
// is a little above it.
var float32Max = func() *big.Int {
	lo, _ := new(big.Float).SetFloat64(math.MaxFloat32).Int(nil)
	hi, _ := new(big.Float).SetFloat64(math.Nextafter(math.MaxFloat32, math.Inf(1))).Int(nil)
	mid := lo.Add(lo, hi)
	return mid.Rsh(mid, 1) // even: both are multiples of 2^75
}()

// setElems checks that elems may be added to or deleted from the set field
// f and returns them as a DynamoDB set of the field's kind.
func setElems(f *schema.Field, elems any) (types.AttributeValue, error) {
	kind := f.StoredSetKind()
	ft := schema.DerefType(f.Type)
	if kind == 0 && schema.OneValueWhateverSet(ft) && (f.SetKind != 0 || f.Opts.StringSet || f.Opts.NumberSet || f.Opts.BinarySet) {
		as := "one binary value (B)"
		if codec.IsText(ft) {
			as = "its text, one string (S)"
		}
		return nil, fmt.Errorf("field %s (%s) is stored as %s whatever its set option, as attributevalue stores it, not as a set: make it a slice of numbers, strings or [][]byte to add elements, or use Table.Update to change it", f.GoName, f.Type, as)
	}
	var textElem reflect.Type // the field's elements are of this text type, stored as their text
	if (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array) && !codec.IsText(ft) && codec.IsText(schema.DerefType(ft.Elem())) &&
		(f.SetKind != 0 || f.Opts.StringSet) {
		kind, textElem = 'S', schema.DerefType(ft.Elem())
	}
	if kind == 0 {
		return nil, fmt.Errorf("field %s (%s) is not stored as a set: tag it `set` (or stringset, numberset, binaryset) to add elements, or use Table.Update to change a list", f.GoName, f.Type)
	}
	what := map[byte]string{'S': "strings", 'N': "numbers", 'B': "[]byte values"}[kind]
	if textElem != nil {
		what = fmt.Sprintf("%s values (stored as their text) or strings", textElem)
	}
	rv := reflect.ValueOf(elems)
	if elems == nil || rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array || rv.Type() == schema.ByteSliceType && kind != 'B' {
		return nil, fmt.Errorf("elements given as %T: pass a slice of %s", elems, what)
	}
	if codec.IsText(rv.Type()) { // one value, such as a [16]byte UUID
		return nil, fmt.Errorf("elements given as one %s: pass a slice, []%s{v}", rv.Type(), rv.Type())
	}
	if rv.Type() == schema.ByteSliceType { // one binary value
		return nil, fmt.Errorf("elements given as one []byte: pass a [][]byte")
	}
	if rv.Len() == 0 {
		return nil, fmt.Errorf("no elements: DynamoDB has no empty sets; pass at least one")
	}
	numElem := numberElem(f, kind)
	out := make([]string, 0, rv.Len())
	var bs [][]byte
	for j := 0; j < rv.Len(); j++ {
		e := rv.Index(j)
		for e.Kind() == reflect.Pointer || e.Kind() == reflect.Interface {
			if e.IsNil() {
				return nil, fmt.Errorf("element [%d] is nil, which a set cannot hold", j)
			}
			e = e.Elem()
		}
		switch {
		case kind == 'S' && codec.IsText(e.Type()):
			text, err := schema.MarshalText(e)
			if err != nil {
				return nil, fmt.Errorf("element [%d]: %w", j, err)
			}
			if err := textHeld(textElem, text); err != nil {
				return nil, fmt.Errorf("element [%d] (a %s) %w", j, e.Type(), err)
			}
			out = append(out, text)
		case kind == 'S' && e.Kind() == reflect.String:
			if err := textHeld(textElem, e.String()); err != nil {
				return nil, fmt.Errorf("element [%d] %w", j, err)
			}
			out = append(out, e.String())
		case kind == 'N' && (e.CanInt() || e.CanUint() || e.CanFloat() || schema.NumberLike(e.Type())):
			if schema.NumberLike(e.Type()) { // attributevalue.Number, json.Number: a number as text
				text := e.String()
				if p := av.Problem(text); p != "" {
					return nil, fmt.Errorf("element [%d] (a %s) %s: pass numbers DynamoDB stores (at most %d significant digits)", j, e.Type(), p, av.MaxDigits)
				}
				if numElem == nil { // the field's elements are numbers as text too
					out = append(out, text)
					continue
				}
				e = goNumber(text) // converted to the field's Go numbers as one is
			}
			text, err := setNumber(e, numElem)
			if err != nil {
				held := what
				if numElem != nil {
					held = numElem.String()
				}
				return nil, fmt.Errorf("element [%d] %w: field %s is a set of %s; pass elements it holds", j, err, f.GoName, held)
			}
			out = append(out, text)
		case kind == 'B' && e.Kind() == reflect.Slice && e.Type().Elem().Kind() == reflect.Uint8:
			if e.IsNil() {
				return nil, fmt.Errorf("element [%d] is nil, which a set cannot hold (an empty []byte{} is an element)", j)
			}
			bs = append(bs, bytes.Clone(e.Bytes())) // an empty element stays empty, not nil (no element)
		default:
			return nil, fmt.Errorf("element [%d] is a %s, but field %s is a set of %s", j, e.Type(), f.GoName, what)
		}
	}
	switch kind {
	case 'S':
		return &types.AttributeValueMemberSS{Value: out}, nil
	case 'N':
		return &types.AttributeValueMemberNS{Value: out}, nil
	}
	return &types.AttributeValueMemberBS{Value: bs}, nil
}

// goNumber returns text, a number DynamoDB stores (av.Problem passed), as
// a Go number: an int64 or a uint64 when it is one written as an integer,
// else the nearest float64.
func goNumber(text string) reflect.Value {
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		return reflect.ValueOf(i)
	}
	if u, err := strconv.ParseUint(text, 10, 64); err == nil {
		return reflect.ValueOf(u)
	}
	x, _ := strconv.ParseFloat(text, 64) // within ±1E126: finite
	return reflect.ValueOf(x)
}

// numberElem returns the element type of f, a field stored as a set of
// the kind given, when it is a Go number (else nil): an element is stored
// as the field would store it (converted to that type), and one it cannot
// hold is refused — stored, it would make the item fail to load.
func numberElem(f *schema.Field, kind byte) reflect.Type {
	if ft := schema.DerefType(f.Type); kind == 'N' && (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array) {
		if et := schema.DerefType(ft.Elem()); et.Kind() >= reflect.Int && et.Kind() <= reflect.Float64 && et.Kind() != reflect.Uintptr {
			return et
		}
	}
	return nil
}

// textHeld returns an error unless the set of elements of the text type
// elem can hold text: elem's UnmarshalText takes it (stored, text that it
// refuses would make the item fail to load). Nil when elem is nil (the
// field's elements are strings).
func textHeld(elem reflect.Type, text string) error {
	if elem == nil {
		return nil
	}
	if err := reflect.New(elem).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(text)); err != nil {
		return fmt.Errorf("%.40q is no %s: %s.UnmarshalText: %v; pass values of the field's type (or their text)", text, elem, elem, err)
	}
	return nil
}

// setNumber returns the number e (of an integer or float kind) as a set
// of elements of type elem stores it: converted to elem, as assigning it to
// the field would (a float32 is written as its shortest float32 text: the
// value the codec writes for the field, which DynamoDB compares by value),
// or an error saying why elem cannot hold it.
// With elem nil (the field's elements are not Go numbers) e is written as
// it is.
func setNumber(e reflect.Value, elem reflect.Type) (string, error) {
	if e.CanFloat() {
		x := e.Float()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", fmt.Errorf("is %v: DynamoDB stores no NaN or infinity", x)
		}
	}
	if elem == nil {
		elem = e.Type()
	}
	z := reflect.New(elem).Elem()
	switch {
	case z.CanFloat():
		bits := elem.Bits()
		var x float64
		switch {
		case e.CanFloat():
			x = e.Float()
		case e.CanInt():
			x = float64(e.Int())
		default:
			x = float64(e.Uint())
		}
		if z.OverflowFloat(x) {
			return "", fmt.Errorf("is %v, beyond what a %s holds", e, elem)
		}
		if bits == 32 {
			x = float64(float32(x))
		}
		return strconv.FormatFloat(x, 'g', -1, bits), nil
	case z.CanInt():
		return setInt(e, elem, z)
	default: // unsigned
		return setUint(e, elem, z)
	}
}

// setInt is setNumber for an element type of a signed integer kind (z, its
// zero value).
func setInt(e reflect.Value, elem reflect.Type, z reflect.Value) (string, error) {
	var i int64
	switch {
	case e.CanInt():
		i = e.Int()
	case e.CanUint():
		if e.Uint() > math.MaxInt64 {
			return "", fmt.Errorf("is %v, beyond what a %s holds", e, elem)
		}
		i = int64(e.Uint())
	default:
		x := e.Float()
		if x != math.Trunc(x) {
			return "", fmt.Errorf("is %v, not a whole number", e)
		}
		if x < -(1<<63) || x >= 1<<63 {
			return "", fmt.Errorf("is %v, beyond what a %s holds", e, elem)
		}
		i = int64(x)
	}
	if z.OverflowInt(i) {
		return "", fmt.Errorf("is %v, beyond what a %s holds", e, elem)
	}
	return strconv.FormatInt(i, 10), nil
}

// setUint is setNumber for an element type of an unsigned integer kind (z,
// its zero value).
func setUint(e reflect.Value, elem reflect.Type, z reflect.Value) (string, error) {
	var u uint64
	switch {
	case e.CanUint():
		u = e.Uint()
	case e.CanInt():
		if e.Int() < 0 {
			return "", fmt.Errorf("is %v, below zero", e)
		}
		u = uint64(e.Int())
	default:
		x := e.Float()
		if x != math.Trunc(x) {
			return "", fmt.Errorf("is %v, not a whole number", e)
		}
		if x < 0 {
			return "", fmt.Errorf("is %v, below zero", e)
		}
		if x >= 1<<64 {
			return "", fmt.Errorf("is %v, beyond what a %s holds", e, elem)
		}
		u = uint64(x)
	}
	if z.OverflowUint(u) {
		return "", fmt.Errorf("is %v, beyond what a %s holds", e, elem)
	}
	return strconv.FormatUint(u, 10), nil
}

// boundsFailure explains a failed Add whose stored item old leaves no room
// for one of the bounded changes (integer and float32 fields); "" when none
// is out of room.
func boundsFailure(bounds []addBound, old map[string]types.AttributeValue) string {
	for _, b := range bounds {
		text := "missing (0)"
		cur := new(big.Rat)
		if n, ok := old[b.f.Name].(*types.AttributeValueMemberN); ok {
			r, ok := av.Rat(n.Value)
			if !ok {
				continue
			}
			cur, text = r, n.Value
		} else if b.fromZero {
			continue
		}
		if c := cur.Cmp(new(big.Rat).SetInt(b.lim)); b.max && c <= 0 || !b.max && c >= 0 {
			continue
		}
		return fmt.Sprintf("%s is %s, and adding %s would pass what field %s (%s) holds: widen the field", b.f.Name, text, b.n, b.f.GoName, b.f.Type)
	}
	return ""
}
