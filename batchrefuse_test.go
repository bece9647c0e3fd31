package dynamo

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// A batch write given several options it cannot honour is refused, before
// any request, with an error naming each of them, so that one fix is enough.
func TestBatchWriteNamesEveryOptionItRefuses(t *testing.T) {
	db := &fakeDB{noStore: true}
	books := newBooks(t, db)
	refused := []string{"If", "MustExist", "WithSaveBehavior(SavePut)"}
	opts := []BatchWriteOption{WithSaveBehavior(SaveClobber), If(expression.Name("title").AttributeExists()), MustExist(), WithSaveBehavior(SavePut)}
	for _, op := range []string{"BatchSave", "BatchDelete"} {
		var err error
		if op == "BatchSave" {
			err = books.BatchSave(context.Background(), []Book{{ISBN: "1"}}, opts...)
		} else {
			err = books.BatchDelete(context.Background(), []Book{{ISBN: "1"}}, opts...)
		}
		if !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("%s: %v, want ErrInvalidInput", op, err)
		}
		for _, name := range refused {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("%s: %v: does not name %s", op, err, name)
			}
		}
	}
	if n := db.count(""); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}
