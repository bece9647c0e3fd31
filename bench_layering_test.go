package dynamo

// Benchmarks of an Update and of one Query page against the stub clients of
// bench_test.go and bench_query_test.go, written so that the same file
// compiles before and after issue 40's layering (f3fda92): BENCHMARKS.md,
// "The layering's cost against f3fda92", runs both trees' binaries
// interleaved. Only names both trees have are used.

import (
	"context"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// layerCounter is a flat versioned item stored under benchItem's key.
type layerCounter struct {
	ID      string `dynamo:"id,hash"`
	Version int64  `dynamo:"version,version"`
	Name    string `dynamo:"name"`
	N       int64  `dynamo:"n"`
}

// benchUpdateLoop runs a lone caller's Update of key: the first call reads
// the item, every later one is the measured shape (one UpdateItem).
func benchUpdateLoop[T any](b *testing.B, key T, fn func(T) (T, error)) {
	ctx := context.Background()
	t, err := NewTable[T](NewMapper(newBenchClient(b)), benchTable)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := t.Update(ctx, key, fn); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := t.Update(ctx, key, fn); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdateKey is Update of one key by a lone caller: a flat item as
// a struct and as a pointer T, and the 12-attribute benchProfile.
func BenchmarkUpdateKey(b *testing.B) {
	id := benchItem().ID
	b.Run("T=counter", func(b *testing.B) {
		benchUpdateLoop(b, layerCounter{ID: id}, func(c layerCounter) (layerCounter, error) { c.N++; return c, nil })
	})
	b.Run("T=pointer", func(b *testing.B) {
		benchUpdateLoop(b, &layerCounter{ID: id}, func(c *layerCounter) (*layerCounter, error) { c.N++; return c, nil })
	})
	b.Run("T=profile", func(b *testing.B) {
		benchUpdateLoop(b, benchProfile{ID: id}, func(p benchProfile) (benchProfile, error) { p.Visits++; return p, nil })
	})
}

// BenchmarkQueryPage is one QueryPage call answered by one page of n
// items (the first n of benchQueryClient's first page, no next page).
func BenchmarkQueryPage(b *testing.B) {
	for _, n := range []int{1, benchQueryPageSize} {
		b.Run("items="+strconv.Itoa(n), func(b *testing.B) {
			ctx := context.Background()
			c := newBenchQueryClient(b)
			c.pages = []*dynamodb.QueryOutput{{Items: c.pages[0].Items[:n], Count: int32(n)}}
			t, err := NewTable[benchEntry](NewMapper(c), benchTable)
			if err != nil {
				b.Fatal(err)
			}
			key := expression.Key("user").Equal(expression.Value(benchQueryUser))
			b.ReportAllocs()
			for b.Loop() {
				items, _, err := t.QueryPage(ctx, key)
				if err != nil || len(items) != n {
					b.Fatalf("QueryPage: %d items, %v; want %d", len(items), err, n)
				}
				benchSink += items[0].Age
			}
		})
	}
}
