package plan

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/errs"
)

// FuzzDecodePosition: a StartAfter cursor of any bytes (invalid UTF-8,
// base64 of any JSON) never panics, is refused only with ErrInvalidInput,
// and one it takes is exactly the cursor EncodePosition makes of what it
// read: a cursor means one position or none.
func FuzzDecodePosition(f *testing.F) {
	good, err := EncodePosition(Position{Index: "byOwner", Segment: 1, Total: 3, Key: map[string]types.AttributeValue{
		"p": &types.AttributeValueMemberS{Value: "a"}, "n": &types.AttributeValueMemberN{Value: "1"}, "b": &types.AttributeValueMemberB{Value: []byte{0}}}})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{good, "", "\xff", "eyJ2IjoxfQ", "eyJ2IjoxLCJrIjp7InAiOnsiUyI6Ilx1ZDgwMCJ9fX0", "eyJ2IjoxLCJrIjp7InAiOnsiTiI6IjFlMTI2In19fQ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, c string) {
		p, err := DecodePosition(c)
		if err != nil {
			if !errors.Is(err, errs.ErrInvalidInput) {
				t.Fatalf("DecodePosition(%q): %v, not ErrInvalidInput", c, err)
			}
			return
		}
		again, err := EncodePosition(p)
		if err != nil || again != c {
			t.Fatalf("DecodePosition(%q) = %+v, which encodes as %q, %v", c, p, again, err)
		}
	})
}
