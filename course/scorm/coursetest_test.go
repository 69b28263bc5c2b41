package scorm

import (
	"testing"

	"github.com/lectern-lms/lectern/course/coursetest"
)

// TestCoursetestFixtures keeps course/coursetest's SCORM fixtures (imported through the HTTP
// API by the server's golden test) identical to the ones here, so both sets of golden files
// describe the same packages.
func TestCoursetestFixtures(t *testing.T) {
	local := fixtures()
	names := map[string]string{ // coursetest name → name here
		"scorm11":            "scorm11",
		"scorm12_single":     "scorm12_single",
		"scorm12_multi":      "scorm12_multi",
		"scorm12_multi_org":  "multi_org",
		"scorm12_nested":     "nested",
		"scorm2004_2nd":      "scorm2004_2nd",
		"scorm2004_3rd":      "scorm2004_3rd",
		"scorm2004_4th":      "scorm2004_4th",
		"scorm2004_xmlbase":  "xmlbase",
		"scorm2004_oddities": "oddities",
	}
	found := 0
	for _, f := range coursetest.Fixtures() {
		name, ok := names[f.Name]
		if !ok {
			continue
		}
		found++
		if d := coursetest.Mismatch(f.Files, local[name]); d != "" {
			t.Errorf("coursetest fixture %s and fixture %s here differ: %s", f.Name, name, d)
		}
		if got := mustParse(t, local[name]).Standard; got != f.Standard {
			t.Errorf("coursetest says %s is %s; it parses as %s", f.Name, f.Standard, got)
		}
	}
	if found != len(names) {
		t.Errorf("%d of %d fixtures found in coursetest", found, len(names))
	}
}
