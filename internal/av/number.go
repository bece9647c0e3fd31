// Package av holds the mapper's rules for DynamoDB attribute values, each
// written once: a number's syntax, canonical form, identity, order and size
// as DynamoDB counts it; attribute-value equality as DynamoDB's = sees it;
// item size. It is pure: no I/O, no state.
package av

import (
	"bytes"
	"cmp"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
)

// DynamoDB's limits on numbers: 38 significant digits, and a magnitude
// from 1E-130 to 9.9999999999999999999999999999999999999E+125 (or zero),
// checked against DynamoDB Local. Exponents are those of Scan: the value is
// 0.d₁d₂… × 10^exp.
const (
	MaxDigits = 38
	MinExp    = -129 // 1E-130 is 0.1 × 10^-129
	MaxExp    = 126  // 9.99…E+125 is 0.999… × 10^126
	Range     = "1E-130 to 9.9999999999999999999999999999999999999E+125"
)

// Scan reads a DynamoDB number without allocating: its sign, the count of
// its significant digits (no leading or trailing zeros) and its decimal
// exponent, such that the value is 0.d₁d₂… × 10^exp. ok is false for
// strings DynamoDB does not read as numbers (NaN, Inf, "1e", " 1", an
// exponent or scale beyond int32, ...): it reads them as Java's BigDecimal
// does, so "0e99999999" is zero and "1e0000000000001" is ten. Zero has no
// significant digits. exp is an int64: the digits before the point added
// to an int32 exponent overflow a 32-bit int.
func Scan(s string) (neg bool, nsig int, exp int64, ok bool) {
	if s == "" {
		return false, 0, 0, false
	}
	switch s[0] {
	case '-':
		neg, s = true, s[1:]
	case '+':
		s = s[1:]
	}
	digits, intLen, dot := 0, -1, false
	first, last := -1, -1 // digit indexes of the first and last non-zero digits
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			if c != '0' {
				if first < 0 {
					first = digits
				}
				last = digits
			}
			digits++
		case c == '.' && !dot:
			dot, intLen = true, digits
		case c == 'e' || c == 'E':
			goto exponent
		default:
			return false, 0, 0, false
		}
	}
exponent:
	if digits == 0 {
		return false, 0, 0, false
	}
	if !dot {
		intLen = digits
	}
	var e int64
	if i < len(s) {
		if e, ok = scanExponent(s[i+1:], digits-intLen); !ok {
			return false, 0, 0, false
		}
	}
	if first < 0 {
		return false, 0, 0, true // zero, whatever its sign and exponent
	}
	return neg, last - first + 1, int64(intLen-first) + e, true
}

// scanExponent reads the exponent es of a number with frac digits after
// its point as DynamoDB does (it reads numbers as Java's BigDecimal, checked
// against DynamoDB Local): digits after an optional sign, leading zeros
// free, the exponent and the scale (frac less the exponent) within int32.
func scanExponent(es string, frac int) (int64, bool) {
	neg := false
	if es != "" && (es[0] == '+' || es[0] == '-') {
		neg, es = es[0] == '-', es[1:]
	}
	if es == "" {
		return 0, false
	}
	var e int64
	for j := 0; j < len(es); j++ {
		c := es[j]
		if c < '0' || c > '9' {
			return 0, false
		}
		if e = e*10 + int64(c-'0'); e > math.MaxInt32+1 {
			return 0, false // beyond int32 whatever its sign
		}
	}
	if neg {
		e = -e
	}
	if scale := int64(frac) - e; e > math.MaxInt32 || e < math.MinInt32 || scale > math.MaxInt32 || scale < math.MinInt32 {
		return 0, false
	}
	return e, true
}

// sigDigits appends the significant digits of the number s (Scan accepted
// it, with nsig of them) to b.
func sigDigits(b []byte, s string, nsig int) []byte {
	n := 0
	for i := 0; i < len(s) && n < nsig; i++ {
		c := s[i]
		if c == 'e' || c == 'E' {
			break
		}
		if c < '0' || c > '9' || c == '0' && n == 0 {
			continue
		}
		b = append(b, c)
		n++
	}
	return b
}

// IsCanonical reports whether s is an integer or decimal without a sign on
// zero, a plus sign, leading zeros, trailing fractional zeros or an
// exponent: two such strings are equal exactly when their numbers are.
// strconv writes integers so, and floats other than -0 in 'f' notation.
func IsCanonical(s string) bool {
	if s == "0" {
		return true
	}
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	if s == "" || s[0] < '1' && !(s[0] == '0' && len(s) > 1 && s[1] == '.') || s[0] > '9' {
		return false
	}
	dot := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && dot < 0:
			dot = i
		default:
			return false
		}
	}
	if dot >= 0 {
		if dot == len(s)-1 || s[len(s)-1] == '0' {
			return false
		}
		if s[0] == '0' && strings.Trim(s[2:], "0") == "" {
			return false // -0.000 style zero
		}
	}
	return true
}

// maxPlainExp bounds the exponents Canonical writes out as plain decimals
// (DynamoDB's range is well inside it).
const maxPlainExp = 400

// Canonical returns the canonical form of the number s: equal numbers give
// equal strings, different numbers different ones. It is s itself when s
// is canonical (IsCanonical: no allocation), else the plain decimal of IsCanonical
// ("1.50" gives "1.5", "-0" gives "0", "1e2" gives "100"); numbers with
// exponents far outside DynamoDB's range are written "0.ddd…e<exp>" instead,
// and strings that are no number are returned as they are.
func Canonical(s string) string {
	if IsCanonical(s) {
		return s
	}
	neg, nsig, exp, ok := Scan(s)
	switch {
	case !ok:
		return s
	case nsig == 0:
		return "0"
	}
	b := make([]byte, 0, nsig+4)
	if neg {
		b = append(b, '-')
	}
	if exp > maxPlainExp || exp < -maxPlainExp {
		b = append(b, "0."...)
		b = sigDigits(b, s, nsig)
		b = append(b, 'e')
		return string(strconv.AppendInt(b, exp, 10))
	}
	start := len(b)
	switch {
	case exp <= 0: // 0.000ddd
		b = append(b, "0."...)
		for range -exp {
			b = append(b, '0')
		}
		b = sigDigits(b, s, nsig)
	case exp >= int64(nsig): // ddd000
		b = sigDigits(b, s, nsig)
		for range exp - int64(nsig) {
			b = append(b, '0')
		}
	default: // dd.d
		b = sigDigits(b, s, nsig)
		b = append(b, 0)
		at := start + int(exp) // 0 < exp < nsig
		copy(b[at+1:], b[at:])
		b[at] = '.'
	}
	return string(b)
}

// NumberEqual reports whether two numbers are equal by value ("1", "1.0", "1e0";
// "0" and "-0"), as DynamoDB compares them. Strings that are no number are
// equal only to themselves.
func NumberEqual(a, b string) bool { return a == b || Canonical(a) == Canonical(b) }

// Rat returns the value of the number s, built from its significant digits
// (leading and trailing zeros, and the exponent of a zero, cost nothing);
// ok is false when s is no number, and when its magnitude is so far outside
// DynamoDB's range (beyond 10^±1,000,000) that math/big refuses to build it.
func Rat(s string) (r *big.Rat, ok bool) {
	neg, nsig, exp, ok := Scan(s)
	if !ok {
		return nil, false
	}
	r = new(big.Rat)
	if nsig == 0 {
		return r, true
	}
	b := make([]byte, 0, nsig+12)
	if neg {
		b = append(b, '-')
	}
	b = sigDigits(b, s, nsig)
	b = append(b, 'e')
	b = strconv.AppendInt(b, exp-int64(nsig), 10)
	if _, ok := r.SetString(string(b)); !ok {
		return nil, false
	}
	return r, true
}

// NumberCompare orders two numbers by value: -1, 0 or +1. A string that is no
// number counts as 0. It reads the numbers without building them, so any
// exponent Scan reads costs nothing.
func NumberCompare(a, b string) int {
	if a == b {
		return 0
	}
	sa, ea, da := scanSigned(a)
	sb, eb, db := scanSigned(b)
	switch {
	case sa != sb:
		return cmp.Compare(sa, sb)
	case sa == 0:
		return 0
	}
	c := cmp.Compare(ea, eb)
	if c == 0 {
		var bufA, bufB [40]byte
		c = bytes.Compare(sigDigits(bufA[:0], a, da), sigDigits(bufB[:0], b, db))
	}
	return c * sa
}

// scanSigned reads the number s as NumberCompare orders it: its sign (-1,
// 0 or +1; 0 for zero and for strings that are no number), exponent and
// count of significant digits as Scan gives them.
func scanSigned(s string) (sign int, exp int64, nsig int) {
	neg, nsig, exp, ok := Scan(s)
	switch {
	case !ok || nsig == 0:
		return 0, 0, 0
	case neg:
		return -1, exp, nsig
	}
	return 1, exp, nsig
}

// Int returns the value of the number s when it is whole ("1.0" and "1e2"
// are; "1.5" is not); ok is false for fractions, strings that are no
// number and numbers Rat refuses to build.
func Int(s string) (*big.Int, bool) {
	r, ok := Rat(s)
	if !ok || !r.IsInt() {
		return nil, false
	}
	return new(big.Int).Set(r.Num()), true
}

// NumberSize is the size DynamoDB counts for the number s (checked against
// DynamoDB Local): one byte, plus one per pair of digits of its base-100
// mantissa (pairs aligned on the decimal point, zero pairs at either end not
// stored), plus one for a negative number. A string that is no number
// counts its length (DynamoDB refuses it anyway).
func NumberSize(s string) int {
	neg, nsig, exp, ok := Scan(s)
	if !ok {
		return len(s)
	}
	if nsig == 0 {
		return 1
	}
	// The first digit stands for 10^(exp-1), the last for 10^(exp-nsig).
	first, last := exp-1, exp-int64(nsig)
	n := 1 + floorDiv2(first) - floorDiv2(last) + 1
	if neg {
		n++
	}
	return n
}

func floorDiv2(n int64) int {
	if n >= 0 {
		return int(n / 2)
	}
	return int(-((-n + 1) / 2))
}

// Problem says why DynamoDB would refuse s as a number ("" when it stores
// it): no number at all (NaN and infinities, what the encoder writes for
// such floats, and other strings), more than 38 significant digits, a
// magnitude out of range. The phrase completes "the value ...".
func Problem(s string) string {
	plain := len(s) > 0 && len(s) <= MaxDigits
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= '0' && s[i] <= '9' || i == 0 && s[i] == '-' && len(s) > 1
	}
	if plain {
		return "" // an integer as strconv writes it
	}
	_, nsig, exp, ok := Scan(s)
	switch {
	case !ok && nonASCIIDigit(s):
		// DynamoDB Local (Java's BigDecimal) reads digits of other scripts
		// ("١" is 1); this library writes and compares ASCII digits only.
		return "is " + strconv.Quote(Truncate(s, 40)) + ", a number written with digits other than ASCII 0-9: write it with ASCII digits"
	case !ok:
		return "is " + strconv.Quote(Truncate(s, 40)) + ", not a number DynamoDB reads"
	case nsig > MaxDigits:
		return "is the number " + Short(s) + " with " + strconv.Itoa(nsig) + " significant digits"
	case nsig > 0 && (exp < MinExp || exp > MaxExp):
		return "is the number " + Short(s) + ", outside DynamoDB's range of magnitudes (" + Range + ")"
	}
	return ""
}

// Short renders a long number string for a message.
func Short(s string) string {
	if len(s) <= 40 {
		return s
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return strconv.FormatFloat(f, 'g', -1, 64) + " (as written: " + strconv.Itoa(len(s)) + " characters)"
	}
	return Truncate(s, 40)
}

// Truncate cuts s to n bytes for a message, marking the cut with "...".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// nonASCIIDigit reports whether s holds a decimal digit other than ASCII
// 0-9 (Arabic-Indic, Devanagari, fullwidth …).
func nonASCIIDigit(s string) bool {
	for _, r := range s {
		if r > unicode.MaxASCII && unicode.IsDigit(r) {
			return true
		}
	}
	return false
}
