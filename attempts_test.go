package dynamo

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"testing"
)

// httpStatusErr is an error carrying an HTTP status, as the SDK's response
// errors do.
type httpStatusErr int

func (e httpStatusErr) Error() string       { return "status " + strconv.Itoa(int(e)) }
func (e httpStatusErr) HTTPStatusCode() int { return int(e) }

// TestMayHaveAppliedUnlessRefused pins which failed attempts count as
// possibly applied: all of them, except one DynamoDB answered with a 4xx
// status (it refused the request) and one whose connection was never
// opened (dial). A 5xx answer, a status of 0 (no answer), a connection
// lost after it was opened and an unknown error may all have been applied.
func TestMayHaveAppliedUnlessRefused(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{httpStatusErr(400), false},
		{httpStatusErr(499), false},
		{fmt.Errorf("wrapped: %w", httpStatusErr(404)), false},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, false},
		{fmt.Errorf("send: %w", &net.OpError{Op: "dial", Err: errors.New("no route")}), false},
		{httpStatusErr(500), true},
		{httpStatusErr(503), true},
		{httpStatusErr(0), true},
		{&net.OpError{Op: "read", Err: errors.New("connection reset by peer")}, true},
		{errors.New("no answer"), true},
	} {
		if got := mayHaveApplied(tc.err); got != tc.want {
			t.Errorf("mayHaveApplied(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
