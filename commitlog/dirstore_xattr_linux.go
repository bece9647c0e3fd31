//go:build linux

package commitlog

import (
	"os"
	"syscall"
	"unsafe"
)

// writeIDAttr is the extended attribute that keeps a DirStore object's write id.
const writeIDAttr = "user.commitlog.write-id"

// setWriteID tags the open file f with the write id id. A filesystem without user
// extended attributes is not an error: the object then has no write id.
func setWriteID(f *os.File, id string) error {
	name, err := syscall.BytePtrFromString(writeIDAttr)
	if err != nil {
		return err
	}
	val := []byte(id)
	_, _, errno := syscall.Syscall6(syscall.SYS_FSETXATTR, f.Fd(), uintptr(unsafe.Pointer(name)),
		uintptr(unsafe.Pointer(&val[0])), uintptr(len(val)), 0, 0)
	switch errno {
	case 0, syscall.ENOTSUP, syscall.EPERM:
		// EPERM: user attributes are not allowed on this file type or filesystem.
		return nil
	}
	return errno
}

// writeID returns the write id of the open file f, "" when it has none.
func writeID(f *os.File) string {
	name, err := syscall.BytePtrFromString(writeIDAttr)
	if err != nil {
		return ""
	}
	var buf [64]byte
	n, _, errno := syscall.Syscall6(syscall.SYS_FGETXATTR, f.Fd(), uintptr(unsafe.Pointer(name)),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
	if errno != 0 {
		return ""
	}
	return string(buf[:n])
}
