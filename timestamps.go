package dynamo

import (
	"fmt"
	"reflect"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/internal/av"
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

// hasStamps reports whether the type has created or modified fields.
func (s *schema) hasStamps() bool { return s.created >= 0 || s.modified >= 0 }

// stamp returns boxed and v unchanged when the type has no timestamp
// fields; otherwise a new copy of the struct v with them set from the clock
// reading now, boxed as a pointer, and the copy.
func (t *Table[T]) stamp(boxed any, v reflect.Value, now time.Time) (any, reflect.Value) {
	s := t.p.s
	boxed, v = t.withEntity(boxed, v)
	if !s.hasStamps() {
		return boxed, v
	}
	nv := reflect.New(s.typ)
	nv.Elem().Set(v)
	if s.modified >= 0 {
		setStamp(nv.Elem(), &s.fields[s.modified], now)
	}
	if s.created >= 0 {
		f := &s.fields[s.created]
		if fv, ok := fieldValue(nv.Elem(), f); ok && isZeroStamp(fv) {
			setStamp(nv.Elem(), f, now)
		}
	}
	return nv.Interface(), nv.Elem()
}

// stampTime returns the time a timestamp field of f's encoding stores for
// the clock reading now as a load returns it: to the precision stored, in
// UTC — but for unixtime, in time.Local, as the decoder reads epoch seconds
// (time.Unix) — so that the saved copy holds what a load returns.
func stampTime(f *field, now time.Time) time.Time {
	t := now.UTC() // drops the monotonic reading too
	switch {
	case f.opts.unixTime:
		return time.Unix(t.Unix(), 0)
	case f.opts.javaDate:
		return t.Truncate(time.Millisecond)
	}
	return t
}

// setStamp sets the timestamp field f of the addressable struct v (a copy
// the mapper owns) to now. A pointer field gets a new pointer, never a
// write through the caller's.
func setStamp(v reflect.Value, f *field, now time.Time) {
	v.FieldByIndex(f.index).Set(stampOf(f, now)) // never via a pointer (checkField)
}

// stampOf returns the value of f's type that holds now: a time.Time (see
// stampTime), or Unix milliseconds; for a pointer type, a new pointer to it.
func stampOf(f *field, now time.Time) reflect.Value {
	t, ptr := f.typ, f.typ.Kind() == reflect.Pointer
	if ptr {
		t = t.Elem()
	}
	v := reflect.New(t).Elem()
	switch ms := now.UnixMilli(); {
	case t == timeType:
		v.Set(reflect.ValueOf(stampTime(f, now)))
	case v.CanInt():
		v.SetInt(ms)
	default:
		v.SetUint(uint64(max(ms, 0)))
	}
	if ptr {
		return v.Addr()
	}
	return v
}

// isZeroStamp reports whether a timestamp field's value is unset: a nil
// pointer, a zero time.Time, or 0.
func isZeroStamp(fv reflect.Value) bool {
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return true
		}
		fv = fv.Elem()
	}
	if fv.Type() == timeType {
		return fv.Interface().(time.Time).IsZero()
	}
	return fv.IsZero()
}

// createdMismatch explains the failure of a write conditioned on the stored
// creation time (withCreatedCond) that sent sent and found the item old; ""
// when the stored creation time is absent or equal, so that condition did
// not fail.
func (p *plan) createdMismatch(old map[string]types.AttributeValue, sent types.AttributeValue) string {
	f := &p.s.fields[p.s.created]
	stored, ok := old[f.name]
	if !ok || av.Equal(stored, sent) {
		return ""
	}
	return fmt.Sprintf("the stored creation time %s is %s, not the %s this write carries (a SavePut or a transaction member keeps the stored one only when the item holds it: load the item first, or leave %s zero on a new item)",
		f.name, formatAV(stored, 60), formatAV(sent, 60), f.goName)
}
