// Package ident makes the random identifiers and default owner names that
// lease and commitlog write into their records.
package ident

import (
	"crypto/rand"
	"encoding/hex"
	"os"
)

// RandomHex returns n random bytes in hex (2n characters).
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails
	return hex.EncodeToString(b)
}

// Owner returns a default owner name: the host name (fallback when it
// cannot be had) and 8 random hex digits, so that two processes on one host
// differ.
func Owner(fallback string) string {
	host, _ := os.Hostname()
	if host == "" {
		host = fallback
	}
	return host + "-" + RandomHex(4)
}
