package stream

import (
	"fmt"
	"strings"
)

// SequenceNumber is a stream record's sequence number: a decimal number of up
// to 40 digits (DynamoDB's limit is 21 to 40). Compare numbers with Compare,
// never as strings ("9" < "10" as numbers, not as text). The zero value is no
// number, before every record.
type SequenceNumber struct {
	digits string // canonical: no leading zeros, "" for none
	text   string // as DynamoDB sent it: GetShardIterator wants it back so (21 digits at least)
}

// ParseSequenceNumber parses s, a sequence number as DynamoDB sends it:
// decimal digits only, at most 40 after leading zeros. Leading zeros do
// not count in comparisons ("007" equals "7") but are kept in String.
func ParseSequenceNumber(s string) (SequenceNumber, error) {
	if s == "" {
		return SequenceNumber{}, fmt.Errorf("%w: empty sequence number", ErrBadSequence)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return SequenceNumber{}, fmt.Errorf("%w: %q holds a character other than a decimal digit at byte %d", ErrBadSequence, clip(s), i)
		}
	}
	d := strings.TrimLeft(s, "0")
	if d == "" {
		d = "0"
	}
	if len(d) > 40 {
		return SequenceNumber{}, fmt.Errorf("%w: %q has %d digits, more than DynamoDB's 40", ErrBadSequence, clip(s), len(d))
	}
	return SequenceNumber{digits: d, text: s}, nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// IsZero reports whether n is no number (the zero SequenceNumber).
func (n SequenceNumber) IsZero() bool { return n.digits == "" }

// String returns n as it was parsed, "" for the zero SequenceNumber.
func (n SequenceNumber) String() string { return n.text }

// Compare returns -1, 0 or +1 as n is less than, equal to or greater than o,
// as numbers. The zero SequenceNumber is less than every number.
func (n SequenceNumber) Compare(o SequenceNumber) int {
	switch {
	case len(n.digits) < len(o.digits):
		return -1
	case len(n.digits) > len(o.digits):
		return 1
	}
	return strings.Compare(n.digits, o.digits)
}
