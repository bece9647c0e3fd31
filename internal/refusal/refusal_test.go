package refusal

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ddbkit/dynamo/internal/errs"
	"github.com/ddbkit/dynamo/internal/plan"
)

// The guide's table of what each call does with each kind of WriteOption
// (docs/mapper.md, "Options and retries") is Rules, cell by cell, with
// every reason's letter explained once.
func TestRefusalTableInDoc(t *testing.T) {
	doc, err := os.ReadFile("../../docs/mapper.md")
	if err != nil {
		t.Fatal(err)
	}
	want := DocTable()
	if !strings.Contains(string(doc), want) {
		t.Errorf("docs/mapper.md does not hold the table Rules makes; put this in its place:\n%s", want)
	}
	marks := map[byte]bool{}
	for _, r := range Reasons {
		if marks[r.Mark] || r.Mark == '.' || r.Mark == '-' {
			t.Errorf("mark %c of %q is taken", r.Mark, r.Doc)
		}
		marks[r.Mark] = true
	}
	for c := range NumCalls {
		for k := range NumKinds {
			if r := Rules[c][k].Refused; r != nil && !slices.Contains(Reasons, r) {
				t.Errorf("%s/%s: reason %q is not in the legend", CallNames[c].Doc, KindNames[k], r.Doc)
			}
		}
	}
}

// Check takes a call given no option, names every option refused for the
// first reason (not those of another), and reads Save and Update given
// GuardedBy as their guarded rows.
func TestCheckNamesTheOptionsOfTheFirstReason(t *testing.T) {
	if err := Check(Save, "T", Given{}); err != nil {
		t.Errorf("no options: %v", err)
	}
	if err := Check(Update, "T", Given{Behavior: plan.SaveClobber}); err != nil {
		t.Errorf("Update with SaveClobber: %v", err)
	}
	err := Check(BatchSave, "T", Given{Behavior: plan.SavePut, If: true, IdemKey: true})
	want := `dynamo: invalid input: BatchSave on table "T" with WithSaveBehavior(SavePut), If: ` + batch.Why
	if !errors.Is(err, errs.ErrInvalidInput) || err.Error() != want {
		t.Errorf("err = %v;\nwant %s", err, want)
	}
	err = Check(Update, "T", Given{Behavior: plan.SaveClobber, GuardedBy: true})
	want = `dynamo: invalid input: Update with GuardedBy on table "T" with WithSaveBehavior(SaveClobber): ` + txBehavior.Why
	if err == nil || err.Error() != want {
		t.Errorf("err = %v;\nwant %s", err, want)
	}
	err = Check(Delete, "T", Given{Behavior: plan.SaveBehavior(42)})
	if err == nil || !strings.Contains(err.Error(), "with WithSaveBehavior(SaveBehavior(42)): "+badBehavior.Why) {
		t.Errorf("err = %v; want the bad behaviour named", err)
	}
}

// Given.Has tells every kind from the others: a Given holding one kind
// has that kind only.
func TestGivenHasOneKindEach(t *testing.T) {
	one := map[Kind]Given{
		SkipNulls: {Behavior: plan.SaveUpdateSkipNulls}, Put: {Behavior: plan.SavePut},
		Clobber: {Behavior: plan.SaveClobber}, AppendSet: {Behavior: plan.SaveAppendSet},
		BadBehavior: {Behavior: 42}, If: {If: true}, MustExist: {MustExist: true},
		GuardedBy: {GuardedBy: true}, ChangedFrom: {ChangedFrom: true}, IdemKey: {IdemKey: true},
	}
	if len(one) != int(NumKinds) {
		t.Fatalf("%d kinds tested of %d", len(one), NumKinds)
	}
	for k, g := range one {
		for j := range NumKinds {
			if g.Has(j) != (j == k) {
				t.Errorf("Given of %s: Has(%s) = %v", KindNames[k], KindNames[j], g.Has(j))
			}
		}
	}
}
