package dynamotest

import (
	"strings"
	"testing"
)

func TestTableNameFromTestName(t *testing.T) {
	if got, want := tableName("TestX/sub case#1.ok-_"), "TestX_sub_case_1.ok-_"; got != want {
		t.Errorf("tableName = %q, want %q", got, want)
	}
	long := strings.Repeat("a", 300)
	if n := uniqueName(long); len(n) > 255 || !strings.HasPrefix(n, long[:maxPrefixLen]+"-") {
		t.Errorf("uniqueName of a 300-character prefix = %q (%d characters)", n, len(n))
	}
}
