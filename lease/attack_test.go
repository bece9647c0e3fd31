package lease

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/dynamotest"
)

// A worker restarted under its old name joins even when another worker
// marks its old, silent incarnation ended between join's read of the
// worker record and its write: join writes its new incarnation over
// whatever record it finds, so Run goes on and takes the group's keys
// rather than returning the version conflict.
func TestGroupJoinOverRecordEndedMeanwhile(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	other, err := dynamo.NewTable[workerRecord](dynamo.NewMapper(dynamotest.Client(t)), table)
	if err != nil {
		t.Fatal(err)
	}
	tr := &afterAnswer{next: http.DefaultTransport.(*http.Transport).Clone(), target: "DynamoDB_20120810.GetItem"}
	t.Cleanup(tr.next.CloseIdleConnections)
	c := newClientOn(t, dynamo.NewMapper(dynamotest.ClientWith(t, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: tr} })),
		table, WithOwner("w1"), WithClock(clock.NewFake(time.Now())))
	g, err := c.Group("g", []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	// The crashed incarnation's record, not ended.
	old, err := other.Save(t.Context(), workerRecord{Key: g.workerKey("w1"), Owner: "w1", Attempt: "crashed", DurationMS: 20000})
	if err != nil {
		t.Fatal(err)
	}
	tr.hook = func() { // join has read the record: another worker declares it ended
		old.Ended = true
		if _, err := other.Save(context.Background(), old, dynamo.WithSaveBehavior(dynamo.SavePut)); err != nil {
			t.Error(err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	took := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- g.Run(ctx, func(ctx context.Context, l *Lease) error {
			took <- struct{}{}
			<-ctx.Done()
			return nil
		})
	}()
	select {
	case <-took:
	case err := <-done:
		cancel()
		t.Fatalf("Run returned %v before taking its key; want it to join over the record ended meanwhile", err)
	case <-time.After(30 * time.Second): // a failure bound: the lone worker takes its key at its first round
		t.Error("the key was not taken within 30 s")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after leaving: %v", err)
	}
}

// Two Groups of one name on one client would be two workers of one owner,
// writing over each other's worker record: the second Run is refused at
// once, saying why, and the first keeps its membership and its keys.
func TestGroupSecondOfOneNameOnOneClientRefused(t *testing.T) {
	checkNoLeak(t)
	table := leaseTable(t)
	clk := clock.NewFake(time.Now())
	c := newClient(t, table, nil, WithOwner("w1"), WithClock(clk))
	g1, err := c.Group("g", []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	g2, err := c.Group("g", []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	took := make(chan *Lease, 1)
	done := make(chan error, 1)
	go func() {
		done <- g1.Run(ctx, func(ctx context.Context, l *Lease) error {
			took <- l
			<-ctx.Done()
			return nil
		})
	}()
	l := <-took
	second := make(chan error, 1)
	go func() {
		second <- g2.Run(ctx, func(ctx context.Context, l *Lease) error { <-ctx.Done(); return nil })
	}()
	select {
	case err := <-second:
		if err == nil || !strings.Contains(err.Error(), "runs on this client") {
			t.Errorf("second Run of group g on one client: %v; want it refused, saying another runs on this client", err)
		}
	case <-time.After(10 * time.Second): // a failure bound: the refusal is at once
		cancel()
		<-second
		t.Error("the second Run of group g on one client was not refused")
	}
	clk.Advance(gBeat) // a heartbeat of the first: its record is still its own
	clk.Advance(gBeat)
	if l.Err() != nil {
		t.Errorf("the first worker's key after the second Run: %v; want it held", l.Err())
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("first Run after leaving: %v", err)
	}
}
