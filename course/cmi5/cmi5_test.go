package cmi5

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/lectern-lms/lectern/course"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.json from the parser's output")

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// nestedXML has a block inside a block, every moveOn value, masteryScore, an absolute-URL AU,
// objectives, launch parameters and an entitlement key, langstrings in several languages, and
// an extension element in a foreign namespace.
const nestedXML = `<?xml version="1.0" encoding="utf-8"?>
<courseStructure xmlns="https://w3id.org/xapi/profiles/cmi5/v1/CourseStructure.xsd" xmlns:ext="https://example.com/ext">
  <course id=" https://example.com/courses/safety ">
    <title>
      <langstring lang="fr-FR">Sécurité</langstring>
      <langstring lang="en-US">Workplace Safety</langstring>
    </title>
    <description><langstring lang="en-US">A cmi5 course with nested blocks.</langstring></description>
    <ext:vendor>ignored</ext:vendor>
  </course>
  <objectives>
    <objective id="https://example.com/objectives/exits">
      <title><langstring lang="en">Know the exits</langstring></title>
      <description><langstring lang="en">Find every exit.</langstring></description>
    </objective>
  </objectives>
  <au id="https://example.com/au/welcome" moveOn="NotApplicable">
    <title><langstring lang="de">Willkommen</langstring><langstring lang="es">Bienvenido</langstring></title>
    <description><langstring lang="de">Start</langstring></description>
    <url>welcome/index.html</url>
  </au>
  <block id="https://example.com/block/module-1">
    <title><langstring lang="en">Module 1</langstring></title>
    <description><langstring lang="en">First module</langstring></description>
    <objectives><objective idref="https://example.com/objectives/exits"/></objectives>
    <au id="https://example.com/au/m1-lesson" moveOn="Completed" launchMethod="OwnWindow"
        activityType="http://adlnet.gov/expapi/activities/lesson">
      <title><langstring lang="en-US">Lesson</langstring></title>
      <description><langstring lang="en-US">Read this</langstring></description>
      <url>./m1/lesson.html?chapter=1</url>
      <launchParameters>{"mode":"full"}</launchParameters>
      <entitlementKey>KEY-123</entitlementKey>
    </au>
    <block id="https://example.com/block/module-1/quizzes">
      <title><langstring lang="en">Quizzes</langstring></title>
      <description><langstring lang="en">Inner block</langstring></description>
      <au id="https://example.com/au/m1-quiz" moveOn="CompletedAndPassed" masteryScore="0.8">
        <title><langstring lang="en">Quiz</langstring></title>
        <description><langstring lang="en">Test yourself</langstring></description>
        <objectives><objective idref="https://example.com/objectives/exits"/></objectives>
        <url>m1/quiz.html</url>
      </au>
      <au id="https://example.com/au/m1-exam" moveOn="Passed" masteryScore="1">
        <title><langstring lang="en">Exam</langstring></title>
        <description><langstring lang="en">Final exam</langstring></description>
        <url>m1/exam.html</url>
      </au>
    </block>
  </block>
  <au id="https://example.com/au/hosted" moveOn="CompletedOrPassed" masteryScore=".5">
    <title><langstring lang="en-us">Hosted</langstring></title>
    <description><langstring lang="en-us">Lives on a CDN</langstring></description>
    <url>https://cdn.example.com/au/start.html</url>
  </au>
</courseStructure>`

func nestedFS() fstest.MapFS {
	return fstest.MapFS{
		"cmi5.xml":           file(nestedXML),
		"welcome/index.html": file(""),
		"m1/lesson.html":     file(""),
		"m1/quiz.html":       file(""),
		// m1/exam.html is missing on purpose: a warning, not an error.
		".DS_Store": file("junk"),
	}
}

// minimalXML is the smallest valid structure: one AU, no namespace (a warning).
const minimalXML = `<courseStructure>
  <course id="urn:example:course:1"><title><langstring>Minimal</langstring></title><description><langstring/></description></course>
  <au id="urn:example:au:1"><title><langstring>Only AU</langstring></title><description><langstring/></description><url>index.html</url></au>
</courseStructure>`

func TestGolden(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"nested":  nestedFS(),
		"minimal": {"cmi5.xml": file(minimalXML), "index.html": file("")},
	} {
		t.Run(name, func(t *testing.T) {
			if !Detect(fsys) {
				t.Fatal("Detect = false")
			}
			pkg, err := Parse(fsys)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, name, pkg)
		})
	}
}

func checkGolden(t *testing.T, name string, pkg *course.Package) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep & and < readable in launch URLs
	enc.SetIndent("", "  ")
	if err := enc.Encode(pkg); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	path := filepath.Join("testdata", "golden", name+".json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run go test -update and review the diff\ngot:\n%s", path, got)
	}
}

// TestNestedDetails pins what the golden file shows, so a careless -update is caught.
func TestNestedDetails(t *testing.T) {
	pkg, err := Parse(nestedFS())
	if err != nil {
		t.Fatal(err)
	}
	const courseID = "https://example.com/courses/safety"
	if pkg.Identifier != courseID || pkg.XAPIActivityID != courseID || pkg.Title != "Workplace Safety" {
		t.Errorf("package = %q %q %q", pkg.Identifier, pkg.XAPIActivityID, pkg.Title)
	}
	var shape []string
	pkg.Root.Walk(func(a *course.Activity) {
		kind := "course"
		if a.CMI5 != nil && a.CMI5.Block {
			kind = "block"
		} else if a.CMI5 != nil {
			kind = "au:" + a.CMI5.MoveOn
		}
		shape = append(shape, kind+"="+a.Title)
	})
	want := "course=Workplace Safety,au:NotApplicable=Willkommen,block=Module 1,au:Completed=Lesson," +
		"block=Quizzes,au:CompletedAndPassed=Quiz,au:Passed=Exam,au:CompletedOrPassed=Hosted"
	if got := strings.Join(shape, ","); got != want {
		t.Errorf("tree =\n %s\nwant\n %s", got, want)
	}
	quiz := pkg.Root.Children[1].Children[1].Children[0]
	if quiz.MasteryScore == nil || *quiz.MasteryScore != 0.8 || quiz.CMI5.MasteryScore != quiz.MasteryScore {
		t.Errorf("quiz mastery = %v / %v", quiz.MasteryScore, quiz.CMI5.MasteryScore)
	}
	lesson := pkg.Root.Children[1].Children[0]
	if lesson.LaunchURL != "m1/lesson.html?chapter=1" || lesson.CMI5.LaunchMethod != "OwnWindow" ||
		lesson.CMI5.LaunchParameters != `{"mode":"full"}` || lesson.CMI5.EntitlementKey != "KEY-123" ||
		lesson.Extra.ActivityType != "http://adlnet.gov/expapi/activities/lesson" {
		t.Errorf("lesson = %+v %+v", lesson, lesson.CMI5)
	}
	hosted := pkg.Root.Children[2]
	if hosted.LaunchURL != "https://cdn.example.com/au/start.html" || *hosted.MasteryScore != 0.5 {
		t.Errorf("hosted = %q %v", hosted.LaunchURL, *hosted.MasteryScore)
	}
	joined := strings.Join(pkg.Warnings, "\n")
	for _, w := range []string{`"m1/exam.html" is not in the package`, ".DS_Store"} {
		if !strings.Contains(joined, w) {
			t.Errorf("no warning containing %q in %q", w, pkg.Warnings)
		}
	}
}

// structure wraps members in a valid courseStructure for the malformed cases.
func structure(members string) string {
	return `<courseStructure xmlns="` + Namespace + `">
  <course id="https://x.org/c"><title><langstring>C</langstring></title><description><langstring/></description></course>
  ` + members + `
</courseStructure>`
}

func au(id, attrs, url string) string {
	return `<au id="` + id + `" ` + attrs + `><title><langstring>T</langstring></title><description><langstring/></description>` + url + `</au>`
}

func TestMalformed(t *testing.T) {
	okURL := "<url>index.html</url>"
	cases := []struct {
		name, xml string
		want      []string
	}{
		{"bad XML", `<courseStructure><course id="x">`, []string{"cmi5.xml", "malformed XML"}},
		{"XXE", `<?xml version="1.0"?><!DOCTYPE cs [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>` +
			structure(au("https://x.org/a", "", "<url>&xxe;</url>")), []string{"cmi5.xml", "ENTITY"}},
		{"bad moveOn", structure(au("https://x.org/a", `moveOn="Finished"`, okURL)), []string{`AU "https://x.org/a"`, "moveOn", `"Finished"`}},
		{"moveOn wrong case", structure(au("https://x.org/a", `moveOn="passed"`, okURL)), []string{"moveOn"}},
		{"masteryScore 1.5", structure(au("https://x.org/a", `masteryScore="1.5"`, okURL)), []string{`AU "https://x.org/a"`, "masteryScore", `"1.5"`}},
		{"masteryScore negative", structure(au("https://x.org/a", `masteryScore="-0.1"`, okURL)), []string{"masteryScore"}},
		{"masteryScore exponent", structure(au("https://x.org/a", `masteryScore="5e-1"`, okURL)), []string{"masteryScore"}},
		{"masteryScore NaN", structure(au("https://x.org/a", `masteryScore="NaN"`, okURL)), []string{"masteryScore"}},
		{"bad launchMethod", structure(au("https://x.org/a", `launchMethod="NewWindow"`, okURL)), []string{"launchMethod"}},
		{"empty block", structure(`<block id="https://x.org/b"><title><langstring>B</langstring></title><description/></block>`),
			[]string{`block "https://x.org/b"`, "no au or block"}},
		{"nested empty block", structure(`<block id="https://x.org/b"><title/><description/>` +
			`<block id="https://x.org/b2"><title/><description/></block></block>`), []string{`block "https://x.org/b2"`}},
		{"duplicate AU id", structure(au("https://x.org/a", "", okURL) + au("https://x.org/a", "", okURL)),
			[]string{"duplicate id", `"https://x.org/a"`}},
		{"AU id equals course id", structure(au("https://x.org/c", "", okURL)), []string{"duplicate id", "course"}},
		{"missing url", structure(au("https://x.org/a", "", "")), []string{`AU "https://x.org/a"`, "<url>"}},
		{"empty url", structure(au("https://x.org/a", "", "<url> </url>")), []string{"<url>"}},
		{"missing AU id", structure(`<au><title/><description/><url>a.html</url></au>`), []string{"<au> has no id"}},
		{"relative id", structure(au("a1", "", okURL)), []string{`"a1"`, "IRI"}},
		{"no AUs", structure(""), []string{"no au or block"}},
		{"no course", `<courseStructure xmlns="` + Namespace + `">` + au("https://x.org/a", "", okURL) + `</courseStructure>`, []string{"before <course>"}},
		{"wrong namespace", `<courseStructure xmlns="http://example.com/other"/>`, []string{"namespace"}},
		{"wrong root", `<tincan/>`, []string{"<courseStructure>"}},
		{"escaping url", structure(au("https://x.org/a", "", "<url>../../secret.html</url>")), []string{"package root"}},
		{"javascript url", structure(au("https://x.org/a", "", "<url>javascript:alert(1)</url>")), []string{"scheme"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(fstest.MapFS{"cmi5.xml": file(c.xml), "index.html": file("")})
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			if !errors.Is(err, course.ErrInvalidPackage) {
				t.Errorf("error %v does not wrap ErrInvalidPackage", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	t.Run("oversized", func(t *testing.T) {
		big := append([]byte("<courseStructure>"), bytes.Repeat([]byte(" "), MaxFileSize)...)
		_, err := Parse(fstest.MapFS{"cmi5.xml": &fstest.MapFile{Data: big}})
		if err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestValidEdges(t *testing.T) {
	x := structure(au("https://x.org/a", `masteryScore="0"`, "<url>index.html</url>") +
		au("https://x.org/b", `masteryScore=" 1.000 " moveOn="Passed"`, "<url>index.html</url>"))
	pkg, err := Parse(fstest.MapFS{"cmi5.xml": file(x), "index.html": file("")})
	if err != nil {
		t.Fatal(err)
	}
	if *pkg.Root.Children[0].MasteryScore != 0 || *pkg.Root.Children[1].MasteryScore != 1 {
		t.Errorf("mastery = %v %v", *pkg.Root.Children[0].MasteryScore, *pkg.Root.Children[1].MasteryScore)
	}
	if len(pkg.Warnings) != 0 {
		t.Errorf("warnings = %q", pkg.Warnings)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(nestedXML))
	f.Add([]byte(minimalXML))
	f.Add([]byte(structure(`<block id="https://x.org/b"><block id="https://x.org/c"/></block>`)))
	f.Add([]byte(structure(au("https://x.org/a", `masteryScore="0.5" moveOn="Passed"`, "<url>../x</url>"))))
	f.Fuzz(func(t *testing.T, data []byte) {
		pkg, err := Parse(fstest.MapFS{"cmi5.xml": &fstest.MapFile{Data: data}, "index.html": file("")})
		if err != nil {
			if !errors.Is(err, course.ErrInvalidPackage) {
				t.Fatalf("error %v does not wrap ErrInvalidPackage", err)
			}
			return
		}
		if pkg.Root == nil || pkg.XAPIActivityID == "" || len(pkg.Launchable()) == 0 {
			t.Fatalf("successful parse without root, id or AU: %+v", pkg)
		}
		for _, a := range pkg.Launchable() {
			if ms := a.MasteryScore; ms != nil && (*ms < 0 || *ms > 1) {
				t.Fatalf("masteryScore %v escaped validation", *ms)
			}
		}
	})
}
