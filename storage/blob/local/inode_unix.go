//go:build unix

package local

import (
	"io/fs"
	"syscall"
)

// inode returns the file's inode number, which tells a rewritten file from the old one.
func inode(fi fs.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Ino), true //nolint:unconvert // Ino is not uint64 on every Unix.
}
