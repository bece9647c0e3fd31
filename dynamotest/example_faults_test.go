package dynamotest_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// What Faults does on the wire, against a stand-in server: with every
// request eligible for a lost answer and a budget of two faults, the first
// two requests reach the server but their answers are replaced by resets;
// the rest pass. In a test, give your clients f.Client(t) (DynamoDB) or
// f.HTTPClient() (S3 and others), run the workload, and check the data
// through a client without faults.
func ExampleNewFaults() {
	var applied atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		applied.Add(1)
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()

	f := dynamotest.NewFaults(dynamotest.FaultConfig{Seed: 1, Drop: 1, MaxFaults: 2}, nil)
	defer f.CloseIdleConnections()
	hc := f.HTTPClient()
	for i := 1; i <= 3; i++ {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{}`))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810.UpdateItem")
		resp, err := hc.Do(req)
		if err != nil {
			fmt.Println(i, "connection reset:", strings.Contains(err.Error(), "connection reset"))
			continue
		}
		resp.Body.Close()
		fmt.Println(i, resp.Status)
	}
	fmt.Println("applied by the server:", applied.Load())
	fmt.Println(f.Stats())
	// Output:
	// 1 connection reset: true
	// 2 connection reset: true
	// 3 200 OK
	// applied by the server: 3
	// 3 requests, 2 faults: 0 delayed, 2 responses dropped after the write applied, 0 server errors (0 after the write applied), 0 throttled, 0 connections reset before sending
}

// ArmThen acts at the moment between a lost answer and the SDK's retry:
// here another writer saves the item before the retry is sent, and the
// mapper, unable to tell whether its write took effect, says so.
func ExampleDropper_ArmThen() {
	testLostThenOverwritten := func(t *testing.T) {
		d := dynamotest.NewDropper("UpdateItem")
		c := d.Client(t)
		name := dynamotest.KeyTable(t, c, "", "id", types.ScalarAttributeTypeS, "", "")
		users, _ := dynamo.NewTable[User](dynamo.NewMapper(c), name)
		other, _ := dynamo.NewTable[User](dynamo.NewMapper(dynamotest.Client(t)), name)

		d.ArmThen(func() {
			// Our save has been applied (version 1); another writer
			// updates the item before the SDK resends ours.
			if _, err := other.Update(t.Context(), User{ID: "u1"}, func(u User) (User, error) {
				u.Name = "Grace"
				return u, nil
			}); err != nil {
				t.Error(err)
			}
		})
		_, err := users.Save(t.Context(), User{ID: "u1", Name: "Ada"})
		if !errors.Is(err, dynamo.ErrUnknownOutcome) {
			t.Fatalf("got %v, want ErrUnknownOutcome", err)
		}
	}
	_ = testLostThenOverwritten
}
