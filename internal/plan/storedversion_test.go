package plan

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
	"github.com/ddbkit/dynamo/internal/schema"
)

// TestStoredVersionReadsEverySpelling: StoredVersion reads a stored
// version as DynamoDB compares it, numerically: every spelling of a whole
// number ("2.0", "2e0", "20e-1") is that version, a whole number beyond
// int64 (however spelled) is a version beyond int64 (big), and a number
// that is not whole (1.5, 1e-130), a number DynamoDB cannot store, a
// malformed number, a string, a NULL or no attribute is no version.
//
// Numbers DynamoDB cannot store (more than 38 significant digits, a
// magnitude outside 1E-130..9.99E+125, an exponent beyond int32, which
// DynamoDB does not read as a number) once read as versions: 1e999999999999
// as a version beyond int64, 0e999999999999 as 0. No stored version can
// be spelled so (DynamoDB refuses them, and stores zero as "0"), and the
// number rule is internal/av's (av.Problem): they are no version now, and
// WrongVersion names them as numbers DynamoDB cannot store.
func TestStoredVersionReadsEverySpelling(t *testing.T) {
	for _, tc := range []struct {
		stored  types.AttributeValue
		v       int64
		ok, big bool
	}{
		{n("2"), 2, true, false},
		{n("2.0"), 2, true, false},
		{n("2.000"), 2, true, false},
		{n("2e0"), 2, true, false},
		{n("2E+0"), 2, true, false},
		{n("20e-1"), 2, true, false},
		{n("0.2e1"), 2, true, false},
		{n("+2.0"), 2, true, false},
		{n("-3.0"), -3, true, false},
		{n("0.0"), 0, true, false},
		{n("-0"), 0, true, false},
		{n("0e-3"), 0, true, false},
		{n("0e999999999999"), 0, false, false}, // see above: no number DynamoDB stores
		{n(".5e1"), 5, true, false},
		{n("5."), 5, true, false},
		{n("9223372036854775807.0"), 9223372036854775807, true, false},
		{n("9223372036854775808"), 9223372036854775807, true, true},
		{n("9223372036854775808.0"), 9223372036854775807, true, true},
		{n("-9223372036854775808.0"), -9223372036854775808, true, false},
		{n("-9223372036854775809.0"), -9223372036854775808, true, true},
		{n("1e19"), 9223372036854775807, true, true},
		{n("1e999999999999"), 0, false, false}, // see above: no number DynamoDB stores
		{n("-1e125"), -9223372036854775808, true, true},
		{n("99999999999999999999999999999999999999"), 9223372036854775807, true, true},
		{n("999999999999999999999999999999999999999"), 0, false, false}, // 39 digits: see above
		{n("9.9999999999999999999999999999999999999E+125"), 9223372036854775807, true, true},
		{n("1e126"), 0, false, false}, // out of range: see above
		{n("1e1001000"), 0, false, false},
		{n("1.5"), 0, false, false},
		{n("1e-130"), 0, false, false},
		{n("1e-999999999999"), 0, false, false},
		{n("2.5e0"), 0, false, false},
		{n(""), 0, false, false},
		{n("."), 0, false, false},
		{n("e5"), 0, false, false},
		{n("1e"), 0, false, false},
		{n("1e+"), 0, false, false},
		{n("1.2.3"), 0, false, false},
		{n("1_000"), 0, false, false},
		{n("0x10"), 0, false, false},
		{n("Inf"), 0, false, false},
		{n("NaN"), 0, false, false},
		{n(" 2"), 0, false, false},
		{str("2"), 0, false, false},
		{&types.AttributeValueMemberNULL{Value: true}, 0, false, false},
		{nil, 0, false, false},
	} {
		item := map[string]types.AttributeValue{}
		if tc.stored != nil {
			item["v"] = tc.stored
		}
		v, ok, big := StoredVersion(item, "v")
		if v != tc.v || ok != tc.ok || big != tc.big {
			t.Errorf("StoredVersion(%s) = %d, %t, %t; want %d, %t, %t", schema.FormatScalar(tc.stored), v, ok, big, tc.v, tc.ok, tc.big)
		}
	}
}

// wholeNumber reads a version as DynamoDB's numbers mean it: a string
// that is no number DynamoDB stores (av.Problem) is no version; for every
// other, it is whole exactly when av.Int says so, with that value, or
// beyond int64 (big, saturated) when the value does not fit.
func FuzzWholeNumber(f *testing.F) {
	for _, s := range []string{"2", "2.0", "20e-1", "0.2e1", "-0", "5.", ".5e1", "1.5", "9223372036854775808", "-9223372036854775808.0", "1e19", "-1e125", "1e-130", "0e9", "1.2.3", "e5", "1e999999999999", "1e1001000", "1e126"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok, big := wholeNumber(s)
		if av.Problem(s) != "" {
			if ok {
				t.Fatalf("wholeNumber(%q) = %d, %v, %v; DynamoDB stores no such number, so it is no version", s, v, ok, big)
			}
			return
		}
		want, whole := av.Int(s)
		switch {
		case !whole:
			if ok {
				t.Fatalf("wholeNumber(%q) = %d, %v, %v; it is not a whole number", s, v, ok, big)
			}
		case want.IsInt64():
			if !ok || big || v != want.Int64() {
				t.Fatalf("wholeNumber(%q) = %d, %v, %v; want %v", s, v, ok, big, want)
			}
		default:
			if !ok || !big || (want.Sign() < 0) != (v < 0) {
				t.Fatalf("wholeNumber(%q) = %d, %v, %v; want %v beyond int64", s, v, ok, big, want)
			}
		}
	})
}

// VersionHeld: a caller holding 0 (unsaved) is satisfied by no item, an
// item without a version, or a stored 0 (Java's CLOBBER); any other held
// version, negative or at int64's ends, only by that exact stored version.
func TestVersionHeldMatchesOnlyItsVersion(t *testing.T) {
	const maxV, minV = int64(^uint64(0) >> 1), -int64(^uint64(0)>>1) - 1
	for _, tc := range []struct {
		held               int64
		exists, hasVersion bool
		found              int64
		want               bool
	}{
		{0, false, false, 0, true},
		{0, true, false, 0, true},
		{0, true, true, 0, true},
		{0, true, true, 1, false},
		{0, true, true, -1, false},
		{1, false, false, 0, false},
		{1, true, false, 0, false},
		{1, true, false, 1, false}, // no version: found means nothing
		{1, true, true, 1, true},
		{1, true, true, 2, false},
		{-1, true, true, -1, true},
		{-1, true, true, 0, false},
		{-1, false, false, 0, false},
		{maxV, true, true, maxV, true},
		{maxV, true, true, minV, false},
		{minV, true, true, minV, true},
	} {
		if got := VersionHeld(tc.held, tc.exists, tc.hasVersion, tc.found); got != tc.want {
			t.Errorf("VersionHeld(%d, %t, %t, %d) = %t, want %t", tc.held, tc.exists, tc.hasVersion, tc.found, got, tc.want)
		}
	}
}
