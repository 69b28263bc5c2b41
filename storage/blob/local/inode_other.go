//go:build !unix

package local

import "io/fs"

// inode reports that no inode number is available on this platform; the ETag then rests on
// modification time and size alone.
func inode(fs.FileInfo) (uint64, bool) { return 0, false }
