//go:build !linux

package commitlog

import "os"

// setWriteID does nothing: write ids are kept on Linux only.
func setWriteID(*os.File, string) error { return nil }

// writeID returns "": write ids are kept on Linux only.
func writeID(*os.File) string { return "" }
