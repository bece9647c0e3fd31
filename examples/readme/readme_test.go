package readme

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ddbkit/dynamo/internal/ddblocal"
)

// example finds the README's example program: the first Go block of its
// "## Example" section.
var example = regexp.MustCompile("(?s)\n## Example\n.*?```go\n(package main\n.*?)```")

// The README's example, copied from README.md as it stands, builds and runs
// on a DynamoDB Local just started (no table, no item), with only the
// environment the dynamodb-local command gives a program (its endpoint,
// dummy credentials and a region; no AWS config file, no EC2 metadata), and
// prints what its comments say. It runs a second time on the same server:
// the example leaves nothing behind that would break a rerun.
func TestReadmeExampleRunsOnFreshDynamoDBLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the README's program and starts a DynamoDB Local of its own (-short)")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := example.FindSubmatch(readme)
	if m == nil {
		t.Fatal(`README.md has no "## Example" section with a Go program (package main) in it`)
	}
	// Built inside the module, so that its imports resolve to this
	// checkout; a folder whose name starts with a dot is no part of ./...
	dir, err := os.MkdirTemp(filepath.Join("..", ".."), ".readme-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "main.go"), m[1], 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(t.TempDir(), "readme")
	build := exec.Command("go", "build", "-o", prog, "./"+filepath.Base(dir))
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of the README's example: %v\n%s", err, out)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	srv, err := ddblocal.Start(ctx, 0) // fresh: never the shared DYNAMODB_ENDPOINT
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	// A machine with no AWS settings, then what dynamodb-local exports.
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, "AWS_") && name != ddblocal.EnvEndpoint {
			env = append(env, kv)
		}
	}
	none := t.TempDir()
	env = append(env, "AWS_CONFIG_FILE="+filepath.Join(none, "config"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(none, "credentials"),
		"AWS_EC2_METADATA_DISABLED=true",
		ddblocal.EnvEndpoint+"="+srv.Endpoint, "AWS_ENDPOINT_URL_DYNAMODB="+srv.Endpoint,
		"AWS_ACCESS_KEY_ID=dynamotest", "AWS_SECRET_ACCESS_KEY=dynamotest", "AWS_REGION=us-east-1")
	for run := 1; run <= 2; run++ {
		cmd := exec.CommandContext(ctx, prog)
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("run %d of the README's example: %v\n%s%s", run, err, out, stderr.String())
		}
		if got, want := string(out), "1\ntrue\n"; got != want {
			t.Errorf("run %d printed %q; want %q, as its comments say", run, got, want)
		}
	}
}
