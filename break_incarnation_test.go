package dynamo

import (
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
)

// Issue 11 ("a version number is not an identity") for items created by a
// writer that stores no write token — Java's DynamoDBMapper, an older
// ddbkit, a Table with WithWriteTokenAttribute(""), a raw PutItem — as in
// any mixed fleet. Update reads the item (v1, no token); before it writes,
// that writer deletes the item and creates it again at v1 (acknowledged).
// Update's pin for a token-less basis is attribute_not_exists(#wt), which
// the new incarnation satisfies too: the write computed from the first
// incarnation replaces the second's content (owner "other", jobs [O]).
// Update's doc: every write is pinned to the item read "so that it cannot
// land on another incarnation of the item".
func TestBreakUpdateTokenlessIncarnations(t *testing.T) {
	c := dynamotest.Client(t)
	name := dynamotest.KeyTable(t, c, "tokless", "id", types.ScalarAttributeTypeS, "", "")
	hc := &hookClient{Client: c, onGet: true}
	tb, err := NewTable[queuedJob](NewMapper(hc), name)
	if err != nil {
		t.Fatal(err)
	}
	java, _ := NewTable[queuedJob](NewMapper(c, WithWriteTokenAttribute("")), name)
	ctx := t.Context()
	if _, err := java.Save(ctx, queuedJob{ID: "k", Owner: "java"}); err != nil {
		t.Fatal(err)
	}
	hc.after = func() {
		if err := java.Delete(ctx, queuedJob{ID: "k"}, WithSaveBehavior(SaveClobber)); err != nil {
			t.Error(err)
		}
		if _, err := java.Save(ctx, queuedJob{ID: "k", Owner: "other", Jobs: []string{"O"}}); err != nil {
			t.Error(err)
		}
	}
	_, err = tb.Update(ctx, queuedJob{ID: "k"}, func(j queuedJob) (queuedJob, error) {
		j.Jobs = append(j.Jobs, "B")
		return j, nil
	})
	got, lerr := java.Load(ctx, queuedJob{ID: "k"}, ConsistentRead())
	if lerr != nil || got.Owner != "other" || !slices.Contains(got.Jobs, "O") {
		t.Fatalf("Update = %v; stored %+v, %v; want the re-created incarnation kept (owner other, jobs with O)", err, got, lerr)
	}
}
