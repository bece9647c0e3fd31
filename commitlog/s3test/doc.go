// Package s3test runs an S3 wire-protocol server in the test process, for tests, examples
// and users' own tests of code that uses Amazon S3 through aws-sdk-go-v2.
//
// The server is gofakes3 (github.com/johannesboyne/gofakes3) with its in-memory backend,
// served over real HTTP on 127.0.0.1, so requests go through the SDK's whole stack:
// signing, retries, error decoding. It honours If-None-Match: * and If-Match on single
// PutObject requests (conditional writes), but not on CopyObject or multipart uploads.
// It keeps user metadata (x-amz-meta-*) of PutObject, and of CopyObject with
// MetadataDirective REPLACE, and returns it on HEAD and GET — which the write ids of
// commitlog's S3 store rely on (commitlog's TestStoresKeepWriteIDs checks it).
//
//	func TestX(t *testing.T) {
//		client := s3test.Client(t, s3test.Server(t))
//		bucket := s3test.Bucket(t, client)
//		store := commitlog.NewS3Store(client, bucket)
//		...
//	}
package s3test
