//go:build race

package docs

// raceBuild is set when the test runs with -race: the snippets are then built
// with -race too, so that they reuse the packages the test run compiled.
func init() { raceBuild = true }
