package backfill

import (
	"context"
	"strings"
	"testing"

	"github.com/ddbkit/dynamo"
)

// TestFunctionChangingTheKeyWritesNoOtherItem pins that a function which
// returns its item under another key fails that item and writes nothing,
// as Table.Update refuses it: the versioned fast path (Save under the
// version scanned) must not write the changed copy over the item that
// holds the other key (here acct-00001, at the same version 1, unmarked).
func TestFunctionChangingTheKeyWritesNoOtherItem(t *testing.T) {
	e := newEnv(t, 2)
	m := e.migration("move-key", "p1", func(a account) (account, error) {
		if a.ID != key(0) {
			return a, dynamo.ErrNoChange
		}
		a.ID = key(1)
		a.Migrated = 100
		return a, nil
	}, Segments(1))
	err := m.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "key") {
		t.Errorf("Run = %v, want the item's failure for a changed key", err)
	}
	got, lerr := e.items.Load(context.Background(), account{ID: key(1)})
	if lerr != nil {
		t.Fatal(lerr)
	}
	if got.Migrated != 0 {
		t.Errorf("item %s = %+v: written over by the function's copy of %s", key(1), got, key(0))
	}
}

// TestMarkModeledByTheTypeRefused pins that New refuses a Mark attribute
// that T models (the doc: "T must not model the attribute"), before any
// request: the mark would be written over the field (or the key) in every
// change, or every write would fail only once Run is under way.
func TestMarkModeledByTheTypeRefused(t *testing.T) {
	e := newEnv(t, 0)
	for _, attr := range []string{"id", "version", "hits"} {
		_, err := New(e.c, e.table, "mark-"+attr, addMigrated, Fleet(e.leaseClient("p"), e.leases), Mark(attr))
		if err == nil {
			t.Errorf("New with Mark(%q), an attribute of account: no error", attr)
		}
	}
}
