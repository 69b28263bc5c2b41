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
	"github.com/lectern-lms/lectern/course/internal/pkgfs"
	"github.com/lectern-lms/lectern/course/scorm"
	"github.com/lectern-lms/lectern/course/tincan"
	"github.com/lectern-lms/lectern/course/xsd"
)

// Options tune Package for where a package comes from and how strictly it is checked.
type Options struct {
	// Schemas validates cmi5.xml and imsmanifest.xml against their standard's XSD; nil
	// validates nothing (the parsers' own checks still apply).
	Schemas *xsd.Validator
	// ValidateManifests validates SCORM manifests against their XSD, the tenant's
	// ValidateManifestsUsingXsd setting. cmi5.xml is validated whenever its schema is found,
	// whatever the setting: the cmi5 specification requires an LMS to reject a course
	// structure that does not conform to its schema (requirement 13.2.0.0-1).
	ValidateManifests bool
	// CMI5Source says where a cmi5 course's AU files are (see cmi5.Source).
	CMI5Source cmi5.Source
}

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

// Package detects the standard of the package in fsys and parses it with the default Options
// (no XSD validation, AU files in the package).
func Package(fsys fs.FS) (*course.Package, error) { return PackageWith(fsys, Options{}) }

// PackageWith detects the standard of the package in fsys, validates its structure file
// against its XSD as o says, and parses it. A package with the identifying file only in a
// subfolder is refused with a message saying where it is.
func PackageWith(fsys fs.FS, o Options) (*course.Package, error) {
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
		return nil, course.Invalid("no course found: the package has no imsmanifest.xml, cmi5.xml, tincan.xml or AICC course files (.crs, .au, .des, .cst) at its root (a cmi5 package must have cmi5.xml there, cmi5 requirement 14.1.0.0-2)")
	}
	var notes []string
	if o.Schemas != nil {
		var err error
		if notes, err = validate(fsys, found[0], o); err != nil {
			return nil, err
		}
	}
	var pkg *course.Package
	var err error
	if found[0].name == "cmi5" {
		pkg, err = cmi5.ParseWith(fsys, cmi5.Options{Source: o.CMI5Source})
	} else {
		pkg, err = found[0].parse(fsys)
	}
	if err != nil {
		if errors.Is(err, course.ErrInvalidPackage) {
			return nil, err
		}
		return nil, course.Invalid("%s package: %v", found[0].name, err)
	}
	pkg.Warnings = append(pkg.Warnings, notes...)
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

// validate checks the structure file of a cmi5 or SCORM package against its XSD. A document
// that breaks its schema is refused with the first violations; one whose schema is nowhere to
// be found is imported with a warning saying it was not validated.
func validate(fsys fs.FS, p parser, o Options) ([]string, error) {
	var name string
	switch {
	case p.name == "cmi5":
		name = cmi5.FileName
	case p.name == "SCORM" && o.ValidateManifests:
		name = scorm.RootManifest(fsys)
	}
	if name == "" {
		return nil, nil
	}
	data, err := pkgfs.ReadCapped(fsys, name)
	if err != nil {
		return nil, err
	}
	if err := pkgfs.CheckXML(name, data); err != nil {
		return nil, err
	}
	if p.name == "cmi5" {
		// A missing namespace is forgiven with a warning by the cmi5 parser; the rest of the
		// document is still held to the schema.
		data = cmi5.WithNamespace(data)
	}
	schemaPkg := fsys
	if p.name == "cmi5" {
		// cmi5 has one schema, and conforming to it is a requirement: a package must not be able
		// to bring a laxer copy of its own.
		schemaPkg = nil
	}
	rep := o.Schemas.Validate(schemaPkg, data)
	if !rep.Validated {
		return []string{fmt.Sprintf("%s was not validated against its XML schema: %s", name, rep.Unchecked)}, nil
	}
	if len(rep.Violations) == 0 {
		return nil, nil
	}
	const show = 3
	msgs := make([]string, 0, show)
	for i, v := range rep.Violations {
		if i == show {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(rep.Violations)-show))
			break
		}
		msgs = append(msgs, v.String())
	}
	rule := "the XML schema of its standard"
	if p.name == "cmi5" {
		rule = "the cmi5 course structure schema (CourseStructure.xsd, cmi5 requirement 13.2.0.0-1)"
	}
	return nil, course.Invalid("%s does not conform to %s: %s", name, rule, strings.Join(msgs, "; "))
}
