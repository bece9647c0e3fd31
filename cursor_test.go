package dynamo

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/plan"
)

// A forged cursor whose key values exceed DynamoDB's key size limits
// (partition key 2048 bytes, sort key 1024 bytes) is refused with
// ErrInvalidInput before anything is sent, not sent as ExclusiveStartKey
// for DynamoDB to answer with a ValidationException.
func TestCursorOversizedKeyRefused(t *testing.T) {
	K, V := expression.Key, expression.Value
	cases := map[string]string{
		"partition key of 2049 bytes (scan)": `{"v":1,"k":{"p":{"S":"` + strings.Repeat("x", 2049) + `"},"s":{"S":"x"}}}`,
		"sort key of 1025 bytes (query)":     `{"v":1,"k":{"p":{"S":"a"},"s":{"S":"` + strings.Repeat("y", 1025) + `"}}}`,
	}
	for name, js := range cases {
		t.Run(name, func(t *testing.T) {
			c := qcRawCursor(js)
			cl := (&fakeDB{}).table("Events", "p", "s")
			tb := qcTable[qsStr](t, cl)
			var err error
			if strings.HasPrefix(name, "partition") {
				_, _, err = tb.ScanPage(t.Context(), StartAfter(c))
			} else {
				_, _, err = tb.QueryPage(t.Context(), K("p").Equal(V("a")), StartAfter(c))
			}
			if n := cl.count(""); n != 0 {
				t.Errorf("sent %d requests (err = %v); want ErrInvalidInput before sending", n, err)
			}
		})
	}
}

// BenchmarkParseCursor measures reading back a cursor as QueryPage and
// ScanPage write it: a table's key, and an index position of four key
// attributes (string, number, binary) in a scan segment.
func BenchmarkParseCursor(b *testing.B) {
	for _, bc := range []struct {
		name string
		p    plan.Position
	}{
		{"table", plan.Position{Key: map[string]types.AttributeValue{
			"p": &types.AttributeValueMemberS{Value: "customer#00042"},
			"n": &types.AttributeValueMemberN{Value: "1700000000123"},
		}}},
		{"index", plan.Position{Index: "byOwner", Segment: 3, Total: 8, Key: map[string]types.AttributeValue{
			"p":     &types.AttributeValueMemberS{Value: "customer#00042"},
			"n":     &types.AttributeValueMemberN{Value: "1700000000123"},
			"owner": &types.AttributeValueMemberS{Value: "ann <ann@example.com>"},
			"at":    &types.AttributeValueMemberB{Value: []byte("\x00\x01\x02\x03\x04\x05\x06\x07")},
		}}},
	} {
		c, err := encodeCursor(bc.p)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeCursor(c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
