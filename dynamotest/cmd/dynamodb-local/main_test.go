package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/internal/ddblocal"
)

// The test binary doubles as the command (when asMain is set) and as the
// command it runs (when, also, its first argument is childExit3 or
// childBlock), so the tests need no build step.
const (
	asMain     = "DYNAMODB_LOCAL_TEST_MAIN"
	childExit3 = "child-exit3"
	childBlock = "child-block"
)

func TestMain(m *testing.M) {
	if os.Getenv(asMain) != "" {
		if len(os.Args) > 1 && (os.Args[1] == childExit3 || os.Args[1] == childBlock) {
			os.Exit(child(os.Args[1]))
		}
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// child is the command the command runs: it creates a table on
// DYNAMODB_ENDPOINT, lists the tables, prints "child pid=P tables=..." and
// then exits with 3 (childExit3) or waits to be killed (childBlock).
func child(mode string) int {
	c := dynamotest.NewClient(os.Getenv("DYNAMODB_ENDPOINT"))
	tables, err := createAndList(context.Background(), c, "cmdtest-"+strconv.Itoa(os.Getpid()))
	if err != nil {
		fmt.Println("child error:", err)
		return 1
	}
	fmt.Printf("child pid=%d endpoint=%s tables=%s\n", os.Getpid(), os.Getenv("DYNAMODB_ENDPOINT"), strings.Join(tables, ","))
	if mode == childBlock {
		select {}
	}
	return 3
}

// createAndList creates table name and returns the names ListTables lists.
func createAndList(ctx context.Context, c *dynamodb.Client, name string) ([]string, error) {
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            &name,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil {
		return nil, err
	}
	out, err := c.ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil {
		return nil, err
	}
	return out.TableNames, nil
}

func TestParseArgs(t *testing.T) {
	good := []struct {
		args []string
		want config
	}{
		{nil, config{}},
		{[]string{"-port", "8000"}, config{port: 8000}},
		{[]string{"-port=0", "-env-file", "/tmp/x.env"}, config{envFile: "/tmp/x.env"}},
		{[]string{"--", "go", "test", "-run", "X", "./..."}, config{command: []string{"go", "test", "-run", "X", "./..."}}},
		{[]string{"-port", "65535", "go", "test"}, config{port: 65535, command: []string{"go", "test"}}},
		{[]string{"--", "--", "x"}, config{command: []string{"--", "x"}}},
	}
	for _, tc := range good {
		got, err := parseArgs(tc.args, io.Discard)
		if err != nil || got.port != tc.want.port || got.envFile != tc.want.envFile || !slices.Equal(got.command, tc.want.command) {
			t.Errorf("parseArgs(%q) = %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
	bad := []struct {
		args []string
		want string
	}{
		{[]string{"-port", "-1"}, "-port -1"},
		{[]string{"-port", "65536"}, "-port 65536"},
		{[]string{"-port", "x"}, "invalid value"},
		{[]string{"-port"}, "needs an argument"},
		{[]string{"-nosuch"}, "not defined"},
		{[]string{"-env-file", " /tmp/x"}, "spaces"},
		{[]string{"-env-file", "/tmp/"}, "names a folder"},
		{[]string{"--", ""}, "command to run is empty"},
	}
	for _, tc := range bad {
		_, err := parseArgs(tc.args, io.Discard)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseArgs(%q) = %v; want a usage error saying %q", tc.args, err, tc.want)
		}
	}
	if _, err := parseArgs([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("parseArgs(-h) = %v; want flag.ErrHelp", err)
	}
}

func FuzzParseArgs(f *testing.F) {
	f.Add("-port\x008000\x00--\x00go\x00test")
	f.Add("-env-file\x00/tmp/e\x00sh")
	f.Add("-port=-0")
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		c, err := parseArgs(args, io.Discard)
		if err != nil {
			if !errors.Is(err, errUsage) && !errors.Is(err, flag.ErrHelp) {
				t.Fatalf("parseArgs(%q): %v is neither a usage error nor help", args, err)
			}
			return
		}
		if c.port < 0 || c.port > 65535 {
			t.Fatalf("parseArgs(%q) accepted port %d", args, c.port)
		}
		if len(c.command) > 0 && c.command[0] == "" {
			t.Fatalf("parseArgs(%q) accepted an empty command", args)
		}
		if len(c.command) > len(args) {
			t.Fatalf("parseArgs(%q): command %q is longer than the arguments", args, c.command)
		}
	})
}

// TestExportLinesEval: a POSIX shell evaluating the printed lines gets the
// endpoint (replacing any it had), and dummy credentials and a region only
// where it has none of its own.
func TestExportLinesEval(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	show := `printf '%s|%s|%s|%s|%s' "$DYNAMODB_ENDPOINT" "$AWS_ENDPOINT_URL_DYNAMODB" "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" "$AWS_REGION"`
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{nil, "http://127.0.0.1:8000|http://127.0.0.1:8000|dynamotest|dynamotest|us-east-1"},
		{[]string{"DYNAMODB_ENDPOINT=http://old:1", "AWS_ACCESS_KEY_ID=MINE", "AWS_SECRET_ACCESS_KEY=s", "AWS_REGION=eu-west-1"},
			"http://127.0.0.1:8000|http://127.0.0.1:8000|MINE|s|eu-west-1"},
	} {
		cmd := exec.Command(sh, "-c", exportLines("http://127.0.0.1:8000")+show)
		cmd.Env = append(withoutAWS(os.Environ()), tc.env...)
		out, err := cmd.Output()
		if err != nil || string(out) != tc.want {
			t.Errorf("sh with %q evaluating the export lines printed %q (%v), want %q", tc.env, out, err, tc.want)
		}
		got := commandEnv(cmd.Env, "http://127.0.0.1:8000")
		var vals []string
		for _, name := range []string{"DYNAMODB_ENDPOINT", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"} {
			vals = append(vals, lookupEnv(got, name))
		}
		if strings.Join(vals, "|") != tc.want {
			t.Errorf("commandEnv with %q sets %q, want %q", tc.env, strings.Join(vals, "|"), tc.want)
		}
	}
}

// withoutAWS is env without the variables that point a program at a
// DynamoDB or give it credentials, region or AWS config files.
func withoutAWS(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "DYNAMODB_ENDPOINT=") {
			out = append(out, kv)
		}
	}
	return out
}

// TestStaleEnvFileRemovedBeforeStart: an -env-file left by a server killed
// with SIGKILL names a dead endpoint. It is removed before the new server
// starts, so that whoever waits for the file (the documented recipe) never
// reads the stale lines; the new lines are written only once the server
// answers.
func TestStaleEnvFileRemovedBeforeStart(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ddb.env")
	if err := os.WriteFile(p, []byte(exportLines("http://127.0.0.1:1")), 0o644); err != nil {
		t.Fatal(err)
	}
	sawStale := false
	startServer = func(int, <-chan os.Signal) (*ddblocal.Server, error) {
		_, err := os.Stat(p)
		sawStale = err == nil
		return nil, errors.New("test: no server started")
	}
	t.Cleanup(func() { startServer = start })
	var stderr bytes.Buffer
	if code := run([]string{"-env-file", p}, io.Discard, &stderr); code != 1 {
		t.Errorf("run = %d, %q; want 1 (no server)", code, stderr.String())
	}
	if sawStale {
		t.Error("the stale -env-file was still there while the server started")
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("-env-file after a failed start: %v; want none", err)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	var stderr bytes.Buffer
	if code := run([]string{"-port", "70000"}, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "-port 70000") {
		t.Errorf("run(-port 70000) = %d, %q; want 2 and a message naming the flag", code, stderr.String())
	}
	if code := run([]string{"-h"}, io.Discard, io.Discard); code != 0 {
		t.Errorf("run(-h) = %d, want 0", code)
	}
}

// TestMissingCommandStartsNoServer: a command that is not there is reported
// (127) before any server is started.
func TestMissingCommandStartsNoServer(t *testing.T) {
	var stderr bytes.Buffer
	code := run([]string{"--", "no-such-command-dynamodb-local-test"}, io.Discard, &stderr)
	if code != 127 || !strings.Contains(stderr.String(), "cannot run no-such-command") {
		t.Errorf("run(-- no-such-command) = %d, %q; want 127 naming it", code, stderr.String())
	}
	if strings.Contains(stderr.String(), "DynamoDB Local") {
		t.Errorf("a server was started for a command that is not there: %q", stderr.String())
	}
	dir := t.TempDir()
	notExec := filepath.Join(dir, "script")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run([]string{"--", notExec}, io.Discard, &stderr); code != 126 && runtime.GOOS != "windows" {
		t.Errorf("run(-- not-executable) = %d, %q; want 126", code, stderr.String())
	}
}

func TestExitCode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs sh and signals")
	}
	for script, want := range map[string]int{"exit 0": 0, "exit 7": 7, "kill -TERM $$": 128 + 15, "kill -KILL $$": 128 + 9} {
		cmd := exec.Command("sh", "-c", script)
		_ = cmd.Run()
		if got := exitCode(cmd.ProcessState); got != want {
			t.Errorf("exitCode after sh -c %q = %d, want %d", script, got, want)
		}
	}
}

// TestEnvFileChecked: an -env-file that cannot be written is refused (exit 2)
// before a server is started; one another server took over is not removed.
func TestEnvFileChecked(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{filepath.Join(dir, "missing", "ddb.env"), dir} {
		var stderr bytes.Buffer
		if code := run([]string{"-env-file", p}, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "-env-file") {
			t.Errorf("run(-env-file %s) = %d, %q; want 2 and a message naming the flag", p, code, stderr.String())
		}
		if strings.Contains(stderr.String(), "DynamoDB Local") {
			t.Errorf("a server was started for an -env-file that cannot be written: %q", stderr.String())
		}
	}
	p := filepath.Join(dir, "ddb.env")
	if err := os.WriteFile(p, []byte(exportLines("http://127.0.0.1:2")), 0o644); err != nil {
		t.Fatal(err)
	}
	removeIfOurs(p, exportLines("http://127.0.0.1:1"))
	if _, err := os.Stat(p); err != nil {
		t.Errorf("removeIfOurs removed another server's file: %v", err)
	}
	removeIfOurs(p, exportLines("http://127.0.0.1:2"))
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("removeIfOurs left our own file: %v", err)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ddb.env")
	for _, content := range []string{"first\n", "second\n"} {
		if err := writeFileAtomic(p, content); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(p); err != nil || string(got) != content {
			t.Errorf("file has %q (%v), want %q", got, err, content)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	if err := writeFileAtomic(filepath.Join(dir, "missing", "x"), "x"); err == nil {
		t.Error("writing into a missing folder succeeded")
	}
}

// started is the command under test, started as a process.
type started struct {
	cmd    *exec.Cmd
	stdout *bufio.Reader
	stderr chan string // lines
	javaID int
}

var pidRE = regexp.MustCompile(`DynamoDB Local (\S+) \(from .*\) at (http://127\.0\.0\.1:\d+), pid (\d+)$`)

// startCommand runs the command with args and env and waits for its
// "DynamoDB Local ... pid N" line on stderr.
func startCommand(t *testing.T, env []string, args ...string) *started {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("checks that the Java process is gone through Linux's /proc")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), asMain+"=1"), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &started{cmd: cmd, stdout: bufio.NewReader(stdout), stderr: make(chan string, 100)}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	go func() {
		defer close(s.stderr)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.stderr <- sc.Text()
		}
	}()
	var seen []string
	for line := range s.stderr {
		seen = append(seen, line)
		if m := pidRE.FindStringSubmatch(line); m != nil {
			if m[1] == "unknown" || m[1] == "" {
				t.Errorf("the start line names no version: %q", line)
			}
			s.javaID, _ = strconv.Atoi(m[3])
			return s
		}
	}
	t.Fatalf("the command ended without naming its server; stderr:\n%s", strings.Join(seen, "\n"))
	return nil
}

// gone reports whether process pid has ended (it may be a zombie waiting for
// a reaper, which counts as ended).
func gone(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// "pid (comm) S ...": the state follows the last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}

// waitGone polls until every process in pids has ended, failing after a deadline.
func waitGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for _, pid := range pids {
		for !gone(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: process %d still runs 15 s later", what, pid)
			}
			time.Sleep(20 * time.Millisecond) // polling with a deadline, not synchronisation
		}
	}
}

// TestServeUntilSignal: without a command, the command prints the export
// line (and writes it to -env-file), serves requests, and on SIGTERM stops
// the server, removes the file and exits 0.
func TestServeUntilSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts DynamoDB Local (-short)")
	}
	envFile := filepath.Join(t.TempDir(), "ddb.env")
	s := startCommand(t, nil, "-env-file", envFile)
	line, err := s.stdout.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the export line: %v", err)
	}
	ep, ok := strings.CutPrefix(strings.TrimSpace(line), "export DYNAMODB_ENDPOINT=")
	if !ok {
		t.Fatalf("stdout line %q is not an export line", line)
	}
	lines := line
	for range len(envVars(ep)) - 1 {
		l, err := s.stdout.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the export lines: %v", err)
		}
		lines += l
	}
	if lines != exportLines(ep) {
		t.Errorf("stdout has %q, want %q", lines, exportLines(ep))
	}
	if got, err := os.ReadFile(envFile); err != nil || string(got) != lines {
		t.Errorf("-env-file has %q (%v), want %q", got, err, lines)
	}
	// The server dies with the command: its table goes with it.
	tables, err := createAndList(t.Context(), dynamotest.NewClient(ep), "cmdtest")
	if err != nil || !slices.Contains(tables, "cmdtest") {
		t.Fatalf("CreateTable and ListTables through the server: %v, %v; want cmdtest listed", tables, err)
	}

	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("the command exited with %v after SIGTERM; want 0", err)
	}
	if _, err := os.Stat(envFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("-env-file is still there after the server stopped (%v)", err)
	}
	waitGone(t, "Java after SIGTERM of the command", s.javaID)
}

// TestRunCommand: with a command, the command runs it with
// DYNAMODB_ENDPOINT set to the server, which serves it, and exits with its
// exit code once the server is stopped.
func TestRunCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts DynamoDB Local (-short)")
	}
	s := startCommand(t, []string{"DYNAMODB_ENDPOINT=http://127.0.0.1:1"}, "--", os.Args[0], childExit3)
	line, err := s.stdout.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "child pid=") {
		t.Fatalf("the child printed %q (%v)", line, err)
	}
	if !strings.Contains(line, "tables=cmdtest-") || strings.Contains(line, "endpoint=http://127.0.0.1:1 ") {
		t.Errorf("the child did not use the command's server: %q", line)
	}
	err = s.cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("the command exited with %v; want the child's exit code 3", err)
	}
	waitGone(t, "Java after the command's command ended", s.javaID)
}

// TestSIGKILLTakesServerAndCommandDown: when the command is killed with
// SIGKILL (no chance to clean up), DynamoDB Local and the command it runs
// die too.
func TestSIGKILLTakesServerAndCommandDown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts DynamoDB Local (-short)")
	}
	s := startCommand(t, nil, "--", os.Args[0], childBlock)
	line, err := s.stdout.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "child pid=") {
		t.Fatalf("the child printed %q (%v)", line, err)
	}
	childPid, err := strconv.Atoi(strings.Fields(strings.TrimPrefix(line, "child pid="))[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // should the test fail: the child, if it is still ours
		if cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(childPid) + "/cmdline"); err == nil && bytes.Contains(cmdline, []byte(childBlock)) {
			_ = syscall.Kill(childPid, syscall.SIGKILL)
		}
	})
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = s.cmd.Wait()
	waitGone(t, "after SIGKILL of the command", s.javaID, childPid)
}

// TestYourProgramRunsWithPrintedEnv is the README's recipe for running your
// own program against DynamoDB Local. testdata/yourprogram, a module of its
// own, builds its client with config.LoadDefaultConfig and nothing else
// (and a second one with BaseEndpoint from DYNAMODB_ENDPOINT). In an
// environment with no AWS variables and no AWS config files it fails with
// DYNAMODB_ENDPOINT alone, and works with the variables the command gives:
// sourced from the -env-file of a serving dynamodb-local, and as its
// command.
func TestYourProgramRunsWithPrintedEnv(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program of its own module (-short)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "yourprogram")
	build := exec.Command(goBin, "build", "-o", prog, ".")
	build.Dir = filepath.Join("testdata", "yourprogram")
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		if (bytes.Contains(out, []byte("dial tcp")) || bytes.Contains(out, []byte("proxy.golang.org"))) && !underCI() {
			t.Skipf("cannot download the AWS SDK's config module: %s", out)
		}
		t.Fatalf("go build testdata/yourprogram: %v\n%s", err, out)
	}
	// No AWS variable, no AWS config file, no EC2 metadata service: a fresh
	// machine. Empty values count as unset, for the command and the SDK.
	var bare []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "AWS_") || name == "DYNAMODB_ENDPOINT" {
			bare = append(bare, name+"=")
		}
	}
	bare = append(bare, "AWS_CONFIG_FILE="+filepath.Join(dir, "no-config"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(dir, "no-credentials"), "AWS_EC2_METADATA_DISABLED=true")
	freshEnv := append(os.Environ(), bare...)
	tablesOf := func(out []byte) string {
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			got = append(got, strings.Fields(line)...)
		}
		return strings.Join(got, " ")
	}

	envFile := filepath.Join(dir, "ddb.env")
	s := startCommand(t, bare, "-env-file", envFile)
	line, err := s.stdout.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	ep := strings.TrimPrefix(strings.TrimSpace(line), "export DYNAMODB_ENDPOINT=")

	without := exec.Command(prog, "alone")
	without.Env = append(freshEnv, "DYNAMODB_ENDPOINT="+ep)
	if out, err := without.CombinedOutput(); err == nil {
		t.Errorf("with DYNAMODB_ENDPOINT alone the program ran (%s): the test does not start from a fresh machine", out)
	}

	sourced := exec.Command(sh, "-c", `. "$1" && exec "$2" sourced`, "sh", envFile, prog)
	sourced.Env = freshEnv
	out, err := sourced.CombinedOutput()
	if err != nil {
		t.Fatalf("the program after sourcing -env-file: %v\n%s", err, out)
	}
	if got := tablesOf(out); got != "plain tables=sourced explicit tables=sourced" && got != "explicit tables=sourced plain tables=sourced" {
		t.Errorf("the program after sourcing -env-file printed %q", out)
	}

	c := startCommand(t, bare, "--", prog, "ascommand")
	out, err = io.ReadAll(c.stdout)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("dynamodb-local -- yourprogram: %v\n%s", err, out)
	}
	if got := tablesOf(out); got != "plain tables=ascommand explicit tables=ascommand" && got != "explicit tables=ascommand plain tables=ascommand" {
		t.Errorf("the program as the command printed %q", out)
	}
}

// underCI reports whether the tests run under CI, where a test that cannot
// have what it needs fails instead of skipping.
func underCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false" && v != "0"
}
