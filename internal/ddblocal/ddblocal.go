// Package ddblocal installs and runs DynamoDB Local for package dynamotest and
// the dynamodb-local command (dynamotest/cmd/dynamodb-local): one place that
// says where DynamoDB Local is installed, which version it is, how it is
// started, and how it dies with the process that started it.
package ddblocal

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

const (
	// EnvEndpoint names a running server to use instead of DynamoDB Local.
	EnvEndpoint = "DYNAMODB_ENDPOINT"
	// EnvLocalDir names the folder DynamoDB Local is installed in (or is to be
	// installed in): it picks the version.
	EnvLocalDir = "DYNAMODB_LOCAL_DIR"
	// EnvNPMVersion picks the version of the npm package (NPMPackage's name)
	// that the install script installs into a missing or empty EnvLocalDir.
	EnvNPMVersion = "DYNAMODB_LOCAL_NPM_VERSION"
	// EnvSkip, set to a true value, makes dynamotest skip rather than fail
	// tests without a server, outside CI.
	EnvSkip = "DYNAMOTEST_SKIP_UNAVAILABLE"

	// DefaultVersion is the version of DynamoDB Local (the jar) that
	// scripts/install-dynamodb-local.sh installs, from NPMPackage.
	DefaultVersion = "1.25.1"
	// NPMPackage is the npm package DefaultVersion is taken from.
	NPMPackage = npmName + "@" + npmVersion
	npmName    = "amplify-dynamodb-simulator"
	npmVersion = "2.9.30"

	// installScript is the install script, relative to the repository root.
	installScript = "scripts/install-dynamodb-local.sh"

	jarName = "DynamoDBLocal.jar"
	libName = "DynamoDBLocal_lib"
	// pomPath is where DynamoDBLocal.jar keeps its Maven metadata, with the
	// jar's version.
	pomPath = "META-INF/maven/com/amazonaws/DynamoDBLocal/pom.properties"

	installTimeout = 10 * time.Minute
	startTimeout   = 60 * time.Second // from launching java to the first answer
	pollInterval   = 50 * time.Millisecond
	startAttempts  = 3 // ports taken between choosing and binding them are retried
)

const javaHint = "install Java 17 or newer (Debian/Ubuntu: apt-get install openjdk-17-jre-headless)"

// FixHint says how to get a server; it ends every error that means "no server".
func FixHint() string {
	script, err := scriptPath()
	dir, _, derr := installDir()
	if derr != nil {
		dir = "$" + EnvLocalDir
	}
	return hintFor(script, err, dir)
}

// hintFor is FixHint's text for the install script found at script (or not
// found: scriptErr) and the install folder dir.
func hintFor(script string, scriptErr error, dir string) string {
	const endpoint = "or set " + EnvEndpoint + " to a running DynamoDB-compatible server " +
		"(e.g. http://localhost:8000, started with -sharedDb); " +
		"or, outside CI, set " + EnvSkip + "=1 to skip tests that need one"
	if scriptErr == nil {
		return "to fix: run " + script + " (needs npm) and " + javaHint + ", " + endpoint
	}
	// A binary built with -trimpath, or a vendored copy, has no script.
	return "to fix: install DynamoDB Local " + DefaultVersion + " yourself: `npm pack " + NPMPackage +
		"`, unpack it (tar -xzf amplify-dynamodb-simulator-2.9.30.tgz) and move its package/emulator folder " +
		"(DynamoDBLocal.jar and DynamoDBLocal_lib/) to " + dir + " (or set " + EnvLocalDir + " to the folder that has them); " +
		"or download DynamoDB Local from AWS and set " + EnvLocalDir + " to its folder; and " + javaHint + "; " + endpoint
}

// Start installs DynamoDB Local if needed (see [Dir]) and starts it in memory,
// with -sharedDb, on port, or on a free port when port is 0. It returns once
// the server answers requests. ctx bounds the installation and the start-up,
// not the life of the server: that ends when Stop is called or (on Linux) when
// the calling process dies.
func Start(ctx context.Context, port int) (*Server, error) {
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("dynamotest: port %d: use 0 (a free port) or a port from 1 to 65535", port)
	}
	dir, err := Dir(ctx)
	if err != nil {
		return nil, err
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("dynamotest: DynamoDB Local needs java, which is not on PATH; %s", FixHint())
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout*startAttempts)
	defer cancel()
	if port != 0 {
		if err := portFree(port); err != nil {
			return nil, fmt.Errorf("dynamotest: cannot start DynamoDB Local on port %d: %w; pick another port, or 0 for a free one", port, err)
		}
		s, err := launch(ctx, java, dir, port)
		if errors.Is(err, errPortTaken) {
			return nil, fmt.Errorf("dynamotest: DynamoDB Local could not bind port %d: another process took it; pick another port, or 0 for a free one", port)
		}
		return s, err
	}
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("dynamotest: finding a free port for DynamoDB Local: %w", err)
		}
		s, err := launch(ctx, java, dir, port)
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, errPortTaken) {
			return nil, err
		}
		if attempt == startAttempts {
			return nil, fmt.Errorf("dynamotest: DynamoDB Local found its port taken by another process %d times in a row; %s",
				attempt, FixHint())
		}
	}
}

// errPortTaken means another process bound the chosen port first.
var errPortTaken = errors.New("port taken")

// Server is a running DynamoDB Local.
type Server struct {
	// Endpoint is its URL, http://127.0.0.1:Port.
	Endpoint string
	// Port is the TCP port it listens on (on all interfaces).
	Port int
	// Dir is the folder it runs from (DynamoDBLocal.jar and DynamoDBLocal_lib/).
	Dir string
	// Version is the jar's version, or "unknown" when the jar does not say.
	Version string

	cmd      *exec.Cmd
	out      *outputBuffer
	exited   chan struct{} // closed once the process has exited and waitErr is set
	waitErr  error
	stopOnce sync.Once
}

// String names the server for messages: version, folder and endpoint.
func (s *Server) String() string {
	return fmt.Sprintf("DynamoDB Local %s (from %s) at %s", s.Version, s.Dir, s.Endpoint)
}

// Pid returns the process id of the Java process.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Done is closed once the Java process has exited, for whatever reason.
func (s *Server) Done() <-chan struct{} { return s.exited }

// Exited reports whether the Java process has exited.
func (s *Server) Exited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// ExitErr returns how the process ended (as exec.Cmd.Wait says); nil before Done.
func (s *Server) ExitErr() error {
	if !s.Exited() {
		return nil
	}
	return s.waitErr
}

// Output returns the start of what the server printed.
func (s *Server) Output() string { return s.out.String() }

// Stop kills the server and waits for it to exit. It may be called more than once.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		killProcess(s.cmd.Process)
		<-s.exited
	})
}

// launch starts DynamoDB Local in dir on port and waits until it answers. It
// returns errPortTaken when another process holds the port.
func launch(ctx context.Context, java, dir string, port int) (*Server, error) {
	cmd := exec.Command(java,
		"-Djava.library.path="+libName, "-jar", jarName,
		"-inMemory", "-sharedDb", "-port", strconv.Itoa(port), "-disableTelemetry")
	cmd.Dir = dir
	out := &outputBuffer{limit: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()
	s := &Server{
		Endpoint: "http://127.0.0.1:" + strconv.Itoa(port),
		Port:     port,
		Dir:      dir,
		Version:  versionOf(dir),
		cmd:      cmd,
		out:      out,
		exited:   make(chan struct{}),
	}

	if err := StartPinned(cmd, func(err error) { s.waitErr = err; close(s.exited) }); err != nil {
		return nil, fmt.Errorf("dynamotest: starting DynamoDB Local %s (java in %s): %w; %s", s.Version, dir, err, FixHint())
	}

	start := time.Now()
	if err := s.waitReady(ctx); err != nil {
		s.Stop()
		if errors.Is(err, errPortTaken) {
			return nil, err
		}
		return nil, fmt.Errorf("dynamotest: DynamoDB Local %s (in %s, port %d) did not start after %v: %w\n"+
			"its output:\n%s\n%s", s.Version, dir, port, time.Since(start).Round(time.Millisecond), err, s.out, FixHint())
	}
	return s, nil
}

// probeClient returns a client for endpoint that never retries, signing with
// dummy credentials, to see whether the server answers.
func probeClient(endpoint string) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:                          "us-east-1",
		BaseEndpoint:                    aws.String(endpoint),
		Credentials:                     credentials.NewStaticCredentialsProvider("dynamotest", "dynamotest", ""),
		DisableValidateResponseChecksum: true,
		Retryer:                         aws.NopRetryer{},
	})
}

// waitReady polls the server until it answers a ListTables, the process exits,
// it fails to bind its port, or ctx (capped at startTimeout) is done.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	c := probeClient(s.Endpoint)
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	var lastErr error
	for {
		if s.out.contains("Failed to bind") {
			return errPortTaken
		}
		reqCtx, cancelReq := context.WithTimeout(ctx, 2*time.Second)
		_, err := c.ListTables(reqCtx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
		cancelReq()
		if err == nil {
			// Something answers on the port; make sure it is our process and not
			// one that took the port between freePort and our java binding it.
			if owns, known := listensOn(s.cmd.Process.Pid, s.Port); owns || !known {
				return nil
			}
			err = errors.New("another process answers on the port")
		}
		lastErr = err
		select {
		case <-s.exited:
			return fmt.Errorf("java exited (%v) before answering", s.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("%w; last request: %v", ctx.Err(), lastErr)
		case <-ticker.C:
		}
	}
}

// freePort returns a loopback TCP port that nothing listened on a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

// portFree reports (as an error) whether port is taken on some interface;
// DynamoDB Local binds all of them.
func portFree(port int) error {
	l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return err
	}
	return l.Close()
}

// installDir returns the folder DynamoDB Local is (to be) installed in, as
// scripts/install-dynamodb-local.sh computes it, and whether DYNAMODB_LOCAL_DIR
// named it.
func installDir() (dir string, fromEnv bool, err error) {
	if v := os.Getenv(EnvNPMVersion); v != "" {
		if err := checkNPMVersion(v); err != nil {
			return "", false, err
		}
		if v != npmVersion && os.Getenv(EnvLocalDir) == "" {
			return "", false, fmt.Errorf("dynamotest: %s=%q needs %s: set it to a missing or empty folder (absolute) "+
				"for %s@%s's DynamoDB Local (the default one holds %s), or unset %s",
				EnvNPMVersion, v, EnvLocalDir, npmName, v, DefaultVersion, EnvNPMVersion)
		}
	}
	if d := os.Getenv(EnvLocalDir); d != "" {
		return d, true, nil
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", false, fmt.Errorf("dynamotest: no folder for DynamoDB Local (%w): set %s or XDG_CACHE_HOME", err, EnvLocalDir)
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "ddbkit", "dynamodb-local-"+DefaultVersion), false, nil
}

// checkNPMVersion checks a DYNAMODB_LOCAL_NPM_VERSION value as the install
// script does: MAJOR.MINOR.PATCH with an optional -prerelease, nothing else.
func checkNPMVersion(v string) error {
	bad := fmt.Errorf("dynamotest: %s=%q is not a version of the npm package %s: write it as MAJOR.MINOR.PATCH (e.g. %s), or unset it",
		EnvNPMVersion, v, npmName, npmVersion)
	core, pre, hasPre := strings.Cut(v, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return bad
	}
	for _, p := range parts {
		if p == "" || len(p) > 9 || strings.Trim(p, "0123456789") != "" {
			return bad
		}
	}
	if hasPre {
		if pre == "" || len(pre) > 64 {
			return bad
		}
		for _, r := range pre {
			if !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || r == '.' || r == '-') {
				return bad
			}
		}
	}
	return nil
}

// checkDir says whether dir holds an installation of DynamoDB Local
// (installed), is a place to install one (missing or empty), or is neither
// (an error that says what is wrong and how to fix it). fromEnv says that
// DYNAMODB_LOCAL_DIR named dir, so the error names the variable.
func checkDir(dir string, fromEnv bool) (installed bool, err error) {
	what := dir
	if fromEnv {
		what = fmt.Sprintf("%s=%q", EnvLocalDir, dir)
	}
	if fromEnv && !filepath.IsAbs(dir) {
		return false, fmt.Errorf("dynamotest: %s is not an absolute path: set it to one "+
			"(go test runs each package in its own folder, so a relative path means a different folder in each)", what)
	}
	layout := "the folder that holds DynamoDBLocal.jar and DynamoDBLocal_lib/ side by side (as AWS's download and the npm package's package/emulator folder have them)"
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, nil // to be installed
	case err != nil:
		return false, fmt.Errorf("dynamotest: %s: %w", what, err)
	case !fi.IsDir():
		return false, fmt.Errorf("dynamotest: %s is a file, not a folder: set it to %s", what, layout)
	}
	jar, jerr := os.Stat(filepath.Join(dir, jarName))
	lib, lerr := os.Stat(filepath.Join(dir, libName))
	switch {
	case jerr == nil && jar.Mode().IsRegular() && lerr == nil && lib.IsDir():
		return true, nil
	case jerr == nil:
		if !jar.Mode().IsRegular() {
			return false, fmt.Errorf("dynamotest: %s: %s is not a file; set it to %s", what, jarName, layout)
		}
		return false, fmt.Errorf("dynamotest: %s has %s but no %s/ folder next to it, which DynamoDB Local needs; set it to %s", what, jarName, libName, layout)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("dynamotest: %s: %w", what, err)
	}
	if len(entries) == 0 {
		return false, nil // an empty folder: install into it
	}
	if fromEnv {
		return false, fmt.Errorf("dynamotest: %s has no %s: set it to %s, or to a missing or empty folder to have DynamoDB Local %s installed there",
			what, jarName, layout, DefaultVersion)
	}
	return false, fmt.Errorf("dynamotest: %s is not an installation of DynamoDB Local (it has no %s): remove it to have DynamoDB Local %s installed there again, or set %s to %s",
		dir, jarName, DefaultVersion, EnvLocalDir, layout)
}

// Dir returns the folder DynamoDB Local is installed in: DYNAMODB_LOCAL_DIR
// when set, otherwise $XDG_CACHE_HOME/ddbkit/dynamodb-local-1.25.1 (or
// ~/.cache/...). It checks the folder first, and when it is missing or empty
// runs the install script, which installs DynamoDB Local 1.25.1 there. ctx
// bounds the installation.
func Dir(ctx context.Context) (string, error) {
	dir, fromEnv, err := installDir()
	if err != nil {
		return "", err
	}
	installed, err := checkDir(dir, fromEnv)
	if err != nil {
		return "", err
	}
	if installed {
		return dir, nil
	}
	script, err := scriptPath()
	if err != nil {
		return "", fmt.Errorf("dynamotest: DynamoDB Local is not installed in %s and %v; %s", dir, err, FixHint())
	}
	ctx, cancel := context.WithTimeout(ctx, installTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("dynamotest: DynamoDB Local is not installed in %s, and installing it with %s failed (%w):\n%s%s",
			dir, script, err, stderr.String(), FixHint())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if got := lines[len(lines)-1]; got != "" {
		dir = got
	}
	if installed, err := checkDir(dir, false); !installed {
		return "", fmt.Errorf("dynamotest: %s ran but DynamoDB Local is not in %s (%v)", script, dir, err)
	}
	return dir, nil
}

// scriptPath finds scripts/install-dynamodb-local.sh next to this package's
// source. It is there in a clone of the repository and in the module cache, but
// not in a binary built with -trimpath.
func scriptPath() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", errors.New("the install script cannot be located (was the binary built with -trimpath?)")
	}
	script := filepath.Join(filepath.Dir(file), "..", "..", filepath.FromSlash(installScript))
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Errorf("the install script is missing: %w", err)
	}
	return script, nil
}

// JarVersion returns the version of the DynamoDB Local in dir, as its
// DynamoDBLocal.jar records it (in its Maven metadata).
func JarVersion(dir string) (string, error) {
	r, err := zip.OpenReader(filepath.Join(dir, jarName))
	if err != nil {
		return "", err
	}
	defer r.Close()
	f, err := r.Open(pomPath)
	if err != nil {
		return "", fmt.Errorf("%s has no %s: %w", jarName, pomPath, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return "", err
	}
	return parsePomVersion(data)
}

// versionOf is JarVersion, or "unknown" when the jar does not say.
func versionOf(dir string) string {
	v, err := JarVersion(dir)
	if err != nil {
		return "unknown"
	}
	return v
}

// parsePomVersion returns the value of the version key of a Java properties
// file (lines key=value or key: value; # and ! start comments). Only plain
// values are accepted: 1 to 64 letters, digits and . - _ +.
func parsePomVersion(data []byte) (string, error) {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 || strings.TrimSpace(line[:i]) != "version" {
			continue
		}
		v := strings.TrimSpace(line[i+1:])
		if v == "" || len(v) > 64 {
			return "", fmt.Errorf("version %q is empty or too long", v)
		}
		for _, r := range v {
			if !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || strings.ContainsRune(".-_+", r)) {
				return "", fmt.Errorf("version %q has a character other than letters, digits and .-_+", v)
			}
		}
		return v, nil
	}
	return "", errors.New("no version in the jar's Maven metadata")
}

// outputBuffer collects a process's output, keeping at most limit bytes (the
// start, where the configuration and the first error are), safe for concurrent use.
type outputBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
	lost  int
}

func (b *outputBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	keep := min(len(p), b.limit-b.buf.Len())
	b.buf.Write(p[:keep])
	b.lost += len(p) - keep
	return len(p), nil
}

func (b *outputBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	if b.lost > 0 {
		s += fmt.Sprintf("\n[%d more bytes not kept]", b.lost)
	}
	return s
}

func (b *outputBuffer) contains(s string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Contains(b.buf.Bytes(), []byte(s))
}

// StartPinned starts cmd from a goroutine locked to its OS thread for the
// child's whole life, and returns cmd.Start's error; once the child has
// exited, that goroutine calls exited with cmd.Wait's error. On Linux the
// parent-death signal (sysProcAttr) is sent when the thread that started
// the child exits, not the process: pinning the goroutine keeps the Go
// runtime from retiring that thread early.
func StartPinned(cmd *exec.Cmd, exited func(error)) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		exited(cmd.Wait())
	}()
	return <-started
}
