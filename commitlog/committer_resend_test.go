package commitlog

import (
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ddbkit/dynamo/commitlog/s3test"
	"github.com/ddbkit/dynamo/dynamotest"
)

// A Committer's store write whose answer is lost is not sent again blindly:
// it has landed, so another writer holding the object's new ETag may have
// written since, and a duplicate would overwrite that write. Found by
// TestFaultsCommitlog (integration): the SDK re-sent the PutObject of a
// PutIfMatch after a reset, over an acknowledged PutIfMatch of another
// writer, whose increment was lost.
func TestCommitterDoesNotResendLandedWrite(t *testing.T) {
	checkNoLeak(t)
	endpoint := s3test.Server(t)
	clean := s3test.Client(t, endpoint)
	bucket := s3test.Bucket(t, clean)
	base, closeIdle := s3test.NewClient(endpoint) // only its options are used
	t.Cleanup(closeIdle)
	// Drops answers to PutObject of "counter" (not copies).
	tr := dynamotest.NewRequestDropper(func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/counter") && r.Header.Get("X-Amz-Copy-Source") == ""
	})
	t.Cleanup(tr.CloseIdleConnections)
	lossy := s3.New(base.Options(), func(o *s3.Options) { o.HTTPClient = tr.HTTPClient() })
	table := committerTable(t)
	x := newCommitter(t, table, nil, NewS3Store(lossy, bucket), WithOwner("x"))
	cleanStore := NewS3Store(clean, bucket)
	y := newCommitter(t, table, nil, cleanStore, WithOwner("y"))
	ctx := t.Context()

	v0, err := y.PutIfNotExists(ctx, "counter", []byte("0"))
	if err != nil {
		t.Fatal(err)
	}
	// The answer to x's write is lost, and nobody writes in between: x
	// finds its write landed and succeeds, without sending it again.
	tr.Arm(1)
	v1, err := x.PutIfMatch(ctx, "counter", []byte("0 x"), v0.ETag)
	if err != nil || v1.ETag != md5ETag([]byte("0 x")) {
		t.Fatalf("x: PutIfMatch = %+v, %v; want success with the ETag of its data", v1, err)
	}
	if n := tr.Sent(); n != 1 {
		t.Errorf("x sent %d PutObject requests; want 1", n)
	}
	// The answer is lost, and y writes on top of x's write before x could
	// have sent it again: y's write must stay.
	var yErr error
	tr.ArmThen(func() {
		data, info, err := cleanStore.Get(ctx, "counter")
		if err != nil {
			yErr = err
			return
		}
		_, yErr = y.PutIfMatch(ctx, "counter", append(data, " y"...), info.ETag)
	})
	v2, err := x.PutIfMatch(ctx, "counter", []byte("0 x x"), v1.ETag)
	if yErr != nil {
		t.Fatalf("y: %v", yErr)
	}
	// x's write happened (y wrote on top of it): a success.
	if err != nil || v2.ETag != md5ETag([]byte("0 x x")) {
		t.Errorf("x: PutIfMatch = %+v, %v; want success with the ETag of its data", v2, err)
	}
	if data, _, err := cleanStore.Get(ctx, "counter"); err != nil || string(data) != "0 x x y" {
		t.Errorf("counter = %q, %v; want %q: y's acknowledged write was overwritten", data, err, "0 x x y")
	}
	if n := tr.Sent(); n != 2 {
		t.Errorf("x sent %d PutObject requests in all; want 2", n)
	}
	// The record was marked done: the next write need not wait for it.
	data, info, err := cleanStore.Get(ctx, "counter")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.PutIfMatch(ctx, "counter", append(data, " x"...), info.ETag); err != nil {
		t.Errorf("x's next PutIfMatch: %v", err)
	}
}
