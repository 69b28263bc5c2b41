package coursetest_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/lectern-lms/lectern/course/archive"
	"github.com/lectern-lms/lectern/course/coursetest"
	"github.com/lectern-lms/lectern/course/parse"
)

// TestFixturesParse runs every fixture the way an import does (zip → archive → detection →
// parser) and checks the detected standard.
func TestFixturesParse(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range coursetest.Fixtures() {
		t.Run(f.Name, func(t *testing.T) {
			if seen[f.Name] {
				t.Fatalf("duplicate fixture name %q", f.Name)
			}
			seen[f.Name] = true
			b, err := coursetest.Zip(f.Files)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := coursetest.Zip(f.Files)
			if !bytes.Equal(b, again) {
				t.Fatal("Zip is not deterministic")
			}
			a, err := archive.Open(bytes.NewReader(b), int64(len(b)), archive.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			pkg, err := parse.Package(a.FS())
			if err != nil {
				t.Fatal(err)
			}
			if pkg.Standard != f.Standard {
				t.Errorf("standard %s, want %s", pkg.Standard, f.Standard)
			}
			if pkg.Root == nil || pkg.Title == "" {
				t.Errorf("no root or title: %+v", pkg)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	for _, f := range coursetest.Fixtures() {
		got := coursetest.Lookup(f.Name)
		if got.Name != f.Name || got.Standard != f.Standard || len(got.Files) != len(f.Files) {
			t.Errorf("Lookup(%q) = %s %s with %d files", f.Name, got.Name, got.Standard, len(got.Files))
		}
		fsys := coursetest.FS(f.Name)
		if len(fsys) != len(f.Files) {
			t.Errorf("FS(%q) has %d files, want %d", f.Name, len(fsys), len(f.Files))
		}
		for p, want := range f.Files {
			if b, err := fs.ReadFile(fsys, p); err != nil || string(b) != want {
				t.Errorf("FS(%q): %s = %q, %v", f.Name, p, b, err)
			}
		}
	}
	// Fresh maps on every call: one test's changes are not the next one's fixture.
	delete(coursetest.FS("scorm11"), "imsmanifest.xml")
	coursetest.Lookup("scorm11").Files["imsmanifest.xml"] = ""
	if coursetest.Lookup("scorm11").Files["imsmanifest.xml"] == "" || coursetest.FS("scorm11")["imsmanifest.xml"] == nil {
		t.Error("a change to a fixture outlived its test")
	}
	defer func() {
		if recover() == nil {
			t.Error("Lookup of an unknown name did not panic")
		}
	}()
	coursetest.Lookup("no such fixture")
}

func TestGolden(t *testing.T) {
	file := filepath.Join(t.TempDir(), "golden", "x.json")
	coursetest.GoldenJSON(t, file, map[string]string{"url": "a?x=1&y=<2>"}, true)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"url\": \"a?x=1&y=<2>\"\n}\n"; string(b) != want {
		t.Errorf("golden file %q, want %q", b, want)
	}
	coursetest.Golden(t, file, b, false)
	r := &recorder{TB: t}
	coursetest.Golden(r, file, append(b, ' '), false)
	if !r.failed {
		t.Error("Golden accepted output that differs from the golden file")
	}
}

// recorder notes a failure instead of reporting it.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
