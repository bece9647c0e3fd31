//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package commitlog

import "os"

// oNoFollow is 0 here: read checks with Lstat instead.
const oNoFollow = 0

// oNonBlock is 0 here.
const oNonBlock = 0

// lockFile does nothing here: only the process-wide mutex excludes conditional writers.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) error { return nil }

// syncDir does nothing here: directories cannot be synced portably.
func syncDir(string) error { return nil }
