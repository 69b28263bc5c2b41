package cmi5

import (
	"bytes"
	"flag"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/coursetest"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.json from the parser's output")

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// TestGolden compares the parses of coursetest fixtures with testdata/golden/<name>.json.
func TestGolden(t *testing.T) {
	coursetest.GoldenParses(t, map[string]string{"nested": "cmi5_nested", "minimal": "cmi5_minimal"}, Detect, Parse, *update)
}

// TestNestedDetails pins what the golden file shows, so a careless -update is caught.
func TestNestedDetails(t *testing.T) {
	pkg, err := Parse(coursetest.FS("cmi5_nested"))
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
	for _, w := range []string{".DS_Store"} {
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
		{"url with a space", structure(au("https://x.org/a", "", "<url>http://example.com index.html</url>")),
			[]string{`AU "https://x.org/a"`, "not a valid URL", "13.1.4.0-2"}},
		{"url with a launch parameter", structure(au("https://x.org/a", "", "<url>index.html?x=1&amp;endpoint=http://e.org/lrs</url>")),
			[]string{`"endpoint"`, "8.1.0.0-6"}},
		{"absolute url with a launch parameter", structure(au("https://x.org/a", "", "<url>https://e.org/au?fetch=1</url>")),
			[]string{`"fetch"`, "8.1.0.0-6"}},
		{"relative url to a missing file", structure(au("https://x.org/a", "", "<url>missing.html?a=1</url>")),
			[]string{`"missing.html"`, "not in the package", "14.1.0.0-4"}},
		{"fragment IRI", structure(au("w3id.org/au/1", "", okURL)), []string{`"w3id.org/au/1"`, "3.0.0.0-1"}},
		{"duplicate block id", structure(`<block id="https://x.org/b"><title/><description/>` + au("https://x.org/a", "", okURL) + `</block>` +
			`<block id="https://x.org/b"><title/><description/>` + au("https://x.org/a2", "", okURL) + `</block>`),
			[]string{"duplicate id", "13.1.2.0-1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(fstest.MapFS{"cmi5.xml": file(c.xml), "index.html": file("")})
			coursetest.WantInvalid(t, err, c.want...)
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

// TestSources checks the rules that depend on where the AU files are (cmi5 section 14).
func TestSources(t *testing.T) {
	rel := structure(au("https://x.org/a", "", "<url>index.html</url>"))
	abs := structure(au("https://x.org/a", "", "<url>https://cdn.example.com/a/index.html?lang=en</url>"))
	only := func(x string) fstest.MapFS { return fstest.MapFS{"cmi5.xml": file(x)} }

	_, err := ParseWith(only(rel), Options{Source: Bare})
	coursetest.WantInvalid(t, err, `"index.html"`, "relative", "14.2.0.0-1")
	_, err = ParseWith(only(structure(au("https://x.org/a", "", "<url>/index.html</url>"))), Options{Source: Bare})
	coursetest.WantInvalid(t, err, "14.2.0.0-1")

	pkg, err := ParseWith(only(abs), Options{Source: Bare})
	if err != nil {
		t.Fatalf("bare course with absolute urls: %v", err)
	}
	if got := pkg.Launchable()[0].LaunchURL; got != "https://cdn.example.com/a/index.html?lang=en" {
		t.Errorf("launch url = %q", got)
	}
	// Hosted: the files are on the web server the structure came from; not checked here.
	if _, err := ParseWith(only(rel), Options{Source: Hosted}); err != nil {
		t.Errorf("hosted course with a relative url: %v", err)
	}
	// In a package, a relative url with a query string names the file before the '?'.
	pkg, err = Parse(fstest.MapFS{"cmi5.xml": file(structure(au("https://x.org/a", "", "<url>path/1/index.html?abc=def</url>"))),
		"path/1/index.html": file("")})
	if err != nil {
		t.Fatal(err)
	}
	if got := pkg.Launchable()[0].LaunchURL; got != "path/1/index.html?abc=def" {
		t.Errorf("launch url = %q", got)
	}
}

func TestIsCourseStructure(t *testing.T) {
	for in, want := range map[string]bool{
		structure(""): true,
		"\ufeff<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!-- licence -->\n<courseStructure xmlns=\"" + Namespace + "\">": true,
		"<courseStructure":                false, // the start tag is cut off
		"<tincan/>":                       false,
		"# LMS Test Package\n\nnot a zip": false,
		"PK\x03\x04":                      false,
		"":                                false,
	} {
		if got := IsCourseStructure([]byte(in)); got != want {
			t.Errorf("IsCourseStructure(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestWithNamespace(t *testing.T) {
	in := `<?xml version="1.0"?><!-- <courseStructure> --><courseStructure><course id="x"/></courseStructure>`
	got := string(WithNamespace([]byte(in)))
	want := `<?xml version="1.0"?><!-- <courseStructure> --><courseStructure xmlns="` + Namespace + `"><course id="x"/></courseStructure>`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, same := range []string{structure(""), `<tincan/>`, `<x:courseStructure xmlns:x="urn:x"/>`, `not xml`} {
		if got := string(WithNamespace([]byte(same))); got != same {
			t.Errorf("%q changed to %q", same, got)
		}
	}
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
	coursetest.AddSeeds(f, "cmi5.xml",
		structure(`<block id="https://x.org/b"><block id="https://x.org/c"/></block>`),
		structure(au("https://x.org/a", `masteryScore="0.5" moveOn="Passed"`, "<url>../x</url>")))
	f.Fuzz(func(t *testing.T, data []byte) {
		// WithNamespace only ever adds the namespace to a course structure that lacks it.
		if ns := WithNamespace(data); !bytes.Equal(ns, data) &&
			(!IsCourseStructure(data) || len(ns) != len(data)+len(` xmlns=""`)+len(Namespace)) {
			t.Fatalf("WithNamespace(%q) = %q", data, ns)
		}
		pkg, err := Parse(fstest.MapFS{"cmi5.xml": &fstest.MapFile{Data: data}, "index.html": file("")})
		if coursetest.Rejected(t, err) {
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
