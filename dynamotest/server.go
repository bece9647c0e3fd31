package dynamotest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

const (
	envEndpoint = "DYNAMODB_ENDPOINT"
	envLocalDir = "DYNAMODB_LOCAL_DIR"

	// localVersion is the version of DynamoDB Local (the jar) that
	// scripts/install-dynamodb-local.sh installs, from the npm package
	// amplify-dynamodb-simulator 2.9.30.
	localVersion = "1.25.1"

	// installScript is the install script, relative to the repository root.
	installScript = "scripts/install-dynamodb-local.sh"

	installTimeout = 10 * time.Minute
	startTimeout   = 60 * time.Second // from launching java to the first answer
	pollInterval   = 50 * time.Millisecond
	startAttempts  = 3 // ports taken between choosing and binding them are retried
)

// npmPackage is the npm package DynamoDB Local localVersion is taken from.
const npmPackage = "amplify-dynamodb-simulator@2.9.30"

const javaHint = "install Java 17 or newer (Debian/Ubuntu: apt-get install openjdk-17-jre-headless)"

// fixHint says how to get a server; it ends every error that means "no server".
func fixHint() string {
	script, err := scriptPath()
	dir, derr := installDir()
	if derr != nil {
		dir = "$" + envLocalDir
	}
	return hintFor(script, err, dir)
}

// hintFor is fixHint's text for the install script found at script (or not
// found: scriptErr) and the install folder dir.
func hintFor(script string, scriptErr error, dir string) string {
	const endpoint = "or set " + envEndpoint + " to a running DynamoDB-compatible server " +
		"(e.g. http://localhost:8000, started with -sharedDb); " +
		"or, outside CI, set " + envSkip + "=1 to skip tests that need one"
	if scriptErr == nil {
		return "to fix: run " + script + " (needs npm) and " + javaHint + ", " + endpoint
	}
	// A binary built with -trimpath, or a vendored copy, has no script.
	return "to fix: install DynamoDB Local " + localVersion + " yourself: `npm pack " + npmPackage +
		"`, unpack it (tar -xzf amplify-dynamodb-simulator-2.9.30.tgz) and move its package/emulator folder " +
		"(DynamoDBLocal.jar and DynamoDBLocal_lib/) to " + dir + " (or set " + envLocalDir + " to the folder that has them); " +
		"or download DynamoDB Local from AWS and set " + envLocalDir + " to its folder; and " + javaHint + "; " + endpoint
}

// Start returns the endpoint of a DynamoDB-compatible server for a program and a
// function that stops it.
//
// When DYNAMODB_ENDPOINT is set, Start checks it as [Endpoint] does and returns
// it and a stop function that does nothing. Otherwise Start installs DynamoDB Local if it is not installed yet
// (see the package documentation), starts a new in-memory DynamoDB Local on a free
// port and returns once it answers requests. ctx bounds the installation and the
// start-up, not the life of the server: that ends when stop is called or (on Linux)
// when the calling process dies. stop may be called more than once.
//
// Each call starts its own server; tests should use [Client], which shares one.
func Start(ctx context.Context) (endpoint string, stop func(), err error) {
	if ep := os.Getenv(envEndpoint); ep != "" {
		if err := checkEndpoint(ctx, ep); err != nil {
			return "", nil, err
		}
		return ep, func() {}, nil
	}
	s, err := startLocal(ctx)
	if err != nil {
		return "", nil, err
	}
	return s.endpoint, s.stop, nil
}

// startLocal installs DynamoDB Local if needed and starts it.
func startLocal(ctx context.Context) (*server, error) {
	dir, err := ensureInstalled(ctx)
	if err != nil {
		return nil, err
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("dynamotest: DynamoDB Local needs java, which is not on PATH; %s", fixHint())
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout*startAttempts)
	defer cancel()
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
				attempt, fixHint())
		}
	}
}

// errPortTaken means another process bound the chosen port first.
var errPortTaken = errors.New("port taken")

// server is a running DynamoDB Local.
type server struct {
	endpoint string
	port     int
	cmd      *exec.Cmd
	out      *outputBuffer
	exited   chan struct{} // closed once the process has exited and waitErr is set
	waitErr  error
	stopOnce sync.Once
}

// launch starts DynamoDB Local in dir on port and waits until it answers. It
// returns errPortTaken when another process holds the port.
func launch(ctx context.Context, java, dir string, port int) (*server, error) {
	cmd := exec.Command(java,
		"-Djava.library.path=DynamoDBLocal_lib", "-jar", "DynamoDBLocal.jar",
		"-inMemory", "-sharedDb", "-port", strconv.Itoa(port), "-disableTelemetry")
	cmd.Dir = dir
	out := &outputBuffer{limit: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()
	s := &server{
		endpoint: "http://127.0.0.1:" + strconv.Itoa(port),
		port:     port,
		cmd:      cmd,
		out:      out,
		exited:   make(chan struct{}),
	}

	started := make(chan error, 1)
	go func() {
		// On Linux the parent-death signal is sent when the thread that started
		// the child exits, not the process. Pin this goroutine to its thread for
		// the child's whole life so the Go runtime never retires that thread early.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("dynamotest: starting DynamoDB Local (java in %s): %w; %s", dir, err, fixHint())
	}

	start := time.Now()
	if err := s.waitReady(ctx); err != nil {
		s.stop()
		if errors.Is(err, errPortTaken) {
			return nil, err
		}
		return nil, fmt.Errorf("dynamotest: DynamoDB Local (in %s, port %d) did not start after %v: %w\n"+
			"its output:\n%s\n%s", dir, port, time.Since(start).Round(time.Millisecond), err, s.out, fixHint())
	}
	return s, nil
}

// waitReady polls the server until it answers a ListTables, the process exits,
// it fails to bind its port, or ctx (capped at startTimeout) is done.
func (s *server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	c := NewClient(s.endpoint, func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} })
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
			if owns, known := listensOn(s.cmd.Process.Pid, s.port); owns || !known {
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

// hasExited reports whether the server's process has exited.
func (s *server) hasExited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// stop kills the server and waits for it to exit.
func (s *server) stop() {
	s.stopOnce.Do(func() {
		killProcess(s.cmd.Process)
		<-s.exited
	})
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

// installDir returns the folder DynamoDB Local is (to be) installed in, as
// scripts/install-dynamodb-local.sh computes it.
func installDir() (string, error) {
	if d := os.Getenv(envLocalDir); d != "" {
		return d, nil
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("dynamotest: no folder for DynamoDB Local (%w): set %s or XDG_CACHE_HOME", err, envLocalDir)
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "ddbkit", "dynamodb-local-"+localVersion), nil
}

// ensureInstalled returns the folder DynamoDB Local is installed in, running the
// install script first when DynamoDBLocal.jar is not there.
func ensureInstalled(ctx context.Context) (string, error) {
	dir, err := installDir()
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "DynamoDBLocal.jar")); err == nil {
		return dir, nil
	}
	script, err := scriptPath()
	if err != nil {
		return "", fmt.Errorf("dynamotest: DynamoDB Local is not installed in %s and %v; %s", dir, err, fixHint())
	}
	ctx, cancel := context.WithTimeout(ctx, installTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("dynamotest: DynamoDB Local is not installed in %s, and installing it with %s failed (%w):\n%s%s",
			dir, script, err, stderr.String(), fixHint())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if got := lines[len(lines)-1]; got != "" {
		dir = got
	}
	if _, err := os.Stat(filepath.Join(dir, "DynamoDBLocal.jar")); err != nil {
		return "", fmt.Errorf("dynamotest: %s ran but %v", script, err)
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
	script := filepath.Join(filepath.Dir(file), "..", filepath.FromSlash(installScript))
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Errorf("the install script is missing: %w", err)
	}
	return script, nil
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

// LocalDir returns the folder DynamoDB Local is installed in (the one with
// DynamoDBLocal.jar and DynamoDBLocal_lib/), installing it first if needed.
// Tests that use the Java SDK jars DynamoDB Local ships take them from there.
// ctx bounds the installation.
func LocalDir(ctx context.Context) (string, error) {
	return ensureInstalled(ctx)
}
