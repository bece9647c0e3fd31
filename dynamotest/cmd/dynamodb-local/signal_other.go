//go:build !unix

package main

import "os"

// signalOf returns 0: only Unix kills processes with numbered signals.
func signalOf(*os.ProcessState) int { return 0 }
