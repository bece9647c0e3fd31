package peers

// What the mapper itself costs per call, without the SDK: Table.Save,
// Table.Load and Table.Update of the 12-attribute item against an
// in-process stub client that answers at once (the end-to-end benchmarks,
// e2e_test.go, add the SDK's serialization, signing and parsing, ~45 µs;
// this is the part of them the mapper adds, less the SDK's handling of the
// per-call option that records attempts). BENCHMARKS.md ("The cost of one
// request, end to end") gives the figures.

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
)

// updateStub is stub answering UpdateItem too, with an empty answer.
type updateStub struct {
	*stub
	updateOut *dynamodb.UpdateItemOutput
}

func (s *updateStub) UpdateItem(_ context.Context, _ *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return s.updateOut, nil
}

// BenchmarkMapperAlone: impl=save is a versioned Save (UpdateItem), load a
// Load, update an Update of a key the Table wrote last (one UpdateItem, no
// read), incrementing one attribute.
func BenchmarkMapperAlone(b *testing.B) {
	ctx := context.Background()
	s := &updateStub{stub: newStub(b), updateOut: &dynamodb.UpdateItemOutput{}}
	t, err := dynamo.NewTable[profile](dynamo.NewMapper(s), tableName)
	if err != nil {
		b.Fatal(err)
	}
	p := item()
	key := profile{ID: p.ID}
	for range 2 { // the first reads; the second is the shape measured
		if _, err := t.Update(ctx, key, inc); err != nil {
			b.Fatal(err)
		}
	}
	runImpls(b,
		impl{"save", func() error { _, err := t.Save(ctx, p); return err }},
		impl{"load", func() error { _, err := t.Load(ctx, key); return err }},
		impl{"update", func() error { _, err := t.Update(ctx, key, inc); return err }},
	)
}
