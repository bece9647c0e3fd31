package dynamo

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/av"
)

// sameState is the one answer to "is the stored item the one I read": it
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
func (p *plan) sameState(read, cur map[string]types.AttributeValue) bool {
	if read == nil || cur == nil {
		return read == nil && cur == nil
	}
	s := p.s
	if s.Version >= 0 {
		name := s.Fields[s.Version].Name
		va, vb := read[name], cur[name]
		if (va == nil) != (vb == nil) || va != nil && !av.Equal(va, vb) {
			return false
		}
		if !p.sameIncarnation(read, cur) {
			return false
		}
		if _, ok := read[p.tokenAttr]; ok && p.tokenAttr != "" {
			return true // the token names the state
		}
	}
	for _, i := range p.nonKeyNoVerFs {
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

// proves reports whether a stored item found the same state (sameState) as
// read is provably the very state read, not one that left and came back: the
// read carries a random write token, and those never repeat (the tokens a
// transaction derives from its request token do: uniqueToken). Nothing
// proves an absence, an item without a token, or a type without a version.
func (p *plan) proves(read map[string]types.AttributeValue) bool {
	if p.s.Version < 0 || p.tokenAttr == "" {
		return false
	}
	b, ok := read[p.tokenAttr].(*types.AttributeValueMemberB)
	return ok && uniqueToken(b.Value)
}

// sameIncarnation reports whether the stored item cur is the incarnation of
// the item read as incarnationCond sees it: the same write token, or none
// in either. True when the plan writes no tokens.
func (p *plan) sameIncarnation(read, cur map[string]types.AttributeValue) bool {
	if p.tokenAttr == "" {
		return true
	}
	wt, ok := read[p.tokenAttr]
	got, has := cur[p.tokenAttr]
	if !ok {
		return !has
	}
	return has && av.Equal(wt, got)
}
