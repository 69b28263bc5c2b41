package sandbox

import (
	"bufio"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
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

// watchRSS follows a running child's peak resident set (VmHWM of /proc/PID/status) until it
// exits; the returned func stops watching and gives the last figure read. getrusage is no
// use here: a child's ru_maxrss starts from its parent's resident set at fork.
func watchRSS(pid int) (peak func() int64) {
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	stop := make(chan struct{})
	done := make(chan int64)
	go func() {
		var hwm int64
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if v, err := statusField(path, "VmHWM:"); err == nil {
				hwm = max(hwm, v)
			}
			select {
			case <-stop:
				done <- hwm
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 { close(stop); return <-done }
}

// vmSize is the process's mapped address space in bytes (VmSize of /proc/self/status).
func vmSize() (int64, error) { return statusField("/proc/self/status", "VmSize:") }

// statusField reads one "kB" field of a /proc status file, in bytes.
func statusField(path, field string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, err
			}
			return kb << 10, nil
		}
	}
	return 0, os.ErrNotExist
}
