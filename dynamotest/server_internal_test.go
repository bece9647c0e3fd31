package dynamotest

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
	if runtime.GOOS != "linux" {
		t.Skip("telling which process listens on a port needs Linux's /proc")
	}
	if os.Getenv(envEndpoint) != "" {
		t.Skip("DYNAMODB_ENDPOINT is set: no DynamoDB Local is started")
	}
	t.Parallel()
	dir, err := ensureInstalled(t.Context())
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
		s.stop()
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

func TestTableNameFromTestName(t *testing.T) {
	if got, want := tableName("TestX/sub case#1.ok-_"), "TestX_sub_case_1.ok-_"; got != want {
		t.Errorf("tableName = %q, want %q", got, want)
	}
	long := strings.Repeat("a", 300)
	if n := uniqueName(long); len(n) > 255 || !strings.HasPrefix(n, long[:maxPrefixLen]+"-") {
		t.Errorf("uniqueName of a 300-character prefix = %q (%d characters)", n, len(n))
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
