package plan

import (
	"crypto/sha256"
	"strconv"
)

// TxWriteToken derives the write token of the member on table whose key
// is formatted key (the root's formatKey) from the transaction's request
// token, so that a transaction built again from the same values makes the
// same request. It only needs to be unique per transaction and item. Its
// first byte is TxTokenMark: it repeats on a resend after 10 minutes.
func TxWriteToken(requestToken, table, key string) []byte {
	h := sha256.New()
	for _, s := range [...]string{"ddbkit tx write token", requestToken, table, key} {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	t := h.Sum(nil)[:16]
	t[0] = TxTokenMark
	return t
}
