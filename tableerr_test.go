package dynamo

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestMissingTableIsExplained pins what a call on a table that does not
// exist returns: DynamoDB's ResourceNotFoundException, still reachable
// with errors.As, wrapped in an error that satisfies
// errors.Is(err, ErrTableNotFound), names the table and says how to create
// it.
func TestMissingTableIsExplained(t *testing.T) {
	db := &fakeDB{}
	db.fail("", 0, &types.ResourceNotFoundException{Message: aws.String("Cannot do operations on a non-existent table")})
	books := newBooks(t, db)
	_, err := books.Load(context.Background(), Book{ISBN: "1"})
	var rnf *types.ResourceNotFoundException
	if !errors.Is(err, ErrTableNotFound) || !errors.As(err, &rnf) || !strings.Contains(err.Error(), `table "Books" does not exist`) ||
		!strings.Contains(err.Error(), "Table.CreateTable") {
		t.Errorf("Load on a missing table: %v; want ErrTableNotFound naming table \"Books\" and how to create it", err)
	}
}
