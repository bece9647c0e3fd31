//go:build !unix

package dynamo

// processCPU is not measured on this system: no cpu-ns/op is reported.
func processCPU() int64 { return 0 }
