package commitlog

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"iter"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ddbkit/dynamo/internal/ident"
)

// ObjectInfo describes one object in a Store.
type ObjectInfo struct {
	// Path is the object's path (its key) within the store, with '/' as separator.
	Path string

	// ETag identifies the object's content. It is opaque: compare ETags as strings and do
	// not parse them. Every Store in this package changes an object's ETag whenever its
	// content changes. The stores of this package use the S3 form, a quoted hex string
	// (`"d41d8cd98f00b204e9800998ecf8427e"`); S3 may return other forms (multipart uploads,
	// SSE-KMS), which are kept as S3 returns them.
	ETag string

	// Size is the object's length in bytes, or -1 when the store did not report it (the
	// S3 store's Copy: CopyObject does not return the size; Head the copy for it).
	Size int64

	// LastModified is when the object was last written, as the store reports it (S3 rounds
	// it to the second). It may be the zero time when a store does not report it; it is
	// informational only and never used for ordering or conditions.
	LastModified time.Time

	// WriteID identifies the write that made the object: a random id that the stores of
	// this package give every write (Put, Copy, and the conditional writes) and keep with
	// the object — MemStore in memory, DirStore in an extended attribute of the file
	// (user.commitlog.write-id, on Linux), S3Store in user metadata
	// (x-amz-meta-commitlog-write-id). Writing the same content again gives the same
	// ETag but a new WriteID. It is empty when the store keeps none: another Store, an
	// object written by other means, a filesystem without extended attributes, and the
	// S3 store's List (S3's listing carries no metadata). See WriteIDStore.
	WriteID string
}

// WriteIDStore is a Store that tags each write with an id chosen by the writer, and
// reports the id of the write that made an object as ObjectInfo.WriteID (Head, Get). The
// stores of this package implement it.
//
// A Committer uses it to settle a store write whose answer was lost: when Head shows the
// id it chose, the write landed — even when the content has gone A→B→A since, which an
// ETag cannot tell. Without it (another Store), a Committer can only infer a landed write
// from a change of ETag, and reports ErrUnknownOutcome more often; it never sends a write
// again either way.
type WriteIDStore interface {
	Store

	// PutWithID is Put, tagging the new object with id (non-empty; at most 64 bytes of
	// letters, digits and '-').
	PutWithID(ctx context.Context, path string, data []byte, id string) (ObjectInfo, error)

	// CopyWithID is Copy, tagging the new object at dst with id.
	CopyWithID(ctx context.Context, src, dst string, id string) (ObjectInfo, error)
}

// copyWithID is the CopyWithID of a store whose copy writes with the id
// given: the id is checked first.
func copyWithID(ctx context.Context, src, dst, id string, write func(ctx context.Context, src, dst, id string) (ObjectInfo, error)) (ObjectInfo, error) {
	if err := checkWriteID("copy", id); err != nil {
		return ObjectInfo{}, err
	}
	return write(ctx, src, dst, id)
}

// checkWriteID refuses a write id that a store could not keep as given.
func checkWriteID(op, id string) error {
	if id == "" || len(id) > 64 {
		return invalid("commitlog: %s: write id %q: use 1 to 64 letters, digits or '-'", op, id)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return invalid("commitlog: %s: write id %q: use 1 to 64 letters, digits or '-'", op, id)
		}
	}
	return nil
}

// newWriteID returns a fresh random write id.
func newWriteID() string { return ident.RandomHex(16) }

// Store is an object store whose objects carry ETags: S3 and S3-compatible servers
// (NewS3Store), a local directory (NewDirStore) and memory (NewMemStore).
//
// A Store's own writes (Put, Copy, Delete) are unconditional: the last writer wins, and two
// writers that both check "not there yet" with Head and then Put can both succeed. Conditions
// come from a Committer, which synchronizes writers through DynamoDB, or from a store's native
// conditional writes where it has them (see ConditionalStore). Writers that bypass the
// Committer on the same paths defeat it.
//
// Paths are '/'-separated keys such as "logs/app/00000000000000000001.json". Methods are
// safe for concurrent use. Each ctx bounds the requests (or file operations) of that one
// call; a call interrupted by ctx may or may not have taken effect.
type Store interface {
	// Head returns the object's metadata, or an error wrapping ErrNotExist when there is no
	// object at path.
	Head(ctx context.Context, path string) (ObjectInfo, error)

	// Get returns the object's content and metadata, or an error wrapping ErrNotExist when
	// there is no object at path. The returned slice belongs to the caller.
	Get(ctx context.Context, path string) ([]byte, ObjectInfo, error)

	// Put writes data to path, replacing any object there, and returns the new object's
	// metadata (with its ETag). The store keeps its own copy of data.
	Put(ctx context.Context, path string, data []byte) (ObjectInfo, error)

	// Copy copies the object at src to dst, replacing any object at dst, and returns dst's
	// new metadata. It returns an error wrapping ErrNotExist when src does not exist.
	Copy(ctx context.Context, src, dst string) (ObjectInfo, error)

	// Delete removes the object at path. Deleting an object that does not exist is not an
	// error (it returns nil, like S3), so Delete can be retried safely.
	Delete(ctx context.Context, path string) error

	// List yields every object whose path begins with prefix, in lexical (byte) order of
	// path; an empty prefix lists the whole store. It stops at the first error, which it
	// yields with a zero ObjectInfo. Objects written or deleted while a listing is in
	// progress may or may not appear. ctx bounds the whole iteration.
	List(ctx context.Context, prefix string) iter.Seq2[ObjectInfo, error]
}

// maxKeyLen is S3's limit on the length of an object key, in bytes.
const maxKeyLen = 1024

// checkKey refuses a path no store of this package accepts: empty, longer than 1024 bytes
// (S3's limit), not valid UTF-8, or containing a NUL byte. what names the argument in the
// error ("path", "src", "dst").
func checkKey(op, what, path string) error {
	switch {
	case path == "":
		return invalid("commitlog: %s: empty %s: name the object, e.g. \"logs/app/1.json\"", op, what)
	case len(path) > maxKeyLen:
		return invalid("commitlog: %s: %s of %d bytes: use at most %d bytes (S3's limit)", op, what, len(path), maxKeyLen)
	case !utf8.ValidString(path):
		return invalid("commitlog: %s: %s %q is not valid UTF-8: use UTF-8 keys", op, what, path)
	case strings.IndexByte(path, 0) >= 0:
		return invalid("commitlog: %s: %s %q contains a NUL byte: remove it", op, what, path)
	}
	return nil
}

// md5ETag returns data's ETag in S3's form for a single-part upload: the hex MD5 digest of
// the content in double quotes.
func md5ETag(data []byte) string {
	sum := md5.Sum(data)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}
