package cmi5

import (
	"github.com/lectern-lms/lectern/course/internal/pkgfs"
)

// MaxFileSize caps the cmi5.xml the parser reads (see pkgfs.MaxFileSize).
const MaxFileSize = pkgfs.MaxFileSize
