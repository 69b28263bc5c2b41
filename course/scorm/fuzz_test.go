package scorm

import (
	"testing"
	"testing/fstest"

	"github.com/lectern-lms/lectern/course/coursetest"
)

// FuzzParse feeds arbitrary manifest bytes to Parse. Parse must never panic, must either
// fail with an ErrInvalidPackage error or return a package with a root, and every launch
// URL it returns must stay inside the package or be an http(s) URL.
func FuzzParse(f *testing.F) {
	coursetest.AddSeeds(f, "imsmanifest.xml",
		`<manifest/>`,
		`<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "b">]><manifest/>`,
		`<manifest xml:base="../../"><organizations><organization identifier="o"><item identifier="i" identifierref="r" parameters="#?&amp;"/></organization></organizations><resources xml:base="/x/../.."><resource identifier="r" href="..\..\a.html?#"/></resources></manifest>`,
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{
			"imsmanifest.xml": {Data: data},
			"index.html":      {Data: []byte(coursetest.Page)},
		}
		pkg, err := Parse(fsys)
		if coursetest.Rejected(t, err) {
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
