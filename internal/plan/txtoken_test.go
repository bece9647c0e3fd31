package plan

import (
	"bytes"
	"fmt"
	"testing"
)

// A member's write token is the same for the same request token, table and
// key, and differs when any of them does; it is 16 bytes, marked as derived.
func TestTxWriteTokenRepeatsOnlyForTheSameMember(t *testing.T) {
	a := TxWriteToken("req", "T", `{id: "k"}`)
	if len(a) != 16 || a[0] != TxTokenMark || UniqueToken(a) {
		t.Fatalf("TxWriteToken = %x: want 16 bytes starting with the mark %d", a, TxTokenMark)
	}
	if !bytes.Equal(a, TxWriteToken("req", "T", `{id: "k"}`)) {
		t.Error("the same member made another token")
	}
	for _, b := range [][]byte{TxWriteToken("req2", "T", `{id: "k"}`), TxWriteToken("req", "U", `{id: "k"}`), TxWriteToken("req", "T", `{id: "j"}`), TxWriteToken("re", "qT", `{id: "k"}`)} {
		if bytes.Equal(a, b) {
			t.Errorf("another member made the same token %x", b)
		}
	}
}

// A member's write token is the one earlier releases derived for it (the
// root's txWriteToken, computed here apart: SHA-256 of each of the label,
// request token, table and key as len:text, 16 bytes, the first the mark):
// a transaction resent by a newer release within DynamoDB's 10 minutes
// makes the same request, not an IdempotentParameterMismatchException.
func TestTxWriteTokenKeepsItsDerivation(t *testing.T) {
	const want = "007f652d5a37d96991c674f4c2363a3c"
	if got := fmt.Sprintf("%x", TxWriteToken("req", "T", `{id: "k"}`)); got != want {
		t.Errorf("TxWriteToken = %s, want %s", got, want)
	}
}
