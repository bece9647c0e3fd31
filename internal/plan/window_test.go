package plan

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A full window drops its oldest key when a new one is recorded, and the
// write's condition expects the window as stored (or none).
func TestWindowWriteKeepsTheNewestKeys(t *testing.T) {
	var keys []string
	for i := range WindowSize {
		keys = append(keys, fmt.Sprint("k", i))
	}
	w := NewWindowWrite(nil, keys, "new")
	l := w.Next.(*types.AttributeValueMemberL).Value
	if len(l) != WindowSize {
		t.Fatalf("window holds %d keys, want %d", len(l), WindowSize)
	}
	if first, last := l[0].(*types.AttributeValueMemberS).Value, l[len(l)-1].(*types.AttributeValueMemberS).Value; first != "k1" || last != "new" {
		t.Errorf("window runs %s..%s, want k1..new", first, last)
	}
	if keys[0] != "k0" || len(keys) != WindowSize {
		t.Errorf("the caller's keys changed: %v", keys[:1])
	}
	if c := w.Cond(); c != "attribute_not_exists(#ik)" {
		t.Errorf("Cond with no window stored = %q", c)
	}
	if c := (&WindowWrite{Old: w.Next, Next: w.Next}).Cond(); c != "#ik = :iko" {
		t.Errorf("Cond with a window stored = %q", c)
	}
	if c := (&WindowWrite{Next: w.Next, Pinned: true}).Cond(); c != "" {
		t.Errorf("Cond of a pinned window = %q, want none", c)
	}
}
