package dynamotest

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
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

const (
	tableTimeout  = 60 * time.Second
	tablePoll     = 25 * time.Millisecond
	maxPrefixLen  = 200 // table names may have 255 characters; the suffix takes 13
	deleteTimeout = 30 * time.Second
)

// CreateTable creates a table from in under a unique name, waits until it is
// ACTIVE (polling DescribeTable every 25 ms, not the SDK's waiter, which
// sleeps at least 20 s), deletes it when the test ends (tb.Cleanup) and
// returns its name: in.TableName (or the test's name with characters
// DynamoDB does not allow replaced) followed by '-' and a random suffix.
// When in sets neither BillingMode nor ProvisionedThroughput, the table is
// PAY_PER_REQUEST. in is not modified.
//
// CreateTable is safe under faults (a client of [Faults] or [Dropper]): the
// deletion is registered before the first request, so a failure never leaves
// the table behind; a ResourceInUseException for the name it generated (a
// retry whose first attempt was applied but lost) means the table is its own,
// and it waits for it; throttling, 500s and connection errors that outlast the
// SDK's retries are retried until a minute has passed. Any other error fails
// the test.
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

	// Registered first: whatever happens below, the table (if it was made) goes.
	tb.Cleanup(func() { deleteTable(tb, c, name) })
	ctx, cancel := context.WithTimeout(tb.Context(), tableTimeout)
	defer cancel()
	if err := createTable(ctx, c, &req); err != nil {
		tb.Fatalf("dynamotest: creating table %s: %v", name, err)
	}
	if err := waitActive(ctx, c, name); err != nil {
		tb.Fatalf("dynamotest: table %s did not become ACTIVE: %v", name, err)
	}
	return name
}

// createTable sends req until it succeeds, a ResourceInUseException says the
// table exists (req's name is unique to this call, so the table is ours: an
// earlier attempt was applied), an error that retrying cannot cure comes, or
// ctx is done.
func createTable(ctx context.Context, c *dynamodb.Client, req *dynamodb.CreateTableInput) error {
	for {
		_, err := c.CreateTable(ctx, req)
		var inUse *types.ResourceInUseException
		if err == nil || errors.As(err, &inUse) {
			return nil
		}
		if werr := pause(ctx, err); werr != nil {
			return werr
		}
	}
}

// pause returns err when it is not transient, and otherwise waits a poll
// interval and returns nil, or ctx's error with err when ctx is done first.
func pause(ctx context.Context, err error) error {
	if !transient(err) || ctx.Err() != nil {
		return err
	}
	t := time.NewTimer(tablePoll)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("%w (after %w)", ctx.Err(), err)
	case <-t.C:
		return nil
	}
}

// transient reports whether err may go away when the request is sent again:
// throttling, a server fault, or no answer at all (a connection error or a
// timeout of the attempt), as the fault transports produce them. A canceled
// or expired context is not.
func transient(err error) bool {
	if errors.Is(err, errNotYet) {
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var api smithy.APIError
	if !errors.As(err, &api) {
		// No answer from the service (the request failed to send, or its
		// answer was lost), as opposed to an error of the client itself,
		// such as a parameter it refused before sending.
		var re *awshttp.ResponseError
		return errors.As(err, &re) && re.HTTPStatusCode() == 0
	}
	switch api.ErrorCode() {
	case "ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded",
		"LimitExceededException", "InternalFailure", "InternalServerError", "ServiceUnavailable":
		return true
	}
	return api.ErrorFault() == smithy.FaultServer
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
// indexes are ACTIVE. Transient errors are retried, and so is a
// ResourceNotFoundException: the table was created (or found in use), and
// DynamoDB's DescribeTable may not show a new table at once.
func waitActive(ctx context.Context, c *dynamodb.Client, name string) error {
	for {
		out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		var notFound *types.ResourceNotFoundException
		switch {
		case err == nil && active(out.Table):
			return nil
		case err == nil:
			var status types.TableStatus
			if out.Table != nil {
				status = out.Table.TableStatus
			}
			err = fmt.Errorf("%w (status %s)", errNotYet, status)
		case errors.As(err, &notFound):
			err = fmt.Errorf("%w (%w)", errNotYet, err)
		}
		if werr := pause(ctx, err); werr != nil {
			return werr
		}
	}
}

// errNotYet stands for a table that is not ACTIVE yet, or still in use.
// It is transient.
var errNotYet = errors.New("not ACTIVE yet")

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

// deleteTable deletes a table at the end of a test; a table that does not
// exist (never made, or deleted by an earlier attempt whose answer was lost) is
// fine. Transient errors, and a table still being created or updated
// (ResourceInUseException), are retried. The test's own context is done by
// then, so it uses a fresh one.
func deleteTable(tb testing.TB, c *dynamodb.Client, name string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
	defer cancel()
	for {
		_, err := c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		var notFound *types.ResourceNotFoundException
		if err == nil || errors.As(err, &notFound) {
			return
		}
		var inUse *types.ResourceInUseException
		if errors.As(err, &inUse) {
			err = errNotYet // retry, as for a transient error
		}
		if werr := pause(ctx, err); werr != nil {
			tb.Errorf("dynamotest: deleting table %s: %v", name, werr)
			return
		}
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
