package aicc

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/coursetest"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.json from the parser's output")

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// singleAU is coursetest's aicc_single, the smallest complete AICC course (one AU under
// ROOT), fresh for each test to change.
func singleAU() fstest.MapFS { return coursetest.FS("aicc_single") }

// TestGolden compares the parses of coursetest fixtures with testdata/golden/<name>.json.
func TestGolden(t *testing.T) {
	coursetest.GoldenParses(t, map[string]string{"single-au": "aicc_single", "multi-au": "aicc_multi"}, Detect, Parse, *update)
}

// TestMultiAUDetails pins the behaviours the golden file shows, so a careless -update cannot
// silently accept a regression in them.
func TestMultiAUDetails(t *testing.T) {
	pkg, err := Parse(coursetest.FS("aicc_multi"))
	if err != nil {
		t.Fatal(err)
	}
	if pkg.Identifier != "CRS-2" || pkg.Title != "Workplace Safety, Advanced" {
		t.Errorf("identifier/title = %q/%q", pkg.Identifier, pkg.Title)
	}
	var ids []string
	pkg.Root.Walk(func(a *course.Activity) { ids = append(ids, a.ID) })
	if got := strings.Join(ids, ","); got != "CRS-2,B1,A1,B2,A3,A2,A4" {
		t.Errorf("tree order = %s", got)
	}
	launch := map[string]string{}
	for _, a := range pkg.Launchable() {
		launch[a.ID] = a.LaunchURL
	}
	want := map[string]string{
		"A1": "m1/intro.html",
		"A2": "m1/quiz.html?mode=test&lang=en&x=1",
		"A3": "https://cdn.example.com/m2/start.html",
		"A4": "m2/missing.html",
	}
	for id, w := range want {
		if launch[id] != w {
			t.Errorf("launch %s = %q, want %q", id, launch[id], w)
		}
	}
	b1 := pkg.Root.Children[0]
	if b1.Title != "Module 1: Basics, Rules" {
		t.Errorf("B1 title = %q", b1.Title)
	}
	a1 := b1.Children[0]
	if a1.Title != "Introduction, part 1" || a1.Metadata == nil || a1.Metadata.Description != `Says "hello", then goes` {
		t.Errorf("A1 = %q / %+v", a1.Title, a1.Metadata)
	}
	if a1.MasteryScore == nil || *a1.MasteryScore != 70 {
		t.Errorf("A1 mastery = %v", a1.MasteryScore)
	}
	a2 := b1.Children[2]
	if a2.AICC.CoreVendor != `key="v"` || len(a2.Objectives) != 2 || a2.Prerequisites != "A1" {
		t.Errorf("A2 = %+v %+v %q", a2.AICC, a2.Objectives, a2.Prerequisites)
	}
	for _, w := range []string{
		`unknown column "Color"`, `Mastery_Score "abc"`, `launch file "m2/missing.html"`,
		"backslashes", "__MACOSX", ".DS_Store", `total_objectives says 2 but the package has 2`,
	} {
		found := false
		for _, got := range pkg.Warnings {
			if strings.Contains(got, w) {
				found = true
			}
		}
		if found == strings.HasPrefix(w, "total_objectives") {
			t.Errorf("warning containing %q: found=%v; warnings: %q", w, found, pkg.Warnings)
		}
	}
}

// TestZipReader runs the parser on a real *zip.Reader, the type the import job hands it; zip
// archives often lack directory entries, which fs.ReadDir on the root must tolerate.
func TestZipReader(t *testing.T) {
	zr := coursetest.ZipReader(t, coursetest.Lookup("aicc_multi").Files)
	if !Detect(zr) {
		t.Fatal("Detect(zip) = false")
	}
	pkg, err := Parse(zr)
	if err != nil {
		t.Fatal(err)
	}
	coursetest.GoldenJSON(t, filepath.Join("testdata", "golden", "multi-au.json"), pkg, *update)
}

func TestDetect(t *testing.T) {
	if Detect(fstest.MapFS{"index.html": file("x")}) {
		t.Error("Detect on a non-AICC package = true")
	}
	fsys := singleAU()
	delete(fsys, "course.cst")
	if Detect(fsys) {
		t.Error("Detect without .cst = true")
	}
	fsys = singleAU()
	fsys["other.crs"] = file("[Course]\nCourse_ID=X\n")
	if Detect(fsys) {
		t.Error("Detect with two .crs = true")
	}
	fsys = singleAU()
	fsys["._course.crs"] = file("\x00\x05\x16\x07")
	if !Detect(fsys) {
		t.Error("Detect with an AppleDouble ._course.crs = false")
	}
}

func TestMalformed(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(fstest.MapFS)
		want   []string // substrings of the error
	}{
		{"missing .au", func(f fstest.MapFS) { delete(f, "course.au") }, []string{"course.au", "missing"}},
		{"no .crs", func(f fstest.MapFS) { delete(f, "course.crs") }, []string{".crs"}},
		{"AU absent from .au", func(f fstest.MapFS) {
			f["course.cst"] = file("block,member,member\nROOT,A1,A9\n")
		}, []string{"course.cst", `"A9"`, "course.au"}},
		{"AU id differs by case", func(f fstest.MapFS) {
			f["course.cst"] = file("block,member\nROOT,a1\n")
		}, []string{`"a1"`, "case-sensitively"}},
		{"duplicate AU id", func(f fstest.MapFS) {
			f["course.au"] = file("System_ID,File_Name\nA1,index.html\nA1,other.html\n")
		}, []string{"course.au", "duplicate", `"A1"`}},
		{"no ROOT", func(f fstest.MapFS) { f["course.cst"] = file("block,member\nB1,A1\n") }, []string{"ROOT"}},
		{"empty ROOT", func(f fstest.MapFS) { f["course.cst"] = file("block,member\nROOT,\n") }, []string{"ROOT", "no members"}},
		{"cycle", func(f fstest.MapFS) {
			f["course.cst"] = file("block,member\nROOT,B1\nB1,B2\nB2,B1\n")
		}, []string{"course.cst", "cycle"}},
		{"missing Course_ID", func(f fstest.MapFS) { f["course.crs"] = file("[Course]\nCourse_Title=x\n") }, []string{"Course_ID"}},
		{"missing File_Name column", func(f fstest.MapFS) { f["course.au"] = file("System_ID,Type\nA1,x\n") }, []string{"course.au", `"file_name"`}},
		{"empty File_Name", func(f fstest.MapFS) { f["course.au"] = file("System_ID,File_Name\nA1,\n") }, []string{"course.au", "File_Name"}},
		{"javascript launch", func(f fstest.MapFS) {
			f["course.au"] = file("System_ID,File_Name\nA1,javascript:alert(1)\n")
		}, []string{"course.au", "scheme"}},
		{"path traversal", func(f fstest.MapFS) {
			f["course.au"] = file("System_ID,File_Name\nA1,../../etc/passwd\n")
		}, []string{"course.au", "package root"}},
		{"empty .des", func(f fstest.MapFS) { f["course.des"] = file("\n\n") }, []string{"course.des", "empty"}},
		{"oversized file", func(f fstest.MapFS) {
			f["course.des"] = &fstest.MapFile{Data: make([]byte, MaxFileSize+1)}
		}, []string{"course.des", "larger than"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := singleAU()
			c.mutate(fsys)
			_, err := Parse(fsys)
			coursetest.WantInvalid(t, err, c.want...)
		})
	}
}

func TestWarnings(t *testing.T) {
	fsys := singleAU()
	fsys["course.au"] = file("System_ID,File_Name,Mastery_Score\nA1,index.html,150\nA2,index.html,\n")
	fsys["course.des"] = file("System_ID,Title\nA1,One\na1,Case twin\n")
	fsys["course.pre"] = file("Structure_Element,Prerequisite\nA1,B9\nA1,\"B8|B7\"\n")
	pkg, err := Parse(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if got := pkg.Root.Children[0].Prerequisites; got != "(B9)&(B8|B7)" {
		t.Errorf("joined prerequisites = %q", got)
	}
	for _, w := range []string{"outside 0-100", `AU "A2" is not in the course structure`, "differ only by case", "total_aus says 1"} {
		found := false
		for _, got := range pkg.Warnings {
			found = found || strings.Contains(got, w)
		}
		if !found {
			t.Errorf("no warning containing %q in %q", w, pkg.Warnings)
		}
	}
}

func TestLenientQuoting(t *testing.T) {
	fsys := singleAU()
	fsys["course.des"] = file("System_ID,Title\nA1,12\" ruler \"pro\"\n")
	pkg, err := Parse(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if got := pkg.Root.Children[0].Title; got != `12" ruler "pro"` {
		t.Errorf("title = %q", got)
	}
	if len(pkg.Warnings) != 1 || !strings.Contains(pkg.Warnings[0], "course.des: line 2: malformed CSV quoting") {
		t.Errorf("warnings = %q", pkg.Warnings)
	}
}

func TestUTF16AndCP1252(t *testing.T) {
	fsys := singleAU()
	// "Café" in Windows-1252, and a UTF-16LE .cst with BOM.
	fsys["course.des"] = file("System_ID,Title\nA1,Caf\xe9 \x93quoted\x94\n")
	cst := "block,member\r\nROOT,A1\r\n"
	b := []byte{0xFF, 0xFE}
	for _, r := range cst {
		b = append(b, byte(r), 0)
	}
	fsys["course.cst"] = &fstest.MapFile{Data: b}
	pkg, err := Parse(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if got := pkg.Root.Children[0].Title; got != "Café “quoted”" {
		t.Errorf("title = %q", got)
	}
}

func FuzzParse(f *testing.F) {
	s := coursetest.Lookup("aicc_single").Files
	f.Add(s["course.crs"], s["course.au"], s["course.des"], s["course.cst"], "")
	m := coursetest.Lookup("aicc_multi").Files
	f.Add(m["Safety.CRS"], m["Safety.au"], m["Safety.des"], m["Safety.cst"], m["Safety.ort"])
	f.Add("[Course]\nCourse_ID=x", "System_ID,File_Name\n\"a", "", "block,member\nROOT,B1\nB1,ROOT", "course_element,member\nROOT,J1")
	f.Fuzz(func(t *testing.T, crs, au, des, cst, ort string) {
		fsys := fstest.MapFS{
			"c.crs": file(crs), "c.au": file(au), "c.des": file(des), "c.cst": file(cst), "c.ort": file(ort),
			"index.html": file("x"),
		}
		pkg, err := Parse(fsys)
		if coursetest.Rejected(t, err) {
			return
		}
		if pkg.Root == nil || pkg.Identifier == "" || len(pkg.Launchable()) == 0 {
			t.Fatalf("successful parse without root, id or launchable AU: %+v", pkg)
		}
		if _, err := json.Marshal(pkg); err != nil {
			t.Fatal(err)
		}
	})
}
