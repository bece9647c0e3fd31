package dynamo

import (
	"fmt"
	"maps"
	"math/bits"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/schema"
)

// This file builds request expressions. It is pure: no I/O, no reflection
// beyond what the precomputed plan holds, so its behaviour is unit-tested
// on the built strings: expr_test.go (the builder, and the expressions of
// each SaveBehavior), save_test.go and add_test.go (the requests as sent).
//
// Placeholders never collide with the expression package's, which are
// "#0", ":0", ...: attributes are "#a<i>"/":a<i>" by schema position, the
// held and new version ":v0"/":v1" (for SaveClobber: the step, and ":vb"
// the first version less the step, ":vz" the 0 a stored version is
// compared with), the largest version the field holds ":vm", the write token "#wt"/":wt", the token of the item a write was
// computed from ":wh", the hash key "#kh", and the values read ":o<i>" (with
// ":onull", the type name NULL) that guard an unversioned Update.

const (
	heldVersionPH = ":v0"
	newVersionPH  = ":v1"
	maxVersionPH  = ":vm"
	baseVersionPH = ":vb"
	tokenNamePH   = "#wt"
	tokenValuePH  = ":wt"
	heldTokenPH   = ":wh"
	hashNamePH    = "#kh"
	nullTypePH    = ":onull"
	zeroVersionPH = ":vz"
)

// plan holds what a table's requests need that depends only on the type and
// the mapper's options. Built once by NewTable; read-only afterwards, so the
// maps in it may be handed to the SDK by many goroutines at once (the SDK
// only reads request maps).
type plan struct {
	s         *schema.Schema
	tokenAttr string // "" when the type is not versioned or tokens are off

	// allNames maps every non-key placeholder (and #wt) to its attribute name:
	// a SaveUpdate or SaveClobber request uses each of them.
	allNames map[string]string
	// versionNames maps the version placeholder (and #wt) alone.
	versionNames map[string]string
	// putNames maps the version placeholder alone: the names of a versioned
	// PutItem's or DeleteItem's condition. nil when the type is unversioned.
	putNames map[string]string

	// The names a basis condition (basisCond) uses: the token alone; the
	// hash key alone; every attribute and the hash key.
	tokenNames, hashNames, basisNames map[string]string

	versionPH string // "#a<i>" of the version attribute, "" if none
	// versionAttr holds the version attribute's name; setAttrs the names
	// of the set attributes (blindAttrs).
	versionAttr [1]string
	setAttrs    []string
	condCreate  string // attribute_not_exists(#v) OR #v = :v0 (held 0)
	condMatch   string // #v = :v0
	condClobber string // SaveClobber: the stored version is not negative and leaves room for one more
	// condMatchToken is condMatch ANDed with the basis condition on the
	// write token (tokenBasisCond): the condition of every Update of an
	// item this mapper wrote, computed once.
	condMatchToken string
	// condMatchPtr, condCreatePtr and condMatchTokenPtr point to
	// condMatch, condCreate and condMatchToken, and fullSetPtr to fullSet,
	// for requests (exprPtr): no allocation per call.
	condMatchPtr, condCreatePtr, condMatchTokenPtr, fullSetPtr *string
	// fullSet is the UpdateExpression of a SaveUpdate of an item holding
	// every attribute the type models, none NULL (the SET of each, the
	// version and the write token): what buildUpdate writes for such an
	// item, computed once. "" when the type models no attribute beyond
	// its key.
	fullSet string
	// setExprs caches the UpdateExpressions, and their names, of
	// SaveUpdates of items lacking attributes or leaving some unwritten
	// (saveUpdateExpr); the one mutable part of a plan, safe for
	// concurrent use.
	setExprs   [1 << setExprBits]atomic.Pointer[setExpr]
	maxVersion int64 // the largest version the field's type holds
	// The version settings (tags.go): the first version written (verClock:
	// the clock's Unix milliseconds instead) and the step of every later
	// write; 1 and 1 by default.
	verStart, verStep int64
	verClock          bool
	keyNames          [2]string
	hasRangeKey       bool
	nonKeyFields      []int // indexes into s.fields, in order, excluding keys
	nonKeyNoVerFs     []int // nonKeyFields without the version

	// proj is the ProjectionExpression of reads of the type — every
	// attribute it models and the write token, so that a type modeling
	// some of an item's attributes reads only those — with its names
	// projNames; "" when reads
	// take whole items (the struct decodes itself, or the expression would
	// be over DynamoDB's 4 KB).
	proj      string
	projNames map[string]string
}

func newPlan(s *schema.Schema, tokenAttr string) *plan {
	p := &plan{s: s}
	if s.Version >= 0 {
		p.tokenAttr = tokenAttr
	}
	p.keyNames[0] = s.Fields[s.Hash].Name
	if s.Range >= 0 {
		p.keyNames[1] = s.Fields[s.Range].Name
		p.hasRangeKey = true
	}
	p.allNames = map[string]string{}
	p.versionNames = map[string]string{}
	for i := range s.Fields {
		if i == s.Hash || i == s.Range {
			continue
		}
		f := &s.Fields[i]
		p.allNames[f.NamePH] = f.Name
		p.nonKeyFields = append(p.nonKeyFields, i)
		if f.StoredSetKind() != 0 {
			p.setAttrs = append(p.setAttrs, f.Name)
		}
		if i != s.Version {
			p.nonKeyNoVerFs = append(p.nonKeyNoVerFs, i)
		}
	}
	if s.Version >= 0 {
		p.versionPH = s.Fields[s.Version].NamePH
		p.versionAttr[0] = s.Fields[s.Version].Name
		p.versionNames[p.versionPH] = s.Fields[s.Version].Name
		p.putNames = map[string]string{p.versionPH: s.Fields[s.Version].Name}
		p.condMatch = p.versionPH + " = " + heldVersionPH
		// A version stored as NULL (by another writer) is no version, as
		// a missing one is: an item holding it is saved as unsaved.
		p.condCreate = "attribute_not_exists(" + p.versionPH + ") OR attribute_type(" + p.versionPH + ", " + nullTypePH + ") OR " + p.condMatch
		// A negative stored version (another writer's) is no version
		// either: no Save of this type holds it, and advancing it would
		// store 0 (unsaved) or a version the type refuses.
		p.condClobber = "attribute_not_exists(" + p.versionPH + ") OR (" + p.versionPH + " >= " + zeroVersionPH + " AND " + p.versionPH + " < " + maxVersionPH + ")"
		p.maxVersion = s.MaxVersion()
		o := &s.Fields[s.Version].Opts
		p.verStart, p.verStep, p.verClock = max(o.VersionStart, 1), max(o.VersionStep, 1), o.VersionClock
		p.condMatchPtr, p.condCreatePtr = &p.condMatch, &p.condCreate
	}
	if p.tokenAttr != "" {
		p.allNames[tokenNamePH] = p.tokenAttr
		p.versionNames[tokenNamePH] = p.tokenAttr
		p.tokenNames = map[string]string{tokenNamePH: p.tokenAttr}
		p.condMatchToken = joinConds(p.condMatch, tokenBasisCond)
		p.condMatchTokenPtr = &p.condMatchToken
	}
	if p.fullSet = p.setUpdateExpr(0, 0); p.fullSet != "" {
		p.fullSetPtr = &p.fullSet
	}
	p.hashNames = map[string]string{hashNamePH: p.keyNames[0]}
	p.basisNames = make(map[string]string, len(p.allNames)+1)
	maps.Copy(p.basisNames, p.allNames)
	p.basisNames[hashNamePH] = p.keyNames[0]
	// The write token too: an item read is the state a write pins
	// (ChangedFrom's read, the backfill's scanned items), and that state is
	// named by its token; read without it, it looks like an item no mapper
	// wrote, and a write pinned to it fails as over an item deleted and
	// created again.
	p.proj, p.projNames = s.Projection(tokenNamePH, p.tokenAttr)
	return p
}

// firstVersion returns the version the first write of an item stores;
// nowMs is the clock's reading in Unix milliseconds (used only with
// versionstart=clock, and never below 1).
func (p *plan) firstVersion(nowMs int64) int64 {
	if p.verClock {
		return max(nowMs, 1)
	}
	return p.verStart
}

// nextVersion returns the version a save by a holder of held writes, and
// false when it would pass the largest version the field holds.
func (p *plan) nextVersion(held, nowMs int64) (int64, bool) {
	if held == 0 {
		return p.firstVersion(nowMs), true
	}
	if held > p.maxVersion-p.verStep {
		return 0, false
	}
	return held + p.verStep, true
}

// advance returns the version after n saves (n ≥ 1; 0 counts as 1) by a
// holder of held, and false when it would pass the largest version the field
// holds: Update's combined write of n changes advances it by one save each.
func (p *plan) advance(held, n, nowMs int64) (int64, bool) {
	v := held
	for range max(n, 1) {
		var ok bool
		if v, ok = p.nextVersion(v, nowMs); !ok {
			return 0, false
		}
	}
	return v, true
}

// tokenBasisCond is the basis condition of an item that carries a write
// token (basisCond).
const tokenBasisCond = tokenNamePH + " = " + heldTokenPH

// incarnationCond returns the condition that pins a write of a versioned
// type, under the version condition, to the incarnation of the item read:
// the write token read is still stored, or, when read holds none, none is
// stored — every write of the mapper stores a new token, so an item
// deleted and created again since (its version starting again at 1) is
// told apart. It adds its values to values and returns the names it uses;
// "" when the type has no version or the plan writes no tokens.
// sameIncarnation is its counterpart. An item created again by a writer
// that stores no token, over a read without one, is not told apart.
func (p *plan) incarnationCond(read, values map[string]types.AttributeValue) (string, map[string]string) {
	if p.s.Version < 0 || p.tokenAttr == "" {
		return "", nil
	}
	if wt, ok := read[p.tokenAttr]; ok {
		values[heldTokenPH] = wt
		return tokenBasisCond, p.tokenNames
	}
	return "attribute_not_exists(" + tokenNamePH + ")", p.tokenNames
}

// basis is the stored item a write was computed from, when the caller knows
// it (Table.Update read it, or was handed it): Item nil means absent.
type basis struct {
	item map[string]types.AttributeValue
	// own: item is a map this Table encoded for an UpdateItem it wrote
	// (sent nowhere: an UpdateItem sends values, not the item), holding
	// the write token, and nothing but the running batch refers to it. A
	// write computed from it may encode its item into it (buildSave):
	// after that encoding only its version and token are read, which it
	// leaves as they were (basisCond, sameState; the version encoded is
	// the one held).
	own bool
}

// basisCond returns the condition that pins a write to the stored state it
// was computed from, adding its values to values, and the names it uses;
// "" when b is nil. sameState is its counterpart: whether a stored item is
// the state b, as this condition sees it.
//
// A write computed from an absent item commits only over absence
// (attribute_not_exists of the hash key), for every type: the version
// condition of an unsaved item ("version absent or 0") also holds on an item
// another writer created meanwhile with version 0 or without a version, which
// the write would replace. (A plain Save of an unsaved item, computed from
// nothing read, has no basis: the version-0 rule is all it checks.)
//
// For a versioned type the stored write token pins the incarnation: version
// numbers start again at 1 when an item is deleted and created again, tokens
// do not repeat. An item without a token (written by another client, or
// with tokens off), and any item of a type without a version, is pinned by
// its attributes: each modeled attribute must still hold what was read
// (DynamoDB compares documents, lists and sets by value), or be absent.
func (p *plan) basisCond(b *basis, values map[string]types.AttributeValue) (string, map[string]string) {
	if b == nil {
		return "", nil
	}
	if b.item == nil {
		return "attribute_not_exists(" + hashNamePH + ")", p.hashNames
	}
	s := p.s
	if _, ok := b.item[p.tokenAttr]; ok && s.Version >= 0 && p.tokenAttr != "" {
		return p.incarnationCond(b.item, values)
	}
	var c strings.Builder
	c.WriteString("attribute_exists(" + hashNamePH + ")")
	if s.Version >= 0 && p.tokenAttr != "" {
		c.WriteString(" AND attribute_not_exists(" + tokenNamePH + ")")
	}
	for _, i := range p.nonKeyFields {
		if i == s.Version {
			continue // the version condition checks it
		}
		f := &s.Fields[i]
		c.WriteString(" AND ")
		switch av, ok := b.item[f.Name]; {
		case !ok:
			c.WriteString("attribute_not_exists(" + f.NamePH + ")")
		case isNull(av):
			c.WriteString("(attribute_not_exists(" + f.NamePH + ") OR attribute_type(" + f.NamePH + ", " + nullTypePH + "))")
			values[nullTypePH] = &types.AttributeValueMemberS{Value: "NULL"}
		default:
			vph := ":o" + f.ValuePH[2:]
			c.WriteString(f.NamePH + " = " + vph)
			values[vph] = av
		}
	}
	return c.String(), p.basisNames
}

// userCond is the compiled form of the If options of one call.
type userCond struct {
	expr   string
	names  map[string]string
	values map[string]types.AttributeValue
	// ifs are the caller's If conditions when expr also holds an entity
	// type's entity condition (compileConds): String shows them alone.
	ifs    []expression.ConditionBuilder
	entity *schema.Schema
}

// compileConds ANDs the If conditions of a call on a table of schema s into
// one expression, or returns nil when there are none. Values compared with
// javabool and javadate attributes are encoded as those attributes are
// stored, and expression.Name("a.b") names the attribute "a.b" where s has
// one and no "a" (see rewriteCond); a value it cannot convert is an error.
//
// An entity type's writes never land on (or delete) another entity type's
// item: its entity condition is ANDed in, compiled once per type
// (entityCondOf) when there are no If conditions.
func compileConds(s *schema.Schema, conds []expression.ConditionBuilder) (*userCond, error) {
	if s.Entity >= 0 {
		if len(conds) == 0 {
			return entityCondOf(s)
		}
		uc, err := buildConds(s, append([]expression.ConditionBuilder{s.EntityCond()}, conds...))
		if uc != nil {
			uc.ifs, uc.entity = conds, s
		}
		return uc, err
	}
	return buildConds(s, conds)
}

// entityConds holds the entity condition of each entity type compiled
// (*schema → *userCond), shared read-only by every write of the type.
var entityConds sync.Map

// entityCondOf returns the entity condition of s, an entity type, compiled
// on first use: later calls cost a map lookup.
func entityCondOf(s *schema.Schema) (*userCond, error) {
	if uc, ok := entityConds.Load(s); ok {
		return uc.(*userCond), nil
	}
	uc, err := buildConds(s, []expression.ConditionBuilder{s.EntityCond()})
	if err != nil {
		return nil, err
	}
	uc.entity = s // the entity condition alone: no If to show (userCond.String)
	r, _ := entityConds.LoadOrStore(s, uc)
	return r.(*userCond), nil
}

// schemaFor returns the schema of struct type t (For) with its entity
// condition compiled, refusing a type whose entity condition cannot be.
func schemaFor(t reflect.Type) (*schema.Schema, error) {
	s, err := schema.For(t)
	if err != nil || s.Entity < 0 {
		return s, err
	}
	if _, err := entityCondOf(s); err != nil {
		return nil, &SchemaError{Struct: t.String(), Field: s.Fields[s.Entity].GoName, Reason: fmt.Sprintf("entity condition: %v", err)}
	}
	return s, nil
}

// buildConds ANDs conds into one expression; nil when there are none.
func buildConds(s *schema.Schema, conds []expression.ConditionBuilder) (*userCond, error) {
	if len(conds) == 0 {
		return nil, nil
	}
	c := conds[0]
	if len(conds) > 1 {
		c = expression.And(conds[0], conds[1], conds[2:]...)
	}
	e, err := expression.NewBuilder().WithCondition(c).Build()
	if err != nil {
		return nil, err
	}
	values := e.Values()
	if err := schema.CheckCondValues(e.Names(), values); err != nil {
		return nil, err
	}
	cond, names, err := s.RewriteCond(*e.Condition(), e.Names(), values)
	if err != nil {
		return nil, err
	}
	return &userCond{expr: cond, names: names, values: values}, nil
}

// String renders the caller's If conditions with their names and values in
// place of the placeholders, for messages; "" for nil and for an entity
// type's entity condition alone (the caller gave no If).
func (uc *userCond) String() string {
	switch {
	case uc == nil || uc.entity != nil && uc.ifs == nil:
		return ""
	case uc.ifs != nil:
		own, err := buildConds(uc.entity, uc.ifs)
		if err == nil {
			return own.String()
		}
	}
	return schema.ReadableCond(uc.expr, uc.names, uc.values)
}

// versionCond returns the version condition for a caller holding held, and
// adds its value to values. bs (nil: none) is the stored item the write was
// computed from (heldAV).
func (p *plan) versionCond(held int64, bs *basis, values map[string]types.AttributeValue) string {
	values[heldVersionPH] = p.heldAV(held, bs)
	if held == 0 {
		values[nullTypePH] = nullTypeAV
		return p.condCreate
	}
	return p.condMatch
}

// joinConds ANDs two condition expressions, either of which may be empty.
// The join of the version condition and the token's basis condition, the
// condition of every Update of an item this mapper wrote, is the plan's
// (condMatchToken): no allocation.
func (p *plan) joinConds(a, b string) string {
	if b == tokenBasisCond && a == p.condMatch && p.condMatchToken != "" {
		return p.condMatchToken
	}
	return joinConds(a, b)
}

// joinConds ANDs two condition expressions, either of which may be empty.
func joinConds(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return "(" + a + ") AND (" + b + ")"
}

// withNames returns base with extra added, copying only when there is
// something to add (neither is modified).
func withNames(base, extra map[string]string) map[string]string {
	if len(extra) == 0 {
		return base
	}
	out := make(map[string]string, len(base)+len(extra))
	maps.Copy(out, base)
	maps.Copy(out, extra)
	return out
}

// mergeNames returns base with the user's names added, copying only when
// there is something to add (base itself is never modified).
func mergeNames(base map[string]string, uc *userCond) map[string]string {
	if uc == nil || len(uc.names) == 0 {
		if len(base) == 0 {
			return nil
		}
		return base
	}
	out := make(map[string]string, len(base)+len(uc.names))
	maps.Copy(out, base)
	maps.Copy(out, uc.names)
	return out
}

func addValues(dst map[string]types.AttributeValue, uc *userCond) map[string]types.AttributeValue {
	if uc != nil {
		maps.Copy(dst, uc.values)
	}
	if len(dst) == 0 {
		return nil
	}
	return dst
}

// updateParts is the expression set of one UpdateItem.
type updateParts struct {
	update string
	cond   string
	names  map[string]string
	values map[string]types.AttributeValue
}

// The clauses of an UpdateExpression, in the order they are written.
const (
	clauseSet = iota
	clauseRemove
	clauseAdd
	clauseDelete
)

var clauseVerbs = [...]string{"SET ", "REMOVE ", "ADD ", "DELETE "}

// exprBuilder assembles the expressions of one write: the actions of an
// UpdateExpression (none for a PutItem's or DeleteItem's condition), the
// ConditionExpression, and the names and values they use. It writes every
// separator and joins every condition, so that its users only name the
// actions. names may start as one of the plan's shared maps: the builder
// copies it before its first change (those maps are read by many goroutines
// at once). values is the builder's own.
type exprBuilder struct {
	p       *plan              // the type's plan, for its precomputed fragments (nil: none)
	clauses [4]strings.Builder // indexed by clauseSet…clauseDelete
	// fixedUpdate, when not "", is the UpdateExpression, precomputed
	// (plan.fullSet): clauses are not written.
	fixedUpdate string
	cond        string
	names       map[string]string
	owned       bool // names is the builder's own map
	values      map[string]types.AttributeValue
}

// action starts an action of the clause c (clauseSet…) and returns the
// clause to write it to.
func (b *exprBuilder) action(c int) *strings.Builder {
	sb := &b.clauses[c]
	if sb.Len() > 0 {
		sb.WriteString(", ")
	}
	return sb
}

// set writes "ph = vph" to the SET clause.
func (b *exprBuilder) set(ph, vph string) {
	sb := b.action(clauseSet)
	sb.WriteString(ph)
	sb.WriteString(" = ")
	sb.WriteString(vph)
}

// setIfAbsent writes "ph = if_not_exists(ph, vph)" to the SET clause: vph
// is stored only where the item holds no ph (a creation time).
func (b *exprBuilder) setIfAbsent(ph, vph string) {
	b.action(clauseSet).WriteString(ph + " = if_not_exists(" + ph + ", " + vph + ")")
}

// remove writes ph to the REMOVE clause.
func (b *exprBuilder) remove(ph string) {
	b.action(clauseRemove).WriteString(ph)
}

// addTo writes "ph vph" to the ADD clause (clause clauseAdd), or to the
// DELETE clause (clauseDelete).
func (b *exprBuilder) addTo(clause int, ph, vph string) {
	sb := b.action(clause)
	sb.WriteString(ph)
	sb.WriteByte(' ')
	sb.WriteString(vph)
}

// name maps the placeholder ph to the attribute attr.
func (b *exprBuilder) name(ph, attr string) {
	if !b.owned {
		m := make(map[string]string, len(b.names)+1)
		maps.Copy(m, b.names)
		b.names, b.owned = m, true
	}
	b.names[ph] = attr
}

// and ANDs c (may be "") to the condition; names, when not empty, are the
// names it uses.
func (b *exprBuilder) and(c string, names map[string]string) {
	if c == "" {
		return
	}
	if b.p != nil {
		b.cond = b.p.joinConds(b.cond, c)
	} else {
		b.cond = joinConds(b.cond, c)
	}
	switch {
	case len(names) == 0 || hasNames(b.names, names):
	case b.owned:
		maps.Copy(b.names, names)
	default:
		b.names, b.owned = withNames(b.names, names), true
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
func (b *exprBuilder) update() string {
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
func (b *exprBuilder) finish(uc *userCond) (string, map[string]string, map[string]types.AttributeValue) {
	if uc != nil {
		b.cond = joinConds(b.cond, uc.expr)
	}
	return b.cond, mergeNames(b.names, uc), addValues(b.values, uc)
}

// updateParts returns the expressions of an UpdateItem, ANDing the
// caller's If conditions.
func (b *exprBuilder) updateParts(uc *userCond) updateParts {
	u := b.update()
	cond, names, values := b.finish(uc)
	return updateParts{update: u, cond: cond, names: names, values: values}
}

// buildUpdate builds the UpdateItem expressions of a save. item is the
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
func (p *plan) buildUpdate(b SaveBehavior, item map[string]types.AttributeValue, held, newVersion int64, nulls map[string]bool, token []byte, uc *userCond, bs *basis, from map[string]types.AttributeValue, kept uint64) updateParts {
	s := p.s
	// cached: the UpdateExpression of a SaveUpdate depends only on which
	// attributes the item lacks or holds as NULL (missing, bit n for
	// nonKeyNoVerFs[n]) and which it leaves as they are (kept): it is the
	// plan's (saveUpdateExpr), and no action is written here.
	cached := b == SaveUpdate && len(p.nonKeyNoVerFs) <= maxCachedFields && from == nil
	if !cached || bs == nil || bs.item == nil {
		kept = 0
	}
	eb := exprBuilder{p: p, values: make(map[string]types.AttributeValue, p.updateValuesRoom(item, uc, bs, kept))}
	values := eb.values
	if !cached {
		eb.clauses[clauseSet].Grow(len(item) * 12)
	}
	var missing uint64
	var removed []int // with from: the attributes removed, named after updateNames
	allUsed := true
	for n, i := range p.nonKeyNoVerFs {
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
			eb.remove(f.NamePH)
			if from != nil {
				removed = append(removed, i)
			}
		case b == SaveAppendSet && isSet(av):
			// DynamoDB refuses ADD on NULL: a set stored as NULL is
			// replaced, one that is not is added to (storedNulls).
			values[f.ValuePH] = av
			values[nullTypePH] = nullTypeAV
			if nulls[f.Name] {
				eb.set(f.NamePH, f.ValuePH)
				eb.and("attribute_type("+f.NamePH+", "+nullTypePH+")", nil)
			} else {
				eb.addTo(clauseAdd, f.NamePH, f.ValuePH)
				eb.and("NOT attribute_type("+f.NamePH+", "+nullTypePH+")", nil)
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
		eb.fixedUpdate, eb.names = p.saveUpdateExpr(missing, kept)
	} else {
		p.updateNames(&eb, allUsed)
	}
	if !allUsed {
		for _, i := range removed {
			eb.names[s.Fields[i].NamePH] = s.Fields[i].Name // updateNames named the values' only
		}
	}
	eb.and(p.basisCond(bs, values))
	if from != nil && bs == nil {
		eb.and(p.incarnationCond(from, values))
	}
	return eb.updateParts(uc)
}

// buildUpdateValues is buildUpdate of a SaveUpdate without a basis or an
// item read, whose item is encoded into values, the UpdateItem's values,
// under the fields' value placeholders (Table.valueNames; the key and the
// version left out): the attributes that are NULL are taken out of values
// and removed, as buildUpdate removes them, and the version's and the write
// token's values are added. The UpdateExpression is the plan's (cached).
func (p *plan) buildUpdateValues(values map[string]types.AttributeValue, held, newVersion int64, token []byte, uc *userCond) updateParts {
	eb := exprBuilder{p: p, values: values}
	var missing uint64
	for n, i := range p.nonKeyNoVerFs {
		vph := p.s.Fields[i].ValuePH
		switch av, ok := values[vph]; {
		case !ok:
			missing |= 1 << n
		case isNull(av):
			delete(values, vph)
			missing |= 1 << n
		}
	}
	p.versionActions(&eb, SaveUpdate, held, newVersion, nil, token, true, nil)
	eb.fixedUpdate, eb.names = p.saveUpdateExpr(missing, 0)
	return eb.updateParts(uc)
}

// versionActions adds to eb what an update of behaviour b does to the
// version and the write token: SaveClobber advances the stored version
// (advanceVersion); the others set newVersion under the condition that the
// stored one is held. cached: the UpdateExpression is the plan's, only the
// values are added. bs is the write's basis (nil: none).
func (p *plan) versionActions(eb *exprBuilder, b SaveBehavior, held, newVersion int64, nulls map[string]bool, token []byte, cached bool, bs *basis) {
	if b == SaveClobber {
		eb.and(p.advanceVersion(eb, newVersion, nulls[p.versionAttr[0]]), nil)
	} else {
		if !cached {
			eb.set(p.versionPH, newVersionPH)
		}
		eb.values[newVersionPH] = numberAV(newVersion)
		eb.and(p.versionCond(held, bs, eb.values), nil)
	}
	if cached {
		p.tokenValue(eb, token)
	} else {
		p.writeToken(eb, token)
	}
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
func (p *plan) updateValuesRoom(item map[string]types.AttributeValue, uc *userCond, bs *basis, kept uint64) int {
	n := len(item) - 1
	if _, ok := item[p.tokenAttr]; ok && p.tokenAttr != "" {
		n-- // an item encoded into its basis's map holds the basis's token (basis.own)
	}
	if p.hasRangeKey {
		n--
	}
	if kept != 0 {
		n = len(p.nonKeyNoVerFs) - bits.OnesCount64(kept) + 1 // those written at most, and the write token's
	}
	if p.s.Version >= 0 {
		n += 2
	}
	if bs != nil {
		n++
	}
	if uc != nil {
		n += len(uc.values)
	}
	return max(n, 0)
}

// updateNames gives an update's builder its names: the plan's when every
// attribute is named (allUsed), else those of the values written and the
// version's.
func (p *plan) updateNames(eb *exprBuilder, allUsed bool) {
	if allUsed {
		eb.names = p.allNames
		return
	}
	eb.names = make(map[string]string, len(eb.values)+2)
	for ph := range eb.values {
		if len(ph) > 2 && ph[1] == 'a' {
			eb.names["#"+ph[1:]] = p.allNamesLookup(ph)
		}
	}
	maps.Copy(eb.names, p.versionNames)
	eb.owned = true
}

// writeToken adds to a versioned write the SET of the write token (none
// when token is nil: tokens off).
func (p *plan) writeToken(eb *exprBuilder, token []byte) {
	if p.tokenAttr == "" {
		return
	}
	eb.set(tokenNamePH, tokenValuePH)
	p.tokenValue(eb, token)
}

// tokenValue adds the write token's value (writeToken without its action,
// for an UpdateExpression written already: plan.fullSet).
func (p *plan) tokenValue(eb *exprBuilder, token []byte) {
	if p.tokenAttr == "" {
		return
	}
	eb.values[tokenValuePH] = &types.AttributeValueMemberB{Value: token}
}

// setAction writes the SET action of the non-key field i, other than the
// version, of an item that holds it: a creation time is set once, by the
// write that creates the item (if_not_exists).
func (p *plan) setAction(eb *exprBuilder, i int) {
	f := &p.s.Fields[i]
	if i == p.s.Created {
		eb.setIfAbsent(f.NamePH, f.ValuePH)
		return
	}
	eb.set(f.NamePH, f.ValuePH)
}

// maxCachedFields is the most attributes (besides the key and the version)
// a type may model for its SaveUpdate expressions to be cached
// (saveUpdateExpr): one bit of a uint64 each.
const maxCachedFields = 64

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
func (p *plan) saveUpdateExpr(missing, kept uint64) (string, map[string]string) {
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
		for n, i := range p.nonKeyNoVerFs {
			if kept&(1<<n) != 0 {
				delete(e.names, p.s.Fields[i].NamePH)
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
func (p *plan) setUpdateExpr(missing, kept uint64) string {
	var eb exprBuilder
	for n, i := range p.nonKeyNoVerFs {
		if kept&(1<<n) != 0 {
			continue
		}
		if missing&(1<<n) != 0 {
			eb.remove(p.s.Fields[i].NamePH)
		} else {
			p.setAction(&eb, i)
		}
	}
	if p.s.Version >= 0 {
		eb.set(p.versionPH, newVersionPH)
		if p.tokenAttr != "" {
			eb.set(tokenNamePH, tokenValuePH)
		}
	}
	return eb.update()
}

// advanceVersion adds to an update that writes no version condition
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
func (p *plan) advanceVersion(eb *exprBuilder, first int64, noVersion bool) string {
	if noVersion {
		eb.set(p.versionPH, newVersionPH)
		eb.values[newVersionPH] = numberAV(first)
		eb.values[nullTypePH] = nullTypeAV
		eb.values[zeroVersionPH] = numberAV(0)
		return "attribute_type(" + p.versionPH + ", " + nullTypePH + ") OR " + p.versionPH + " = " + zeroVersionPH
	}
	eb.values[newVersionPH] = numberAV(p.verStep)
	eb.values[maxVersionPH] = numberAV(p.maxVersion - p.verStep + 1) // condClobber: 0 <= stored < :vm
	eb.values[zeroVersionPH] = numberAV(0)
	if first == p.verStep {
		eb.addTo(clauseAdd, p.versionPH, newVersionPH)
		return p.condClobber
	}
	eb.action(clauseSet).WriteString(p.versionPH + " = if_not_exists(" + p.versionPH + ", " + baseVersionPH + ") + " + newVersionPH)
	eb.values[baseVersionPH] = numberAV(first - p.verStep)
	return "(" + p.condClobber + ") AND NOT " + p.versionPH + " = " + zeroVersionPH
}

// zeroIsNoVersion returns the version attribute when a stored 0 needs a
// request of its own from advanceVersion (the first version written is not
// the step), else "": see storedNulls.
func (p *plan) zeroIsNoVersion() string {
	if p.s.Version >= 0 && (p.verClock || p.verStart != p.verStep) {
		return p.versionAttr[0]
	}
	return ""
}

// withCreatedCond ANDs to a write's condition that the stored creation
// time is absent or the one item carries, for writes that cannot keep the
// stored one with if_not_exists or learn it from ReturnValues (PutItem, and
// transaction members). names and values may be shared (plan maps) or nil:
// they are copied, never modified.
func (p *plan) withCreatedCond(cond string, names map[string]string, values map[string]types.AttributeValue, item map[string]types.AttributeValue) (string, map[string]string, map[string]types.AttributeValue) {
	f := &p.s.Fields[p.s.Created]
	eb := exprBuilder{cond: cond, names: names, values: make(map[string]types.AttributeValue, len(values)+1)}
	maps.Copy(eb.values, values)
	eb.and("attribute_not_exists("+f.NamePH+") OR "+f.NamePH+" = "+f.ValuePH, nil)
	eb.name(f.NamePH, f.Name)
	eb.values[f.ValuePH] = item[f.Name]
	return eb.cond, eb.names, eb.values
}

// allNamesLookup maps a value placeholder ":a<i>" to the attribute name.
func (p *plan) allNamesLookup(vph string) string {
	return p.allNames["#"+vph[1:]]
}

// putParts is the expression set of one PutItem or DeleteItem.
type putParts struct {
	cond   string
	names  map[string]string
	values map[string]types.AttributeValue
}

// deleteItem returns the transaction member deleting key from table under
// pc's condition, asking for the stored item when the condition fails.
func (pc putParts) deleteItem(table string, key map[string]types.AttributeValue) *types.Delete {
	return &types.Delete{
		TableName:                           &table,
		Key:                                 key,
		ConditionExpression:                 strPtr(pc.cond),
		ExpressionAttributeNames:            pc.names,
		ExpressionAttributeValues:           pc.values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// buildPutCond builds the condition of a versioned PutItem (or DeleteItem,
// with clobber meaning no version condition). bs, when not nil, pins the
// write to the stored state it was computed from (basisCond).
func (p *plan) buildPutCond(held int64, clobber bool, uc *userCond, bs *basis) putParts {
	if p.s.Version >= 0 && !clobber && bs == nil && uc == nil {
		// The version condition alone (a SavePut or Delete of an item
		// held): what the builder below would return, without it.
		values := make(map[string]types.AttributeValue, 2)
		return putParts{cond: p.versionCond(held, bs, values), names: p.putNames, values: values}
	}
	eb := exprBuilder{values: map[string]types.AttributeValue{}}
	if p.s.Version >= 0 && !clobber {
		eb.and(p.versionCond(held, bs, eb.values), nil)
		eb.names = p.putNames
	}
	eb.and(p.basisCond(bs, eb.values))
	cond, names, values := eb.finish(uc)
	return putParts{cond: cond, names: names, values: values}
}

// nullTypeAV is the value of nullTypePH: the type name NULL, for
// attribute_type.
var nullTypeAV = &types.AttributeValueMemberS{Value: "NULL"}

func isSet(av types.AttributeValue) bool {
	switch av.(type) {
	case *types.AttributeValueMemberSS, *types.AttributeValueMemberNS, *types.AttributeValueMemberBS:
		return true
	}
	return false
}

// numberAV returns n as an N. From 100 on (below, strconv's text is
// static), the value and its text are one allocation: numBox.
func numberAV(n int64) *types.AttributeValueMemberN {
	if 0 <= n && n < 100 {
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
	}
	nb := new(numBox)
	b := strconv.AppendInt(nb.text[:0], n, 10) // fits: at most 20 bytes
	nb.av.Value = unsafe.String(&nb.text[0], len(b))
	return &nb.av
}

// numBox is an N and the bytes of its text, allocated together; the text is
// never written again once the N holds it.
type numBox struct {
	av   types.AttributeValueMemberN
	text [20]byte
}

// heldAV returns the value of the version held (heldVersionPH): the basis
// item's own version value when it holds held as that text (the item the
// Table wrote last holds the one its write made; shared, as the values of
// a request and of the item it remembers are: nobody modifies one), else a
// new one.
func (p *plan) heldAV(held int64, bs *basis) *types.AttributeValueMemberN {
	if bs != nil {
		if o, ok := bs.item[p.versionAttr[0]].(*types.AttributeValueMemberN); ok {
			var buf [20]byte
			if string(strconv.AppendInt(buf[:0], held, 10)) == o.Value {
				return o
			}
		}
	}
	return numberAV(held)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// exprPtr is strPtr, without allocating for the type's own version
// conditions and its full SET (fullSet).
func (p *plan) exprPtr(s string) *string {
	switch {
	case p.fullSetPtr != nil && s == p.fullSet:
		return p.fullSetPtr
	case p.condMatchPtr != nil && s == p.condMatch:
		return p.condMatchPtr
	case p.condCreatePtr != nil && s == p.condCreate:
		return p.condCreatePtr
	case p.condMatchTokenPtr != nil && s == p.condMatchToken:
		return p.condMatchTokenPtr
	}
	return strPtr(s)
}

// strPtr returns nil for "", else a pointer to s.
func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
