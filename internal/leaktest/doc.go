// Package leaktest checks that goroutines a test started have ended.
//
// Check, called at the start of a test, fails the test if, once the test and
// its cleanups are done, goroutines running code of a given package are
// still alive; Goroutines lists them at any moment. Both look at the stacks
// of all goroutines (runtime.Stack) and keep those that mention the
// package's import path, so pass a path precise enough to match only that
// package, ending in a dot: "ddbkit/dynamo/lease.".
//
// Goroutines whose stack mentions a Test, Benchmark or Example function are
// not counted: they are the test's own, or were started directly by it (the
// stack's "created by" line names the test function). Such goroutines are
// the test's to stop; Check is for the goroutines a package under test starts
// behind its API.
package leaktest
