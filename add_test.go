package dynamo

import (
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
)

type counterItem struct {
	ID       string    `dynamo:"id,hash"`
	Views    int64     `dynamo:"views"`
	Small    int8      `dynamo:"small"`
	Score    float64   `dynamo:"score"`
	Tags     []string  `dynamo:"tags,set,omitempty"`
	Nums     []int     `dynamo:"nums,numberset,omitempty"`
	List     []string  `dynamo:"list"`
	Name     string    `dynamo:"name"`
	Created  time.Time `dynamo:"created,created"`
	Modified time.Time `dynamo:"modified,modified"`
	V        int64     `dynamo:"v,version"`
}

func TestAddRefused(t *testing.T) {
	st := &stubClient{}
	tb, err := NewTable[counterItem](NewMapper(st), "c")
	if err != nil {
		t.Fatal(err)
	}
	k := counterItem{ID: "k"}
	for _, tc := range []struct {
		d    Delta
		opts []WriteOption
		want string
	}{
		{Delta{}, nil, "empty Delta"},
		{Increment("nope", 1), nil, "not an attribute of"},
		{Increment("Views", 1), nil, `field Views is stored as "views"`},
		{Increment("id", 1), nil, "is a key"},
		{Increment("v", 1), nil, "is the version"},
		{Increment("modified", 1), nil, "created or modified time"},
		{Increment("name", 1), nil, "not a number"},
		{Increment("views", 1.5), nil, "not a whole number"},
		{Increment("views", "1"), nil, "pass an integer"},
		{Increment("views", nil), nil, "pass a number"},
		{Increment("score", math.NaN()), nil, "no NaN"},
		{Increment("views", attributevalue.Number("x")), nil, "not a number"},
		{Increment("small", 300), nil, "beyond what field Small (int8) holds"},
		{Increment("views", 1).Increment("views", 2), nil, "changed twice"},
		{AddToSet("list", []string{"a"}), nil, "not stored as a set"},
		{AddToSet("tags", []int{1}), nil, "is a int, but field Tags is a set of strings"},
		{AddToSet("tags", []string{}), nil, "no elements"},
		{AddToSet("tags", "a"), nil, "pass a slice of strings"},
		{DeleteFromSet("nums", []string{"1"}), nil, "set of numbers"},
		{AddToSet("tags", []string{"\xff"}), nil, "not valid UTF-8"},
		{Increment("views", 1), []WriteOption{WithSaveBehavior(SavePut)}, "remove WithSaveBehavior"},
	} {
		_, err := tb.Add(t.Context(), k, tc.d, tc.opts...)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%+v) = %v, want ErrInvalidInput saying %q", tc.d, err, tc.want)
		}
	}
	if _, err := tb.Add(t.Context(), counterItem{}, Increment("views", 1)); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Add without a key = %v", err)
	}
	if n := len(st.upds) + len(st.gets); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
	// Reuse: a Delta's methods never change it.
	d := Increment("views", 1)
	d2 := d.Increment("score", 2)
	if len(d.ops) != 1 || len(d2.ops) != 2 {
		t.Fatal("Delta shared its list")
	}
}

func TestAdd(t *testing.T) {
	tb, fc := idTable[counterItem](t)
	ctx := t.Context()
	t0 := fc.Now()
	got, err := tb.Add(ctx, counterItem{ID: "k", Name: "ignored"}, Increment("views", 1).Increment("score", 0.5).AddToSet("tags", []string{"a", "b", "a"}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Views != 1 || got.Score != 0.5 || !slices.Equal(sorted(got.Tags), []string{"a", "b"}) || got.V != 1 || got.Name != "" ||
		!got.Created.Equal(t0) || !got.Modified.Equal(t0) {
		t.Fatalf("Add to a missing item = %+v", got)
	}
	held := got
	fc.Advance(time.Second)
	got, err = tb.Add(ctx, counterItem{ID: "k"}, Increment("views", 41).DeleteFromSet("tags", []string{"a"}).AddToSet("nums", []int{7}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Views != 42 || !slices.Equal(got.Tags, []string{"b"}) || !slices.Equal(got.Nums, []int{7}) || got.V != 2 ||
		!got.Created.Equal(t0) || !got.Modified.Equal(fc.Now()) {
		t.Fatalf("second Add = %+v", got)
	}
	loaded, err := tb.Load(ctx, counterItem{ID: "k"}, ConsistentRead())
	if err != nil || loaded.Views != 42 || loaded.V != 2 {
		t.Fatalf("stored %+v, %v", loaded, err)
	}
	// Whoever holds the copy from before the Add conflicts.
	held.Name = "stale"
	if _, err := tb.Save(ctx, held); !errors.Is(err, ErrVersionConflict) {
		t.Fatalf("Save of a copy read before Add = %v, want a conflict", err)
	}
	if err := tb.Delete(ctx, held); !errors.Is(err, ErrVersionConflict) {
		t.Fatalf("Delete of a copy read before Add = %v, want a conflict", err)
	}

	// Concurrent Adds all count, none conflicts.
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := tb.Add(ctx, counterItem{ID: "k"}, Increment("views", 1)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	loaded, _ = tb.Load(ctx, counterItem{ID: "k"}, ConsistentRead())
	if loaded.Views != 50 || loaded.V != 10 {
		t.Fatalf("after 8 concurrent Adds: views %d version %d, want 50 and 10", loaded.Views, loaded.V)
	}

	// An int8 counter stops at what the field holds.
	if _, err := tb.Add(ctx, counterItem{ID: "k"}, Increment("small", 100)); err != nil {
		t.Fatal(err)
	}
	_, err = tb.Add(ctx, counterItem{ID: "k"}, Increment("small", 100))
	if !errors.Is(err, ErrConditionFailed) || !strings.Contains(err.Error(), "would pass what field Small (int8) holds") {
		t.Fatalf("int8 past 127 = %v, want ErrConditionFailed naming the field", err)
	}
	if _, err := tb.Add(ctx, counterItem{ID: "k"}, Increment("small", -228)); err != nil { // 100-228 = -128
		t.Fatal(err)
	}
	if _, err := tb.Add(ctx, counterItem{ID: "k"}, Increment("small", -1)); !errors.Is(err, ErrConditionFailed) {
		t.Fatalf("int8 below -128 = %v, want ErrConditionFailed", err)
	}

	// An unsigned counter never goes below 0, also from a missing attribute.
	type ucount struct {
		ID string `dynamo:"id,hash"`
		U  uint8  `dynamo:"u"`
	}
	ut, err := NewTable[ucount](tb.Mapper(), tb.Name())
	if err != nil {
		t.Fatal(err)
	}
	_, err = ut.Add(ctx, ucount{ID: "u"}, Increment("u", -1))
	if !errors.Is(err, ErrConditionFailed) || !strings.Contains(err.Error(), "u is missing (0), and adding -1") {
		t.Fatalf("uint8 below 0 from a missing attribute = %v, want ErrConditionFailed", err)
	}
	if u, err := ut.Add(ctx, ucount{ID: "u"}, Increment("u", 255)); err != nil || u.U != 255 {
		t.Fatalf("uint8 to 255 = %+v, %v", u, err)
	}

	// If conditions: require the item to exist.
	exists := If(expression.AttributeExists(expression.Name("id")))
	if _, err := tb.Add(ctx, counterItem{ID: "missing"}, Increment("views", 1), exists); !errors.Is(err, ErrConditionFailed) {
		t.Fatalf("Add with an If that fails = %v", err)
	}
	if _, err := tb.Load(ctx, counterItem{ID: "missing"}, ConsistentRead()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a refused Add created the item: %v", err)
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// Add honours the version settings.
func TestAddVersionSettings(t *testing.T) {
	type stepCounter struct {
		ID string `dynamo:"id,hash"`
		N  int    `dynamo:"n"`
		V  int64  `dynamo:"v,version,versionstart=100,versionstep=10"`
	}
	tb, _ := idTable[stepCounter](t)
	ctx := t.Context()
	a, err := tb.Add(ctx, stepCounter{ID: "k"}, Increment("n", 1))
	if err != nil || a.V != 100 || a.N != 1 {
		t.Fatalf("Add to a missing item = %+v, %v; want version 100", a, err)
	}
	b, err := tb.Add(ctx, stepCounter{ID: "k"}, Increment("n", 1))
	if err != nil || b.V != 110 || b.N != 2 {
		t.Fatalf("Add = %+v, %v; want version 110", b, err)
	}
}

// A lost answer is settled by the Add's own token: applied once, reported
// once; when someone else wrote in between, ErrUnknownOutcome — never a
// second ADD.
func TestAddLostAnswer(t *testing.T) {
	d := dynamotest.NewDropper("UpdateItem")
	c := d.Client(t)
	name := dynamotest.KeyTable(t, c, "", "id", types.ScalarAttributeTypeS, "", "")
	tb, err := NewTable[counterItem](NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewTable[counterItem](NewMapper(dynamotest.Client(t)), name)
	ctx := t.Context()
	d.Arm(1)
	got, err := tb.Add(ctx, counterItem{ID: "k"}, Increment("views", 5))
	if err != nil || got.Views != 5 || d.Dropped() != 1 || d.Sent() != 1 {
		t.Fatalf("Add with a lost answer = %+v, %v (dropped %d, sent %d); want views 5, sent once", got, err, d.Dropped(), d.Sent())
	}
	d.ArmThen(func() {
		if _, err := other.Add(ctx, counterItem{ID: "k"}, Increment("views", 100)); err != nil {
			t.Error(err)
		}
	})
	_, err = tb.Add(ctx, counterItem{ID: "k"}, Increment("views", 1))
	if !errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("Add whose answer was lost and the item written since = %v, want ErrUnknownOutcome", err)
	}
	if cur, cerr := tb.Current(err); cerr != nil || cur.Views != 106 {
		t.Fatalf("Current = %+v, %v; want the item read, views 106", cur, cerr)
	}
	loaded, _ := tb.Load(ctx, counterItem{ID: "k"}, ConsistentRead())
	if loaded.Views != 106 {
		t.Fatalf("views %d, want 106: each Add applied exactly once", loaded.Views)
	}

	// A type without a version carries no token: a lost answer is unknown.
	type plainCounter struct {
		ID string `dynamo:"id,hash"`
		N  int    `dynamo:"n"`
	}
	pt, _ := NewTable[plainCounter](NewMapper(c), name)
	d.Arm(1)
	if _, err := pt.Add(ctx, plainCounter{ID: "p"}, Increment("n", 1)); !errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("unversioned Add with a lost answer = %v, want ErrUnknownOutcome", err)
	}
	p, _ := pt.Load(ctx, plainCounter{ID: "p"}, ConsistentRead())
	if p.N != 1 {
		t.Fatalf("n = %d, want 1 (sent once)", p.N)
	}
}

// With MustExist, Add of a missing key is refused in DynamoDB (a condition
// that the hash key exists, in the same request) with an error satisfying
// errors.Is(err, ErrNotFound); nothing is created.
func TestAddMustExistRefusesMissingItem(t *testing.T) {
	c := &stubClient{}
	var cond string
	c.onUpd = func(in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		cond = aws.ToString(in.ConditionExpression)
		for k, v := range in.ExpressionAttributeNames {
			cond = strings.ReplaceAll(cond, k, v)
		}
		return nil, ccf(nil)
	}
	tb, err := NewTable[counterItem](NewMapper(c), "c")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tb.Add(t.Context(), counterItem{ID: "k"}, Increment("views", -1), MustExist())
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Add with MustExist of a missing item: %v; want ErrNotFound", err)
	}
	if !strings.Contains(cond, "attribute_exists (id)") && !strings.Contains(cond, "attribute_exists(id)") {
		t.Errorf("condition %q does not require the hash key to exist", cond)
	}
}

// On DynamoDB Local: Add and Update with MustExist create nothing on a
// missing key (ErrNotFound), work on an existing one, and a lost answer of
// an Add with MustExist is settled as applied once; an Update function that
// returns ErrNoChange leaves the stored version as it is.
func TestMustExistAndNoChangeOnDynamoDBLocal(t *testing.T) {
	d := dynamotest.NewDropper("UpdateItem")
	c := d.Client(t)
	name := dynamotest.KeyTable(t, c, "", "id", types.ScalarAttributeTypeS, "", "")
	tb, err := NewTable[counterItem](NewMapper(c), name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := tb.Add(ctx, counterItem{ID: "k"}, Increment("views", -1), MustExist()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Add with MustExist of a missing key: %v; want ErrNotFound", err)
	}
	if _, err := tb.Update(ctx, counterItem{ID: "k"}, func(c counterItem) (counterItem, error) { return c, nil }, MustExist()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Update with MustExist of a missing key: %v; want ErrNotFound", err)
	}
	if _, err := tb.Load(ctx, counterItem{ID: "k"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after refused calls: Load = %v; want ErrNotFound (nothing created)", err)
	}
	if _, err := tb.Save(ctx, counterItem{ID: "k", Views: 10}); err != nil {
		t.Fatal(err)
	}
	d.Arm(1)
	got, err := tb.Add(ctx, counterItem{ID: "k"}, Increment("views", -1), MustExist())
	if err != nil || got.Views != 9 || got.V != 2 {
		t.Fatalf("Add with MustExist, answer lost: %+v, %v; want views 9 at v2 (applied once)", got, err)
	}
	got, err = tb.Update(ctx, counterItem{ID: "k"}, func(c counterItem) (counterItem, error) { return c, ErrNoChange }, MustExist())
	if err != nil || got.Views != 9 || got.V != 2 {
		t.Fatalf("Update with ErrNoChange: %+v, %v; want views 9 at v2", got, err)
	}
	if cur, err := tb.Load(ctx, counterItem{ID: "k"}, ConsistentRead()); err != nil || cur.V != 2 {
		t.Fatalf("stored %+v, %v; want v2: no write", cur, err)
	}
}
