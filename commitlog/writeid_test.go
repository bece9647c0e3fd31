package commitlog

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/commitlog/s3test"
	"github.com/ddbkit/dynamo/dynamotest"
)

// Every store of the package keeps the write id of each write: the one
// chosen (PutWithID, CopyWithID) or a fresh one (Put, Copy), reported by
// Head and Get; writing the same content again keeps the ETag and changes
// the id.
func TestStoresKeepWriteIDs(t *testing.T) {
	checkNoLeak(t)
	dir, err := NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	endpoint := s3test.Server(t)
	client := s3test.Client(t, endpoint)
	for name, s := range map[string]Store{"mem": NewMemStore(), "dir": dir, "s3": NewS3Store(client, s3test.Bucket(t, client))} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			ws := s.(WriteIDStore)
			info, err := ws.PutWithID(ctx, "a/p", []byte("A"), "id-1")
			if err != nil || info.WriteID != "id-1" {
				t.Fatalf("PutWithID = %+v, %v", info, err)
			}
			h, err := s.Head(ctx, "a/p")
			if err != nil || h.WriteID != "id-1" || h.ETag != info.ETag {
				t.Fatalf("Head = %+v, %v; want write id id-1", h, err)
			}
			again, err := s.Put(ctx, "a/p", []byte("A"))
			if err != nil || again.ETag != info.ETag || again.WriteID == "" || again.WriteID == "id-1" {
				t.Fatalf("Put of the same content = %+v, %v; want the same ETag and a new write id", again, err)
			}
			if _, g, err := s.Get(ctx, "a/p"); err != nil || g.WriteID != again.WriteID {
				t.Fatalf("Get = %+v, %v; want write id %s", g, err, again.WriteID)
			}
			c, err := ws.CopyWithID(ctx, "a/p", "b/q", "id-2")
			if err != nil || c.WriteID != "id-2" {
				t.Fatalf("CopyWithID = %+v, %v", c, err)
			}
			if h, err := s.Head(ctx, "b/q"); err != nil || h.WriteID != "id-2" {
				t.Fatalf("Head of the copy = %+v, %v; want id-2", h, err)
			}
			if _, err := s.Copy(ctx, "a/p", "b/q"); err != nil {
				t.Fatal(err)
			}
			if h, err := s.Head(ctx, "b/q"); err != nil || h.WriteID == "id-2" || h.WriteID == again.WriteID || h.WriteID == "" {
				t.Fatalf("Head after a plain copy = %+v, %v; want a fresh write id", h, err)
			}
			for _, id := range []string{"", "a b", strings.Repeat("x", 65), "ü"} {
				if _, err := ws.PutWithID(ctx, "a/p", []byte("A"), id); !errors.Is(err, ErrInvalidInput) {
					t.Errorf("PutWithID with id %q: %v; want ErrInvalidInput", id, err)
				}
			}
		})
	}
}

// Issue 11 case 9 over S3 (gofakes3 over HTTP): the answer to x's
// PutIfMatch is lost, and y writes the old content back before x looks. x
// sends its PutObject once, and y's acknowledged write stays.
func TestCommitterABAOverS3(t *testing.T) {
	checkNoLeak(t)
	endpoint := s3test.Server(t)
	clean := s3test.Client(t, endpoint)
	bucket := s3test.Bucket(t, clean)
	base, closeIdle := s3test.NewClient(endpoint)
	t.Cleanup(closeIdle)
	tr := dynamotest.NewRequestDropper(func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/p") && r.Header.Get("X-Amz-Copy-Source") == ""
	})
	t.Cleanup(tr.CloseIdleConnections)
	lossy := s3.New(base.Options(), func(o *s3.Options) { o.HTTPClient = tr.HTTPClient() })
	table := committerTable(t)
	x := newCommitter(t, table, nil, NewS3Store(lossy, bucket), WithOwner("x"))
	cleanStore := NewS3Store(clean, bucket)
	y := newCommitter(t, table, nil, cleanStore, WithOwner("y"))
	ctx := t.Context()
	a, err := y.PutIfNotExists(ctx, "p", []byte("A"))
	if err != nil {
		t.Fatal(err)
	}
	var yErr error
	tr.ArmThen(func() {
		b, err := cleanStore.Head(ctx, "p")
		if yErr = err; err == nil {
			_, yErr = y.PutIfMatch(ctx, "p", []byte("A"), b.ETag)
		}
	})
	_, err = x.PutIfMatch(ctx, "p", []byte("B"), a.ETag)
	if yErr != nil {
		t.Fatalf("y: %v", yErr)
	}
	if err != nil {
		t.Errorf("x: %v; want success (its write landed before y's)", err)
	}
	if n := tr.Sent(); n != 1 {
		t.Errorf("x sent %d PutObject requests; want 1", n)
	}
	if data, _, err := cleanStore.Get(ctx, "p"); err != nil || string(data) != "A" {
		t.Errorf("object %q, %v; want y's acknowledged A", data, err)
	}
}

// Issue 12 item 8: OpenLog refuses, before any request, names whose
// objects the store would refuse at the first append.
func TestOpenLogChecksNamesWithTheStoresRules(t *testing.T) {
	dir, err := NewDirStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := dynamo.NewMapper(noClient{}) // no request may be sent
	for _, name := range []string{"../up", "a//b", "./x", "a/./b", "a/..", ".commitlog-x", `a\b`} {
		_, err := OpenLog(m, "t", dir, name)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), strconv.Quote(name)) || !strings.Contains(err.Error(), "e.g.") {
			t.Errorf("OpenLog(%q) on a directory store: %v; want ErrInvalidInput naming it and the fix", name, err)
		}
	}
	for _, name := range []string{"", "/a", "a/", "a\x00b", "\xff", strings.Repeat("n", 1000)} {
		if _, err := OpenLog(m, "t", NewMemStore(), name); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("OpenLog(%q): %v; want ErrInvalidInput", name, err)
		}
	}
	for _, name := range []string{"a//b", "../up"} { // S3 keys and memory accept them
		if _, err := OpenLog(m, "t", NewMemStore(), name); err != nil {
			t.Errorf("OpenLog(%q) on a memory store: %v", name, err)
		}
	}
	if _, err := OpenLog(m, "t", dir, "logs/orders"); err != nil {
		t.Error(err)
	}
}

// Issue 12 item 8: the directory store does not follow symbolic links
// placed inside its directory, neither for the object's file nor for a
// parent directory, so nothing outside it is read or written.
func TestDirStoreRefusesSymlinks(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "file")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "dir")); err != nil {
		t.Fatal(err)
	}
	s, err := NewDirStore(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	check := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("%s: %v; want an error saying symbolic links are not followed", what, err)
		}
	}
	_, err = s.Head(ctx, "file")
	check("Head through a linked file", err)
	_, _, err = s.Get(ctx, "file")
	check("Get through a linked file", err)
	_, _, err = s.Get(ctx, "dir/secret")
	check("Get through a linked directory", err)
	_, err = s.Put(ctx, "dir/new", []byte("x"))
	check("Put through a linked directory", err)
	_, err = s.Copy(ctx, "dir/secret", "copy")
	check("Copy from a linked directory", err)
	check("Delete through a linked directory", s.Delete(ctx, "dir/secret"))
	if _, err := os.Stat(filepath.Join(outside, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was written outside the store: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "secret")); err != nil {
		t.Errorf("the file outside was deleted: %v", err)
	}
	for info, err := range s.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("List yielded %+v through a link", info)
	}
}

// FuzzLogName checks the log name check: no panic, every refusal wraps
// ErrInvalidInput, and a name accepted for a directory store gives entry and
// temporary paths that the store accepts and that stay under the name.
func FuzzLogName(f *testing.F) {
	for _, n := range []string{"logs/orders", "../up", "a//b", "a/", "/a", ".", "a/.commitlog-x", "ü", "a\x00", `a\b`, "_tmp"} {
		f.Add(n)
	}
	dir := &dirStore{root: "/nonexistent"}
	mem := NewMemStore()
	f.Fuzz(func(t *testing.T, name string) {
		errDir := checkLogName(dir, name)
		errMem := checkLogName(mem, name)
		for _, err := range []error{errDir, errMem} {
			if err != nil && (!errors.Is(err, ErrInvalidInput) || err.Error() == "") {
				t.Fatalf("checkLogName(%q): %v does not wrap ErrInvalidInput", name, err)
			}
		}
		if errDir == nil {
			if errMem != nil {
				t.Fatalf("checkLogName(%q) accepted by the directory store, refused for memory: %v", name, errMem)
			}
			l := &Log{name: name}
			for _, p := range []string{l.Path(1), l.Path(1<<63 - 1), l.tempPath()} {
				if _, err := cleanPath(p); err != nil {
					t.Fatalf("name %q accepted, but path %q refused: %v", name, p, err)
				}
				if !strings.HasPrefix(p, name+"/") {
					t.Fatalf("path %q not under %q", p, name)
				}
			}
		}
	})
}
