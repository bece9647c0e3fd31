package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Load reads the item whose primary key is the key fields of key (other
// fields of key are ignored) with one GetItem. It returns an error wrapping
// ErrNotFound when there is no such item. ctx bounds the request, including
// the SDK's retries.
//
// IAM: dynamodb:GetItem.
func (t *Table[T]) Load(ctx context.Context, key T, opts ...ReadOption) (T, error) {
	var zero T
	var ro readOptions
	for _, fn := range opts {
		fn(&ro)
	}
	_, v, err := t.box(key, "Load")
	if err != nil {
		return zero, err
	}
	k, err := t.keyOf(v)
	if err != nil {
		return zero, err
	}
	in := &dynamodb.GetItemInput{TableName: aws.String(t.name), Key: k}
	if ro.consistent {
		in.ConsistentRead = aws.Bool(true)
	}
	out, err := t.m.client.GetItem(ctx, in)
	if err != nil {
		return zero, fmt.Errorf("dynamo: load from table %q key %s: %w", t.name, formatKey(k), err)
	}
	if out.Item == nil {
		return zero, fmt.Errorf("%w: table %q key %s", ErrNotFound, t.name, formatKey(k))
	}
	return t.decode(out.Item)
}
