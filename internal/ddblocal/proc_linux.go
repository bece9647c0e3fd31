package ddblocal

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// sysProcAttr puts DynamoDB Local in its own process group (so a terminal's ^C
// reaches only the test binary) and has the kernel kill it when the thread that
// started it, and so the test binary, dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killProcess kills p's process group.
func killProcess(p *os.Process) {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil {
		_ = p.Kill()
	}
}

// listensOn reports whether process pid has a socket listening on TCP port
// port. known is false when /proc cannot tell.
func listensOn(pid, port int) (owns, known bool) {
	fdDir := "/proc/" + strconv.Itoa(pid) + "/fd"
	entries, err := os.ReadDir(fdDir)
	if err != nil {
		return false, false
	}
	inodes := make(map[string]bool)
	for _, e := range entries {
		link, err := os.Readlink(fdDir + "/" + e.Name())
		if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/net/" + table)
		if err != nil {
			continue
		}
		// Lines after the header: "sl local_address rem_address st ... inode ...",
		// with local_address as HEXIP:HEXPORT and st 0A for LISTEN.
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" {
				continue
			}
			_, hexPort, ok := strings.Cut(f[1], ":")
			p, err := strconv.ParseUint(hexPort, 16, 16)
			if ok && err == nil && int(p) == port && inodes[f[9]] {
				return true, true
			}
		}
	}
	return false, true
}
