//go:build !unix

package backfill

// processCPU returns 0 where getrusage is missing: the CPU metric of
// BenchmarkItemCPU then reads 0.
func processCPU() int64 { return 0 }
