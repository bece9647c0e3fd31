package ident

import (
	"strings"
	"testing"
)

func TestIdent(t *testing.T) {
	if a, b := RandomHex(8), RandomHex(8); len(a) != 16 || a == b {
		t.Errorf("RandomHex(8) = %q, %q; want 16 hex digits, different", a, b)
	}
	o1, o2 := Owner("x"), Owner("x")
	if o1 == o2 || !strings.Contains(o1, "-") {
		t.Errorf("Owner = %q, %q; want host-suffix, different", o1, o2)
	}
}
