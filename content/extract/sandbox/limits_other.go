//go:build !linux

package sandbox

import (
	"os/exec"
	"runtime/debug"
)

func setProcAttr(*exec.Cmd) {}

func watchRSS(int) func() int64 { return func() int64 { return 0 } }

// limitMemory sets only the Go runtime's soft limit: the address-space limit is set from
// Linux's /proc, and production runs on Linux.
func limitMemory(mem int64) error {
	if mem > 0 {
		debug.SetMemoryLimit(mem)
	}
	return nil
}
