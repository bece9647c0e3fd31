package dynamo

import (
	"fmt"
	"strings"
)

// The one rule of which WriteOptions a call takes. Every WriteOption
// compiles on every call that takes WriteOptions (and on the batch writes,
// whose BatchWriteOption every WriteOption is), because the contract fixes
// their signatures; what a call cannot honour is refused before anything
// is sent, with ErrInvalidInput naming the option and the fix. writeRules
// says, for each call and kind of option, whether the call takes it, takes
// it and does nothing, or refuses it and why; every call asks
// writeOptions.refuse, and the table in docs/mapper.md is generated from
// writeRules (TestRefusalTableInDoc). Checks of the values given (a
// ChangedFrom read of another version, a TxCheck left with nothing to
// check) stay with the code that reads the values.

// writeCall is a call that takes WriteOptions, as writeRules keys it.
type writeCall uint8

const (
	callSave writeCall = iota
	callSaveGuarded
	callUpdate
	callUpdateGuarded
	callAdd
	callDelete
	callTxSave
	callTxDelete
	callTxCheck
	callTxnSave
	callTxnDelete
	callBatchSave
	callBatchDelete
	numWriteCalls
)

// writeCallNames are the calls' names in the table in docs/mapper.md (doc) and
// in errors (msg).
var writeCallNames = [numWriteCalls]struct{ doc, msg string }{
	callSave:          {"Save", "Save"},
	callSaveGuarded:   {"Save with GuardedBy", "Save with GuardedBy"},
	callUpdate:        {"Update", "Update"},
	callUpdateGuarded: {"Update with GuardedBy", "Update with GuardedBy"},
	callAdd:           {"Add", "Add"},
	callDelete:        {"Delete", "Delete"},
	callTxSave:        {"TxSave", "TxSave"},
	callTxDelete:      {"TxDelete", "TxDelete"},
	callTxCheck:       {"TxCheck", "TxCheck"},
	callTxnSave:       {"Table.In(tx).Save", "Save in a Transact function"},
	callTxnDelete:     {"Table.In(tx).Delete", "Delete in a Transact function"},
	callBatchSave:     {"BatchSave", "BatchSave"},
	callBatchDelete:   {"BatchDelete", "BatchDelete"},
}

// optKind is a kind of WriteOption, as writeRules keys it. SaveUpdate, the
// default, is no kind: every call takes it.
type optKind uint8

const (
	kindSkipNulls   optKind = iota // WithSaveBehavior(SaveUpdateSkipNulls)
	kindPut                        // WithSaveBehavior(SavePut)
	kindClobber                    // WithSaveBehavior(SaveClobber)
	kindAppendSet                  // WithSaveBehavior(SaveAppendSet)
	kindBadBehavior                // WithSaveBehavior of a value no Save* constant has
	kindIf
	kindMustExist
	kindGuardedBy // with at least one check: GuardedBy() is no guard
	kindChangedFrom
	kindIdemKey
	numOptKinds
)

// optKindNames are the kinds' column heads in the table in docs/mapper.md; an
// error names the option as given (writeOptions.kindName).
var optKindNames = [numOptKinds]string{
	kindSkipNulls: "SkipNulls", kindPut: "Put", kindClobber: "Clobber", kindAppendSet: "AppendSet",
	kindBadBehavior: "other", kindIf: "If", kindMustExist: "MustExist", kindGuardedBy: "GuardedBy",
	kindChangedFrom: "ChangedFrom", kindIdemKey: "IdempotencyKey",
}

// refusal is why a call refuses a kind of option: mark is its letter in
// the table in docs/mapper.md, doc the short reason there, why what the error
// says after naming the option (the reason and the fix).
type refusal struct {
	mark byte
	doc  string
	why  string
}

// optRule is what a call does with a kind of option: refuses it (refused
// not nil), or takes it — and does nothing with it (inert).
type optRule struct {
	refused *refusal
	inert   bool
}

// The reasons of refusal, in the order of the legend in docs/mapper.md.
var (
	refuseBadBehavior = &refusal{'u', "not a save behaviour",
		"a value that is no save behaviour; use one of the dynamo.Save* constants"}
	refuseAddBehavior = &refusal{'a', "Add adds without a version check",
		"Add always adds in DynamoDB without a version condition; remove WithSaveBehavior"}
	refuseAddGuard = &refusal{'g', "Add returns the item as stored, a transaction none; use Update",
		"Add returns the item as DynamoDB stored it, and a guarded write is a transaction, which returns no item; use Update with GuardedBy"}
	refuseDeleteBehavior = &refusal{'d', "only SaveClobber means anything to a delete or a check",
		"a delete or a check writes no attributes, so only WithSaveBehavior(SaveClobber) (no version check) means anything to it; remove WithSaveBehavior"}
	refuseTxBehavior = &refusal{'t', "a transaction returns no stored item",
		"the saved copy of such a save is the item as stored after the write, and a transaction returns no items (a write with GuardedBy is one); use SaveUpdate or SavePut, or Table.Save without GuardedBy"}
	refuseTxnBehavior = &refusal{'c', "the commit writes what the function computed",
		"the commit must write what the function computed from what it read; use SaveUpdate or SavePut"}
	refuseTxnDeleteBehavior = &refusal{'x', "a delete in Transact takes only If",
		"a delete in a Transact function takes only If conditions; remove WithSaveBehavior"}
	refuseBatch = &refusal{'b', "a batch write carries no condition",
		"a batch write carries no condition and always replaces or deletes whole items, so only WithSaveBehavior(SaveClobber) and WithRetry apply to it; " +
			"remove the options named, or use Save or Delete in a loop or a transaction (Mapper.WriteTx) for conditional writes"}
	refuseChangedFrom = &refusal{'f', "only Save sends the changes from an item read",
		"only Save sends the changes from an item read; remove ChangedFrom"}
	refuseChangedFromUpdate = &refusal{'r', "Update knows the stored item itself",
		"Update writes what its function computed from the item it read itself; remove ChangedFrom"}
	refuseChangedFromTx = &refusal{'w', "a transaction writes whole items",
		"a transaction member (or a write with GuardedBy) writes the whole item; remove ChangedFrom"}
	refuseIdemKey = &refusal{'i', "only Update and Add record an idempotency key",
		"only Update (without GuardedBy) and Add record the key in the item with their change; remove IdempotencyKey, or make the change with Update or Add"}
)

// writeRules is the table: writeRules[call][kind]. Every pair not named by
// a row of buildWriteRules is taken.
var writeRules = buildWriteRules()

func buildWriteRules() (rules [numWriteCalls][numOptKinds]optRule) {
	behaviours := []optKind{kindSkipNulls, kindPut, kindClobber, kindAppendSet}
	partial := []optKind{kindSkipNulls, kindClobber, kindAppendSet} // whose saved copy is the item as stored
	deletes := []writeCall{callDelete, callTxDelete, callTxCheck}
	for _, row := range []struct {
		calls []writeCall
		kinds []optKind
		rule  optRule
	}{
		{allWriteCalls(), []optKind{kindBadBehavior}, optRule{refused: refuseBadBehavior}},
		{[]writeCall{callAdd}, behaviours, optRule{refused: refuseAddBehavior}},
		{[]writeCall{callAdd}, []optKind{kindGuardedBy}, optRule{refused: refuseAddGuard}},
		{deletes, []optKind{kindSkipNulls, kindPut, kindAppendSet}, optRule{refused: refuseDeleteBehavior}},
		{[]writeCall{callTxSave, callSaveGuarded, callUpdateGuarded}, partial, optRule{refused: refuseTxBehavior}},
		{[]writeCall{callTxnSave}, partial, optRule{refused: refuseTxnBehavior}},
		{[]writeCall{callTxnDelete}, behaviours, optRule{refused: refuseTxnDeleteBehavior}},
		{[]writeCall{callBatchSave, callBatchDelete},
			[]optKind{kindSkipNulls, kindPut, kindAppendSet, kindIf, kindMustExist, kindGuardedBy, kindChangedFrom}, optRule{refused: refuseBatch}},
		{append([]writeCall{callAdd, callTxnDelete}, deletes...), []optKind{kindChangedFrom}, optRule{refused: refuseChangedFrom}},
		{[]writeCall{callUpdate, callUpdateGuarded}, []optKind{kindChangedFrom}, optRule{refused: refuseChangedFromUpdate}},
		{[]writeCall{callTxSave, callSaveGuarded, callTxnSave}, []optKind{kindChangedFrom}, optRule{refused: refuseChangedFromTx}},
		{[]writeCall{callSave, callSaveGuarded, callUpdateGuarded, callDelete, callTxSave, callTxDelete, callTxCheck,
			callTxnSave, callTxnDelete, callBatchSave, callBatchDelete}, []optKind{kindIdemKey}, optRule{refused: refuseIdemKey}},
		// MustExist is a rule of Update and Add: a Save of an unsaved item
		// creates it (require an existing item there with If).
		{append([]writeCall{callSave, callSaveGuarded, callTxSave, callTxnSave, callTxnDelete}, deletes...),
			[]optKind{kindMustExist}, optRule{inert: true}},
	} {
		for _, c := range row.calls {
			for _, k := range row.kinds {
				if rules[c][k] != (optRule{}) {
					panic(fmt.Sprintf("dynamo: writeRules: %s and %s ruled twice", writeCallNames[c].doc, optKindNames[k]))
				}
				rules[c][k] = row.rule
			}
		}
	}
	return rules
}

func allWriteCalls() []writeCall {
	out := make([]writeCall, numWriteCalls)
	for c := range numWriteCalls {
		out[c] = c
	}
	return out
}

// has reports whether wo holds an option of kind k.
func (wo *writeOptions) has(k optKind) bool {
	switch k {
	case kindSkipNulls:
		return wo.behavior == SaveUpdateSkipNulls
	case kindPut:
		return wo.behavior == SavePut
	case kindClobber:
		return wo.behavior == SaveClobber
	case kindAppendSet:
		return wo.behavior == SaveAppendSet
	case kindBadBehavior:
		return wo.behavior < SaveUpdate || wo.behavior > SaveAppendSet
	case kindIf:
		return len(wo.ifs) > 0
	case kindMustExist:
		return wo.mustExist
	case kindGuardedBy:
		return len(wo.guards) > 0
	case kindChangedFrom:
		return wo.fromSet
	case kindIdemKey:
		return wo.idemSet
	}
	return false
}

// kindName names the option of kind k that wo holds, as given.
func (wo *writeOptions) kindName(k optKind) string {
	if k <= kindBadBehavior {
		return "WithSaveBehavior(" + wo.behavior.String() + ")"
	}
	return optKindNames[k]
}

// refuse returns the error of call, on table, given the options wo holds,
// when writeRules refuses one: it names every option refused for the same
// reason as the first, and says why and the fix. nil when the call takes
// them all. Save and Update given GuardedBy checks are their guarded rows.
// It is to be called before anything is sent.
func (wo *writeOptions) refuse(call writeCall, table string) error {
	if wo.behavior == SaveUpdate && len(wo.ifs) == 0 && !wo.mustExist && len(wo.guards) == 0 && !wo.fromSet && !wo.idemSet {
		return nil // no option of any kind: the common case, without a loop
	}
	if len(wo.guards) > 0 {
		switch call {
		case callSave:
			call = callSaveGuarded
		case callUpdate:
			call = callUpdateGuarded
		}
	}
	var first *refusal
	var names []string
	for k := range numOptKinds {
		r := writeRules[call][k].refused
		if r == nil || first != nil && r != first || !wo.has(k) {
			continue
		}
		first = r
		names = append(names, wo.kindName(k))
	}
	if first == nil {
		return nil
	}
	return fmt.Errorf("%w: %s on table %q with %s: %s", ErrInvalidInput, writeCallNames[call].msg, table, strings.Join(names, ", "), first.why)
}
