package dynamotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

const (
	tableTimeout  = 60 * time.Second
	tablePoll     = 25 * time.Millisecond
	maxPrefixLen  = 200 // table names may have 255 characters; the suffix takes 13
	deleteTimeout = 30 * time.Second
)

// CreateTable creates a table from in under a unique name, waits until it is
// ACTIVE, deletes it when the test ends (tb.Cleanup) and returns its name.
//
// The name is in.TableName (or, when that is empty, the test's name with
// characters DynamoDB does not allow replaced) followed by '-' and a random
// suffix. When in sets neither BillingMode nor ProvisionedThroughput, the table is
// PAY_PER_REQUEST. in is not modified.
//
// CreateTable polls DescribeTable every 25 ms rather than using the SDK's waiter,
// which sleeps at least 20 s. Any error fails the test.
func CreateTable(tb testing.TB, c *dynamodb.Client, in *dynamodb.CreateTableInput) string {
	tb.Helper()
	prefix := aws.ToString(in.TableName)
	if prefix == "" {
		prefix = tableName(tb.Name())
	}
	name := uniqueName(prefix)

	req := *in // the fields replaced below are not shared with in
	req.TableName = aws.String(name)
	if req.BillingMode == "" && req.ProvisionedThroughput == nil {
		req.BillingMode = types.BillingModePayPerRequest
	}

	ctx, cancel := context.WithTimeout(tb.Context(), tableTimeout)
	defer cancel()
	if _, err := c.CreateTable(ctx, &req); err != nil {
		tb.Fatalf("dynamotest: creating table %s: %v", name, err)
	}
	tb.Cleanup(func() { deleteTable(tb, c, name) })
	if err := waitActive(ctx, c, name); err != nil {
		tb.Fatalf("dynamotest: table %s did not become ACTIVE: %v", name, err)
	}
	return name
}

// KeyTable creates a PAY_PER_REQUEST table with hash key hashAttr of type
// hashType and, unless rangeAttr is "", range key rangeAttr of type rangeType,
// as [CreateTable] does, and returns its name. prefix starts the name; "" means
// the test's name.
func KeyTable(tb testing.TB, c *dynamodb.Client, prefix string,
	hashAttr string, hashType types.ScalarAttributeType,
	rangeAttr string, rangeType types.ScalarAttributeType,
) string {
	tb.Helper()
	in := &dynamodb.CreateTableInput{
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(hashAttr), AttributeType: hashType}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(hashAttr), KeyType: types.KeyTypeHash}},
	}
	if prefix != "" {
		in.TableName = aws.String(prefix)
	}
	if rangeAttr != "" {
		in.AttributeDefinitions = append(in.AttributeDefinitions,
			types.AttributeDefinition{AttributeName: aws.String(rangeAttr), AttributeType: rangeType})
		in.KeySchema = append(in.KeySchema,
			types.KeySchemaElement{AttributeName: aws.String(rangeAttr), KeyType: types.KeyTypeRange})
	}
	return CreateTable(tb, c, in)
}

// waitActive polls DescribeTable until the table and all its global secondary
// indexes are ACTIVE.
func waitActive(ctx context.Context, c *dynamodb.Client, name string) error {
	ticker := time.NewTicker(tablePoll)
	defer ticker.Stop()
	for {
		out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			return err
		}
		if active(out.Table) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
	}
}

func active(t *types.TableDescription) bool {
	if t == nil || t.TableStatus != types.TableStatusActive {
		return false
	}
	for _, gsi := range t.GlobalSecondaryIndexes {
		if gsi.IndexStatus != types.IndexStatusActive {
			return false
		}
	}
	return true
}

// deleteTable deletes a table at the end of a test. The test's own context is
// done by then, so it uses a fresh one.
func deleteTable(tb testing.TB, c *dynamodb.Client, name string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
	defer cancel()
	_, err := c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	var notFound *types.ResourceNotFoundException
	if err != nil && !errors.As(err, &notFound) {
		tb.Errorf("dynamotest: deleting table %s: %v", name, err)
	}
}

// uniqueName returns prefix, cut to maxPrefixLen, followed by '-' and 12 random
// hex digits.
func uniqueName(prefix string) string {
	if len(prefix) > maxPrefixLen {
		prefix = prefix[:maxPrefixLen]
	}
	var b [6]byte
	_, _ = rand.Read(b[:]) // never fails
	return prefix + "-" + hex.EncodeToString(b[:])
}

// tableName turns a test name into a table name prefix: characters other than
// letters, digits, '_', '-' and '.' become '_'.
func tableName(testName string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '_', r == '-', r == '.':
			return r
		}
		return '_'
	}, testName)
}
