package dynamo

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// BenchmarkOptions measures Save and Load with no option and with one option
// made at the call, as users write them: applying options must cost no
// allocation beyond the option's own.
func BenchmarkOptions(b *testing.B) {
	ctx := context.Background()
	c := newBenchClient(b)
	t := newBenchTable(b, c)
	item := benchItem()
	key := benchProfile{ID: item.ID}
	cond := expression.Name("id").AttributeExists()
	for _, bc := range []struct {
		name string
		f    func() error
	}{
		{"Save", func() error { _, err := t.Save(ctx, item); return err }},
		{"Save/SavePut", func() error { _, err := t.Save(ctx, item, WithSaveBehavior(SavePut)); return err }},
		{"Save/If", func() error { _, err := t.Save(ctx, item, If(cond)); return err }},
		{"Load", func() error { _, err := t.Load(ctx, key); return err }},
		{"Load/ConsistentRead", func() error { _, err := t.Load(ctx, key, ConsistentRead()); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.f(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
