package dynamo

import (
	"reflect"
	"time"

	"github.com/ddbkit/dynamo/internal/schema"
)

// Timestamps: fields tagged `created` and `modified` are set by the mapper
// from its clock (WithClock) on every write, in a copy of the caller's
// struct — the caller's value is never modified.
//
//   - modified: the clock's time, on every write.
//   - created: the clock's time on the write that creates the item, unless
//     the item holds a non-zero creation time (a loaded item, or one being
//     imported), which is written instead. It is never overwritten: the
//     UpdateItem writes it with if_not_exists; a PutItem, which replaces the
//     item, and a transaction, which returns no values, are conditioned on
//     the stored creation time being absent or the one written.
//
// Update's changes that share a write share its clock reading: each
// caller's copy holds the write's time as modified, and the stored creation
// time (the write's when it creates the item) as created.

// stamp returns boxed and v unchanged when the type has no timestamp
// fields; otherwise a new copy of the struct v with them set from the clock
// reading now, boxed as a pointer, and the copy.
func (t *table) stamp(boxed any, v reflect.Value, now time.Time) (any, reflect.Value) {
	s := t.p.S
	boxed, v = t.withEntity(boxed, v)
	if !s.HasStamps() {
		return boxed, v
	}
	nv := reflect.New(s.Type)
	nv.Elem().Set(v)
	if s.Modified >= 0 {
		schema.SetStamp(nv.Elem(), &s.Fields[s.Modified], now)
	}
	if s.Created >= 0 {
		f := &s.Fields[s.Created]
		if fv, ok := schema.FieldValue(nv.Elem(), f); ok && schema.IsZeroStamp(fv) {
			schema.SetStamp(nv.Elem(), f, now)
		}
	}
	return nv.Interface(), nv.Elem()
}
