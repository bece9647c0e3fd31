package refusal

import (
	"fmt"
	"strings"
)

// Reason is why a call refuses a kind of option: Mark is its letter in
// the table in docs/mapper.md, Doc the short reason there, Why what the
// error says after naming the option (the reason and the fix).
type Reason struct {
	Mark byte
	Doc  string
	Why  string
}

// Rule is what a call does with a kind of option: refuses it (Refused
// not nil), or takes it — and does nothing with it (Inert).
type Rule struct {
	Refused *Reason
	Inert   bool
}

// The reasons of refusal, in the order of the legend in docs/mapper.md.
var (
	badBehavior = &Reason{'u', "not a save behaviour",
		"a value that is no save behaviour; use one of the dynamo.Save* constants"}
	addBehavior = &Reason{'a', "Add adds without a version check",
		"Add always adds in DynamoDB without a version condition; remove WithSaveBehavior"}
	addGuard = &Reason{'g', "Add returns the item as stored, a transaction none; use Update",
		"Add returns the item as DynamoDB stored it, and a guarded write is a transaction, which returns no item; use Update with GuardedBy"}
	deleteBehavior = &Reason{'d', "only SaveClobber means anything to a delete or a check",
		"a delete or a check writes no attributes, so only WithSaveBehavior(SaveClobber) (no version check) means anything to it; remove WithSaveBehavior"}
	txBehavior = &Reason{'t', "a transaction returns no stored item",
		"the saved copy of such a save is the item as stored after the write, and a transaction returns no items (a write with GuardedBy is one); use SaveUpdate or SavePut, or Table.Save without GuardedBy"}
	txnBehavior = &Reason{'c', "the commit writes what the function computed",
		"the commit must write what the function computed from what it read; use SaveUpdate or SavePut"}
	txnDeleteBehavior = &Reason{'x', "a delete in Transact takes only If",
		"a delete in a Transact function takes only If conditions; remove WithSaveBehavior"}
	batch = &Reason{'b', "a batch write carries no condition",
		"a batch write carries no condition and always replaces or deletes whole items, so only WithSaveBehavior(SaveClobber) and WithRetry apply to it; " +
			"remove the options named, or use Save or Delete in a loop or a transaction (Mapper.WriteTx) for conditional writes"}
	changedFrom = &Reason{'f', "only Save sends the changes from an item read",
		"only Save sends the changes from an item read; remove ChangedFrom"}
	changedFromUpdate = &Reason{'r', "Update knows the stored item itself",
		"Update writes what its function computed from the item it read itself; remove ChangedFrom"}
	changedFromTx = &Reason{'w', "a transaction writes whole items",
		"a transaction member (or a write with GuardedBy) writes the whole item; remove ChangedFrom"}
	idemKey = &Reason{'i', "only Update and Add record an idempotency key",
		"only Update (without GuardedBy) and Add record the key in the item with their change; remove IdempotencyKey, or make the change with Update or Add"}
)

// Reasons lists the reasons, in the order of the legend in docs/mapper.md.
var Reasons = []*Reason{badBehavior, addBehavior, addGuard, deleteBehavior, txBehavior,
	txnBehavior, txnDeleteBehavior, batch, changedFrom, changedFromUpdate, changedFromTx, idemKey}

// Rules is the table: Rules[call][kind]. Every pair not named by a row of
// buildRules is taken.
var Rules = buildRules()

func buildRules() (rules [NumCalls][NumKinds]Rule) {
	behaviours := []Kind{SkipNulls, Put, Clobber, AppendSet}
	partial := []Kind{SkipNulls, Clobber, AppendSet} // whose saved copy is the item as stored
	deletes := []Call{Delete, TxDelete, TxCheck}
	for _, row := range []struct {
		calls []Call
		kinds []Kind
		rule  Rule
	}{
		{allCalls(), []Kind{BadBehavior}, Rule{Refused: badBehavior}},
		{[]Call{Add}, behaviours, Rule{Refused: addBehavior}},
		{[]Call{Add}, []Kind{GuardedBy}, Rule{Refused: addGuard}},
		{deletes, []Kind{SkipNulls, Put, AppendSet}, Rule{Refused: deleteBehavior}},
		{[]Call{TxSave, SaveGuarded, UpdateGuarded}, partial, Rule{Refused: txBehavior}},
		{[]Call{TxnSave}, partial, Rule{Refused: txnBehavior}},
		{[]Call{TxnDelete}, behaviours, Rule{Refused: txnDeleteBehavior}},
		{[]Call{BatchSave, BatchDelete},
			[]Kind{SkipNulls, Put, AppendSet, If, MustExist, GuardedBy, ChangedFrom}, Rule{Refused: batch}},
		{append([]Call{Add, TxnDelete}, deletes...), []Kind{ChangedFrom}, Rule{Refused: changedFrom}},
		{[]Call{Update, UpdateGuarded}, []Kind{ChangedFrom}, Rule{Refused: changedFromUpdate}},
		{[]Call{TxSave, SaveGuarded, TxnSave}, []Kind{ChangedFrom}, Rule{Refused: changedFromTx}},
		{[]Call{Save, SaveGuarded, UpdateGuarded, Delete, TxSave, TxDelete, TxCheck,
			TxnSave, TxnDelete, BatchSave, BatchDelete}, []Kind{IdemKey}, Rule{Refused: idemKey}},
		// MustExist is a rule of Update and Add: a Save of an unsaved item
		// creates it (require an existing item there with If).
		{append([]Call{Save, SaveGuarded, TxSave, TxnSave, TxnDelete}, deletes...),
			[]Kind{MustExist}, Rule{Inert: true}},
	} {
		for _, c := range row.calls {
			for _, k := range row.kinds {
				if rules[c][k] != (Rule{}) {
					panic(fmt.Sprintf("dynamo: refusal.Rules: %s and %s ruled twice", CallNames[c].Doc, KindNames[k]))
				}
				rules[c][k] = row.rule
			}
		}
	}
	return rules
}

func allCalls() []Call {
	out := make([]Call, NumCalls)
	for c := range NumCalls {
		out[c] = c
	}
	return out
}

// DocTable renders Rules as docs/mapper.md shows it: a row per call, a
// column per kind ('.' taken, '-' taken and inert, else the reason's
// mark), and the legend of the reasons.
func DocTable() string {
	w := 0
	for _, n := range CallNames {
		w = max(w, len(n.Doc)+2)
	}
	var b strings.Builder
	line := func(s string) { b.WriteString(strings.TrimRight(s, " ") + "\n") }
	line(strings.Repeat(" ", w) + strings.Join(KindNames[:], " "))
	for c := range NumCalls {
		row := fmt.Sprintf("%-*s", w, CallNames[c].Doc)
		for k := range NumKinds {
			mark := "."
			switch r := Rules[c][k]; {
			case r.Refused != nil:
				mark = string(r.Refused.Mark)
			case r.Inert:
				mark = "-"
			}
			row += fmt.Sprintf("%-*s", len(KindNames[k])+1, mark)
		}
		line(row)
	}
	b.WriteString("\n")
	for _, r := range Reasons {
		line(string(r.Mark) + "  " + r.Doc)
	}
	return b.String()
}
