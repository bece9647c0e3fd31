package dynamo

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
)

// holdClient holds UpdateItem number n (1-based) until release is closed.
type holdClient struct {
	Client
	n                int32
	count            atomic.Int32
	holding, release chan struct{}
}

func (c *holdClient) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if c.count.Add(1) == c.n {
		close(c.holding)
		<-c.release
	}
	return c.Client.UpdateItem(ctx, in, optFns...)
}

type narrowOrder struct {
	PK    string `dynamo:"pk,hash"`
	SK    string `dynamo:"sk,range"`
	Kind  string `dynamo:"kind,entity=order"`
	Total int    `dynamo:"total"`
	V     int8   `dynamo:"v,version,versionstart=7,versionstep=40"`
}

// Coalesced Updates of an entity type with a narrow version and a step: each
// caller gets what running the Updates one after another would give — its
// own copy (with the entity name, as Load returns it) at its own version —
// and the change that leaves no room in the int8 fails alone.
func TestBreak4CoalescedEntityNarrowVersion(t *testing.T) {
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "shop", "pk", types.ScalarAttributeTypeS, "sk", types.ScalarAttributeTypeS)
	hc := &holdClient{Client: c, n: 2, holding: make(chan struct{}), release: make(chan struct{})}
	orders, err := NewTable[narrowOrder](NewMapper(hc), name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	key := narrowOrder{PK: "C#1", SK: "O#1"}
	add := func(o narrowOrder) (narrowOrder, error) { o.Total++; return o, nil }
	if got, err := orders.Update(ctx, key, add); err != nil || got.V != 7 || got.Kind != "order" {
		t.Fatalf("first Update = %+v, %v", got, err)
	}
	type res struct {
		o   narrowOrder
		err error
	}
	start := func() <-chan res {
		ch := make(chan res, 1)
		go func() { o, err := orders.Update(ctx, key, add); ch <- res{o, err} }()
		return ch
	}
	lead := start()
	<-hc.holding
	f1 := start()
	waitQueued(orders, orders.p.keyID(map[string]types.AttributeValue{"pk": str("C#1"), "sk": str("O#1")}), 2)
	f2 := start()
	waitQueued(orders, orders.p.keyID(map[string]types.AttributeValue{"pk": str("C#1"), "sk": str("O#1")}), 3)
	f3 := start()
	waitQueued(orders, orders.p.keyID(map[string]types.AttributeValue{"pk": str("C#1"), "sk": str("O#1")}), 4)
	close(hc.release)
	r0, r1, r2, r3 := <-lead, <-f1, <-f2, <-f3
	if r0.err != nil || r0.o.V != 47 || r0.o.Total != 2 || r0.o.Kind != "order" {
		t.Errorf("lead = %+v, %v; want total 2 version 80 kind order", r0.o, r0.err)
	}
	if r1.err != nil || r1.o.V != 87 || r1.o.Total != 3 || r1.o.Kind != "order" {
		t.Errorf("first follower = %+v, %v; want total 3 version 87 kind order", r1.o, r1.err)
	}
	if r2.err != nil || r2.o.V != 127 || r2.o.Total != 4 || r2.o.Kind != "order" {
		t.Errorf("second follower = %+v, %v; want total 4 version 127 kind order", r2.o, r2.err)
	}
	if !errors.Is(r3.err, ErrInvalidInput) {
		t.Errorf("third follower = %+v, %v; want ErrInvalidInput: no room for version 167 in an int8", r3.o, r3.err)
	}
	got, err := orders.Load(ctx, key, ConsistentRead())
	if err != nil || got.V != 127 || got.Total != 4 {
		t.Errorf("stored %+v, %v; want total 4 version 127", got, err)
	}
}
