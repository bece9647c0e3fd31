package plan

import (
	"fmt"
	"strings"

	"github.com/ddbkit/dynamo/internal/errs"
	"github.com/ddbkit/dynamo/internal/schema"
)

// CheckBatchWrite refuses a batch write op ("BatchSave" or "BatchDelete")
// on table of items of s that it cannot check: an entity's, or a versioned
// type's, unless clobber (SaveClobber) says to write them unchecked.
func CheckBatchWrite(op, table string, s *schema.Schema, clobber bool) error {
	if s.Entity >= 0 && !clobber {
		return fmt.Errorf("%w: %s on table %q: %s is entity %q (field %s), which a batch write cannot check: "+
			"use %s or a transaction, or SaveClobber if no other entity shares the keys",
			errs.ErrInvalidInput, op, table, s.Type, s.EntityName, s.Fields[s.Entity].GoName, strings.TrimPrefix(op, "Batch"))
	}
	if s.Version >= 0 && !clobber {
		single, verb, note := "Save", "overwrite", " (which writes each item at its version + 1, perhaps below the stored one)"
		if op == "BatchDelete" {
			single, verb, note = "Delete", "delete", ""
		}
		return fmt.Errorf("%w: %s on table %q: %s is versioned (field %s), which a batch write cannot check: "+
			"use WriteTx with Table.Tx%s, or %s; to %s unchecked, pass SaveClobber%s",
			errs.ErrInvalidInput, op, table, s.Type, s.Fields[s.Version].GoName, single, single, verb, note)
	}
	return nil
}
