package tincan

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

const singleXML = `<?xml version="1.0" encoding="utf-8" ?>
<tincan xmlns="http://projecttincan.com/tincan.xsd">
  <activities>
    <activity id=" http://example.com/courses/golf " type="http://adlnet.gov/expapi/activities/course">
      <name>Golf Example</name>
      <description lang="en-US">An example course about golf.</description>
      <launch lang="en-us">index.html</launch>
    </activity>
  </activities>
</tincan>`

const multiXML = `<?xml version="1.0" encoding="UTF-8"?>
<tincan xmlns="http://projecttincan.com/tincan.xsd">
  <activities>
    <activity id="http://example.com/act/objective-1" type="http://adlnet.gov/expapi/activities/objective">
      <name lang="en-US">Objective one</name>
    </activity>
    <activity id="http://example.com/course/safety" type="http://adlnet.gov/expapi/activities/course">
      <name lang="fr">Sécurité</name>
      <name lang="und">Safety &amp; Health</name>
      <description lang="de">Beschreibung</description>
      <description lang="en-US">Course description</description>
    </activity>
    <activity id="http://example.com/course/safety/m1" type="http://adlnet.gov/expapi/activities/module">
      <name lang="en-US">Module 1</name>
      <launch lang="und">./m1/index.html?start=1</launch>
    </activity>
    <activity id="http://example.com/course/safety/m2" type="http://adlnet.gov/expapi/activities/module">
      <name xml:lang="en-US">Module 2</name>
      <launch lang="en-US">https://cdn.example.com/m2/index.html</launch>
    </activity>
    <activity id="http://example.com/course/safety/m3" type="http://adlnet.gov/expapi/activities/module">
      <name lang="en-US">Module 3</name>
      <launch lang="en-US">m3/gone.html</launch>
    </activity>
  </activities>
</tincan>`

func singleFS() fstest.MapFS {
	return fstest.MapFS{"tincan.xml": file(singleXML), "index.html": file("x")}
}

func multiFS() fstest.MapFS {
	return fstest.MapFS{
		"tincan.xml": file(multiXML), "m1/index.html": file("x"),
		"__MACOSX/._tincan.xml": file("junk"),
	}
}

func TestGolden(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{"single": singleFS(), "multi": multiFS()} {
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

// TestMultiDetails pins what the golden file shows, so a careless -update is caught.
func TestMultiDetails(t *testing.T) {
	pkg, err := Parse(multiFS())
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
	f.Add([]byte(singleXML))
	f.Add([]byte(multiXML))
	f.Add([]byte(`<!DOCTYPE t [<!ENTITY x "y">]><tincan/>`))
	f.Add([]byte(`<tincan><activities><activity id="a"><launch>../x</launch></activity></activities></tincan>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		pkg, err := Parse(fstest.MapFS{"tincan.xml": &fstest.MapFile{Data: data}, "index.html": file("")})
		if err != nil {
			if !errors.Is(err, course.ErrInvalidPackage) {
				t.Fatalf("error %v does not wrap ErrInvalidPackage", err)
			}
			return
		}
		if pkg.Root == nil || pkg.XAPIActivityID == "" || len(pkg.Launchable()) == 0 {
			t.Fatalf("successful parse without root, id or launch: %+v", pkg)
		}
	})
}
