package dynamo

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

type b2JDKey struct {
	P  string    `dynamo:"p,hash"`
	At time.Time `dynamo:"at,range,javadate"`
}

// break2: a javadate sort key is stored as "2006-01-02T15:04:05.000Z"
// (UTC, milliseconds), but a Query key condition on it with a time.Time
// value is sent as attributevalue's RFC 3339 string ("...05.12+01:00"):
// the key condition is not converted the way Filter and If values are
// (issue 12 item 9), so `at = t` matches nothing and `at > t` compares
// strings of two formats: silently wrong results, no error. The value sent
// must be JavaDate(t) (or the query refused with a hint).
func TestBreak2JavaDateKeyConditionConverted(t *testing.T) {
	K, V := expression.Key, expression.Value
	cl := &qsClient{}
	cl.onQuery = func(context.Context, *dynamodb.QueryInput) (*dynamodb.QueryOutput, error) {
		return &dynamodb.QueryOutput{}, nil
	}
	tb, err := NewTable[b2JDKey](NewMapper(cl), "T")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2024, 1, 2, 3, 4, 5, 120e6, time.FixedZone("X", 3600))
	want := JavaDate(at).(*types.AttributeValueMemberS).Value
	for name, kc := range map[string]expression.KeyConditionBuilder{
		"=": K("p").Equal(V("a")).And(K("at").Equal(V(at))),
		">": K("p").Equal(V("a")).And(K("at").GreaterThan(V(at))),
	} {
		_, _, err = tb.QueryPage(t.Context(), kc)
		if err != nil {
			t.Logf("%s: refused: %v", name, err) // refusing with a hint would also do
			continue
		}
		qs, _ := cl.requests()
		q := qs[len(qs)-1]
		for ph, v := range q.ExpressionAttributeValues {
			if s, ok := v.(*types.AttributeValueMemberS); ok && s.Value != "a" && s.Value != want {
				t.Errorf("key condition %s: %s sent as %q, but the item stores at as %q", *q.KeyConditionExpression, ph, s.Value, want)
			}
		}
	}
}

// break2: the same cause refuses a valid cursor: the cursor's sort key
// "2024-01-02T02:05:05.000Z" (as stored) is after 03:04:05+01:00
// (02:04:05Z), but the cursor check compares it with the unconverted
// "2024-01-02T03:04:05+01:00" string and refuses it with ErrInvalidInput.
func TestBreak2JavaDateCursorAccepted(t *testing.T) {
	K, V := expression.Key, expression.Value
	cl := &qsClient{}
	cl.onQuery = func(context.Context, *dynamodb.QueryInput) (*dynamodb.QueryOutput, error) {
		return &dynamodb.QueryOutput{}, nil
	}
	tb, err := NewTable[b2JDKey](NewMapper(cl), "T")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600))
	c := qcCursor(t, position{key: map[string]types.AttributeValue{"p": qcS("a"), "at": JavaDate(at.Add(time.Minute))}})
	if _, _, err := tb.QueryPage(t.Context(), K("p").Equal(V("a")).And(K("at").GreaterThan(V(at))), StartAfter(c)); err != nil {
		t.Errorf("a cursor one minute after the bound, for at > bound: %v", err)
	}
}
