package dynamo

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// stubClient records requests and answers from hooks; unset hooks return an
// empty success. It implements Client without a network.
type stubClient struct {
	Client // nil: methods not overridden panic, which a test would show

	mu   sync.Mutex
	puts []*dynamodb.PutItemInput
	upds []*dynamodb.UpdateItemInput
	dels []*dynamodb.DeleteItemInput
	gets []*dynamodb.GetItemInput

	onPut func(*dynamodb.PutItemInput) (*dynamodb.PutItemOutput, error)
	onUpd func(*dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error)
	onDel func(*dynamodb.DeleteItemInput) (*dynamodb.DeleteItemOutput, error)
	onGet func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error)
}

func (c *stubClient) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.mu.Lock()
	c.puts = append(c.puts, in)
	c.mu.Unlock()
	if c.onPut != nil {
		return c.onPut(in)
	}
	return &dynamodb.PutItemOutput{}, nil
}

func (c *stubClient) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.mu.Lock()
	c.upds = append(c.upds, in)
	c.mu.Unlock()
	if c.onUpd != nil {
		return c.onUpd(in)
	}
	return &dynamodb.UpdateItemOutput{}, nil
}

func (c *stubClient) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	c.mu.Lock()
	c.dels = append(c.dels, in)
	c.mu.Unlock()
	if c.onDel != nil {
		return c.onDel(in)
	}
	return &dynamodb.DeleteItemOutput{}, nil
}

func (c *stubClient) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.mu.Lock()
	c.gets = append(c.gets, in)
	c.mu.Unlock()
	if c.onGet != nil {
		return c.onGet(in)
	}
	return nil, errUnexpected
}
