package cmi5

import (
	"io/fs"

	"github.com/lectern-lms/lectern/course/internal/pkgfs"
)

// MaxFileSize caps the cmi5.xml the parser reads (see pkgfs.MaxFileSize).
const MaxFileSize = pkgfs.MaxFileSize

// The file helpers are shared with the other parsers; the short names keep the parser readable.
var (
	junkWarnings  = pkgfs.JunkWarnings
	resolveLaunch = pkgfs.ResolveLaunch
	fileExists    = pkgfs.FileExists
	checkXML      = pkgfs.CheckXML
	newDecoder    = pkgfs.NewDecoder
	errEscapes    = pkgfs.ErrEscapes
)

func readCapped(fsys fs.FS, name string) ([]byte, error) { return pkgfs.ReadCapped(fsys, name) }
