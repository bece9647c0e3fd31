package backfill

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
)

// TestRecreatedSinceScanKeepsTheNewItem: an item deleted and created again
// (by the mapper: version 1 again) between the scan and the migration's
// write is a live write like any other, and wins: the function runs on the
// new item as stored, not on the scanned one — the write must not carry
// the old item's changed attributes over the new item.
func TestRecreatedSinceScanKeepsTheNewItem(t *testing.T) {
	e := newEnv(t, 1)
	var once sync.Once
	m := e.migration("recreated", "w1", func(a account) (account, error) {
		once.Do(func() {
			if _, err := e.c.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: &e.table,
				Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: a.ID}}}); err != nil {
				t.Error(err)
			}
			// A new account under the same key, as a mapper's Save of a new item writes it.
			if _, err := e.items.Save(context.Background(), account{ID: a.ID, Hits: 5, Migrated: 7}); err != nil {
				t.Error(err)
			}
		})
		return addMigrated(a)
	})
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := e.items.Load(t.Context(), account{ID: key(0)}, dynamo.ConsistentRead())
	if err != nil {
		t.Fatal(err)
	}
	if got.Hits != 5 || got.Migrated != 8 {
		t.Errorf("re-created item after the migration: %+v; want hits 5 and migrated 8 (the function run on the new item)", got)
	}
}
