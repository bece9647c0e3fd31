package plan

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/schema"
)

// SameState is the one answer to "is the stored item the one I read": it
// reports whether the stored item cur is the state read (nil: absent) that
// a write was computed from, as that write's conditions (the version
// condition and basisCond, If conditions aside) see it — so that when such
// a write fails on cur, computing it again from cur changes nothing, and
// when cur is another state, the write is computed again from cur.
// Settling, Transact (commit checks, read-only validation) and Update
// (conflicts, stale remembered items) all ask it.
//
//   - An absent item is the same only as an absent item: a write computed
//     from absence commits only over absence (basisCond pins it with
//     attribute_not_exists of the key), never over an item someone created
//     meanwhile with version 0 or without a version.
//   - A versioned item: the same version attribute (absent, or equal by
//     value — a NULL only to a NULL), and the same write token when one was
//     read; without one, no token stored and the attributes below.
//   - Otherwise (a type without a version, an item without a token): every
//     modeled attribute as read — absent where it was absent, absent or NULL
//     where it was NULL, equal by value where it held one.
//
// Settling asks more (proves): that cur is the very state read, not one that
// left and came back.
func (p *Plan) SameState(read, cur map[string]types.AttributeValue) bool {
	if read == nil || cur == nil {
		return read == nil && cur == nil
	}
	s := p.S
	if s.Version >= 0 {
		name := s.Fields[s.Version].Name
		va, vb := read[name], cur[name]
		if (va == nil) != (vb == nil) || va != nil && !av.Equal(va, vb) {
			return false
		}
		if !p.SameIncarnation(read, cur) {
			return false
		}
		if _, ok := read[p.TokenAttr]; ok && p.TokenAttr != "" {
			return true // the token names the state
		}
	}
	for _, i := range p.NonKeyNoVerFs {
		name := s.Fields[i].Name
		a, aok := read[name]
		b, bok := cur[name]
		switch {
		case !aok:
			if bok {
				return false
			}
		case isNull(a):
			if bok && !isNull(b) {
				return false
			}
		case !bok || !av.Equal(a, b):
			return false
		}
	}
	return true
}

// Proves reports whether a stored item found the same state (sameState) as
// read is provably the very state read, not one that left and came back: the
// read carries a random write token, and those never repeat (the tokens a
// transaction derives from its request token do: uniqueToken). Nothing
// Proves an absence, an item without a token, or a type without a version.
func (p *Plan) Proves(read map[string]types.AttributeValue) bool {
	if p.S.Version < 0 || p.TokenAttr == "" {
		return false
	}
	b, ok := read[p.TokenAttr].(*types.AttributeValueMemberB)
	return ok && UniqueToken(b.Value)
}

// SameIncarnation reports whether the stored item cur is the incarnation of
// the item read as incarnationCond sees it: the same write token, or none
// in either. True when the plan writes no tokens.
func (p *Plan) SameIncarnation(read, cur map[string]types.AttributeValue) bool {
	if p.TokenAttr == "" {
		return true
	}
	wt, ok := read[p.TokenAttr]
	got, has := cur[p.TokenAttr]
	if !ok {
		return !has
	}
	return has && av.Equal(wt, got)
}

// BlindAttrs returns the attributes a save with behavior b changes without
// reading them (see storedNulls): the version of SaveClobber, the sets of
// SaveAppendSet.
func (p *Plan) BlindAttrs(b SaveBehavior) []string {
	switch b {
	case SaveClobber:
		if p.S.Version >= 0 {
			return p.VersionAttr[:]
		}
	case SaveAppendSet:
		return p.SetAttrs
	}
	return nil
}

// SameAttrs reports whether the stored item cur holds the attributes of the
// encoded item as a write of it would leave them: each modeled non-key
// attribute equal, NULL or absent alike.
func (p *Plan) SameAttrs(item, cur map[string]types.AttributeValue) bool {
	for _, i := range p.NonKeyFields {
		if i == p.S.Created {
			continue // if_not_exists keeps a stored one: not what the write sent
		}
		name := p.S.Fields[i].Name
		a, aok := item[name]
		b, bok := cur[name]
		aNull, bNull := !aok || isNull(a), !bok || isNull(b)
		switch {
		case aNull || bNull:
			if aNull != bNull {
				return false
			}
		case !av.Equal(a, b):
			return false
		}
	}
	return true
}

// CreatedMismatch explains the failure of a write conditioned on the stored
// creation time (withCreatedCond) that sent sent and found the item old; ""
// when the stored creation time is absent or equal, so that condition did
// not fail.
func (p *Plan) CreatedMismatch(old map[string]types.AttributeValue, sent types.AttributeValue) string {
	f := &p.S.Fields[p.S.Created]
	stored, ok := old[f.Name]
	if !ok || av.Equal(stored, sent) {
		return ""
	}
	return fmt.Sprintf("the stored creation time %s is %s, not the %s this write carries: load the item first (a put keeps only the time it holds), or leave %s zero on a new item",
		f.Name, schema.FormatAV(stored, 60), schema.FormatAV(sent, 60), f.GoName)
}
