package ddblocal

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestLaunchPortTaken starts DynamoDB Local on a port where a fake DynamoDB
// already answers: launch must not mistake the fake for its server.
func TestLaunchPortTaken(t *testing.T) {
	if testing.Short() {
		t.Skip("starts DynamoDB Local (-short)")
	}
	if runtime.GOOS != "linux" {
		t.Skip("telling which process listens on a port needs Linux's /proc")
	}
	t.Parallel()
	dir, err := Dir(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fake := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = io.WriteString(w, `{"TableNames":[]}`)
	})}
	go func() { _ = fake.Serve(l) }()
	t.Cleanup(func() { _ = fake.Close() })

	start := time.Now()
	s, err := launch(t.Context(), java, dir, l.Addr().(*net.TCPAddr).Port)
	if err == nil {
		s.Stop()
		t.Fatal("launch on a port another process listens on succeeded; want errPortTaken")
	}
	if !errors.Is(err, errPortTaken) {
		t.Fatalf("launch: %v; want errPortTaken", err)
	}
	t.Logf("port taken detected after %v", time.Since(start).Round(time.Millisecond))
}

func TestListensOn(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux's /proc")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if owns, known := listensOn(os.Getpid(), port); !owns || !known {
		t.Errorf("listensOn(self, %d) = %v, %v; want true, true", port, owns, known)
	}
	if owns, _ := listensOn(os.Getpid(), port+1); owns {
		t.Errorf("listensOn(self, %d) = true for a port it does not listen on", port+1)
	}
}

func TestOutputBufferKeepsTheStart(t *testing.T) {
	b := &outputBuffer{limit: 8}
	_, _ = b.Write([]byte("12345"))
	_, _ = b.Write([]byte("67890"))
	if got, want := b.String(), "12345678\n[2 more bytes not kept]"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if !b.contains("5678") || b.contains("9") {
		t.Error("contains does not match the kept bytes")
	}
}

// TestHintWithoutScript: outside this repository (no install script) the
// hint says how to install DynamoDB Local by other means, and names no
// script path.
func TestHintWithoutScript(t *testing.T) {
	h := hintFor("", errors.New("the install script is missing"), "/home/u/.cache/ddbkit/dynamodb-local-1.25.1")
	for _, want := range []string{"npm pack amplify-dynamodb-simulator@2.9.30", "package/emulator",
		"/home/u/.cache/ddbkit/dynamodb-local-1.25.1", "DYNAMODB_LOCAL_DIR", "DYNAMODB_ENDPOINT", "Java 17", "DYNAMOTEST_SKIP_UNAVAILABLE"} {
		if !strings.Contains(h, want) {
			t.Errorf("hint lacks %q:\n%s", want, h)
		}
	}
	if strings.Contains(h, "install-dynamodb-local.sh") {
		t.Errorf("hint names the script, which is not there:\n%s", h)
	}
	h = hintFor("/repo/scripts/install-dynamodb-local.sh", nil, "/d")
	if !strings.Contains(h, "run /repo/scripts/install-dynamodb-local.sh") {
		t.Errorf("hint with the script does not name it:\n%s", h)
	}
}

// TestStartOnTakenPort: a port asked for that another process holds is
// refused at once, saying what to do, without starting Java.
func TestStartOnTakenPort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts DynamoDB Local (-short)")
	}
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = Start(t.Context(), port)
	if err == nil || !strings.Contains(err.Error(), "pick another port") {
		t.Fatalf("Start on taken port %d: %v; want an error saying to pick another port", port, err)
	}
	for _, p := range []int{-1, 65536} {
		if _, err := Start(t.Context(), p); err == nil || !strings.Contains(err.Error(), "port") {
			t.Errorf("Start(%d): %v; want an error naming the port", p, err)
		}
	}
}
