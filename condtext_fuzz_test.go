package dynamo

import (
	"bytes"
	"math/big"
	"net"
	"net/netip"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/codec"
	"github.com/ddbkit/dynamo/internal/codec/codectest"
	"github.com/ddbkit/dynamo/internal/schema"
)

// FuzzTextCondValue: converting a value compared with a text attribute
// never panics and never modifies the value; what it sends for a text type
// is a string (or NULL), of valid UTF-8 when the value's strings are, a string as it was given, and for a
// uuid the text of exactly the bytes given.
func FuzzTextCondValue(f *testing.F) {
	f.Add(byte(0), uuid1[:], "")
	f.Add(byte(1), uuid1[:], uuid1Text)
	f.Add(byte(2), []byte{10, 0, 0, 1}, "10.0.0.1")
	f.Add(byte(3), []byte(nil), "2")
	f.Add(byte(13), []byte(nil), "99999999999999999999")
	f.Add(byte(4), []byte{1, 2}, "::1")
	f.Add(byte(25), uuid1[:8], "x")
	f.Add(byte(46), []byte{0xff}, "\xff")
	f.Add(byte(60), uuid1[:], "-1e400")
	typs := []reflect.Type{
		reflect.TypeFor[codectest.UUID](), reflect.TypeFor[*codectest.UUID](), reflect.TypeFor[net.IP](), reflect.TypeFor[tLevel](),
		reflect.TypeFor[netip.Addr](), reflect.TypeFor[[]codectest.UUID](), reflect.TypeFor[map[string]codectest.UUID](),
		reflect.TypeFor[textDoc](), reflect.TypeFor[[]tCode](), reflect.TypeFor[*big.Int](), reflect.TypeFor[string](),
		reflect.TypeFor[tShort](), reflect.TypeFor[tBlob](),
	}
	f.Fuzz(func(t *testing.T, sel byte, b []byte, s string) {
		typ := typs[int(sel)%len(typs)]
		var av types.AttributeValue
		switch int(sel) / len(typs) % 8 {
		case 0:
			av = &types.AttributeValueMemberB{Value: b}
		case 1:
			av = &types.AttributeValueMemberS{Value: s}
		case 2:
			av = &types.AttributeValueMemberN{Value: s}
		case 3:
			av = &types.AttributeValueMemberBOOL{Value: len(b) > 0}
		case 4:
			av = avNull
		case 5:
			av = avL(&types.AttributeValueMemberB{Value: b}, &types.AttributeValueMemberS{Value: s})
		case 6:
			av = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"who": &types.AttributeValueMemberB{Value: b}, s: &types.AttributeValueMemberN{Value: s}}}
		default:
			av = &types.AttributeValueMemberM{}
		}
		before := avString(av)
		for _, fn := range []string{"", "contains", "begins_with"} {
			got, err := schema.TextCondValue(typ, fn, av)
			if after := avString(av); after != before {
				t.Fatalf("the value was modified: %s, now %s", before, after)
			}
			if err != nil {
				if got != nil {
					t.Fatalf("textCondValue = %v and an error", got)
				}
				continue
			}
			if validStrings(av) && !validStrings(got) { // invalid input strings are checked elsewhere
				t.Fatalf("textCondValue(%v, %s) = %s: not UTF-8", typ, before, avString(got))
			}
			if !codec.IsText(schema.DerefType(typ)) {
				continue
			}
			switch g := got.(type) {
			case *types.AttributeValueMemberNULL:
			case *types.AttributeValueMemberS:
				if in, ok := av.(*types.AttributeValueMemberS); ok && got != av {
					t.Fatalf("a string %q sent as %q", in.Value, g.Value)
				}
				if in, ok := av.(*types.AttributeValueMemberB); ok && schema.DerefType(typ) == reflect.TypeFor[codectest.UUID]() {
					var u codectest.UUID
					if err := u.UnmarshalText([]byte(g.Value)); err != nil || !bytes.Equal(u[:], in.Value) {
						t.Fatalf("%x sent as %q", in.Value, g.Value)
					}
				}
			default:
				t.Fatalf("textCondValue(%v, %s) = %s, not a string", typ, before, avString(got))
			}
		}
	})
}

// validStrings reports whether every string in av is valid UTF-8.
func validStrings(av types.AttributeValue) bool {
	switch a := av.(type) {
	case *types.AttributeValueMemberS:
		return utf8.ValidString(a.Value)
	case *types.AttributeValueMemberL:
		for _, e := range a.Value {
			if !validStrings(e) {
				return false
			}
		}
	case *types.AttributeValueMemberM:
		for _, e := range a.Value {
			if !validStrings(e) {
				return false
			}
		}
	}
	return true
}
