package tincan

import (
	"github.com/lectern-lms/lectern/course/internal/pkgfs"
)

// MaxFileSize caps the tincan.xml the parser reads (see pkgfs.MaxFileSize).
const MaxFileSize = pkgfs.MaxFileSize
