package dynamo

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/plan"
	"github.com/ddbkit/dynamo/internal/refusal"
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

// AddToSet returns a Delta that adds the elements of elems (a slice or array
// of strings, numbers or []byte) to the set attribute attr. Elements are
// converted as the field stores them (text types as their MarshalText text,
// numbers as the field's element type); one the field could not hold or read
// back, a nil []byte, or a change to a field stored as one value is refused
// with ErrInvalidInput before anything is sent. Rules: docs/calls.md#addtoset.
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

// Add applies delta to the item with key's primary key in one UpdateItem,
// without reading it first, and returns the item as stored afterwards; a
// missing item is created (with MustExist: ErrNotFound). Concurrent Adds all
// count and never conflict; a versioned item's version advances. A lost
// answer is settled by a read, never by resending the ADD (ErrUnknownOutcome
// when it cannot be told). Rules: docs/mapper.md, "Counters without a read".
//
// IAM: dynamodb:UpdateItem, and dynamodb:GetItem to settle a lost answer.
func (t *Table[T]) Add(ctx context.Context, key T, delta Delta, opts ...WriteOption) (T, error) {
	ctx, c := t.m.begin(ctx, "Add", t.name)
	saved, err := t.add(ctx, key, delta, opts)
	return saved, c.end(err)
}

func (t *Table[T]) add(ctx context.Context, key T, delta Delta, opts []WriteOption) (T, error) {
	var zero T
	sc := saveCall{wo: applyWriteOptions(opts)} // with Add's own condition and behaviour
	wo := &sc.wo
	if err := wo.refuse(refusal.Add, t.name); err != nil {
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
		hash := expression.NameNoDotSplit(t.p.S.Fields[t.p.S.Hash].Name)
		wo.conds = append(slices.Clip(wo.conds), expression.AttributeExists(hash))
	}
	wo.behavior = SaveClobber // no version condition: ALL_NEW, failures are ErrConditionFailed
	blind := t.addBlind(delta)
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
		r, err := t.buildAdd(k, delta, &sc)
		if err != nil {
			return zero, err
		}
		if once != nil {
			once.write().Update(&r.up)
			if err := t.checkCondLen(r.up.Cond, nil); err != nil {
				return zero, err
			}
		}
		allNew, err := t.sendSave(ctx, &r, wo, nil)
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
			if nulls := storedNulls(err, blind, sc.nulls, t.p.ZeroIsNoVersion()); nulls != nil {
				if attempt < maxNullAttempts {
					sc.nulls = nulls
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

// addBlind returns the attributes an Add of delta changes without reading
// them: its own and the version (see storedNulls).
func (t *table) addBlind(delta Delta) []string {
	var blind []string
	for _, op := range delta.ops {
		blind = append(blind, op.attr)
	}
	if t.p.S.Version >= 0 {
		blind = append(blind, t.p.VersionAttr[0])
	}
	return blind
}

// buildAdd checks delta against the schema and builds the UpdateItem of an
// Add of the item with key k. sc.nulls names the changed attributes (and
// the version) that the stored item holds as NULL (a set or counter SavePut
// wrote from a nil value, or another client): a change treats NULL as
// missing, as DynamoDB's ADD and DELETE refuse it. The request assumes that
// those, and only those, hold NULL; when that no longer holds it fails its
// condition (see storedNulls).
func (t *table) buildAdd(k map[string]types.AttributeValue, delta Delta, sc *saveCall) (saveRequest, error) {
	p, s := t.p, t.p.S
	if len(delta.ops) == 0 {
		return saveRequest{}, fmt.Errorf("%w: Add on table %q with an empty Delta: name a change, e.g. dynamo.Increment(\"views\", 1)", ErrInvalidInput, t.name)
	}
	uc, err := plan.CompileConds(s, sc.wo.conds)
	if err != nil {
		return saveRequest{}, fmt.Errorf("%w: If condition for table %q: %w", ErrInvalidInput, t.name, err)
	}
	eb := plan.ExprBuilder{Values: map[string]types.AttributeValue{}, Names: map[string]string{}, Owned: true}
	var conds []string // the changes' conditions, ANDed in this order before the version's
	var bounds []plan.AddBound
	seen := map[string]bool{}
	written := make(map[string]types.AttributeValue, len(delta.ops)+3) // for checkIndexKeys
	for _, op := range delta.ops {
		if seen[op.attr] {
			return saveRequest{}, t.badAdd(op.attr, "changed twice in one Delta: combine the changes into one")
		}
		seen[op.attr] = true
		c, b, err := t.addChange(&eb, op, sc.nulls[op.attr], written)
		if err != nil {
			return saveRequest{}, err
		}
		conds = append(conds, c...)
		if b != nil {
			bounds = append(bounds, *b)
		}
	}
	for _, c := range conds {
		eb.And(c, nil)
	}
	// What every write does: the version, the token, the timestamps.
	r := saveRequest{key: k, uc: uc, allNew: true, noResend: true}
	now := t.m.opts.clock.Now()
	if s.Version >= 0 {
		eb.And(p.AdvanceVersion(&eb, p.FirstVersion(now.UnixMilli()), sc.nulls[p.VersionAttr[0]]), p.VersionNames)
		if p.TokenAttr != "" {
			r.token = newToken()
			p.WriteToken(&eb, r.token)
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
	r.up = eb.UpdateParts(uc)
	r.bounds = bounds
	if len(r.up.Cond) > schema.MaxExprLen {
		return saveRequest{}, fmt.Errorf("%w: Add on table %q: the condition expression is %d bytes, over DynamoDB's 4 KB limit: shorten the If conditions", ErrInvalidInput, t.name, len(r.up.Cond))
	}
	return r, nil
}

// badAdd is the error of a change of attr that Add refuses.
func (t *table) badAdd(attr, format string, args ...any) error {
	return fmt.Errorf("%w: Add on table %q, attribute %q: %s", ErrInvalidInput, t.name, attr, fmt.Sprintf(format, args...))
}

// addChange checks one change of a Delta against the schema, writes its
// action and values to eb, and returns its conditions and, for an integer
// or float32 field, the bound that keeps the result in the field's range.
// null: the stored item holds the attribute as NULL (see storedNulls). It
// records in written, by attribute name, the value it sends (ADD or SET).
func (t *table) addChange(eb *plan.ExprBuilder, op deltaOp, null bool, written map[string]types.AttributeValue) ([]string, *plan.AddBound, error) {
	s := t.p.S
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
	eb.Name(f.NamePH, f.Name)
	var av types.AttributeValue
	var bound *plan.AddBound
	var cond string // the bound's condition
	if op.kind == 'n' {
		nav, b, err := plan.AddNumber(f, op.val)
		if err != nil {
			return nil, nil, t.badAdd(op.attr, "%v", err)
		}
		av, bound = nav, b
		if b != nil {
			cond = b.Cond(eb)
		}
	} else {
		sav, err := plan.SetElems(f, op.val)
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
	eb.Values[vph] = av
	written[f.Name] = av
	if null && (bound == nil || bound.FromZero) {
		// Stored as NULL: the change is made as to a missing attribute
		// (from 0, from the empty set; the bound holds from 0), on
		// condition that the attribute still holds NULL.
		delete(eb.Values, ":x"+f.ValuePH[2:]) // the bound's value, unused now
		eb.Values[plan.NullTypePH] = plan.NullTypeAV
		if op.kind == 'd' {
			delete(eb.Values, vph)
			delete(written, f.Name)
			eb.Remove(f.NamePH)
		} else {
			eb.Set(f.NamePH, vph)
		}
		return []string{"attribute_type(" + f.NamePH + ", " + plan.NullTypePH + ")"}, bound, nil
	}
	if cond == "" {
		// DynamoDB refuses ADD and DELETE on NULL (ValidationException):
		// a NULL fails the condition instead, with the stored item, and
		// Add sends the change again for it. A bound's comparison is
		// already false on NULL.
		cond = "NOT attribute_type(" + f.NamePH + ", " + plan.NullTypePH + ")"
		eb.Values[plan.NullTypePH] = plan.NullTypeAV
	}
	clause := plan.ClauseAdd
	if op.kind == 'd' {
		clause = plan.ClauseDelete
	}
	eb.AddTo(clause, f.NamePH, vph)
	return []string{cond}, bound, nil
}

// addStamps writes to eb what an Add sets besides its changes, as a Save
// would: the type's entity name and the modified and created times (now);
// and to written, by attribute name, the values it sets.
func (t *table) addStamps(eb *plan.ExprBuilder, now time.Time, written map[string]types.AttributeValue) error {
	s := t.p.S
	if s.Entity >= 0 {
		// An item Add creates is of the type's entity (the entity
		// condition keeps others' items out).
		f := &s.Fields[s.Entity]
		eb.Set(f.NamePH, f.ValuePH)
		eb.Values[f.ValuePH] = &types.AttributeValueMemberS{Value: s.EntityName}
		written[f.Name] = eb.Values[f.ValuePH]
		eb.Name(f.NamePH, f.Name)
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
			eb.SetIfAbsent(f.NamePH, f.ValuePH)
		} else {
			eb.Set(f.NamePH, f.ValuePH)
		}
		eb.Values[f.ValuePH] = item[f.Name]
		written[f.Name] = item[f.Name]
		eb.Name(f.NamePH, f.Name)
	}
	return nil
}
