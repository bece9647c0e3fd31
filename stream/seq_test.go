package stream

import (
	"errors"
	"math/big"
	"strings"
	"testing"
)

func TestSequenceNumbersCompareAsNumbers(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"9", "10", -1},
		{"10", "9", 1},
		{"000123", "123", 0},
		{"100000000000000000000", "99999999999999999999", 1},
		{"4000000000000000000000000000000000000001", "4000000000000000000000000000000000000000", 1},
		{"0", "00", 0},
	} {
		a, err := ParseSequenceNumber(c.a)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ParseSequenceNumber(c.b)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Compare(b); got != c.want {
			t.Errorf("Compare(%s, %s) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	var zero SequenceNumber
	one, _ := ParseSequenceNumber("0")
	if !zero.IsZero() || zero.Compare(one) != -1 || one.Compare(zero) != 1 {
		t.Fatal("the zero SequenceNumber must sort before every number, 0 included")
	}
}

func TestSequenceNumberRefusedNamesTheProblem(t *testing.T) {
	for _, s := range []string{"", "12a", "-1", "+1", " 1", "1.0", strings.Repeat("9", 41), "١٢"} {
		if _, err := ParseSequenceNumber(s); !errors.Is(err, ErrBadSequence) {
			t.Errorf("ParseSequenceNumber(%q) = %v, want ErrBadSequence", s, err)
		}
	}
	if _, err := ParseSequenceNumber("000" + strings.Repeat("9", 40)); err != nil {
		t.Errorf("40 digits after leading zeros: %v", err)
	}
	// GetShardIterator refuses a number shorter than 21 characters: the
	// text DynamoDB sent is kept for sending back.
	if n, _ := ParseSequenceNumber("000000000000000000003"); n.String() != "000000000000000000003" {
		t.Errorf("String() = %q, want the text as parsed", n)
	}
}

// FuzzSequenceNumber checks that what parses compares as math/big does and
// prints back as the number it parsed.
func FuzzSequenceNumber(f *testing.F) {
	for _, s := range []string{"1", "000", "99", "100", "4000000000000000000000000000000000000000", "12a"} {
		f.Add(s, "10")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		na, erra := ParseSequenceNumber(a)
		nb, errb := ParseSequenceNumber(b)
		ba, oka := new(big.Int).SetString(a, 10)
		bb, _ := new(big.Int).SetString(b, 10)
		if erra == nil {
			if !oka || ba.Sign() < 0 || strings.ContainsAny(a, "+-_") {
				t.Fatalf("%q parsed, but is not a non-negative decimal", a)
			}
			if na.String() != a {
				t.Fatalf("%q printed as %s", a, na)
			}
		} else if oka && ba.Sign() >= 0 && len(ba.String()) <= 40 && !strings.ContainsAny(a, "+-_") {
			t.Fatalf("%q refused: %v", a, erra)
		}
		if erra == nil && errb == nil {
			if got, want := na.Compare(nb), ba.Cmp(bb); got != want {
				t.Fatalf("Compare(%q, %q) = %d, big.Int says %d", a, b, got, want)
			}
		}
	})
}
