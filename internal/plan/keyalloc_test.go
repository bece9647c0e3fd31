package plan

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// A Query's check of its key condition builds no slices of its own for
// the table's key or for placing the terms (issue 40: a Query page
// allocates no more than before keys of several attributes); the table's
// key fields read as the schema gives them.
func TestKeyConditionPlacedWithoutAllocating(t *testing.T) {
	r := kcRules(t)
	hash, rng, known := r.ListingKey("")
	if !known || len(hash) != 1 || hash[0] != r.S.Hash || len(rng) != 1 || rng[0] != r.S.Range {
		t.Fatalf("ListingKey: %v %v %v, want [%d] [%d] true", hash, rng, known, r.S.Hash, r.S.Range)
	}
	if cap(hash) != 1 || cap(rng) != 1 {
		t.Errorf("ListingKey: capacities %d, %d: an append would write into the shared table", cap(hash), cap(rng))
	}
	if a := testing.AllocsPerRun(100, func() { r.ListingKey("") }); a != 0 {
		t.Errorf("ListingKey: %v allocations, want 0", a)
	}
	e, err := expression.NewBuilder().WithKeyCondition(expression.Key("p").Equal(expression.Value("a")).
		And(expression.Key("n").Between(expression.Value(1), expression.Value(2)))).Build()
	if err != nil {
		t.Fatal(err)
	}
	terms, ok := ParseKeyCondition(*e.KeyCondition(), e.Names(), e.Values())
	if !ok {
		t.Fatal("ParseKeyCondition: not read")
	}
	fail := func(format string, args ...any) error { return fmt.Errorf(format, args...) }
	kc := &KeyCond{}
	if a := testing.AllocsPerRun(100, func() {
		*kc = KeyCond{Terms: terms}
		if err := r.placeKeyTerms(kc, "", hash, rng, fail); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("placeKeyTerms: %v allocations, want 0", a)
	}
	if len(kc.Hash) != 1 || kc.Hash[0].Name != "p" || len(kc.Rng) != 1 || kc.Rng[0].Name != "n" {
		t.Errorf("placed: %v, %v", kc.Hash, kc.Rng)
	}
}

// keySlots gives the partition and the sort terms slots apart, in the
// KeyCond when they fit and new ones when not, each of its own capacity.
func TestKeySlotsApart(t *testing.T) {
	for _, c := range [][2]int{{1, 0}, {1, 1}, {2, 2}, {1, 3}, {4, 4}, {3, 4}} {
		var kc KeyCond
		h, r := kc.keySlots(c[0], c[1])
		if len(h) != c[0] || cap(h) != c[0] || len(r) != c[1] || cap(r) != c[1] {
			t.Errorf("%v: len/cap %d/%d, %d/%d", c, len(h), cap(h), len(r), cap(r))
		}
		for i := range h {
			h[i] = &KeyTerm{Name: "h"}
		}
		for _, x := range r {
			if x != nil {
				t.Errorf("%v: a sort slot holds a partition term", c)
			}
		}
	}
}
