//go:build !linux

package main

import "syscall"

// commandProcAttr returns nil: only Linux has a parent-death signal.
func commandProcAttr() *syscall.SysProcAttr { return nil }
