package dynamo

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// break2: numbers DynamoDB refuses (NaN, ±Inf, 1e200) in an If condition
// are sent: checkCondValues (checkAVReadOnly) checks strings, names and
// depth but not numbers, while the same values in a Filter or a key
// condition are refused before sending. The server answers 400
// ValidationException (with a silent client, Save even reports "outcome of
// the write unknown"). Want: ErrInvalidInput, nothing sent.
func TestBreak2IfBadNumberRefused(t *testing.T) {
	N, V := expression.Name, expression.Value
	for name, f := range map[string]expression.ConditionBuilder{
		"NaN":         N("body").Equal(V(math.NaN())),
		"+Inf":        N("body").LessThan(V(math.Inf(1))),
		"1e200":       N("body").LessThan(V(1e200)),
		"NaN in list": N("body").Equal(V([]any{math.NaN()})),
	} {
		c := &silentClient{}
		tb, err := NewTable[qsItem](NewMapper(c), "T")
		if err != nil {
			t.Fatal(err)
		}
		_, err = tb.Save(context.Background(), qsItem{P: "a", N: 1}, If(f))
		if !errors.Is(err, ErrInvalidInput) || c.sent.Load() != 0 {
			t.Errorf("Save with If %s: sent %d requests, err = %v; want ErrInvalidInput before sending", name, c.sent.Load(), err)
		}
		err = tb.Delete(context.Background(), qsItem{P: "a", N: 1, Version: 1}, If(f))
		if !errors.Is(err, ErrInvalidInput) {
			t.Errorf("Delete with If %s: err = %v; want ErrInvalidInput before sending", name, err)
		}
	}
}
