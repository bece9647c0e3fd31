package telemetry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// Identifiers (ID) and error messages (Err) reach the log only with the
// opt-in; without it an error is logged by its class. Attributes given to
// With follow the same rule, and Debug lines stay out of an Info handler.
func TestLogIdentifiersOnlyWithOptIn(t *testing.T) {
	errKey := fmt.Errorf("lease: %q taken over by %s: %w", "SENTINEL-key", "SENTINEL-owner", errors.New("lost"))
	for _, keys := range []bool{false, true} {
		var buf bytes.Buffer
		g := NewLog(slog.New(slog.NewTextHandler(&buf, nil)), keys, func(error) string { return "lost" })
		g = g.With(slog.String("table", "T"), ID("owner", "SENTINEL-owner"))
		g.Warn(context.Background(), "lease lost", ID("key", "SENTINEL-key"), slog.Int64("token", 7), Err("err", errKey), Err("none", nil))
		g.Debug(context.Background(), "acquired", slog.String("debug", "shown"))
		out := buf.String()
		if got := strings.Contains(out, "SENTINEL"); got != keys {
			t.Errorf("keys %v: identifiers logged %v; want %v:\n%s", keys, got, keys, out)
		}
		for _, want := range []string{"table=T", "token=7", "lease lost"} {
			if !strings.Contains(out, want) {
				t.Errorf("keys %v: %q missing:\n%s", keys, want, out)
			}
		}
		if !keys && !strings.Contains(out, "err=lost") {
			t.Errorf("error not logged by its class:\n%s", out)
		}
		if strings.Contains(out, "none=") || strings.Contains(out, "debug=shown") {
			t.Errorf("a nil error or a Debug line was logged:\n%s", out)
		}
	}
	var nilLog *Log
	nilLog.Warn(context.Background(), "nothing") // logs nowhere, no panic
	NewLog(nil, true, nil).With(ID("k", "v")).Info(context.Background(), "nothing")
}
