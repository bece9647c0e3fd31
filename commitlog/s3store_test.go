package commitlog

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ddbkit/dynamo/commitlog/s3test"
)

// conflictServer serves s3test's server, but answers the first conflicts conditional
// PutObject requests with 409 ConditionalRequestConflict, calling onConflict for each.
func conflictServer(t *testing.T, conflicts int64, onConflict func(n int64)) (store ConditionalStore, conditionalPuts *atomic.Int64) {
	t.Helper()
	conditionalPuts = new(atomic.Int64)
	inner := s3test.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && (r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Match") != "") {
			if n := conditionalPuts.Add(1); n <= conflicts {
				if onConflict != nil {
					onConflict(n)
				}
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusConflict)
				_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>` +
					`<Error><Code>ConditionalRequestConflict</Code><Message>A conflicting conditional operation is in progress.</Message></Error>`))
				return
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	c := s3test.Client(t, ts.URL)
	st := NewS3Store(c, s3test.Bucket(t, c)).(*s3Store)
	st.backoffMin = time.Millisecond
	return st, conditionalPuts
}

func TestS3StoreConflictRetried(t *testing.T) {
	checkNoLeak(t)
	s, puts := conflictServer(t, 3, nil)
	ctx := t.Context()
	info, err := s.PutIfNotExists(ctx, "k", []byte("v"))
	if err != nil {
		t.Fatalf("PutIfNotExists after three 409s: %v", err)
	}
	if got := puts.Load(); got != 4 {
		t.Errorf("%d conditional PUTs, want 4 (three conflicts, one success)", got)
	}
	if _, err := s.PutIfMatch(ctx, "k", []byte("w"), info.ETag); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.Get(ctx, "k"); string(got) != "w" {
		t.Errorf("content %q", got)
	}
}

func TestS3StoreConflictCanceled(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s, puts := conflictServer(t, 1<<62, func(n int64) {
		if n == 2 {
			cancel()
		}
	})
	_, err := s.PutIfNotExists(ctx, "k", []byte("v"))
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrExists) {
		t.Fatalf("PutIfNotExists with endless 409s until canceled: %v, want context.Canceled", err)
	}
	if n := puts.Load(); n != 2 {
		t.Errorf("%d conditional PUTs, want 2", n)
	}
}

func TestS3StoreConflictBounded(t *testing.T) {
	checkNoLeak(t)
	s, puts := conflictServer(t, 1<<62, nil)
	_, err := s.PutIfMatch(t.Context(), "k", []byte("v"), `"etag"`)
	if err == nil || errors.Is(err, ErrPreconditionFailed) || !strings.Contains(err.Error(), "ConditionalRequestConflict") {
		t.Fatalf("PutIfMatch with endless 409s: %v, want an error naming the conflict", err)
	}
	if n := puts.Load(); n != conflictAttempts {
		t.Errorf("%d conditional PUTs, want %d", n, conflictAttempts)
	}
}

func TestS3StoreMissingBucket(t *testing.T) {
	checkNoLeak(t)
	s := NewS3Store(s3test.Client(t, s3test.Server(t)), "no-such-bucket")
	ctx := t.Context()
	if _, _, err := s.Get(ctx, "k"); err == nil || errors.Is(err, ErrNotExist) || !strings.Contains(err.Error(), "bucket") {
		t.Errorf("Get in a missing bucket: %v, want an error naming the bucket", err)
	}
	if _, err := s.Put(ctx, "k", nil); err == nil || !strings.Contains(err.Error(), "no-such-bucket") {
		t.Errorf("Put in a missing bucket: %v", err)
	}
	for _, err := range s.List(ctx, "") {
		if err == nil || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("List of a missing bucket: %v", err)
		}
	}
}

func TestS3StoreBadConfig(t *testing.T) {
	c := s3test.Client(t, "http://127.0.0.1:1") // never reached
	for _, s := range []Store{NewS3Store(nil, "b"), NewS3Store(c, "")} {
		if _, err := s.Head(t.Context(), "k"); err == nil || !strings.Contains(err.Error(), "NewS3Store") {
			t.Errorf("Head: %v, want an error about NewS3Store", err)
		}
		if _, err := s.(ConditionalStore).PutIfNotExists(t.Context(), "k", nil); err == nil || !strings.Contains(err.Error(), "NewS3Store") {
			t.Errorf("PutIfNotExists: %v, want an error about NewS3Store", err)
		}
		for _, err := range s.List(t.Context(), "") {
			if err == nil || !strings.Contains(err.Error(), "NewS3Store") {
				t.Errorf("List: %v, want an error about NewS3Store", err)
			}
		}
	}
}

func TestCopySource(t *testing.T) {
	for key, want := range map[string]string{
		"a/b.json":        "bkt/a/b.json",
		"sp ace/p+l=s?#%": "bkt/sp%20ace/p%2Bl=s%3F%23%25",
		"ü":               "bkt/%C3%BC",
	} {
		if got := copySource("bkt", key); got != want {
			t.Errorf("copySource(%q) = %q, want %q", key, got, want)
		}
	}
}
