package coursetest_test

import (
	"bytes"
	"testing"
	"testing/fstest"

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

func TestMismatch(t *testing.T) {
	fsys := fstest.MapFS{"a.html": {Data: []byte("a")}, "d/b.html": {Data: []byte("b")}}
	if d := coursetest.Mismatch(map[string]string{"a.html": "a", "d/b.html": "b"}, fsys); d != "" {
		t.Errorf("same files: %q", d)
	}
	d := coursetest.Mismatch(map[string]string{"a.html": "A", "c.html": "c"}, fsys)
	if d != "a.html differs; c.html only in the fixture; d/b.html only in the file system" {
		t.Errorf("different files: %q", d)
	}
}
