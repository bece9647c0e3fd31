package dynamo

import (
	"testing"

	"github.com/ddbkit/dynamo/internal/plan"
)

// TestNewTokenIsUniqueAndUnmarked pins the write tokens' two properties:
// every fresh token differs from the others (16 random bytes), and none
// starts with txTokenMark, so uniqueToken holds for each of them and fails
// for a token derived from a transaction's request token (and for none).
// 5000 draws meet a first byte of 0 with near certainty, so dropping the
// mark check fails this test.
func TestNewTokenIsUniqueAndUnmarked(t *testing.T) {
	seen := map[string]bool{}
	for range 5000 {
		b := newToken()
		if len(b) != 16 || b[0] == plan.TxTokenMark || !plan.UniqueToken(b) || seen[string(b)] {
			t.Fatalf("newToken() = %x: want 16 fresh bytes not starting with the mark %d", b, plan.TxTokenMark)
		}
		seen[string(b)] = true
	}
	if plan.UniqueToken([]byte{plan.TxTokenMark, 1, 2}) || plan.UniqueToken(nil) {
		t.Error("uniqueToken holds for a marked or empty token")
	}
}
