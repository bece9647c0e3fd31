// Package refusal is the one table of which WriteOptions a call takes.
// Every WriteOption compiles on every call that takes WriteOptions (and on
// the batch writes, whose BatchWriteOption every WriteOption is), because
// the contract fixes their signatures; what a call cannot honour is
// refused before anything is sent, with ErrInvalidInput naming the option
// and the fix. Rules says, for each Call and Kind of option, whether the
// call takes it, takes it and does nothing (Inert), or refuses it and why;
// every call of the root asks Check (through writeOptions.refuse), and the
// table in docs/mapper.md is DocTable's rendering of Rules
// (TestRefusalTableInDoc). Checks of the values given (a ChangedFrom read
// of another version, a TxCheck left with nothing to check) stay with the
// code that reads the values. It is pure: no I/O, no state but the table.
package refusal

import (
	"fmt"
	"strings"

	"github.com/ddbkit/dynamo/internal/errs"
	"github.com/ddbkit/dynamo/internal/plan"
)

// Call is a call that takes WriteOptions, as Rules keys it.
type Call uint8

// The calls, in the order of the rows of the table in docs/mapper.md.
const (
	Save Call = iota
	SaveGuarded
	Update
	UpdateGuarded
	Add
	Delete
	TxSave
	TxDelete
	TxCheck
	TxnSave // Save in a Transact function
	TxnDelete
	BatchSave
	BatchDelete
	NumCalls
)

// CallNames are the calls' names in the table in docs/mapper.md (Doc) and
// in errors (Msg).
var CallNames = [NumCalls]struct{ Doc, Msg string }{
	Save:          {"Save", "Save"},
	SaveGuarded:   {"Save with GuardedBy", "Save with GuardedBy"},
	Update:        {"Update", "Update"},
	UpdateGuarded: {"Update with GuardedBy", "Update with GuardedBy"},
	Add:           {"Add", "Add"},
	Delete:        {"Delete", "Delete"},
	TxSave:        {"TxSave", "TxSave"},
	TxDelete:      {"TxDelete", "TxDelete"},
	TxCheck:       {"TxCheck", "TxCheck"},
	TxnSave:       {"Table.In(tx).Save", "Save in a Transact function"},
	TxnDelete:     {"Table.In(tx).Delete", "Delete in a Transact function"},
	BatchSave:     {"BatchSave", "BatchSave"},
	BatchDelete:   {"BatchDelete", "BatchDelete"},
}

// Kind is a kind of WriteOption, as Rules keys it. SaveUpdate, the
// default, is no kind: every call takes it.
type Kind uint8

// The kinds, in the order of the columns of the table in docs/mapper.md.
const (
	SkipNulls   Kind = iota // WithSaveBehavior(SaveUpdateSkipNulls)
	Put                     // WithSaveBehavior(SavePut)
	Clobber                 // WithSaveBehavior(SaveClobber)
	AppendSet               // WithSaveBehavior(SaveAppendSet)
	BadBehavior             // WithSaveBehavior of a value no Save* constant has
	If
	MustExist
	GuardedBy // with at least one check: GuardedBy() is no guard
	ChangedFrom
	IdemKey
	NumKinds
)

// KindNames are the kinds' column heads in the table in docs/mapper.md; an
// error names the option as given (Given.name).
var KindNames = [NumKinds]string{
	SkipNulls: "SkipNulls", Put: "Put", Clobber: "Clobber", AppendSet: "AppendSet",
	BadBehavior: "other", If: "If", MustExist: "MustExist", GuardedBy: "GuardedBy",
	ChangedFrom: "ChangedFrom", IdemKey: "IdempotencyKey",
}

// Given is what a call's WriteOptions hold, as the table tells them apart.
type Given struct {
	Behavior    plan.SaveBehavior
	If          bool // an If condition
	MustExist   bool
	GuardedBy   bool // at least one GuardedBy check
	ChangedFrom bool
	IdemKey     bool
}

// Has reports whether g holds an option of kind k.
func (g Given) Has(k Kind) bool {
	switch k {
	case SkipNulls:
		return g.Behavior == plan.SaveUpdateSkipNulls
	case Put:
		return g.Behavior == plan.SavePut
	case Clobber:
		return g.Behavior == plan.SaveClobber
	case AppendSet:
		return g.Behavior == plan.SaveAppendSet
	case BadBehavior:
		return g.Behavior < plan.SaveUpdate || g.Behavior > plan.SaveAppendSet
	case If:
		return g.If
	case MustExist:
		return g.MustExist
	case GuardedBy:
		return g.GuardedBy
	case ChangedFrom:
		return g.ChangedFrom
	case IdemKey:
		return g.IdemKey
	}
	return false
}

// name names the option of kind k that g holds, as given.
func (g Given) name(k Kind) string {
	if k <= BadBehavior {
		return "WithSaveBehavior(" + g.Behavior.String() + ")"
	}
	return KindNames[k]
}

// Check returns the error of call, on table, given the options g, when
// Rules refuses one: it names every option refused for the same reason as
// the first, and says why and the fix. nil when the call takes them all.
// Save and Update given GuardedBy checks are their guarded rows. It is to
// be called before anything is sent.
func Check(call Call, table string, g Given) error {
	if g == (Given{Behavior: plan.SaveUpdate}) {
		return nil // no option of any kind: the common case, without a loop
	}
	if g.GuardedBy {
		switch call {
		case Save:
			call = SaveGuarded
		case Update:
			call = UpdateGuarded
		}
	}
	var first *Reason
	var names []string
	for k := range NumKinds {
		r := Rules[call][k].Refused
		if r == nil || first != nil && r != first || !g.Has(k) {
			continue
		}
		first = r
		names = append(names, g.name(k))
	}
	if first == nil {
		return nil
	}
	return fmt.Errorf("%w: %s on table %q with %s: %s", errs.ErrInvalidInput, CallNames[call].Msg, table, strings.Join(names, ", "), first.Why)
}
