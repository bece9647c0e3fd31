package dynamo

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// A nil option in a variadic list is no option, as it is for Update, the
// batches, transactions and CreateTable; it must not panic.
func TestBreakNilOptionsDoNotPanic(t *testing.T) {
	c := &stubClient{}
	c.onGet = func(*dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) { return &dynamodb.GetItemOutput{}, nil }
	for name, f := range map[string]func(){
		"Load(nil)": func() {
			_, _ = newBooks(t, c).Load(context.Background(), Book{ISBN: "1"}, nil)
		},
		"ScanPage(nil) refused before sending": func() {
			_, _, _ = newBooks(t, &stubClient{}).ScanPage(context.Background(), nil, Limit(-1))
		},
		"WithEncoderOptions(nil)": func() { newBooks(t, c, WithEncoderOptions(nil)) },
		"WithDecoderOptions(nil)": func() { newBooks(t, c, WithDecoderOptions(nil)) },
	} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s panicked: %v", name, p)
				}
			}()
			f()
		}()
	}
}
