package commitlog

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestCleanPath(t *testing.T) {
	for _, p := range []string{"a", "a/b/c.json", "logs/app/00000000000000000001.json", ".hidden", "a/.b", "x..y", "...", "a b/ü+c=1", strings.Repeat("s", 255)} {
		rel, err := cleanPath(p)
		if err != nil {
			t.Errorf("cleanPath(%q): %v", p, err)
		} else if rel != filepath.FromSlash(p) {
			t.Errorf("cleanPath(%q) = %q", p, rel)
		}
	}
	for _, p := range []string{
		"", "/", "/a", "a/", "a//b", ".", "..", "a/..", "../a", "a/../b", "./a", "a/./b",
		`a\b`, `..\a`, "a\x00b", "\xff", ".commitlog-tmp-1", "a/.commitlog-lock",
		strings.Repeat("s", 256), strings.Repeat("a/", 600) + "a",
	} {
		if rel, err := cleanPath(p); err == nil {
			t.Errorf("cleanPath(%q) = %q, want an error", p, rel)
		}
	}
}

// FuzzCleanPath checks that no path cleanPath accepts leads outside the store's directory
// or names the store's own files, and that accepted paths map back to themselves.
func FuzzCleanPath(f *testing.F) {
	for _, p := range []string{"a", "a/b", "../a", "a/../../b", "/etc/passwd", `a\..\b`, "a//b", ".commitlog-lock", "a/./b", "ü/x", "C:/x", "NUL"} {
		f.Add(p)
	}
	root := filepath.FromSlash("/store/root")
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := cleanPath(p)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if !filepath.IsLocal(rel) || filepath.IsAbs(rel) {
			t.Fatalf("cleanPath(%q) = %q: not local", p, rel)
		}
		if filepath.Clean(rel) != rel {
			t.Fatalf("cleanPath(%q) = %q: not clean", p, rel)
		}
		if filepath.ToSlash(rel) != p {
			t.Fatalf("cleanPath(%q) = %q: does not map back", p, rel)
		}
		if full := filepath.Join(root, rel); !strings.HasPrefix(full, root+string(filepath.Separator)) {
			t.Fatalf("cleanPath(%q): %q escapes %q", p, full, root)
		}
		if !utf8.ValidString(p) || strings.ContainsAny(p, "\\\x00") || len(p) > maxKeyLen {
			t.Fatalf("cleanPath(%q) accepted a forbidden byte or length", p)
		}
		for seg := range strings.SplitSeq(p, "/") {
			if seg == "" || seg == "." || seg == ".." || strings.HasPrefix(seg, reservedPrefix) {
				t.Fatalf("cleanPath(%q) accepted segment %q", p, seg)
			}
		}
	})
}

func TestNewDirStoreErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"", filepath.Join(dir, "missing"), file} {
		if _, err := NewDirStore(d); err == nil {
			t.Errorf("NewDirStore(%q) succeeded", d)
		}
	}
	// A relative name is made absolute at once: changing directory later does not move it.
	t.Chdir(dir)
	s, err := NewDirStore(".")
	if err != nil {
		t.Fatal(err)
	}
	if s.(*dirStore).root != dir {
		t.Errorf("root %q, want %q", s.(*dirStore).root, dir)
	}
}

func newDir(t *testing.T) (string, ConditionalStore) {
	t.Helper()
	dir := t.TempDir()
	s, err := NewDirStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, s.(ConditionalStore)
}

func TestDirStoreLayout(t *testing.T) {
	checkNoLeak(t)
	dir, s := newDir(t)
	ctx := t.Context()
	mustPut(t, s, "logs/app/1.json", "one")
	if b, err := os.ReadFile(filepath.Join(dir, "logs", "app", "1.json")); err != nil || string(b) != "one" {
		t.Fatalf("file content %q, %v", b, err)
	}
	if _, err := s.PutIfNotExists(ctx, "logs/app/2.json", []byte("two")); err != nil {
		t.Fatal(err)
	}
	// Leftover temporary files (a crash) and the lock file are not objects.
	if err := os.WriteFile(filepath.Join(dir, "logs", reservedPrefix+"tmp-123"), []byte("junk"), 0o666); err != nil {
		t.Fatal(err)
	}
	if got := list(t, s, ""); !slices.Equal(got, []string{"logs/app/1.json", "logs/app/2.json"}) {
		t.Errorf("List = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, reservedPrefix+"lock")); err != nil {
		t.Errorf("lock file: %v", err)
	}
	// No temporary file is left behind by successful or failed writes.
	if _, err := s.PutIfNotExists(ctx, "logs/app/2.json", []byte("again")); !errors.Is(err, ErrExists) {
		t.Fatal(err)
	}
	if _, err := s.PutIfMatch(ctx, "logs/app/1.json", []byte("again"), `"x"`); !errors.Is(err, ErrPreconditionFailed) {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "logs", "app"))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), reservedPrefix) {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	if err := os.Remove(filepath.Join(dir, "logs", reservedPrefix+"tmp-123")); err != nil {
		t.Fatal(err)
	}
	// Deleting the last objects removes the directories they leave empty.
	for _, p := range []string{"logs/app/1.json", "logs/app/2.json"} {
		if err := s.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "logs")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty directory left after Delete: %v", err)
	}
}

func TestDirStorePrefixConflict(t *testing.T) {
	_, s := newDir(t)
	ctx := t.Context()
	mustPut(t, s, "a/b", "under a")
	for _, put := range []func() error{
		func() error { _, err := s.Put(ctx, "a", []byte("x")); return err },
		func() error { _, err := s.PutIfNotExists(ctx, "a", []byte("x")); return err },
		func() error { _, err := s.Copy(ctx, "a/b", "a"); return err },
	} {
		if err := put(); err == nil || !strings.Contains(err.Error(), "prefix") {
			t.Errorf("writing over a directory: %v, want an error about prefixes", err)
		}
	}
	if _, err := s.Head(ctx, "a"); !errors.Is(err, ErrNotExist) {
		t.Errorf("Head of a directory: %v, want ErrNotExist", err)
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Errorf("Delete of a directory: %v, want nil", err)
	}
	mustPut(t, s, "f", "file")
	if _, err := s.Put(ctx, "f/g", []byte("x")); err == nil || !strings.Contains(err.Error(), "prefix") {
		t.Errorf("writing under a file: %v, want an error about prefixes", err)
	}
	if _, err := s.Head(ctx, "f/g"); !errors.Is(err, ErrNotExist) {
		t.Errorf("Head under a file: %v, want ErrNotExist", err)
	}
	if got := list(t, s, ""); !slices.Equal(got, []string{"a/b", "f"}) {
		t.Errorf("List = %q", got)
	}
	if _, err := s.Put(ctx, "../escape", []byte("x")); err == nil {
		t.Error("Put of ../escape succeeded")
	}
}

// TestDirStoreInstances checks that conditional writes exclude each other across
// separate stores (separate lock file descriptors) on one directory.
func TestDirStoreInstances(t *testing.T) {
	checkNoLeak(t)
	dir := t.TempDir()
	const writers = 8
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		s, err := NewDirStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.(ConditionalStore).PutIfNotExists(t.Context(), "x/once", []byte(strconv.Itoa(i)))
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else if !errors.Is(err, ErrExists) {
			t.Error(err)
		}
	}
	if won != 1 {
		t.Errorf("%d writers created the object, want 1", won)
	}
}

// TestDirStoreProcesses runs read-increment-PutIfMatch loops in several processes on one
// directory: the flock makes the conditional writes atomic across processes.
func TestDirStoreProcesses(t *testing.T) {
	if dir := os.Getenv("COMMITLOG_DIRSTORE_CHILD"); dir != "" {
		dirStoreChild(t, dir)
		return
	}
	dir, s := newDir(t)
	if _, err := s.PutIfNotExists(t.Context(), "counter", []byte("0")); err != nil {
		t.Fatal(err)
	}
	const procs = 4
	var wg sync.WaitGroup
	outs := make([][]byte, procs)
	errs := make([]error, procs)
	for i := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestDirStoreProcesses$", "-test.count=1")
			cmd.Env = append(os.Environ(), "COMMITLOG_DIRSTORE_CHILD="+dir)
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i := range procs {
		if errs[i] != nil {
			t.Errorf("process %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	got, _, err := s.Get(t.Context(), "counter")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprint(procs * childIncrements); string(got) != want {
		t.Errorf("counter = %s, want %s: updates were lost", got, want)
	}
}

const childIncrements = 25

func dirStoreChild(t *testing.T, dir string) {
	st, err := NewDirStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, ctx := st.(ConditionalStore), t.Context()
	for done := 0; done < childIncrements; {
		data, info, err := s.Get(ctx, "counter")
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.Atoi(string(data))
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.PutIfMatch(ctx, "counter", []byte(strconv.Itoa(n+1)), info.ETag)
		if err == nil {
			done++
		} else if !errors.Is(err, ErrPreconditionFailed) {
			t.Fatal(err)
		}
	}
}

// TestDirStorePutDeleteRace writes and deletes objects in shared directories from several
// goroutines: a Delete that removes a directory it left empty must not make a concurrent
// Put in that directory fail.
func TestDirStorePutDeleteRace(t *testing.T) {
	_, s := newDir(t)
	ctx := t.Context()
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := fmt.Sprintf("d/e/%d", i)
			for range 200 {
				if _, err := s.Put(ctx, p, []byte("x")); err != nil {
					errc <- err
					return
				}
				if err := s.Delete(ctx, p); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}
