//go:build !linux

package sandbox

import (
	"os/exec"
	"runtime/debug"
)

func setProcAttr(*exec.Cmd) {}

// limitMemory sets only the Go runtime's soft limit: the address-space limit is set from
// Linux's /proc, and production runs on Linux.
func limitMemory(mem int64) error {
	if mem > 0 {
		debug.SetMemoryLimit(mem)
	}
	return nil
}
