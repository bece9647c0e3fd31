package av

import (
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Problem against what DynamoDB Local accepts and refuses. Exponents are
// read as Java's BigDecimal reads them: leading zeros free, the exponent
// and the scale (digits after the point less the exponent) within int32, so
// a zero may carry an exponent of 10 digits.
func TestProblem(t *testing.T) {
	for _, s := range []string{"0", "-0", "1", "-12", "1E-130", "0.1E-129", "9.9999999999999999999999999999999999999E+125",
		"+1", ".5", "5.", "00", "-0.0e-500", "0e999", "1e+5", "12345678901234567890123456789012345678", "0.000125",
		"0e99999999", "-0e99999999", "0.0e-99999999", "0e2147483647", "0e+2147483647", "0.0e2147483647", "00e0002147483647",
		"1e0000000000001"} {
		if p := Problem(s); p != "" {
			t.Errorf("Problem(%q) = %s, but DynamoDB accepts it", s, p)
		}
	}
	for _, s := range []string{"NaN", "+Inf", "-Inf", "Infinity", "1E-131", "0.01E-129", "1E126", "10E125",
		"123456789012345678901234567890123456789", "1e", "0x10", " 1", "1_0", "-", "", "1e99999999",
		"1e9999999", "1e-99999999", "0e2147483648", "0e-2147483648", "0e-2147483649", "0.00e-2147483647", "0e999999999999", "1e+", "1e-"} {
		if Problem(s) == "" {
			t.Errorf("Problem(%q) = \"\", but DynamoDB refuses it", s)
		}
	}
}

// Digits of other scripts, which DynamoDB Local (Java's BigDecimal) reads
// ("١" is 1, "1e٣" is 1000) but this library neither writes nor compares,
// are refused with a message that says to write ASCII digits; a string
// with no digit at all is still "not a number".
func TestProblemNamesNonASCIIDigits(t *testing.T) {
	for _, s := range []string{"١", "٣.5", "1e٣", "１２", "-५"} {
		if p := Problem(s); !strings.Contains(p, "write it with ASCII digits") {
			t.Errorf("Problem(%q) = %q; want it to say to write ASCII digits", s, p)
		}
	}
	for _, s := range []string{"x", "1e", "½"} {
		if p := Problem(s); !strings.Contains(p, "not a number DynamoDB reads") {
			t.Errorf("Problem(%q) = %q; want \"not a number DynamoDB reads\"", s, p)
		}
	}
}

// Equal numbers have one canonical form, different numbers different ones.
func TestCanonicalNumbers(t *testing.T) {
	same := [][]string{
		{"0", "-0", "0.0", "-0.000", "0e5", "+0", ".0"},
		{"1", "1.0", "01", "+1", "10e-1", "0.1e1", "1.000e0"},
		{"100", "1e2", "1E2", "100.00", "0.001e5"},
		{"-1.5", "-15e-1", "-01.50"},
	}
	for _, group := range same {
		for _, s := range group {
			if got, want := Canonical(s), Canonical(group[0]); got != want {
				t.Errorf("Canonical(%q) = %q, want %q as for %q", s, got, want, group[0])
			}
		}
	}
	if Canonical("1") == Canonical("-1") || Canonical("10") == Canonical("1") {
		t.Error("different numbers compare equal")
	}
	for _, s := range []string{"0", "1", "-1", "1.5", "0.25", "-0.25", "123456"} {
		if !IsCanonical(s) {
			t.Errorf("IsCanonical(%q) = false", s)
		}
	}
	for _, s := range []string{"-0", "01", "1.0", "1e2", "+1", "0.0", ".5", "5.", "-0.0", "", "-", "1.2.3"} {
		if IsCanonical(s) {
			t.Errorf("IsCanonical(%q) = true", s)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"0", "0"}, {"10", "10"}, {"-10", "-10"}, {"-0", "0"}, {"01", "1"}, {"1.0", "1"}, {"1.50", "1.5"},
		{"1.5E3", "1500"}, {"+7", "7"}, {"-0.0", "0"}, {"1e999", "0.1e1000"}, {"x", "x"}, {"", ""},
		{"0.05e-2", "0.0005"}, {"-12.5e1", "-125"}, {"1e0000000000001", "10"}, {"0e2147483647", "0"},
		{"1e2147483647", "0.1e2147483648"}, {"-1.5e-2147483646", "-0.15e-2147483645"}, {"-1.5e-2147483647", "-1.5e-2147483647"},
	} {
		if got := Canonical(tc.in); got != tc.want {
			t.Errorf("Canonical(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// NumberSize against sizes measured on DynamoDB Local (the root package's
// TestItemSizeBoundary checks the rule end to end).
func TestNumberSize(t *testing.T) {
	for s, want := range map[string]int{
		"0": 1, "-0": 1, "1": 2, "12": 2, "123": 3, "1234": 3, "12345": 4, "-1": 3, "-12": 3, "-123": 4,
		"0.1": 2, "0.12": 2, "0.123": 3, "1.5": 3, "10": 2, "100": 2, "1000": 2, "10000": 2, "1e10": 2,
		"1.1e1": 2, "0.001": 2, "1.001": 4, "10.1": 3, "100.1": 4, "-0.1": 3, "-0.001": 3,
		"12345678901234567890123456789012345678": 20, "-12345678901234567890123456789012345678": 21,
		"00012": 2, "12.000": 2, "1E-130": 2, "9.9999999999999999999999999999999999999E+125": 20,
		"120": 3, "1200": 2, "12000": 3, "0.5": 2, "0.05": 2,
	} {
		if got := NumberSize(s); got != want {
			t.Errorf("NumberSize(%q) = %d, want %d", s, got, want)
		}
	}
}

// Attribute values compare as DynamoDB's = does.
func TestEqual(t *testing.T) {
	n := func(s string) types.AttributeValue { return &types.AttributeValueMemberN{Value: s} }
	for _, tc := range []struct {
		a, b types.AttributeValue
		want bool
	}{
		{n("1"), n("1.00"), true},
		{n("0"), n("-0.0"), true},
		{n("1"), &types.AttributeValueMemberS{Value: "1"}, false},
		{&types.AttributeValueMemberNS{Value: []string{"1", "2"}}, &types.AttributeValueMemberNS{Value: []string{"2.0", "1"}}, true},
		{&types.AttributeValueMemberSS{Value: []string{"a", "b"}}, &types.AttributeValueMemberSS{Value: []string{"b", "a"}}, true},
		{&types.AttributeValueMemberL{Value: []types.AttributeValue{n("1"), n("2")}}, &types.AttributeValueMemberL{Value: []types.AttributeValue{n("2"), n("1")}}, false},
		{&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"a": n("10")}}, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"a": n("1e1")}}, true},
		{&types.AttributeValueMemberNULL{Value: true}, &types.AttributeValueMemberNULL{Value: true}, true},
		{&types.AttributeValueMemberB{Value: []byte("x")}, &types.AttributeValueMemberB{Value: []byte("x")}, true},
		{&types.AttributeValueMemberBOOL{Value: true}, &types.AttributeValueMemberBOOL{Value: false}, false},
	} {
		if got := Equal(tc.a, tc.b); got != tc.want {
			t.Errorf("Equal(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// refRat is the value of a number as math/big reads it, for numbers whose
// exponent is small enough to build; ok false otherwise.
func refRat(s string) (*big.Rat, bool) {
	if _, _, exp, ok := Scan(s); !ok || exp > 1000 || exp < -1000 {
		return nil, false
	}
	if e := strings.IndexAny(s, "eE"); e >= 0 {
		if x, err := strconv.Atoi(s[e+1:]); err != nil || x > 2000 || x < -2000 {
			return nil, false
		}
	}
	return new(big.Rat).SetString(s)
}

// refSize counts DynamoDB's size of a number from its exact value: the
// base-100 digit pairs of its magnitude, aligned on the decimal point, with
// zero pairs at either end dropped, plus one, plus one when negative.
func refSize(r *big.Rat) int {
	if r.Sign() == 0 {
		return 1
	}
	d := r.FloatString(300) // exact for DynamoDB's range
	neg := d[0] == '-'
	d = strings.TrimPrefix(d, "-")
	ip, fp, _ := strings.Cut(d, ".")
	if len(ip)%2 == 1 {
		ip = "0" + ip
	}
	if len(fp)%2 == 1 {
		fp += "0"
	}
	digits := ip + fp
	pairs := make([]string, 0, len(digits)/2)
	for i := 0; i < len(digits); i += 2 {
		pairs = append(pairs, digits[i:i+2])
	}
	for len(pairs) > 0 && pairs[0] == "00" {
		pairs = pairs[1:]
	}
	for len(pairs) > 0 && pairs[len(pairs)-1] == "00" {
		pairs = pairs[:len(pairs)-1]
	}
	n := 1 + len(pairs)
	if neg {
		n++
	}
	return n
}

// The canonical form is idempotent and canonical; two numbers have equal
// canonical forms exactly when math/big reads equal values; comparison
// agrees with big.Rat; the size is DynamoDB's rule computed from the exact
// value, and is antisymmetric and agrees with equality at any exponent;
// Rat fails only where math/big refuses to build the value; Problem is
// empty exactly when DynamoDB's limits hold.
func FuzzNumbers(f *testing.F) {
	for _, s := range []string{"0", "-0", "1", "1.0", "1.50", "1e2", "-15e-1", "0.001e5", "1E-130", "9.9e125", "1e999", "x", "", "+7", ".5", "5.", "0x10", "1e", "12345678901234567890123456789012345678", "1e1001000", "-1e-1001000"} {
		f.Add(s, "1")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ca := Canonical(a)
		if Canonical(ca) != ca {
			t.Fatalf("Canonical(%q) = %q, whose canonical form is %q", a, ca, Canonical(ca))
		}
		_, _, exp, ok := Scan(a)
		if ok && exp >= -maxPlainExp && exp <= maxPlainExp && !IsCanonical(ca) {
			t.Fatalf("Canonical(%q) = %q, not canonical", a, ca)
		}
		if !NumberEqual(a, a) {
			t.Fatalf("%q is not equal to itself", a)
		}
		ra, aok := refRat(a)
		rb, bok := refRat(b)
		if aok {
			r, ok := Rat(a)
			if !ok || r.Cmp(ra) != 0 {
				t.Fatalf("Rat(%q) = %v, %v; math/big reads %v", a, r, ok, ra)
			}
			if c, ok := refRat(ca); !ok || c.Cmp(ra) != 0 {
				t.Fatalf("Canonical(%q) = %q changes the value", a, ca)
			}
			if got, want := NumberSize(a), refSize(ra); got != want && exp >= MinExp-2 && exp <= MaxExp+2 {
				t.Fatalf("NumberSize(%q) = %d, want %d", a, got, want)
			}
		}
		if aok && bok {
			if eq, want := NumberEqual(a, b), ra.Cmp(rb) == 0; eq != want {
				t.Fatalf("NumberEqual(%q, %q) = %v, math/big says %v", a, b, eq, want)
			}
			if got, want := NumberCompare(a, b), ra.Cmp(rb); got != want {
				t.Fatalf("NumberCompare(%q, %q) = %d, want %d", a, b, got, want)
			}
		} else if _, _, _, sok := Scan(b); !aok && !bok && NumberEqual(a, b) && a != b && !sok {
			t.Fatalf("NumberEqual(%q, %q): strings that are no numbers", a, b)
		}
		if c := NumberCompare(a, b); c != -NumberCompare(b, a) {
			t.Fatalf("NumberCompare(%q, %q) = %d, but NumberCompare(%q, %q) = %d", a, b, c, b, a, NumberCompare(b, a))
		}
		_, _, _, sbok := Scan(b)
		if _, _, _, sok := Scan(a); sok && sbok && (NumberCompare(a, b) == 0) != NumberEqual(a, b) {
			t.Fatalf("NumberCompare(%q, %q) = %d, NumberEqual says %v", a, b, NumberCompare(a, b), NumberEqual(a, b))
		}
		neg, nsig, exp, ok := Scan(a)
		if _, rok := Rat(a); ok && !rok && (nsig == 0 || exp-int64(nsig) <= 1e6 && exp-int64(nsig) >= -1e6) {
			t.Fatalf("Rat(%q) failed, though math/big builds it (%d digits, exp %d)", a, nsig, exp)
		}
		want := !ok || nsig > MaxDigits || nsig > 0 && (exp < MinExp || exp > MaxExp)
		if got := Problem(a) != ""; got != want {
			t.Fatalf("Problem(%q) = %q, want a problem: %v (neg %v, %d digits, exp %d)", a, Problem(a), want, neg, nsig, exp)
		}
	})
}

// A number whose magnitude math/big refuses to build (an exponent beyond
// ±1,000,000, which Scan still reads) is no value: Rat and Int report
// failure rather than a wrong value (Int("1e1001000") once returned 1), and
// NumberCompare still orders it by sign, exponent and digits.
func TestUnbuildableNumbers(t *testing.T) {
	for _, s := range []string{"1e1001000", "-1e1001000", "1e-1001000", "2.5e9999999", "10e-9999999"} {
		if r, ok := Rat(s); ok {
			t.Errorf("Rat(%q) = %v, true; want failure", s, r)
		}
		if i, ok := Int(s); ok {
			t.Errorf("Int(%q) = %v, true; want failure", s, i)
		}
	}
	if i, ok := Int("0e9999999"); !ok || i.Sign() != 0 {
		t.Errorf("Int(\"0e9999999\") = %v, %v; want 0 (a zero's exponent costs nothing)", i, ok)
	}
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1e1001000", "1", 1},
		{"-1e1001000", "1", -1},
		{"-1e1001000", "-1", -1},
		{"1e-1001000", "0", 1},
		{"1e-1001000", "1e-1001001", 1},
		{"-1e-1001000", "-1e-1001001", -1},
		{"1.5e1001000", "1.25e1001000", 1},
		{"15e1000999", "1.5e1001000", 0},
		{"1e1001000", "x", 1},
		{"0e9999999", "-0", 0},
		// Exponents at int32's ends: beyond a 32-bit int once the digits
		// before the point are counted (GOARCH=386, run by scripts/test.sh).
		{"1e2147483647", "1", 1},
		{"10e2147483647", "1e2147483647", 1},
		{"-10e2147483647", "-1e2147483647", -1},
		{"0.01e-2147483647", "1e-2147483647", -1},
	} {
		if got := NumberCompare(tc.a, tc.b); got != tc.want {
			t.Errorf("NumberCompare(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := NumberCompare(tc.b, tc.a); got != -tc.want {
			t.Errorf("NumberCompare(%q, %q) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
}
