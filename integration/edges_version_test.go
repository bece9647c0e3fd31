package integration

// Issue "Hold at every edge", items 2 and 4: Update of a type without a
// version never loses an increment; no write stores a version the field
// cannot hold.

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

type unversionedCounter struct {
	ID   string            `dynamo:"id,hash"`
	N    int               `dynamo:"n"`
	Seen []string          `dynamo:"seen,set,omitempty"`
	Meta map[string]string `dynamo:"meta,omitempty"`
}

// Four Tables (four processes' worth) × 10 increments of a counter without
// a version: all 40 kept. Update guards each write with the attributes it
// read.
func TestUnversionedUpdateAcrossTables(t *testing.T) {
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "plain", "id", types.ScalarAttributeTypeS, "", "")
	const tables, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, tables*each)
	for i := range tables {
		tb, err := dynamo.NewTable[unversionedCounter](dynamo.NewMapper(dynamotest.Client(t)), name)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				_, err := tb.Update(ctx(t), unversionedCounter{ID: "c"}, func(c unversionedCounter) (unversionedCounter, error) {
					c.N++
					c.Seen = append(c.Seen, strconv.Itoa(i*each+j))
					if c.Meta == nil {
						c.Meta = map[string]string{}
					}
					c.Meta["last"] = strconv.Itoa(i)
					return c, nil
				})
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	tb, _ := dynamo.NewTable[unversionedCounter](dynamo.NewMapper(dynamotest.Client(t)), name)
	got, err := tb.Load(ctx(t), unversionedCounter{ID: "c"}, dynamo.ConsistentRead())
	if err != nil || got.N != tables*each || len(got.Seen) != tables*each {
		t.Fatalf("counter = %d with %d ids seen, %v; want %d and %d (no increment lost)", got.N, len(got.Seen), err, tables*each, tables*each)
	}
}

type smallVersion struct {
	ID string `dynamo:"id,hash"`
	S  string `dynamo:"s"`
	V  int8   `dynamo:"v,version"`
}

type bigVersion struct {
	ID string `dynamo:"id,hash"`
	V  uint64 `dynamo:"v,version"`
}

type fullVersion struct {
	ID string `dynamo:"id,hash"`
	V  int64  `dynamo:"v,version"`
}

// An int8 version stored at 127: SaveClobber must not write 128 (the item
// would never load again); the error names the type to widen. A save
// holding 127 is refused before sending. A uint64 version beyond MaxInt64 is
// a version conflict told as such, and MaxInt64 held says "widen", not a
// negative next version.
func TestVersionRange(t *testing.T) {
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "range", "id", types.ScalarAttributeTypeS, "", "")
	c := ctx(t)
	put := func(id, v string) {
		rawPut(t, name, map[string]types.AttributeValue{
			"id": &types.AttributeValueMemberS{Value: id}, "v": &types.AttributeValueMemberN{Value: v},
		})
	}
	small, _ := dynamo.NewTable[smallVersion](dynamo.NewMapper(dynamotest.Client(t)), name)
	put("s", "127")
	_, err := small.Save(c, smallVersion{ID: "s", S: "x", V: 3}, dynamo.WithSaveBehavior(dynamo.SaveClobber))
	if err == nil || !strings.Contains(err.Error(), "int8") || !strings.Contains(err.Error(), "widen") {
		t.Fatalf("SaveClobber past int8 = %v; want an error naming int8 and saying to widen it", err)
	}
	got, err := small.Load(c, smallVersion{ID: "s"})
	if err != nil || got.V != 127 {
		t.Fatalf("Load after = %+v, %v; want version 127, still loadable", got, err)
	}
	if _, err := small.Save(c, got); !errors.Is(err, dynamo.ErrInvalidInput) || !strings.Contains(err.Error(), "int8") {
		t.Fatalf("Save holding 127 in an int8 = %v; want ErrInvalidInput naming int8", err)
	}

	big, _ := dynamo.NewTable[bigVersion](dynamo.NewMapper(dynamotest.Client(t)), name)
	put("b", "18446744073709551615")
	_, err = big.Save(c, bigVersion{ID: "b", V: 5})
	if !errors.Is(err, dynamo.ErrVersionConflict) || errors.Is(err, dynamo.ErrConditionFailed) ||
		!strings.Contains(err.Error(), "found 18446744073709551615") || strings.Contains(err.Error(), "without v") {
		t.Fatalf("Save over a version beyond int64 = %v; want a version conflict that shows the stored version", err)
	}
	if _, err := big.Save(c, bigVersion{ID: "b", V: math.MaxUint64}); !errors.Is(err, dynamo.ErrInvalidInput) {
		t.Fatalf("Save holding MaxUint64 = %v; want ErrInvalidInput", err)
	}

	full, _ := dynamo.NewTable[fullVersion](dynamo.NewMapper(dynamotest.Client(t)), name)
	put("f", strconv.FormatInt(math.MaxInt64, 10))
	_, err = full.Save(c, fullVersion{ID: "f", V: math.MaxInt64})
	if !errors.Is(err, dynamo.ErrInvalidInput) || strings.Contains(err.Error(), "-9223372036854775808") {
		t.Fatalf("Save holding MaxInt64 = %v; want ErrInvalidInput without a negative next version", err)
	}
	if _, err := full.Save(c, fullVersion{ID: "f"}, dynamo.WithSaveBehavior(dynamo.SaveClobber)); err == nil || !strings.Contains(err.Error(), "math.MaxInt64") {
		t.Fatalf("SaveClobber over MaxInt64 = %v; want refused", err)
	}
}

// A uint64 version at MaxInt64: the mapper refuses to go further (it keeps
// versions in int64), and its error names that real limit, not "widen it to
// int64" (a narrower type that would not help).
func TestUint64VersionLimitMessage(t *testing.T) {
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "u64", "id", types.ScalarAttributeTypeS, "", "")
	c := ctx(t)
	rawPut(t, name, map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: "b"}, "v": &types.AttributeValueMemberN{Value: strconv.FormatInt(math.MaxInt64, 10)},
	})
	big, _ := dynamo.NewTable[bigVersion](dynamo.NewMapper(dynamotest.Client(t)), name)
	_, err := big.Save(c, bigVersion{ID: "b", V: math.MaxInt64})
	if err == nil {
		t.Fatal("Save holding MaxInt64 succeeded")
	}
	if strings.Contains(err.Error(), "widen it (int64)") || strings.Contains(err.Error(), "use int64") {
		t.Errorf("Save holding MaxInt64 in a uint64: %v; tells the user to widen a uint64 to int64", err)
	}
	_, err = big.Save(c, bigVersion{ID: "b"}, dynamo.WithSaveBehavior(dynamo.SaveClobber))
	if err == nil {
		t.Fatal("SaveClobber over MaxInt64 succeeded")
	}
	if strings.Contains(err.Error(), "widen it (int64)") {
		t.Errorf("SaveClobber over MaxInt64 in a uint64: %v; tells the user to widen a uint64 to int64", err)
	}
}

// The write-token attribute holds a value that is not binary — the name is
// also used by another writer (WithWriteTokenAttribute("etag") on items
// another service stamps with an S etag), or a tool rewrote it. With nobody
// else writing, Update either writes or says at once what is wrong
// (ErrInvalidInput); it never fails every attempt until MaxAttempts.
func TestUpdateOverForeignTokenType(t *testing.T) {
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "wt", "id", types.ScalarAttributeTypeS, "", "")
	c := ctx(t)
	rawPut(t, name, map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: "k"}, "v": &types.AttributeValueMemberN{Value: "1"},
		dynamo.DefaultWriteTokenAttribute: &types.AttributeValueMemberS{Value: "not-binary"},
	})
	tb, _ := dynamo.NewTable[incJob](dynamo.NewMapper(dynamotest.Client(t),
		dynamo.WithRetry(dynamo.RetryPolicy{MaxAttempts: 5, BackoffBase: time.Nanosecond, BackoffMax: time.Nanosecond})), name)
	calls := 0
	got, err := tb.Update(c, incJob{ID: "k"}, func(j incJob) (incJob, error) {
		calls++
		j.Owner = "me"
		return j, nil
	})
	if err != nil && !errors.Is(err, dynamo.ErrInvalidInput) {
		t.Fatalf("Update of an item nobody else writes = %+v, %v after %d calls of fn; want success (or a clear error at once)", got, err, calls)
	}
}
