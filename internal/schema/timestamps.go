package schema

import (
	"reflect"
	"time"
)

// hasStamps reports whether the type has created or modified fields.
func (s *Schema) HasStamps() bool { return s.Created >= 0 || s.Modified >= 0 }

// stampTime returns the time a timestamp field of f's encoding stores for
// the clock reading now as a load returns it: to the precision stored, in
// UTC — but for unixtime, in time.Local, as the decoder reads epoch seconds
// (time.Unix) — so that the saved copy holds what a load returns.
func stampTime(f *Field, now time.Time) time.Time {
	t := now.UTC() // drops the monotonic reading too
	switch {
	case f.Opts.UnixTime:
		return time.Unix(t.Unix(), 0)
	case f.Opts.javaDate:
		return t.Truncate(time.Millisecond)
	}
	return t
}

// setStamp sets the timestamp field f of the addressable struct v (a copy
// the mapper owns) to now. A pointer field gets a new pointer, never a
// write through the caller's.
func SetStamp(v reflect.Value, f *Field, now time.Time) {
	v.FieldByIndex(f.Index).Set(stampOf(f, now)) // never via a pointer (checkField)
}

// stampOf returns the value of f's type that holds now: a time.Time (see
// stampTime), or Unix milliseconds; for a pointer type, a new pointer to it.
func stampOf(f *Field, now time.Time) reflect.Value {
	t, ptr := f.Type, f.Type.Kind() == reflect.Pointer
	if ptr {
		t = t.Elem()
	}
	v := reflect.New(t).Elem()
	switch ms := now.UnixMilli(); {
	case t == TimeType:
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
func IsZeroStamp(fv reflect.Value) bool {
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return true
		}
		fv = fv.Elem()
	}
	if fv.Type() == TimeType {
		return fv.Interface().(time.Time).IsZero()
	}
	return fv.IsZero()
}
