package testenv

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ADLSuite is the software_development folder of ADL's SCORM 2004 4th edition conformance
// suite in the shared conformance material (SharedConformance).
func ADLSuite(t testing.TB) string {
	return SharedConformance(t, "scorm2004-4ed-test-suite/software_development")
}

// ADLCourses is the suite's LMS test packages folder: LMSTestPackage_<case> and the scripts
// TestCases/<case>.properties.
func ADLCourses(t testing.TB) string {
	return filepath.Join(ADLSuite(t), "TestSuite", "LMSRTE", "Courses")
}

// ADLResource is one of the LMS tester's resource files (Commands.properties,
// Instructions.properties).
func ADLResource(t testing.TB, name string) string {
	return filepath.Join(ADLSuite(t), "resources", "org", "adl", "testsuite", "rte", "lms", "util", "resources", name)
}

// ADLProperties reads a Java .properties file of the suite as key/value pairs in file order
// (the scripts' order is the delivery order, and some repeat a key), keys trimmed, values as
// written; comment lines are skipped. A line that ends with a backslash goes on with the next
// one, joined as written, as the applet's LMSTestCaseGenerator reads its scripts (DMI's and
// DDM's long values span lines; \uXXXX stays as written, the text the test SCO sends). A
// file that cannot be read fails the test.
func ADLProperties(t testing.TB, file string) [][2]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("ADL test suite: %v", err)
	}
	defer f.Close()
	var out [][2]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		line := sc.Text()
		for strings.HasSuffix(line, `\`) && sc.Scan() {
			line = strings.TrimSuffix(line, `\`) + sc.Text()
		}
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			out = append(out, [2]string{strings.TrimSpace(k), v})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("ADL test suite: %s: %v", file, err)
	}
	return out
}
