// Package parse recognises a course package's learning standard from its contents (never
// from file names of the upload) and hands it to that standard's parser.
package parse

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/aicc"
	"github.com/lectern-lms/lectern/course/cmi5"
	"github.com/lectern-lms/lectern/course/scorm"
	"github.com/lectern-lms/lectern/course/tincan"
)

type parser struct {
	name   string
	marker string // the file that identifies the standard, for error messages
	detect func(fs.FS) bool
	parse  func(fs.FS) (*course.Package, error)
}

// parsers are tried in order: cmi5 and xAPI packages sometimes also carry a SCORM manifest
// for older players, and the richer standard is the one the author meant.
var parsers = []parser{
	{"cmi5", "cmi5.xml", cmi5.Detect, cmi5.Parse},
	{"xAPI", "tincan.xml", tincan.Detect, tincan.Parse},
	{"SCORM", "imsmanifest.xml", scorm.Detect, scorm.Parse},
	{"AICC", ".crs", aicc.Detect, aicc.Parse},
}

// Package detects the standard of the package in fsys and parses it. A package with the
// identifying file only in a subfolder is refused with a message saying where it is.
func Package(fsys fs.FS) (*course.Package, error) {
	var found []parser
	for _, p := range parsers {
		if p.detect(fsys) {
			found = append(found, p)
		}
	}
	if len(found) == 0 {
		if where := nested(fsys); where != "" {
			return nil, course.Invalid("%s found only at %s; it must be at the root of the zip", path.Base(where), where)
		}
		return nil, course.Invalid("no course found: the package has no imsmanifest.xml, cmi5.xml, tincan.xml or AICC course files (.crs, .au, .des, .cst) at its root")
	}
	pkg, err := found[0].parse(fsys)
	if err != nil {
		if errors.Is(err, course.ErrInvalidPackage) {
			return nil, err
		}
		return nil, course.Invalid("%s package: %v", found[0].name, err)
	}
	for _, other := range found[1:] {
		pkg.Warnings = append(pkg.Warnings, fmt.Sprintf("the package also holds %s; it was imported as %s", other.marker, found[0].name))
	}
	return pkg, nil
}

// nested finds the shallowest identifying file below the root, for the error message.
func nested(fsys fs.FS) string {
	best := ""
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == path.Base(p) {
			return nil
		}
		name := strings.ToLower(path.Base(p))
		if name == "imsmanifest.xml" || name == "cmi5.xml" || name == "tincan.xml" || strings.HasSuffix(name, ".crs") {
			if best == "" || strings.Count(p, "/") < strings.Count(best, "/") {
				best = p
			}
		}
		return nil
	})
	return best
}
