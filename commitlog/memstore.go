package commitlog

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"
)

// NewMemStore returns an empty Store kept in memory, for tests and for single-process use.
//
// The returned store also implements ConditionalStore: its PutIfNotExists and PutIfMatch are
// atomic within the process (a mutex), so it can stand in for S3's conditional writes in
// tests. ETags are S3's form for a single-part upload, the quoted hex MD5 of the content, so
// the same content has the same ETag here and in S3. Data is copied in on writes and out on
// reads: callers can neither change stored objects through the slices they passed nor see
// later writes through the slices they got. Paths must be non-empty, valid UTF-8, at most
// 1024 bytes and free of NUL bytes (as S3 keys); anything else is refused.
//
// Methods return ctx's error, without doing anything, when ctx is already done. List yields
// a snapshot taken when the iteration starts.
func NewMemStore() Store {
	return &memStore{objects: make(map[string]memObject)}
}

type memStore struct {
	mu      sync.Mutex
	objects map[string]memObject
}

type memObject struct {
	data []byte // never modified once stored
	info ObjectInfo
}

var (
	_ ConditionalStore = (*memStore)(nil)
	_ WriteIDStore     = (*memStore)(nil)
)

func (m *memStore) Head(ctx context.Context, path string) (ObjectInfo, error) {
	if err := checkKey("head", "path", path); err != nil {
		return ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, fmt.Errorf("commitlog: head %q: %w", path, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objects[path]
	if !ok {
		return ObjectInfo{}, fmt.Errorf("%w: %q", ErrNotExist, path)
	}
	return o.info, nil
}

func (m *memStore) Get(ctx context.Context, path string) ([]byte, ObjectInfo, error) {
	if err := checkKey("get", "path", path); err != nil {
		return nil, ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, ObjectInfo{}, fmt.Errorf("commitlog: get %q: %w", path, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objects[path]
	if !ok {
		return nil, ObjectInfo{}, fmt.Errorf("%w: %q", ErrNotExist, path)
	}
	return slices.Clone(o.data), o.info, nil
}

func (m *memStore) Put(ctx context.Context, path string, data []byte) (ObjectInfo, error) {
	return m.put(ctx, "put", path, data, newWriteID(), func(memObject, bool) error { return nil })
}

func (m *memStore) PutWithID(ctx context.Context, path string, data []byte, id string) (ObjectInfo, error) {
	if err := checkWriteID("put", id); err != nil {
		return ObjectInfo{}, err
	}
	return m.put(ctx, "put", path, data, id, func(memObject, bool) error { return nil })
}

func (m *memStore) PutIfNotExists(ctx context.Context, path string, data []byte) (ObjectInfo, error) {
	return m.put(ctx, "put if not exists", path, data, newWriteID(), func(cur memObject, ok bool) error {
		if ok {
			return fmt.Errorf("%w: %q (ETag %s)", ErrExists, path, cur.info.ETag)
		}
		return nil
	})
}

func (m *memStore) PutIfMatch(ctx context.Context, path string, data []byte, etag string) (ObjectInfo, error) {
	if etag == "" {
		return ObjectInfo{}, fmt.Errorf("commitlog: put if match %q: empty ETag: pass the ETag from Head, Get or Put (use PutIfNotExists to create)", path)
	}
	return m.put(ctx, "put if match", path, data, newWriteID(), func(cur memObject, ok bool) error {
		if !ok {
			return fmt.Errorf("%w: %q: held ETag %s, but the object does not exist", ErrPreconditionFailed, path, etag)
		}
		if cur.info.ETag != etag {
			return fmt.Errorf("%w: %q: held ETag %s, current %s", ErrPreconditionFailed, path, etag, cur.info.ETag)
		}
		return nil
	})
}

// put stores a copy of data at path, tagged with the write id id, if check, called under
// the lock with the current object, returns nil. Its errors prove that nothing was
// written (markNotApplied).
func (m *memStore) put(ctx context.Context, op, path string, data []byte, id string, check func(memObject, bool) error) (ObjectInfo, error) {
	if err := checkKey(op, "path", path); err != nil {
		return ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, markNotApplied(fmt.Errorf("commitlog: %s %q: %w", op, path, err))
	}
	o := memObject{data: slices.Clone(data)}
	o.info = ObjectInfo{Path: path, ETag: md5ETag(data), Size: int64(len(data)), LastModified: time.Now(), WriteID: id}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.objects[path]
	if err := check(cur, ok); err != nil {
		return ObjectInfo{}, err
	}
	m.objects[path] = o
	return o.info, nil
}

func (m *memStore) Copy(ctx context.Context, src, dst string) (ObjectInfo, error) {
	return m.copy(ctx, src, dst, newWriteID())
}

func (m *memStore) CopyWithID(ctx context.Context, src, dst, id string) (ObjectInfo, error) {
	return copyWithID(ctx, src, dst, id, m.copy)
}

func (m *memStore) copy(ctx context.Context, src, dst, id string) (ObjectInfo, error) {
	if err := checkKey("copy", "src", src); err != nil {
		return ObjectInfo{}, err
	}
	if err := checkKey("copy", "dst", dst); err != nil {
		return ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, markNotApplied(fmt.Errorf("commitlog: copy %q to %q: %w", src, dst, err))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objects[src]
	if !ok {
		return ObjectInfo{}, fmt.Errorf("%w: copy source %q", ErrNotExist, src)
	}
	// o.data is never modified, so the copy may share it.
	o.info.Path = dst
	o.info.LastModified = time.Now()
	o.info.WriteID = id
	m.objects[dst] = o
	return o.info, nil
}

func (m *memStore) Delete(ctx context.Context, path string) error {
	if err := checkKey("delete", "path", path); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commitlog: delete %q: %w", path, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objects, path)
	return nil
}

func (m *memStore) List(ctx context.Context, prefix string) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(ObjectInfo{}, fmt.Errorf("commitlog: list %q: %w", prefix, err))
			return
		}
		m.mu.Lock()
		var infos []ObjectInfo
		for p, o := range m.objects {
			if strings.HasPrefix(p, prefix) {
				infos = append(infos, o.info)
			}
		}
		m.mu.Unlock()
		slices.SortFunc(infos, func(a, b ObjectInfo) int { return strings.Compare(a.Path, b.Path) })
		for _, info := range infos {
			if err := ctx.Err(); err != nil {
				yield(ObjectInfo{}, fmt.Errorf("commitlog: list %q: %w", prefix, err))
				return
			}
			if !yield(info, nil) {
				return
			}
		}
	}
}
