//go:build !unix

package peers

// processCPU is not measured on this system: no cpu-ns/op is reported.
func processCPU() int64 { return 0 }
