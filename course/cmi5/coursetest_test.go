package cmi5

import (
	"testing"
	"testing/fstest"

	"github.com/lectern-lms/lectern/course/coursetest"
)

// TestCoursetestFixtures keeps course/coursetest's cmi5 fixtures (imported through the HTTP
// API by the server's golden test) identical to the ones here.
func TestCoursetestFixtures(t *testing.T) {
	local := map[string]fstest.MapFS{"cmi5_nested": nestedFS(), "cmi5_minimal": {"cmi5.xml": file(minimalXML), "index.html": file("")}}
	found := 0
	for _, f := range coursetest.Fixtures() {
		fsys, ok := local[f.Name]
		if !ok {
			continue
		}
		found++
		if d := coursetest.Mismatch(f.Files, fsys); d != "" {
			t.Errorf("coursetest fixture %s differs from the one here: %s", f.Name, d)
		}
	}
	if found != len(local) {
		t.Errorf("%d of %d fixtures found in coursetest", found, len(local))
	}
}
