package dynamo

import (
	"context"
	"errors"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// tableErrors is the client a Mapper sends through: the caller's, with
// DynamoDB's ResourceNotFoundException turned into an error that also
// satisfies errors.Is(err, ErrTableNotFound) and says what to do, whatever
// the call; likewise ReplicatedWriteConflictException (ErrReplicatedConflict)
// and throttling (*ThrottlingError).
type tableErrors struct{ c Client }

// notFoundError is DynamoDB's ResourceNotFoundException, explained.
type notFoundError struct {
	table string // "" when the request named several tables
	err   error
}

func (e *notFoundError) Error() string {
	what := "a table of the request"
	if e.table != "" {
		what = "table " + strconv.Quote(e.table)
	}
	return "dynamo: " + what + " does not exist (create it first — Table.CreateTable, or dynamotest in tests — or check the table name, the region and the endpoint): " + e.err.Error()
}

// Unwrap returns ErrTableNotFound and DynamoDB's error.
func (e *notFoundError) Unwrap() []error { return []error{ErrTableNotFound, e.err} }

func explain(table *string, err error) error {
	if err == nil {
		return nil // before rnf, which escapes: no allocation on success
	}
	var rnf *types.ResourceNotFoundException
	if errors.As(err, &rnf) {
		return &notFoundError{table: aws.ToString(table), err: err}
	}
	var rwc *types.ReplicatedWriteConflictException
	if errors.As(err, &rwc) {
		return &replicatedConflict{table: aws.ToString(table), err: err}
	}
	if te := throttled(table, err); te != nil {
		return te
	}
	return err
}

func (w tableErrors) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	out, err := w.c.GetItem(ctx, in, o...)
	return out, explain(in.TableName, err)
}

func (w tableErrors) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	out, err := w.c.PutItem(ctx, in, o...)
	return out, explain(in.TableName, err)
}

func (w tableErrors) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	out, err := w.c.UpdateItem(ctx, in, o...)
	return out, explain(in.TableName, err)
}

func (w tableErrors) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	out, err := w.c.DeleteItem(ctx, in, o...)
	return out, explain(in.TableName, err)
}

func (w tableErrors) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	out, err := w.c.BatchGetItem(ctx, in, o...)
	return out, explain(onlyTable(in.RequestItems), err)
}

func (w tableErrors) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	out, err := w.c.BatchWriteItem(ctx, in, o...)
	return out, explain(onlyTable(in.RequestItems), err)
}

func (w tableErrors) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	out, err := w.c.TransactGetItems(ctx, in, o...)
	return out, explain(nil, err)
}

func (w tableErrors) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	out, err := w.c.TransactWriteItems(ctx, in, o...)
	return out, explain(nil, err)
}

func (w tableErrors) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := w.c.Query(ctx, in, o...)
	return out, explain(in.TableName, err)
}

func (w tableErrors) Scan(ctx context.Context, in *dynamodb.ScanInput, o ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	out, err := w.c.Scan(ctx, in, o...)
	return out, explain(in.TableName, err)
}

func (w tableErrors) CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, o ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	out, err := w.c.CreateTable(ctx, in, o...)
	if te := throttled(in.TableName, err); te != nil {
		return out, te
	}
	return out, err
}

func (w tableErrors) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, o ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	out, err := w.c.DescribeTable(ctx, in, o...)
	return out, explain(in.TableName, err)
}

func (w tableErrors) DeleteTable(ctx context.Context, in *dynamodb.DeleteTableInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error) {
	out, err := w.c.DeleteTable(ctx, in, o...)
	if te := throttled(in.TableName, err); te != nil {
		return out, te
	}
	return out, err
}

func (w tableErrors) UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error) {
	out, err := w.c.UpdateTimeToLive(ctx, in, o...)
	return out, explain(in.TableName, err)
}

// onlyTable returns the table of a batch request when it names one.
func onlyTable[V any](items map[string]V) *string {
	if len(items) != 1 {
		return nil
	}
	for name := range items {
		return &name
	}
	return nil
}
