package plan

import (
	"maps"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/schema"
)

// This file builds request expressions. It is pure: no I/O, no reflection
// beyond what the precomputed plan holds, so its behaviour is unit-tested
// on the built strings: expr_test.go (the builder, and the expressions of
// each SaveBehavior); the root's save_test.go and add_test.go check the
// requests as sent.
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
	NewVersionPH  = ":v1"
	maxVersionPH  = ":vm"
	baseVersionPH = ":vb"
	TokenNamePH   = "#wt"
	TokenValuePH  = ":wt"
	heldTokenPH   = ":wh"
	HashNamePH    = "#kh"
	NullTypePH    = ":onull"
	zeroVersionPH = ":vz"
)

// Plan holds what a table's requests need that depends only on the type and
// the mapper's options. Built once by NewTable; read-only afterwards, so the
// maps in it may be handed to the SDK by many goroutines at once (the SDK
// only reads request maps).
type Plan struct {
	S         *schema.Schema
	TokenAttr string // "" when the type is not versioned or tokens are off

	// allNames maps every non-key placeholder (and #wt) to its attribute name:
	// a SaveUpdate or SaveClobber request uses each of them.
	allNames map[string]string
	// VersionNames maps the version placeholder (and #wt) alone.
	VersionNames map[string]string
	// putNames maps the version placeholder alone: the names of a versioned
	// PutItem's or DeleteItem's condition. nil when the type is unversioned.
	putNames map[string]string

	// The names a basis condition (basisCond) uses: the token alone; the
	// hash key alone; every attribute and the hash key.
	tokenNames, HashNames, basisNames map[string]string

	versionPH string // "#a<i>" of the version attribute, "" if none
	// VersionAttr holds the version attribute's name; setAttrs the names
	// of the set attributes (blindAttrs).
	VersionAttr [1]string
	SetAttrs    []string
	condCreate  string // attribute_not_exists(#v) OR #v = :v0 (held 0)
	condMatch   string // #v = :v0
	condClobber string // SaveClobber: the stored version is not negative and leaves room for one more
	// condMatchToken is condMatch ANDed with the basis condition on the
	// write token (tokenBasisCond): the condition of every Update of an
	// item this mapper wrote, computed once.
	condMatchToken string
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
	MaxVersion int64 // the largest version the field's type holds
	// The version settings (tags.go): the first version written (verClock:
	// the clock's Unix milliseconds instead) and the step of every later
	// write; 1 and 1 by default.
	verStart, VerStep int64
	VerClock          bool
	KeyNames          [2]string
	HasRangeKey       bool
	NonKeyFields      []int // indexes into s.fields, in order, excluding keys
	NonKeyNoVerFs     []int // nonKeyFields without the version

	// proj is the ProjectionExpression of reads of the type — every
	// attribute it models and the write token, so that a type modeling
	// some of an item's attributes reads only those — with its names
	// ProjNames; "" when reads
	// take whole items (the struct decodes itself, or the expression would
	// be over DynamoDB's 4 KB).
	Proj      string
	ProjNames map[string]string
}

func NewPlan(s *schema.Schema, tokenAttr string) *Plan {
	p := &Plan{S: s}
	if s.Version >= 0 {
		p.TokenAttr = tokenAttr
	}
	p.KeyNames[0] = s.Fields[s.Hash].Name
	if s.Range >= 0 {
		p.KeyNames[1] = s.Fields[s.Range].Name
		p.HasRangeKey = true
	}
	p.allNames = map[string]string{}
	p.VersionNames = map[string]string{}
	for i := range s.Fields {
		if i == s.Hash || i == s.Range {
			continue
		}
		f := &s.Fields[i]
		p.allNames[f.NamePH] = f.Name
		p.NonKeyFields = append(p.NonKeyFields, i)
		if f.StoredSetKind() != 0 {
			p.SetAttrs = append(p.SetAttrs, f.Name)
		}
		if i != s.Version {
			p.NonKeyNoVerFs = append(p.NonKeyNoVerFs, i)
		}
	}
	if s.Version >= 0 {
		p.versionPH = s.Fields[s.Version].NamePH
		p.VersionAttr[0] = s.Fields[s.Version].Name
		p.VersionNames[p.versionPH] = s.Fields[s.Version].Name
		p.putNames = map[string]string{p.versionPH: s.Fields[s.Version].Name}
		p.condMatch = p.versionPH + " = " + heldVersionPH
		// A version stored as NULL (by another writer) is no version, as
		// a missing one is: an item holding it is saved as unsaved.
		p.condCreate = "attribute_not_exists(" + p.versionPH + ") OR attribute_type(" + p.versionPH + ", " + NullTypePH + ") OR " + p.condMatch
		// A negative stored version (another writer's) is no version
		// either: no Save of this type holds it, and advancing it would
		// store 0 (unsaved) or a version the type refuses.
		p.condClobber = "attribute_not_exists(" + p.versionPH + ") OR (" + p.versionPH + " >= " + zeroVersionPH + " AND " + p.versionPH + " < " + maxVersionPH + ")"
		p.MaxVersion = s.MaxVersion()
		o := &s.Fields[s.Version].Opts
		p.verStart, p.VerStep, p.VerClock = max(o.VersionStart, 1), max(o.VersionStep, 1), o.VersionClock
	}
	if p.TokenAttr != "" {
		p.allNames[TokenNamePH] = p.TokenAttr
		p.VersionNames[TokenNamePH] = p.TokenAttr
		p.tokenNames = map[string]string{TokenNamePH: p.TokenAttr}
		p.condMatchToken = JoinConds(p.condMatch, tokenBasisCond)
	}
	p.fullSet = p.setUpdateExpr(0, 0)
	p.HashNames = map[string]string{HashNamePH: p.KeyNames[0]}
	p.basisNames = make(map[string]string, len(p.allNames)+1)
	maps.Copy(p.basisNames, p.allNames)
	p.basisNames[HashNamePH] = p.KeyNames[0]
	// The write token too: an item read is the state a write pins
	// (ChangedFrom's read, the backfill's scanned items), and that state is
	// named by its token; read without it, it looks like an item no mapper
	// wrote, and a write pinned to it fails as over an item deleted and
	// created again.
	p.Proj, p.ProjNames = s.Projection(TokenNamePH, p.TokenAttr)
	return p
}

// FirstVersion returns the version the first write of an item stores;
// nowMs is the clock's reading in Unix milliseconds (used only with
// versionstart=clock, and never below 1).
func (p *Plan) FirstVersion(nowMs int64) int64 {
	if p.VerClock {
		return max(nowMs, 1)
	}
	return p.verStart
}

// NextVersion returns the version a save by a holder of held writes, and
// false when it would pass the largest version the field holds.
func (p *Plan) NextVersion(held, nowMs int64) (int64, bool) {
	if held == 0 {
		return p.FirstVersion(nowMs), true
	}
	if held > p.MaxVersion-p.VerStep {
		return 0, false
	}
	return held + p.VerStep, true
}

// Advance returns the version after n saves (n ≥ 1; 0 counts as 1) by a
// holder of held, and false when it would pass the largest version the field
// holds: Update's combined write of n changes advances it by one save each.
func (p *Plan) Advance(held, n, nowMs int64) (int64, bool) {
	v := held
	for range max(n, 1) {
		var ok bool
		if v, ok = p.NextVersion(v, nowMs); !ok {
			return 0, false
		}
	}
	return v, true
}

// tokenBasisCond is the basis condition of an item that carries a write
// token (basisCond).
const tokenBasisCond = TokenNamePH + " = " + heldTokenPH

// incarnationCond returns the condition that pins a write of a versioned
// type, under the version condition, to the incarnation of the item read:
// the write token read is still stored, or, when read holds none, none is
// stored — every write of the mapper stores a new token, so an item
// deleted and created again since (its version starting again at 1) is
// told apart. It adds its values to values and returns the names it uses;
// "" when the type has no version or the plan writes no tokens.
// SameIncarnation is its counterpart. An item created again by a writer
// that stores no token, over a read without one, is not told apart.
func (p *Plan) incarnationCond(read, values map[string]types.AttributeValue) (string, map[string]string) {
	if p.S.Version < 0 || p.TokenAttr == "" {
		return "", nil
	}
	if wt, ok := read[p.TokenAttr]; ok {
		values[heldTokenPH] = wt
		return tokenBasisCond, p.tokenNames
	}
	return "attribute_not_exists(" + TokenNamePH + ")", p.tokenNames
}

// Basis is the stored item a write was computed from, when the caller knows
// it (Table.Update read it, or was handed it): Item nil means absent.
type Basis struct {
	Item map[string]types.AttributeValue
	// own: item is a map this Table encoded for an UpdateItem it wrote
	// (sent nowhere: an UpdateItem sends values, not the item), holding
	// the write token, and nothing but the running batch refers to it. A
	// write computed from it may encode its item into it (buildSave):
	// after that encoding only its version and token are read, which it
	// leaves as they were (basisCond, sameState; the version encoded is
	// the one held).
	Own bool
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
func (p *Plan) basisCond(b *Basis, values map[string]types.AttributeValue) (string, map[string]string) {
	if b == nil {
		return "", nil
	}
	if b.Item == nil {
		return "attribute_not_exists(" + HashNamePH + ")", p.HashNames
	}
	s := p.S
	if _, ok := b.Item[p.TokenAttr]; ok && s.Version >= 0 && p.TokenAttr != "" {
		return p.incarnationCond(b.Item, values)
	}
	var c strings.Builder
	c.WriteString("attribute_exists(" + HashNamePH + ")")
	if s.Version >= 0 && p.TokenAttr != "" {
		c.WriteString(" AND attribute_not_exists(" + TokenNamePH + ")")
	}
	for _, i := range p.NonKeyFields {
		if i == s.Version {
			continue // the version condition checks it
		}
		f := &s.Fields[i]
		c.WriteString(" AND ")
		switch av, ok := b.Item[f.Name]; {
		case !ok:
			c.WriteString("attribute_not_exists(" + f.NamePH + ")")
		case isNull(av):
			c.WriteString("(attribute_not_exists(" + f.NamePH + ") OR attribute_type(" + f.NamePH + ", " + NullTypePH + "))")
			values[NullTypePH] = &types.AttributeValueMemberS{Value: "NULL"}
		default:
			vph := ":o" + f.ValuePH[2:]
			c.WriteString(f.NamePH + " = " + vph)
			values[vph] = av
		}
	}
	return c.String(), p.basisNames
}
