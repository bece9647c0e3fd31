package plan

import (
	"strings"
	"testing"
)

// Numbers DynamoDB stores pass checkNumber; the others (no number, too
// many significant digits, magnitudes out of range) are refused, as
// DynamoDB Local accepts and refuses them ("+1" and a zero's exponent of 8
// digits are numbers; an exponent beyond int32 is none).
func TestCheckNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "0e999", "0.000e-999", "1", "-1.5", "1e-130", "-1E-130", "0.1e-129", "10e-131",
		"+1", ".5", "5.", "0e99999999", "1e0000000000001",
		"9.9999999999999999999999999999999999999e125", "-9.9999999999999999999999999999999999999E+125",
		"12345678901234567890123456789012345678", "1234567890123456789012345678901234567800000",
		"0.00012345678901234567890123456789012345678", "100000000000000000000000000000000000000000"} {
		if err := CheckNumber(s); err != nil {
			t.Errorf("checkNumber(%q) = %v", s, err)
		}
	}
	for _, s := range []string{"", "x", "1e", "123456789012345678901234567890123456789", "1.00000000000000000000000000000000000001",
		"1e126", "-1e126", "10e125", "99.9999999999999999999999999999999999999e124", "1e-131", "0.1e-130", "1e99999999999999999999",
		"0." + strings.Repeat("0", 9950) + "1e100000", "1" + strings.Repeat("0", 200),
		"0e999999999999", "NaN", "Inf", "0x1", " 1", "1 ", "--1", "1.2.3", "1_0", "-", ".", "e1", "1e+"} {
		if err := CheckNumber(s); err == nil {
			t.Errorf("checkNumber(%q) accepted", s)
		}
	}
}
