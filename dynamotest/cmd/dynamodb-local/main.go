// Command dynamodb-local runs one DynamoDB Local for as long as it runs, so
// that the test binaries of several packages (a `go test ./...` run), or
// several runs, share one server instead of starting one each (2–7 s and
// about 200 MB per package).
//
// It installs DynamoDB Local if needed and starts it as package dynamotest
// does (in memory, with -sharedDb; DYNAMODB_LOCAL_DIR picks the installation
// and so the version, DYNAMODB_LOCAL_NPM_VERSION the npm release installed
// into an empty one: see package dynamotest), then either runs a command with DYNAMODB_ENDPOINT set
// to it and stops the server when the command ends, or serves until it is
// stopped.
//
// Usage:
//
//	go run github.com/ddbkit/dynamo/dynamotest/cmd/dynamodb-local [-port N] [-env-file FILE] [-- command [args...]]
//
// The environment a program needs to use the server is:
//
//	export DYNAMODB_ENDPOINT=http://127.0.0.1:PORT          # dynamotest; programs setting BaseEndpoint from it
//	export AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:PORT  # read by config.LoadDefaultConfig and the AWS CLI
//	export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-dynamotest}"
//	export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-dynamotest}"
//	export AWS_REGION="${AWS_REGION:-us-east-1}"
//
// The two endpoints replace any value they had; dummy credentials and a
// region are given only where the environment has none (DynamoDB Local
// checks neither, and with -sharedDb every key and region sees the same
// tables). With them, a program that builds its client with
// config.LoadDefaultConfig and dynamodb.NewFromConfig, unchanged, talks to
// DynamoDB Local (without them it fails looking for credentials on EC2's
// metadata service: "no EC2 IMDS role found").
//
// With a command, it runs the command with that environment, stops the
// server when the command exits, and exits with the command's exit code
// (128+n when a signal n killed it). SIGINT, SIGTERM and SIGHUP are passed
// on to the command:
//
//	go run github.com/ddbkit/dynamo/dynamotest/cmd/dynamodb-local -- go test ./...
//	go run github.com/ddbkit/dynamo/dynamotest/cmd/dynamodb-local -- go run ./cmd/yourserver
//
// Without one, it prints those lines, which a shell can eval, and serves
// until SIGINT, SIGTERM or SIGHUP, then stops the server and exits with 0
// (or with 1, printing its output, if DynamoDB Local dies first). As a
// shell's eval waits for the end of what it runs, start it in the background
// and read the lines from -env-file, which is removed before the server
// starts (a file left by a killed run names a dead server), written
// (atomically) once the server answers, and removed when it stops:
//
//	go build -o /tmp/dynamodb-local github.com/ddbkit/dynamo/dynamotest/cmd/dynamodb-local
//	/tmp/dynamodb-local -port 8000 -env-file /tmp/ddb.env & server=$!
//	until [ -f /tmp/ddb.env ]; do kill -0 $server || exit 1; sleep 0.1; done
//	. /tmp/ddb.env
//	go test ./...   # every package uses the one server
//	go run ./cmd/yourserver
//	kill $server    # stops DynamoDB Local and removes /tmp/ddb.env
//
// Start the built binary rather than `go run` in the background: `go run`
// does not pass signals on to the program, nor take it down when it dies.
//
// Flags:
//
//	-port N         the port to listen on (on all interfaces); 0, the default, picks a free one
//	-env-file FILE  also write the export lines to FILE once the server answers; a stale FILE is
//	                removed before the server starts, and FILE when it stops (unless another
//	                server has written its own lines there since)
//
// Messages (the server's version, folder, endpoint and process id) go to
// standard error. On Linux the Java process dies with this command even when
// the command is killed with SIGKILL (a parent-death signal), and so does the
// command it runs (with SIGTERM). Exit codes: the command's; 2 for bad usage;
// 1 when no server could be started; 126 or 127 when the command cannot be
// run or is not found.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/ddbkit/dynamo/internal/ddblocal"
)

const name = "dynamodb-local"

// config is what the command line asks for.
type config struct {
	port    int
	envFile string
	command []string // empty: serve until stopped
}

// errUsage marks a command line that cannot be run; the message says why.
var errUsage = errors.New(name + ": bad usage")

// parseArgs parses the command line (without the program name). Flag parsing
// stops at "--" or at the first argument that is not a flag: the rest is the
// command to run.
func parseArgs(args []string, usageOut io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(usageOut)
	fs.IntVar(&c.port, "port", 0, "the `port` to listen on (on all interfaces); 0 picks a free one")
	fs.StringVar(&c.envFile, "env-file", "", "also write the export lines to `file` once the server answers; removed before it starts and when it stops")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s [-port N] [-env-file FILE] [-- command [args...]]\n\n"+
			"Runs DynamoDB Local (in memory, -sharedDb). With a command: runs it with %s,\n"+
			"%s, and dummy AWS credentials and region (unless set) in its environment,\n"+
			"stops the server when it ends and exits with its exit code. Without: prints those\n"+
			"variables as export lines and serves until SIGINT/SIGTERM/SIGHUP. %s picks the\n"+
			"installation (and version).\n\n",
			name, ddblocal.EnvEndpoint, envEndpointURL, ddblocal.EnvLocalDir)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, err
		}
		return c, fmt.Errorf("%w: %v (see -h)", errUsage, err)
	}
	if c.port < 0 || c.port > 65535 {
		return c, fmt.Errorf("%w: -port %d: use 0 (a free port) or a port from 1 to 65535", errUsage, c.port)
	}
	if c.envFile != "" && strings.TrimSpace(c.envFile) != c.envFile {
		return c, fmt.Errorf("%w: -env-file %q has spaces around it; remove them", errUsage, c.envFile)
	}
	if c.envFile != "" && (strings.HasSuffix(c.envFile, "/") || strings.HasSuffix(c.envFile, string(filepath.Separator))) {
		return c, fmt.Errorf("%w: -env-file %q names a folder: name a file", errUsage, c.envFile)
	}
	c.command = fs.Args()
	if len(c.command) > 0 && c.command[0] == "" {
		return c, fmt.Errorf("%w: the command to run is empty", errUsage)
	}
	return c, nil
}

// dummyKey is the access key and the secret of the dummy credentials given
// to programs that have none: DynamoDB Local checks neither (it wants
// letters and digits only), and with -sharedDb every key sees the same
// tables. It is the one package dynamotest's clients use.
const dummyKey = "dynamotest"

// defaultRegion is the region given to programs that name none.
const defaultRegion = "us-east-1"

// envEndpointURL is the variable the AWS SDKs (Go's config.LoadDefaultConfig
// among them) and the AWS CLI read a DynamoDB endpoint from.
const envEndpointURL = "AWS_ENDPOINT_URL_DYNAMODB"

// envVar is a variable a program needs to use the server: keep says that a
// value already set is kept (credentials and region), otherwise it is
// replaced (the endpoint).
type envVar struct {
	name, value string
	keep        bool
}

// envVars are the variables a program needs to use the server at endpoint:
// DYNAMODB_ENDPOINT (dynamotest, and programs that set BaseEndpoint from it),
// AWS_ENDPOINT_URL_DYNAMODB (read by config.LoadDefaultConfig: an unchanged
// program talks to the server), and dummy credentials and a region unless
// the environment has its own (config.LoadDefaultConfig would otherwise look
// for them on EC2's metadata service and fail).
func envVars(endpoint string) []envVar {
	return []envVar{
		{ddblocal.EnvEndpoint, endpoint, false},
		{envEndpointURL, endpoint, false},
		{"AWS_ACCESS_KEY_ID", dummyKey, true},
		{"AWS_SECRET_ACCESS_KEY", dummyKey, true},
		{"AWS_REGION", defaultRegion, true},
	}
}

// exportLines are the lines a shell can eval (or source) to use the server
// at endpoint: every variable of envVars, those marked keep only where the
// shell has no value of its own.
func exportLines(endpoint string) string {
	var b strings.Builder
	for _, v := range envVars(endpoint) {
		if v.keep {
			fmt.Fprintf(&b, "export %s=\"${%s:-%s}\"\n", v.name, v.name, v.value)
		} else {
			fmt.Fprintf(&b, "export %s=%s\n", v.name, v.value)
		}
	}
	return b.String()
}

// commandEnv is environ with the variables of envVars set for the server at
// endpoint, as exportLines sets them.
func commandEnv(environ []string, endpoint string) []string {
	env := slices.Clone(environ)
	for _, v := range envVars(endpoint) {
		if v.keep && lookupEnv(env, v.name) != "" {
			continue
		}
		env = append(withoutEnv(env, v.name), v.name+"="+v.value)
	}
	return env
}

// lookupEnv returns the value of name in env ("" when unset).
func lookupEnv(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command: it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, name+": "+format+"\n", a...) }

	if err := checkEnvFile(cfg.envFile); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if len(cfg.command) > 0 {
		// Before starting a server for nothing.
		if _, err := exec.LookPath(cfg.command[0]); err != nil {
			logf("cannot run %s: %v", cfg.command[0], err)
			if errors.Is(err, os.ErrPermission) {
				return 126
			}
			return 127
		}
	}

	// A file left by a server that was killed (SIGKILL leaves no chance to
	// remove it) names a dead endpoint: remove it before starting, so that
	// whoever waits for the file reads only this server's lines.
	if err := removeStale(cfg.envFile); err != nil {
		logf("removing the stale -env-file: %v", err)
		return 1
	}

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	srv, err := startServer(cfg.port, sigs)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer srv.Stop()
	logf("%s, pid %d", srv, srv.Pid())

	if cfg.envFile != "" {
		line := exportLines(srv.Endpoint)
		if err := writeFileAtomic(cfg.envFile, line); err != nil {
			logf("writing -env-file: %v", err)
			return 1
		}
		defer removeIfOurs(cfg.envFile, line)
	}

	if len(cfg.command) == 0 {
		fmt.Fprint(stdout, exportLines(srv.Endpoint))
		select {
		case sig := <-sigs:
			logf("%v: stopping DynamoDB Local", sig)
			return 0
		case <-srv.Done():
			logf("DynamoDB Local exited by itself (%v); its output:\n%s", srv.ExitErr(), srv.Output())
			return 1
		}
	}
	if old := os.Getenv(ddblocal.EnvEndpoint); old != "" && old != srv.Endpoint {
		logf("the command gets %s=%s instead of %s", ddblocal.EnvEndpoint, srv.Endpoint, old)
	}
	return runCommand(cfg.command, srv, sigs, stdout, stderr, logf)
}

// startServer is start; tests replace it.
var startServer = start

// start starts DynamoDB Local, giving up when a signal arrives first. It
// returns once the server answers.
func start(port int, sigs <-chan os.Signal) (*ddblocal.Server, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got os.Signal
	startDone, watchDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watchDone)
		select {
		case got = <-sigs:
			cancel()
		case <-startDone:
		}
	}()
	srv, err := ddblocal.Start(ctx, port)
	close(startDone)
	<-watchDone
	if got != nil {
		if srv != nil {
			srv.Stop()
		}
		return nil, fmt.Errorf("%s: %v while starting DynamoDB Local: stopped", name, got)
	}
	return srv, err
}

// runCommand runs command with DYNAMODB_ENDPOINT set to srv, passing signals
// on, and returns its exit code. The command dies with this process (on Linux).
func runCommand(command []string, srv *ddblocal.Server, sigs <-chan os.Signal, stdout, stderr io.Writer, logf func(string, ...any)) int {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.Env = commandEnv(os.Environ(), srv.Endpoint)
	cmd.SysProcAttr = commandProcAttr()

	exited := make(chan error, 1)
	// The parent-death signal goes with the thread that started the child.
	if err := ddblocal.StartPinned(cmd, func(err error) { exited <- err }); err != nil {
		logf("cannot run %s: %v", command[0], err)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return 127
		}
		return 126
	}
	serverDied := srv.Done()
	for {
		select {
		case sig := <-sigs:
			_ = cmd.Process.Signal(sig)
		case <-serverDied:
			logf("DynamoDB Local exited while the command ran (%v); its output:\n%s", srv.ExitErr(), srv.Output())
			serverDied = nil // report once; the command's exit code tells the rest
		case <-exited:
			return exitCode(cmd.ProcessState)
		}
	}
}

// exitCode is the exit code a shell would report for a finished command:
// its own, or 128+n when signal n killed it.
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return 1 // Wait failed before the process ended (cannot happen after Start)
	}
	if code := ps.ExitCode(); code >= 0 {
		return code
	}
	if n := signalOf(ps); n > 0 {
		return 128 + n
	}
	return 1
}

// withoutEnv returns env without the variable name.
func withoutEnv(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// checkEnvFile checks, before a server is started, that the -env-file path
// can be written: its folder exists and it is not a folder itself.
func checkEnvFile(path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		return fmt.Errorf("%w: -env-file %q: its folder %s does not exist (or is not a folder); create it or name another file",
			errUsage, path, filepath.Dir(path))
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%w: -env-file %q is a folder: name a file", errUsage, path)
	}
	return nil
}

// removeStale removes the -env-file at path, if any, before a server starts.
func removeStale(path string) error {
	if path == "" {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// removeIfOurs removes the -env-file at path unless another server's line
// has replaced ours (two commands given the same file).
func removeIfOurs(path, line string) {
	if got, err := os.ReadFile(path); err == nil && string(got) == line {
		_ = os.Remove(path)
	}
}

// writeFileAtomic writes content to path through a temporary file in the same
// folder, so that a reader never sees it half-written.
func writeFileAtomic(path, content string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, werr := f.WriteString(content)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	return nil
}
