package main

import "syscall"

// commandProcAttr has the kernel send the command SIGTERM when the thread
// that started it, and so this process, dies.
func commandProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
