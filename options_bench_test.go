package dynamo

import (
	"context"
	"flag"
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

// benchOffFirst swaps the order of the sub-benchmarks opt=on and opt=off, so
// that rounds run with -count 1 can alternate it (as benchHandFirst does).
var benchOffFirst = flag.Bool("dynamo.offfirst", false, "benchmarks: run opt=off before opt=on")

// benchOnOff runs the sub-benchmarks opt=on (the optimisation in place) and
// opt=off (a Table or option with it turned off), each alone. Besides
// ns/op, each reports cpu-ns/op, the process's CPU time per call, which
// waiting for a core on a shared machine does not inflate.
func benchOnOff(b *testing.B, on, off func() error) {
	run := func(name string, f func() error) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				if err := f(); err != nil {
					b.Fatal(err)
				}
			}
			if cpu := processCPU() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			}
		})
	}
	if *benchOffFirst {
		run("opt=off", off)
		run("opt=on", on)
	} else {
		run("opt=on", on)
		run("opt=off", off)
	}
}

// BenchmarkKeptIf is Save with one If option made once and passed to every
// write, of 1 and of 3 conditions. opt=off empties the option's
// compilation (ifOption.compiled) before each write, so that it compiles at
// each write as a build without it would (plus storing it again: one small
// allocation more). The values are fixed (a bool, a number).
func BenchmarkKeptIf(b *testing.B) {
	ctx := context.Background()
	t := newBenchTable(b, newBenchClient(b))
	item := benchItem()
	one := expression.Name("active").Equal(expression.Value(true))
	three := one.And(expression.Name("age").GreaterThan(expression.Value(18)), expression.Name("email").AttributeExists())
	for _, bc := range []struct {
		name string
		cond expression.ConditionBuilder
	}{{"terms=1", one}, {"terms=3", three}} {
		kept := If(bc.cond)
		b.Run(bc.name, func(b *testing.B) {
			benchOnOff(b, func() error {
				_, err := t.Save(ctx, item, kept)
				return err
			}, func() error {
				kept.(*ifOption).compiled.Store(nil)
				_, err := t.Save(ctx, item, kept)
				return err
			})
		})
	}
}

// BenchmarkSaveValues is Save of a 12-attribute item nobody keeps, with the
// item encoded straight into the UpdateItem's values (Table.valueNames) and,
// opt=off, encoded into an item first.
func BenchmarkSaveValues(b *testing.B) {
	ctx := context.Background()
	on, off := newBenchTable(b, newBenchClient(b)), newBenchTable(b, newBenchClient(b))
	off.valueNames = nil
	item := benchItem()
	benchOnOff(b, func() error {
		_, err := on.Save(ctx, item)
		return err
	}, func() error {
		_, err := off.Save(ctx, item)
		return err
	})
}

// BenchmarkUpdateOneField is a lone caller's Update of a 12-attribute item
// that changes one attribute, and of a 4-attribute one, with the Table's
// optimisations in place and with one turned off: keptBit (the UpdateItem
// SETs only what changed) or readsBack (the next Update starts from the
// value written, not a decoding of the item).
func BenchmarkUpdateOneField(b *testing.B) {
	ctx := context.Background()
	for _, opt := range []string{"keptBit", "readsBack"} {
		b.Run("off="+opt+"/attrs=12", func(b *testing.B) {
			on, off := newBenchTable(b, newBenchClient(b)), newBenchTable(b, newBenchClient(b))
			turnOff(&off.table, opt)
			key := benchProfile{ID: benchItem().ID}
			inc := func(p benchProfile) (benchProfile, error) { p.Visits++; return p, nil }
			benchOnOff(b, func() error { _, err := on.Update(ctx, key, inc); return err },
				func() error { _, err := off.Update(ctx, key, inc); return err })
		})
		b.Run("off="+opt+"/attrs=4", func(b *testing.B) {
			on, err := NewTable[benchCounter](NewMapper(newBenchClient(b)), benchTable)
			if err != nil {
				b.Fatal(err)
			}
			off, err := NewTable[benchCounter](NewMapper(newBenchClient(b)), benchTable)
			if err != nil {
				b.Fatal(err)
			}
			turnOff(&off.table, opt)
			key := benchCounter{ID: benchItem().ID}
			inc := func(c benchCounter) (benchCounter, error) { c.N++; return c, nil }
			benchOnOff(b, func() error { _, err := on.Update(ctx, key, inc); return err },
				func() error { _, err := off.Update(ctx, key, inc); return err })
		})
	}
}

// turnOff turns the Table optimisation opt off in t.
func turnOff(t *table, opt string) {
	switch opt {
	case "keptBit":
		t.keptBit = nil
	case "readsBack":
		t.readsBack = false
	}
}
