package peers

// Client CPU and allocations of a versioned put and a load of one realistic
// 12-attribute item, three implementations side by side against one
// in-process stub client (no network):
//
//   - impl=mapper: this library, Table.Save with WithSaveBehavior(SavePut)
//     and Table.Load;
//   - impl=handwritten: attributevalue + expression code, as a careful SDK
//     user writes it;
//   - impl=guregu: github.com/guregu/dynamo/v2, Put(...).If("'version' = ?")
//     and Get(...).One.
//
// TestPeersSameRequest checks that the three send the same request (and
// decode the same value); BENCHMARKS.md ("Peers: client CPU and
// allocations") says exactly what is compared. scripts/bench-peers.sh runs
// the rounds interleaved and prints benchstat's comparison.

import (
	"context"
	"encoding/binary"
	"flag"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	guregu "github.com/guregu/dynamo/v2"
	"github.com/guregu/dynamo/v2/dynamodbiface"

	"github.com/ddbkit/dynamo"
)

// profile is the item of the mapper and of the hand-written code: 12
// attributes — strings, ints, two time.Time, a string set, a string map and
// the version.
type profile struct {
	ID        string            `dynamo:"id,hash"`
	Version   int64             `dynamo:"version,version"`
	Name      string            `dynamo:"name"`
	Email     string            `dynamo:"email"`
	Country   string            `dynamo:"country"`
	Age       int               `dynamo:"age"`
	Logins    int               `dynamo:"logins"`
	Visits    int64             `dynamo:"visits"`
	CreatedAt time.Time         `dynamo:"created_at"`
	UpdatedAt time.Time         `dynamo:"updated_at"`
	Tags      []string          `dynamo:"tags,stringset"`
	Attrs     map[string]string `dynamo:"attrs"`
}

// gProfile is the same item as guregu/dynamo users declare it: `set` for the
// string set, no version option (guregu has none; the condition is written
// by hand). Token carries the mapper's write token so that guregu's request
// is the same item; it is empty (and omitted) on load.
type gProfile struct {
	ID        string            `dynamo:"id,hash"`
	Version   int64             `dynamo:"version"`
	Name      string            `dynamo:"name"`
	Email     string            `dynamo:"email"`
	Country   string            `dynamo:"country"`
	Age       int               `dynamo:"age"`
	Logins    int               `dynamo:"logins"`
	Visits    int64             `dynamo:"visits"`
	CreatedAt time.Time         `dynamo:"created_at"`
	UpdatedAt time.Time         `dynamo:"updated_at"`
	Tags      []string          `dynamo:"tags,set"`
	Attrs     map[string]string `dynamo:"attrs"`
	Token     []byte            `dynamo:"ddbkit_wt,omitempty"`
}

const tableName = "Profiles"

func item() profile {
	return profile{
		ID:        "user#7c0f3b5e-2a41-4d8e-9b7e-5f3c1a2d4e6f",
		Version:   3,
		Name:      "Ada Lovelace",
		Email:     "ada@example.com",
		Country:   "GB",
		Age:       36,
		Logins:    412,
		Visits:    1842,
		CreatedAt: time.Date(2024, 3, 14, 15, 9, 26, 535897000, time.UTC),
		UpdatedAt: time.Date(2026, 11, 2, 8, 0, 1, 0, time.UTC),
		Tags:      []string{"admin", "beta", "eu-west-1"},
		Attrs:     map[string]string{"theme": "dark", "lang": "en-GB"},
	}
}

func gItem() gProfile {
	p := item()
	return gProfile{ID: p.ID, Version: p.Version, Name: p.Name, Email: p.Email, Country: p.Country, Age: p.Age,
		Logins: p.Logins, Visits: p.Visits, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt, Tags: p.Tags, Attrs: p.Attrs}
}

// newToken is the mapper's write token (token.go): 16 random bytes.
func newToken() []byte {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	if b[0] == 0 {
		b[0] = 1
	}
	return b[:]
}

// stub answers GetItem and PutItem with canned successes and keeps a pointer
// to the last input of each (no allocation). It satisfies both dynamo.Client
// and guregu's dynamodbiface.DynamoDBAPI; other methods panic.
type stub struct {
	dynamodbiface.DynamoDBAPI

	getOut  *dynamodb.GetItemOutput // the stored item, marshaled once
	putOut  *dynamodb.PutItemOutput
	lastGet *dynamodb.GetItemInput
	lastPut *dynamodb.PutItemInput
}

func newStub(tb testing.TB) *stub {
	stored := item()
	av, err := attributevalue.MarshalMapWithOptions(&stored, encOpts)
	if err != nil {
		tb.Fatal(err)
	}
	return &stub{getOut: &dynamodb.GetItemOutput{Item: av}, putOut: &dynamodb.PutItemOutput{}}
}

func (s *stub) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	s.lastGet = in
	return s.getOut, nil
}

func (s *stub) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	s.lastPut = in
	return s.putOut, nil
}

var _ dynamo.Client = (*stub)(nil)

func encOpts(o *attributevalue.EncoderOptions) { o.TagKey = dynamo.TagKey }
func decOpts(o *attributevalue.DecoderOptions) { o.TagKey = dynamo.TagKey }

// ---- the three implementations ------------------------------------------------

// mapperPut is the mapper's versioned put: PutItem of the whole item with
// version held+1 on condition version = held, ALL_OLD on failure, its write
// token in the item.
func mapperPut(ctx context.Context, t *dynamo.Table[profile], p profile) (profile, error) {
	return t.Save(ctx, p, dynamo.WithSaveBehavior(dynamo.SavePut))
}

// handPut sends the same request with attributevalue + expression.
func handPut(ctx context.Context, c dynamo.Client, p *profile) error {
	held := p.Version
	next := *p
	next.Version = held + 1
	av, err := attributevalue.MarshalMapWithOptions(&next, encOpts)
	if err != nil {
		return err
	}
	av[dynamo.DefaultWriteTokenAttribute] = &types.AttributeValueMemberB{Value: newToken()}
	e, err := expression.NewBuilder().WithCondition(expression.Name("version").Equal(expression.Value(held))).Build()
	if err != nil {
		return err
	}
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                           aws.String(tableName),
		Item:                                av,
		ConditionExpression:                 e.Condition(),
		ExpressionAttributeNames:            e.Names(),
		ExpressionAttributeValues:           e.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}); err != nil {
		return err
	}
	p.Version = held + 1
	return nil
}

// gureguPut is guregu/dynamo's conditional put the way its users write a
// version check: the item with version held+1, If("'version' = ?", held).
// guregu offers no ReturnValuesOnConditionCheckFailure, so its request lacks
// ALL_OLD; it writes the same token (one more field in gProfile).
func gureguPut(ctx context.Context, t guregu.Table, p *gProfile) error {
	held := p.Version
	next := *p
	next.Version = held + 1
	next.Token = newToken()
	if err := t.Put(&next).If("'version' = ?", held).Run(ctx); err != nil {
		return err
	}
	p.Version = held + 1
	return nil
}

func handLoad(ctx context.Context, c dynamo.Client, id string) (profile, error) {
	var p profile
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(tableName),
		Key:       map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id}},
	})
	if err != nil {
		return p, err
	}
	if out.Item == nil {
		return p, dynamo.ErrNotFound
	}
	err = attributevalue.UnmarshalMapWithOptions(out.Item, &p, decOpts)
	return p, err
}

func gureguLoad(ctx context.Context, t guregu.Table, id string) (gProfile, error) {
	var p gProfile
	err := t.Get("id", id).One(ctx, &p)
	return p, err
}

// ---- benchmarks -----------------------------------------------------------------

// Besides ns/op (wall time, which on a shared machine includes the time the
// process waited for a core), each sub-benchmark reports cpu-ns/op: the
// process's CPU time (user + system, all threads, the garbage collector's
// included) per call, which waiting does not inflate.

// order rotates which implementation runs first: scripts/bench-peers.sh
// passes the round number, so that each is first, second and third equally
// often and machine-load drift does not favour one.
var order = flag.Int("peers.order", 0, "benchmarks: rotate the order of the implementations by this many places")

type impl struct {
	name string
	f    func() error
}

func runImpls(b *testing.B, impls ...impl) {
	for i := range impls {
		im := impls[(i+*order)%len(impls)]
		b.Run("impl="+im.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				if err := im.f(); err != nil {
					b.Fatal(err)
				}
			}
			if cpu := processCPU() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

type fixture struct {
	stub   *stub
	mapper *dynamo.Table[profile]
	gtable guregu.Table
}

func newFixture(tb testing.TB) fixture {
	s := newStub(tb)
	t, err := dynamo.NewTable[profile](dynamo.NewMapper(s), tableName)
	if err != nil {
		tb.Fatal(err)
	}
	return fixture{stub: s, mapper: t, gtable: guregu.NewFromIface(s).Table(tableName)}
}

func BenchmarkPut(b *testing.B) {
	ctx := context.Background()
	fx := newFixture(b)
	p, g := item(), gItem()
	runImpls(b,
		impl{"mapper", func() error { _, err := mapperPut(ctx, fx.mapper, p); return err }},
		impl{"handwritten", func() error { q := p; return handPut(ctx, fx.stub, &q) }},
		impl{"guregu", func() error { q := g; return gureguPut(ctx, fx.gtable, &q) }},
	)
}

func BenchmarkLoad(b *testing.B) {
	ctx := context.Background()
	fx := newFixture(b)
	id := item().ID
	runImpls(b,
		impl{"mapper", func() error { _, err := fx.mapper.Load(ctx, profile{ID: id}); return err }},
		impl{"handwritten", func() error { _, err := handLoad(ctx, fx.stub, id); return err }},
		impl{"guregu", func() error { _, err := gureguLoad(ctx, fx.gtable, id); return err }},
	)
}
