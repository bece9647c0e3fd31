package peers

// Where the end-to-end excess of Save and Update comes from (BENCHMARKS.md,
// "The cost of one request, end to end"): impl=alone+sdk does in each
// iteration the mapper's own work against the stub client (as
// BenchmarkMapperAlone) and then sends the floor's request through the real
// client (as impl=sdk of the end-to-end benchmarks). So
//
//   - (alone+sdk) − sdk − alone is what running the mapper's work beside
//     the SDK's costs beyond each alone (caches, the collector);
//   - mapper − (alone+sdk) is what the mapper adds to the SDK's own path:
//     its handling of the per-call option that records attempts (the
//     option, its two middlewares, the retryer wrapper).

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
)

// BenchmarkE2EParts: impl=<op>-<part>, op save (a versioned Save) or
// update (an Update of a key the Table wrote last), part sdk, alone+sdk or
// mapper.
func BenchmarkE2EParts(b *testing.B) {
	ctx := context.Background()
	fx := newE2E(b)
	s := &updateStub{stub: newStub(b), updateOut: &dynamodb.UpdateItemOutput{}}
	st, err := dynamo.NewTable[profile](dynamo.NewMapper(s), tableName)
	if err != nil {
		b.Fatal(err)
	}
	p := item()
	key := profile{ID: p.ID}
	if _, err := fx.probe.Save(ctx, p); err != nil {
		b.Fatal(err)
	}
	saveFloor := fx.rec.lastUpdate
	for range 2 { // the first reads; the second is the shape measured
		for _, t := range []*dynamo.Table[profile]{fx.probe, fx.mapper, st} {
			if _, err := t.Update(ctx, key, inc); err != nil {
				b.Fatal(err)
			}
		}
	}
	updateFloor := fx.rec.lastUpdate
	send := func(in *dynamodb.UpdateItemInput) error { _, err := fx.client.UpdateItem(ctx, in); return err }
	runImpls(b,
		impl{"save-sdk", func() error { return send(saveFloor) }},
		impl{"save-alone+sdk", func() error {
			if _, err := st.Save(ctx, p); err != nil {
				return err
			}
			return send(saveFloor)
		}},
		impl{"save-mapper", func() error { _, err := fx.mapper.Save(ctx, p); return err }},
		impl{"update-sdk", func() error { return send(updateFloor) }},
		impl{"update-alone+sdk", func() error {
			if _, err := st.Update(ctx, key, inc); err != nil {
				return err
			}
			return send(updateFloor)
		}},
		impl{"update-mapper", func() error { _, err := fx.mapper.Update(ctx, key, inc); return err }},
	)
}
