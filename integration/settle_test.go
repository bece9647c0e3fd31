package integration

// Attacks on how the mapper settles a write whose answer was lost.

import (
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/dynamotest"
)

// lostRequest is a transport that, once armed, fails the next request of
// one operation with a connection reset WITHOUT forwarding it (the request
// was lost on the way: DynamoDB never applied it), after running a hook.
type lostRequest struct {
	op   string
	next http.RoundTripper
	mu   sync.Mutex
	hook func()
	lost int
}

func (l *lostRequest) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("X-Amz-Target") == "DynamoDB_20120810."+l.op {
		l.mu.Lock()
		hook := l.hook
		l.hook = nil
		if hook != nil {
			l.lost++
		}
		l.mu.Unlock()
		if hook != nil {
			hook()
			return nil, errors.New("write tcp 127.0.0.1: connection reset by peer (request lost by test)")
		}
	}
	return l.next.RoundTrip(r)
}

func lostClient(t *testing.T, op string) (*dynamodb.Client, *lostRequest) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	l := &lostRequest{op: op, next: tr}
	return dynamotest.ClientWith(t, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: l} }), l
}

type claimJob struct {
	ID      string `dynamo:"id,hash"`
	State   string `dynamo:"state"`
	Version int64  `dynamo:"v,version"`
}

// Delete as a claim: two workers delete the same job at v1; exactly one
// delete can be applied. When worker A's request is lost before it reaches
// DynamoDB and B deletes the job meanwhile, A's settling read finds nothing,
// which does not show that A's delete landed: A gets ErrUnknownOutcome (or a
// conflict), never success, so two workers never both own the job.
func TestDeleteSettleDoesNotClaimAnothersDelete(t *testing.T) {
	c := ctx(t)
	cl, lost := lostClient(t, "DeleteItem")
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "claim", "id", types.ScalarAttributeTypeS, "", "")
	a, err := dynamo.NewTable[claimJob](dynamo.NewMapper(cl), name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := dynamo.NewTable[claimJob](dynamo.NewMapper(dynamotest.Client(t)), name)
	if err != nil {
		t.Fatal(err)
	}
	job, err := b.Save(c, claimJob{ID: "j", State: "open"})
	if err != nil {
		t.Fatal(err)
	}
	var errB error
	lost.hook = func() { errB = b.Delete(c, job) }
	errA := a.Delete(c, job)
	if lost.lost != 1 {
		t.Fatalf("lost %d requests, the test needs 1", lost.lost)
	}
	if errB != nil {
		t.Fatalf("B's delete: %v", errB)
	}
	if errA == nil {
		t.Fatal("A's delete, never applied, reported success: both workers were told they deleted (claimed) v1")
	}
}

// Delete with an If that does not hold: A deletes "only if state = done"
// while the job is open; A's request is lost on the way and another client
// deletes the open job. A is never told its conditional delete succeeded:
// its condition never held.
func TestDeleteSettleHonoursIf(t *testing.T) {
	c := ctx(t)
	cl, lost := lostClient(t, "DeleteItem")
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "claimif", "id", types.ScalarAttributeTypeS, "", "")
	a, err := dynamo.NewTable[claimJob](dynamo.NewMapper(cl), name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := dynamo.NewTable[claimJob](dynamo.NewMapper(dynamotest.Client(t)), name)
	if err != nil {
		t.Fatal(err)
	}
	job, err := b.Save(c, claimJob{ID: "j", State: "open"})
	if err != nil {
		t.Fatal(err)
	}
	lost.hook = func() {
		if err := b.Delete(c, job); err != nil {
			t.Error(err)
		}
	}
	errA := a.Delete(c, job, dynamo.If(expression.Name("state").Equal(expression.Value("done"))))
	if lost.lost != 1 {
		t.Fatalf("lost %d requests, the test needs 1", lost.lost)
	}
	if errA == nil {
		t.Fatal("Delete If state = done on an open job reported success: its condition never held and its request never reached DynamoDB")
	}
}

type plainCounter struct {
	ID string `dynamo:"id,hash"`
	N  int    `dynamo:"n"`
}

// An unversioned Save (no If) whose answer was lost after DynamoDB applied
// it, followed by another process's guarded Update that reads the saved
// value and increments it (acknowledged), never loses that increment: Save
// is not resent blindly (Save's doc: "Save never applies a write twice and
// never overwrites a write acknowledged to someone else after its own
// attempt").
func TestUnversionedSaveResendKeepsAcknowledgedUpdate(t *testing.T) {
	c := ctx(t)
	d := dynamotest.NewDropper("UpdateItem")
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "plainsave", "id", types.ScalarAttributeTypeS, "", "")
	mine, err := dynamo.NewTable[plainCounter](dynamo.NewMapper(d.Client(t)), name)
	if err != nil {
		t.Fatal(err)
	}
	other, err := dynamo.NewTable[plainCounter](dynamo.NewMapper(dynamotest.Client(t)), name)
	if err != nil {
		t.Fatal(err)
	}
	d.ArmThen(func() {
		if _, err := other.Update(c, plainCounter{ID: "c"}, func(p plainCounter) (plainCounter, error) {
			if p.N != 10 {
				t.Errorf("the Update read n = %d, want the Save's 10", p.N)
			}
			p.N++
			return p, nil
		}); err != nil {
			t.Error(err)
		}
	})
	_, err = mine.Save(c, plainCounter{ID: "c", N: 10})
	if d.Dropped() != 1 {
		t.Fatalf("dropped %d answers, the test needs 1", d.Dropped())
	}
	got, _ := other.Load(c, plainCounter{ID: "c"}, dynamo.ConsistentRead())
	if got.N != 11 {
		t.Fatalf("Save returned %v; stored n = %d: the acknowledged increment to 11 was overwritten by the Save's resend", err, got.N)
	}
}

// A lost answer on a type without a version, whose write was applied (the
// Dropper forwards it): the error satisfies ErrUnknownOutcome and not
// ErrConditionFailed, whose doc says "a condition given with If failed" —
// code that tests ErrConditionFailed (ExampleIf's switch does) would
// conclude the write was refused.
func TestUnknownOutcomeIsNotConditionFailed(t *testing.T) {
	c := ctx(t)
	d := dynamotest.NewDropper("UpdateItem")
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "plaincf", "id", types.ScalarAttributeTypeS, "", "")
	mine, err := dynamo.NewTable[plainCounter](dynamo.NewMapper(d.Client(t)), name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mine.Save(c, plainCounter{ID: "c", N: 1}); err != nil {
		t.Fatal(err)
	}
	d.Arm(1)
	_, err = mine.Update(c, plainCounter{ID: "c"}, func(p plainCounter) (plainCounter, error) {
		p.N++
		return p, nil
	})
	if d.Dropped() != 1 || !errors.Is(err, dynamo.ErrUnknownOutcome) {
		t.Fatalf("dropped %d; Update = %v; the test needs a lost answer settled as unknown", d.Dropped(), err)
	}
	if errors.Is(err, dynamo.ErrConditionFailed) {
		t.Errorf("Update without If, applied, answer lost: %v; satisfies ErrConditionFailed", err)
	}
	d.Arm(1)
	_, err = mine.Save(c, plainCounter{ID: "c", N: 10}, dynamo.If(expression.AttributeExists(expression.Name("id"))))
	if d.Dropped() != 2 || !errors.Is(err, dynamo.ErrUnknownOutcome) {
		t.Fatalf("dropped %d; Save = %v; the test needs a lost answer settled as unknown", d.Dropped(), err)
	}
	if errors.Is(err, dynamo.ErrConditionFailed) {
		t.Errorf("Save whose If held, applied, answer lost: %v; satisfies ErrConditionFailed", err)
	}
}
