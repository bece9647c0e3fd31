package dynamo

// Regression tests for what the fault suite (integration/faults_mapper_test.go)
// found: Update applied an increment twice when its write was applied, the
// response was lost, and someone else wrote the item before the SDK's retry
// (the retry then failed its condition on the other writer's item, and Update
// called its function again). They run a real *dynamodb.Client — its retryer
// and middleware — over a scripted HTTP transport, without a server.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

type regressCounter struct {
	ID      string `dynamo:"id,hash"`
	N       int64  `dynamo:"n"`
	Version int64  `dynamo:"version,version"`
}

// scriptedTransport answers each UpdateItem with the next step of a
// script, and each GetItem with get.
type scriptedTransport struct {
	get string // JSON of the item GetItem returns

	mu      sync.Mutex
	steps   []step // UpdateItem answers, in order
	updates int    // UpdateItem requests seen
}

// A step answers one UpdateItem request. token is the write token the
// request carries.
type step func(token string) (*http.Response, error)

var errReset = errors.New("read tcp 127.0.0.1: connection reset by peer (scripted)")

func reset(string) (*http.Response, error) { return nil, errReset }

func answer(status int, body string) *http.Response {
	return &http.Response{
		StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
	}
}

func apiError(status int, code string) step {
	return func(string) (*http.Response, error) {
		return answer(status, fmt.Sprintf(`{"__type":"com.amazonaws.dynamodb.v20120810#%s","message":"scripted"}`, code)), nil
	}
}

func ok(string) (*http.Response, error) { return answer(200, `{}`), nil }

// conflict answers ConditionalCheckFailed with the item at version v (n = v)
// carrying someone else's token, our own token (own), or no item at all
// (v < 0).
func conflict(v int64, own bool) step {
	return func(token string) (*http.Response, error) {
		item := "null"
		if v >= 0 {
			wt := base64.StdEncoding.EncodeToString(make([]byte, 16))
			if own {
				wt = token
			}
			item = fmt.Sprintf(`{"id":{"S":"k"},"n":{"N":"%d"},"version":{"N":"%d"},"ddbkit_wt":{"B":%q}}`, v, v, wt)
		}
		return answer(400, fmt.Sprintf(`{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed","Item":%s}`, item)), nil
	}
}

func (s *scriptedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	switch target := r.Header.Get("X-Amz-Target"); target {
	case "DynamoDB_20120810.GetItem":
		return answer(200, `{"Item":`+s.get+`}`), nil
	case "DynamoDB_20120810.UpdateItem", "DynamoDB_20120810.DeleteItem":
		var in struct {
			ExpressionAttributeValues map[string]map[string]string
		}
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.updates++
		if len(s.steps) == 0 {
			s.mu.Unlock()
			return nil, fmt.Errorf("scripted transport: unexpected UpdateItem %d", s.updates)
		}
		next := s.steps[0]
		s.steps = s.steps[1:]
		s.mu.Unlock()
		return next(in.ExpressionAttributeValues[":wt"]["B"])
	default:
		return nil, fmt.Errorf("scripted transport: unexpected %s", target)
	}
}

// scriptedTable returns a table over a real client whose requests s answers.
// The SDK retries at once (3 attempts, its default).
func scriptedTable(t *testing.T, s *scriptedTransport, opts ...Option) *Table[regressCounter] {
	t.Helper()
	c := dynamodb.New(dynamodb.Options{
		Region:                          "us-east-1",
		BaseEndpoint:                    aws.String("http://dynamodb.invalid"),
		Credentials:                     credentials.NewStaticCredentialsProvider("test", "test", ""),
		HTTPClient:                      &http.Client{Transport: s},
		DisableValidateResponseChecksum: true,
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		}),
	})
	tb, err := NewTable[regressCounter](NewMapper(c, opts...), "Counters")
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestUpdateNotRepeatedWhenOutcomeUnknown(t *testing.T) {
	// The item holds version 5 (n 5); the first UpdateItem writes version 6.
	const stored = `{"id":{"S":"k"},"n":{"N":"5"},"version":{"N":"5"}}`
	tests := []struct {
		name    string
		opts    []Option
		steps   []step
		unknown bool  // Update must fail with ErrUnknownOutcome after one call of fn
		calls   int   // calls of fn
		version int64 // of the saved copy on success
	}{
		{"lost response, then someone else's writes", nil, []step{reset, conflict(7, false)}, true, 1, 0},
		{"500 (maybe applied), then someone else's writes", nil, []step{apiError(500, "InternalFailure"), conflict(7, false)}, true, 1, 0},
		{"lost response, then the item deleted", nil, []step{reset, conflict(-1, false)}, true, 1, 0},
		// Below the version held: the item was deleted and written again
		// from scratch, possibly on top of our write.
		{"lost response, then deleted and written again", nil, []step{reset, conflict(2, false)}, true, 1, 0},
		{"lost response, own write found", nil, []step{reset, conflict(6, true)}, false, 1, 6},
		// Version 6 under someone else's token: only one write ever writes
		// version 6, so ours was not applied: a plain conflict, retried.
		{"lost response, someone else wrote the next version", nil, []step{reset, conflict(6, false), ok}, false, 2, 7},
		// A 4xx answer means not applied: a plain conflict, retried.
		{"throttled, then someone else's writes", nil, []step{apiError(400, "ThrottlingException"), conflict(7, false), ok}, false, 2, 8},
		{"one attempt, a conflict", nil, []step{conflict(7, false), ok}, false, 2, 8},
		// Without write tokens, the next version may be our own write.
		{"tokens off: lost response, then the next version", []Option{WithWriteTokenAttribute("")}, []step{reset, conflict(6, false)}, true, 1, 0},
		{"tokens off: throttled, then the next version", []Option{WithWriteTokenAttribute("")}, []step{apiError(400, "ThrottlingException"), conflict(6, false), ok}, false, 2, 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &scriptedTransport{get: stored, steps: tc.steps}
			calls := 0
			saved, err := scriptedTable(t, s, tc.opts...).Update(context.Background(), regressCounter{ID: "k"}, func(c regressCounter) (regressCounter, error) {
				calls++
				c.N++
				return c, nil
			})
			if calls != tc.calls {
				t.Errorf("fn called %d times, want %d", calls, tc.calls)
			}
			if len(s.steps) != 0 {
				t.Errorf("%d scripted answers left over", len(s.steps))
			}
			if tc.unknown {
				if !errors.Is(err, ErrUnknownOutcome) || !errors.Is(err, ErrVersionConflict) {
					t.Fatalf("err = %v; want ErrUnknownOutcome and ErrVersionConflict", err)
				}
				for _, part := range []string{`table "Counters"`, "may have been applied", "without calling the function again"} {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("error %q does not say %q", err, part)
					}
				}
				return
			}
			if err != nil || saved.Version != tc.version || saved.N != tc.version {
				t.Fatalf("Update = %+v, %v; want version and n %d", saved, err, tc.version)
			}
		})
	}
}

func TestSaveOutcomeUnknown(t *testing.T) {
	s := &scriptedTransport{steps: []step{reset, conflict(7, false)}}
	tb := scriptedTable(t, s)
	_, err := tb.Save(context.Background(), regressCounter{ID: "k", N: 6, Version: 5})
	var ce *ConditionError
	if !errors.As(err, &ce) || !errors.Is(err, ErrUnknownOutcome) || !errors.Is(err, ErrVersionConflict) || ce.FoundVersion != 7 {
		t.Fatalf("err = %v; want a *ConditionError with ErrUnknownOutcome and ErrVersionConflict, found version 7", err)
	}
	if !strings.Contains(err.Error(), "may have been applied") {
		t.Errorf("error %q does not say the write may have been applied", err)
	}
	if cur, err := tb.Current(err); err != nil || cur.Version != 7 {
		t.Errorf("Current = %+v, %v; want version 7", cur, err)
	}
	// A plain conflict does not claim an unknown outcome.
	s = &scriptedTransport{steps: []step{conflict(7, false)}}
	_, err = scriptedTable(t, s).Save(context.Background(), regressCounter{ID: "k", N: 6, Version: 5})
	if !errors.Is(err, ErrVersionConflict) || errors.Is(err, ErrUnknownOutcome) || strings.Contains(err.Error(), "may have been applied") {
		t.Errorf("err = %v; want a plain conflict", err)
	}
}

// A Delete whose retry finds no item succeeded only if an earlier attempt
// may have been applied; after a throttled first attempt the item was
// deleted by someone else.
func TestDeleteRetryFindsNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first step
		ok    bool
	}{
		{"lost response", reset, true},
		{"500", apiError(500, "InternalFailure"), true},
		{"throttled", apiError(400, "ThrottlingException"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &scriptedTransport{steps: []step{tc.first, conflict(-1, false)}}
			err := scriptedTable(t, s).Delete(context.Background(), regressCounter{ID: "k", Version: 5})
			if tc.ok && err != nil {
				t.Fatalf("Delete = %v, want success (our delete may have been applied)", err)
			}
			if !tc.ok && !errors.Is(err, ErrVersionConflict) {
				t.Fatalf("Delete = %v, want a version conflict (the item is gone, not by us)", err)
			}
		})
	}
}
