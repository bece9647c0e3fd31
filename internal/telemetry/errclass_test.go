package telemetry

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestErrorClassTriesTheCallersClassesFirst: error.type is the first of
// the caller's classes an error wraps; else the mapper's class of it; and
// without the mapper's, the context's class or the Go type of what it
// wraps, past the wrappers of fmt.Errorf (of itself when it wraps none) —
// never "<nil>" nor its message.
func TestErrorClassTriesTheCallersClassesFirst(t *testing.T) {
	errA, errB := errors.New("a"), errors.New("b")
	classes := []Class{{Err: errA, Name: "a"}, {Err: errB, Name: "b"}}
	both := fmt.Errorf("x: %w", errors.Join(errB, errA))
	mapper := func(err error) string { return "mapper:" + ContextClass(err) }
	type sdkError struct{ error }
	for _, tc := range []struct {
		err        error
		mapper     func(error) string
		want       string
		wantMapper string
	}{
		{err: fmt.Errorf("x: %w", errA), want: "a", wantMapper: "a"},
		{err: both, want: "a", wantMapper: "a"},
		{err: fmt.Errorf("x: %w", context.Canceled), want: "canceled", wantMapper: "mapper:canceled"},
		{err: fmt.Errorf("x: %w", context.DeadlineExceeded), want: "deadline_exceeded", wantMapper: "mapper:deadline_exceeded"},
		{err: fmt.Errorf("x: %w", sdkError{errors.New("secret key 42")}), want: "telemetry.sdkError", wantMapper: "mapper:telemetry.sdkError"},
		// a mapper's error wrapped again (by a lease): named as the mapper names it
		{err: fmt.Errorf("lease: y: %w", fmt.Errorf("x: %w", sdkError{errors.New("secret key 42")})), want: "telemetry.sdkError", wantMapper: "mapper:telemetry.sdkError"},
		{err: errors.New("secret key 42"), want: "*errors.errorString", wantMapper: "mapper:*errors.errorString"},
	} {
		saved := MapperErrorClass
		MapperErrorClass = nil
		got := ErrorClass(tc.err, classes...)
		MapperErrorClass = mapper
		gotMapper := ErrorClass(tc.err, classes...)
		MapperErrorClass = saved
		if got != tc.want || gotMapper != tc.wantMapper {
			t.Errorf("ErrorClass(%v) = %q, with the mapper's %q; want %q, %q", tc.err, got, gotMapper, tc.want, tc.wantMapper)
		}
	}
}
