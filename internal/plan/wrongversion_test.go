package plan

import (
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/codec"
	"github.com/ddbkit/dynamo/internal/schema"
)

type wvInt8 struct {
	ID string `dynamo:"id,hash"`
	V  int8   `dynamo:"v,version"`
}

type wvUint32 struct {
	ID string `dynamo:"id,hash"`
	V  uint32 `dynamo:"v,version"`
}

type wvUint64 struct {
	ID string  `dynamo:"id,hash"`
	V  *uint64 `dynamo:"v,version"`
}

type wvInt64 struct {
	ID string `dynamo:"id,hash"`
	V  int64  `dynamo:"v,version"`
}

// WrongVersion names a stored version exactly when the decoder cannot
// read it into the type's version field: another type, a fraction, a
// number DynamoDB cannot store, one beyond the field's range, or a whole
// number spelled so the field's decoder (strconv.ParseInt for signed,
// ParseUint for unsigned) refuses it. NULL, absence and every spelling the
// decoder reads are nothing wrong.
func TestWrongVersionNamesWhatTheDecoderRefuses(t *testing.T) {
	i8 := wvSchema[wvInt8](t)
	u32 := wvSchema[wvUint32](t)
	u64 := wvSchema[wvUint64](t)
	i64 := wvSchema[wvInt64](t)
	for _, tc := range []struct {
		s      *schema.Schema
		stored types.AttributeValue
		want   string // "" when nothing is wrong; else a part of what
	}{
		{i64, nil, ""},
		{i64, &types.AttributeValueMemberNULL{Value: true}, ""},
		{i64, n("0"), ""},
		{i64, n("007"), ""},
		{i64, n("+7"), ""},
		{i64, n("-0"), ""},
		{i64, n("-9223372036854775808"), ""},
		{i64, n("9223372036854775807"), ""},
		{i64, n("9223372036854775808"), "beyond what"},
		{i64, n("-9223372036854775809"), "beyond what"},
		{i64, n("1e3"), "version 1000 spelled in a way"},
		{i64, n("2.0"), "version 2 spelled in a way"},
		{i64, n("1.5"), "not a whole number"},
		{i64, n("1e999999999999"), "the stored v "},
		{i64, str("1"), "is a string (S), not a number (N)"},
		{i8, n("127"), ""},
		{i8, n("-128"), ""},
		{i8, n("128"), "beyond what"},
		{i8, n("-129"), "beyond what"},
		{u32, n("4294967295"), ""},
		{u32, n("007"), ""},
		{u32, n("4294967296"), "beyond what"},
		{u32, n("+5"), "version 5 spelled in a way"},
		{u32, n("-0"), "version 0 spelled in a way"},
		{u64, n("+18446744073709551615"), "version 18446744073709551615 spelled in a way"},
		{u32, n("-1"), "beyond what"},
		{u64, n("18446744073709551615"), ""},
		{u64, n("9223372036854775808"), ""},
		{u64, n("18446744073709551616"), "beyond what"},
		{u64, n("-9223372036854775809"), "beyond what"},
		{u64, n("18446744073709551615.0"), "version 18446744073709551615 spelled in a way"},
	} {
		item := map[string]types.AttributeValue{"id": str("a")}
		if tc.stored != nil {
			item["v"] = tc.stored
		}
		what, fix, ok := WrongVersion(tc.s, item)
		switch {
		case tc.want == "" && ok:
			t.Errorf("%s: WrongVersion(%s) = %q; the decoder reads it", tc.s.Type, schema.FormatScalar(tc.stored), what)
		case tc.want != "" && (!ok || !strings.Contains(what, tc.want) || fix == ""):
			t.Errorf("%s: WrongVersion(%s) = %q, %q, %t; want what naming %q", tc.s.Type, schema.FormatScalar(tc.stored), what, fix, ok, tc.want)
		}
	}
}

func wvSchema[T any](t *testing.T) *schema.Schema {
	t.Helper()
	s, err := schema.For(reflect.TypeFor[T]())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// FuzzWrongVersionAgreesWithTheDecoder: for a stored number that is a
// whole version, WrongVersion names it exactly when the decoder (codec)
// refuses it into the version field, for signed and unsigned fields.
func FuzzWrongVersionAgreesWithTheDecoder(f *testing.F) {
	for _, s := range []string{"5", "+5", "-0", "007", "2.0", "1e3", "-1", "255", "4294967296", "18446744073709551615", "+18446744073709551615", "-9223372036854775808"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		item := map[string]types.AttributeValue{"id": str("a"), "v": n(s)}
		if _, whole, _ := StoredVersion(item, "v"); !whole {
			return
		}
		wvAgree[wvInt8](t, item)
		wvAgree[wvUint32](t, item)
		wvAgree[wvUint64](t, item)
		wvAgree[wvInt64](t, item)
	})
}

func wvAgree[T any](t *testing.T, item map[string]types.AttributeValue) {
	t.Helper()
	s := wvSchema[T](t)
	var out T
	decErr := codec.DecodeTo(codec.For(reflect.TypeFor[T]()), item, &out, attributevalue.NewDecoder())
	if what, _, ok := WrongVersion(s, item); ok != (decErr != nil) {
		t.Fatalf("%s, stored %s: WrongVersion %q, %t; the decoder: %v", s.Type, schema.FormatScalar(item["v"]), what, ok, decErr)
	}
}
