package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// Loan has a composite key, a global index (hash and range), a local index
// and a ttl attribute.
type Loan struct {
	Library string    `dynamo:"library,hash"`
	Book    string    `dynamo:"book,range"`
	Member  string    `dynamo:"member,omitempty" index:"ByMember,hash"`
	Due     int64     `dynamo:"due" index:"ByMember,range" localIndex:"ByDue,range"`
	Expires time.Time `dynamo:"expires,ttl,unixtime"`
	Version int64     `dynamo:"v,version"`
}

// uniqueTable returns a table name made of the test's name, the time and
// random digits, so that runs and tests never share a table.
func uniqueTable(t *testing.T) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, t.Name())
	return fmt.Sprintf("%.200s-%d-%s", name, time.Now().UnixNano(), hex.EncodeToString(b[:]))
}

// newCreatedTable returns a Table[T] under a unique name whose table, if it
// exists when the test ends, is deleted then.
func newCreatedTable[T any](t *testing.T) *dynamo.Table[T] {
	t.Helper()
	tb, err := dynamo.NewTable[T](dynamo.NewMapper(dynamotest.Client(t)), uniqueTable(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := tb.DeleteTable(ctx); err != nil && !errors.Is(err, dynamo.ErrTableNotFound) {
			t.Errorf("cleanup: %v", err)
		}
	})
	return tb
}

func keySchemaString(ks []types.KeySchemaElement) string {
	var parts []string
	for _, k := range ks {
		parts = append(parts, string(k.KeyType)+" "+aws.ToString(k.AttributeName))
	}
	return strings.Join(parts, ", ")
}

// The table CreateTable makes from Loan's tags has Loan's keys, types and
// indexes, on-demand billing and TTL on "expires"; the index works; creating
// it again is ErrTableExists unless IfNotExists; DeleteTable removes it.
func TestCreateTableFromTags(t *testing.T) {
	loans := newCreatedTable[Loan](t)
	c, db := ctx(t), dynamotest.Client(t)
	start := time.Now()
	if err := loans.CreateTable(c); err != nil {
		t.Fatal(err)
	}
	t.Logf("CreateTable took %v", time.Since(start))

	out, err := db.DescribeTable(c, &dynamodb.DescribeTableInput{TableName: aws.String(loans.Name())})
	if err != nil {
		t.Fatal(err)
	}
	d := out.Table
	if d.TableStatus != types.TableStatusActive {
		t.Errorf("status %s", d.TableStatus)
	}
	if got := keySchemaString(d.KeySchema); got != "HASH library, RANGE book" {
		t.Errorf("key schema %s", got)
	}
	attrTypes := map[string]types.ScalarAttributeType{}
	for _, a := range d.AttributeDefinitions {
		attrTypes[aws.ToString(a.AttributeName)] = a.AttributeType
	}
	if fmt.Sprint(attrTypes) != "map[book:S due:N library:S member:S]" {
		t.Errorf("attribute definitions %v", attrTypes)
	}
	if d.BillingModeSummary == nil || d.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("billing mode summary %+v, want PAY_PER_REQUEST", d.BillingModeSummary)
	}
	if len(d.GlobalSecondaryIndexes) != 1 || aws.ToString(d.GlobalSecondaryIndexes[0].IndexName) != "ByMember" ||
		keySchemaString(d.GlobalSecondaryIndexes[0].KeySchema) != "HASH member, RANGE due" ||
		d.GlobalSecondaryIndexes[0].Projection.ProjectionType != types.ProjectionTypeAll ||
		d.GlobalSecondaryIndexes[0].IndexStatus != types.IndexStatusActive {
		t.Errorf("global indexes %+v", d.GlobalSecondaryIndexes)
	}
	if len(d.LocalSecondaryIndexes) != 1 || aws.ToString(d.LocalSecondaryIndexes[0].IndexName) != "ByDue" ||
		keySchemaString(d.LocalSecondaryIndexes[0].KeySchema) != "HASH library, RANGE due" {
		t.Errorf("local indexes %+v", d.LocalSecondaryIndexes)
	}

	ttl, err := db.DescribeTimeToLive(c, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(loans.Name())})
	if err != nil {
		t.Fatal(err)
	}
	if s := ttl.TimeToLiveDescription; s == nil || s.TimeToLiveStatus != types.TimeToLiveStatusEnabled || aws.ToString(s.AttributeName) != "expires" {
		t.Errorf("TTL %+v, want ENABLED on expires", s)
	}

	// The table takes Loans, and the global index finds them.
	saved, err := loans.Save(c, Loan{Library: "central", Book: "b1", Member: "ann", Due: 20, Expires: time.Now().Add(time.Hour)})
	if err != nil || saved.Version != 1 {
		t.Fatalf("Save: %+v %v", saved, err)
	}
	if _, err := loans.Save(c, Loan{Library: "central", Book: "b2"}); err != nil { // no member: not in ByMember
		t.Fatal(err)
	}
	q, err := db.Query(c, &dynamodb.QueryInput{
		TableName: aws.String(loans.Name()), IndexName: aws.String("ByMember"),
		KeyConditionExpression:    aws.String("#m = :m"),
		ExpressionAttributeNames:  map[string]string{"#m": "member"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":m": &types.AttributeValueMemberS{Value: "ann"}},
	})
	if err != nil {
		t.Fatalf("Query ByMember: %v", err)
	}
	if len(q.Items) != 1 {
		t.Errorf("Query ByMember: %d items, want 1", len(q.Items))
	}

	err = loans.CreateTable(c)
	var inUse *types.ResourceInUseException
	if !errors.Is(err, dynamo.ErrTableExists) || !errors.As(err, &inUse) {
		t.Errorf("second CreateTable: %v, want ErrTableExists", err)
	}
	mustContain(t, err, loans.Name(), "IfNotExists")
	if err := loans.CreateTable(c, dynamo.IfNotExists()); err != nil {
		t.Errorf("CreateTable with IfNotExists: %v", err)
	}

	if err := loans.DeleteTable(c); err != nil {
		t.Fatal(err)
	}
	_, err = db.DescribeTable(c, &dynamodb.DescribeTableInput{TableName: aws.String(loans.Name())})
	var notFound *types.ResourceNotFoundException
	if !errors.As(err, &notFound) {
		t.Errorf("DescribeTable after DeleteTable: %v, want ResourceNotFoundException", err)
	}
	err = loans.DeleteTable(c)
	if !errors.Is(err, dynamo.ErrTableNotFound) {
		t.Errorf("second DeleteTable: %v, want ErrTableNotFound", err)
	}
	mustContain(t, err, loans.Name())
}

func TestCreateTableProvisionedWithOptions(t *testing.T) {
	loans := newCreatedTable[*Loan](t)
	c, db := ctx(t), dynamotest.Client(t)
	err := loans.CreateTable(c,
		dynamo.WithProvisioned(3, 2),
		dynamo.WithProjection("ByMember", types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}),
		dynamo.WithStream(types.StreamViewTypeNewImage),
	)
	if err != nil {
		t.Fatal(err)
	}
	out, err := db.DescribeTable(c, &dynamodb.DescribeTableInput{TableName: aws.String(loans.Name())})
	if err != nil {
		t.Fatal(err)
	}
	d := out.Table
	if p := d.ProvisionedThroughput; p == nil || aws.ToInt64(p.ReadCapacityUnits) != 3 || aws.ToInt64(p.WriteCapacityUnits) != 2 {
		t.Errorf("table throughput %+v", p)
	}
	if len(d.GlobalSecondaryIndexes) != 1 {
		t.Fatalf("global indexes %+v", d.GlobalSecondaryIndexes)
	}
	g := d.GlobalSecondaryIndexes[0]
	if p := g.ProvisionedThroughput; p == nil || aws.ToInt64(p.ReadCapacityUnits) != 3 || aws.ToInt64(p.WriteCapacityUnits) != 2 {
		t.Errorf("index throughput %+v", p)
	}
	if g.Projection.ProjectionType != types.ProjectionTypeKeysOnly {
		t.Errorf("index projection %s", g.Projection.ProjectionType)
	}
	if s := d.StreamSpecification; s == nil || !aws.ToBool(s.StreamEnabled) || s.StreamViewType != types.StreamViewTypeNewImage {
		t.Errorf("stream %+v", s)
	}
}

// IfNotExists refuses a table under the same name whose key differs from
// the tags, instead of letting every later write fail.
func TestCreateTableIfNotExistsOtherKey(t *testing.T) {
	db := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, db, "", "library", types.ScalarAttributeTypeS, "", "")
	loans, err := dynamo.NewTable[Loan](dynamo.NewMapper(db), name)
	if err != nil {
		t.Fatal(err)
	}
	err = loans.CreateTable(ctx(t), dynamo.IfNotExists())
	if !errors.Is(err, dynamo.ErrTableExists) {
		t.Fatalf("err = %v, want ErrTableExists", err)
	}
	mustContain(t, err, name, "its key is HASH library (S) where", "RANGE book (S)")
}
