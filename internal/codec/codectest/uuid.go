package codectest

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// UUID is the uuid.UUID-style text type the tests of the codec, the mapper
// and the integration suite share: 16 bytes, MarshalText on the value
// writing the canonical 8-4-4-4-12 form (lower case, as Java's
// UUID.toString writes it), UnmarshalText on the pointer reading 32 hex
// digits of either case with the dashes left out or anywhere.
type UUID [16]byte

// MarshalText writes u in the 8-4-4-4-12 form.
func (u UUID) MarshalText() ([]byte, error) {
	b := make([]byte, 36)
	hex.Encode(b, u[:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return b, nil
}

// UnmarshalText reads 32 hex digits, dashes ignored; u is left unchanged on
// an error.
func (u *UUID) UnmarshalText(b []byte) error {
	s := strings.ReplaceAll(string(b), "-", "")
	var out UUID
	if len(s) != 32 {
		return fmt.Errorf("uuid: %q is not a UUID: want 32 hex digits", b)
	}
	if _, err := hex.Decode(out[:], []byte(s)); err != nil {
		return fmt.Errorf("uuid: %q is not a UUID: %w", b, err)
	}
	*u = out
	return nil
}

// String returns the 8-4-4-4-12 form.
func (u UUID) String() string { b, _ := u.MarshalText(); return string(b) }

// MustUUID parses a UUID constant of a test; it panics on a malformed one.
func MustUUID(s string) UUID {
	var u UUID
	if err := u.UnmarshalText([]byte(s)); err != nil {
		panic(err)
	}
	return u
}
