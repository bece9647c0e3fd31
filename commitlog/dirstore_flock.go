//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package commitlog

import (
	"os"
	"syscall"
)

// oNoFollow makes opening a symbolic link fail (ELOOP).
const oNoFollow = syscall.O_NOFOLLOW

// oNonBlock keeps opening a FIFO placed in the directory from blocking (it is
// then refused as not a regular file); regular files ignore it.
const oNonBlock = syscall.O_NONBLOCK

// lockFile takes an exclusive flock on f, waiting for it. The kernel releases it when f
// is closed or the process dies.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
