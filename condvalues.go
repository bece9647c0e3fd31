package dynamo

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/schema"
)

// JavaDateLayout is the layout of the strings a javadate field is stored as:
// what DynamoDBMapper writes for java.util.Date and java.util.Calendar (ISO
// 8601, UTC, exactly three fractional digits). Java's v2 Enhanced Client reads
// it as a java.time.Instant.
const JavaDateLayout = schema.JavaDateLayout

// JavaBool returns b as a javabool attribute stores it (the number 1 or 0),
// for conditions and filters the mapper cannot convert by itself:
// expression.Value(dynamo.JavaBool(true)).
func JavaBool(b bool) types.AttributeValue { return schema.JavaBoolAV(b) }

// JavaDate returns t as a javadate attribute stores it (a string in
// JavaDateLayout, UTC, milliseconds), for conditions and filters the mapper
// cannot convert by itself: expression.Value(dynamo.JavaDate(t)).
func JavaDate(t time.Time) types.AttributeValue {
	return schema.JavaDateAV(t)
}
