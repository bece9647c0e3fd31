//go:build unix

package dynamo

import "syscall"

// processCPU returns the CPU time (user + system) this process has used, in
// nanoseconds: every thread's, the garbage collector's included (as
// benchmarks/peers measures it).
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
