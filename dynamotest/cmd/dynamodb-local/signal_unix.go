//go:build unix

package main

import (
	"os"
	"syscall"
)

// signalOf returns the number of the signal that killed the process, or 0.
func signalOf(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal())
	}
	return 0
}
