package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// SharedConformance returns the path of sub inside the public conformance material laid out
// beside the clone (../shared/conformance from the repository root), or inside
// $LECTERN_TEST_CONFORMANCE_DIR when that is set (for a clone kept elsewhere). A missing
// directory skips the test locally and fails it when CI is set.
func SharedConformance(t testing.TB, sub string) string {
	t.Helper()
	base := os.Getenv("LECTERN_TEST_CONFORMANCE_DIR")
	if base == "" {
		dir, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				t.Fatal("no go.mod above the test's directory")
			}
			dir = parent
		}
		base = filepath.Join(dir, "..", "shared", "conformance")
	}
	p := filepath.Join(base, filepath.FromSlash(sub))
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("conformance material %s is missing but CI is set: %v", p, err)
		}
		t.Skipf("conformance material %s is missing (%v); set LECTERN_TEST_CONFORMANCE_DIR", p, err)
	}
	return p
}
