// Package coursetest is test-support code: the course package fixtures and the helpers the
// parsers' tests share. Only _test.go files import it; production code never does.
//
// Every fixture is written here by hand (manifests and tiny HTML pages of our own, nothing
// downloaded) and together they cover every standard Lectern imports: SCORM 1.1, 1.2 and the
// three SCORM 2004 editions (nested items, sequencing rules, objectives, both forms of
// completionThreshold, xml:base on three levels, several organizations), AICC (reordered
// columns, quoted commas, nested blocks), xAPI (tincan.xml with several activities) and cmi5
// (a block inside a block, masteryScore and moveOn).
//
// This package is the only copy of them: the parsers' tests (course/scorm, course/aicc,
// course/cmi5, course/tincan) load them with Lookup or FS for their golden files, and the
// server's import golden test (server/engineapi/testdata/golden) imports the same packages through the
// HTTP API, so both sets of golden files describe the same packages.
package coursetest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"sort"
	"testing/fstest"

	"github.com/lectern-lms/lectern/course"
)

// Fixture is one course package: the standard it must be detected as and its files (path in
// the zip → content).
type Fixture struct {
	// Name identifies the fixture; it is usable as a course id and a file name.
	Name     string
	Standard course.Standard
	Files    map[string]string
}

// Fixtures returns every fixture, in a fixed order. The maps are fresh on each call, so a
// test may change them.
func Fixtures() []Fixture {
	return []Fixture{
		{"scorm11", course.SCORM11, scormFiles(manifest11, "lesson.htm")},
		{"scorm12_single", course.SCORM12, scormFiles(manifest12Single, "index.html", "scripts/api.js")},
		{"scorm12_multi", course.SCORM12, scorm12Multi()},
		{"scorm12_multi_org", course.SCORM12, scormFiles(manifestMultiOrg, "summary.html", "details.html")},
		{"scorm12_nested", course.SCORM12, scormFiles(manifestNested, "p.html", "q.html")},
		{"scorm2004_2nd", course.SCORM2004v2, scormFiles(manifest2004v2, "m1/light.html", "m1/calvin.html")},
		{"scorm2004_3rd", course.SCORM2004v3, scormFiles(manifest2004v3, "Playing/Playing.html", "Etiquette/Course.html")},
		{"scorm2004_4th", course.SCORM2004v4, scormFiles(manifest2004v4, "u1/index.html", "u1/quiz.html", "u2/index.html")},
		{"scorm2004_4th_deep", course.SCORM2004v4, scormFiles(scorm2004Deep,
			"part1/a/why.html", "part1/a/wear.html", "part1/b/spill.html", "signoff.html")},
		{"scorm2004_xmlbase", course.SCORM2004v4, scormFiles(manifestXMLBase, "content/modules/m1/start.html",
			"content/modules/m2/start.html", "content/modules/m3/page.html", "content/modules/m5/launch.html", "top.html")},
		// An unknown schemaversion (2004 namespaces → 3rd edition), a default organization that
		// names nothing, a manifest spelled IMSManifest.xml and macOS junk.
		{"scorm2004_oddities", course.SCORM2004v3, scormOddities()},
		{"aicc_single", course.AICC, aiccSingle()},
		{"aicc_multi", course.AICC, aiccMulti()},
		{"xapi_single", course.XAPI, map[string]string{"tincan.xml": tincanSingleXML, "index.html": "x"}},
		{"xapi_multi", course.XAPI, map[string]string{"tincan.xml": tincanMultiXML, "m1/index.html": "x",
			"__MACOSX/._tincan.xml": "junk"}},
		{"cmi5_minimal", course.CMI5, map[string]string{"cmi5.xml": cmi5MinimalXML, "index.html": ""}},
		{"cmi5_nested", course.CMI5, map[string]string{
			"cmi5.xml":           cmi5NestedXML,
			"welcome/index.html": "",
			"m1/lesson.html":     "",
			"m1/quiz.html":       "",
			"m1/exam.html":       "",
			".DS_Store":          "junk",
		}},
	}
}

// Lookup returns the fixture named name, with fresh maps. An unknown name is a mistake in the
// calling test, so Lookup panics on it.
func Lookup(name string) Fixture {
	for _, f := range Fixtures() {
		if f.Name == name {
			return f
		}
	}
	panic(fmt.Sprintf("coursetest: no fixture named %q", name))
}

// FS returns the files of the fixture named name as a fresh file system (see Lookup).
func FS(name string) fstest.MapFS { return MapFS(Lookup(name).Files) }

// MapFS turns files (path → content) into a file system the parsers can read.
func MapFS(files map[string]string) fstest.MapFS {
	m := make(fstest.MapFS, len(files))
	for p, data := range files {
		m[p] = &fstest.MapFile{Data: []byte(data)}
	}
	return m
}

// SCORMFS is a SCORM package of a test's own: manifest as imsmanifest.xml at the root and
// Page for each of files.
func SCORMFS(manifest string, files ...string) fstest.MapFS {
	return MapFS(scormFiles(manifest, files...))
}

// scormFiles is a SCORM package: the manifest at the root and a tiny page for each name.
func scormFiles(manifest string, files ...string) map[string]string {
	m := map[string]string{"imsmanifest.xml": manifest}
	for _, f := range files {
		m[f] = Page
	}
	return m
}

func scorm12Multi() map[string]string {
	m := scormFiles(manifest12Multi, "intro/index.html", "lesson1/index.html", "quiz/quiz.html",
		"glossary.html", "common/api.js", "common/style.css")
	m["meta/course.xml"] = courseLOM
	return m
}

func scormOddities() map[string]string {
	m := scormFiles(manifestOddities, "a.html", "__MACOSX/._a.html", ".DS_Store")
	m["IMSManifest.xml"] = m["imsmanifest.xml"]
	delete(m, "imsmanifest.xml")
	return m
}

// Zip builds a zip archive of files (path → content), entries in name order, so the same
// files always give the same bytes.
func Zip(files map[string]string) ([]byte, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, n := range names {
		f, err := w.Create(n)
		if err != nil {
			return nil, err
		}
		if _, err := io.WriteString(f, files[n]); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
