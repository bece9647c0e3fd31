package dynamo

// Tests of settling lost answers. The fault suite
// (integration/faults_mapper_test.go) found the first: Update applied an
// increment twice when its write was applied, the response was lost, and
// someone else wrote the item before the SDK's retry (the retry then failed
// its condition on the other writer's item, and Update called its function
// again). They run a real *dynamodb.Client — its retryer and middleware —
// over a scripted HTTP transport, without a server.

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

// scriptedTransport answers each UpdateItem (and DeleteItem) with the next
// step of a script, and each GetItem with the next of gets, or get when
// none is left.
type scriptedTransport struct {
	get string // JSON of the item GetItem returns

	mu        sync.Mutex
	steps     []step    // UpdateItem answers, in order
	gets      []getStep // GetItem answers, in order; then get
	updates   int       // UpdateItem requests seen
	lastToken string    // the write token of the last UpdateItem
}

// heldToken is the random write token of the item Update reads (version 5).
var heldToken = base64.StdEncoding.EncodeToString([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})

// A getStep answers one GetItem with the JSON of an item ("null": absent);
// token is the write token of the last UpdateItem.
type getStep func(token string) string

// stored returns a getStep answering the item at version v (n = v) under our
// own token (own), someone else's, the token held (zero bytes), or absent
// (v < 0).
func stored(v int64, own bool) getStep {
	return func(token string) string {
		if v < 0 {
			return "null"
		}
		wt := heldToken
		switch {
		case own:
			wt = token
		case v != 5:
			wt = base64.StdEncoding.EncodeToString([]byte("someone else 16b"))
		}
		return fmt.Sprintf(`{"id":{"S":"k"},"n":{"N":"%d"},"version":{"N":"%d"},"ddbkit_wt":{"B":%q}}`, v, v, wt)
	}
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
		s.mu.Lock()
		item := s.get
		if len(s.gets) > 0 {
			item = s.gets[0](s.lastToken)
			s.gets = s.gets[1:]
		}
		s.mu.Unlock()
		if item == "null" {
			return answer(200, `{}`), nil
		}
		return answer(200, `{"Item":`+item+`}`), nil
	case "DynamoDB_20120810.UpdateItem", "DynamoDB_20120810.DeleteItem":
		var in struct {
			ExpressionAttributeValues map[string]map[string]any // lists too (an idempotency window)
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
		s.lastToken, _ = in.ExpressionAttributeValues[":wt"]["B"].(string)
		s.mu.Unlock()
		return next(s.lastToken)
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

// The item holds version 5 (n 5) under the zero token; the first UpdateItem
// writes version 6. After a lost answer the SDK does not send the write
// again: the mapper reads the item (gets) to settle it.
func TestUpdateNotRepeatedWhenOutcomeUnknown(t *testing.T) {
	held := `{"id":{"S":"k"},"n":{"N":"5"},"version":{"N":"5"},"ddbkit_wt":{"B":"` + heldToken + `"}}`
	tests := []struct {
		name    string
		opts    []Option
		steps   []step
		gets    []getStep // after the read Update starts with
		unknown bool      // Update must fail with ErrUnknownOutcome after one call of fn
		calls   int       // calls of fn
		version int64     // of the saved copy on success
	}{
		{"lost response, then someone else's writes", nil, []step{reset}, []getStep{stored(7, false)}, true, 1, 0},
		{"500 (maybe applied), then someone else's writes", nil, []step{apiError(500, "InternalFailure")}, []getStep{stored(7, false)}, true, 1, 0},
		{"lost response, then the item deleted", nil, []step{reset}, []getStep{stored(-1, false)}, true, 1, 0},
		// Below the version held: the item was deleted and written again
		// from scratch, possibly on top of our write.
		{"lost response, then deleted and written again", nil, []step{reset}, []getStep{stored(2, false)}, true, 1, 0},
		// Version 6 under someone else's token: most likely ours was not
		// applied, but the item may have been deleted and written up to 6
		// again on top of it: not provable.
		{"lost response, someone else wrote the next version", nil, []step{reset}, []getStep{stored(6, false)}, true, 1, 0},
		{"lost response, own write found", nil, []step{reset}, []getStep{stored(6, true)}, false, 1, 6},
		// The very state the write was computed from (version and token):
		// not applied, so it is sent again — once, and fn is not called again.
		{"lost response, not applied: sent again", nil, []step{reset, ok}, []getStep{stored(5, false)}, false, 1, 6},
		{"lost response twice, then applied", nil, []step{reset, reset}, []getStep{stored(5, false), stored(6, true)}, false, 1, 6},
		// A 4xx answer means not applied: the SDK retries; a plain conflict
		// carries the item and fn runs again on it.
		{"throttled, then someone else's writes", nil, []step{apiError(400, "ThrottlingException"), conflict(7, false), ok}, nil, false, 2, 8},
		{"one attempt, a conflict", nil, []step{conflict(7, false), ok}, nil, false, 2, 8},
		// Without write tokens nothing proves a write applied or not.
		{"tokens off: lost response", []Option{WithWriteTokenAttribute("")}, []step{reset}, []getStep{stored(6, false)}, true, 1, 0},
		{"tokens off: lost response, the state read", []Option{WithWriteTokenAttribute("")}, []step{reset}, []getStep{stored(5, false)}, true, 1, 0},
		{"tokens off: throttled, then the next version", []Option{WithWriteTokenAttribute("")}, []step{apiError(400, "ThrottlingException"), conflict(6, false), ok}, nil, false, 2, 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &scriptedTransport{get: held, steps: tc.steps, gets: append([]getStep{func(string) string { return held }}, tc.gets...)}
			calls := 0
			saved, err := scriptedTable(t, s, tc.opts...).Update(context.Background(), regressCounter{ID: "k"}, func(c regressCounter) (regressCounter, error) {
				calls++
				c.N++
				return c, nil
			})
			if calls != tc.calls {
				t.Errorf("fn called %d times, want %d", calls, tc.calls)
			}
			if len(s.steps) != 0 || len(s.gets) != 0 {
				t.Errorf("%d scripted answers and %d reads left over", len(s.steps), len(s.gets))
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
	s := &scriptedTransport{steps: []step{reset}, gets: []getStep{stored(7, false)}}
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
	// Save holds no basis: even the version it held, found again, proves
	// nothing (the item may have been deleted and written again).
	s = &scriptedTransport{steps: []step{reset}, gets: []getStep{stored(5, false)}}
	if _, err = scriptedTable(t, s).Save(context.Background(), regressCounter{ID: "k", N: 6, Version: 5}); !errors.Is(err, ErrUnknownOutcome) || s.updates != 1 {
		t.Errorf("err = %v after %d UpdateItems; want ErrUnknownOutcome after 1", err, s.updates)
	}
	// Its own token found: a success.
	s = &scriptedTransport{steps: []step{reset}, gets: []getStep{stored(6, true)}}
	if saved, err := scriptedTable(t, s).Save(context.Background(), regressCounter{ID: "k", N: 6, Version: 5}); err != nil || saved.Version != 6 {
		t.Errorf("Save = %+v, %v; want version 6", saved, err)
	}
	// The read that settles fails: still ErrUnknownOutcome, saying why.
	s = &scriptedTransport{steps: []step{reset}, gets: []getStep{func(string) string { return "{" }}}
	_, err = scriptedTable(t, s).Save(context.Background(), regressCounter{ID: "k", N: 6, Version: 5})
	if !errors.Is(err, ErrUnknownOutcome) || !strings.Contains(err.Error(), "reading the item to find out failed") {
		t.Errorf("err = %v; want ErrUnknownOutcome saying the read failed", err)
	}
	// A context done before anything was sent: nothing was applied.
	s = &scriptedTransport{}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err = scriptedTable(t, s).Save(done, regressCounter{ID: "k", N: 6, Version: 5}); err == nil || errors.Is(err, ErrUnknownOutcome) || s.updates != 0 {
		t.Errorf("err = %v after %d UpdateItems; want a plain error, nothing sent", err, s.updates)
	}
	// A plain conflict does not claim an unknown outcome.
	s = &scriptedTransport{steps: []step{conflict(7, false)}}
	_, err = scriptedTable(t, s).Save(context.Background(), regressCounter{ID: "k", N: 6, Version: 5})
	if !errors.Is(err, ErrVersionConflict) || errors.Is(err, ErrUnknownOutcome) || strings.Contains(err.Error(), "may have been applied") {
		t.Errorf("err = %v; want a plain conflict", err)
	}
	// A throttled write that the SDK gives up on was never applied: a plain
	// error, no ErrUnknownOutcome.
	s = &scriptedTransport{steps: []step{apiError(400, "ThrottlingException"), apiError(400, "ThrottlingException"), apiError(400, "ThrottlingException")}}
	if _, err = scriptedTable(t, s).Save(context.Background(), regressCounter{ID: "k", N: 6, Version: 5}); err == nil || errors.Is(err, ErrUnknownOutcome) {
		t.Errorf("err = %v; want the SDK's error without ErrUnknownOutcome", err)
	}
}

// A Delete whose attempt got no answer is not sent again: the mapper reads
// the item. Gone or there (the same or created again): unknown, for a
// holder of version 5 (see TestDeleteLostAnswerUnsaved for when gone is a
// success).
func TestDeleteLostAnswer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		steps   []step
		gets    []getStep
		ok      bool
		unknown bool
		deletes int
	}{
		// Gone: perhaps someone else's delete, of an item at another
		// version that ours would have refused.
		{"lost response, item gone", []step{reset}, []getStep{stored(-1, false)}, false, true, 1},
		{"500, item gone", []step{apiError(500, "InternalFailure")}, []getStep{stored(-1, false)}, false, true, 1},
		// Created again by someone else at the version held: never deleted.
		{"lost response, item there", []step{reset}, []getStep{stored(5, false)}, false, true, 1},
		{"lost response, created again", []step{reset}, []getStep{stored(1, false)}, false, true, 1},
		// Throttled: not applied; the SDK retries and finds nothing: someone
		// else deleted it, a plain conflict.
		{"throttled, then gone", []step{apiError(400, "ThrottlingException"), conflict(-1, false)}, nil, false, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &scriptedTransport{steps: tc.steps, gets: tc.gets}
			err := scriptedTable(t, s).Delete(context.Background(), regressCounter{ID: "k", Version: 5})
			switch {
			case tc.ok && err != nil:
				t.Fatalf("Delete = %v, want success", err)
			case tc.unknown && !errors.Is(err, ErrUnknownOutcome):
				t.Fatalf("Delete = %v, want ErrUnknownOutcome", err)
			case !tc.ok && !tc.unknown && (!errors.Is(err, ErrVersionConflict) || errors.Is(err, ErrUnknownOutcome)):
				t.Fatalf("Delete = %v, want a plain version conflict", err)
			}
			if s.updates != tc.deletes || len(s.gets) != 0 {
				t.Errorf("%d DeleteItems sent (want %d), %d reads left", s.updates, tc.deletes, len(s.gets))
			}
		})
	}
}

// Deleting unsaved (or with SaveClobber) holds on an absent item whoever
// deleted it: a lost answer followed by "gone" is a success.
func TestDeleteLostAnswerUnsaved(t *testing.T) {
	s := &scriptedTransport{steps: []step{reset}, gets: []getStep{stored(-1, false)}}
	if err := scriptedTable(t, s).Delete(context.Background(), regressCounter{ID: "k"}); err != nil {
		t.Fatalf("Delete of an unsaved item, gone after a lost answer: %v; want success", err)
	}
	s = &scriptedTransport{steps: []step{reset}, gets: []getStep{stored(-1, false)}}
	if err := scriptedTable(t, s).Delete(context.Background(), regressCounter{ID: "k", Version: 5}, WithSaveBehavior(SaveClobber)); err != nil {
		t.Fatalf("SaveClobber Delete, gone after a lost answer: %v; want success", err)
	}
}
