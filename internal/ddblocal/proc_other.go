//go:build !unix

package ddblocal

import (
	"os"
	"syscall"
)

// sysProcAttr returns nil: without process groups or a parent-death signal the
// server outlives a test binary that dies before calling Stop.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// killProcess kills p.
func killProcess(p *os.Process) { _ = p.Kill() }

// listensOn reports that it cannot tell which process listens on a port.
func listensOn(pid, port int) (owns, known bool) { return false, false }
