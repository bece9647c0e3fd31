package commitlog

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// reservedPrefix starts the names of the directory store's own files (temporary files,
// the lock file). No object path may have a segment that starts with it, and List never
// yields such files.
const reservedPrefix = ".commitlog-"

// maxDirAttempts bounds how often a write recreates its directory after concurrent
// Deletes removed it, empty, between creating it and creating the temporary file.
const maxDirAttempts = 100

// maxSegmentLen is the usual file name limit (NAME_MAX) of local filesystems.
const maxSegmentLen = 255

// NewDirStore returns a Store that keeps objects as files under dir, which must exist.
// An object's path is its file's path relative to dir, with '/' separating directories:
// "logs/app/1.json" is the file dir/logs/app/1.json. Paths must be relative and clean
// (filepath.IsLocal; no segment starting with ".commitlog-"); others are refused before
// the filesystem is touched, so no path can escape dir.
//
// Writes are atomic: a synced temporary file is renamed over the target. ETags are the
// quoted hex MD5 of the content, as S3's and MemStore's; Head, List and the conditional
// writes read the whole file to hash it, so their cost grows with object size.
//
// The store also implements ConditionalStore, atomic among the processes of one machine
// (a mutex and an flock on dir/.commitlog-lock), not on network filesystems (NFS, SMB)
// nor between machines. Symbolic links inside dir are never followed. See
// docs/commitlog.md, Directory store.
func NewDirStore(dir string) (Store, error) {
	if dir == "" {
		return nil, errors.New("commitlog: NewDirStore: empty directory name: pass the directory that holds the objects")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("commitlog: NewDirStore %q: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("commitlog: NewDirStore: directory %q does not exist: create it first (os.MkdirAll): %w", abs, err)
		}
		return nil, fmt.Errorf("commitlog: NewDirStore %q: %w", abs, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("commitlog: NewDirStore: %q is not a directory", abs)
	}
	mu, _ := dirLocks.LoadOrStore(abs, new(sync.Mutex))
	return &dirStore{root: abs, mu: mu.(*sync.Mutex)}, nil
}

// checkPath refuses a path the store cannot hold (see NewDirStore), before any file
// operation; OpenLog uses it to check a log's name.
func (s *dirStore) checkPath(path string) error {
	_, err := cleanPath(path)
	return err
}

// dirLocks holds one mutex per root directory, shared by the stores of the process.
var dirLocks sync.Map // string → *sync.Mutex

type dirStore struct {
	root string
	mu   *sync.Mutex // with the flock, serializes conditional writes
}

var (
	_ ConditionalStore = (*dirStore)(nil)
	_ WriteIDStore     = (*dirStore)(nil)
)

// cleanPath checks that p is an acceptable object path for a directory store (see
// NewDirStore) and returns it as a relative file path for the operating system.
func cleanPath(p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("empty path: name the object, e.g. \"logs/app/1.json\"")
	case len(p) > maxKeyLen:
		return "", fmt.Errorf("path of %d bytes: use at most %d bytes", len(p), maxKeyLen)
	case !utf8.ValidString(p):
		return "", errors.New("path is not valid UTF-8")
	case strings.IndexByte(p, 0) >= 0:
		return "", errors.New("path contains a NUL byte")
	case strings.IndexByte(p, '\\') >= 0:
		return "", errors.New("path contains a backslash: separate directories with '/'")
	case p[0] == '/':
		return "", errors.New("absolute path: paths are relative to the store's directory; remove the leading '/'")
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch {
		case seg == "":
			return "", errors.New("empty path segment (\"//\" or a trailing '/'): directories are not objects")
		case seg == "." || seg == "..":
			return "", fmt.Errorf("path segment %q: paths must not leave or refer to directories", seg)
		case len(seg) > maxSegmentLen:
			return "", fmt.Errorf("path segment of %d bytes: use at most %d bytes per segment", len(seg), maxSegmentLen)
		case strings.HasPrefix(seg, reservedPrefix):
			return "", fmt.Errorf("path segment %q: names starting with %q are reserved for the store's own files", seg, reservedPrefix)
		}
	}
	rel := filepath.FromSlash(p)
	if !filepath.IsLocal(rel) {
		return "", errors.New("path is not a plain local file name on this operating system (a reserved name or a volume)")
	}
	return rel, nil
}

// file returns the absolute file name of the object at path, or an error for a bad path
// (wrapping ErrInvalidInput) or for a path through a symbolic link.
func (s *dirStore) file(op, what, path string) (string, error) {
	rel, err := cleanPath(path)
	if err != nil {
		return "", invalid("commitlog: %s: %s %q: %v", op, what, path, err)
	}
	// Refuse parents that are symbolic links: they may lead outside the root.
	d := s.root
	segs := strings.Split(path, "/")
	for _, seg := range segs[:len(segs)-1] {
		d = filepath.Join(d, seg)
		fi, err := os.Lstat(d)
		if err != nil {
			break // missing (created as a directory by writes) or not a directory: later calls say so
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", s.symlinkError(op, path, d)
		}
	}
	return filepath.Join(s.root, rel), nil
}

// symlinkError is the error of a path through the symbolic link link.
func (s *dirStore) symlinkError(op, path, link string) error {
	return fmt.Errorf("commitlog: %s %q: %s is a symbolic link (not followed): make it a directory or a file", op, path, link)
}

// notExist reports whether err means that no file is there (a missing file, or a parent
// that is a file).
func notExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// read opens the object's file and returns its content (when withData) and metadata.
// The file is opened once, so the content and the metadata belong together even if the
// object is replaced meanwhile.
func (s *dirStore) read(op, path, name string, withData bool) ([]byte, ObjectInfo, error) {
	if oNoFollow == 0 {
		if fi, err := os.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, ObjectInfo{}, s.symlinkError(op, path, name)
		}
	}
	f, err := os.OpenFile(name, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		if notExist(err) {
			return nil, ObjectInfo{}, fmt.Errorf("%w: %q in %s", ErrNotExist, path, s.root)
		}
		if fi, lerr := os.Lstat(name); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, ObjectInfo{}, s.symlinkError(op, path, name)
		}
		return nil, ObjectInfo{}, fmt.Errorf("commitlog: %s %q: %w", op, path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, ObjectInfo{}, fmt.Errorf("commitlog: %s %q: %w", op, path, err)
	}
	if !fi.Mode().IsRegular() {
		// A directory (the prefix of other objects) or a device: no object.
		return nil, ObjectInfo{}, fmt.Errorf("%w: %q in %s (not a regular file)", ErrNotExist, path, s.root)
	}
	h := md5.New()
	var data []byte
	var n int64
	if withData {
		data, err = io.ReadAll(f)
		h.Write(data)
		n = int64(len(data))
	} else {
		n, err = io.Copy(h, f)
	}
	if err != nil {
		return nil, ObjectInfo{}, fmt.Errorf("commitlog: %s %q: %w", op, path, err)
	}
	info := ObjectInfo{Path: path, ETag: `"` + hex.EncodeToString(h.Sum(nil)) + `"`, Size: n, LastModified: fi.ModTime(), WriteID: writeID(f)}
	return data, info, nil
}

func (s *dirStore) Head(ctx context.Context, path string) (ObjectInfo, error) {
	name, err := s.file("head", "path", path)
	if err != nil {
		return ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, fmt.Errorf("commitlog: head %q: %w", path, err)
	}
	_, info, err := s.read("head", path, name, false)
	return info, err
}

func (s *dirStore) Get(ctx context.Context, path string) ([]byte, ObjectInfo, error) {
	name, err := s.file("get", "path", path)
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, ObjectInfo{}, fmt.Errorf("commitlog: get %q: %w", path, err)
	}
	return s.read("get", path, name, true)
}

func (s *dirStore) Put(ctx context.Context, path string, data []byte) (ObjectInfo, error) {
	return s.write(ctx, "put", path, data, newWriteID(), nil)
}

func (s *dirStore) PutWithID(ctx context.Context, path string, data []byte, id string) (ObjectInfo, error) {
	if err := checkWriteID("put", id); err != nil {
		return ObjectInfo{}, err
	}
	return s.write(ctx, "put", path, data, id, nil)
}

func (s *dirStore) PutIfNotExists(ctx context.Context, path string, data []byte) (ObjectInfo, error) {
	const op = "put if not exists"
	return s.write(ctx, op, path, data, newWriteID(), func(tmp, name string) error {
		err := os.Link(tmp, name)
		if err == nil {
			_ = os.Remove(tmp) // the object is the link; the name is no longer needed
			return nil
		}
		fi, lerr := os.Lstat(name)
		switch {
		case lerr == nil && fi.IsDir():
			return s.prefixError(op, path)
		case lerr == nil:
			_, info, herr := s.read(op, path, name, false)
			if herr != nil {
				return fmt.Errorf("%w: %q in %s", ErrExists, path, s.root)
			}
			return fmt.Errorf("%w: %q in %s (ETag %s)", ErrExists, path, s.root, info.ETag)
		case !notExist(lerr):
			return fmt.Errorf("commitlog: %s %q: %w", op, path, lerr)
		}
		// No hard links on this filesystem: the lock makes stat-then-rename safe among
		// conditional writers.
		return s.rename(op, path, tmp, name)
	})
}

func (s *dirStore) PutIfMatch(ctx context.Context, path string, data []byte, etag string) (ObjectInfo, error) {
	const op = "put if match"
	if etag == "" {
		if _, err := s.file(op, "path", path); err != nil {
			return ObjectInfo{}, err
		}
		return ObjectInfo{}, fmt.Errorf("commitlog: %s %q: empty ETag: pass the ETag from Head, Get or Put (use PutIfNotExists to create)", op, path)
	}
	return s.write(ctx, op, path, data, newWriteID(), func(tmp, name string) error {
		_, cur, err := s.read(op, path, name, false)
		if errors.Is(err, ErrNotExist) {
			return fmt.Errorf("%w: %q in %s: held ETag %s, but the object does not exist", ErrPreconditionFailed, path, s.root, etag)
		}
		if err != nil {
			return err
		}
		if cur.ETag != etag {
			return fmt.Errorf("%w: %q in %s: held ETag %s, current %s", ErrPreconditionFailed, path, s.root, etag, cur.ETag)
		}
		return s.rename(op, path, tmp, name)
	})
}

func (s *dirStore) prefixError(op, path string) error {
	return fmt.Errorf("commitlog: %s %q: a directory of other objects is there; an object cannot be their prefix: pick another path", op, path)
}

// rename moves the synced temporary file tmp over name.
func (s *dirStore) rename(op, path, tmp, name string) error {
	if err := os.Rename(tmp, name); err != nil {
		if fi, serr := os.Lstat(name); serr == nil && fi.IsDir() {
			return s.prefixError(op, path)
		}
		return fmt.Errorf("commitlog: %s %q: %w", op, path, err)
	}
	return nil
}

// write writes data, tagged with the write id id, to a temporary file next to path's
// file and then, if commit is nil, renames it over the file; otherwise it calls
// commit(tmp, name) holding the store's lock, which moves tmp into place or fails. The
// temporary file is removed on failure. Every error but the last (syncing the directory
// after the rename) proves that the object was not written (markNotApplied).
func (s *dirStore) write(ctx context.Context, op, path string, data []byte, id string, commit func(tmp, name string) error) (ObjectInfo, error) {
	name, err := s.file(op, "path", path)
	if err != nil {
		return ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, markNotApplied(fmt.Errorf("commitlog: %s %q: %w", op, path, err))
	}
	dir := filepath.Dir(name)
	tmp, mtime, err := s.writeTemp(op, path, dir, data, id)
	if err != nil {
		return ObjectInfo{}, markNotApplied(err)
	}
	if commit == nil {
		err = s.rename(op, path, tmp, name)
	} else {
		err = s.locked(op, func() error { return commit(tmp, name) })
	}
	if err != nil {
		_ = os.Remove(tmp)
		return ObjectInfo{}, markNotApplied(err)
	}
	if err := syncDir(dir); err != nil {
		return ObjectInfo{}, fmt.Errorf("commitlog: %s %q: written, but syncing directory %s failed (the write may not survive a crash): %w", op, path, dir, err)
	}
	return ObjectInfo{Path: path, ETag: md5ETag(data), Size: int64(len(data)), LastModified: mtime, WriteID: id}, nil
}

// writeTemp creates dir if needed and writes data to a new, synced temporary file in it.
func (s *dirStore) writeTemp(op, path, dir string, data []byte, id string) (tmp string, mtime time.Time, err error) {
	var f *os.File
	created := false // whether dir or some of its parents were created
	for attempt := 0; ; attempt++ {
		_, statErr := os.Lstat(dir)
		if err = os.MkdirAll(dir, 0o777); err != nil {
			if errors.Is(err, fs.ErrNotExist) && attempt < maxDirAttempts {
				continue // a concurrent Delete removed a parent it had left empty
			}
			if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
				return "", mtime, fmt.Errorf("commitlog: %s %q: a parent directory is an object; an object cannot be a prefix of others: pick another path: %w", op, path, err)
			}
			return "", mtime, fmt.Errorf("commitlog: %s %q: creating directory %s: %w", op, path, dir, err)
		}
		created = created || statErr != nil
		f, err = os.CreateTemp(dir, reservedPrefix+"tmp-*")
		// A concurrent Delete may have removed the directory, empty, in between.
		if err == nil || !errors.Is(err, fs.ErrNotExist) || attempt == maxDirAttempts {
			break
		}
	}
	if err != nil {
		return "", mtime, fmt.Errorf("commitlog: %s %q: creating a temporary file in %s: %w", op, path, dir, err)
	}
	fail := func(err error) (string, time.Time, error) {
		f.Close()
		os.Remove(f.Name())
		return "", time.Time{}, fmt.Errorf("commitlog: %s %q: writing temporary file %s: %w", op, path, f.Name(), err)
	}
	if created {
		// Make the new directories' entries durable too, up to the root. With the
		// temporary file in it, no Delete removes dir meanwhile.
		for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
			if err := syncDir(d); err != nil {
				return fail(fmt.Errorf("syncing directory %s: %w", d, err))
			}
			if d == s.root || !strings.HasPrefix(d, s.root) {
				break
			}
		}
	}
	if err := setWriteID(f, id); err != nil {
		return fail(fmt.Errorf("setting the write id: %w", err))
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	fi, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	return f.Name(), fi.ModTime(), nil
}

// locked runs fn holding the process-wide mutex of the root directory and, where
// supported, an exclusive flock on its lock file.
func (s *dirStore) locked(op string, fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	lockName := filepath.Join(s.root, reservedPrefix+"lock")
	f, err := os.OpenFile(lockName, os.O_RDWR|os.O_CREATE|oNoFollow, 0o666)
	if err != nil {
		return fmt.Errorf("commitlog: %s: opening lock file %s: %w", op, lockName, err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return fmt.Errorf("commitlog: %s: locking %s: %w", op, lockName, err)
	}
	defer unlockFile(f)
	return fn()
}

func (s *dirStore) Copy(ctx context.Context, src, dst string) (ObjectInfo, error) {
	return s.copy(ctx, src, dst, newWriteID())
}

func (s *dirStore) CopyWithID(ctx context.Context, src, dst, id string) (ObjectInfo, error) {
	return copyWithID(ctx, src, dst, id, s.copy)
}

func (s *dirStore) copy(ctx context.Context, src, dst, id string) (ObjectInfo, error) {
	srcName, err := s.file("copy", "src", src)
	if err != nil {
		return ObjectInfo{}, err
	}
	if _, err := s.file("copy", "dst", dst); err != nil {
		return ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, markNotApplied(fmt.Errorf("commitlog: copy %q to %q: %w", src, dst, err))
	}
	data, _, err := s.read("copy", src, srcName, true)
	if err != nil {
		if errors.Is(err, ErrNotExist) {
			return ObjectInfo{}, fmt.Errorf("%w: copy source %q in %s", ErrNotExist, src, s.root)
		}
		return ObjectInfo{}, markNotApplied(err)
	}
	return s.write(ctx, "copy", dst, data, id, nil)
}

func (s *dirStore) Delete(ctx context.Context, path string) error {
	name, err := s.file("delete", "path", path)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commitlog: delete %q: %w", path, err)
	}
	fi, err := os.Lstat(name)
	if err != nil {
		if notExist(err) {
			return nil
		}
		return fmt.Errorf("commitlog: delete %q: %w", path, err)
	}
	if fi.IsDir() {
		return nil // a prefix of other objects, not an object
	}
	if err := os.Remove(name); err != nil && !notExist(err) {
		return fmt.Errorf("commitlog: delete %q: %w", path, err)
	}
	// Remove the directories left empty, up to the root. Removing a non-empty directory
	// fails, which ends the loop; a writer that loses its directory meanwhile recreates it.
	for d := filepath.Dir(name); d != s.root && strings.HasPrefix(d, s.root); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break
		}
	}
	return nil
}

func (s *dirStore) List(ctx context.Context, prefix string) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		s.walk(ctx, "", prefix, yield)
	}
}

// walk yields the objects under the directory rel ("" for the root, else ending in '/')
// whose paths start with prefix, in lexical order; it returns false once yield does.
func (s *dirStore) walk(ctx context.Context, rel, prefix string, yield func(ObjectInfo, error) bool) bool {
	if err := ctx.Err(); err != nil {
		return yield(ObjectInfo{}, fmt.Errorf("commitlog: list %q: %w", prefix, err))
	}
	dir := filepath.Join(s.root, filepath.FromSlash(rel))
	entries, err := os.ReadDir(dir)
	if err != nil {
		if notExist(err) && rel != "" {
			return true // removed while listing
		}
		return yield(ObjectInfo{}, fmt.Errorf("commitlog: list %q: %w", prefix, err))
	}
	type entry struct {
		key string // the path, with a trailing '/' for a directory
		dir bool
	}
	var list []entry
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, reservedPrefix) {
			continue
		}
		switch {
		case e.IsDir():
			key := rel + n + "/"
			if strings.HasPrefix(key, prefix) || strings.HasPrefix(prefix, key) {
				list = append(list, entry{key, true})
			}
		case e.Type().IsRegular():
			if key := rel + n; strings.HasPrefix(key, prefix) {
				list = append(list, entry{key, false})
			}
		}
	}
	// A directory sorts as its name and '/', so that the paths under it come out where
	// they belong among the other names ("a-b" < "a/c").
	slices.SortFunc(list, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	for _, e := range list {
		if _, err := cleanPath(strings.TrimSuffix(e.key, "/")); err != nil {
			continue // a file no object path can name (put there by someone else)
		}
		if e.dir {
			if !s.walk(ctx, e.key, prefix, yield) {
				return false
			}
			continue
		}
		if err := ctx.Err(); err != nil {
			return yield(ObjectInfo{}, fmt.Errorf("commitlog: list %q: %w", prefix, err))
		}
		_, info, err := s.read("list", e.key, filepath.Join(s.root, filepath.FromSlash(e.key)), false)
		if errors.Is(err, ErrNotExist) {
			continue // deleted while listing
		}
		if !yield(info, err) || err != nil {
			return false
		}
	}
	return true
}
