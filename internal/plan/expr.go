package plan

import (
	"maps"
	"math/bits"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/av"
)

// UpdateParts is the expression set of one UpdateItem.
type UpdateParts struct {
	Update string
	Cond   string
	Names  map[string]string
	Values map[string]types.AttributeValue
}

// The clauses of an UpdateExpression, in the order they are written.
const (
	clauseSet = iota
	clauseRemove
	ClauseAdd
	ClauseDelete
)

var clauseVerbs = [...]string{"SET ", "REMOVE ", "ADD ", "DELETE "}

// ExprBuilder assembles the expressions of one write: the actions of an
// UpdateExpression (none for a PutItem's or DeleteItem's condition), the
// ConditionExpression, and the names and values they use. It writes every
// separator and joins every condition, so that its users only name the
// actions. names may start as one of the plan's shared maps: the builder
// copies it before its first change (those maps are read by many goroutines
// at once). values is the builder's own.
type ExprBuilder struct {
	p       *Plan              // the type's plan, for its precomputed fragments (nil: none)
	clauses [4]strings.Builder // indexed by clauseSet…clauseDelete
	// fixedUpdate, when not "", is the UpdateExpression, precomputed
	// (plan.fullSet): clauses are not written.
	fixedUpdate string
	cond        string
	Names       map[string]string
	Owned       bool // names is the builder's own map
	Values      map[string]types.AttributeValue
}

// action starts an action of the clause c (clauseSet…) and returns the
// clause to write it to.
func (b *ExprBuilder) action(c int) *strings.Builder {
	sb := &b.clauses[c]
	if sb.Len() > 0 {
		sb.WriteString(", ")
	}
	return sb
}

// Set writes "ph = vph" to the SET clause.
func (b *ExprBuilder) Set(ph, vph string) {
	sb := b.action(clauseSet)
	sb.WriteString(ph)
	sb.WriteString(" = ")
	sb.WriteString(vph)
}

// SetIfAbsent writes "ph = if_not_exists(ph, vph)" to the SET clause: vph
// is stored only where the item holds no ph (a creation time).
func (b *ExprBuilder) SetIfAbsent(ph, vph string) {
	b.action(clauseSet).WriteString(ph + " = if_not_exists(" + ph + ", " + vph + ")")
}

// Remove writes ph to the REMOVE clause.
func (b *ExprBuilder) Remove(ph string) {
	b.action(clauseRemove).WriteString(ph)
}

// AddTo writes "ph vph" to the ADD clause (clause clauseAdd), or to the
// DELETE clause (clauseDelete).
func (b *ExprBuilder) AddTo(clause int, ph, vph string) {
	sb := b.action(clause)
	sb.WriteString(ph)
	sb.WriteByte(' ')
	sb.WriteString(vph)
}

// Name maps the placeholder ph to the attribute attr.
func (b *ExprBuilder) Name(ph, attr string) {
	if !b.Owned {
		m := make(map[string]string, len(b.Names)+1)
		maps.Copy(m, b.Names)
		b.Names, b.Owned = m, true
	}
	b.Names[ph] = attr
}

// And ANDs c (may be "") to the condition; names, when not empty, are the
// names it uses.
func (b *ExprBuilder) And(c string, names map[string]string) {
	if c == "" {
		return
	}
	if b.p != nil {
		b.cond = b.p.joinConds(b.cond, c)
	} else {
		b.cond = JoinConds(b.cond, c)
	}
	switch {
	case len(names) == 0 || hasNames(b.Names, names):
	case b.Owned:
		maps.Copy(b.Names, names)
	default:
		b.Names, b.Owned = withNames(b.Names, names), true
	}
}

// hasNames reports whether base holds every name of extra already (the
// plan's names of a whole item hold the write token's, say), so that
// nothing needs copying.
func hasNames(base, extra map[string]string) bool {
	for k, v := range extra {
		if w, ok := base[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// update returns the UpdateExpression: the clauses that have actions, in
// the order SET, REMOVE, ADD, DELETE.
func (b *ExprBuilder) update() string {
	if b.fixedUpdate != "" {
		return b.fixedUpdate
	}
	n := 0
	for i := range b.clauses {
		n += b.clauses[i].Len() + len(clauseVerbs[i]) + 1
	}
	var u strings.Builder
	u.Grow(n)
	for i := range b.clauses {
		sb := &b.clauses[i]
		if sb.Len() == 0 {
			continue
		}
		if u.Len() > 0 {
			u.WriteByte(' ')
		}
		u.WriteString(clauseVerbs[i])
		u.WriteString(sb.String())
	}
	return u.String()
}

// finish ANDs the caller's If conditions (nil: none) and returns the
// condition, the names and the values (nil when empty) of the write.
func (b *ExprBuilder) finish(uc *UserCond) (string, map[string]string, map[string]types.AttributeValue) {
	if uc != nil {
		b.cond = JoinConds(b.cond, uc.Expr)
	}
	return b.cond, mergeNames(b.Names, uc), addValues(b.Values, uc)
}

// UpdateParts returns the expressions of an UpdateItem, ANDing the
// caller's If conditions.
func (b *ExprBuilder) UpdateParts(uc *UserCond) UpdateParts {
	u := b.update()
	cond, names, values := b.finish(uc)
	return UpdateParts{Update: u, Cond: cond, Names: names, Values: values}
}

// BuildUpdate builds the UpdateItem expressions of a save. item is the
// encoded item (keys included; the version attribute is ignored, newVersion
// is written instead); SaveClobber advances the stored version instead
// (newVersion is its first one). nulls names the attributes a SaveClobber
// or SaveAppendSet assumes the stored item holds as NULL (storedNulls). bs,
// when not nil, pins the
// write to the stored state it was computed from (basisCond). from, when
// not nil, is the item as stored that a SaveUpdate writes the changes from
// (ChangedFrom): only the attributes whose value differs from it are
// written (unchanged reports which). kept (bit n for nonKeyNoVerFs[n])
// names attributes a SaveUpdate with a basis leaves unwritten, because the
// item holds them as bs's item does (Table.keptAttrs): bs's condition pins
// the stored item to that state, so writing them again changes nothing.
func (p *Plan) BuildUpdate(b SaveBehavior, item map[string]types.AttributeValue, held, newVersion int64, nulls map[string]bool, token []byte, uc *UserCond, bs *Basis, from map[string]types.AttributeValue, kept uint64) UpdateParts {
	s := p.S
	// cached: the UpdateExpression of a SaveUpdate depends only on which
	// attributes the item lacks or holds as NULL (missing, bit n for
	// NonKeyNoVerFs[n]) and which it leaves as they are (kept): it is the
	// plan's (saveUpdateExpr), and no action is written here.
	cached := b == SaveUpdate && len(p.NonKeyNoVerFs) <= MaxCachedFields && from == nil
	if !cached || bs == nil || bs.Item == nil {
		kept = 0
	}
	eb := ExprBuilder{p: p, Values: make(map[string]types.AttributeValue, p.updateValuesRoom(item, uc, bs, kept))}
	values := eb.Values
	if !cached {
		eb.clauses[clauseSet].Grow(len(item) * 12)
	}
	var missing uint64
	var removed []int // with from: the attributes removed, named after updateNames
	allUsed := true
	for n, i := range p.NonKeyNoVerFs {
		if kept&(1<<n) != 0 {
			allUsed = false
			continue
		}
		f := &s.Fields[i]
		av, ok := item[f.Name]
		if ok {
			if _, null := av.(*types.AttributeValueMemberNULL); null {
				ok = false
			}
		}
		switch {
		case from != nil && unchanged(av, ok, from[f.Name]):
			allUsed = false
		case !ok && (b == SaveUpdateSkipNulls || b == SaveAppendSet):
			allUsed = false
		case !ok && cached:
			missing |= 1 << n
		case !ok:
			eb.Remove(f.NamePH)
			if from != nil {
				removed = append(removed, i)
			}
		case b == SaveAppendSet && isSet(av):
			// DynamoDB refuses ADD on NULL: a set stored as NULL is
			// replaced, one that is not is added to (storedNulls).
			values[f.ValuePH] = av
			values[NullTypePH] = NullTypeAV
			if nulls[f.Name] {
				eb.Set(f.NamePH, f.ValuePH)
				eb.And("attribute_type("+f.NamePH+", "+NullTypePH+")", nil)
			} else {
				eb.AddTo(ClauseAdd, f.NamePH, f.ValuePH)
				eb.And("NOT attribute_type("+f.NamePH+", "+NullTypePH+")", nil)
			}
		default:
			if !cached {
				p.setAction(&eb, i)
			}
			values[f.ValuePH] = av
		}
	}
	if s.Version >= 0 {
		p.versionActions(&eb, b, held, newVersion, nulls, token, cached, bs)
	}
	if cached {
		eb.fixedUpdate, eb.Names = p.saveUpdateExpr(missing, kept)
	} else {
		p.updateNames(&eb, allUsed)
	}
	if !allUsed {
		for _, i := range removed {
			eb.Names[s.Fields[i].NamePH] = s.Fields[i].Name // updateNames named the values' only
		}
	}
	eb.And(p.basisCond(bs, values))
	if from != nil && bs == nil {
		eb.And(p.incarnationCond(from, values))
	}
	return eb.UpdateParts(uc)
}

// BuildUpdateValues is buildUpdate of a SaveUpdate without a basis or an
// item read, whose item is encoded into values, the UpdateItem's values,
// under the fields' value placeholders (Table.valueNames; the key and the
// version left out): the attributes that are NULL are taken out of values
// and removed, as buildUpdate removes them, and the version's and the write
// token's values are added. The UpdateExpression is the plan's (cached).
func (p *Plan) BuildUpdateValues(values map[string]types.AttributeValue, held, newVersion int64, token []byte, uc *UserCond) UpdateParts {
	eb := ExprBuilder{p: p, Values: values}
	var missing uint64
	for n, i := range p.NonKeyNoVerFs {
		vph := p.S.Fields[i].ValuePH
		switch av, ok := values[vph]; {
		case !ok:
			missing |= 1 << n
		case isNull(av):
			delete(values, vph)
			missing |= 1 << n
		}
	}
	p.versionActions(&eb, SaveUpdate, held, newVersion, nil, token, true, nil)
	eb.fixedUpdate, eb.Names = p.saveUpdateExpr(missing, 0)
	return eb.UpdateParts(uc)
}

// versionActions adds to eb what an update of behaviour b does to the
// version and the write token: SaveClobber advances the stored version
// (advanceVersion); the others set newVersion under the condition that the
// stored one is held. cached: the UpdateExpression is the plan's, only the
// values are added. bs is the write's basis (nil: none).
func (p *Plan) versionActions(eb *ExprBuilder, b SaveBehavior, held, newVersion int64, nulls map[string]bool, token []byte, cached bool, bs *Basis) {
	var tok *types.AttributeValueMemberB
	if b == SaveClobber {
		eb.And(p.AdvanceVersion(eb, newVersion, nulls[p.VersionAttr[0]]), nil)
	} else {
		if !cached {
			eb.Set(p.versionPH, NewVersionPH)
		}
		eb.Values[NewVersionPH], tok = p.VersionAndToken(newVersion, token)
		eb.And(p.versionCond(held, bs, eb.Values), nil)
	}
	if p.TokenAttr == "" {
		return
	}
	if !cached {
		eb.Set(TokenNamePH, TokenValuePH)
	}
	if tok == nil {
		tok = &types.AttributeValueMemberB{Value: token}
	}
	eb.Values[TokenValuePH] = tok
}

// VersionAndToken returns version v as an N and, when the type has a write
// token, token as a B, the two allocated as one: a write stores both, and
// the item the Table remembers holds both (save.go shares them), so they
// live and go together. One allocation fewer per Update and per put
// (issue 40).
func (p *Plan) VersionAndToken(v int64, token []byte) (*types.AttributeValueMemberN, *types.AttributeValueMemberB) {
	if p.TokenAttr == "" {
		return NumberAV(v), nil
	}
	both := &struct {
		n types.AttributeValueMemberN
		b types.AttributeValueMemberB
	}{types.AttributeValueMemberN{Value: Itoa(v)}, types.AttributeValueMemberB{Value: token}}
	return &both.n, &both.b
}

// unchanged reports whether an attribute a write would store as v (ok
// false: remove it, as for a NULL) leaves the stored value old (nil:
// absent) as it is, so that a write of the changes alone (ChangedFrom)
// leaves it out: equal values (the encoder shares those of the item read,
// so most compare as one pointer), or nothing written over nothing stored.
// A stored NULL the write would remove is left: a NULL reads as absent.
func unchanged(v types.AttributeValue, ok bool, old types.AttributeValue) bool {
	if !ok {
		return old == nil || isNull(old)
	}
	return old != nil && (v == old || av.Equal(v, old))
}

// updateValuesRoom is how many values an update of item names, as far as
// known beforehand: its attributes but the key (the version's held and new
// values for the version's), the write token's, the token of the basis, the
// If conditions'; of the attributes not kept (buildUpdate), when some are.
// A map sized for more is twice as large, and swept by the collector on
// every save.
func (p *Plan) updateValuesRoom(item map[string]types.AttributeValue, uc *UserCond, bs *Basis, kept uint64) int {
	n := len(item) - 1
	if _, ok := item[p.TokenAttr]; ok && p.TokenAttr != "" {
		n-- // an item encoded into its basis's map holds the basis's token (basis.own)
	}
	if p.HasRangeKey {
		n--
	}
	if kept != 0 {
		n = len(p.NonKeyNoVerFs) - bits.OnesCount64(kept) + 1 // those written at most, and the write token's
	}
	if p.S.Version >= 0 {
		n += 2
	}
	if bs != nil {
		n++
	}
	if uc != nil {
		n += len(uc.Values)
	}
	return max(n, 0)
}

// updateNames gives an update's builder its names: the plan's when every
// attribute is named (allUsed), else those of the values written and the
// version's.
func (p *Plan) updateNames(eb *ExprBuilder, allUsed bool) {
	if allUsed {
		eb.Names = p.allNames
		return
	}
	eb.Names = make(map[string]string, len(eb.Values)+2)
	for ph := range eb.Values {
		if len(ph) > 2 && ph[1] == 'a' {
			eb.Names["#"+ph[1:]] = p.allNamesLookup(ph)
		}
	}
	maps.Copy(eb.Names, p.VersionNames)
	eb.Owned = true
}

// WriteToken adds to a versioned write the SET of the write token (none
// when token is nil: tokens off).
func (p *Plan) WriteToken(eb *ExprBuilder, token []byte) {
	if p.TokenAttr == "" {
		return
	}
	eb.Set(TokenNamePH, TokenValuePH)
	p.tokenValue(eb, token)
}

// tokenValue adds the write token's value (writeToken without its action,
// for an UpdateExpression written already: plan.fullSet).
func (p *Plan) tokenValue(eb *ExprBuilder, token []byte) {
	if p.TokenAttr == "" {
		return
	}
	eb.Values[TokenValuePH] = &types.AttributeValueMemberB{Value: token}
}

// setAction writes the SET action of the non-key field i, other than the
// version, of an item that holds it: a creation time is set once, by the
// write that creates the item (if_not_exists).
func (p *Plan) setAction(eb *ExprBuilder, i int) {
	f := &p.S.Fields[i]
	if i == p.S.Created {
		eb.SetIfAbsent(f.NamePH, f.ValuePH)
		return
	}
	eb.Set(f.NamePH, f.ValuePH)
}

// MaxCachedFields is the most attributes (besides the key and the version)
// a type may model for its SaveUpdate expressions to be cached
// (saveUpdateExpr): one bit of a uint64 each.
const MaxCachedFields = 64

// A plan caches the UpdateExpressions of 1<<setExprBits SaveUpdates with
// missing attributes.
const setExprBits = 3

// setExpr is a cached UpdateExpression and the names it uses: the
// SaveUpdate of an item lacking the attributes missing names and leaving
// those kept names unwritten (bit n: nonKeyNoVerFs[n]).
type setExpr struct {
	missing, kept uint64
	expr          string
	names         map[string]string // never changed: shared by every request
}

// saveUpdateExpr returns the UpdateExpression of a SaveUpdate of an item
// lacking (or holding as NULL) the attributes missing names and leaving
// those kept names unwritten (bit n: nonKeyNoVerFs[n]), and the names it
// uses, for the caller to share and never change: fullSet and allNames
// when neither, else the plan's cached ones, written (setUpdateExpr) and
// kept when not there. The cache is direct-mapped: a few slots, each
// holding the last expression whose sets hashed to it, replaced whole
// (readers see the old or the new, never a mix).
func (p *Plan) saveUpdateExpr(missing, kept uint64) (string, map[string]string) {
	if missing == 0 && kept == 0 {
		return p.fullSet, p.allNames
	}
	h := (missing ^ kept*0xC2B2AE3D27D4EB4F) * 0x9E3779B97F4A7C15
	slot := &p.setExprs[h>>(64-setExprBits)]
	if e := slot.Load(); e != nil && e.missing == missing && e.kept == kept {
		return e.expr, e.names
	}
	e := &setExpr{missing: missing, kept: kept, expr: p.setUpdateExpr(missing, kept), names: p.allNames}
	if kept != 0 {
		e.names = maps.Clone(p.allNames)
		for n, i := range p.NonKeyNoVerFs {
			if kept&(1<<n) != 0 {
				delete(e.names, p.S.Fields[i].NamePH)
			}
		}
	}
	slot.Store(e)
	return e.expr, e.names
}

// setUpdateExpr writes the actions of a SaveUpdate of an item lacking (or
// holding as NULL) the attributes missing names, leaving those kept names
// unwritten (bit n: nonKeyNoVerFs[n]): the SET of each other attribute, of
// the version and of the write token, and the REMOVE of the missing ones.
// fullSet is that of none missing or kept.
func (p *Plan) setUpdateExpr(missing, kept uint64) string {
	var eb ExprBuilder
	for n, i := range p.NonKeyNoVerFs {
		if kept&(1<<n) != 0 {
			continue
		}
		if missing&(1<<n) != 0 {
			eb.Remove(p.S.Fields[i].NamePH)
		} else {
			p.setAction(&eb, i)
		}
	}
	if p.S.Version >= 0 {
		eb.Set(p.versionPH, NewVersionPH)
		if p.TokenAttr != "" {
			eb.Set(TokenNamePH, TokenValuePH)
		}
	}
	return eb.update()
}

// AdvanceVersion adds to an update that writes no version condition
// (SaveClobber, Table.Add) the action that advances the stored version by
// the step in DynamoDB, or stores first where there is none, with the
// values it uses, and returns the condition for the caller to AND
// (condClobber: the stored version leaves room for one more step).
//
// A stored version 0 means unsaved, and one stored as NULL (another
// writer's) is no version either: both get first. With the default
// settings (first version = step) ADD does that for 0 and for a missing
// version. Otherwise, and for NULL (which ADD refuses and a comparison is
// false on), no single update can choose between first and stored + step:
// the request assumes the stored item holds a version (noVersion false: it
// is conditioned on a version other than 0) or holds none (noVersion: first
// is set on condition that the version is NULL or 0), and is sent again
// when the stored item says otherwise (storedNulls).
func (p *Plan) AdvanceVersion(eb *ExprBuilder, first int64, noVersion bool) string {
	if noVersion {
		eb.Set(p.versionPH, NewVersionPH)
		eb.Values[NewVersionPH] = NumberAV(first)
		eb.Values[NullTypePH] = NullTypeAV
		eb.Values[zeroVersionPH] = NumberAV(0)
		return "attribute_type(" + p.versionPH + ", " + NullTypePH + ") OR " + p.versionPH + " = " + zeroVersionPH
	}
	eb.Values[NewVersionPH] = NumberAV(p.VerStep)
	eb.Values[maxVersionPH] = NumberAV(p.MaxVersion - p.VerStep + 1) // condClobber: 0 <= stored < :vm
	eb.Values[zeroVersionPH] = NumberAV(0)
	if first == p.VerStep {
		eb.AddTo(ClauseAdd, p.versionPH, NewVersionPH)
		return p.condClobber
	}
	eb.action(clauseSet).WriteString(p.versionPH + " = if_not_exists(" + p.versionPH + ", " + baseVersionPH + ") + " + NewVersionPH)
	eb.Values[baseVersionPH] = NumberAV(first - p.VerStep)
	return "(" + p.condClobber + ") AND NOT " + p.versionPH + " = " + zeroVersionPH
}

// ZeroIsNoVersion returns the version attribute when a stored 0 needs a
// request of its own from advanceVersion (the first version written is not
// the step), else "": see storedNulls.
func (p *Plan) ZeroIsNoVersion() string {
	if p.S.Version >= 0 && (p.VerClock || p.verStart != p.VerStep) {
		return p.VersionAttr[0]
	}
	return ""
}

// WithCreatedCond ANDs to a write's condition that the stored creation
// time is absent or the one item carries, for writes that cannot keep the
// stored one with if_not_exists or learn it from ReturnValues (PutItem, and
// transaction members). names and values may be shared (plan maps) or nil:
// they are copied, never modified.
func (p *Plan) WithCreatedCond(cond string, names map[string]string, values map[string]types.AttributeValue, item map[string]types.AttributeValue) (string, map[string]string, map[string]types.AttributeValue) {
	f := &p.S.Fields[p.S.Created]
	eb := ExprBuilder{cond: cond, Names: names, Values: make(map[string]types.AttributeValue, len(values)+1)}
	maps.Copy(eb.Values, values)
	eb.And("attribute_not_exists("+f.NamePH+") OR "+f.NamePH+" = "+f.ValuePH, nil)
	eb.Name(f.NamePH, f.Name)
	eb.Values[f.ValuePH] = item[f.Name]
	return eb.cond, eb.Names, eb.Values
}

// allNamesLookup maps a value placeholder ":a<i>" to the attribute name.
func (p *Plan) allNamesLookup(vph string) string {
	return p.allNames["#"+vph[1:]]
}

// PutParts is the expression set of one PutItem or DeleteItem.
type PutParts struct {
	Cond   string
	Names  map[string]string
	Values map[string]types.AttributeValue
}

// DeleteItem returns the transaction member deleting key from table under
// pc's condition, asking for the stored item when the condition fails.
func (pc PutParts) DeleteItem(table string, key map[string]types.AttributeValue) *types.Delete {
	return &types.Delete{
		TableName:                           &table,
		Key:                                 key,
		ConditionExpression:                 StrPtr(pc.Cond),
		ExpressionAttributeNames:            pc.Names,
		ExpressionAttributeValues:           pc.Values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// BuildPutCond builds the condition of a versioned PutItem (or DeleteItem,
// with clobber meaning no version condition). bs, when not nil, pins the
// write to the stored state it was computed from (basisCond).
func (p *Plan) BuildPutCond(held int64, clobber bool, uc *UserCond, bs *Basis) PutParts {
	if p.S.Version >= 0 && !clobber && bs == nil && uc == nil {
		// The version condition alone (a SavePut or Delete of an item
		// held): what the builder below would return, without it.
		values := make(map[string]types.AttributeValue, 2)
		return PutParts{Cond: p.versionCond(held, bs, values), Names: p.putNames, Values: values}
	}
	eb := ExprBuilder{Values: map[string]types.AttributeValue{}}
	if p.S.Version >= 0 && !clobber {
		eb.And(p.versionCond(held, bs, eb.Values), nil)
		eb.Names = p.putNames
	}
	eb.And(p.basisCond(bs, eb.Values))
	cond, names, values := eb.finish(uc)
	return PutParts{Cond: cond, Names: names, Values: values}
}

// NullTypeAV is the value of nullTypePH: the type name NULL, for
// attribute_type.
var NullTypeAV = &types.AttributeValueMemberS{Value: "NULL"}

func isSet(av types.AttributeValue) bool {
	switch av.(type) {
	case *types.AttributeValueMemberSS, *types.AttributeValueMemberNS, *types.AttributeValueMemberBS:
		return true
	}
	return false
}

// NumberAV returns n as an N.
func NumberAV(n int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// heldAV returns the value of the version held (heldVersionPH): the basis
// item's own version value when it holds held as that text (the item the
// Table wrote last holds the one its write made; shared, as the values of
// a request and of the item it remembers are: nobody modifies one), else a
// new one.
func (p *Plan) heldAV(held int64, bs *Basis) *types.AttributeValueMemberN {
	if bs != nil {
		if o, ok := bs.Item[p.VersionAttr[0]].(*types.AttributeValueMemberN); ok {
			var buf [20]byte
			if string(strconv.AppendInt(buf[:0], held, 10)) == o.Value {
				return o
			}
		}
	}
	return NumberAV(held)
}

func Itoa(n int64) string { return strconv.FormatInt(n, 10) }

// ExprPtr is StrPtr, without allocating for the type's own version
// conditions and its full SET (fullSet): those point into the plan.
func (p *Plan) ExprPtr(s string) *string {
	switch s {
	case "":
		return nil
	case p.fullSet:
		return &p.fullSet
	case p.condMatch:
		return &p.condMatch
	case p.condCreate:
		return &p.condCreate
	case p.condMatchToken:
		return &p.condMatchToken
	}
	return StrPtr(s)
}

// StrPtr returns nil for "", else a pointer to s.
func StrPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
