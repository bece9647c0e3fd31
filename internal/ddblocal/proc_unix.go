//go:build unix && !linux

package ddblocal

import (
	"os"
	"syscall"
)

// sysProcAttr puts DynamoDB Local in its own process group. Only Linux has a
// parent-death signal: elsewhere the server outlives a test binary that dies
// before calling Stop.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// killProcess kills p's process group.
func killProcess(p *os.Process) {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil {
		_ = p.Kill()
	}
}

// listensOn reports that it cannot tell which process listens on a port.
func listensOn(pid, port int) (owns, known bool) { return false, false }
