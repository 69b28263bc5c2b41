package sandbox

import (
	"bufio"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// setProcAttr makes the kernel kill the child when the parent dies, so a worker that crashes
// leaves no extraction running.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// limitMemory caps the child's address space at what it has mapped now plus mem, and sets
// the Go runtime's soft limit to mem so the collector works hard before the hard limit is
// reached. The address space, not the resident set, is what the kernel can refuse: Go
// reserves address space before it touches it, so the resident set stays below the cap.
func limitMemory(mem int64) error {
	if mem <= 0 {
		return nil
	}
	debug.SetMemoryLimit(mem)
	vm, err := vmSize()
	if err != nil {
		return err
	}
	lim := uint64(vm + mem)
	return syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: lim, Max: lim})
}

// vmSize is the process's mapped address space in bytes (VmSize of /proc/self/status).
func vmSize() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmSize:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, err
			}
			return kb << 10, nil
		}
	}
	return 0, os.ErrNotExist
}
