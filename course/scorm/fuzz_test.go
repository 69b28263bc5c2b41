package scorm

import (
	"errors"
	"testing"
	"testing/fstest"

	"github.com/lectern-lms/lectern/course"
)

// FuzzParse feeds arbitrary manifest bytes to Parse. Parse must never panic, must either
// fail with an ErrInvalidPackage error or return a package with a root, and every launch
// URL it returns must stay inside the package or be an http(s) URL.
func FuzzParse(f *testing.F) {
	for _, m := range []string{
		manifest12Single, manifest12Multi, manifest11, manifest2004v2, manifest2004v3,
		manifest2004v4, manifestXMLBase, manifestMultiOrg, manifestNested, manifestOddities,
		`<manifest/>`,
		`<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "b">]><manifest/>`,
		`<manifest xml:base="../../"><organizations><organization identifier="o"><item identifier="i" identifierref="r" parameters="#?&amp;"/></organization></organizations><resources xml:base="/x/../.."><resource identifier="r" href="..\..\a.html?#"/></resources></manifest>`,
	} {
		f.Add([]byte(m))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{
			"imsmanifest.xml": {Data: data},
			"index.html":      {Data: []byte(html)},
		}
		pkg, err := Parse(fsys)
		if err != nil {
			if !errors.Is(err, course.ErrInvalidPackage) {
				t.Fatalf("error does not wrap ErrInvalidPackage: %v", err)
			}
			return
		}
		if pkg.Root == nil || len(pkg.Organizations) == 0 {
			t.Fatal("package without root")
		}
		for _, a := range pkg.Launchable() {
			u := a.LaunchURL
			if isAbsURL(u) {
				continue
			}
			if len(u) > 0 && u[0] == '/' {
				t.Fatalf("launch URL %q is not package-relative", u)
			}
			for p := range splitSegments(u) {
				if dotSegment(p) == ".." {
					t.Fatalf("launch URL %q leaves the package", u)
				}
			}
		}
	})
}

// splitSegments yields the path segments of a relative URL.
func splitSegments(u string) func(func(string) bool) {
	return func(yield func(string) bool) {
		p, _ := splitRef(u)
		start := 0
		for i := 0; i <= len(p); i++ {
			if i == len(p) || p[i] == '/' {
				if !yield(p[start:i]) {
					return
				}
				start = i + 1
			}
		}
	}
}
