package commitlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/ddbkit/dynamo/commitlog/s3test"
)

// The stores under test. Each function returns a new, empty store.
var testStores = []struct {
	name string
	new  func(t *testing.T) Store
}{
	{"mem", func(*testing.T) Store { return NewMemStore() }},
	{"dir", func(t *testing.T) Store {
		s, err := NewDirStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
	{"s3", func(t *testing.T) Store {
		c := s3test.Client(t, s3test.Server(t))
		return NewS3Store(c, s3test.Bucket(t, c))
	}},
}

func TestStores(t *testing.T) {
	for _, ts := range testStores {
		t.Run(ts.name, func(t *testing.T) {
			checkNoLeak(t)
			testStore(t, ts.new)
		})
	}
}

func TestConditionalStores(t *testing.T) {
	for _, ts := range testStores {
		t.Run(ts.name, func(t *testing.T) {
			checkNoLeak(t)
			testConditionalStore(t, ts.new)
		})
	}
}

// list collects a listing, failing the test on an error.
func list(t *testing.T, s Store, prefix string) []string {
	t.Helper()
	var out []string
	for info, err := range s.List(t.Context(), prefix) {
		if err != nil {
			t.Fatalf("List(%q): %v", prefix, err)
		}
		out = append(out, info.Path)
	}
	return out
}

func mustPut(t *testing.T, s Store, path, data string) ObjectInfo {
	t.Helper()
	info, err := s.Put(t.Context(), path, []byte(data))
	if err != nil {
		t.Fatalf("Put(%q): %v", path, err)
	}
	return info
}

func wantNotExist(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, ErrNotExist) {
		t.Errorf("%s: %v, want ErrNotExist", what, err)
	}
}

// testStore checks the Store contract on the stores newStore returns.
func testStore(t *testing.T, newStore func(t *testing.T) Store) {
	t.Run("Missing", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		_, err := s.Head(ctx, "nope")
		wantNotExist(t, "Head", err)
		_, _, err = s.Get(ctx, "no/pe")
		wantNotExist(t, "Get", err)
		_, err = s.Copy(ctx, "nope", "dst")
		wantNotExist(t, "Copy from a missing source", err)
		_, err = s.Head(ctx, "dst")
		wantNotExist(t, "Head of a failed copy's destination", err)
		if err := s.Delete(ctx, "nope"); err != nil {
			t.Errorf("Delete of a missing object: %v, want nil", err)
		}
		if got := list(t, s, ""); len(got) != 0 {
			t.Errorf("List of an empty store: %q", got)
		}
	})

	t.Run("PutHeadGet", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		const path = "logs/app/00000000000000000001.json"
		data := []byte(`{"n":1}`)
		put, err := s.Put(ctx, path, data)
		if err != nil {
			t.Fatal(err)
		}
		want := ObjectInfo{Path: path, ETag: md5ETag(data), Size: int64(len(data))}
		if put.Path != want.Path || put.ETag != want.ETag || put.Size != want.Size {
			t.Errorf("Put = %+v, want %+v", put, want)
		}
		head, err := s.Head(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if head.Path != path || head.ETag != put.ETag || head.Size != want.Size || head.LastModified.IsZero() {
			t.Errorf("Head = %+v, want %+v with a LastModified", head, want)
		}
		got, info, err := s.Get(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) || info.ETag != put.ETag || info.Size != want.Size || info.Path != path {
			t.Errorf("Get = %q %+v, want %q %+v", got, info, data, want)
		}

		// Replacing changes the ETag; the same content gives the same ETag again.
		put2 := mustPut(t, s, path, `{"n":2}`)
		if put2.ETag == put.ETag {
			t.Errorf("ETag %s unchanged after the content changed", put2.ETag)
		}
		if head, _ := s.Head(ctx, path); head.ETag != put2.ETag {
			t.Errorf("Head ETag %s after replace, want %s", head.ETag, put2.ETag)
		}
		if got, _, _ := s.Get(ctx, path); string(got) != `{"n":2}` {
			t.Errorf("Get after replace = %q", got)
		}
		if put3 := mustPut(t, s, path, string(data)); put3.ETag != put.ETag {
			t.Errorf("ETag %s for the first content again, want %s", put3.ETag, put.ETag)
		}
	})

	t.Run("Empty", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		put := mustPut(t, s, "empty", "")
		if put.ETag != `"d41d8cd98f00b204e9800998ecf8427e"` || put.Size != 0 {
			t.Errorf("Put of no data = %+v", put)
		}
		got, info, err := s.Get(ctx, "empty")
		if err != nil || len(got) != 0 || info.ETag != put.ETag {
			t.Errorf("Get = %q %+v %v", got, info, err)
		}
	})

	t.Run("Isolation", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		data := []byte("original")
		if _, err := s.Put(ctx, "k", data); err != nil {
			t.Fatal(err)
		}
		copy(data, "MUTATED!")
		got, _, err := s.Get(ctx, "k")
		if err != nil || string(got) != "original" {
			t.Fatalf("Get after mutating the slice given to Put = %q %v", got, err)
		}
		copy(got, "MUTATED!")
		if _, err := s.Copy(ctx, "k", "k2"); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"k", "k2"} {
			if again, _, _ := s.Get(ctx, p); string(again) != "original" {
				t.Errorf("Get(%q) after mutating a slice Get returned = %q", p, again)
			}
		}
	})

	t.Run("Copy", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		src := mustPut(t, s, "dir with space/src+plus=1 ü.json", "source")
		mustPut(t, s, "dst", "old destination")
		info, err := s.Copy(ctx, src.Path, "dst")
		if err != nil {
			t.Fatal(err)
		}
		if info.Path != "dst" || info.ETag != src.ETag || (info.Size != src.Size && info.Size != -1) {
			t.Errorf("Copy = %+v, want path dst, ETag %s, size %d (or -1)", info, src.ETag, src.Size)
		}
		if got, hi, _ := s.Get(ctx, "dst"); string(got) != "source" || hi.ETag != src.ETag {
			t.Errorf("destination after Copy = %q %+v", got, hi)
		}
		if got, _, _ := s.Get(ctx, src.Path); string(got) != "source" {
			t.Errorf("source after Copy = %q", got)
		}
		// A later write to the source does not change the copy.
		mustPut(t, s, src.Path, "changed")
		if got, _, _ := s.Get(ctx, "dst"); string(got) != "source" {
			t.Errorf("copy after the source changed = %q", got)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		mustPut(t, s, "a/b/c", "x")
		mustPut(t, s, "a/d", "y")
		if err := s.Delete(ctx, "a/b/c"); err != nil {
			t.Fatal(err)
		}
		_, err := s.Head(ctx, "a/b/c")
		wantNotExist(t, "Head after Delete", err)
		_, _, err = s.Get(ctx, "a/b/c")
		wantNotExist(t, "Get after Delete", err)
		if err := s.Delete(ctx, "a/b/c"); err != nil {
			t.Errorf("second Delete: %v", err)
		}
		if got := list(t, s, ""); !slices.Equal(got, []string{"a/d"}) {
			t.Errorf("List after Delete = %q", got)
		}
		// The path can be written again.
		mustPut(t, s, "a/b/c", "again")
		if got, _, _ := s.Get(ctx, "a/b/c"); string(got) != "again" {
			t.Errorf("Get after re-create = %q", got)
		}
	})

	t.Run("List", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		// Names chosen so that per-directory order differs from path order:
		// '-' < '.' < '/' < '0' < 'b'.
		paths := []string{"b", "a/c", "a-b", "a.txt", "a/b/d", "ab", "a/b/c", "a0", "log/00000000000000000010.json", "log/00000000000000000002.json"}
		etags := map[string]string{}
		for i, p := range paths {
			etags[p] = mustPut(t, s, p, "content "+strconv.Itoa(i)).ETag
		}
		sorted := slices.Sorted(slices.Values(paths))
		var all []ObjectInfo
		for info, err := range s.List(ctx, "") {
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, info)
		}
		var got []string
		for _, info := range all {
			got = append(got, info.Path)
			if info.ETag != etags[info.Path] || info.Size != int64(len("content 0")) {
				t.Errorf("List entry %+v, want ETag %s and size %d", info, etags[info.Path], len("content 0"))
			}
		}
		if !slices.Equal(got, sorted) {
			t.Errorf("List(\"\") = %q\nwant %q", got, sorted)
		}
		for prefix, want := range map[string][]string{
			"a":     {"a-b", "a.txt", "a/b/c", "a/b/d", "a/c", "a0", "ab"},
			"a/":    {"a/b/c", "a/b/d", "a/c"},
			"a/b":   {"a/b/c", "a/b/d"},
			"a/b/":  {"a/b/c", "a/b/d"},
			"a/b/c": {"a/b/c"},
			"log/":  {"log/00000000000000000002.json", "log/00000000000000000010.json"},
			"lo":    {"log/00000000000000000002.json", "log/00000000000000000010.json"},
			"c":     nil,
			"a/x":   nil,
		} {
			if got := list(t, s, prefix); !slices.Equal(got, want) {
				t.Errorf("List(%q) = %q, want %q", prefix, got, want)
			}
		}
		// Breaking out of the loop stops the listing.
		n := 0
		for _, err := range s.List(ctx, "") {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == 2 {
				break
			}
		}
	})

	t.Run("BadInput", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		if _, err := s.Put(ctx, "", []byte("x")); err == nil {
			t.Error("Put with an empty path succeeded")
		}
		if _, err := s.Head(ctx, ""); err == nil || errors.Is(err, ErrNotExist) {
			t.Errorf("Head with an empty path: %v, want a bad-input error", err)
		}
		if _, err := s.Copy(ctx, "", "x"); err == nil || errors.Is(err, ErrNotExist) {
			t.Errorf("Copy from an empty path: %v, want a bad-input error", err)
		}
		if _, err := s.Copy(ctx, "x", ""); err == nil || errors.Is(err, ErrNotExist) {
			t.Errorf("Copy to an empty path: %v, want a bad-input error", err)
		}
		if err := s.Delete(ctx, ""); err == nil {
			t.Error("Delete with an empty path succeeded")
		}
		if _, err := s.Put(ctx, "bad\x00nul", nil); err == nil {
			t.Error("Put with a NUL byte succeeded")
		}
	})

	t.Run("Canceled", func(t *testing.T) {
		s := newStore(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := s.Put(ctx, "k", []byte("x")); !errors.Is(err, context.Canceled) {
			t.Errorf("Put with a canceled context: %v", err)
		}
		if _, err := s.Head(t.Context(), "k"); !errors.Is(err, ErrNotExist) {
			t.Errorf("after a canceled Put, Head: %v, want ErrNotExist", err)
		}
		_, err := s.Head(ctx, "k")
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Head with a canceled context: %v", err)
		}
		for _, err := range s.List(ctx, "") {
			if !errors.Is(err, context.Canceled) {
				t.Errorf("List with a canceled context: %v", err)
			}
		}
	})
}

// testConditionalStore checks the ConditionalStore contract.
func testConditionalStore(t *testing.T, newStore func(t *testing.T) Store) {
	cond := func(t *testing.T) ConditionalStore {
		s, ok := newStore(t).(ConditionalStore)
		if !ok {
			t.Fatalf("%T does not implement ConditionalStore", s)
		}
		return s
	}

	t.Run("Preconditions", func(t *testing.T) {
		s, ctx := cond(t), t.Context()
		first, err := s.PutIfNotExists(ctx, "obj", []byte("one"))
		if err != nil {
			t.Fatal(err)
		}
		if first.ETag != md5ETag([]byte("one")) || first.Size != 3 || first.Path != "obj" {
			t.Errorf("PutIfNotExists = %+v", first)
		}
		if _, err := s.PutIfNotExists(ctx, "obj", []byte("two")); !errors.Is(err, ErrExists) {
			t.Errorf("PutIfNotExists on an existing object: %v, want ErrExists", err)
		}
		if _, err := s.PutIfMatch(ctx, "obj", []byte("two"), `"00000000000000000000000000000000"`); !errors.Is(err, ErrPreconditionFailed) {
			t.Errorf("PutIfMatch with a wrong ETag: %v, want ErrPreconditionFailed", err)
		}
		if _, err := s.PutIfMatch(ctx, "missing", []byte("two"), first.ETag); !errors.Is(err, ErrPreconditionFailed) {
			t.Errorf("PutIfMatch on a missing object: %v, want ErrPreconditionFailed", err)
		}
		if _, err := s.Head(ctx, "missing"); !errors.Is(err, ErrNotExist) {
			t.Errorf("a failed PutIfMatch created the object: Head = %v", err)
		}
		if _, err := s.PutIfMatch(ctx, "obj", []byte("two"), ""); err == nil || errors.Is(err, ErrPreconditionFailed) {
			t.Errorf("PutIfMatch with an empty ETag: %v, want a bad-input error", err)
		}
		if got, _, _ := s.Get(ctx, "obj"); string(got) != "one" {
			t.Errorf("failed conditional writes changed the object: %q", got)
		}
		second, err := s.PutIfMatch(ctx, "obj", []byte("two"), first.ETag)
		if err != nil {
			t.Fatal(err)
		}
		if second.ETag != md5ETag([]byte("two")) {
			t.Errorf("PutIfMatch = %+v", second)
		}
		if _, err := s.PutIfMatch(ctx, "obj", []byte("three"), first.ETag); !errors.Is(err, ErrPreconditionFailed) {
			t.Errorf("PutIfMatch with a stale ETag: %v, want ErrPreconditionFailed", err)
		}
		if got, info, _ := s.Get(ctx, "obj"); string(got) != "two" || info.ETag != second.ETag {
			t.Errorf("object = %q %+v, want %q", got, info, "two")
		}
		// After a delete the path can be created again at once.
		if err := s.Delete(ctx, "obj"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutIfNotExists(ctx, "obj", []byte("again")); err != nil {
			t.Errorf("PutIfNotExists after Delete: %v", err)
		}
		if _, err := s.PutIfNotExists(ctx, "", []byte("x")); err == nil || errors.Is(err, ErrExists) {
			t.Errorf("PutIfNotExists with an empty path: %v, want a bad-input error", err)
		}
	})

	t.Run("RaceCreate", func(t *testing.T) {
		s, ctx := cond(t), t.Context()
		const writers = 8
		errs := make([]error, writers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = s.PutIfNotExists(ctx, "race", []byte("writer "+strconv.Itoa(i)))
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Errorf("writers %d and %d both created the object", winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, ErrExists):
				t.Errorf("writer %d: %v, want ErrExists", i, err)
			}
		}
		if winner < 0 {
			t.Fatal("no writer created the object")
		}
		if got, _, _ := s.Get(ctx, "race"); string(got) != "writer "+strconv.Itoa(winner) {
			t.Errorf("object = %q, want the winner's (writer %d)", got, winner)
		}
	})

	t.Run("Counter", func(t *testing.T) {
		// 5 workers × 10 read-increment-PutIfMatch on one object: no update is lost.
		s, ctx := cond(t), t.Context()
		if _, err := s.PutIfNotExists(ctx, "counter", []byte("0")); err != nil {
			t.Fatal(err)
		}
		const workers, increments = 5, 10
		var wg sync.WaitGroup
		errc := make(chan error, workers)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for done := 0; done < increments; {
					data, info, err := s.Get(ctx, "counter")
					if err != nil {
						errc <- err
						return
					}
					n, err := strconv.Atoi(string(data))
					if err != nil {
						errc <- err
						return
					}
					_, err = s.PutIfMatch(ctx, "counter", []byte(strconv.Itoa(n+1)), info.ETag)
					switch {
					case err == nil:
						done++
					case !errors.Is(err, ErrPreconditionFailed):
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
		if got, _, _ := s.Get(ctx, "counter"); string(got) != fmt.Sprint(workers*increments) {
			t.Errorf("counter = %s, want %d", got, workers*increments)
		}
	})
}
