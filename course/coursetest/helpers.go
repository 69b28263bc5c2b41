package coursetest

// Helpers the parsers' tests share: golden files, the checks of the malformed-package cases,
// fuzz seeds and zip readers.

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/course"
)

// GoldenJSON encodes v the way the parsers' golden files hold it (two-space indent, and no
// HTML escaping, so launch URLs read as written: "a?x=1&y=2") and checks it with Golden.
func GoldenJSON(t testing.TB, file string, v any, update bool) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	Golden(t, file, buf.Bytes(), update)
}

// GoldenParses runs a subtest for each entry of fixtures (golden file name, without .json →
// fixture name): detect must accept the fixture, parse must succeed on it, and the package
// must match testdata/golden/<golden file name>.json (see GoldenJSON).
func GoldenParses(t *testing.T, fixtures map[string]string, detect func(fs.FS) bool,
	parse func(fs.FS) (*course.Package, error), update bool) {
	t.Helper()
	names := make([]string, 0, len(fixtures))
	for n := range fixtures {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			fsys := FS(fixtures[name])
			if !detect(fsys) {
				t.Fatal("Detect = false")
			}
			pkg, err := parse(fsys)
			if err != nil {
				t.Fatal(err)
			}
			GoldenJSON(t, filepath.Join("testdata", "golden", name+".json"), pkg, update)
		})
	}
}

// Golden compares got with the golden file (a path relative to the test's package
// directory), or, when update is true, writes got there, creating its directory.
//
// update is the calling package's -update flag: coursetest cannot define that flag itself,
// since a test binary that imports coursetest may already define its own (the server's does).
func Golden(t testing.TB, file string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; if the change is intended run go test -update and review the diff\ngot:\n%s", file, got)
	}
}

// WantInvalid checks the error of parsing a malformed package: it must be there, wrap
// course.ErrInvalidPackage and contain every one of want.
func WantInvalid(t testing.TB, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("Parse succeeded")
	}
	if !errors.Is(err, course.ErrInvalidPackage) {
		t.Errorf("error %v does not wrap ErrInvalidPackage", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

// Rejected reports whether a parse failed (err != nil), the way a fuzz target must: a
// failure that does not wrap course.ErrInvalidPackage fails t.
func Rejected(t testing.TB, err error) bool {
	t.Helper()
	if err == nil {
		return false
	}
	if !errors.Is(err, course.ErrInvalidPackage) {
		t.Fatalf("error %v does not wrap ErrInvalidPackage", err)
	}
	return true
}

// AddSeeds adds to the corpus of a fuzz target that takes one []byte the root file named
// name (ASCII case-insensitively: "imsmanifest.xml", "cmi5.xml", "tincan.xml") of every
// fixture that has one, then each of extra.
func AddSeeds(f *testing.F, name string, extra ...string) {
	for _, fx := range Fixtures() {
		for p, data := range fx.Files {
			if path.Dir(p) == "." && strings.EqualFold(p, name) {
				f.Add([]byte(data))
			}
		}
	}
	for _, e := range extra {
		f.Add([]byte(e))
	}
}

// ZipReader zips files with Zip and opens the result with archive/zip, the file system the
// import job hands the parsers (no directory entries, as in many real packages).
func ZipReader(t testing.TB, files map[string]string) *zip.Reader {
	t.Helper()
	b, err := Zip(files)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}
