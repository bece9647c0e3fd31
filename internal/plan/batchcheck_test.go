package plan

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ddbkit/dynamo/internal/errs"
	"github.com/ddbkit/dynamo/internal/schema"
)

type batchVersioned struct {
	ID string `dynamo:"id,hash"`
	V  int64  `dynamo:"v,version"`
}

// A batch write of a versioned type or an entity's is refused unless
// SaveClobber says to write unchecked; each message names the fix.
func TestCheckBatchWriteWantsClobber(t *testing.T) {
	versioned, err := schema.For(reflect.TypeFor[batchVersioned]())
	if err != nil {
		t.Fatal(err)
	}
	entity, err := schema.For(reflect.TypeFor[entityOrder]())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		op   string
		s    *schema.Schema
		want string
	}{
		{"BatchSave", versioned, "is versioned (field V), which a batch write cannot check: use WriteTx with Table.TxSave, or Save; to overwrite unchecked, pass SaveClobber (which"},
		{"BatchDelete", versioned, "use WriteTx with Table.TxDelete, or Delete; to delete unchecked, pass SaveClobber"},
		{"BatchSave", entity, `is entity "order" (field Kind), which a batch write cannot check: use Save or a transaction`},
	} {
		err := CheckBatchWrite(tc.op, "T", tc.s, false)
		if !errors.Is(err, errs.ErrInvalidInput) || !strings.Contains(err.Error(), tc.op+` on table "T": `) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.op, err, tc.want)
		}
		if err := CheckBatchWrite(tc.op, "T", tc.s, true); err != nil {
			t.Errorf("%s with SaveClobber: %v", tc.op, err)
		}
	}
}
