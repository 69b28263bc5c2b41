package tincan

import (
	"bytes"
	"errors"
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
	coursetest.GoldenParses(t, map[string]string{"single": "xapi_single", "multi": "xapi_multi"}, Detect, Parse, *update)
}

// TestMultiDetails pins what the golden file shows, so a careless -update is caught.
func TestMultiDetails(t *testing.T) {
	pkg, err := Parse(coursetest.FS("xapi_multi"))
	if err != nil {
		t.Fatal(err)
	}
	if pkg.XAPIActivityID != "http://example.com/course/safety" || pkg.Root.ID != pkg.XAPIActivityID {
		t.Errorf("course id = %q / %q", pkg.XAPIActivityID, pkg.Root.ID)
	}
	if pkg.Title != "Safety & Health" {
		t.Errorf("title = %q, want the und name", pkg.Title)
	}
	if pkg.Metadata.Description != "Beschreibung" {
		t.Errorf("description = %q, want the first one (no und)", pkg.Metadata.Description)
	}
	var got []string
	for _, a := range pkg.Launchable() {
		got = append(got, a.ID+"="+a.LaunchURL)
	}
	want := "http://example.com/course/safety/m1=m1/index.html?start=1," +
		"http://example.com/course/safety/m2=https://cdn.example.com/m2/index.html," +
		"http://example.com/course/safety/m3=m3/gone.html"
	if strings.Join(got, ",") != want {
		t.Errorf("launchable = %s", strings.Join(got, ","))
	}
	if pkg.Root.LaunchURL != "" {
		t.Errorf("root launch = %q", pkg.Root.LaunchURL)
	}
	joined := strings.Join(pkg.Warnings, "\n")
	for _, w := range []string{`"m3/gone.html" is not in the package`, "__MACOSX"} {
		if !strings.Contains(joined, w) {
			t.Errorf("no warning containing %q in %q", w, pkg.Warnings)
		}
	}
}

func TestNoCourseType(t *testing.T) {
	fsys := fstest.MapFS{"tincan.xml": file(`<tincan><activities>
		<activity id="http://x.org/a" type="http://adlnet.gov/expapi/activities/module"><name>A</name><launch>a.html</launch></activity>
		<activity id="http://x.org/b"><name>B</name><launch>b.html</launch></activity>
	</activities></tincan>`), "a.html": file(""), "b.html": file("")}
	pkg, err := Parse(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if pkg.Root.ID != "http://x.org/a" || pkg.Root.LaunchURL != "a.html" || len(pkg.Root.Children) != 1 {
		t.Errorf("root = %+v", pkg.Root)
	}
	if len(pkg.Warnings) != 1 || !strings.Contains(pkg.Warnings[0], "no activity has type") {
		t.Errorf("warnings = %q", pkg.Warnings)
	}
}

func TestMalformed(t *testing.T) {
	cases := []struct {
		name, xml string
		want      []string
	}{
		{"bad XML", `<tincan><activities><activity id="x">`, []string{"tincan.xml", "malformed XML"}},
		{"XXE", `<?xml version="1.0"?><!DOCTYPE t [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
			<tincan><activities><activity id="http://x/a" type="` + CourseType + `"><name>&xxe;</name><launch>a.html</launch></activity></activities></tincan>`,
			[]string{"tincan.xml", "ENTITY"}},
		{"billion laughs", `<!DOCTYPE l [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;">]><tincan/>`, []string{"ENTITY"}},
		{"no activities", `<tincan><activities/></tincan>`, []string{"no <activity>"}},
		{"no launch", `<tincan><activities><activity id="http://x/a" type="` + CourseType + `"><name>A</name></activity></activities></tincan>`,
			[]string{"tincan.xml", "<launch>"}},
		{"missing id", `<tincan><activities><activity type="` + CourseType + `"><launch>a.html</launch></activity></activities></tincan>`,
			[]string{"activity #1", "no id"}},
		{"duplicate id", `<tincan><activities>
			<activity id="http://x/a" type="` + CourseType + `"><launch>a.html</launch></activity>
			<activity id="http://x/a"><launch>b.html</launch></activity></activities></tincan>`,
			[]string{`"http://x/a"`, "#1 and #2"}},
		{"javascript launch", `<tincan><activities><activity id="http://x/a" type="` + CourseType + `"><launch>javascript:alert(1)</launch></activity></activities></tincan>`,
			[]string{"scheme"}},
		{"wrong root", `<manifest/>`, []string{"tincan.xml"}},
		{"unknown encoding", `<?xml version="1.0" encoding="EBCDIC"?><tincan/>`, []string{"tincan.xml", "EBCDIC"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(fstest.MapFS{"tincan.xml": file(c.xml), "a.html": file("")})
			coursetest.WantInvalid(t, err, c.want...)
		})
	}
	t.Run("missing file", func(t *testing.T) {
		if _, err := Parse(fstest.MapFS{}); !errors.Is(err, course.ErrInvalidPackage) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("oversized", func(t *testing.T) {
		big := append([]byte("<tincan>"), bytes.Repeat([]byte(" "), MaxFileSize)...)
		_, err := Parse(fstest.MapFS{"tincan.xml": &fstest.MapFile{Data: big}})
		if err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestLatin1(t *testing.T) {
	x := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><tincan><activities><activity id=\"http://x/a\" type=\"" +
		CourseType + "\"><name>Caf\xe9</name><launch>a.html</launch></activity></activities></tincan>"
	pkg, err := Parse(fstest.MapFS{"tincan.xml": file(x), "a.html": file("")})
	if err != nil {
		t.Fatal(err)
	}
	if pkg.Title != "Café" {
		t.Errorf("title = %q", pkg.Title)
	}
}

func FuzzParse(f *testing.F) {
	coursetest.AddSeeds(f, "tincan.xml",
		`<!DOCTYPE t [<!ENTITY x "y">]><tincan/>`,
		`<tincan><activities><activity id="a"><launch>../x</launch></activity></activities></tincan>`)
	f.Fuzz(func(t *testing.T, data []byte) {
		pkg, err := Parse(fstest.MapFS{"tincan.xml": &fstest.MapFile{Data: data}, "index.html": file("")})
		if coursetest.Rejected(t, err) {
			return
		}
		if pkg.Root == nil || pkg.XAPIActivityID == "" || len(pkg.Launchable()) == 0 {
			t.Fatalf("successful parse without root, id or launch: %+v", pkg)
		}
	})
}
