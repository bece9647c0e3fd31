package telemetry

import (
	"context"
	"errors"
	"testing"
)

// With telemetry off a Call is the zero value: End returns the error it is
// given without classifying it, and noting tables does nothing.
func TestCallOffDoesNothing(t *testing.T) {
	ctx := context.Background()
	got, c := Begin(nil, ctx, "Save", "T")
	if got != ctx || c.Recording() {
		t.Fatalf("Begin with telemetry off: ctx changed %v, recording %v", got != ctx, c.Recording())
	}
	c.NoteTables(func(yield func(string) bool) { yield("A") })
	want := errors.New("x")
	never := func(error) string { t.Error("classified with telemetry off"); return "" }
	if err := c.End(want, never, never); err != want {
		t.Errorf("End = %v; want %v", err, want)
	}
	if n := testing.AllocsPerRun(100, func() {
		_, c := Begin(nil, ctx, "Save", "T")
		c.End(nil, never, never)
	}); n != 0 {
		t.Errorf("%v allocations per call with telemetry off; want 0", n)
	}
}
