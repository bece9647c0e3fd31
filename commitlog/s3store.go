package commitlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// NewS3Store returns a Store over the objects of one bucket of Amazon S3 or an
// S3-compatible server, through client. Paths are object keys. For a local server
// (MinIO, gofakes3 — see package s3test) configure client with path-style addressing
// (s3.Options.UsePathStyle) and the server's endpoint (s3.Options.BaseEndpoint).
//
// The returned store also implements ConditionalStore, with PutObject's If-None-Match: *
// and If-Match headers; many S3-compatible servers ignore them and overwrite silently:
// use a Committer with those. A call is one request (a 409 of racing conditional writes
// is retried, up to 10 requests). Every write tags the object with a write id
// (ObjectInfo.WriteID). A nil client or an empty bucket name makes every call fail with
// an error saying so, before any request.
//
// IAM: s3:GetObject, s3:PutObject, s3:DeleteObject and s3:ListBucket (without it a
// missing key is a 403 error, not ErrNotExist). See docs/commitlog.md, S3 store.
func NewS3Store(client *s3.Client, bucket string) Store {
	return &s3Store{client: client, bucket: bucket}
}

type s3Store struct {
	client     *s3.Client
	bucket     string
	backoffMin time.Duration // 0: conflictBackoffMin; tests shorten it
}

var (
	_ ConditionalStore = (*s3Store)(nil)
	_ WriteIDStore     = (*s3Store)(nil)
)

// writeIDMeta is the user metadata key of the write id (x-amz-meta-commitlog-write-id);
// the SDK reports metadata keys in lower case.
const writeIDMeta = "commitlog-write-id"

// s3NotApplied reports whether err proves that the request was not applied and never
// will be: the server answered with a refusal (4xx, or 503 Slow Down / Service
// Unavailable, which S3 answers before doing anything), or no connection was made.
func s3NotApplied(err error) bool {
	if _, status := s3Code(err); status >= 400 && status < 500 || status == 503 {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// singleAttemptRetryer retries only requests that were surely not applied (throttling,
// 503, a failed dial): a write sent again after an attempt that may have landed could
// overwrite writes made on top of it (see Committer).
var singleAttemptRetryer aws.Retryer = retry.NewStandard(func(o *retry.StandardOptions) {
	o.RateLimiter = ratelimit.None
	o.Retryables = []retry.IsErrorRetryable{retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
		code, status := s3Code(err)
		if !s3NotApplied(err) {
			return aws.FalseTernary
		}
		if status == 503 || status == 429 || code == "SlowDown" || code == "RequestTimeout" || status == 0 {
			return aws.TrueTernary
		}
		return aws.FalseTernary
	})}
})

// check refuses a store that cannot send requests and a bad key.
func (s *s3Store) check(op, what, path string) error {
	if err := s.checkStore(op); err != nil {
		return err
	}
	return checkKey(op, what, path)
}

func (s *s3Store) checkStore(op string) error {
	if s.client == nil {
		return fmt.Errorf("commitlog: %s: S3 store without a client: pass an *s3.Client to NewS3Store", op)
	}
	if s.bucket == "" {
		return fmt.Errorf("commitlog: %s: S3 store without a bucket: pass a bucket name to NewS3Store", op)
	}
	return nil
}

// s3Code returns the API error code of err ("NoSuchKey", "PreconditionFailed", ...) and
// the HTTP status of the response, where there was one.
func s3Code(err error) (code string, status int) {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	return code, status
}

// isNotFound reports whether err says the key does not exist. HEAD responses have no
// body, so for them any 404 counts.
func isNotFound(err error, head bool) bool {
	code, status := s3Code(err)
	switch code {
	case "NoSuchKey", "NotFound":
		return true
	case "NoSuchBucket":
		return false
	}
	return head && status == 404
}

func (s *s3Store) wrap(op, path string, err error) error {
	if code, _ := s3Code(err); code == "NoSuchBucket" {
		return fmt.Errorf("commitlog: %s %q: bucket %q does not exist: create it or fix the name given to NewS3Store: %w", op, path, s.bucket, err)
	}
	return fmt.Errorf("commitlog: %s %q in bucket %q: %w", op, path, s.bucket, err)
}

func (s *s3Store) Head(ctx context.Context, path string) (ObjectInfo, error) {
	if err := s.check("head", "path", path); err != nil {
		return ObjectInfo{}, err
	}
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &path})
	if err != nil {
		if isNotFound(err, true) {
			return ObjectInfo{}, fmt.Errorf("%w: %q in bucket %q", ErrNotExist, path, s.bucket)
		}
		return ObjectInfo{}, s.wrap("head", path, err)
	}
	return ObjectInfo{
		Path:         path,
		ETag:         aws.ToString(out.ETag),
		Size:         aws.ToInt64(out.ContentLength),
		LastModified: aws.ToTime(out.LastModified),
		WriteID:      out.Metadata[writeIDMeta],
	}, nil
}

func (s *s3Store) Get(ctx context.Context, path string) ([]byte, ObjectInfo, error) {
	if err := s.check("get", "path", path); err != nil {
		return nil, ObjectInfo{}, err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &path})
	if err != nil {
		if isNotFound(err, false) {
			return nil, ObjectInfo{}, fmt.Errorf("%w: %q in bucket %q", ErrNotExist, path, s.bucket)
		}
		return nil, ObjectInfo{}, s.wrap("get", path, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, ObjectInfo{}, s.wrap("get", path, fmt.Errorf("reading the body: %w", err))
	}
	return data, ObjectInfo{
		Path:         path,
		ETag:         aws.ToString(out.ETag),
		Size:         int64(len(data)),
		LastModified: aws.ToTime(out.LastModified),
		WriteID:      out.Metadata[writeIDMeta],
	}, nil
}

func (s *s3Store) Put(ctx context.Context, path string, data []byte) (ObjectInfo, error) {
	return s.put(ctx, path, data, newWriteID(), false)
}

// PutWithID is Put tagging the object with id. The SDK sends it again only after
// an attempt that surely was not applied (see singleAttemptRetryer); an error that
// proves the write was not applied says so to the Committer.
func (s *s3Store) PutWithID(ctx context.Context, path string, data []byte, id string) (ObjectInfo, error) {
	if err := checkWriteID("put", id); err != nil {
		return ObjectInfo{}, err
	}
	return s.put(ctx, path, data, id, true)
}

func (s *s3Store) put(ctx context.Context, path string, data []byte, id string, single bool) (ObjectInfo, error) {
	if err := s.check("put", "path", path); err != nil {
		return ObjectInfo{}, err
	}
	single = single || isSingleAttempt(ctx) // a Committer's write through a wrapper
	var optFns []func(*s3.Options)
	if single {
		optFns = append(optFns, func(o *s3.Options) { o.Retryer = singleAttemptRetryer })
	}
	out, err := s.putObject(ctx, path, data, id, nil, nil, optFns...)
	if err != nil {
		err = s.wrap("put", path, err)
		if single && s3NotApplied(err) {
			err = markNotApplied(err)
		}
		return ObjectInfo{}, err
	}
	return ObjectInfo{Path: path, ETag: aws.ToString(out.ETag), Size: int64(len(data)), WriteID: id}, nil
}

func (s *s3Store) putObject(ctx context.Context, path string, data []byte, id string, ifNoneMatch, ifMatch *string, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	return s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        &s.bucket,
		Key:           &path,
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
		IfNoneMatch:   ifNoneMatch,
		IfMatch:       ifMatch,
		Metadata:      map[string]string{writeIDMeta: id},
	}, optFns...)
}

func (s *s3Store) PutIfNotExists(ctx context.Context, path string, data []byte) (ObjectInfo, error) {
	const op = "put if not exists"
	if err := s.check(op, "path", path); err != nil {
		return ObjectInfo{}, err
	}
	out, err := s.conditionalPut(ctx, path, data, aws.String("*"), nil)
	if err != nil {
		if code, status := s3Code(err); code == "PreconditionFailed" || status == 412 {
			return ObjectInfo{}, fmt.Errorf("%w: %q in bucket %q", ErrExists, path, s.bucket)
		}
		return ObjectInfo{}, s.wrap(op, path, err)
	}
	return ObjectInfo{Path: path, ETag: aws.ToString(out.ETag), Size: int64(len(data))}, nil
}

func (s *s3Store) PutIfMatch(ctx context.Context, path string, data []byte, etag string) (ObjectInfo, error) {
	const op = "put if match"
	if err := s.check(op, "path", path); err != nil {
		return ObjectInfo{}, err
	}
	if etag == "" {
		return ObjectInfo{}, fmt.Errorf("commitlog: %s %q: empty ETag: pass the ETag from Head, Get or Put (use PutIfNotExists to create)", op, path)
	}
	out, err := s.conditionalPut(ctx, path, data, nil, &etag)
	if err != nil {
		if code, status := s3Code(err); code == "PreconditionFailed" || status == 412 {
			return ObjectInfo{}, fmt.Errorf("%w: %q in bucket %q: held ETag %s, but the object was replaced or deleted", ErrPreconditionFailed, path, s.bucket, etag)
		}
		return ObjectInfo{}, s.wrap(op, path, err)
	}
	return ObjectInfo{Path: path, ETag: aws.ToString(out.ETag), Size: int64(len(data))}, nil
}

// Backoff for 409 ConditionalRequestConflict: S3 asks the caller to retry.
const (
	conflictBackoffMin = 20 * time.Millisecond
	conflictBackoffMax = 2 * time.Second
	conflictAttempts   = 10
)

// conditionalPut sends a conditional PutObject, retrying 409 ConditionalRequestConflict
// with full-jitter exponential backoff, up to conflictAttempts requests in all and while
// ctx is not done.
func (s *s3Store) conditionalPut(ctx context.Context, path string, data []byte, ifNoneMatch, ifMatch *string) (*s3.PutObjectOutput, error) {
	backoff := s.backoffMin
	if backoff == 0 {
		backoff = conflictBackoffMin
	}
	for attempt := 1; ; attempt++ {
		out, err := s.putObject(ctx, path, data, newWriteID(), ifNoneMatch, ifMatch)
		if code, status := s3Code(err); err == nil || (code != "ConditionalRequestConflict" && status != 409) {
			return out, err
		}
		if attempt == conflictAttempts {
			return nil, fmt.Errorf("%d attempts answered 409 ConditionalRequestConflict (concurrent writes to the key keep conflicting; retry later): %w", attempt, err)
		}
		t := time.NewTimer(rand.N(backoff) + 1)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("retrying after a conflicting concurrent write (409 ConditionalRequestConflict): %w", context.Cause(ctx))
		case <-t.C:
		}
		backoff = min(2*backoff, conflictBackoffMax)
	}
}

// copySource encodes bucket/key for X-Amz-Copy-Source: each segment percent-encoded, and
// '+' as %2B so that no server reads it as a space.
func copySource(bucket, key string) string {
	segs := strings.Split(bucket+"/"+key, "/")
	for i, seg := range segs {
		segs[i] = strings.ReplaceAll(url.PathEscape(seg), "+", "%2B")
	}
	return strings.Join(segs, "/")
}

func (s *s3Store) Copy(ctx context.Context, src, dst string) (ObjectInfo, error) {
	return s.copy(ctx, src, dst, newWriteID(), false)
}

// CopyWithID is Copy tagging dst with id, sent again by the SDK only as PutWithID is.
func (s *s3Store) CopyWithID(ctx context.Context, src, dst, id string) (ObjectInfo, error) {
	if err := checkWriteID("copy", id); err != nil {
		return ObjectInfo{}, err
	}
	return s.copy(ctx, src, dst, id, true)
}

func (s *s3Store) copy(ctx context.Context, src, dst, id string, single bool) (ObjectInfo, error) {
	if err := s.check("copy", "src", src); err != nil {
		return ObjectInfo{}, err
	}
	if err := checkKey("copy", "dst", dst); err != nil {
		return ObjectInfo{}, err
	}
	single = single || isSingleAttempt(ctx)
	var optFns []func(*s3.Options)
	if single {
		optFns = append(optFns, func(o *s3.Options) { o.Retryer = singleAttemptRetryer })
	}
	out, err := s.client.CopyObject(ctx, &s3.CopyObjectInput{
		Bucket:            &s.bucket,
		Key:               &dst,
		CopySource:        aws.String(copySource(s.bucket, src)),
		MetadataDirective: types.MetadataDirectiveReplace,
		Metadata:          map[string]string{writeIDMeta: id},
	}, optFns...)
	if err != nil {
		if isNotFound(err, false) {
			return ObjectInfo{}, fmt.Errorf("%w: copy source %q in bucket %q", ErrNotExist, src, s.bucket)
		}
		err = s.wrap("copy", src+" to "+dst, err)
		if single && s3NotApplied(err) {
			err = markNotApplied(err)
		}
		return ObjectInfo{}, err
	}
	// CopyObject reports no size: -1 says so, and saves a HEAD on every copy.
	info := ObjectInfo{Path: dst, Size: -1, WriteID: id}
	if r := out.CopyObjectResult; r != nil {
		info.ETag = aws.ToString(r.ETag)
		info.LastModified = aws.ToTime(r.LastModified)
	}
	if info.ETag == "" {
		// A server that omits the result: ask.
		return s.Head(ctx, dst)
	}
	return info, nil
}

func (s *s3Store) Delete(ctx context.Context, path string) error {
	if err := s.check("delete", "path", path); err != nil {
		return err
	}
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &path})
	if err != nil && !isNotFound(err, false) {
		return s.wrap("delete", path, err)
	}
	return nil
}

func (s *s3Store) List(ctx context.Context, prefix string) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		if err := s.checkStore("list"); err != nil {
			yield(ObjectInfo{}, err)
			return
		}
		in := &s3.ListObjectsV2Input{Bucket: &s.bucket}
		if prefix != "" {
			in.Prefix = &prefix
		}
		pages := s3.NewListObjectsV2Paginator(s.client, in)
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				yield(ObjectInfo{}, s.wrap("list", prefix, err))
				return
			}
			for _, o := range page.Contents {
				info := ObjectInfo{
					Path:         aws.ToString(o.Key),
					ETag:         aws.ToString(o.ETag),
					Size:         aws.ToInt64(o.Size),
					LastModified: aws.ToTime(o.LastModified),
				}
				if !yield(info, nil) {
					return
				}
			}
		}
	}
}
