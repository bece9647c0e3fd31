package dynamo

import (
	"fmt"
	"reflect"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
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

// stamp returns boxed and v unchanged when the type has no timestamp
// fields; otherwise a new copy of the struct v with them set from the clock
// reading now, boxed as a pointer, and the copy.
func (t *table) stamp(boxed any, v reflect.Value, now time.Time) (any, reflect.Value) {
	s := t.p.s
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

// createdMismatch explains the failure of a write conditioned on the stored
// creation time (withCreatedCond) that sent sent and found the item old; ""
// when the stored creation time is absent or equal, so that condition did
// not fail.
func (p *plan) createdMismatch(old map[string]types.AttributeValue, sent types.AttributeValue) string {
	f := &p.s.Fields[p.s.Created]
	stored, ok := old[f.Name]
	if !ok || av.Equal(stored, sent) {
		return ""
	}
	return fmt.Sprintf("the stored creation time %s is %s, not the %s this write carries (a SavePut or a transaction member keeps the stored one only when the item holds it: load the item first, or leave %s zero on a new item)",
		f.Name, schema.FormatAV(stored, 60), schema.FormatAV(sent, 60), f.GoName)
}
