//go:build linux || darwin

package commitlog

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO placed in the store's directory is no object, and reading it does
// not block (it is opened O_NONBLOCK).
func TestDirStoreFIFOIsNoObject(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o666); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	s, err := NewDirStore(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Head(t.Context(), "fifo"); !errors.Is(err, ErrNotExist) {
		t.Errorf("Head of a FIFO: %v; want ErrNotExist", err)
	}
	if _, _, err := s.Get(t.Context(), "fifo"); !errors.Is(err, ErrNotExist) {
		t.Errorf("Get of a FIFO: %v; want ErrNotExist", err)
	}
}
