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
	ctx, c := t.m.begin(ctx, "Load", t.name)
	item, err := t.load(ctx, &c, &key, opts)
	return item, c.end(err)
}

func (t *Table[T]) load(ctx context.Context, c *call, key *T, opts []ReadOption) (T, error) {
	var zero T
	var ro readOptions
	if len(opts) > 0 {
		ro = applyReadOptions(opts)
	}
	k, err := t.keyOfItem(key, "Load")
	if err != nil {
		return zero, err
	}
	in := &dynamodb.GetItemInput{TableName: &t.name, Key: k}
	if t.p.Proj != "" {
		in.ProjectionExpression, in.ExpressionAttributeNames = &t.p.Proj, t.p.ProjNames
	}
	if ro.consistent {
		in.ConsistentRead = aws.Bool(true)
	}
	c.noteConsistent(ro.consistent)
	t.m.noteKey(ctx, k)
	out, err := t.m.client.GetItem(ctx, in)
	if err != nil {
		return zero, fmt.Errorf("dynamo: load from table %q key %s: %w", t.name, formatKey(k), err)
	}
	if out.Item == nil {
		return zero, fmt.Errorf("%w: table %q key %s", ErrNotFound, t.name, formatKey(k))
	}
	if err := notOurs(t.p.S, t.name, k, out.Item); err != nil {
		return zero, err
	}
	return t.decode(out.Item)
}
