package plan

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ddbkit/dynamo/internal/errs"
)

// TxLimits refuses what DynamoDB would (no members, more than 100, more
// than 4 MB), with the root's messages word for word: when GuardedBy checks
// push a call past 100 members, it names them and how to split the rest.
func TestTxLimitsRefuseWithTheRootsMessages(t *testing.T) {
	for _, tc := range []struct {
		n, size, checks int
		names           []string
		want            string // "" when taken
	}{
		{1, 0, 0, nil, ""},
		{MaxTxItems, MaxTxSize, 0, nil, ""},
		{MaxTxItems, MaxTxSize, MaxTxItems - 1, nil, ""},
		{0, 0, 0, nil, "WriteTx with no members"},
		{MaxTxItems + 1, 0, 0, nil, "WriteTx with 101 members: DynamoDB takes at most 100 in one transaction; split it (each part is atomic on its own)"},
		{MaxTxItems, MaxTxSize + 1, 0, nil, "WriteTx: its 100 members are about 4194305 bytes in all, over DynamoDB's 4 MB limit for a transaction: split it"},
		{1, int(^uint(0) >> 1), 0, nil, "WriteTx: its 1 members are about 9223372036854775807 bytes"},
		{MaxTxItems + 1, 0, 1, nil, "WriteTx with 101 members, over DynamoDB's 100 in one transaction: 100 ops and 1 GuardedBy check (member 101), which count as members: split the work into transactions of at most 99 ops each (each is atomic on its own)"},
		{MaxTxItems + 2, 0, 2, []string{"g1", "g2"}, "WriteTx with 102 members, over DynamoDB's 100 in one transaction: 100 ops and 2 GuardedBy checks (g1, g2, members 101-102), which count as members: split the work into transactions of at most 98 ops each"},
		{MaxTxItems + 1, 0, MaxTxItems, nil, "1 ops and 100 GuardedBy checks (members 2-101), which count as members: pass at most 99 checks"},
		{MaxTxItems + 1, MaxTxSize + 1, 1, nil, "WriteTx with 101 members, over DynamoDB's 100"},
	} {
		err := TxLimits("WriteTx", "ops", tc.n, tc.size, tc.checks, tc.names)
		name := fmt.Sprintf("TxLimits(n %d, size %d, checks %d, %v)", tc.n, tc.size, tc.checks, tc.names)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.want != "" && (!errors.Is(err, errs.ErrInvalidInput) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}
