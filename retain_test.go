package dynamo

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A combined Update writes what each function returned when it returned:
// a caller that left Update (its ctx ended while its change was being
// written with others') and then changes the slice it returned from its
// function changes neither the stored item nor what the batch remembers.
func TestCombinedUpdateWritesWhatTheFunctionReturned(t *testing.T) {
	db := (&fakeDB{}).table("Books", "ISBN", "")
	books := newBooks(t, db)
	holding, release := db.hold("UpdateItem", 1)
	first := startUpdate(books, appendTitle("0"))
	<-holding // the first write is in flight: A and C queue behind it

	shared := []string{"orig"}
	actx, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	aDone := make(chan error, 1)
	go func() {
		_, err := books.Update(actx, Book{ISBN: "1"}, func(b Book) (Book, error) {
			b.Authors = shared
			return b, nil
		})
		aDone <- err
	}()
	waitQueued(books, kid("1"), 2)
	cStarted, cGo := make(chan struct{}), make(chan struct{})
	var once bool
	cDone := startUpdate(books, func(b Book) (Book, error) {
		if !once {
			once = true
			close(cStarted)
			<-cGo
		}
		return b, errors.New("no change from C")
	})
	waitQueued(books, kid("1"), 3)
	close(release)
	if r := hangGuard(t, first, "the first Update"); r.err != nil {
		t.Fatal(r.err)
	}
	<-cStarted // A's function has returned: its change is in the batch
	cancelA()
	if err := hangGuard(t, aDone, "A's Update"); !errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("A: %v; want ErrUnknownOutcome (setup: its change is in a write)", err)
	}
	shared[0] = "changed after Update returned" // A's own slice, A having left
	close(cGo)
	if r := hangGuard(t, cDone, "C's Update"); r.err == nil {
		t.Fatalf("C: %+v, want its error", r.b)
	}
	stored := db.item("Books", map[string]types.AttributeValue{"ISBN": str("1")})
	ss, _ := stored["authors"].(*types.AttributeValueMemberSS)
	if ss == nil {
		t.Fatalf("stored %v: setup: A's change was not written", stored)
	}
	if !slices.Equal(ss.Value, []string{"orig"}) {
		t.Errorf("stored authors %v, want [orig]: the write carried a change made after Update returned, which no function returned", ss.Value)
	}
}
