package leaktest

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// Check registers a cleanup that fails t if, once t and its other cleanups
// are done, goroutines running code of a package whose import path contains
// pkg (e.g. "ddbkit/dynamo/lease.") are still running. Goroutines of the
// test itself and of other packages (HTTP clients, test servers) do not
// count. It waits up to 5 s for goroutines that are on their way out.
func Check(t testing.TB, pkg string) {
	t.Helper()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			leaked := Goroutines(pkg)
			if len(leaked) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("%d goroutines of %s outlived the test:\n%s", len(leaked), pkg, strings.Join(leaked, "\n\n"))
				return
			}
			runtime.Gosched()
		}
	})
}

// Goroutines returns the stacks of running goroutines with code of pkg,
// except those running a Test, Benchmark or Example function (the test
// goroutines themselves) and this package's own.
func Goroutines(pkg string) []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, pkg) || strings.Contains(g, "internal/leaktest.") {
			continue
		}
		if strings.Contains(g, ".Test") || strings.Contains(g, ".Benchmark") || strings.Contains(g, ".Example") {
			continue
		}
		out = append(out, g)
	}
	return out
}
