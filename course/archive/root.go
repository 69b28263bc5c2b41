package archive

import (
	"io/fs"
	"path"
	"strings"
)

// RootPrefix finds the folder holding marker (a file name such as "imsmanifest.xml"). It
// returns ("", true) when the marker is at the root, ("course/", true) when the author
// zipped the folder around the package instead of its contents, and ("", false) when no
// file has that name. When several folders hold one, the shallowest wins, then the first
// in name order, so that a package bundling other packages inside it resolves to the
// outer one.
//
// The import job uses it to explain a missing manifest ("imsmanifest.xml is in course/;
// zip the contents of the folder, not the folder") or to serve the package from
// fs.Sub(fsys, "course").
func RootPrefix(fsys fs.FS, marker string) (prefix string, found bool) {
	if st, err := fs.Stat(fsys, marker); err == nil && !st.IsDir() {
		return "", true
	}
	best, bestDepth := "", -1
	// WalkDir visits names in lexical order, so among equally shallow folders the first
	// one seen is the first in name order; errors just prune the walk.
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if bestDepth >= 0 && depth(p) >= bestDepth {
				return fs.SkipDir // nothing below can be shallower than what we have
			}
			return nil
		}
		if d.Name() != marker {
			return nil
		}
		dir := path.Dir(p)
		if dd := depth(dir); bestDepth < 0 || dd < bestDepth {
			best, bestDepth = dir+"/", dd
		}
		return nil
	})
	return best, bestDepth >= 0
}

// depth counts a folder's segments ("." is 0).
func depth(dir string) int {
	if dir == "." {
		return 0
	}
	return strings.Count(dir, "/") + 1
}
