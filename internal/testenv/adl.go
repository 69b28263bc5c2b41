package testenv

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
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
// (the scripts' order is the delivery order, and some repeat a key), read as the applet's
// java.util.Properties reads it: a line ending in an odd number of backslashes goes on in
// the next one (whose leading blanks are dropped), \uXXXX, \t, \n, \r and \f are escapes
// and any other backslash stands for the character after it (ADL DDM's Windows paths lose
// theirs), the key ends at the first unescaped '=', ':' or blank, and lines whose first
// character is '#' or '!' are comments. A file that is not UTF-8 is ISO 8859-1, as Java
// reads it. A file that cannot be read fails the test.
func ADLProperties(t testing.TB, file string) [][2]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("ADL test suite: %v", err)
	}
	text := string(b)
	if !utf8.Valid(b) {
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		text = string(r)
	}
	var out [][2]string
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for continued(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		if continued(line) {
			line = line[:len(line)-1]
		}
		k, v := splitProperty(line)
		out = append(out, [2]string{unescapeProperty(k), unescapeProperty(v)})
	}
	return out
}

// continued reports whether a properties line ends in an odd number of backslashes.
func continued(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitProperty splits a logical line at the key's end: the first unescaped '=', ':' or
// blank, then blanks and one '=' or ':' and blanks again.
func splitProperty(line string) (key, value string) {
	i := 0
	for ; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
	}
	if i > len(line) {
		i = len(line)
	}
	key, rest := line[:i], line[i:]
	rest = strings.TrimLeft(rest, " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return key, rest
}

// unescapeProperty resolves the escapes of a properties key or value.
func unescapeProperty(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 < len(s) {
				if r, err := strconv.ParseUint(s[i+1:i+5], 16, 32); err == nil {
					b.WriteRune(rune(r))
					i += 4
					continue
				}
			}
			b.WriteByte('u')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
