package tools

import (
	"path"
	"sort"
	"strings"
)

// Files is the listing of a package's files that detection and the readers look names up
// in. Packages made on Windows spell names in any case, so lookups ignore case.
type Files struct {
	paths []string
	lower map[string]string // lower-cased path → real path
}

// NewFiles indexes a package's file paths, listed in the order a walk of the package found
// them: when two paths differ only in case, the later one is the one a lookup finds. It
// sorts paths in place and keeps it.
func NewFiles(paths []string) *Files {
	f := &Files{paths: paths, lower: make(map[string]string, len(paths))}
	for _, p := range paths {
		f.lower[strings.ToLower(p)] = p
	}
	sort.Strings(f.paths)
	return f
}

// Paths lists the package's files, sorted, so that readers that look at every file do so
// in the same order every time. The caller must not change it.
func (f *Files) Paths() []string { return f.paths }

// Real returns the path of the file named name in any case, and whether there is one.
func (f *Files) Real(name string) (string, bool) {
	r, ok := f.lower[strings.ToLower(name)]
	return r, ok
}

func (f *Files) has(name string) bool { _, ok := f.lower[strings.ToLower(name)]; return ok }

// anyContains reports whether some file's lower-cased path contains frag (a folder such as
// "story_content/" or a name fragment such as "trivantis").
func (f *Files) anyContains(frag string) bool {
	for l := range f.lower {
		if strings.Contains(l, frag) {
			return true
		}
	}
	return false
}

// anyBase reports whether some file's lower-cased base name satisfies match.
func (f *Files) anyBase(match func(base string) bool) bool {
	for l := range f.lower {
		if match(path.Base(l)) {
			return true
		}
	}
	return false
}
